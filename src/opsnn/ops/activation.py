"""Activation-backward operators: one OpSpec and one kernel expression each.

Kernel expressions are pure elementwise functions over an ``ops`` namespace (``where``,
``zero``) and Python operators; inputs arrive in the compute dtype (float32 for
fp16/bf16/fp32, float64 for fp64) unless listed as native.
"""

from __future__ import annotations

import math

from .._core.checks import fail
from .._core.dtypes import DataType as D
from ..registry import DtypeTable, OpSpec, Promotion, flag, register, scalar, tensor

# ops-nn aclnn_leaky_relu_backward.cpp: tensor and scalar lists (spec §3.2)
LEAKY_TENSORS = DtypeTable((D.FLOAT, D.FLOAT16, D.DOUBLE), (D.BF16,))
LEAKY_SLOPE = DtypeTable((D.FLOAT, D.FLOAT16, D.DOUBLE, D.INT32, D.INT64, D.INT8, D.UINT8, D.BOOL,
                          D.INT16), (D.BF16,))
# ops-nn aclnn_hardtanh_backward.cpp (spec §4.2): same list for gradOutput, self and out
HARDTANH_TENSORS = DtypeTable((D.FLOAT, D.FLOAT16), (D.BF16,))


def leaky_relu_backward_kernel(ops, grad_output, self, *, negative_slope):
    # strict '>': +0.0, -0.0 and NaN take the slope branch, which is a real IEEE multiply
    return ops.where(self > 0, grad_output, grad_output * negative_slope)


def hardtanh_backward_kernel(ops, self, grad_output, *, min_val, max_val):
    # strict bounds; NaN self passes grad; otherwise +0.0. grad is native: its bits are copied.
    # Written as negated closed bounds, which a NaN self passes: one unordered compare per bound and
    # no separate NaN test (the compiled kernel runs ~15% faster than `> & < | isnan`). A NaN bound
    # passes no number (x > NaN is false); as +inf (min) or -inf (max) it does the same here.
    lo = ops.where(min_val == min_val, min_val, math.inf)
    hi = ops.where(max_val == max_val, max_val, -math.inf)
    passes = ~(self <= lo) & ~(self >= hi)
    return ops.where(passes, grad_output, ops.zero)


def reject_inplace_negative_slope(op: str, args: dict) -> None:
    """selfIsResult with ToDouble(negativeSlope) < 0 -> 161002 (-0.0 and NaN pass; DECISION 4)."""
    slope = args["negative_slope"].to_double()
    if args["self_is_result"] and slope < 0.0:
        raise fail(op, f"selfIsResult is true with negativeSlope {slope:e} < 0: in-place leaky-relu "
                       "backward cannot recover the input's sign from a result made with a negative "
                       "slope (this comes from calling the in-place forward with a negative slope); "
                       "use the out-of-place forward, or pass selfIsResult=false with the input")


LEAKY_RELU_BACKWARD = register(OpSpec(
    name="LeakyReluBackward",
    kernel_name="LeakyReluGrad",
    params=(tensor("grad_output", "gradOutput", LEAKY_TENSORS), tensor("self", "self", LEAKY_TENSORS),
            scalar("negative_slope", "negativeSlope", LEAKY_SLOPE), flag("self_is_result", "selfIsResult"),
            tensor("out")),
    null_order=("grad_output", "self", "negative_slope", "out"),
    promotion=Promotion.PROMOTE,
    broadcast=True,
    extra_checks=(reject_inplace_negative_slope,),
    unsupported_socs=frozenset({"Ascend310B"}),
    kernel=leaky_relu_backward_kernel,
    kernel_inputs=("grad_output", "self"),
    formula="out = gradOutput if self > 0 else gradOutput * float32(negativeSlope)",
    source="ops-nn activation/leaky_relu_grad (op_api/aclnn_leaky_relu_backward.cpp); "
           "torch.ops.aten.leaky_relu_backward",
))

HARDTANH_BACKWARD = register(OpSpec(
    name="HardtanhBackward",
    kernel_name="HardtanhGrad",
    params=(tensor("grad_output", "gradOutput", HARDTANH_TENSORS), tensor("self", "self", HARDTANH_TENSORS),
            scalar("min_val", "min"), scalar("max_val", "max"), tensor("out", "out", HARDTANH_TENSORS)),
    null_order=("self", "grad_output", "out", "min_val", "max_val"),
    promotion=Promotion.SAME,
    broadcast=False,
    out_equals_self=True,
    out_dtype_after_shapes=True,
    kernel=hardtanh_backward_kernel,
    kernel_inputs=("self", "grad_output"),  # HardtanhGrad inputs: result (= self), then grad
    native_inputs=("grad_output",),
    contiguous_out=True,
    formula="out = gradOutput if float32(min) < self < float32(max) or isnan(self) else +0.0",
    source="ops-nn activation/hardtanh_grad (op_api/aclnn_hardtanh_backward.cpp, "
           "op_kernel/arch35/hardtanh_grad_dag.h); torch.ops.aten.hardtanh_backward",
))
