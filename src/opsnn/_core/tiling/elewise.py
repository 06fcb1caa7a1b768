"""The arch35 elementwise template: ``DoTiling`` into ``EleBaseTilingData`` and ``DoTiling24B``.

Sources (facts only): BASE:src/op_common/atvoss/elewise/elewise_tiling.cpp (ElewiseTiling,
IsSameElewiseShape), BASE:pkg_inc/op_common/atvoss/elewise/elewise_tiling.h (GetShapeInfo),
elewise_base_struct.h (the structs), elewise_sch.h and elewise_sch_16b.h (how the kernels walk it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..shape import numel
from .base import (DagParams, Launch, Printable, TilingError, ceil_div, pack_scalars, require_int64, round_up,
                   tile_runs, ub_elements)

MIN_TILING_BITS_PER_CORE = 32768  # 4 KiB of the smallest dtype per core (elewise_tiling.cpp)
BLOCK_ALIGN = 512                  # blockFormer granularity, elements (CACHE_LINE_BYTE_LENGTH)
DEFAULT_SCHEMODE = 1
ELEWISE_SCALAR_BYTES_24B = 8


def same_elewise_shape(a: Sequence[int], b: Sequence[int]) -> bool:
    """opbase ``IsSameElewiseShape``: equal dims, or either side is 0-d or has one element."""
    if len(a) == 0 or len(b) == 0 or numel(a) == 1 or numel(b) == 1:
        return True
    return tuple(a) == tuple(b)


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


def elementwise_tiling(op: str, shape: Sequence[int], in_shapes: Sequence[Sequence[int]], core_num: int,
                       ub_size: int, dag: DagParams) -> EleBaseTilingData:
    """``ElewiseBaseTiling::DoTiling`` into ``EleBaseTilingData`` for the output storage ``shape``.

    Every input storage shape must equal it or hold one element (``IsSameElewiseShape``).
    coreNum = min(cores, ceil(dim0 * minDtypeBits / 32768)); blocks of whole 512-element units;
    ubFormer = the UB divided among ``buffer_num`` buffers of the largest dtype, rounded down to
    256 bytes of the smallest. Raises TilingError for a mismatched input, a 0 dim, no cores, a bit
    count the C code's int64 cannot hold, or a UB too small for one repeat.
    """
    for i, in_shape in enumerate(in_shapes):
        if not same_elewise_shape(shape, in_shape):
            raise TilingError(op, f"input {i} shape {list(in_shape)} is not the output shape {list(shape)}")
    if any(d == 0 for d in shape):
        raise TilingError(op, f"elementwise tiling needs every dim > 0, got {list(shape)}")
    if core_num <= 0:
        raise TilingError(op, "core num can not be 0")
    dim0 = numel(shape)
    # wrapped, this sum gives a core count <= 0 (a division by zero follows)
    require_int64(op, dim0 * dag.min_dtype_bits + MIN_TILING_BITS_PER_CORE - 1,
                  f"{dim0} elements of {dag.min_dtype_bits} bits",
                  f"the bit count (dim0 * minDtypeBits + {MIN_TILING_BITS_PER_CORE - 1})", "ElewiseTiling")
    cores = min(core_num, ceil_div(dim0 * dag.min_dtype_bits, MIN_TILING_BITS_PER_CORE))
    ub_former = ub_elements(op, ub_size, dag.buffer_num, dag)
    s = elewise_split(dim0, cores, ub_former)
    return EleBaseTilingData(dim0, cores, ub_former, s.block_former, s.block_num, s.ub_loop_of_former_block,
                             s.ub_loop_of_tail_block, s.ub_tail_of_former_block, s.ub_tail_of_tail_block,
                             ub_former, DEFAULT_SCHEMODE)


def elementwise_tiling_24b(op: str, shape: Sequence[int], in_shapes: Sequence[Sequence[int]], core_num: int,
                           ub_size: int, dag: DagParams, scalars: Sequence[float] = ()) -> EleBaseTilingData24B:
    """``DoTiling24B``: the same computation, kept as dim0/coreNum/ubFormer plus float scalars."""
    full = elementwise_tiling(op, shape, in_shapes, core_num, ub_size, dag)
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
