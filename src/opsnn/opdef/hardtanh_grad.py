"""HardtanhGrad: the main def (ascend950, arch35 elementwise tiling) and the experimental def
(ascend910b, its own tiling with big/small cores). Spec §7.1-§7.4.

Kernel inputs: ``result`` (the forward input, aclnn ``self``) then ``grad`` (aclnn ``gradOutput``);
output ``y``; attrs ``min_val``/``max_val``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence

from .._core import tiling as t
from .._core.dtypes import BITS, DataType, Format
from .._core.platform import SocProfile
from .._core.shape import numel
from .._core.tiling import DagParams, EleBaseTilingData, Launch, Printable, TilingError
from .base import AttrDef, OpDef, TensorDesc, TilingResult, infer_elewise, same_dtype_rows
from .checks import require_float_dtype, require_same_dtype, require_same_shape

OP = "HardtanhGrad"
ATTRS = (AttrDef("min_val", "float", True, -1.0), AttrDef("max_val", "float", True, 1.0))

# ---- arch35 (NN:activation/hardtanh_grad/op_host/arch35/hardtanh_grad_tiling_arch35.cpp) -----

# HardtanhGradDag<T>: uint8 compare masks (8 bits), float compute (32 bits). BufferNum 10 is the
# only value that gives the UT's ubFormer 6144 with a 245760-byte UB (fp16; spec §7.3). The
# fp16 UTs are the only anchor; fp32/bf16 use the same number (see docs/tiling.md).
DAG = DagParams(min_dtype_bits=8, max_dtype_bits=32, buffer_num=10,
                source="spec §7.3: inferred from the fp16 UT (ubFormer 6144 at UB 245760)")
# The dType template value: RunTiling sets ``dType = HardtanhGrad_TPL`` (1) before its dtype
# branch, whatever the dtype (one kernel template; the DAG is picked by dtype inside), so every
# dtype's key is the fp16 UT's 3 (an older ops-nn had one TPL value per dtype: keys 3/5/7).
TPL_DTYPE = 1
# ASCENDC_TPL_ARGS_DECL(HardtanhGrad, ASCENDC_TPL_UINT_DECL(schMode, 1, UI_LIST, 0, 1),
# ASCENDC_TPL_DTYPE_DECL(dType, HardtanhGrad_TPL)): schMode 1 is index 1, dType's value 1 sits
# above it: key 3, the fp16 UT's (a DTYPE is encoded by value: by index this single-value list would give 1)
TILING_KEY = t.TilingKeyDecl(OP, (t.tpl_uint("schMode", 1, (0, 1)), t.tpl_dtype("dType", TPL_DTYPE)),
                             "NN:activation/hardtanh_grad/op_kernel/arch35/hardtanh_grad_struct.h")


@dataclasses.dataclass(frozen=True)
class HardtanhGradTilingData(Printable):
    """``HardtanhGradTilingData`` (op_kernel/arch35/hardtanh_grad_tilingdata.h): the 80-byte
    EleBaseTilingData, then minVal and maxVal as float32 (88 bytes)."""

    base_tiling: EleBaseTilingData
    min_val: float
    max_val: float


def tiling_arch35(soc: SocProfile, inputs: Sequence[TensorDesc], outputs: Sequence[TensorDesc],
                  attrs: Mapping[str, float]) -> TilingResult:
    """Checks as the arch35 tiling does, in its order: result and grad dtypes supported and equal,
    y's dtype supported and equal to them, then result == grad == y shapes (0-d counts as [1]).
    Then ``DoTiling`` with the HardtanhGrad DAG; key ``(schMode 1, dType)``; 16 MiB workspace."""
    result, grad = inputs
    (y,) = outputs
    require_float_dtype(OP, "result", result.dtype)
    require_float_dtype(OP, "grad", grad.dtype)
    require_same_dtype(OP, ("result", result.dtype), ("grad", grad.dtype))
    require_float_dtype(OP, "y", y.dtype)
    require_same_dtype(OP, ("result", result.dtype), ("y", y.dtype))
    shapes = [t.ensure_not_scalar(d.shape) for d in (result, grad, y)]
    require_same_shape(OP, ("result", shapes[0]), ("grad", shapes[1]))
    require_same_shape(OP, ("result", shapes[0]), ("y", shapes[2]))
    base = t.elementwise_tiling(OP, y.shape, (result.shape, grad.shape), soc.vector_core_num, soc.ub_size, DAG)
    min_val, max_val = t.to_float32(attrs["min_val"]), t.to_float32(attrs["max_val"])
    data = HardtanhGradTilingData(base, min_val, max_val)
    key = TILING_KEY.key(base.sche_mode, TPL_DTYPE)
    notes = (f"DAG numbers: {DAG.source}",
             "tiling key: dType is HardtanhGrad_TPL for every dtype (RunTiling); 3 asserted by the fp16 UT")
    walk = functools.partial(t.elementwise_launch, base, DAG, soc.ub_size, 2)
    return TilingResult(OP, soc.name, "arch35 elementwise DoTiling", data, key, base.block_num,
                        t.DEFAULT_TILING_WORKSPACE_SIZE, notes, walk)


# ---- experimental 910B (NN:experimental/activation/hardtanh_grad/op_host/hardtanh_grad_tiling.cpp) --

GM_ALIGN_BYTES = 512
DB_THRESHOLD = 6144 * 20  # elements: above it the double-buffered large path (key 1)
MAX_TILE = 6144           # elements
TILE_BASE = 1024          # elements
TILE_STEP = 8192          # elements of padded length per small-path tile size step
TILE_MAX_REGULAR_INDEX = 4
MASK_ALIGN = 256          # bytes of the mask buffer
KEY_SMALL, KEY_LARGE = 0, 1


@dataclasses.dataclass(frozen=True)
class HardtanhGrad910BTilingData(Printable):
    """``HardtanhGradTilingData`` of the experimental kernel (op_kernel/hardtanh_grad_tiling_data.h):
    u64 fields then ``max`` and ``min`` as float32 (struct order: max first).

    Element counts except the tile counts and ``tail_block_num`` (the number of big cores, which
    come first); ``mask_tile_data_num`` is bytes per compare mask.
    """

    small_core_data_num: int
    big_core_data_num: int
    final_big_tile_num: int
    final_small_tile_num: int
    tile_data_num: int
    small_tail_data_num: int
    big_tail_data_num: int
    tail_block_num: int
    mask_tile_data_num: int
    max: float
    min: float

    @property
    def tiling_key(self) -> int:
        return KEY_LARGE if self.big_core_data_num else KEY_SMALL


def tiling_910b(soc: SocProfile, inputs: Sequence[TensorDesc], outputs: Sequence[TensorDesc],
                attrs: Mapping[str, float]) -> TilingResult:
    """The experimental tiling. ``N`` = elements of ``result``, the element size from ``grad``'s
    dtype; the kernel works on ``L`` = N padded to 512 bytes.

    Small path (N <= 122880, key 0): one tile per core, tile grows with L in 1024-element steps
    (at most 6144), cores = ceil(L / tile), not capped by the core count.
    Large path (key 1): cores = min(cores, ceil(L / 12288)); L dealt in 512-byte units, the first
    ``L/E % cores`` cores get one unit more; double-buffered tiles of at most 6144.
    """
    result, grad = inputs
    cores_real, ub = soc.vector_core_num, soc.ub_size
    if cores_real <= 0 or ub <= 0:
        raise TilingError(OP, f"core num {cores_real} and UB size {ub} must be positive")
    n = numel(result.shape)
    if n == 0:
        raise TilingError(OP, "result has no elements: the padded length minus one underflows and the "
                              "source would leave the core count unset (the aclnn empty fast path never gets here)")
    type_len = BITS.get(grad.dtype, 0) // 8  # (DT_UNDEFINED has no size at all)
    if type_len == 0:  # the source's division by it would fault
        raise TilingError(OP, f"grad's dtype {DataType(grad.dtype).name} has no whole-byte element size; "
                              "the 512-byte unit is counted in whole elements")
    unit = GM_ALIGN_BYTES // type_len  # elements per 512-byte unit
    padded = t.round_up(n, unit)
    min_val, max_val = t.to_float32(attrs["min_val"]), t.to_float32(attrs["max_val"])
    if n > DB_THRESHOLD:
        cores = min(cores_real, t.ceil_div(padded, MAX_TILE * 2))
        tile = min(MAX_TILE, t.round_up(t.ceil_div(t.ceil_div(padded, cores), 2), unit))
        units = padded // unit
        small = units // cores * unit
        big = small + unit
        small_tiles, big_tiles = t.ceil_div(small, tile), t.ceil_div(big, tile)
        data = HardtanhGrad910BTilingData(small, big, big_tiles, small_tiles, tile,
                                          small - (small_tiles - 1) * tile, big - (big_tiles - 1) * tile,
                                          units % cores, _mask_bytes(tile), max_val, min_val)
    else:
        index = (padded - 1) // TILE_STEP
        tile = TILE_BASE * (index + 1) if index < TILE_MAX_REGULAR_INDEX else MAX_TILE
        tile = t.round_up(t.ceil_div(padded, t.ceil_div(padded, tile)), unit)
        cores = t.ceil_div(padded, tile)
        data = HardtanhGrad910BTilingData(0, 0, 0, 0, tile, padded - (cores - 1) * tile, 0, 0,
                                          _mask_bytes(tile), max_val, min_val)
    # every tensor is walked for L elements; op_host does not check that grad and y hold N
    past = {name: padded - numel(desc.shape)
            for name, desc in (("result", result), ("grad", grad), ("y", outputs[0]))}
    if len(set(past.values())) == 1:
        overrun = f"{past['result']} elements read and written past the tensors"
    else:  # a tensor larger than L keeps its last elements out of the walk: unread, or for y unwritten
        beyond = [f"{name} {k}" for name, k in past.items() if k > 0]
        short = [f"the last {-k} elements of {name} left {'unwritten' if name == 'y' else 'unread'}"
                 for name, k in past.items() if k < 0]
        overrun = "; ".join(filter(None, ["elements read or written past " + ", ".join(beyond) if beyond else "",
                                          ", ".join(short)])) + "; op_host does not check that the shapes agree"
    notes = ("workspace: the AscendC system workspace only (user part 0); its size is not fixed by ops-nn",
             f"the kernel processes the padded length L = {padded} (N = {n}): {overrun} (spec §7.4)")
    walk = functools.partial(launch_910b, data, cores, n, type_len, ub)
    return TilingResult(OP, soc.name, "experimental 910B tiling", data, data.tiling_key, cores, 0, notes, walk)


def _mask_bytes(tile: int) -> int:
    return t.round_up(t.ceil_div(tile, 8), MASK_ALIGN)


def launch_910b(data: HardtanhGrad910BTilingData, cores: int, n: int, type_len: int, ub_size: int) -> Launch:
    """The experimental kernel's walk (op_kernel/hardtanh_grad.h).

    Key 1: core i < tailBlockNum is big; core i starts at ``big*i - (big-small)*max(0, i-tailBlockNum)``
    and runs tileNum-1 tiles plus its tail, double-buffered: input queue 2 x (2 x tile) elements
    (result and grad packed), output queue 2 x tile, three masks, a float temp for fp16/bf16.
    Key 0: core i processes ``tile`` elements at ``tile*i`` (the last core ``smallTail``) in one pass,
    with every buffer sized for 6144 elements (the masks too, in bytes).
    """
    temp = 4 if type_len < 4 else 0  # float copy of result for fp16/bf16
    if data.tiling_key == KEY_LARGE:
        blocks = []
        for i in range(cores):
            big = i < data.tail_block_num
            start = data.big_core_data_num * i - (data.big_core_data_num - data.small_core_data_num) * max(
                0, i - data.tail_block_num)
            count = data.final_big_tile_num if big else data.final_small_tile_num
            tail = data.big_tail_data_num if big else data.small_tail_data_num
            blocks.append(t.tile_runs(start, data.tile_data_num, count, tail))
        tile = data.tile_data_num
        alloc = 2 * (2 * tile * type_len) + 2 * tile * type_len + 3 * data.mask_tile_data_num + tile * temp
        return Launch((n,), ((1,), (1,)), (n, n), n, tuple(blocks), tile, 2, alloc, ub_size)
    blocks = tuple(t.tile_runs(data.tile_data_num * i, data.tile_data_num, 1,
                               data.small_tail_data_num if i == cores - 1 else data.tile_data_num)
                   for i in range(cores))
    alloc = 2 * (2 * MAX_TILE * type_len) + 2 * MAX_TILE * type_len + 3 * MAX_TILE + MAX_TILE * temp
    return Launch((n,), ((1,), (1,)), (n, n), n, blocks, MAX_TILE, 1, alloc, ub_size)


# ---- definitions ------------------------------------------------------------------------------

OPDEF = OpDef(OP, "main", ("result", "grad"), ("y",), ATTRS, same_dtype_rows(3), (Format.ND,), "ascend950",
              "hardtanh_grad_apt", "NN:activation/hardtanh_grad/op_host/hardtanh_grad_def.cpp",
              infer_elewise(0), tiling_arch35)
OPDEF_EXPERIMENTAL = OpDef(OP, "experimental", ("result", "grad"), ("y",), ATTRS, same_dtype_rows(3), (Format.ND,),
                           "ascend910b", None, "NN:experimental/activation/hardtanh_grad/op_host/hardtanh_grad_def.cpp",
                           infer_elewise(1), tiling_910b)
