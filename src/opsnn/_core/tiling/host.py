"""The host plan: how the compiled CPU kernels split a tensor over worker threads."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from .base import Printable, ceil_div, index_int, round_up

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

    Tiles hold ``tile_bytes`` (rounded down to whole cache lines, at least one line); there are
    no more blocks than tiles' worth of elements (``ceil(numel / tile)``), so small tensors use
    fewer threads. Block starts are whole cache lines of elements (on 64-byte boundaries for
    itemsizes that divide 64: every aclDataType's). Pure and O(1); ValueError for arguments that
    are no ints (a bool included) or out of range.
    """
    try:  # ints (NumPy's too); a float thread count split nothing sensible, nor a bool (an int to index())
        numel, itemsize_bytes, n_threads, tile_bytes = map(index_int, (numel, itemsize_bytes, n_threads, tile_bytes))
    except TypeError:
        raise ValueError(f"plan_host takes ints, got numel={numel!r}, itemsize_bytes={itemsize_bytes!r}, "
                         f"n_threads={n_threads!r}, tile_bytes={tile_bytes!r}") from None
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
