"""Activation forward operators: LeakyRelu and Hardtanh, with their in-place variants.

Kernel expressions are pure elementwise functions over the ``ops`` namespace (``where``,
``maximum``, ``minimum``) and Python operators. LeakyRelu's input arrives in float32 (fp16/bf16/
fp32) or float64; Hardtanh's in float32/float64 for floating dtypes and in its own dtype for
integers (Compute.NATIVE_INTEGERS). Decisions: ``docs/decisions-forward.md``.
"""

from __future__ import annotations

from .._core import checks
from .._core.dtypes import DataType as D
from .._core.dtypes import INTEGRAL, value_text
from ..registry import (Compute, DtypeTable, OpSpec, Promotion, ScalarConversion, inplace_variant,
                        register, scalar, tensor)

# ops-nn aclnn_leaky_relu.cpp (spec §5.1): self's list; the slope's dtype is not checked and
# out only needs CanCast(self, out).
LEAKY_RELU_TENSORS = DtypeTable((D.FLOAT, D.FLOAT16, D.DOUBLE), (D.BF16,))
# ops-math aclnn_hardtanh.cpp (spec §6.1): one list for self, clipValueMin and clipValueMax (so a
# BOOL bound is refused); out must have self's dtype.
HARDTANH_DTYPES = DtypeTable((D.FLOAT16, D.FLOAT, D.INT32, D.INT64, D.INT16, D.INT8, D.UINT8, D.DOUBLE),
                             (D.BF16,))


def leaky_relu_kernel(ops, self, *, negative_slope):
    # strict '>': +0.0, -0.0 and NaN take the slope branch, a real IEEE multiply
    # (+0.0 * -0.5 = -0.0, -inf * 0 = NaN)
    return ops.where(self > 0, self, self * negative_slope)


def hardtanh_kernel(ops, self, *, min_val, max_val):
    # ClipByValueV2: max with min, then min with max; NaN (in x or a bound) propagates and a
    # signed-zero tie keeps x's sign, like torch.clamp
    return ops.minimum(ops.maximum(self, min_val), max_val)


def reject_min_greater_than_max(op: str, args: dict) -> None:
    """clipValueMin > clipValueMax -> 161002 (aclnn_hardtanh.cpp CheckMinMaxValue): compared as
    ToInt64 when min's dtype is integral (a NaN max reads as 0 there, so min 1 with max NaN is
    refused), else as ToDouble, where NaN bounds pass."""
    lo, hi = args["min_val"], args["max_val"]
    if lo.dtype in INTEGRAL:
        lo_v, hi_v, shown = lo.to_int64(), hi.to_int64(), "as int64"
    else:
        lo_v, hi_v, shown = lo.to_double(), hi.to_double(), "as double"
    if lo_v > hi_v:
        # a value the conversion changed (a NaN or fractional max read as int64) is shown as given
        # too: "max 0" alone would not be the caller's max, and swapping would not be the fix
        converted = [f"{name} {value_text(scalar.value.item(), scalar.dtype)} is {value!r} {shown}"
                     for name, scalar, value
                     in (("min", lo, lo_v), ("max", hi, hi_v)) if scalar.value != value]
        fix = ("give clipValueMin a floating-point dtype to compare as double"
               if converted and not lo.to_double() > hi.to_double() else "swap the bounds")
        raise checks.fail(op, f"clipValueMin must be <= clipValueMax, got min {lo_v!r} > max "
                              f"{hi_v!r} (compared {shown}, following clipValueMin's dtype"
                              f"{''.join('; ' + c for c in converted)}); {fix}")


LEAKY_RELU = register(OpSpec(
    name="LeakyRelu",
    kernel_name="LeakyRelu",
    params=(tensor("self", "self", LEAKY_RELU_TENSORS), scalar("negative_slope", "negativeSlope"),
            tensor("out")),
    null_order=("self", "negative_slope", "out"),
    promotion=Promotion.SAME,
    broadcast=False,
    unsupported_socs=frozenset({"Ascend310P", "Ascend310B"}),
    kernel=leaky_relu_kernel,
    kernel_inputs=("self",),
    formula="out = self if self > 0 else self * float32(negativeSlope)",
    source="ops-nn activation/leaky_relu (op_api/aclnn_leaky_relu.cpp, op_kernel/arch35/"
           "leaky_relu_dag.h); torch.ops.aten.leaky_relu",
))

INPLACE_LEAKY_RELU = register(inplace_variant(LEAKY_RELU))

HARDTANH = register(OpSpec(
    name="Hardtanh",
    kernel_name="ClipByValueV2",
    params=(tensor("self", "self", HARDTANH_DTYPES),
            scalar("min_val", "clipValueMin", HARDTANH_DTYPES),
            scalar("max_val", "clipValueMax", HARDTANH_DTYPES), tensor("out")),
    null_order=("self", "min_val", "max_val", "out"),
    promotion=Promotion.SAME,
    broadcast=False,
    out_equals_self=True,
    extra_checks=(reject_min_greater_than_max,),
    unsupported_socs=frozenset({"Ascend310B"}),
    kernel=hardtanh_kernel,
    kernel_inputs=("self",),
    scalar_conversion=ScalarConversion.TO_SELF_DTYPE,
    compute=Compute.NATIVE_INTEGERS,
    formula="out = min(max(self, clipValueMin), clipValueMax), bounds converted to self's dtype",
    source="ops-math conversion/clip_by_value_v2 (op_api/aclnn_hardtanh.cpp, op_kernel_aicpu/"
           "clip_by_value_v2_aicpu.cpp); torch.ops.aten.hardtanh / torch.clamp",
))

INPLACE_HARDTANH = register(inplace_variant(HARDTANH))
