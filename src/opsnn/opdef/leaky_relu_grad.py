"""LeakyReluGrad (gradients, features -> backprops, attr negative_slope): def, broadcast infershape,
arch35 broadcast tiling.

Sources: NN:activation/leaky_relu_grad/op_host/leaky_relu_grad_def.cpp,
NN:activation/leaky_relu_grad/op_host/arch35/leaky_relu_grad_tiling.cpp,
NN:activation/leaky_relu_grad/op_kernel/arch35/leaky_relu_grad_dag.h and _struct.h (spec §7.1-§7.3).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from .._core import tiling as t
from .._core.dtypes import DataType, Format
from .._core.platform import SocProfile
from .._core.tiling import BroadcastDagParams
from .base import AttrDef, OpDef, TensorDesc, TilingResult, infer_broadcast, same_dtype_rows
from .checks import require_float_dtype, require_same_dtype

OP = "LeakyReluGrad"
INPUTS = ("gradients", "features")

# LeakyReluGradDag<T>: the compare mask is uint8 (8 bits) and the arithmetic float (32 bits) for
# every T. Buffers (atvoss level-2 count: inputs x2 + outputs x2 + live temporaries):
#   fp32: 8 for the one-dim/NDDMA schedules; the fp32 kernel UT's one-dim tiling (256 elements:
#     ubFormer 256) is reproduced on Ascend950 by 8 and by no other count. The UB-broadcast
#     schedule also keeps the two cached broadcast inputs: 10 (derived).
#   fp16/bf16: the real up-cast of the gradient adds float temporaries: 10 and 12 (derived).
DAGS = {
    DataType.FLOAT: BroadcastDagParams(8, 32, 8, 10,
                                       "one-dim/NDDMA 8: UT-anchored (fp32 kernel UT); UB-broadcast 10: derived"),
    DataType.FLOAT16: BroadcastDagParams(8, 32, 10, 12, "derived (level-2 buffer count of LeakyReluGradDag<half>)"),
    DataType.BF16: BroadcastDagParams(8, 32, 10, 12, "derived (level-2 buffer count of LeakyReluGradDag<bfloat16>)"),
}
# LEAKY_RELU_GRAD_TPL_FP16 / _BF16 / _FP32 (leaky_relu_grad_struct.h)
TPL_DTYPE = {DataType.FLOAT16: 1, DataType.BF16: 2, DataType.FLOAT: 3}
# ASCENDC_TPL_ARGS_DECL(LeakyReluGrad, BRC_TEMP_SCH_MODE_KEY_DECL(schMode), ASCENDC_TPL_DTYPE_DECL(dType,
# FP16, BF16, FP32)): the schMode's index in 16 bits, then dType's value in 8 (fp32 one-dim: 7 + (3 << 16))
TILING_KEY = t.TilingKeyDecl(OP, (t.BRC_TEMP_SCH_MODE_KEY_DECL, t.tpl_dtype("dType", *TPL_DTYPE.values())),
                             "NN:activation/leaky_relu_grad/op_kernel/arch35/leaky_relu_grad_struct.h")


def tiling_arch35(soc: SocProfile, inputs: Sequence[TensorDesc], outputs: Sequence[TensorDesc],
                  attrs: Mapping[str, float]) -> TilingResult:
    """The three dtypes must match and be supported; then ``BroadcastBaseTiling::DoTiling``:
    one collapsed dim with contiguous inputs -> schMode 201 (one-dim); contiguous -> the general
    schedule (1, 2, 101-104, 109); strided inputs -> 301-305 (choice only). The slope goes to
    scalarData offset 0; key ``TILING_KEY.key(schMode, dType)``; workspace 16 MiB."""
    gradients, features = inputs
    (backprops,) = outputs
    require_same_dtype(OP, ("gradients", gradients.dtype), ("features", features.dtype),
                       ("backprops", backprops.dtype))
    require_float_dtype(OP, "gradients", gradients.dtype)
    dag = DAGS[DataType(gradients.dtype)]
    contiguous = [t.input_is_contiguous(OP, f"input {i} ({name})", d.shape, d.strides)
                  for i, (name, d) in enumerate(zip(INPUTS, inputs))]
    in_shapes = [t.ensure_not_scalar(d.shape) if c else tuple(d.shape) for d, c in zip(inputs, contiguous)]
    strides = [None if c else tuple(d.strides) for d, c in zip(inputs, contiguous)]
    collapsed = t.collapse_dims(OP, in_shapes, t.ensure_not_scalar(backprops.shape), strides)
    slope = (attrs["negative_slope"],)
    dtypes = [d.dtype for d in inputs]
    cores, ub = soc.vector_core_num, soc.ub_size
    notes = [f"DAG numbers: {dag.source}",
             (f"tiling key: schMode's index in BRC_TEMP_SCH_MODE_KEY_DECL (bits 0-15), dType's value (bits 16-23), "
              f"as {TILING_KEY.source} declares them; ops-nn's UTs only assert > 0")]
    if all(contiguous) and len(collapsed.out_dims) == 1:
        one_dim = t.broadcast_one_dim_tiling(OP, collapsed, cores, ub, dag, slope)
        sch_mode, data, block_dim = t.SCH_MODE_ONE_DIM, one_dim, one_dim.block_num
        walk = functools.partial(t.broadcast_one_dim_launch, one_dim, collapsed, dag, ub)
        template = "arch35 broadcast one-dim (schMode 201)"
    elif all(contiguous):
        sch_mode, base = t.broadcast_tiling(OP, collapsed, dtypes, cores, ub, dag, slope)
        data, block_dim = base, base.block_num
        walk = functools.partial(t.broadcast_launch, base, sch_mode, collapsed, dag, ub)
        template = f"arch35 broadcast (schMode {sch_mode})"
        notes.append(f"general schedule: the NDDMA data cache is {t.NDDMA_DCACHE_BYTES} B (GetNddmaDcacheSize, "
                     "BASE:pkg_inc/op_common/op_host/util/platform_util.h)")
    else:
        choice = t.noncontiguous_schedule(collapsed, contiguous, in_shapes, dtypes, cores, ub, dag)
        sch_mode, data, block_dim, walk = choice.sch_mode, choice, None, None
        template = f"arch35 broadcast, strided inputs (schMode {sch_mode})"
        notes.append("strided schedules: only the schedule choice is reproduced; their fields are not settled")
    key = TILING_KEY.key(sch_mode, TPL_DTYPE[gradients.dtype])
    return TilingResult(OP, soc.name, template, data, key, block_dim, t.DEFAULT_TILING_WORKSPACE_SIZE,
                        tuple(notes), walk)


OPDEF = OpDef(OP, "main", INPUTS, ("backprops",),
              (AttrDef("negative_slope", "float", False, 0.0),), same_dtype_rows(3), (Format.ND,), "ascend950",
              "leaky_relu_grad_apt", "NN:activation/leaky_relu_grad/op_host/leaky_relu_grad_def.cpp",
              functools.partial(infer_broadcast, OP), tiling_arch35,
              aicpu_dtypes=(DataType.DOUBLE,))  # NN:activation/leaky_relu_grad/op_api/leaky_relu_grad.cpp (spec 3.2)
