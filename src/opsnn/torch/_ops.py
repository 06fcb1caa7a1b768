"""opsnn's kernels as torch operators (``torch.ops.opsnn.*``), registered with ``torch.library``.

Schemas follow ATen's ``native_functions.yaml`` (names, argument names, Scalar types, defaults):

    opsnn::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor
    opsnn::leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)
    opsnn::leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope,
                               bool self_is_result) -> Tensor
    opsnn::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor
    opsnn::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)
    opsnn::hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor

and, for the four functional ops, twins taking ``float`` (``opsnn::leaky_relu_float`` ...) that the
Python functions use inside torch.compile when every scalar is a float (``_FLOAT_OPS``).

Per operator:

* CPU kernel: the tensors cross to NumPy as zero-copy views (``_bridge``), the Pythonic opsnn
  function runs both aclnn phases (CANN checks, PromoteType, the l2 chain, the kernel), and the
  result crosses back without a copy. In-place ops write through the view into the tensor.
  What a functional op's kernel derives from metadata alone (its scalars as torch takes them,
  the result's layout) is kept per dtypes, shapes, strides and scalar values (``_known``), and an
  in-place op's scalars per dtype and scalar values (``_taken``); the crossings and the
  Pythonic call run every time.
* Fake/meta kernel (functional ops): ``_bridge.infer_output`` runs the same phase-1 pipeline on
  metadata (``engine.infer_output``), so shape (broadcast or self's, per ``spec.broadcast``),
  dtype (``spec.promotion``) and the refusals come from the OpSpec. In-place ops make the CPU
  kernel's checks on metadata, with their own spec (``InplaceLeakyRelu``, ``InplaceHardtanh``,
  so a refusal names the operator the CPU kernel's names), and return ``self`` (torch's
  generated fake kernel for ``Tag.inplace`` checked nothing).
* Autograd, as ``tools/autograd/derivatives.yaml`` wires ATen's ops:
  leaky_relu -> leaky_relu_backward(grad, self, slope, False) (the input is saved);
  leaky_relu_ -> leaky_relu_backward(grad, result, slope, True) (only the result is saved, so a
  negative slope is refused when backward runs, as in torch); hardtanh and hardtanh_ ->
  hardtanh_backward(grad, self, min, max) with the forward *input* (hardtanh_ saves a clone of
  it first, made under autograd as torch's generated in-place formula makes it, so gradients of
  every order reach the input). Both backward ops are linear in
  grad_output: their own backward applies the same op to the incoming gradient
  (self_is_result=False, as in derivatives.yaml) and gives zeros for ``self``.
* Errors: an AclnnError from opsnn becomes ``AclnnRuntimeError`` (a RuntimeError that is also
  an ``opsnn.AclnnError`` with ``.status``).
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import torch
import torch.autograd.forward_ad as _forward_ad
from torch._prims_common import is_non_overlapping_and_dense_or_false
from torch.overrides import has_torch_function

from .. import functional as F
from .. import reference, registry
from .._core import torchplain as _plain
from .._core.shape import broadcast_shape, contiguous_strides
from .._core.status import Status
from . import _bridge as B

NAMESPACE = "opsnn"

# Spec (aclnn) names behind each torch op: the fake kernels read these OpSpecs (an in-place op's
# own, aclnnInplace<Op>, so its fake refusals name the operator the CPU kernel's name).
SPECS = {"leaky_relu": "LeakyRelu", "hardtanh": "Hardtanh", "leaky_relu_": "InplaceLeakyRelu",
         "hardtanh_": "InplaceHardtanh", "leaky_relu_backward": "LeakyReluBackward",
         "hardtanh_backward": "HardtanhBackward"}


def _opsnn(name: str):
    """The Pythonic opsnn function (looked up at call time; the forwards may arrive later)."""
    import opsnn

    return getattr(opsnn, name)


# ---- CPU kernels ---------------------------------------------------------------------------

def _dense(t: torch.Tensor) -> bool:
    """Non-overlapping and dense: the elements fill one block in some dim order (size-1 dims
    aside). A symbolic (torch.compile) shape goes to torch's own predicate, which answers False
    where the shape leaves it open rather than guard (and recompile) on it; it costs ~7 us."""
    sizes, strides = tuple(t.shape), t.stride()
    if any(isinstance(v, torch.SymInt) for v in sizes + strides):
        return is_non_overlapping_and_dense_or_false(t)
    if 0 in sizes:  # c10 counts an empty tensor dense (and contiguous)
        return True
    span = 1
    for stride, size in sorted((st, sz) for sz, st in zip(sizes, strides) if sz != 1):
        if stride != span:
            return False
        span *= size
    return True


def _iteration_order(shape, tensors) -> list[int]:
    """The dims of ``shape`` fastest first, as TensorIterator orders them for an output it
    allocates: an insertion sort by the operands' strides, the first operand that tells two dims
    apart deciding (a broadcast dim tells nothing; equal strides fall back to the smaller size
    first), C order where none does."""
    n = len(shape)
    strides = []
    for t in tensors:  # element strides over ``shape``, 0 on broadcast dims
        pad = n - t.dim()
        strides.append([0] * pad + [0 if size == 1 and shape[pad + i] != 1 else st
                                    for i, (size, st) in enumerate(zip(t.shape, t.stride()))])

    def should_swap(d0, d1) -> int:
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(n - 1, -1, -1))
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            order = should_swap(perm[d0], perm[d1])
            if order > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif order < 0:
                break
    return perm


def _torch_layout(dtype: torch.dtype, *tensors: torch.Tensor) -> torch.Tensor | None:
    """An empty ``dtype`` result of the operands' broadcast shape with the strides torch's
    TensorIterator gives an output it allocates for these operands (``_torch_strides``), or None
    where that is C-contiguous (opsnn allocates it) or the shapes do not broadcast (opsnn's phase 1
    reports that). The kernel then walks inputs and result in memory order."""
    return _laid_out(_torch_strides(dtype, *tensors), tensors[0])


def _torch_strides(dtype: torch.dtype, *tensors: torch.Tensor) -> tuple | None:
    """How ``_torch_layout`` lays out the result, as ``_laid_out`` takes it (a function of the
    operands' dtypes, shapes and strides alone, which the CPU kernels' memo keeps): torch's
    TensorIterator order (in its operand order). Operands of one shape that are all contiguous,
    all channels_last, or all dense with one set of strides keep that layout; otherwise the dims
    are ordered as ``_iteration_order`` says (torch: TensorIteratorBase::reorder_dimensions and
    allocate_or_resize_outputs)."""
    # on CPU torch converts an operand of another dtype first (.to(dtype), laid out like
    # empty_like) and orders the dims by the converted operands
    tensors = [t if t.dtype == dtype else torch.empty_strided(t.shape, _like_strides(t), dtype=dtype, device="meta")
               for t in tensors]
    first = tensors[0]
    shape = tuple(first.shape)
    if all(t.shape == shape for t in tensors[1:]):
        if all(t.is_contiguous() for t in tensors):
            return None
        if all(t.is_contiguous(memory_format=torch.channels_last) for t in tensors):
            return _empty_channels_last, shape, None, dtype
        if all(t.stride() == first.stride() for t in tensors[1:]) and _dense(first):
            return _empty_strided, shape, tuple(first.stride()), dtype
    else:
        for t in tensors[1:]:
            shape = broadcast_shape(shape, tuple(t.shape))
            if shape is None:
                return None
    if len(shape) <= 1:
        return None
    perm = _iteration_order(shape, tensors)
    if perm == list(range(len(shape) - 1, -1, -1)):
        return None
    return _empty_strided, shape, tuple(_dense_strides(shape, perm, grow_by_size_one=True)), dtype


def _empty_channels_last(like: torch.Tensor, shape, strides, dtype: torch.dtype) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype, device=like.device, memory_format=torch.channels_last)


def _empty_strided(like: torch.Tensor, shape, strides, dtype: torch.dtype) -> torch.Tensor:
    return torch.empty_strided(shape, strides, dtype=dtype, device=like.device)


def _new_empty_strided(like: torch.Tensor, shape, strides, dtype: torch.dtype) -> torch.Tensor:
    return like.new_empty_strided(shape, strides, dtype=dtype)


def _laid_out(layout: tuple | None, like: torch.Tensor) -> torch.Tensor | None:
    """The empty result a layout (``_torch_strides``, ``_like_strides_of``: how to make it, its
    shape, strides and dtype) describes, on the device of ``like`` (the first operand), or None
    for a C-contiguous one (opsnn allocates it)."""
    if layout is None:
        return None
    make, shape, strides, dtype = layout
    return make(like, shape, strides, dtype)


def _dense_strides(shape, perm, grow_by_size_one: bool) -> list[int]:
    """Dense strides with the dims laid out in ``perm`` order (fastest first). TensorIterator
    multiplies the running stride by every size (``grow_by_size_one``); infer_dense_strides
    (empty_like) only by sizes above 1."""
    strides, span = [0] * len(shape), 1
    for d in perm:
        strides[d] = span
        if grow_by_size_one or shape[d] > 1:
            span *= shape[d]
    return strides


def _like_strides(t: torch.Tensor) -> list:
    """The strides ``torch.empty_like(t)`` (preserve_format) gives, and ``t.to(dtype)`` on CPU:
    t's own where t is dense, else dense strides in t's dim order (ATen's infer_dense_strides:
    dims of size 0 or 1 take the running stride without growing it)."""
    shape = tuple(t.shape)
    if _dense(t):
        return list(t.stride())
    return _dense_strides(shape, _iteration_order(shape, [t]), grow_by_size_one=False)


def _like_layout(dtype: torch.dtype, self: torch.Tensor) -> torch.Tensor | None:
    """An empty ``dtype`` result laid out as ``torch.empty_like(self)``, which torch's hardtanh
    allocates before its out= kernel, or None where that is C-contiguous (opsnn allocates)."""
    return _laid_out(_like_strides_of(dtype, self), self)


def _like_strides_of(dtype: torch.dtype, self: torch.Tensor) -> tuple | None:
    """How ``_like_layout`` lays out the ``dtype`` result, as ``_laid_out`` takes it (a function
    of ``self``'s shape and strides alone)."""
    shape = tuple(self.shape)
    c_strides = list(contiguous_strides(shape))  # as c10's: a size-0 dim counts as 1
    # contiguous first: is_contiguous() decides a symbolic (torch.compile) shape without a guard
    if self.is_contiguous() and list(self.stride()) == c_strides:
        return None
    strides = _like_strides(self)
    return None if strides == c_strides else (_new_empty_strided, shape, tuple(strides), dtype)


def _target(out: torch.Tensor | None):
    """The ``out`` an opsnn Pythonic call gets: a NumPy view of ``out``, the result laid out as
    torch lays it out (``_laid_out``), or None where that is C-contiguous (opsnn allocates one).
    Made before the inputs' views, as a refusal of it would come first."""
    return None if out is None else B.operand(out, "out")


def _result(result: np.ndarray, out: torch.Tensor | None) -> torch.Tensor:
    """The Pythonic call's result as a torch tensor: ``out`` where it was given one, else the
    array opsnn allocated, without a copy."""
    if out is not None:
        return out
    if not result.size:  # NumPy's strides of an empty array are not torch's
        result = B.from_numpy(result)
        return torch.empty(result.shape, dtype=result.dtype)
    return B.from_numpy(result)


# ---- the CPU kernels' memo: what they derive from their arguments' metadata alone ----------
# Per op, dtypes, shapes and strides of the tensors, and type, value (and the sign of a zero) of
# the scalars and flags: the scalars as torch takes them and the result's layout (``_plan_*``).
# A hit skips nothing that could come out otherwise: every check a plan makes reads only those
# fields (never the SoC in force, grad mode, requires_grad, a storage offset or memory: the SoC's
# dtype lists, the overlap and every other aclnn check are the Pythonic call's, which runs on
# every call, with its own plan cache keyed on the SoC), and only a plan that succeeded is kept,
# so a refused call is refused again, the same way. NaN and other scalar types (complex, symbolic)
# are not kept. Thread safety: an entry is a tuple made once and stored whole (one dict store,
# atomic under the GIL); two threads missing together both make it, equal.
_MEMO: dict[tuple, tuple] = {}
MEMO_ENTRIES = 512


def _scalars_key(key: list, scalars) -> tuple | None:
    """``key`` with each scalar's type and value (and the sign of a zero: -0.0 == 0.0) appended,
    as a tuple; None where a scalar is not kept (NaN, or a type but float, int and bool:
    complex, symbolic). The memo's one rule for scalars (``_known``, ``_taken``)."""
    for value in scalars:
        kind = type(value)
        if kind is float:
            if math.isnan(value):
                return None
            key += (kind, value, None if value else math.copysign(1.0, value))
        elif kind is int or kind is bool:
            key += (kind, value)
        else:
            return None
    return tuple(key)


def _remember(key: tuple, value: tuple) -> None:
    """Store ``value`` under ``key``; past MEMO_ENTRIES the older half goes (insertion order)."""
    if len(_MEMO) >= MEMO_ENTRIES:
        for stale in list(_MEMO)[:MEMO_ENTRIES // 2]:
            _MEMO.pop(stale, None)
    _MEMO[key] = value


def _known(name: str, plan, tensors: tuple, scalars: tuple) -> tuple | None:
    """``plan(*tensors, *scalars)``, from the memo where the same metadata met it before."""
    if len(tensors) == 1:  # (unrolled: ~0.1 us less a call)
        (t,) = tensors
        key = [name, t.dtype, t.shape, t.stride()]
    else:
        t, u = tensors
        key = [name, t.dtype, t.shape, t.stride(), u.dtype, u.shape, u.stride()]
    key = _scalars_key(key, scalars)
    if key is None:
        return plan(*tensors, *scalars)
    known = _MEMO.get(key)
    if known is None:
        known = plan(*tensors, *scalars)
        if known is not None:
            _remember(key, known)
    return known


def _plan_leaky_relu(self, negative_slope):
    return (tuple(_torch_scalars("leaky_relu", self.dtype, negative_slope=negative_slope)),
            _torch_strides(self.dtype, self))


def _leaky_relu(self, negative_slope=0.01):
    (negative_slope,), layout = _known("leaky_relu", _plan_leaky_relu, (self,), (negative_slope,))
    out = _laid_out(layout, self)
    target = _target(out)
    with B.raising():
        result = _opsnn("leaky_relu")(B.operand(self, "self"), negative_slope, out=target)
    return _result(result, out)


def _leaky_relu_(self, negative_slope=0.01):
    (negative_slope,) = _inplace_scalars("leaky_relu_", self, negative_slope=negative_slope)
    with B.raising():
        _opsnn("leaky_relu_")(B.operand(self, "self"), negative_slope)
    return self


def _as_torch_promotes(grad_output: torch.Tensor, self: torch.Tensor) -> tuple:
    """The two operands cast to torch's result dtype where it differs from the plain promotion of
    their dtypes, i.e. where a 0-d tensor defers to a dimensioned one (``torch.result_type``: f16
    [3] with a float32 0-d gives float16). CANN's PromoteType has no such rule; the binding
    follows torch, whose kernel casts the operands the same way first, so results stay
    bit-identical to torch.ops.aten.leaky_relu_backward. Where torch cannot promote them (a
    float8 with another dtype), the dtype checks refuse them by name, as for any other call."""
    dtype = _torch_cast(grad_output, self)
    return (grad_output, self) if dtype is None else (grad_output.to(dtype), self.to(dtype))


def _torch_cast(grad_output: torch.Tensor, self: torch.Tensor) -> torch.dtype | None:
    """The dtype ``_as_torch_promotes`` casts both operands to, or None where it leaves them."""
    try:
        dtype = torch.result_type(grad_output, self)
    except RuntimeError as exc:  # "Promotion for Float8 Types is not supported"
        B.infer_output(SPECS["leaky_relu_backward"], grad_output, self, 0.0, False)  # raises
        raise B.refuse(f"leaky_relu_backward: {exc}") from None
    return None if dtype == torch.promote_types(grad_output.dtype, self.dtype) else dtype


def _plan_leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    """The slope and layout of operands ``_as_torch_promotes`` has cast."""
    return ((_backward_slope(grad_output, self, negative_slope, self_is_result),),
            _torch_strides(torch.promote_types(grad_output.dtype, self.dtype), self, grad_output))


def _plan_uncast_leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    """The memo's plan: None (not kept; the kernel casts, then plans) where torch casts the
    operands, and where one is 0-d: ``torch.result_type`` tells a 0-d tensor that wraps a number
    (made in C++ from a Python scalar) from another, and the key does not."""
    if not grad_output.dim() or not self.dim() or _torch_cast(grad_output, self) is not None:
        return None
    return _plan_leaky_relu_backward(grad_output, self, negative_slope, self_is_result)


def _leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    known = _known("leaky_relu_backward", _plan_uncast_leaky_relu_backward, (grad_output, self),
                   (negative_slope, self_is_result))
    if known is None:
        grad_output, self = _as_torch_promotes(grad_output, self)
        known = _plan_leaky_relu_backward(grad_output, self, negative_slope, self_is_result)
    (negative_slope,), layout = known
    out = _laid_out(layout, self)
    target = _target(out)
    with B.raising():
        result = F.leaky_relu_backward(B.operand(grad_output, "grad_output"), B.operand(self, "self"),
                                       negative_slope, self_is_result, out=target)
    return _result(result, out)


def _opmath(dtype: torch.dtype) -> torch.dtype:
    """The dtype torch's CPU kernel computes in, and converts its scalars to: float32 for the
    half types (``at::opmath_type``)."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


# the dtype torch's kernel converts an op's scalars to, from its tensors' dtype: clamp (hardtanh)
# converts to that dtype itself, the others to their compute type
_SCALAR_DTYPE = {"hardtanh": lambda dtype: dtype, "hardtanh_": lambda dtype: dtype}
# the ops whose scalar opsnn's kernel takes as a float32 attr whatever the tensors' dtype (DECISION 2)
_FLOAT32_ATTR = frozenset({"leaky_relu", "leaky_relu_", "leaky_relu_backward"})


def _torch_scalars(op: str, dtype: torch.dtype, **values) -> list:
    """The scalars as torch's kernel for ``op`` on tensors of ``dtype`` takes them, converting to
    its target (``_SCALAR_DTYPE``, else ``_opmath``): a complex number with no imaginary part is
    its real part; torch refuses ("cannot be converted ... without overflow")
    any other complex, a finite number outside a float target's range (1e5 for float16, 1e39 for
    float32), and for an integer target NaN, inf or a value outside its range (a float counted
    truncated toward zero: -0.5 is 0 for uint8). The aclnn layer would convert these (a complex
    to 0 with a warning, DECISION 9; an overflow to inf; an integer modulo 2^bits, DECISION F5);
    a torch user gets torch's refusal instead (161002, a RuntimeError). Other values (symbolic
    scalars under torch.compile, wrong types) go on to opsnn's own checks."""
    if not _some_soc_takes(op, dtype):  # the aclnn layer's dtype check speaks (a breaker: a NaN slope
        return list(values.values())   # of an int64 leaky_relu was refused as not fitting int64)
    target = _SCALAR_DTYPE.get(op, _opmath)(dtype)
    # torch's clamp fills a floating result with NaN when either bound is NaN, before it converts
    # the other, so an out-of-range other bound is no refusal there (a breaker: hardtanh(x, nan,
    # 1e5) of a float16 x is all NaN in torch); the aclnn layer gives NaN too
    nan_bound = op in _SCALAR_DTYPE and target.is_floating_point and any(
        isinstance(v, float) and math.isnan(v) for v in values.values())
    taken = []
    for name, value in values.items():
        if isinstance(value, complex):
            if value.imag != 0:
                raise B.refuse(f"{op}: {name} {value} has an imaginary part; torch refuses it too (it "
                               f"cannot be converted to {target} without overflow)")
            value = value.real
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not nan_bound:
                _check_fits(op, name, value, target)
            if op in _FLOAT32_ATTR and target == torch.float64:
                _check_float32_attr(op, name, value)
            if target == torch.float16 and isinstance(value, float):
                # torch's Half is made from a float: a double rounds twice, to float32 and then to
                # float16, where the aclnn layer rounds once (opbase's fp16_t from a double), so
                # 1 + 2**-11 + 2**-40 clamps to 1.0 in torch and to 1.001 in one rounding (a
                # breaker). The binding rounds to float32 first; bfloat16 goes through float32
                # in both.
                value = float(reference.to_float32(value))
            elif isinstance(value, int) and value > 2**63 - 1 and target != torch.float64:
                # torch.Scalar holds it as a uint64, converted to float32 (and from there to a
                # half type) in one rounding; the aclnn layer takes it as a double (as torch_npu
                # sends it) and rounds it again: 2**63 + 2**39 + 1 is 2**63 + 2**40 in torch, 2**63
                # there (a breaker). The binding hands over torch's float32, which the double holds
                value = float(reference.to_float32(value))
            elif isinstance(value, int) and op in _SCALAR_DTYPE and target.is_floating_point and -2**63 <= value:
                # an int bound of a floating tensor goes as a double: as an INT64 aclScalar the
                # aclnn layer would compare min > max in int64 (F6), refusing hardtanh(x, 1, nan)
                # with NaN read as 0, where torch clamps (a breaker). Up to 2**53 the double is
                # the int, rounded once to the tensor's dtype as torch rounds it; beyond, torch
                # rounds the int64 to float32 once for the narrower dtypes, so that float32 goes
                value = float(value) if target == torch.float64 or abs(value) <= 2**53 else \
                    float(reference.to_float32(value))
        taken.append(value)
    return taken


def _check_float32_attr(op: str, name: str, value) -> None:
    """The leaky_relu ops' slope reaches the kernel as a float32 attr (DECISION 2), also for a
    float64 tensor, where torch takes any finite double: a finite slope beyond float32's range
    would become inf there and turn finite inputs into inf and NaN (0 * inf), so it is refused.
    (A double past float32's max by less than half its ulp rounds to that max, finite, and runs.)"""
    limit = float(torch.finfo(torch.float32).max)
    with np.errstate(over="ignore"):
        overflows = math.isfinite(value) and math.isinf(np.float32(value))
    if overflows:
        raise B.refuse(f"{op}: {name} {value} is outside float32's range (+-{limit:g}); opsnn's kernel takes "
                       "the slope as a float32 attr (DECISION 2), which would make it inf, so it is refused "
                       "(torch takes it for float64)")


@functools.cache  # (on every call's path: a registry walk per call would cost a few us)
def _some_soc_takes(op: str, dtype: torch.dtype) -> bool:
    """Whether some SoC's dtype list of ``op``'s self has ``dtype`` (the tensors' dtype, or
    their promoted one for the backward ops): where none has, opsnn refuses the dtype itself
    (161002 naming it), and whether torch could have taken the scalars does not matter."""
    table = registry.get(SPECS[op.removesuffix("_")]).param("self").dtypes
    return B.acl_dtype(dtype) in table.base + table.on_910b_list


def _check_fits(op: str, name: str, value, target: torch.dtype) -> None:
    if target.is_floating_point:
        limit = torch.finfo(target).max
        if math.isfinite(value) and abs(value) > limit:
            raise B.refuse(f"{op}: {name} {value} is outside {target}'s range (+-{limit:g}), which torch "
                           "refuses too; the aclnn layer would make it inf")
        return
    if target.is_complex or target == torch.bool:
        return
    try:
        info = torch.iinfo(target)
    except TypeError:  # sub-byte / bits dtypes: opsnn's own dtype check refuses them
        return
    if not (math.isfinite(value) and info.min <= int(value) <= info.max):
        # torch's own check compares in double, where a float 2**63 equals int64's max: it takes that one
        # and wraps it (docs/torch.md); a breaker's: the message said torch refused it too
        torch_takes = isinstance(value, float) and math.isfinite(value) and info.min <= value <= float(info.max)
        raise B.refuse(f"{op}: {name} {value} does not fit self's dtype {target} ([{info.min}, {info.max}]); "
                       + ("torch takes it, comparing in double, and wraps it; opsnn refuses it" if torch_takes
                          else "torch refuses it too"))


def _backward_slope(grad_output, self, negative_slope, self_is_result):
    """leaky_relu_backward's slope as torch takes it; with ``self_is_result`` a NaN slope is
    refused too: torch requires ``slope >= 0`` there, where CANN refuses only ``slope < 0``
    (DECISION 4), which NaN passes. (A negative slope: opsnn's own 161002.)"""
    dtype = torch.promote_types(grad_output.dtype, self.dtype)
    (slope,) = _torch_scalars("leaky_relu_backward", dtype, negative_slope=negative_slope)
    if self_is_result and isinstance(slope, float) and slope != slope:
        raise B.refuse("leaky_relu_backward: negative_slope is NaN with self_is_result=True (the "
                       "backward of an in-place leaky_relu_); torch refuses it too: the slope must be >= 0")
    return slope


def _plan_hardtanh(self, min_val, max_val):
    return (tuple(_torch_scalars("hardtanh", self.dtype, min_val=min_val, max_val=max_val)),
            _like_strides_of(self.dtype, self))


def _hardtanh(self, min_val=-1, max_val=1):
    (min_val, max_val), layout = _known("hardtanh", _plan_hardtanh, (self,), (min_val, max_val))
    out = _laid_out(layout, self)
    target = _target(out)
    with B.raising():
        result = _opsnn("hardtanh")(B.operand(self, "self"), min_val, max_val, out=target)
    return _result(result, out)


def _hardtanh_(self, min_val=-1, max_val=1):
    min_val, max_val = _inplace_scalars("hardtanh_", self, min_val=min_val, max_val=max_val)
    with B.raising():
        _opsnn("hardtanh_")(B.operand(self, "self"), min_val, max_val)
    return self


def _backward_bounds(grad_output, self, min_val, max_val) -> list:
    """hardtanh_backward's bounds as torch takes them: converted to the tensors' promoted dtype
    (its kernel's common dtype), not self's: with an integer self and a float grad a bound such
    as -1.5 is a float32 in torch, and the aclnn layer's dtype check then names self (DECISION
    10), where the fit check blamed the bound (a breaker)."""
    dtype = torch.promote_types(grad_output.dtype, self.dtype)
    return _torch_scalars("hardtanh_backward", dtype, min_val=min_val, max_val=max_val)


def _plan_hardtanh_backward(grad_output, self, min_val, max_val):
    return (tuple(_backward_bounds(grad_output, self, min_val, max_val)),
            _torch_strides(self.dtype, grad_output, self))


def _hardtanh_backward(grad_output, self, min_val, max_val):
    (min_val, max_val), layout = _known("hardtanh_backward", _plan_hardtanh_backward, (grad_output, self),
                                        (min_val, max_val))
    out = _laid_out(layout, grad_output)
    target = _target(out)
    with B.raising():
        result = F.hardtanh_backward(B.operand(grad_output, "grad_output"), B.operand(self, "self"), min_val,
                                     max_val, out=target)
    return _result(result, out)


def _inplace_scalars(op: str, self: torch.Tensor, **scalars) -> tuple:
    """An in-place op's checks before its kernel's (the CPU kernel's and the fake's): ``self``
    may be written, and the scalars as torch takes them."""
    _check_writable(self, op)
    return _taken(op, self.dtype, **scalars)


def _taken(op: str, dtype: torch.dtype, **values) -> list:
    """``_torch_scalars(op, dtype, **values)``, from the kernels' memo (``_MEMO``) where the same
    op, dtype and scalars (type, value, the sign of a zero) met it before: the in-place ops convert
    their scalars twice a call (their Autograd kernel, then their CPU kernel, as through the
    dispatcher), ~1 us each. It reads nothing else (the argument names only word a refusal, and
    a refusal is never kept); NaN and other types (symbolic, complex) are not kept. (Keyed without
    shapes, unlike ``_known``, so a fake tensor's symbolic sizes never meet a dict.)"""
    key = _scalars_key(["taken", op, dtype], values.values())
    if key is None:
        return _torch_scalars(op, dtype, **values)
    known = _MEMO.get(key)
    if known is None:
        known = tuple(_torch_scalars(op, dtype, **values))
        _remember(key, known)
    return list(known)


def _check_writable(t: torch.Tensor, op: str) -> None:
    # torch refuses in-place writes to an inference tensor outside inference mode (it has no
    # version counter to bump) and where elements share memory (expanded views); so does opsnn
    if t.is_inference() and not torch.is_inference_mode_enabled():
        raise B.AclnnRuntimeError(
            Status.ERR_PARAM_INVALID,
            f"opsnn.torch: {op}: self is an inference tensor (made in torch.inference_mode); torch allows "
            "updating it in place only inside inference mode; clone() it outside to get a normal tensor")
    if torch._debug_has_internal_overlap(t) == 1:
        raise B.AclnnRuntimeError(
            Status.ERR_PARAM_INVALID,
            f"opsnn.torch: {op}: self {list(t.shape)} strides {list(t.stride())} has elements that share a "
            "single memory location (an expanded view), which cannot be written in place; torch refuses "
            "it too; clone() the tensor before the in-place operation")


def _define(name: str, schema: str, fn, *, inplace: bool = False):
    return torch.library.custom_op(
        f"{NAMESPACE}::{name}", fn, mutates_args=("self",) if inplace else (), device_types="cpu",
        schema=schema, tags=(torch.Tag.inplace,) if inplace else ())


# the functional ops' schemas, ATen's (their float twins below are made from them)
_SCHEMAS = {
    "leaky_relu": "(Tensor self, Scalar negative_slope=0.01) -> Tensor",
    "leaky_relu_backward": "(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) -> Tensor",
    "hardtanh": "(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
    "hardtanh_backward": "(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor"}
leaky_relu = _define("leaky_relu", _SCHEMAS["leaky_relu"], _leaky_relu)
leaky_relu_ = _define("leaky_relu_", "(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)",
                      _leaky_relu_, inplace=True)
leaky_relu_backward = _define("leaky_relu_backward", _SCHEMAS["leaky_relu_backward"], _leaky_relu_backward)
hardtanh = _define("hardtanh", _SCHEMAS["hardtanh"], _hardtanh)
hardtanh_ = _define("hardtanh_", "(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)",
                    _hardtanh_, inplace=True)
hardtanh_backward = _define("hardtanh_backward", _SCHEMAS["hardtanh_backward"], _hardtanh_backward)


# ---- direct calls: the CPU kernel without the dispatcher, where that is all it would reach ----

_CPU_KERNELS = {"leaky_relu": _leaky_relu, "hardtanh": _hardtanh, "leaky_relu_backward": _leaky_relu_backward,
                "hardtanh_backward": _hardtanh_backward}
_OPS = {"leaky_relu": leaky_relu, "hardtanh": hardtanh, "leaky_relu_backward": leaky_relu_backward,
        "hardtanh_backward": hardtanh_backward}


# Each functional op's twin with ``float`` for ``Scalar`` (``opsnn::leaky_relu_float`` ...), which
# ``call`` takes inside torch.compile where every scalar is a float: torch 2.13's inductor keeps
# the first call's value of a symbolic float (a compiled function's float argument under
# dynamic=True, or once a value changed) given to a custom op's ``Scalar`` argument, so a slope
# passed in and varied gave the first slope's numbers (a breaker); with a ``float`` argument it
# does not. The Scalar ops stay the public ones: an int keeps its exact value there.
_FLOAT_OPS = {name: _define(f"{name}_float", _SCHEMAS[name].replace("Scalar ", "float "), _CPU_KERNELS[name])
              for name in _OPS}

# the CPU kernels the ops registered: a torch.library.register_kernel over one makes the
# functional API take the op (the override) again
_REGISTERED = {name: getattr(op, "_backend_fns", {}).get("cpu") for name, op in _OPS.items()}
_INT_RANGE = (-2**63, 2**63)  # a Python int beyond it: the schema raises OverflowError
# each op's arguments in schema order: T a Tensor, N a Scalar, B a bool
_SIGNATURES = {"leaky_relu": "TN", "hardtanh": "TNN", "leaky_relu_backward": "TTNB", "hardtanh_backward": "TTNN"}
# per op, the positions of its tensors, scalars and flags among the arguments
_POSITIONS = {name: tuple(tuple(i for i, k in enumerate(kinds) if k == kind) for kind in "TNB")
              for name, kinds in _SIGNATURES.items()}
# the same as slices (each signature lists its tensors, then its scalars, then its flags): where the
# tensors end and where the scalars end
_SPLITS = {name: (kinds.count("T"), kinds.count("T") + kinds.count("N")) for name, kinds in _SIGNATURES.items()}


# what ``direct`` asks torch on every call, looked up once (~0.15 us a call): torch.jit.is_tracing()
# is _is_tracing() outside TorchScript, which never runs these functions (they refuse scripting)
_is_tracing, _dispatch_modes = torch._C._is_tracing, torch._C._len_torch_dispatch_stack
_profiling, _autocasting = torch._C._autograd._profiler_enabled, torch._C._is_any_autocast_enabled
_functorch_running, _grad_mode = torch._C._are_functorch_transforms_active, torch._C.is_grad_enabled
_excluded, _inference_mode = torch._C._dispatch_tls_local_exclude_set, torch.is_inference_mode_enabled
# The dispatch keys a thread excludes as it normally runs, and in inference mode (autograd's: the
# same set as under torch._C._AutoDispatchBelowAutograd). Any other set (a kernel running below
# autograd or ADInplaceOrView, as torch's own and Python kernels registered over aten ops do) goes
# through the dispatcher, which skips those layers there: run directly, the call had recorded a
# graph, refused a leaf or bumped a version the dispatcher skips (a regression breaker).
_NORMAL_EXCLUDED = _excluded().raw_repr()
with torch.inference_mode():
    _INFERENCE_EXCLUDED = _excluded().raw_repr()


def direct(tensors: tuple, numbers: tuple, flags: tuple = ()) -> bool:
    """Whether an op may run its CPU kernel (the function registered for CPU) without torch's
    dispatcher, which for these arguments would reach nothing but that kernel and, where a
    tensor requires grad, autograd: plain dense CPU tensors (``_bridge.is_plain``: strided
    layout, not quantized, nested, a zero tensor or a lazy negative / conjugate view, which
    torch's fallbacks resolve first), Python floats and int64-range ints for the scalars and
    bools for the flags (the schema converts or refuses anything else), and nothing that
    intercepts, converts or records ops (torch.compile, torch.jit.trace, the profiler, autocast,
    a torch function or dispatch mode such as FakeTensorMode or make_fx, functorch's vmap / grad
    wrappers or a functorch transform running at all, a tensor subclass, a thread that runs below
    autograd or ADInplaceOrView: ``_NORMAL_EXCLUDED``). (A plain tensor that
    requires grad, captured by a function vmap runs, reached the autograd.Function, which functorch
    refuses without a setup_context.)
    The dispatcher and torch.library's Python layers cost ~20-35 us a call (a 4-element
    forward: 24-44 -> 9-15 us on the Xeon VM of BENCHMARKS.md). Not seen from here: other
    RecordFunction observers than the profiler (``ExecutionTraceObserver``) and a CPU kernel
    registered over opsnn's with ``Library.impl``; ``torch.ops.opsnn.*`` reaches both."""
    if (torch.compiler.is_compiling() or _is_tracing() or _dispatch_modes() or _profiling() or _autocasting()
            or has_torch_function(tensors) or _functorch_running()):
        return False
    excluded = _excluded().raw_repr()
    if excluded != _NORMAL_EXCLUDED and not (excluded == _INFERENCE_EXCLUDED and _inference_mode()):
        return False
    # loops, not any() / all() over generators: this runs on every call (~0.5 us less)
    for v in numbers:
        if not (type(v) is float or (type(v) is int and _INT_RANGE[0] <= v < _INT_RANGE[1])):
            return False
    for f in flags:
        if type(f) is not bool:
            return False
    plain = _plain.PLAIN_KEYS  # B.is_plain, inline: one call less a tensor
    if not plain:
        return False
    for t in tensors:
        if type(t) is not torch.Tensor or torch._C._dispatch_keys(t).raw_repr() not in plain:
            return False
    return True


def call(name: str, *args) -> torch.Tensor:
    """``torch.ops.opsnn.<name>(*args)``. Where ``direct`` allows (for the tensor, scalar and bool
    arguments, ``_SIGNATURES``), the CPU kernel runs itself, and where autograd must record the
    call, inside an autograd.Function with the op's own backward formula and saved tensors
    (``_FUNCTIONS``): the same result and gradients as through the op."""
    tensors_end, numbers_end = _SPLITS[name]
    tensors, numbers = args[:tensors_end], args[tensors_end:numbers_end]
    own = getattr(_OPS[name], "_backend_fns", {}).get("cpu") is _REGISTERED[name]  # no kernel registered over it
    if own and direct(tensors, numbers, args[numbers_end:]):
        if _grad_mode():
            for t in tensors:
                if t.requires_grad:
                    return _RECORDED[name](*args)
        return _CPU_KERNELS[name](*args)
    floats = _as_floats(tensors, numbers) if own and torch.compiler.is_compiling() else None
    if floats is not None:  # (inductor and Scalar arguments: _FLOAT_OPS)
        args = list(args)
        for position, value in zip(_POSITIONS[name][1], floats):
            args[position] = value
        return _FLOAT_OPS[name](*args)
    return _OPS[name](*args)


def _as_floats(tensors: list, numbers: list) -> list | None:
    """The scalars as the float twin takes them, where one of them is a float (which torch.compile
    may make symbolic) and the twin computes what the Scalar op does: the others floats too, or
    ints a double holds exactly beside floating-point tensors, which take every bound and slope
    as a float anyway (an integer tensor reads an int bound otherwise: the Scalar op then)."""
    if not any(isinstance(n, (float, torch.SymFloat)) for n in numbers):
        return None
    floating = all(t.is_floating_point() for t in tensors)
    floats = []
    for n in numbers:
        if isinstance(n, (float, torch.SymFloat)):
            floats.append(n)
        elif type(n) is int and floating and -2**53 <= n <= 2**53:
            floats.append(float(n))
        else:
            return None
    return floats


# ---- fake / meta kernels: shape and dtype from the OpSpec ----------------------------------

def _leaky_relu_fake(self, negative_slope=0.01):
    (negative_slope,) = _torch_scalars("leaky_relu", self.dtype, negative_slope=negative_slope)
    return _fake(B.infer_output(SPECS["leaky_relu"], self, negative_slope), _torch_layout, self)


def _leaky_relu_backward_fake(grad_output, self, negative_slope, self_is_result):
    grad_output, self = _as_torch_promotes(grad_output, self)
    negative_slope = _backward_slope(grad_output, self, negative_slope, self_is_result)
    return _fake(B.infer_output(SPECS["leaky_relu_backward"], grad_output, self, negative_slope, self_is_result),
                 _torch_layout, self, grad_output)


def _hardtanh_fake(self, min_val=-1, max_val=1):
    min_val, max_val = _torch_scalars("hardtanh", self.dtype, min_val=min_val, max_val=max_val)
    return _fake(B.infer_output(SPECS["hardtanh"], self, min_val, max_val), _like_layout, self)


def _hardtanh_backward_fake(grad_output, self, min_val, max_val):
    min_val, max_val = _backward_bounds(grad_output, self, min_val, max_val)
    return _fake(B.infer_output(SPECS["hardtanh_backward"], grad_output, self, min_val, max_val),
                 _torch_layout, grad_output, self)


for _name, _fake_fn in (("leaky_relu", _leaky_relu_fake), ("leaky_relu_backward", _leaky_relu_backward_fake),
                        ("hardtanh", _hardtanh_fake), ("hardtanh_backward", _hardtanh_backward_fake)):
    _OPS[_name].register_fake(_fake_fn)
    _FLOAT_OPS[_name].register_fake(_fake_fn)


def _checked_leaky_relu_(self, negative_slope=0.01):
    (negative_slope,) = _inplace_scalars("leaky_relu_", self, negative_slope=negative_slope)
    B.infer_output(SPECS["leaky_relu_"], self, negative_slope)
    return self


def _checked_hardtanh_(self, min_val=-1, max_val=1):
    min_val, max_val = _inplace_scalars("hardtanh_", self, min_val=min_val, max_val=max_val)
    B.infer_output(SPECS["hardtanh_"], self, min_val, max_val)
    return self


# The in-place ops' own fakes: torch's generated one for an inplace-tagged op returns self
# unchecked, so a meta / fake int64 or 9-d self, refused on CPU, was taken (a breaker). torch
# calls this registration "unnecessary" in a UserWarning; it is what makes them check.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="The fake registration for .* is unnecessary", category=UserWarning)
    leaky_relu_.register_fake(_checked_leaky_relu_)
    hardtanh_.register_fake(_checked_hardtanh_)


def _fake(inferred: torch.Tensor, layout, *tensors: torch.Tensor) -> torch.Tensor:
    """The fake result: the checked shape and dtype, in the layout the CPU kernel gives it
    (``layout``: ``_torch_layout`` or ``_like_layout``, given the same operands)."""
    laid_out = layout(inferred.dtype, *tensors)
    return inferred if laid_out is None else laid_out


# ---- autograd: functional ops --------------------------------------------------------------
_ops = torch.ops.opsnn


def no_forward_ad(function: str, *tensors: torch.Tensor) -> None:
    """Refuse forward-mode AD (torch.autograd.forward_ad, torch.func.jvp / jacfwd, a tangent on
    the gradient of a backward pass): torch 2.13's custom ops have no forward-mode formula and
    would drop the tangent without a word. One int compare when no dual level is active."""
    if _forward_ad._current_level >= 0 and any(_forward_ad.unpack_dual(t).tangent is not None for t in tensors):
        raise NotImplementedError(
            f"opsnn.torch.{function}: forward-mode AD (torch.func.jvp / jacfwd, torch.autograd.forward_ad) is not "
            "supported: torch's custom ops have no forward-mode derivative and would drop the tangent; use "
            "reverse mode (backward(), torch.autograd.grad) or torch.nn.functional's op for this part")


def _save_self(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.scalars = inputs[1:]


def _leaky_relu_grad(ctx, grad):
    no_forward_ad("leaky_relu (backward)", grad)
    (self,) = ctx.saved_tensors
    (slope,) = ctx.scalars
    return call("leaky_relu_backward", grad, self, slope, False), None


def _hardtanh_grad(ctx, grad):
    no_forward_ad("hardtanh (backward)", grad)
    (self,) = ctx.saved_tensors
    return call("hardtanh_backward", grad, self, *ctx.scalars), None, None


def _save_backward_self(ctx, inputs, output):
    ctx.save_for_backward(inputs[1])
    ctx.scalars = inputs[2:]


def _leaky_relu_backward_grad(ctx, grad):
    # linear in grad_output; self_is_result is False here, as in derivatives.yaml. The zero
    # gradient of self is zeros_like(grad), as there: its strides are grad's (the engine sums a
    # broadcast one down to self's shape), so second derivatives keep torch's layout
    no_forward_ad("leaky_relu_backward (backward)", grad)
    (self,) = ctx.saved_tensors
    slope = ctx.scalars[0]
    grad_grad = call("leaky_relu_backward", grad, self, slope, False) if ctx.needs_input_grad[0] else None
    grad_self = torch.zeros_like(grad) if ctx.needs_input_grad[1] else None
    return grad_grad, grad_self, None, None


def _hardtanh_backward_grad(ctx, grad):
    no_forward_ad("hardtanh_backward (backward)", grad)
    (self,) = ctx.saved_tensors
    grad_grad = call("hardtanh_backward", grad, self, *ctx.scalars) if ctx.needs_input_grad[0] else None
    grad_self = torch.zeros_like(grad) if ctx.needs_input_grad[1] else None
    return grad_grad, grad_self, None, None


# (setup_context, backward) per functional op: registered with the op, and run by its direct
# calls' autograd.Function (``_function``)
_AUTOGRAD = {"leaky_relu": (_save_self, _leaky_relu_grad), "hardtanh": (_save_self, _hardtanh_grad),
             "leaky_relu_backward": (_save_backward_self, _leaky_relu_backward_grad),
             "hardtanh_backward": (_save_backward_self, _hardtanh_backward_grad)}
for _name, (_setup, _backward) in _AUTOGRAD.items():
    _OPS[_name].register_autograd(_backward, setup_context=_setup)
    _FLOAT_OPS[_name].register_autograd(_backward, setup_context=_setup)


def _function(name: str, setup_context, backward) -> type:
    """An autograd.Function running op ``name``'s CPU kernel, with the backward and
    setup_context registered for the op (``call``'s recorded direct calls). Its forward takes
    ``ctx`` and runs ``setup_context`` itself: a Function that defines ``setup_context`` binds
    its arguments with ``inspect.signature`` on every apply (~15 us)."""
    def forward(ctx, *args):
        output = _CPU_KERNELS[name](*args)
        setup_context(ctx, args, output)
        return output

    title = "".join(part.title() for part in name.split("_"))
    return type(f"_{title}", (torch.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)})


_FUNCTIONS = {name: _function(name, setup, backward) for name, (setup, backward) in _AUTOGRAD.items()}
# Their ``apply`` as ``Function.apply`` reaches it for a direct call: the C one. The Python layer
# before it binds arguments for a ``setup_context`` (these define none), hands a functorch
# transform's call to functorch (``direct`` sends those through the dispatcher) and unwraps dead
# functorch wrappers (no plain tensor is one); ~1 us a recorded call.
_RECORDED = {name: torch._C._FunctionBase.__dict__["apply"].__get__(None, function)
             for name, function in _FUNCTIONS.items()}


# ---- autograd: in-place ops ----------------------------------------------------------------
# torch.library's register_autograd takes functional ops only, so the in-place ops get an
# Autograd-key kernel of their own: an autograd.Function that runs the op below autograd and
# marks ``self`` dirty (its history is rebased onto the new node, as for ATen's in-place ops).

def _kernel_only(op, keyset, *args):
    """The op below autograd and ADInplaceOrView: the caller bumps the version counter once, as
    an ATen in-place op does (``mark_dirty`` in an autograd.Function, or ``_untracked_inplace``);
    ADInplaceOrView would bump it again, and before the kernel. With no ``keyset`` (a direct
    call, ``call_inplace``) the CPU kernel itself, under the same guard, so the tensor methods
    it calls see what they see when the dispatcher redispatches."""
    with torch._C._AutoDispatchBelowADInplaceOrView():
        if keyset is None:
            return _INPLACE_KERNELS[op](*args)
        return op.redispatch(keyset & torch._C._after_ADInplaceOrView_keyset, *args)


class _LeakyReluInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, self, negative_slope, keyset):
        _kernel_only(_ops.leaky_relu_.default, keyset, self, negative_slope)
        ctx.mark_dirty(self)
        ctx.save_for_backward(self)  # the result: the input is gone
        ctx.negative_slope = negative_slope
        return self

    @staticmethod
    def backward(ctx, grad):
        no_forward_ad("leaky_relu_ (backward)", grad)
        (result,) = ctx.saved_tensors
        return call("leaky_relu_backward", grad, result, ctx.negative_slope, True), None, None


class _HardtanhInplace(torch.autograd.Function):
    """``original``: a clone of ``self`` made before the op (``_hardtanh_autograd``), which
    hardtanh_backward needs and the op overwrites. Cloned outside this Function, under
    autograd, as torch's generated in-place formula clones it: the gradient it gives then has a
    graph back to the input (a second derivative, zeros; cloned inside ``forward``, where
    autograd is off, the gradient did not require grad)."""

    @staticmethod
    def forward(ctx, self, original, min_val, max_val, keyset):
        _kernel_only(_ops.hardtanh_.default, keyset, self, min_val, max_val)
        ctx.mark_dirty(self)
        ctx.save_for_backward(original)
        ctx.bounds = (min_val, max_val)
        return self

    @staticmethod
    def backward(ctx, grad):
        no_forward_ad("hardtanh_ (backward)", grad)
        (original,) = ctx.saved_tensors
        return call("hardtanh_backward", grad, original, *ctx.bounds), None, None, None, None


def _check_inplace(self: torch.Tensor) -> None:
    """torch's refusals of an in-place update of ``self`` (which requires grad, in grad mode),
    made before the kernel writes: an autograd.Function's own checks run after its forward, when
    ``self`` would already be overwritten. Where torch refuses (a leaf, a view of a leaf, a view
    of a kind that may not be modified: one of several outputs, made in no-grad or inference
    mode), an ATen in-place op that would not change a bit, ``copy_`` from itself, raises
    torch's own error before writing."""
    if self.is_leaf or (self._is_view() and (
            self._base.is_leaf
            or torch._C._autograd._get_creation_meta(self) != torch._C._autograd.CreationMeta.DEFAULT)):
        self.copy_(self)


def _untracked_inplace(op, keyset, self, *args):
    """An in-place op where no graph is recorded: the kernel, then one version bump, in ATen's
    order, so a call the kernel refuses leaves the version as it was (ADInplaceOrView, which
    bumps first, is skipped). Inference tensors never get here: they carry no autograd keys."""
    _kernel_only(op, keyset, self, *args)
    torch.autograd.graph.increment_version(self)
    return self


def _leaky_relu_autograd(keyset, self, negative_slope=0.01):
    # before mark_dirty's version bump, as torch refuses
    (negative_slope,) = _taken("leaky_relu_", self.dtype, negative_slope=negative_slope)
    if torch.is_grad_enabled() and self.requires_grad:
        _check_inplace(self)
        return _LeakyReluInplace.apply(self, negative_slope, keyset)
    return _untracked_inplace(_ops.leaky_relu_.default, keyset, self, negative_slope)


def _hardtanh_autograd(keyset, self, min_val=-1, max_val=1):
    # before mark_dirty's version bump, as torch refuses
    min_val, max_val = _taken("hardtanh_", self.dtype, min_val=min_val, max_val=max_val)
    if torch.is_grad_enabled() and self.requires_grad:
        _check_inplace(self)
        return _HardtanhInplace.apply(self, self.clone(), min_val, max_val, keyset)
    return _untracked_inplace(_ops.hardtanh_.default, keyset, self, min_val, max_val)


# Kept alive for the life of the process: dropping a Library removes its registrations.
_AUTOGRAD_LIB = torch.library.Library(NAMESPACE, "FRAGMENT")
_AUTOGRAD_LIB.impl("leaky_relu_", _leaky_relu_autograd, "Autograd", with_keyset=True)
_AUTOGRAD_LIB.impl("hardtanh_", _hardtanh_autograd, "Autograd", with_keyset=True)


# ---- direct in-place calls: the Autograd kernel above, without the dispatcher ----------------
_INPLACE_KERNELS = {_ops.leaky_relu_.default: _leaky_relu_, _ops.hardtanh_.default: _hardtanh_}
_INPLACE_AUTOGRAD = {"leaky_relu_": _leaky_relu_autograd, "hardtanh_": _hardtanh_autograd}
_INPLACE_OPS = {"leaky_relu_": leaky_relu_, "hardtanh_": hardtanh_}
_INPLACE_REGISTERED = {name: getattr(op, "_backend_fns", {}).get("cpu") for name, op in _INPLACE_OPS.items()}


def call_inplace(name: str, self: torch.Tensor, *numbers) -> torch.Tensor:
    """``torch.ops.opsnn.<name>(self, *numbers)`` for the in-place ops (``leaky_relu_``,
    ``hardtanh_``). Where ``direct`` allows, for a tensor made outside inference mode and called
    outside it, with opsnn's own CPU kernel registered, the Autograd kernel the dispatcher would
    reach runs itself (``_leaky_relu_autograd`` / ``_hardtanh_autograd`` with no keyset): the
    same scalar conversion, refusals and their order, ``_check_inplace``, autograd.Function
    (grad_fn) or one version bump after the kernel, with the CPU kernel called where the
    dispatcher would redispatch to it (``_kernel_only``). Inference mode and inference tensors
    (no autograd keys: the dispatcher goes to ADInplaceOrView or the kernel, in its own order)
    stay on the dispatcher, as does everything ``direct`` refuses."""
    if (not _inference_mode() and direct((self,), numbers)
            and torch._C._dispatch_keys(self).raw_repr() in _plain.NORMAL_KEYS  # (made outside inference mode)
            and getattr(_INPLACE_OPS[name], "_backend_fns", {}).get("cpu") is _INPLACE_REGISTERED[name]):
        return _INPLACE_AUTOGRAD[name](None, self, *numbers)
    return getattr(_ops, name)(self, *numbers)
