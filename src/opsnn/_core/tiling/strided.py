"""The broadcast template's schedule choice for strided (non-contiguous) inputs: 301-305.

Sources (facts only): BASE:pkg_inc/op_common/atvoss/broadcast/broadcast_tiling.h
(isBroadcastTemplateNonContiguousSupport, DoNonContiguousBroadcastOpTiling). The field formulas of
these schedules (broadcast_tiling_noncontiguous.cpp) were not read; only the choice is modelled.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..dtypes import DataType
from ..shape import numel
from .base import Printable, max_elem_num
from .broadcast import (CACHE_LINE, MAX_NDDMA_DIM, BroadcastDagParams, Collapsed, dtype_size, is_ub_broadcast,
                        ub_split)

SCH_MODE_NC_NLAST_TRANSPOSE_NDDMA = 301
SCH_MODE_NC_NLAST_TRANSPOSE_UB_BRC = 302
SCH_MODE_NC_LAST_TRANSPOSE = 303
SCH_MODE_NC_NDDMA = 304
SCH_MODE_NC_NDDMA_LOOP_CACHE = 305
SINGLE_CORE_SIZE_LIMIT = 8 * 1024  # bytes per core: a small strided input still counts as "NLast"


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
        limit = CACHE_LINE // dtype_size(dtype)
        nlast = ((dims[-1] >= limit and strides[-1] == 1)
                 or (len(dims) > 1 and dims[-1] < limit and strides[-2] > limit)
                 or (dims[-1] < limit and numel(shape) * dtype_size(dtype) <= SINGLE_CORE_SIZE_LIMIT * core_num))
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
    axis = ub_split(collapsed.out_dims, max_elem_num(ub_size, buffers, dag.max_dtype_bits, dag.min_dtype_bits))[0]
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
