"""The arch35 broadcast template (``BroadcastBaseTiling::DoTiling``) for contiguous inputs: dim
collapse, the one-dim schedule (201) and the general schedule (1, 2, 101-104, 109).

Sources (facts only): BASE:src/op_common/atvoss/broadcast/broadcast_tiling.cpp (DimensionCollapse,
NonContiguousDimensionCollapse, GetBlockSplitFactor, DoBrodcastTiling), broadcast_tiling_base.cpp
(BroadcastGetMaxElemNum), BASE:pkg_inc/op_common/atvoss/broadcast/broadcast_tiling.h (DoTiling,
IsUbBroadcast, SetSchMode, the one-dim tiling), broadcast_tiling_base.h (constants),
broadcast_base_struct.h (the structs), broadcast_sch_one_dim.h (how the one-dim kernel walks it).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from ..dtypes import BITS, DataType
from ..shape import contiguous_strides, is_contiguous, numel
from .base import (Launch, Printable, TilingError, ceil_div, pack_scalars, require_int64, round_up, tile_runs,
                   tpl_uint, ub_elements)

SCH_MODE_NDDMA = 1                 # NDDMA without loop cache
SCH_MODE_NDDMA_LOOP_CACHE = 2      # NDDMA with loop cache (more than 5 dims under the UB split)
SCH_MODE_UB_BROADCAST = 100        # + running rank (101-104), 109 when that rank exceeds 4
SCH_MODE_ONE_DIM = 201
MAX_NDDMA_DIM = 5
HIGH_PERF_RANK = 4
UB_BRC_RANK_ABOVE_HIGH_PERF = 9
BROADCAST_MAX_DIMS = 8
BROADCAST_SCALAR_BYTES = 16
CACHE_LINE = 128                   # bytes: one-dim ubFormer granularity
PER_CORE_MIN_UB_BYTES = 8 * 1024   # one-dim: never shrink a tile below this (all buffers together)
BLOCK_BYTES = 32                   # UB block: the UB-broadcast kernel wants the last dim in whole blocks
NDDMA_DCACHE_BYTES = 8192          # GetNddmaDcacheSize (BASE:pkg_inc/op_common/op_host/util/platform_util.h)
# BRC_TEMP_SCH_MODE_KEY_DECL(schMode) (broadcast_base_struct.h): the broadcast template's schMode
# template argument, a 16-bit UINT, so a key holds the mode's index in this list (201 -> 7), not
# the mode. An older opbase listed only 1 ... 201; the later modes were appended, so the indices
# of those agree. ops-math's AddV2 tiling UT asserts 8 (202) and 14 (999) through this list.
BRC_TEMP_SCH_MODE_KEY_DECL = tpl_uint("schMode", 16, (1, 2, 101, 102, 103, 104, 109, 201, 202,
                                                      301, 302, 303, 304, 305, 999))
# dtypes the UB-broadcast kernel handles natively (ubBroadcastDtypes in broadcast_tiling.h)
UB_BROADCAST_DTYPES = frozenset({DataType.INT8, DataType.UINT8, DataType.FLOAT16, DataType.BF16,
                                 DataType.INT16, DataType.UINT16})


@dataclasses.dataclass(frozen=True)
class Collapsed:
    """Dims after ``DimensionCollapse``: per input and for the output, with element strides
    (0 on an input's broadcast dim). The output comes last, as in the source."""

    in_dims: tuple[tuple[int, ...], ...]
    in_strides: tuple[tuple[int, ...], ...]
    out_dims: tuple[int, ...]
    out_strides: tuple[int, ...]


def _pad(shape: Sequence[int], rank: int, fill: int) -> list[int]:
    return [fill] * (rank - len(shape)) + list(shape)


def input_is_contiguous(op: str, name: str, shape: Sequence[int], strides: Sequence[int] | None) -> bool:
    """opbase ``IsTensorContiguous`` for input ``name``: no strides (None or empty) is contiguous;
    otherwise row-major dense over the dims that are not 1. Raises TilingError for a stride count
    other than the rank, which the source fails (GRAPH_FAILED) rather than read one way or the other."""
    if strides is None or len(strides) == 0:  # (not `not strides`: a NumPy array has no truth value)
        return True
    if len(strides) != len(shape):
        raise TilingError(op, f"{name} has {len(strides)} strides {list(strides)} for its {len(shape)} dims "
                              f"{list(shape)}: a view needs one stride per dim (or none, contiguous)")
    return is_contiguous(tuple(shape), tuple(strides))


def collapse_dims(op: str, in_shapes: Sequence[Sequence[int]], out_shape: Sequence[int],
                  in_strides: Sequence[Sequence[int] | None] | None = None) -> Collapsed:
    """``DimensionCollapse`` / ``NonContiguousDimensionCollapse``: merge neighbouring output dims
    that every input treats alike (all broadcast or all not), drop dims that are 1 everywhere.

    ``in_strides[i]`` is None for a contiguous input; a strided input only merges dims that are
    jointly contiguous in memory. Raises TilingError for non-positive dims or a shape that does not
    broadcast to ``out_shape``.
    """
    rank = len(out_shape)
    strided = list(in_strides) if in_strides else [None] * len(in_shapes)
    if rank == 0:
        raise TilingError(op, "the output shape's dim num can not be 0")
    shapes = []
    for i, shape in enumerate(in_shapes):
        if len(shape) > rank:
            raise TilingError(op, f"input {i} has more dims than the output ({list(shape)} vs {list(out_shape)})")
        shapes.append(_pad(shape, rank, 1))
    strides_in = [None if s is None else _pad(s, rank, 0) for s in strided]
    flags = []
    for j in range(rank):
        if out_shape[j] <= 0:
            raise TilingError(op, f"output dim {j} must be positive, got {out_shape[j]}")
        flag = 0
        for i, shape in enumerate(shapes):
            if shape[j] != 1 and shape[j] != out_shape[j]:
                raise TilingError(op, f"input {i} dim {j} is {shape[j]}: neither 1 nor the output's {out_shape[j]}")
            if shape[j] <= 0:
                raise TilingError(op, f"input {i} dim {j} must be positive, got {shape[j]}")
            flag = (flag << 1) | (shape[j] == 1)
        flags.append(flag)
    all_ones = (1 << len(shapes)) - 1

    def jointly_contiguous(kept: int, j: int) -> bool:
        for shape, s in zip(shapes, strides_in):
            if s is None or shape[j] == 1 or shape[kept] == 1:
                continue
            if s[kept] != s[j] * shape[j]:
                return False
        return True

    # One decision per axis, shared by every tensor: merge into the previous group, absorb
    # (an all-ones axis whose output is 1 too), or keep as a new group.
    actions = ["keep"]
    prev_flag, kept = flags[0], 0
    for j in range(1, rank):
        same = flags[j] == prev_flag or (prev_flag == all_ones and out_shape[j - 1] == 1)
        if same and (prev_flag == all_ones or jointly_contiguous(kept, j)):
            actions.append("merge")
            prev_flag, kept = flags[j], j
        elif flags[j] == all_ones and out_shape[j] == 1:
            actions.append("absorb")
        else:
            actions.append("keep")
            prev_flag, kept = flags[j], j

    def collapse(dims: Sequence[int]) -> list[int]:
        out = [dims[0]]
        for j in range(1, rank):
            if actions[j] == "merge":
                out[-1] *= dims[j]
            elif actions[j] == "keep":
                out.append(dims[j])
        return out

    def collapse_strides(strides: Sequence[int]) -> list[int]:
        out = [strides[0]]
        for j in range(1, rank):
            if actions[j] == "merge":
                out[-1] = strides[j]  # a merged group keeps the stride of its innermost axis
            elif actions[j] == "keep":
                out.append(strides[j])
        return out

    out_dims = collapse(out_shape)
    in_dims, in_str = [], []
    for shape, s in zip(shapes, strides_in):
        dims = collapse(shape)
        st = list(contiguous_strides(dims)) if s is None else collapse_strides(s)
        st = [0 if d == 1 and o != 1 else v for d, o, v in zip(dims, out_dims, st)]
        in_dims.append(tuple(dims))
        in_str.append(tuple(st))
    if len(out_dims) > BROADCAST_MAX_DIMS:
        raise TilingError(op, f"broadcast supports at most {BROADCAST_MAX_DIMS} collapsed dims, got {len(out_dims)}")
    return Collapsed(tuple(in_dims), tuple(in_str), tuple(out_dims), contiguous_strides(out_dims))


@dataclasses.dataclass(frozen=True)
class BroadcastOneDimTilingData(Printable):
    """``BroadcastOneDimTilingData`` (broadcast_base_struct.h), schMode 201.

    ``ub_former``/``ub_tail`` are elements per UB tile; ``block_former``/``block_tail`` count UB
    tiles per core (the last core runs ``block_tail`` tiles, its last one ``ub_tail`` long).
    ``scalar_flag`` bit i: input i is a single element, duplicated instead of copied.
    """

    scalar_flag: int
    ub_split_axis: int
    ub_former: int
    ub_tail: int
    block_num: int
    block_former: int
    block_tail: int
    scalar_data: bytes


def _one_dim_split(op: str, length: int, ub_former: int, core_num: int) -> tuple[int, int, int, int, int]:
    require_int64(op, length + ub_former - 1, f"output of {length} elements (collapsed shape [{length}]) "
                  f"in tiles of {ub_former}", "ubOuter's (dimLength + ubFormer - 1)", "DoOneDimFormerTiling")
    ub_outer = ceil_div(length, ub_former)
    ub_tail = length % ub_former or ub_former  # an exact fit still gets a whole "tail" tile
    block_former = ceil_div(ub_outer, core_num)
    block_tail = ub_outer % block_former or block_former
    block_num = ceil_div(ub_outer, block_former)
    return ub_former, ub_tail, block_former, block_tail, block_num


def broadcast_one_dim_tiling(op: str, collapsed: Collapsed, core_num: int, ub_size: int, dag: BroadcastDagParams,
                             scalars: Sequence[float] = ()) -> BroadcastOneDimTilingData:
    """``DoOneDimOpTiling``: UB first, then cores.

    ubFormer = (UB / aliveNum) rounded down to a 128-byte line, in elements of the largest dtype
    (aliveNum = ``dag.buffer_num_nddma``);
    tiles are dealt to cores ``ceil(tiles / cores)`` at a time. When fewer than half the cores
    would work and the buffers exceed 8 KiB, the tile shrinks to spread the data over half the
    cores, but never below 8 KiB of buffers. Raises TilingError where the C code's int64
    ``dimLength + ubFormer - 1`` would wrap (an output within ubFormer - 1 of 2**63 elements).
    """
    length = collapsed.out_dims[0]
    scalar_flag = sum(1 << i for i, dims in enumerate(collapsed.in_dims) if dims[0] == 1)
    alive_num, max_dtype_bytes = dag.buffer_num_nddma, dag.max_dtype_bytes
    ub_former = ub_size // alive_num // CACHE_LINE * CACHE_LINE // max_dtype_bytes
    if ub_former == 0:
        raise TilingError(op, f"UB of {ub_size} B cannot hold a 128-byte line for {alive_num} buffers")
    split = _one_dim_split(op, length, ub_former, core_num)
    block_num = split[4]
    if block_num < core_num // 2 and ub_former * max_dtype_bytes * alive_num > PER_CORE_MIN_UB_BYTES:
        per_core = length * 2 // core_num
        aligned = round_up(per_core * max_dtype_bytes, CACHE_LINE) // max_dtype_bytes
        lowest = PER_CORE_MIN_UB_BYTES // alive_num // CACHE_LINE * CACHE_LINE // max_dtype_bytes
        split = _one_dim_split(op, length, max(min(ub_former, aligned), lowest), core_num)
    ub_former, ub_tail, block_former, block_tail, block_num = split
    return BroadcastOneDimTilingData(scalar_flag, 0, ub_former, ub_tail, block_num, block_former, block_tail,
                                     pack_scalars(*scalars, size=BROADCAST_SCALAR_BYTES))


def broadcast_one_dim_launch(data: BroadcastOneDimTilingData, collapsed: Collapsed, dag: BroadcastDagParams,
                             ub_size: int) -> Launch:
    """broadcast_sch_one_dim.h: core b starts at ``b * blockFormer * ubFormer``; every core but the
    last runs ``blockFormer`` full tiles, the last runs ``blockTail`` tiles ending in ``ubTail``.
    A scalar-flagged input is read at element 0 (duplicated in UB). Ping-pong on ``i & 1``; the
    kernel carves ``ubFormer * MaxDtypeBytes * BufferNum`` bytes of UB."""
    length = collapsed.out_dims[0]
    blocks = []
    for b in range(data.block_num):
        last = b == data.block_num - 1
        count = data.block_tail if last else data.block_former
        tail = data.ub_tail if last else data.ub_former
        start = b * data.block_former * data.ub_former
        blocks.append(tile_runs(start, data.ub_former, count, tail))
    in_strides = tuple((0,) if dims[0] == 1 else (1,) for dims in collapsed.in_dims)
    in_numel = tuple(dims[0] for dims in collapsed.in_dims)
    return Launch((length,), in_strides, in_numel, length, tuple(blocks), data.ub_former, 2,
                  dag.buffer_num_nddma * data.ub_former * dag.max_dtype_bytes, ub_size)


@dataclasses.dataclass(frozen=True)
class BroadcastBaseTilingData(Printable):
    """``BroadcastBaseTilingData<Dag>`` of the general contiguous schedule (schMode 1, 2, 101-109).

    The UB split is on output dim ``ub_split_axis``: ``ub_former`` of its elements (times every
    inner dim) per tile, ``ub_outer`` tiles along it, the last ``ub_tail`` long. The "fused" outer
    space (the dims before the split times ``ub_outer``) has ``dim_product_before_ub_inner``
    entries, dealt ``block_former`` per core (the last ``block_tail``). ``elem_num`` is the
    elements one UB buffer holds. ``sche_mode`` is the struct slot, which the contiguous path never
    writes (it stays 0; the schedule mode travels in the tiling key).
    ``input_brc_dims``/``input_brc_strides`` list the broadcast-capable (CopyInBrc) inputs.
    """

    sche_mode: int
    shape_len: int
    ub_split_axis: int
    ub_former: int
    ub_tail: int
    ub_outer: int
    block_former: int
    block_tail: int
    dim_product_before_ub_inner: int
    elem_num: int
    block_num: int
    output_dims: tuple[int, ...]
    output_strides: tuple[int, ...]
    input_brc_dims: tuple[tuple[int, ...], ...]
    input_brc_strides: tuple[tuple[int, ...], ...]
    scalar_data: bytes


@dataclasses.dataclass(frozen=True)
class BroadcastDagParams(Printable):
    """The DAG numbers the broadcast template reads.

    Attributes:
        min_dtype_bits / max_dtype_bits: as in DagParams.
        buffer_num_nddma: ``GetBufferNum<true, true>`` (one-dim and NDDMA schedules).
        buffer_num_ub_brc: ``GetBufferNum<false, true>`` (UB-broadcast schedule).
        source: provenance of the numbers.

    Every input of the DAGs here is loaded by a broadcast-capable copy-in (CopyInBrc) node, so the
    template's "no CopyInBrc node" branch is not modelled.
    """

    min_dtype_bits: int
    max_dtype_bits: int
    buffer_num_nddma: int
    buffer_num_ub_brc: int
    source: str

    @property
    def max_dtype_bytes(self) -> int:
        return self.max_dtype_bits // 8


def ub_split(dims: Sequence[int], max_elem: int) -> tuple[int, int, int, int, int]:
    """``GetBlockSplitFactor``: split the innermost dim whose running product overflows the buffer.

    Returns (ubSplitAxis, ubFormer, ubOuter, ubTail, fused outer product).
    """
    product, axis, fits = 1, 0, True
    for i in range(len(dims) - 1, -1, -1):
        product *= dims[i]
        if product > max_elem:
            product //= dims[i]
            axis, fits = i, False
            break
    if fits:
        product //= dims[0]
    ub_former = max_elem if len(dims) == 1 else max_elem // product
    ub_outer = ceil_div(dims[axis], ub_former)
    ub_tail = dims[axis] - (ub_outer - 1) * ub_former
    return axis, ub_former, ub_outer, ub_tail, ub_outer * math.prod(dims[:axis])


def dtype_size(dtype: DataType) -> int:
    return BITS[DataType(dtype)] // 8


def is_ub_broadcast(collapsed: Collapsed, in_dtypes: Sequence[DataType]) -> bool:
    """``IsUbBroadcast`` with the default kernel type (both allowed), as hicann/opbase ``439614c``
    has it (older versions differ: docs/tiling.md, what the sources do not settle, 5). Every input
    of these DAGs is a CopyInBrc input, a set that version fills before the choice.

    NDDMA unless some input broadcasts and one of: a non-last broadcast whose last dim is >= half
    the NDDMA data cache; the ">5 dims special case"; or a broadcast input of a UB-broadcast dtype
    whose output last dim fills whole 32-byte UB blocks.
    """
    brc = next((i for i, s in enumerate(collapsed.in_strides)
                if any(v == 0 and o != 0 for v, o in zip(s, collapsed.out_strides))), None)
    if brc is None:
        return False
    if _big_nlast_broadcast(collapsed, in_dtypes):
        return True
    size = dtype_size(in_dtypes[brc])
    if _special_dim_above_five(collapsed, size):
        return True
    return collapsed.out_dims[-1] % (BLOCK_BYTES // size) == 0 and in_dtypes[brc] in UB_BROADCAST_DTYPES


def _big_nlast_broadcast(collapsed: Collapsed, in_dtypes: Sequence[DataType]) -> bool:
    for dims, strides, dtype in zip(collapsed.in_dims, collapsed.in_strides, in_dtypes):
        if strides[-1] == 0:
            continue
        if any(s == 0 and o != 0 for s, o in zip(strides[:-1], collapsed.out_strides[:-1])):
            if dims[-1] * dtype_size(dtype) >= NDDMA_DCACHE_BYTES // 2:
                return True
    return False


def _special_dim_above_five(collapsed: Collapsed, size: int) -> bool:
    """``IsSpecialDimAboveFive``: >5 output dims (the 5th from the right at most 2), 2/4-byte data,
    at most 3 tensors, one tiny last-dim broadcast input and one input with a small inner block
    and an outer product in [32768, 65536]."""
    out = collapsed.out_dims
    if len(collapsed.in_dims) + 1 > 3 or size not in (2, 4) or len(out) <= 5 or out[len(out) - 5] > 2:
        return False
    tiny = big = False
    inner_start = len(out) - 5
    for dims, strides in zip(collapsed.in_dims, collapsed.in_strides):
        if strides[-1] == 0:
            if numel(dims) * size >= 512:
                return False
            tiny = True
        else:
            if 0 in strides:
                return False
            outer, inner = numel(dims[:inner_start]), numel(dims[inner_start:])
            if inner > 64 or not 32768 <= outer <= 65536:
                return False
            big = True
    return tiny and big


def broadcast_sch_mode(ub_broadcast: bool, shape_len: int, ub_split_axis: int) -> int:
    """``SetSchMode``: 100 + running rank (9 above 4) for UB broadcast; NDDMA 2 above 5 dims, else 1."""
    running = shape_len - ub_split_axis
    if ub_broadcast:
        return SCH_MODE_UB_BROADCAST + (UB_BRC_RANK_ABOVE_HIGH_PERF if running > HIGH_PERF_RANK else running)
    return SCH_MODE_NDDMA_LOOP_CACHE if running > MAX_NDDMA_DIM else SCH_MODE_NDDMA


def broadcast_tiling(op: str, collapsed: Collapsed, in_dtypes: Sequence[DataType], core_num: int, ub_size: int,
                     dag: BroadcastDagParams, scalars: Sequence[float] = ()) -> tuple[int, BroadcastBaseTilingData]:
    """``DoBroadcastOpTiling`` (contiguous inputs, more than one collapsed dim).

    Returns (schMode, tiling data).
    """
    ub_brc = is_ub_broadcast(collapsed, in_dtypes)
    buffers = dag.buffer_num_ub_brc if ub_brc else dag.buffer_num_nddma
    max_elem = ub_elements(op, ub_size, buffers, dag)
    axis, ub_former, ub_outer, ub_tail, fused = ub_split(collapsed.out_dims, max_elem)
    block_former = ceil_div(fused, core_num)
    block_num = ceil_div(fused, block_former)
    block_tail = fused - (block_num - 1) * block_former
    n = len(collapsed.out_dims)
    data = BroadcastBaseTilingData(
        0, n, axis, ub_former, ub_tail, ub_outer, block_former, block_tail, fused, max_elem, block_num,
        collapsed.out_dims, collapsed.out_strides,
        collapsed.in_dims, collapsed.in_strides,
        pack_scalars(*scalars, size=BROADCAST_SCALAR_BYTES))
    return broadcast_sch_mode(ub_brc, n, axis), data


def broadcast_launch(data: BroadcastBaseTilingData, sch_mode: int, collapsed: Collapsed, dag: BroadcastDagParams,
                     ub_size: int) -> Launch:
    """The general schedule's walk, as the tiling fields describe it: a fused index enumerates the
    dims before the split (outermost first) and then the ``ubOuter`` chunks of the split dim; a
    tile is one chunk of the split dim times every inner dim. (The kernel's exact enumeration
    order inside a core is not in the sources read; coverage does not depend on it.)"""
    ub_brc = SCH_MODE_UB_BROADCAST < sch_mode < SCH_MODE_ONE_DIM
    buffer_num = dag.buffer_num_ub_brc if ub_brc else dag.buffer_num_nddma
    dims, axis = collapsed.out_dims, data.ub_split_axis
    outer_dims = dims[:axis] + (data.ub_outer,)
    blocks = []
    for b in range(data.block_num):
        count = data.block_tail if b == data.block_num - 1 else data.block_former
        tiles = []
        for fused in range(b * data.block_former, b * data.block_former + count):
            *outer, chunk = _unravel(fused, outer_dims)
            start = chunk * data.ub_former
            stop = min(start + data.ub_former, dims[axis])
            tiles.append(tuple((i, i + 1) for i in outer) + ((start, stop),) + tuple((0, d) for d in dims[axis + 1:]))
        blocks.append(tuple(tiles))
    in_numel = tuple(numel(d) for d in collapsed.in_dims)
    return Launch(dims, collapsed.in_strides, in_numel, numel(dims), tuple(blocks), data.elem_num, 2,
                  buffer_num * data.elem_num * dag.max_dtype_bytes, ub_size)


def _unravel(index: int, dims: Sequence[int]) -> list[int]:
    out = []
    for d in reversed(dims):
        index, r = divmod(index, d)
        out.append(r)
    return out[::-1]
