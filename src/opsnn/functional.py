"""The Pythonic surface: NumPy in, NumPy out, ``AclnnError`` on failure.

Each function runs the same two phases as the aclnn API (same checks, codes and messages) and
executes at once. Inputs may be NumPy arrays of any strides (bf16 is ``ml_dtypes.bfloat16``),
objects with ``__dlpack__``, or Python scalars (a Python scalar tensor argument takes the other
input's dtype, like NumPy's weak scalars). Scalar attributes given as Python floats travel as
ACL_DOUBLE scalars (as torch_npu sends them), ints as ACL_INT64, bools as ACL_BOOL.
"""

from __future__ import annotations

import numpy as np

from . import engine, registry
from ._core import dtypes
from ._core.dtypes import DataType
from ._core.status import AclnnError, Status
from ._core.tensor import ArrayTensor, aclScalar


def leaky_relu_backward(grad_output, self, negative_slope=0.0, self_is_result=False, *, out=None):
    """Gradient of LeakyReLU: ``grad_output if self > 0 else grad_output * float32(negative_slope)``.

    Args:
        grad_output: array, float16/bfloat16/float32/float64, 0-8 dims, broadcastable with self.
        self: array, same dtypes (promoted with grad_output by CANN's PromoteType); the forward
            input, or the forward result when ``self_is_result``.
        negative_slope: number (used as float32, DECISION 2).
        self_is_result: True when ``self`` is the in-place forward's result; then a negative
            slope is refused.
        out: optional array (any strides) of the broadcast shape and a float or complex dtype.

    Returns:
        ``out``, or a new C-contiguous array of the broadcast shape and the promoted dtype.

    Raises:
        AclnnError: 161001 (None argument), 161002 (dtype, rank > 8, shape, out, in-place rule),
        561003 (SoC without the operator). Source: aclnnLeakyReluBackward (ops-nn);
        torch.ops.aten.leaky_relu_backward numerics.
    """
    return _call(registry.get("LeakyReluBackward"), out, grad_output=grad_output, self=self,
                 negative_slope=negative_slope, self_is_result=self_is_result)


def hardtanh_backward(grad_output, self, min_val=-1.0, max_val=1.0, *, out=None):
    """Gradient of Hardtanh: ``grad_output if min < self < max (float32 bounds) or isnan(self)
    else +0.0``; grad bits are copied unchanged.

    Args:
        grad_output: array, float16/bfloat16/float32, 0-8 dims.
        self: the forward input, same dtype and shape as grad_output.
        min_val, max_val: numbers (used as float32); min_val > max_val gives all zeros.
        out: optional array (any strides) with self's dtype and shape.

    Returns:
        ``out``, or a new C-contiguous array like self.

    Raises:
        AclnnError: 161001 (None argument), 161002 (dtype, shape, rank > 8, out).
        Source: aclnnHardtanhBackward (ops-nn, arch35 kernel); torch.ops.aten.hardtanh_backward.
    """
    return _call(registry.get("HardtanhBackward"), out, grad_output=grad_output, self=self,
                 min_val=min_val, max_val=max_val)


def _call(spec: registry.OpSpec, out, **kwargs):
    arrays = {p.name: _as_array(kwargs[p.name], p.api_name) for p in spec.inputs}
    for p in spec.inputs:  # Python scalars are weak: they take another input's dtype
        if _is_python_scalar(kwargs[p.name]):
            partner = next((arrays[q.name] for q in spec.inputs
                            if q.name != p.name and not _is_python_scalar(kwargs[q.name])
                            and arrays[q.name] is not None), None)
            if partner is not None:
                arrays[p.name] = np.asarray(kwargs[p.name], dtype=partner.dtype)
    args = {name: (None if arr is None else ArrayTensor(arr)) for name, arr in arrays.items()}
    for p in spec.params:
        if p.kind == "scalar":
            args[p.name] = _as_scalar(kwargs[p.name], p.api_name)
        elif p.kind == "flag":
            args[p.name] = kwargs[p.name]
    if out is None:
        args["out"] = engine.ALLOCATE
        result: list[np.ndarray] = []

        def allocate(shape, dtype):
            result.append(np.empty(shape, dtype=dtypes.to_numpy(dtype)))
            return result[0]
    else:
        if not isinstance(out, np.ndarray):
            raise AclnnError(Status.ERR_PARAM_INVALID, f"{spec.name}: out must be a NumPy array, "
                                                       f"got {type(out).__name__}")
        args["out"] = ArrayTensor(out)
        allocate = None
    executor = engine.plan(spec, args, allocate=allocate)
    size = executor.workspace_size
    engine.run(executor, np.empty(size, dtype=np.uint8) if size else None)
    return out if out is not None else result[0]


def _is_python_scalar(value) -> bool:
    return isinstance(value, (bool, int, float, complex))


def _as_array(value, api_name: str) -> np.ndarray | None:
    if value is None or isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (BufferError, TypeError, RuntimeError) as exc:
            raise AclnnError(Status.ERR_PARAM_INVALID,
                             f"{api_name} cannot be read through DLPack: {exc}") from None
    if isinstance(value, (bool, int, float, complex, np.generic, list, tuple)):
        return np.asarray(value)
    raise AclnnError(Status.ERR_PARAM_INVALID,
                     f"{api_name} must be an array (NumPy, DLPack) or a number, got {type(value).__name__}")


_SCALAR_TYPES = ((bool, DataType.BOOL), (int, DataType.INT64), (float, DataType.DOUBLE),
                 (complex, DataType.COMPLEX128))


def _as_scalar(value, api_name: str) -> aclScalar | None:
    if value is None or isinstance(value, aclScalar):
        return value
    try:
        if isinstance(value, np.generic):
            kind = value.dtype.kind
            return aclScalar(float(value) if kind == "V" else value.item(), dtypes.from_numpy(value.dtype))
        for python_type, dtype in _SCALAR_TYPES:
            if isinstance(value, python_type):
                if python_type is int and not -2**63 <= value < 2**63:
                    return aclScalar(float(value), DataType.DOUBLE)  # beyond int64: a double
                return aclScalar(value, dtype)
    except (AclnnError, OverflowError, TypeError, ValueError) as exc:
        raise AclnnError(Status.ERR_PARAM_INVALID,
                         f"{api_name} {value!r} cannot be made an aclScalar: {exc}") from None
    raise AclnnError(Status.ERR_PARAM_INVALID,
                     f"{api_name} must be a number, got {type(value).__name__}")
