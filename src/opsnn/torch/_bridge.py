"""Zero-copy passage between torch tensors and the NumPy views opsnn's engine computes on, the
dtype tables between them, data-less tensor handles for fake/meta kernels, and the error type.

* torch -> NumPy: ``t.detach().numpy()`` (a view of the same storage, any strides, storage
  offset kept; 0.6 us where ``np.from_dlpack`` takes 1.9). bfloat16 and the float8 types have no
  NumPy code in torch, so they cross as a same-size integer view (``t.view(torch.int16)``)
  reinterpreted as the ml_dtypes type (``a.view(...)``, ``dtypes.TORCH_VIEWS``); both
  reinterpretations keep strides and share memory.
* NumPy -> torch: ``torch.from_numpy(a)`` (those types the same way back); the tensor keeps the
  NumPy buffer alive.
"""

from __future__ import annotations

import numpy as np
import torch

from .. import engine, registry
from .._core import dtypes
from .._core import torchplain as _plain
from .._core.dtypes import DataType
from .._core.status import AclnnError, Status
from .._core.tensor import DataLessTensor


class AclnnRuntimeError(AclnnError, RuntimeError):
    """An opsnn operator refused a torch call: an ``opsnn.AclnnError`` (``.status``, ``.message``,
    the same text ``acl.get_recent_err_msg()`` would give) that is also a ``RuntimeError``, the
    type torch's own operators raise for the same kinds of failure, so ``except RuntimeError``
    written for torch keeps working and ``except opsnn.AclnnError`` sees the CANN status."""


# bfloat16, float8: torch dtype -> (the torch integer dtype it crosses as, its aclDataType)
_VIEWS = {getattr(torch, name): (getattr(torch, view), acl) for name, (view, acl) in dtypes.TORCH_VIEWS.items()
          if hasattr(torch, name)}
# the way back: aclDataType -> (torch dtype, NumPy integer dtype)
_VIEWS_OF_ACL = {acl: (getattr(torch, name), np.dtype(view)) for name, (view, acl) in dtypes.TORCH_VIEWS.items()
                 if hasattr(torch, name)}
# complex32: torch dtype -> (the torch integer dtype its memory crosses as, its aclDataType)
_BYTES = {getattr(torch, name): (getattr(torch, crossing), acl) for name, (crossing, acl) in dtypes.BYTES_ONLY.items()}
_TORCH_TO_ACL = {getattr(torch, name): acl for name, acl in dtypes.TORCH_NAMES.items()}
_TORCH_TO_ACL.update({t: acl for t, (_, acl) in (*_VIEWS.items(), *_BYTES.items())})
_ACL_TO_TORCH = {acl: t for t, acl in _TORCH_TO_ACL.items()}
# from_numpy's lookups: NumPy dtype -> _VIEWS_OF_ACL's entry (None: no view) (~0.2 us a call less)
_VIEW_OF_NUMPY: dict = {}
# the dtypes ``operand`` hands over as ``to_numpy``'s view of the tensor: -> None (``t.numpy()``
# itself) or, for those that cross as an integer view, (that torch dtype, the NumPy dtype), added
# by ``to_numpy``'s first view of one (the NumPy dtype is ml_dtypes', imported on first use)
_CROSSING = dict.fromkeys(_plain.numpy_dtypes(torch))


def acl_dtype(dtype: torch.dtype) -> DataType:
    """aclDataType of a torch dtype (DT_UNDEFINED when opsnn has no such type)."""
    return _TORCH_TO_ACL.get(dtype, DataType.DT_UNDEFINED)


def torch_dtype(dtype: DataType) -> torch.dtype:
    """torch dtype of an aclDataType that holds data in both libraries (KeyError for others)."""
    return _ACL_TO_TORCH[DataType(dtype)]


# the plain-tensor test and its tables, shared with the Pythonic layer (``_core.torchplain``: one
# C call on the dispatch keys, in place of reading nine attributes)
_plain.bind(torch)
is_plain = _plain.is_plain


def to_numpy(t: torch.Tensor, name: str = "tensor") -> np.ndarray:
    """A NumPy view of ``t``'s memory (no copy): same shape, strides and storage offset.

    Raises AclnnRuntimeError (161002) for tensors opsnn cannot read in place: not on the CPU
    (opsnn computes on the host), sparse, a lazy conjugate/negative view, of a dtype no
    aclDataType describes (int1-int7, uint1-uint7, float8_e4m3fnuz ...; torch's int4 and uint1,
    one element a byte where ACL_INT4 and ACL_UINT1 pack them) or one of ACL_COMPLEX32
    (complex32), whose data opsnn holds under no ml_dtypes it takes (0.5 has no complex32), or
    of a shape NumPy cannot hold (the product of its nonzero dims times the itemsize must stay
    below 2**63 bytes, even when a dim is 0: ``torch.empty(2**62, 0)`` has no NumPy view).
    TypeError for ``t`` that is no torch.Tensor, as ``torch.from_numpy`` refuses what is no ndarray.

    A tensor that requires grad is read detached, as ``t.detach().numpy()`` (where
    ``Tensor.numpy()`` refuses it): the ops read their inputs so, their autograd Functions
    recording the call; the view is outside autograd, so a write through the view is not recorded
    by autograd (no version bump): a tensor saved for backward and changed so gives a wrong
    gradient, silently.
    """
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"to_numpy: {name} must be a torch.Tensor, got {type(t).__name__}")
    if t.device.type != "cpu":
        raise refuse(f"{name} is on device {t.device}; opsnn computes on the host, pass CPU tensors")
    if t.layout != torch.strided:
        raise refuse(f"{name} has layout {t.layout}; opsnn reads dense (strided) tensors only")
    if t.is_conj() or t.is_neg():  # as Tensor.numpy(): a view of it would read the stored values
        raise refuse(f"{name} is a lazy {'conjugate' if t.is_conj() else 'negative'} view; "
                     "resolve_conj() / resolve_neg() it first")
    if t.requires_grad:
        t = t.detach()
    try:
        view = _VIEWS.get(t.dtype)
        if view is not None:
            crossing = _CROSSING[t.dtype] = (view[0], dtypes.to_numpy(view[1]))
            return t.view(crossing[0]).numpy().view(crossing[1])
        return t.numpy()
    except (TypeError, RuntimeError, ValueError) as exc:  # ValueError: NumPy's size limit (below)
        if t.dtype not in _TORCH_TO_ACL:
            raise _no_acl_data_type(t.dtype, name) from None
        if t.dtype in _BYTES:
            raise _no_data(t.dtype, name) from None
        raise refuse(f"{name} of dtype {t.dtype} and shape {tuple(t.shape)} has no NumPy view: {exc}") from None


def _no_acl_data_type(dtype: torch.dtype, name: str) -> AclnnRuntimeError:
    """``to_numpy``'s refusal of a dtype no aclDataType describes, in the dtype checks' words: the
    reason is not NumPy (ml_dtypes has float8_e4m3fnuz, int2, int4 ...; "has no NumPy view" had
    been said, a breaker's) but that opsnn, as CANN, has no such type."""
    viewed = ", ".join(str(d) for d in _TORCH_TO_ACL if d not in _BYTES)
    return refuse(f"{name} has dtype {engine.shown_dtype(dtype)}, which no aclDataType describes; "
                  f"it must be one of {viewed}")


def _no_data(dtype: torch.dtype, name: str) -> AclnnRuntimeError:
    """``to_numpy``'s refusal of complex32 (``_BYTES``): opsnn's reason, true under every ml_dtypes
    it takes ("has no NumPy view" had been said, untrue beside ml_dtypes 0.6 on, whose complex32
    holds that memory: a breaker's)."""
    acl = _BYTES[dtype][1]
    return refuse(f"{name} has dtype {dtype} ({acl.acl_name}), which opsnn holds no data of under any ml_dtypes "
                  f"it takes (0.5 has no complex32), so to_numpy gives no view of it; {name}.to(torch.complex64) "
                  "has its values")


def operand(t: torch.Tensor, name: str) -> np.ndarray | DataLessTensor:
    """What the binding hands the opsnn functions for ``t``: ``to_numpy(t)``, or a DataLessTensor
    that the dtype checks refuse in CANN's order, naming it and the dtypes expected (nothing is
    read or written): for a dtype with no aclDataType (int2, uint3, float8_e4m3fnuz ...; torch's
    int4 and uint1 too, one element a byte where ACL_INT4 and ACL_UINT1 pack them), or for
    complex32, ACL_COMPLEX32, which opsnn holds no data of (its memory kept as int32).

    First, for the dtypes ``to_numpy`` views (``_CROSSING``), its view made at once: where
    ``Tensor.numpy()`` gives one, ``to_numpy``'s checks pass (``numpy()`` refuses what they refuse:
    another device or layout, a lazy conjugate or negative view) and it returns that same view;
    where it raises, they run and refuse in opsnn's words. (~0.6 us where they take ~1.8.)"""
    try:
        crossing = _CROSSING[t.dtype]
        plain = t.detach() if t.requires_grad else t
        if crossing is None:
            return plain.numpy()
        return plain.view(crossing[0]).numpy().view(crossing[1])
    except Exception:  # noqa: BLE001, S110 - the checks below say why
        pass
    if t.device.type == "cpu" and t.layout == torch.strided:
        if t.dtype not in _TORCH_TO_ACL:
            return DataLessTensor(tuple(t.shape), DataType.DT_UNDEFINED, t.dtype)
        if t.dtype in _BYTES:
            crossing, acl = _BYTES[t.dtype]
            return DataLessTensor(tuple(t.shape), acl, t.dtype, to_numpy(t.view(crossing), name))
    return to_numpy(t, name)


def from_numpy(a: np.ndarray) -> torch.Tensor:
    """A torch tensor over ``a``'s memory (no copy); bfloat16 (ml_dtypes) as torch.bfloat16.
    TypeError for ``a`` that is no numpy.ndarray, as ``torch.from_numpy``."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"from_numpy: a must be a numpy.ndarray, got {type(a).__name__}")
    try:
        view = _VIEW_OF_NUMPY[a.dtype]
    except KeyError:
        acl = dtypes.from_numpy(a.dtype)
        view = _VIEWS_OF_ACL.get(acl)
        if acl != DataType.DT_UNDEFINED:  # (a dtype with an aclDataType: a few, so the dict stays small)
            _VIEW_OF_NUMPY[a.dtype] = view
    if view is not None:
        return torch.from_numpy(a.view(view[1])).view(view[0])
    return torch.from_numpy(a)


def infer_output(spec_name: str, *values) -> torch.Tensor:
    """The output a fake/meta kernel returns: an empty tensor whose shape and dtype come from
    ``engine.infer_output`` on the op's spec (the checks phase 1 runs, then broadcast/self and
    PROMOTE/SAME), on the tensors' device (a 0-d CPU tensor joins any device, as in torch;
    tensors on two devices are refused). ``values`` are the op's arguments in the spec's (C) order
    without ``out``. Raises AclnnRuntimeError like the real kernel would for the same metadata,
    with the same message: the Pythonic layer's note on CANN names that are no Python keyword
    ("(Python arguments: clipValueMin is min_val = 1.0 ...)", ``functional._python_names``)
    included (a breaker: the fake kernels left it out)."""
    # the Pythonic layer's rules, not copies: Python numbers -> aclScalar, the Python-arguments note
    from ..functional import _as_scalar, _python_names

    spec = registry.get(spec_name)
    params = [p for p in spec.params if p.name != "out"]
    if len(params) != len(values):
        raise TypeError(f"{spec.api_name} takes {len(params)} arguments without out, got {len(values)}")
    args: dict = {}
    given = {}  # the scalars by their Python names, as the Pythonic call's keywords
    tensors = [v for p, v in zip(params, values) if p.kind == "tensor"]
    # as torch: one device for all tensors, but a 0-d CPU tensor may join any (a wrapped scalar)
    devices = list(dict.fromkeys(t.device for t in tensors if not (t.dim() == 0 and t.device.type == "cpu")))
    if len(devices) > 1:
        raise refuse(f"{spec.api_name}: tensors on different devices ({', '.join(map(str, devices))}); "
                     "pass them all on one device")
    device = devices[0] if devices else tensors[0].device
    for param, value in zip(params, values):
        if param.kind == "tensor":
            args[param.name] = DataLessTensor(tuple(value.shape), acl_dtype(value.dtype), value.dtype)
        elif param.kind == "scalar":
            given[param.name] = _example(value)
            args[param.name] = _as_scalar(given[param.name], param.api_name)
        else:
            args[param.name] = value
    with raising():
        try:
            shape, dtype = engine.infer_output(spec, args)
        except AclnnError as exc:
            raise _python_names(spec, exc, given) from None
    return torch.empty(shape, dtype=torch_dtype(dtype), device=device)


_SYMBOLIC = {torch.SymFloat: float, torch.SymInt: int, torch.SymBool: bool}


def _example(value):
    """A scalar as the metadata checks take it. torch.compile passes a Python number that varies
    between calls as a SymFloat/SymInt/SymBool: it becomes a number of its type, its example value
    where torch knows one (read without adding a guard), else 0. A refusal that depends on the
    value is made again by the real kernel, with the real value, when the graph runs."""
    kind = _SYMBOLIC.get(type(value))
    if kind is None:
        return value
    hint = getattr(value.node, "hint", None)
    return kind(hint if hint is not None else 0)


class raising:
    """Context manager: an AclnnError leaving the block becomes an AclnnRuntimeError."""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if exc is not None and isinstance(exc, AclnnError) and not isinstance(exc, AclnnRuntimeError):
            raise AclnnRuntimeError(exc.status, exc.message) from None
        return False


def refuse(message: str) -> AclnnRuntimeError:
    """A 161002 refusal of the binding itself (``opsnn.torch: `` and the message)."""
    return AclnnRuntimeError(Status.ERR_PARAM_INVALID, "opsnn.torch: " + message)
