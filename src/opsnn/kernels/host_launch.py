"""How a compiled CPU kernel walks one elementwise launch: the operands' layout, collapsed, and
the host plan (``_core.tiling.plan_host``: one block per worker thread, cache-sized tiles).

Pure Python and NumPy-free in its decisions, so ``opsnn tiling`` can print it without numba. The
numba backend passes these numbers to its kernels and the kernels walk them exactly:

* ``flat``: every operand is dense in the output's order (or a single element). Blocks and tiles
  are ranges of the flat index.
* ``rows``: any broadcast or strided layout whose inner dim is read with stride 0 or 1 by every
  input (e.g. LeakyReluBackward grad (N, 1) with self (1, M)). The flat output range is split as
  for ``flat``, tiles cut to whole rows where they can be (``_whole_rows``); inside a tile the
  kernel runs along the inner dim, operands advancing by their element strides (0 on broadcast
  dims), so nothing is copied.
* ``panels``: some input reads the inner dim with a large stride and an outer dim with a smaller
  one (a transposed view, or in N-D any permutation that moves its unit-stride dim), and the
  output is larger than ``SMALL_BYTES`` (smaller ones take ``rows``, reading it in place). That
  outer dim becomes the walk's rows (second-last of ``dims``; the others keep the output's
  order). Work units are panels of ``tile_rows`` rows; blocks take whole panels, and each panel
  is walked in ``tile_rows x tile_cols`` tiles so both the strided and the dense operands stay
  in cache. Where a row is shorter than a tile's columns and the output continues it in the dim
  above (a (100, 100, 100) reversal: rows of 100 elements, 10 000 apart), a tile takes ``seg``
  consecutive slices of that dim side by side (``_segments``), so its rows are runs of
  ``seg * cols`` elements; beyond ``FAR_BYTES`` enough of them that a transposed input whose
  slices lie back to back is read in runs of ``PANEL_BYTES`` (``PANEL_BYTES_16BIT``) or more.
  Rows shorter than ``SHORT_ROW_BYTES`` that some operand does not hold back to back (a slice
  of a few channels) take ``panels`` too, those inputs gathered and such an out scattered row by
  row (``_short_rows``).
"""

from __future__ import annotations

import dataclasses
import math

from .._core.tiling import HostPlan, Printable, ceil_div, plan_host
from .._core.tiling.host import CACHE_LINE_BYTES, DEFAULT_TILE_BYTES

# Panels: a tile's rows span PANEL_BYTES of the gathered operand's unit-stride dim (each of its
# source rows is read in runs of that many bytes) and its columns PANEL_RUN_BYTES of the widest
# operand (the dense operands' rows are read and written in runs of that many bytes). Measured
# (2-vCPU AVX-512 Xeon VM, 2 threads, LeakyReluBackward with a transposed or axes-reversed self,
# float16/32/64, 1e5-1e8 elements, old and new alternating in separate processes): 128 B x 2 KiB
# against the earlier 256 B x 32 KiB tiles (64 x 128 float32, 128 x 128 float16), 1.1-1.4x
# faster at 1e7, 1.1-1.3x at 1e8, within the noise at 1e5-1e6. Short dense runs cost more than
# short gathered ones: the compute pass alone (grad read, out written, float32 1000 x 10000, one
# thread) took 1.4x as long with 512 B runs as with 2 KiB ones, presumably as each run restarts
# the hardware prefetcher on a new page.
PANEL_BYTES = 128
PANEL_RUN_BYTES = 2048
# Where the narrowest operand has 2-byte elements, tiles are twice as tall: 128 rows, 256 B of a
# 2-byte gathered row (a 16 x 16 block reads 32 B of each source row, half a line). Measured (the
# same VM, 2 threads, separate processes alternating, three rounds, LeakyReluBackward with a
# transposed / axes-reversed self): float16 1e8 47.5 -> 39.4 / 44.1 -> 41.8 ms, bfloat16 1e8
# 68.8 -> 37.4 / 42.3 -> 39.1 ms, 1e7 1.05-1.15x faster, 1e6 1.0-1.1x, 1e5 within the noise;
# float32 tiles of 64 rows were slower at 1e8 (76 -> 93 ms), and 32-row float64 ones at 1e7-1e8.
PANEL_BYTES_16BIT = 256
# Where every operand has 8-byte elements and the launch is not FAR_BYTES, tiles are 64 rows:
# 512 B of each gathered source row (8 lines) per visit, not 128 B. Measured on a Zen 3 EPYC VM
# (AVX2, L2 512 KiB; separate processes alternating, LeakyReluBackward, a transposed float64
# 1000 x 1000 self): one thread 1.65-1.98 -> 1.18-1.28 ms, two threads 0.93-1.29 -> 0.68-0.83
# ms; the 1e5 rows (100 x 1000) within the noise. Not beyond FAR_BYTES, where the Xeon VM ran
# taller float64 tiles slower (above); float32 moved within this VM's noise (0.26-0.63 ms).
PANEL_BYTES_64BIT = 512
# A panels launch of FAR_BYTES or more streams its operands from memory, past the last-level
# cache (the 32 MiB L3 of the EPYC VMs this was first tuned on). Its dense runs are then twice as
# long (here; its size counted as elements times the operands' itemsizes), and its gathers
# prefetch the next block's source rows (numba_backend, by the bytes its operands span). Long
# runs, measured (the same Xeon VM, 2 threads, the generated kernel called with either tile
# width in one process, seven rounds in shuffled order): float64 strided 1e8 0.88x the time,
# 1e7 0.96x; float32 strided 1e8 0.975x, 1e7 0.97x, permuted 1e8 0.955x, 1e7 0.91x; but float32
# strided 1e6 (12 MB) 1.12x. 2-byte operands, 0.98-1.03x with the 64-row tiles they had then,
# took them with their 128-row ones (separate processes alternating, three rounds): float16
# strided 1e8 38.2 -> 36.4 ms, bfloat16 1e8 and both at 1e7 within 2 %.
FAR_BYTES = 32 << 20
# Beyond FAR_BYTES, a row dim short enough for a tile of at most this many bytes (of the widest
# operand) is one panel: its gathered source rows, a few hundred bytes each, are then read whole
# by one tile. Cut into panels (100 float32 rows as 4 x 25), the cache lines a cut falls in were
# fetched from memory once per panel. Measured (separate processes alternating, 2 threads,
# (100, 1000, 1000) with self's axes reversed, whose gathered rows are 100 long, two rounds):
# float32 1e8 83.4-83.6 -> 73.7 ms, float64 1e8 161-163 -> 140-142 ms, float32 1e7 5.6-5.7 ->
# 5.0-5.1 ms, float64 1e7 1.03x the time (13.1 -> 13.5). Not beyond it: the strided
# float32/float64 1e5 rows (100 x 1000, in cache) took 1.1x as long with one 100-row panel on
# that VM; on the Zen 3 VM a float32 one ran faster (WHOLE_ROW_BYTES).
WHOLE_PANEL_BYTES = 512 << 10
# In cache, a float32 row dim of at most this many bytes is one panel too, where its panels would
# cut the source rows' cache lines (25 rows: 100 B) and one panel per thread remains: a (100,
# 100, 100) reversal's 400-byte source rows are then read whole by one tile, where each of four
# panels fetched the lines its cuts fall in again. Measured (Zen 3 EPYC VM, LeakyReluBackward /
# HardtanhBackward, the old and new rule alternating in separate processes, five rounds, medians,
# one thread and two): (100, 100, 100) reversed 1.18-1.21x faster, a transposed (100, 1000) 1.21-
# 1.24x on one thread, (40, 100, 100) reversed 1.11-1.17x, (100, 10, 1000) 1.04-1.07x, a transposed
# (50, 20000) 1.13-1.17x on one thread (on two it keeps its two panels); the shapes it leaves alone
# moved within 0.86-1.10x, the noise of those runs. Not where panels are whole lines (32 rows:
# (128, 50, 100) and an NHWC image of 64 channels measured 0.9-1.0x with one panel), and not for
# float16, whose 256-byte panels hold rows of up to 128 (200 rows as one panel: 0.7x in one series),
# nor float64 (rows up to 1 KiB as one panel: (100, 100, 100) reversed 1.01-1.13x, within noise).
WHOLE_ROW_BYTES = 512
# A tile of short rows side by side holds up to this many bytes of its widest operand. Measured
# (2-core EPYC, 1 thread, (100, 100, 100) and (10, 100, 100) reversals, slices of 8-256 KiB):
# float16/bfloat16 1.2-1.6x faster from 128 KiB up (rows of 100 elements each paid a vector
# loop's set-up and its 36-element scalar remainder, its NaN screen's reduction), float64 1.1x,
# float32 within 5 %.
SEGMENT_TILE_BYTES = 256 * 1024
# Beyond FAR_BYTES, slices side by side also lengthen the gathered runs (``_segments``' run),
# where a gathered input continues its source rows from one slice to the next. Measured (the
# Xeon VM, 2 threads, separate processes alternating, three or four rounds, a (100, 1000, 1000)
# reversal whose 2-byte source rows are 200 B): LeakyReluBackward float16 39-43 -> 32-35 ms,
# bfloat16 36-39 -> 34 ms, both at 1e7 (100, 100, 1000) within the noise; HardtanhBackward
# float16 33.4-34.7 -> 34.2-37.5 ms, bfloat16 34.4-37.5 -> 35.0-36.0 (its rows of the
# benchmark's sub-grid: within the noise). float32 source rows of 400 B gained nothing from 2-4
# slices (75 ms either way).
# Up to this many output bytes (at the widest itemsize) a transposed input is read in place by
# the rows walker, which allocates no scratch: ~0.06 us less for a 4-element call. Measured
# (2-core EPYC, f32/f16, square shapes): rows is as fast as panels up to 256 elements, 1.2x
# slower at 1024 and 1.6-2x at 4096 (one strided load per element).
SMALL_BYTES = 512


@dataclasses.dataclass(frozen=True)
class OperandLayout:
    """An operand over the collapsed output dims: element ``strides`` (0 = broadcast), the element
    ``offset`` of its first element from its lowest-addressed one, and the inner-dim ``mode``:
    ``c`` (stride 1), ``b`` (stride 0), ``r`` (stride -1: a reversed view, which the walkers read
    or write as a run backwards), ``e`` (stride 2, 2-byte elements), ``s`` (one element, flat
    walk) or ``g`` (any other; for the panels walker, an input it gathers into scratch or an out
    it scatters from scratch, which includes the short rows of ``_short_rows`` whatever their
    inner stride)."""

    strides: tuple[int, ...]
    offset: int
    mode: str


@dataclasses.dataclass(frozen=True)
class HostLaunch(Printable):
    """One launch on the host: ``walker`` (flat / rows / panels), the collapsed ``dims`` (the
    output's, outermost first), per operand (out first, then the kernel inputs) its layout, and
    the ``plan`` the blocks follow. ``tile_rows`` / ``tile_cols``: the 2-D tile of ``panels``;
    ``seg``: how many consecutive slices of the dim above the columns a tile holds side by side
    (then ``tile_cols`` is the whole row)."""

    walker: str
    dims: tuple[int, ...]
    operands: tuple[OperandLayout, ...]
    plan: HostPlan
    tile_rows: int = 0
    tile_cols: int = 0
    seg: int = 1

    @property
    def modes(self) -> str:
        return "".join(op.mode for op in self.operands)

    @property
    def gathered(self) -> tuple[bool, ...]:
        """Per kernel input, whether the walk copies it into a scratch tile first (the panels
        walker's gather of an operand read with a large inner stride)."""
        return tuple(self.walker == "panels" and op.mode == "g" for op in self.operands[1:])

    def describe(self) -> str:
        """One line (``opsnn tiling``'s host row): the walker, its dims, its blocks said as a
        reader takes them (one block holding the whole walk is "1 block of 4 elements (block
        size 32)": "1 block(s) of 32 elements (last 4)" had read as 32 elements, a breaker) and
        its tiles."""
        p = self.plan
        unit = "panel" if self.walker == "panels" else "element"

        def count(n: int) -> str:
            return f"{n} {unit}{'s' * (n != 1)}"

        if p.n_blocks != 1:
            blocks = f"{p.n_blocks} blocks of {count(p.block_former)} (last {p.block_tail})"
        else:
            blocks = f"1 block of {count(p.block_tail)}" + (
                f" (block size {p.block_former})" if p.block_former != p.block_tail else "")
        head = f"host launch: {self.walker} walk over dims {list(self.dims)}, {blocks}"
        if self.walker == "panels":
            head += f", tiles {self.tile_rows} x {self.tile_cols}"
            return head + (f" x {self.seg} slices of dim {len(self.dims) - 3}" if self.seg > 1 else "")
        return head + f", tiles of {p.tile} elements"


def collapse(out_shape, operands, order_by: int = 0):
    """Collapse dims for a set of operands over ``out_shape``.

    ``operands``: per operand (out first) its element strides aligned to ``out_shape`` (0 for a
    broadcast dim). Returns ``(dims, strides_per_operand)``: size-1 dims dropped, adjacent dims
    merged where every operand is dense across them, and the dims reordered so the strides of
    operand ``order_by`` decrease (``walk_order``; out's by default: a transposed ``out`` is
    walked in memory order). A 0-d or all-ones shape becomes ``(1,)``.
    """
    keep = [i for i, d in enumerate(out_shape) if d != 1]
    dims = [out_shape[i] for i in keep]
    strides = [[s[i] for i in keep] for s in operands]
    if not dims:
        return (1,), tuple((0,) for _ in operands)
    out_strides = strides[order_by]
    order = sorted(range(len(dims)), key=lambda i: -abs(out_strides[i]))
    if order != list(range(len(dims))):
        dims = [dims[i] for i in order]
        strides = [[s[i] for i in order] for s in strides]
    merged_dims = [dims[-1]]
    merged = [[s[-1]] for s in strides]
    for i in range(len(dims) - 2, -1, -1):
        inner = merged_dims[0]
        if all(s[i] == m[0] * inner for s, m in zip(strides, merged)):
            merged_dims[0] *= dims[i]
        else:
            merged_dims.insert(0, dims[i])
            for s, m in zip(strides, merged):
                m.insert(0, s[i])
    return tuple(merged_dims), tuple(tuple(m) for m in merged)


# Constant steps of 2-byte elements as modes of their own (``e`` every second element, ``t``
# every third, ``q`` every fourth): LLVM then reads whole vectors and picks the elements out
# (float16 [:, ::2] 3x faster than with the step as a run-time stride; steps of 3 and 4: see
# BENCHMARKS.md, Layouts, session 30). Not for 4-byte ones, whose gathers of a run-time stride
# were 3x faster than what LLVM made of the constant one.
STEP_MODES = {"e": 2, "t": 3, "q": 4}


def _mode(inner: int, item: int) -> str:
    """An operand's mode from its inner stride (elements) and itemsize (bytes)."""
    if inner in (1, 0, -1):
        return {1: "c", 0: "b", -1: "r"}[inner]
    if item == 2:
        return next((mode for mode, step in STEP_MODES.items() if step == inner), "g")
    return "g"


# An out scattered across the walk (``walk_order``) needs tiles this many elements on each side
# for the register transposes (half an AVX2 block of 2-byte elements, a whole one of 4-byte ones)
SCATTER_MIN_SIDE = 8


def walk_order(out_shape, operands, itemsizes) -> int:
    """Whose memory order the walk follows (``collapse``'s ``order_by``): out's (0), unless an
    input's order leaves fewer bytes per element to gather or scatter across it: where inputs
    share an order that out does not (a C-contiguous out of two transposed inputs, a
    Fortran-ordered out of C inputs), out's order gathers each of them through register
    transposes, theirs only scatters out (float32 1000 x 1000, one thread: 1.3-2.1 ms -> 0.36-0.40;
    BENCHMARKS.md, Layouts, session 30). An input broadcast along some dim is no candidate, and
    of equal costs out's order is kept."""
    return _walk(out_shape, operands, itemsizes)[0]


def _walk(out_shape, operands, itemsizes) -> tuple:
    """``(walk_order, dims, strides)``: the order chosen and ``collapse``'s result for it (each
    candidate order is collapsed once, and ``plan_launch`` walks the chosen one's dims)."""
    def gathered_bytes(k: int, dims, strides) -> int | None:  # an input gathered, an out not written along its rows
        out = strides[0]
        if k and _mode(out[-1], itemsizes[0]) == "g":
            # out scattered: by register transposes only where both sides of its tiles can be
            # SCATTER_MIN_SIDE; a few channels (NHWC from two NCHW inputs) scatter element by
            # element, slower than gathering the inputs by their constant-step loops (float32
            # (33333, 3) 88 -> 104 us, (3, 33333) 36 -> 55)
            unit = min(range(len(dims)), key=lambda d: abs(out[d]))
            if min(dims[-1], dims[unit]) < SCATTER_MIN_SIDE:
                return None
        return sum(item for j, (st, item) in enumerate(zip(strides, itemsizes))
                   if _mode(st[-1], item) == "g" or (j == 0 and st[-1] not in (1, -1)))

    dims, strides = collapse(out_shape, operands)
    best, least = (0, dims, strides), gathered_bytes(0, dims, strides)
    for k in range(1, len(operands)):
        if least == 0:
            break
        if all(st != 0 for st, d in zip(operands[k], out_shape) if d != 1):
            dims, strides = collapse(out_shape, operands, k)
            cost = gathered_bytes(k, dims, strides)
            if cost is not None and cost < least:
                best, least = (k, dims, strides), cost
    return best


def _offset(dims, strides) -> int:
    return sum((d - 1) * -s for d, s in zip(dims, strides) if s < 0)


def _panel_row_dim(layouts, itemsizes) -> int | None:
    """The dim the panels walker tiles as rows, or None for the rows walker: an outer dim that an
    operand read or written with a large inner stride (an input gathered, an out scattered) holds
    with a smaller one (a transposed view: in N-D, any permutation that moves its unit-stride dim
    off the last), the smallest such stride of the widest such operand (its gather moves the most
    bytes; of equal widths the first)."""
    best = None
    for k, lay in enumerate(layouts):
        if lay.mode != "g":  # out too, walked in an input's order (``walk_order``): scattered
            continue
        strides = lay.strides
        # not a dim it is broadcast along (nothing to gather); of equal strides the rightmost, so
        # a 2-D transpose keeps its dims in place
        read = [d for d in range(len(strides) - 1) if 0 < abs(strides[d]) < abs(strides[-1])]
        if read and (best is None or itemsizes[k] > best[0]):
            best = (itemsizes[k], min(read, key=lambda d: (abs(strides[d]), -d)))
    return None if best is None else best[1]


def _whole_rows(plan: HostPlan, inner: int) -> HostPlan:
    """The rows walker's plan with its tile cut to whole rows of ``inner`` elements where a run of
    rows that starts on a cache line fits it: a tile that ends mid-row splits that row into two
    runs, each with its own vector loop's scalar remainder (grad (2000, 1) x self (2000, 2000)
    float32, one thread: 610 -> 497 us, torch 492)."""
    unit = math.lcm(inner, max(1, CACHE_LINE_BYTES // plan.itemsize))
    if unit > plan.tile:
        return plan
    return dataclasses.replace(plan, tile=plan.tile // unit * unit)


def _panels(dims, layouts, tile_rows: int, tile_cols: int, max_item: int, run: int) -> tuple[int, int]:
    """``_segments``' slices side by side, and the number of panels (outer index, group of those
    slices, tile of rows; a group may hold fewer slices) that tiles of ``tile_rows`` make."""
    rows, cols = dims[-2], dims[-1]
    seg = _segments(dims, layouts, tile_rows, tile_cols, max_item, run)
    above = dims[-3] if len(dims) >= 3 else 1
    return seg, (math.prod(dims) // (rows * cols * above)) * ceil_div(above, seg) * ceil_div(rows, tile_rows)


def _segments(dims, layouts, tile_rows: int, tile_cols: int, max_item: int, run: int = 0) -> int:
    """How many slices of the dim above the columns a panels tile takes side by side: the most
    that fit ``SEGMENT_TILE_BYTES``, where a tile spans whole rows and every operand but the
    gathered inputs continues its rows in that dim (its stride there is a row's: 0 for an input
    broadcast along the rows, which must then be broadcast along that dim too), else 1.

    ``run`` (beyond FAR_BYTES): at least as many as read each gathered source row in runs of
    ``run`` elements, where every gathered input continues its source rows in that dim too (a
    transposed view whose slices lie back to back), within WHOLE_PANEL_BYTES. The kernel then
    gathers a tile's column blocks across its slices in the source's memory order."""
    rows, cols = dims[-2], dims[-1]
    if len(dims) < 3 or tile_cols != cols or layouts[0].mode == "g":
        return 1
    if any(lay.mode != "g" and lay.strides[-3] != cols * lay.strides[-1] for lay in layouts):
        return 1
    tile = tile_rows * cols * max_item
    fit = SEGMENT_TILE_BYTES // tile
    if run > tile_rows == rows and all(lay.mode != "g" or lay.strides[-3:-1] == (rows, 1) for lay in layouts):
        fit = max(fit, min(ceil_div(run, rows), WHOLE_PANEL_BYTES // tile))
    return max(1, min(dims[-3], fit))


# Rows shorter than this many bytes (of the widest operand: less than one AVX2 vector) go to the
# panels walker where an operand does not hold them back to back (``_short_rows``).
SHORT_ROW_BYTES = 32


def _short_rows(dims, layouts, max_item: int) -> list | None:
    """The layouts for the panels walker of a launch whose rows are shorter than SHORT_ROW_BYTES
    (a slice ``[..., :k]`` of a few channels, a (N, 1) or (k,) operand broadcast against (N, k))
    with every operand that does not hold them back to back marked gathered (mode ``g``: an
    input gathered, an ``out`` with gaps between its rows scattered); None to keep the rows
    walker. The rows walker runs a vector loop per row, which such a row never fills: it pays the
    loop's set-up and its scalar remainder for every few elements, and float16 its NaN screen
    too. The panels walker copies the tile's rows into scratch back to back, one vector move per
    row (``_numba_support.gather_tile``; ``scatter_tile`` back out), and computes the tile as one
    run. Measured (2-vCPU Zen 3 VM, one thread, LeakyReluBackward, self ``[:, :k]`` of twice k,
    ``out=``), 1e6 elements: float32 rows of 2 / 5 / 6 1124 / 532 / 494 -> 451 / 318 / 287 us,
    float16 1655 / 783 / 848 -> 318 / 296 / 259, bfloat16 1402 / 636 / 687 -> 362 / 328 / 289;
    1e5: float16 rows of 2 224 -> 36, grad (N, 1) against self (N, 2) 656 -> 44, an out
    ``[:, :2]`` of 4 too 224 -> 54. Not for 8-byte rows of 3, which the rows walker unrolls
    (float64 1e5 52-61 -> 66-73 us gathered), nor for an out whose inner stride is not 1."""
    cols = dims[-1]
    if len(dims) < 2 or cols * max_item >= SHORT_ROW_BYTES or (cols == 3 and max_item == 8):
        return None
    if layouts[0].mode != "c":
        return None

    def back_to_back(k: int, lay: OperandLayout) -> bool:  # an input may repeat one element
        return (lay.mode == "c" and lay.strides[-2] == cols) or (k > 0 and lay.mode == "b" and lay.strides[-2] == 0)
    if all(back_to_back(k, lay) for k, lay in enumerate(layouts)):
        return None
    return [lay if back_to_back(k, lay) else dataclasses.replace(lay, mode="g") for k, lay in enumerate(layouts)]


def _move_to_row(values, row: int) -> tuple:
    """``values`` (one per dim) with dim ``row`` moved to the second-last place, the others in order."""
    rest = [v for d, v in enumerate(values) if d != row]
    return tuple(rest[:-1] + [values[row], rest[-1]])


def plan_launch(out_shape, operands, itemsizes, n_threads: int,
                tile_bytes: int = DEFAULT_TILE_BYTES) -> HostLaunch:
    """The launch for ``out_shape`` (numel > 0) with ``operands`` = per operand (out first) its
    element strides aligned to ``out_shape``, and their ``itemsizes`` in bytes."""
    numel = math.prod(out_shape)
    _, dims, strides = _walk(tuple(out_shape), [tuple(s) for s in operands], itemsizes)
    out_item = itemsizes[0]
    if numel == 1 or (len(dims) == 1 and strides[0][0] == 1 and all(s[0] in (0, 1) for s in strides)):
        layouts = tuple(OperandLayout((1,), 0, "c") if numel == 1 or s[0] == 1 else OperandLayout((0,), 0, "s")
                        for s in strides)
        return HostLaunch("flat", dims, layouts, plan_host(numel, out_item, n_threads, tile_bytes))
    layouts = []
    for s, item in zip(strides, itemsizes):
        layouts.append(OperandLayout(s, _offset(dims, s), _mode(s[-1], item)))
    row = None
    if numel * max(itemsizes) > SMALL_BYTES:
        row = _panel_row_dim(layouts, itemsizes)
        gathered = _short_rows(dims, layouts, max(itemsizes)) if row is None else None
        if gathered is not None:
            layouts, row = gathered, len(dims) - 2
    if row is None:
        plan = plan_host(numel, out_item, n_threads, tile_bytes)
        return HostLaunch("rows", dims, tuple(layouts), _whole_rows(plan, dims[-1]))
    if row != len(dims) - 2:
        dims = _move_to_row(dims, row)
        layouts = [OperandLayout(_move_to_row(lay.strides, row), lay.offset, lay.mode) for lay in layouts]
    min_item = min(itemsizes)
    max_item = max(itemsizes)
    rows, cols = dims[-2], dims[-1]
    far = numel * sum(itemsizes) >= FAR_BYTES
    run_bytes = PANEL_RUN_BYTES * (2 if far else 1)
    tile_cols = min(cols, run_bytes // max_item)
    if min_item == 2:
        panel_bytes = PANEL_BYTES_16BIT
    elif min_item == 8 and not far:
        panel_bytes = PANEL_BYTES_64BIT
    else:
        panel_bytes = PANEL_BYTES
    gathered_run = panel_bytes // min_item
    run = gathered_run if far else 0  # ``_segments``' run (0 in cache, where the whole-row test is)
    panels = None  # (seg, n_panels) where the whole-row test below counted them already
    if far and rows * tile_cols * max_item <= WHOLE_PANEL_BYTES:
        tile_rows = rows
    else:
        # panels of equal height (100 rows as 4 x 25, not 3 x 32 + 4); tile rows are whole cache
        # lines of every operand (powers of two over at most 32x apart in width)
        height = gathered_run
        if tile_cols == cols:
            # rows of a few elements (an NHWC image read from NCHW: rows of C): a tile as tall as
            # the dense operands' run of whole rows, so a kernel's gather call and loop set-up
            # serve a few KiB, not 32 rows (float32 (16, 224, 224, 3) from NCHW, tiles 32 x 3 ->
            # 170 x 3: 1.76-1.89 -> 1.50-1.58 ms; C = 4, 32 x 4 -> 256 x 4: 2.0-2.3 -> 1.8-2.0 ms)
            height = max(height, run_bytes // (cols * max_item))
        tile_rows = ceil_div(rows, ceil_div(rows, min(rows, height)))
        if (min_item == 4 and tile_rows < rows <= WHOLE_ROW_BYTES // min_item
                and tile_rows * min_item % CACHE_LINE_BYTES):
            whole = _panels(dims, layouts, rows, tile_cols, max_item, run)
            if whole[1] >= n_threads:
                tile_rows, panels = rows, whole
    seg, n_panels = panels or _panels(dims, layouts, tile_rows, tile_cols, max_item, run)
    plan = plan_host(n_panels, tile_rows * cols * seg * out_item, n_threads, tile_bytes)
    return HostLaunch("panels", dims, tuple(layouts), plan, tile_rows, tile_cols, seg)
