"""LeakyRelu (x -> y, attr negative_slope): def, elementwise infershape, arch35 ``DoTiling24B``.

Sources: NN:activation/leaky_relu/op_host/leaky_relu_def.cpp,
NN:activation/leaky_relu/op_host/arch35/leaky_relu_tiling_arch35.cpp, op_kernel/arch35/leaky_relu_dag.h
(spec §7.1, §7.3).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from .._core import tiling as t
from .._core.dtypes import DataType, Format
from .._core.platform import SocProfile
from .._core.tiling import DagParams
from .base import AttrDef, OpDef, TensorDesc, TilingResult, infer_elewise, same_dtype_rows
from .checks import require_float_dtype, require_same_dtype, require_same_shape

OP = "LeakyRelu"

# DAG numbers, derived with the atvoss level-2 buffer count (inputs x2 + outputs x2 + live
# temporaries; BASE:pkg_inc/op_common/atvoss/util/node.h, aux1.h) since no UT pins them:
#   fp32: LeakyReluDag<float>: CopyIn -> custom op -> CopyOut: no temporaries -> 4 buffers.
#   fp16/bf16: LeakyReluCastDag<T, float>: Cast up and Cast down around the custom op keep two
#   float temporaries live -> 6 buffers; the smallest node is the 16-bit input.
DAGS = {
    DataType.FLOAT: DagParams(32, 32, 4, "derived (level-2 buffer count of LeakyReluDag<float>)"),
    DataType.FLOAT16: DagParams(16, 32, 6, "derived (level-2 buffer count of LeakyReluCastDag<half, float>)"),
    DataType.BF16: DagParams(16, 32, 6, "derived (level-2 buffer count of LeakyReluCastDag<bfloat16, float>)"),
}
# RunTiling picks TPL_FP16 / TPL_BF16 / TPL_FP32 (1 / 2 / 3) by dtype
TPL_DTYPE = {DataType.FLOAT16: 1, DataType.BF16: 2, DataType.FLOAT: 3}
# ASCENDC_TPL_ARGS_DECL(LeakyRelu, ASCENDC_TPL_UINT_DECL(schMode, 1, UI_LIST, 0, 1),
# ASCENDC_TPL_DTYPE_DECL(dType, TPL_FP16, TPL_BF16, TPL_FP32)): keys 3 / 5 / 7 for schMode 1
TILING_KEY = t.TilingKeyDecl(OP, (t.tpl_uint("schMode", 1, (0, 1)), t.tpl_dtype("dType", *TPL_DTYPE.values())),
                             "NN:activation/leaky_relu/op_kernel/arch35/leaky_relu_struct.h")


def tiling_arch35(soc: SocProfile, inputs: Sequence[TensorDesc], outputs: Sequence[TensorDesc],
                  attrs: Mapping[str, float]) -> TilingResult:
    """x dtype supported, y dtype equal to x, x shape equal to y (0-d read as [1]); then
    ``DoTiling24B`` with the slope at scalarData offset 0; key ``(schMode 1, dType)``, 16 MiB
    workspace, blockDim = the split's block count."""
    (x,), (y,) = inputs, outputs
    require_float_dtype(OP, "x", x.dtype)
    require_same_dtype(OP, ("x", x.dtype), ("y", y.dtype))
    x_shape, y_shape = t.ensure_not_scalar(x.shape), t.ensure_not_scalar(y.shape)
    require_same_shape(OP, ("x", x_shape), ("y", y_shape))
    dag = DAGS[DataType(y.dtype)]
    data = t.elementwise_tiling_24b(OP, y.shape, (x.shape,), soc.vector_core_num, soc.ub_size, dag,
                                    (attrs["negative_slope"],))
    key = TILING_KEY.key(t.DEFAULT_SCHEMODE, TPL_DTYPE[y.dtype])
    notes = (f"DAG numbers: {dag.source}",
             (f"tiling key: schMode 1 (index 1 of 0, 1) in bit 0, dType's value TPL_FP16/BF16/FP32 (1/2/3) "
              f"above: 3/5/7 ({TILING_KEY.source}); the UTs only assert > 0"))
    walk = functools.partial(t.elementwise_launch, data, dag, soc.ub_size, 1)
    return TilingResult(OP, soc.name, "arch35 elementwise DoTiling24B", data, key, data.block_num,
                        t.DEFAULT_TILING_WORKSPACE_SIZE, notes, walk)


OPDEF = OpDef(OP, "main", ("x",), ("y",), (AttrDef("negative_slope", "float", False, 0.0),), same_dtype_rows(2),
              (Format.ND,), "ascend950", "leaky_relu_apt", "NN:activation/leaky_relu/op_host/leaky_relu_def.cpp",
              infer_elewise(0), tiling_arch35,
              aicpu_dtypes=(DataType.DOUBLE,))  # NN:activation/leaky_relu/op_api/leaky_relu.cpp (spec 5.1)
