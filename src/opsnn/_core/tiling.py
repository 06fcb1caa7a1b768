"""Tiling templates as pure functions: opbase's atvoss elementwise and broadcast tilings, and the host plan.

Everything here is operator-agnostic: an operator supplies its DAG numbers (``DagParams``) and checks,
and gets back a frozen, printable tiling-data dataclass whose ``to_dict()`` keys are the CANN struct
field names. Units: element counts unless a name ends in ``_bytes`` or ``_bits``.

Sources (facts only, paraphrased; spec §7.3):
  BASE:src/op_common/atvoss/elewise/elewise_tiling.cpp          ElewiseTiling, IsSameElewiseShape
  BASE:pkg_inc/op_common/atvoss/elewise/elewise_base_struct.h   EleBaseTilingData, ...24B
  BASE:pkg_inc/op_common/atvoss/elewise/elewise_sch*.h          how the kernels walk it
  BASE:src/op_common/atvoss/broadcast/broadcast_tiling*.cpp      DimensionCollapse, DoBrodcastTiling
  BASE:pkg_inc/op_common/atvoss/broadcast/broadcast_tiling*.h    BroadcastBaseTiling::DoTiling, one-dim
  BASE:pkg_inc/op_common/atvoss/broadcast/broadcast_sch_one_dim.h  how the one-dim kernel walks it
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Iterator, Sequence

import numpy as np

from .dtypes import BITS, DataType
from .status import AclnnError, Status

# ---- errors and small helpers ---------------------------------------------------------------


class TilingError(AclnnError):
    """A tiling function refused its inputs (GRAPH_FAILED in ops-nn).

    At the aclnn boundary such a failure surfaces as 561103 (ACLNN_ERR_INNER_NULLPTR, spec §10:
    the l0 op fails to join the launch list).
    """

    def __init__(self, op: str, reason: str):
        super().__init__(Status.ERR_INNER_NULLPTR, f"{op} tiling failed: {reason}")
        self.op = op
        self.reason = reason


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    return ceil_div(a, b) * b


def numel(shape: Sequence[int]) -> int:
    """Element count; a 0-d shape counts as one element."""
    return math.prod(shape)


def ensure_not_scalar(shape: Sequence[int]) -> tuple[int, ...]:
    """opbase ``EnsureNotScalar``: a 0-d shape is treated as ``[1]``."""
    return tuple(shape) if len(shape) else (1,)


def to_float32(value: float) -> float:
    """The float attr as the tiling stores it: rounded to float32, +-inf when out of range."""
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def pack_scalars(*values: float, size: int) -> bytes:
    """``SetScalar<float>`` calls in order: float32 values packed from offset 0, zero padded."""
    with np.errstate(over="ignore"):
        data = np.array(values, dtype="<f4").tobytes()
    return data + bytes(size - len(data))


def tpl_tiling_key(*fields: tuple[int, int]) -> int:
    """``GET_TPL_TILING_KEY``: each (value, bit width) field packed from the low bits up, in order.

    The value itself is encoded (not its index in the declared list). This reproduces the one
    asserted key (HardtanhGrad schMode 1 in 1 bit, dType 1 -> 3; spec §7.3).
    """
    key, shift = 0, 0
    for value, bits in fields:
        key |= value << shift
        shift += bits
    return key


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _plain(value):
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


class Printable:
    """Mixin for frozen dataclasses: ``to_dict()`` with CANN (camelCase) keys, JSON-ready values.

    Fields declared with ``repr=False`` are internal and left out.
    """

    def to_dict(self) -> dict:
        return {_camel(f.name): _plain(getattr(self, f.name))
                for f in dataclasses.fields(self) if f.repr}  # type: ignore[arg-type]

    def field_lines(self) -> list[str]:
        """``name = value`` lines, nested structs flattened with dots (``baseTiling.dim0 = 8192``)."""
        return [f"{key} = {value}" for key, value in flatten(self.to_dict())]


def flatten(mapping: dict, prefix: str = "") -> Iterator[tuple[str, object]]:
    """Depth-first (dotted key, leaf value) pairs of a nested dict."""
    for key, value in mapping.items():
        if isinstance(value, dict):
            yield from flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


# ---- DAG numbers and the device walk ---------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DagParams(Printable):
    """What a kernel DAG tells the templates (atvoss ``DAGSch``, computed at compile time).

    Attributes:
        min_dtype_bits: smallest node dtype in bits (``MinDtypeBytes * 8``): sets the alignment.
        max_dtype_bits: largest node dtype in bits (``MaxDtypeBytes * 8``): sets the buffer size.
        buffer_num: live UB buffers, ping-pong copies included (``BufferNum`` /
            ``GetBufferNum<nddma, cacheBrc>``): the UB is divided among them.
        source: where the numbers come from ("UT-anchored", "spec", "derived ...").
    """

    min_dtype_bits: int
    max_dtype_bits: int
    buffer_num: int
    source: str

    @property
    def max_dtype_bytes(self) -> int:
        return self.max_dtype_bits // 8


Box = tuple[tuple[int, int], ...]  # per output dim of a Launch: [start, stop) in elements


@dataclasses.dataclass(frozen=True)
class Launch(Printable):
    """How the device kernel walks a tiling: per block (core), its tiles in processing order.

    Attributes:
        out_dims: the (collapsed) output dims the tile boxes index, in elements.
        in_strides: per kernel input, its element strides over ``out_dims`` (0 on a broadcast dim).
        in_numel / out_numel: elements the tensors really hold; a box may reach past them (a
            finding the simulator reports, e.g. the 910B kernel's padded length).
        blocks: per block, its tiles; a tile is a box of [start, stop) per output dim.
        buffer_elems: elements one UB buffer holds; every tile must fit.
        buffer_num: pipeline depth: 1 = single-buffered, 2 = ping-pong (double-buffered).
        ub_alloc_bytes: UB bytes the kernel allocates per core; ub_size: UB bytes per core.
    """

    out_dims: tuple[int, ...]
    in_strides: tuple[tuple[int, ...], ...]
    in_numel: tuple[int, ...]
    out_numel: int
    blocks: tuple[tuple[Box, ...], ...] = dataclasses.field(repr=False)
    buffer_elems: int
    buffer_num: int
    ub_alloc_bytes: int
    ub_size: int

    @property
    def tile_count(self) -> int:
        return sum(len(tiles) for tiles in self.blocks)


def tile_runs(start: int, former: int, count: int, tail: int) -> tuple[Box, ...]:
    """``count`` 1-D tiles from ``start``: ``former`` elements each, the last one ``tail``."""
    last = start + (count - 1) * former
    return tuple(((start + i * former, start + (i + 1) * former),) for i in range(count - 1)) + (((last, last + tail),),)


# ---- elementwise template (arch35) ------------------------------------------------------------

MIN_TILING_BITS_PER_CORE = 32768  # 4 KiB of the smallest dtype per core (elewise_tiling.cpp)
BLOCK_ALIGN = 512                  # blockFormer granularity, elements (CACHE_LINE_BYTE_LENGTH)
REPEAT_BYTES = 256                 # ubFormer granularity: one vector repeat of the smallest dtype
DEFAULT_SCHEMODE = 1
DEFAULT_TILING_WORKSPACE_SIZE = 16 * 1024 * 1024  # bytes, every arch35 tiling here
ELEWISE_SCALAR_BYTES_24B = 8


def same_elewise_shape(a: Sequence[int], b: Sequence[int]) -> bool:
    """opbase ``IsSameElewiseShape``: equal dims, or either side is 0-d or has one element."""
    if len(a) == 0 or len(b) == 0 or numel(a) == 1 or numel(b) == 1:
        return True
    return tuple(a) == tuple(b)


def max_elem_num(ub_size: int, buffer_num: int, max_dtype_bits: int, min_dtype_bits: int) -> int:
    """Elements per UB buffer: the UB bits shared by ``buffer_num`` buffers of the largest dtype,
    rounded down to one vector repeat of the smallest (``GetMaxElemNum`` /
    ``BroadcastGetMaxElemNum``; the ops here reserve no extra UB size or buffers)."""
    elems = ub_size * 8 // (buffer_num * max_dtype_bits)
    align = REPEAT_BYTES * 8 // min_dtype_bits
    return elems // align * align


@dataclasses.dataclass(frozen=True)
class ElewiseSplit:
    """Block and UB split of ``dim0`` elements (the kernel side recomputes it for the 16B/24B structs)."""

    block_former: int
    block_num: int
    block_tail: int
    ub_loop_of_former_block: int
    ub_loop_of_tail_block: int
    ub_tail_of_former_block: int
    ub_tail_of_tail_block: int


def elewise_split(dim0: int, core_num: int, ub_former: int) -> ElewiseSplit:
    """Blocks of ``roundUp(ceil(dim0/coreNum), 512)`` elements, each walked in ``ub_former`` tiles."""
    block_former = round_up(ceil_div(dim0, core_num), BLOCK_ALIGN)
    block_num = ceil_div(dim0, block_former)
    block_tail = dim0 - (block_num - 1) * block_former
    loops_former = ceil_div(block_former, ub_former)
    loops_tail = ceil_div(block_tail, ub_former)
    return ElewiseSplit(block_former, block_num, block_tail, loops_former, loops_tail,
                        block_former - (loops_former - 1) * ub_former,
                        block_tail - (loops_tail - 1) * ub_former)


@dataclasses.dataclass(frozen=True)
class EleBaseTilingData(Printable):
    """``EleBaseTilingData`` (elewise_base_struct.h): dim0 i64, coreNum i32, ubFormer i32, then i64s.

    Element counts except ``core_num`` (cores used) and ``sche_mode``. ``elem_num`` is the UB
    buffer capacity (equal to ``ub_former``).
    """

    dim0: int
    core_num: int
    ub_former: int
    block_former: int
    block_num: int
    ub_loop_of_former_block: int
    ub_loop_of_tail_block: int
    ub_tail_of_former_block: int
    ub_tail_of_tail_block: int
    elem_num: int
    sche_mode: int


@dataclasses.dataclass(frozen=True)
class EleBaseTilingData24B(Printable):
    """``EleBaseTilingData24B``: dim0 i64, coreNum i32, ubFormer i32, scalarData[8].

    The kernel recomputes the block split from these three numbers (``elewise_split``);
    ``block_num`` (the launch's blockDim) is not part of the struct.
    """

    dim0: int
    core_num: int
    ub_former: int
    scalar_data: bytes

    @property
    def block_num(self) -> int:
        return elewise_split(self.dim0, self.core_num, self.ub_former).block_num


def elementwise_tiling(op: str, shape: Sequence[int], core_num: int, ub_size: int,
                       dag: DagParams) -> EleBaseTilingData:
    """``ElewiseBaseTiling::DoTiling`` into ``EleBaseTilingData`` for the output storage shape.

    coreNum = min(cores, ceil(dim0 * minDtypeBits / 32768)); blocks of whole 512-element units;
    ubFormer = the UB divided among ``buffer_num`` buffers of the largest dtype, rounded down to
    256 bytes of the smallest. Raises TilingError for a 0 dim, no cores, or a UB too small for one
    repeat.
    """
    if any(d == 0 for d in shape):
        raise TilingError(op, f"elementwise tiling needs every dim > 0, got {list(shape)}")
    if core_num <= 0:
        raise TilingError(op, "core num can not be 0")
    dim0 = numel(shape)
    cores = min(core_num, ceil_div(dim0 * dag.min_dtype_bits, MIN_TILING_BITS_PER_CORE))
    ub_former = max_elem_num(ub_size, dag.buffer_num, dag.max_dtype_bits, dag.min_dtype_bits)
    if ub_former == 0:
        raise TilingError(op, f"UB of {ub_size} B cannot hold one repeat for {dag.buffer_num} buffers")
    s = elewise_split(dim0, cores, ub_former)
    return EleBaseTilingData(dim0, cores, ub_former, s.block_former, s.block_num, s.ub_loop_of_former_block,
                             s.ub_loop_of_tail_block, s.ub_tail_of_former_block, s.ub_tail_of_tail_block,
                             ub_former, DEFAULT_SCHEMODE)


def elementwise_tiling_24b(op: str, shape: Sequence[int], core_num: int, ub_size: int, dag: DagParams,
                           scalars: Sequence[float] = ()) -> EleBaseTilingData24B:
    """``DoTiling24B``: the same computation, kept as dim0/coreNum/ubFormer plus float scalars."""
    full = elementwise_tiling(op, shape, core_num, ub_size, dag)
    return EleBaseTilingData24B(full.dim0, full.core_num, full.ub_former,
                                pack_scalars(*scalars, size=ELEWISE_SCALAR_BYTES_24B))


def elementwise_launch(data: EleBaseTilingData | EleBaseTilingData24B, dag: DagParams, ub_size: int,
                       n_inputs: int) -> Launch:
    """The arch35 elementwise kernels' walk (elewise_sch.h, elewise_sch_16b.h): block ``b`` starts at
    ``b * blockFormer``; it runs ``loops - 1`` tiles of ``ubFormer`` and one tail tile, ping-ponging
    (``i & 1``) between two buffer sets carved from ``BufferNum * ubFormer * MaxDtypeBytes`` of UB."""
    s = elewise_split(data.dim0, data.core_num, data.ub_former)
    blocks = []
    for b in range(s.block_num):
        last = b == s.block_num - 1
        loops = s.ub_loop_of_tail_block if last else s.ub_loop_of_former_block
        tail = s.ub_tail_of_tail_block if last else s.ub_tail_of_former_block
        blocks.append(tile_runs(b * s.block_former, data.ub_former, loops, tail))
    return Launch((data.dim0,), ((1,),) * n_inputs, (data.dim0,) * n_inputs, data.dim0, tuple(blocks),
                  data.ub_former, 2, dag.buffer_num * data.ub_former * dag.max_dtype_bytes, ub_size)


# ---- broadcast template (arch35) --------------------------------------------------------------

SCH_MODE_NDDMA = 1                 # NDDMA without loop cache
SCH_MODE_NDDMA_LOOP_CACHE = 2      # NDDMA with loop cache (more than 5 dims under the UB split)
SCH_MODE_UB_BROADCAST = 100        # + running rank (101-104), 109 when that rank exceeds 4
SCH_MODE_ONE_DIM = 201
SCH_MODE_NC_NLAST_TRANSPOSE_NDDMA = 301
SCH_MODE_NC_NLAST_TRANSPOSE_UB_BRC = 302
SCH_MODE_NC_LAST_TRANSPOSE = 303
SCH_MODE_NC_NDDMA = 304
SCH_MODE_NC_NDDMA_LOOP_CACHE = 305
MAX_NDDMA_DIM = 5
HIGH_PERF_RANK = 4
UB_BRC_RANK_ABOVE_HIGH_PERF = 9
BROADCAST_MAX_DIMS = 8
BROADCAST_SCALAR_BYTES = 16
CACHE_LINE = 128                   # bytes: one-dim ubFormer granularity
PER_CORE_MIN_UB_BYTES = 8 * 1024   # one-dim: never shrink a tile below this (all buffers together)
BLOCK_BYTES = 32                   # UB block: the UB-broadcast kernel wants the last dim in whole blocks
SINGLE_CORE_SIZE_LIMIT = 8 * 1024
# NDDMA data-cache bytes. Not a documented platform value: the source's own comment says the
# "big non-last broadcast" test fires at 4096 B of last dim, i.e. half of this.
NDDMA_DCACHE_BYTES = 8192
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


def _contiguous_strides(dims: Sequence[int]) -> list[int]:
    strides, step = [], 1
    for d in reversed(dims):
        strides.append(step)
        step *= d
    return strides[::-1]


def is_contiguous_view(shape: Sequence[int], strides: Sequence[int] | None) -> bool:
    """``IsTensorContiguous``: from the last dim, size-1 dims skipped, strides follow the running product."""
    if not strides:
        return True
    expected = 1
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim == 1:
            continue
        if stride != expected:
            return False
        expected *= dim
    return True


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
        st = _contiguous_strides(dims) if s is None else collapse_strides(s)
        st = [0 if d == 1 and o != 1 else v for d, o, v in zip(dims, out_dims, st)]
        in_dims.append(tuple(dims))
        in_str.append(tuple(st))
    if len(out_dims) > BROADCAST_MAX_DIMS:
        raise TilingError(op, f"broadcast supports at most {BROADCAST_MAX_DIMS} collapsed dims, got {len(out_dims)}")
    return Collapsed(tuple(in_dims), tuple(in_str), tuple(out_dims), tuple(_contiguous_strides(out_dims)))


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

    @property
    def ub_outer(self) -> int:
        return (self.block_num - 1) * self.block_former + self.block_tail


def _one_dim_split(length: int, ub_former: int, core_num: int) -> tuple[int, int, int, int, int]:
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
    cores, but never below 8 KiB of buffers.
    """
    length = collapsed.out_dims[0]
    scalar_flag = sum(1 << i for i, dims in enumerate(collapsed.in_dims) if dims[0] == 1)
    alive_num, max_dtype_bytes = dag.buffer_num_nddma, dag.max_dtype_bytes
    ub_former = ub_size // alive_num // CACHE_LINE * CACHE_LINE // max_dtype_bytes
    if ub_former == 0:
        raise TilingError(op, f"UB of {ub_size} B cannot hold a 128-byte line for {alive_num} buffers")
    split = _one_dim_split(length, ub_former, core_num)
    block_num = split[4]
    if block_num < core_num // 2 and ub_former * max_dtype_bytes * alive_num > PER_CORE_MIN_UB_BYTES:
        per_core = length * 2 // core_num
        aligned = round_up(per_core * max_dtype_bytes, CACHE_LINE) // max_dtype_bytes
        lowest = PER_CORE_MIN_UB_BYTES // alive_num // CACHE_LINE * CACHE_LINE // max_dtype_bytes
        split = _one_dim_split(length, max(min(ub_former, aligned), lowest), core_num)
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


def _ub_split(dims: Sequence[int], max_elem: int) -> tuple[int, int, int, int, int]:
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


def _size(dtype: DataType) -> int:
    return BITS[DataType(dtype)] // 8


def is_ub_broadcast(collapsed: Collapsed, in_dtypes: Sequence[DataType]) -> bool:
    """``IsUbBroadcast`` with the default kernel type (both allowed).

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
    size = _size(in_dtypes[brc])
    if _special_dim_above_five(collapsed, size):
        return True
    return collapsed.out_dims[-1] % (BLOCK_BYTES // size) == 0 and in_dtypes[brc] in UB_BROADCAST_DTYPES


def _big_nlast_broadcast(collapsed: Collapsed, in_dtypes: Sequence[DataType]) -> bool:
    for dims, strides, dtype in zip(collapsed.in_dims, collapsed.in_strides, in_dtypes):
        if strides[-1] == 0:
            continue
        if any(s == 0 and o != 0 for s, o in zip(strides[:-1], collapsed.out_strides[:-1])):
            if dims[-1] * _size(dtype) >= NDDMA_DCACHE_BYTES // 2:
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
    max_elem = max_elem_num(ub_size, buffers, dag.max_dtype_bits, dag.min_dtype_bits)
    if max_elem == 0:
        raise TilingError(op, f"UB of {ub_size} B cannot hold one repeat for {buffers} buffers")
    axis, ub_former, ub_outer, ub_tail, fused = _ub_split(collapsed.out_dims, max_elem)
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


@dataclasses.dataclass(frozen=True)
class NonContiguousSchedule(Printable):
    """The schedule ``DoNonContiguousBroadcastOpTiling`` picks for strided inputs (301-305).

    Only the choice is reproduced: the field formulas of these schedules live in files not read
    (broadcast_tiling_noncontiguous.cpp); ``settled`` says whether the choice itself is exact.
    """

    sch_mode: int
    reason: str
    settled: bool
    collapsed_out_dims: tuple[int, ...]
    collapsed_in_strides: tuple[tuple[int, ...], ...]


def noncontiguous_schedule(collapsed: Collapsed, contiguous_inputs: Sequence[bool], in_shapes: Sequence[Sequence[int]],
                           in_dtypes: Sequence[DataType], core_num: int, ub_size: int,
                           dag: BroadcastDagParams) -> NonContiguousSchedule:
    """``isBroadcastTemplateNonContiguousSupport`` and the 301/302/303 vs 304/305 choice.

    303: some input transposes its last two dims (rank <= 3) with enough rows for half the cores;
    301/302: every strided input reads its last dim densely (NLast transpose), 302 when the
    UB-broadcast test holds and no input broadcasts its last dim; otherwise the fallback 304,
    305 when more than 5 dims remain under the UB split.
    """
    last_transpose = False
    last_dense = True
    last_brc = False
    max_parallel = 0
    supported = True
    for dims, strides, shape, contiguous, dtype in zip(collapsed.in_dims, collapsed.in_strides, in_shapes,
                                                        contiguous_inputs, in_dtypes):
        if contiguous:
            last_brc |= strides[-1] == 0
            continue
        if any(d != 1 and s == 0 for d, s in zip(dims, strides)):
            supported = False  # an implicit broadcast_to view
            break
        last_dense &= strides[-1] <= 1
        last_brc |= strides[-1] == 0
        if len(dims) > 4:
            supported = False
            break
        if len(dims) <= 3 and _last_two_transposed(dims, strides):
            parallel = dims[-2] * numel(dims[:-2])
            max_parallel = max(max_parallel, parallel)
            last_transpose = True
            continue
        limit = CACHE_LINE // _size(dtype)
        nlast = ((dims[-1] >= limit and strides[-1] == 1)
                 or (len(dims) > 1 and dims[-1] < limit and strides[-2] > limit)
                 or (dims[-1] < limit and numel(shape) * _size(dtype) <= SINGLE_CORE_SIZE_LIMIT * core_num))
        if not nlast:
            supported = False
            break
    if supported and not last_transpose and not last_dense:
        supported = False
    if supported and last_transpose and max_parallel < core_num // 2:
        supported, last_transpose = False, False
    if supported and last_transpose:
        return NonContiguousSchedule(SCH_MODE_NC_LAST_TRANSPOSE, "last two dims transposed", True,
                                     collapsed.out_dims, collapsed.in_strides)
    if supported:
        ub = False if last_brc else is_ub_broadcast(collapsed, in_dtypes)
        mode = SCH_MODE_NC_NLAST_TRANSPOSE_UB_BRC if ub else SCH_MODE_NC_NLAST_TRANSPOSE_NDDMA
        return NonContiguousSchedule(mode, "strided inputs read their last dim densely", True,
                                     collapsed.out_dims, collapsed.in_strides)
    rank = len(collapsed.out_dims)
    if rank <= MAX_NDDMA_DIM:
        return NonContiguousSchedule(SCH_MODE_NC_NDDMA, "fallback; at most 5 dims", True,
                                     collapsed.out_dims, collapsed.in_strides)
    # Above 5 dims the choice depends on the fallback's own UB split, which is not in the
    # sources read; the contiguous split stands in for it.
    buffers = dag.buffer_num_ub_brc if is_ub_broadcast(collapsed, in_dtypes) else dag.buffer_num_nddma
    axis = _ub_split(collapsed.out_dims, max_elem_num(ub_size, buffers, dag.max_dtype_bits, dag.min_dtype_bits))[0]
    mode = SCH_MODE_NC_NDDMA_LOOP_CACHE if rank - axis > MAX_NDDMA_DIM else SCH_MODE_NC_NDDMA
    return NonContiguousSchedule(mode, "fallback; UB split assumed to be the contiguous one", False,
                                 collapsed.out_dims, collapsed.in_strides)


def _last_two_transposed(dims: Sequence[int], strides: Sequence[int]) -> bool:
    """Only the last two dims swapped: stride[-1] == dims[-2], stride[-2] == 1, outer dims dense."""
    if len(dims) < 2:
        return False
    if not (strides[-1] == dims[-2] and strides[-2] == 1):
        return False
    expected = dims[-1] * dims[-2]
    for i in range(len(dims) - 3, -1, -1):
        if strides[i] != expected:
            return False
        expected *= dims[i]
    return True


# ---- host plan (CPU threads) ------------------------------------------------------------------

CACHE_LINE_BYTES = 64
DEFAULT_TILE_BYTES = 16 * 1024  # per operand; three operands (two inputs, one output) stay in L1/L2


@dataclasses.dataclass(frozen=True)
class HostPlan(Printable):
    """How a compiled CPU kernel splits ``numel`` elements: one block per worker thread, each walked
    in cache-sized tiles. Block and tile starts fall on 64-byte cache lines (no false sharing).

    Attributes (elements unless noted):
        numel: elements in all; itemsize: bytes per element.
        n_blocks: blocks, at most one per thread and never more than there are tiles.
        block_former: elements of every block but the last; block_tail: of the last block.
        tile: elements per tile (a block's last tile may be shorter).
    Blocks cover ``[0, numel)`` exactly once, in order.
    """

    numel: int
    itemsize: int
    n_blocks: int
    block_former: int
    block_tail: int
    tile: int

    def block(self, b: int) -> tuple[int, int]:
        """[start, stop) of block ``b``."""
        start = b * self.block_former
        return start, start + (self.block_tail if b == self.n_blocks - 1 else self.block_former)

    def tiles(self, b: int) -> Iterator[tuple[int, int]]:
        """[start, stop) of each tile of block ``b``, in order."""
        start, stop = self.block(b)
        for s in range(start, stop, self.tile):
            yield s, min(s + self.tile, stop)


def plan_host(numel: int, itemsize_bytes: int, n_threads: int, tile_bytes: int = DEFAULT_TILE_BYTES) -> HostPlan:
    """Split ``numel`` elements of ``itemsize_bytes`` each over ``n_threads`` workers.

    Tiles hold ``tile_bytes`` (rounded down to whole cache lines, at least one line); a block is
    never smaller than a tile, so small tensors use fewer threads. Pure and O(1).
    """
    if numel < 0 or itemsize_bytes < 1 or n_threads < 1 or tile_bytes < 1:
        raise ValueError(f"plan_host needs numel >= 0 and positive sizes, got numel={numel}, "
                         f"itemsize_bytes={itemsize_bytes}, n_threads={n_threads}, tile_bytes={tile_bytes}")
    line = max(1, CACHE_LINE_BYTES // itemsize_bytes)
    tile = max(line, tile_bytes // itemsize_bytes // line * line)
    if numel == 0:
        return HostPlan(0, itemsize_bytes, 0, 0, 0, tile)
    wanted = min(n_threads, ceil_div(numel, tile))
    block_former = round_up(ceil_div(numel, wanted), line)
    n_blocks = ceil_div(numel, block_former)
    return HostPlan(numel, itemsize_bytes, n_blocks, block_former, numel - (n_blocks - 1) * block_former, tile)
