"""What the CPU kernels and the fake kernels both check and convert before opsnn's own checks.

torch's rules that the aclnn layer does not make: the scalars as torch's kernel takes them
(``_torch_scalars``: its target dtype, its refusals, its roundings), leaky_relu_backward's
slope and hardtanh_backward's bounds in the promoted dtype, torch's cast of a 0-d operand
(``_as_torch_promotes``), and an in-place op's writability (``_inplace_scalars``). Apart from
the kernels because the fake kernels (``_fake``) make the same checks on metadata, so a
meta / fake tensor is refused where a CPU one is, in the same words; ``SPECS`` names the
OpSpec behind each torch op, whose dtype lists these checks and the fakes read.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from .. import reference, registry
from .._core.status import Status
from . import _bridge as B
from ._memo import _MEMO, _remember, _scalars_key

# Spec (aclnn) names behind each torch op: the fake kernels read these OpSpecs (an in-place op's
# own, aclnnInplace<Op>, so its fake refusals name the operator the CPU kernel's name).
SPECS = {"leaky_relu": "LeakyRelu", "hardtanh": "Hardtanh", "leaky_relu_": "InplaceLeakyRelu",
         "hardtanh_": "InplaceHardtanh", "leaky_relu_backward": "LeakyReluBackward",
         "hardtanh_backward": "HardtanhBackward"}


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


def _backward_bounds(grad_output, self, min_val, max_val) -> list:
    """hardtanh_backward's bounds as torch takes them: converted to the tensors' promoted dtype
    (its kernel's common dtype), not self's: with an integer self and a float grad a bound such
    as -1.5 is a float32 in torch, and the aclnn layer's dtype check then names self (DECISION
    10), where the fit check blamed the bound (a breaker)."""
    dtype = torch.promote_types(grad_output.dtype, self.dtype)
    return _torch_scalars("hardtanh_backward", dtype, min_val=min_val, max_val=max_val)


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
