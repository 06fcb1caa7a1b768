"""Tiling templates as pure functions, operator-agnostic: opbase's atvoss elementwise and broadcast
tilings (the NPU side, spec §7.3) and the host plan (the CPU side).

An operator supplies its DAG numbers and checks and gets back a frozen, printable tiling-data
dataclass whose ``to_dict()`` keys are the CANN struct field names, plus a ``Launch``: how the device
kernel walks that tiling. Units: element counts unless a name ends in ``_bytes`` or ``_bits``.
"""

from .base import (DEFAULT_TILING_WORKSPACE_SIZE, INT64_MAX, Box, DagParams, Launch, Printable, TilingError,
                   TilingKeyDecl, TplArg, ceil_div, ensure_not_scalar, flatten, index_int, max_elem_num,
                   pack_scalars, require_int64, round_up, tile_runs, to_float32, tpl_bool, tpl_dtype, tpl_format,
                   tpl_uint)
from .broadcast import (BRC_TEMP_SCH_MODE_KEY_DECL, NDDMA_DCACHE_BYTES, SCH_MODE_ONE_DIM, BroadcastBaseTilingData,
                        BroadcastDagParams, BroadcastOneDimTilingData, Collapsed, broadcast_launch,
                        broadcast_one_dim_launch, broadcast_one_dim_tiling, broadcast_sch_mode, broadcast_tiling,
                        collapse_dims, input_is_contiguous, is_ub_broadcast)
from .elewise import (DEFAULT_SCHEMODE, EleBaseTilingData, EleBaseTilingData24B, elementwise_launch,
                      elementwise_tiling, elementwise_tiling_24b, elewise_split, same_elewise_shape)
from .host import HostPlan, plan_host
from .strided import NonContiguousSchedule, noncontiguous_schedule

__all__ = [
    "BRC_TEMP_SCH_MODE_KEY_DECL", "DEFAULT_SCHEMODE", "DEFAULT_TILING_WORKSPACE_SIZE", "NDDMA_DCACHE_BYTES",
    "SCH_MODE_ONE_DIM", "Box",
    "BroadcastBaseTilingData", "BroadcastDagParams", "BroadcastOneDimTilingData", "Collapsed", "DagParams",
    "EleBaseTilingData", "EleBaseTilingData24B", "HostPlan", "INT64_MAX", "Launch", "NonContiguousSchedule",
    "Printable", "TilingError", "TilingKeyDecl", "TplArg",
    "broadcast_launch", "broadcast_one_dim_launch", "broadcast_one_dim_tiling", "broadcast_sch_mode",
    "broadcast_tiling", "ceil_div", "collapse_dims", "elementwise_launch", "elementwise_tiling",
    "elementwise_tiling_24b", "elewise_split", "ensure_not_scalar", "flatten", "index_int", "input_is_contiguous",
    "is_ub_broadcast", "max_elem_num",
    "noncontiguous_schedule", "pack_scalars", "plan_host", "require_int64", "round_up", "same_elewise_shape",
    "tile_runs", "to_float32", "tpl_bool", "tpl_dtype", "tpl_format", "tpl_uint",
]
