"""The compiled backend: kernel expressions lowered to numba loops over the host tiling plan.

Same launch contract as the NumPy backend (``launch(step, srcs, dst)``, compiled, plus a
compiled ``copy`` for the Contiguous/Cast/ViewCopy steps), and ``program(plan)``: for the
Pythonic API (which owns its workspace) the engine hands over the whole recorded chain
(Contiguous -> Cast -> Kernel -> Cast -> ViewCopy) and gets back one fused pass that reads every
input in place (any strides, broadcast by stride 0, widening casts done per element) and writes
``out`` in place, rounding exactly as the recorded steps do. The plan -- and so the
``describe``/``tiling`` output and the workspace size -- is unchanged. The aclnn API runs the
recorded steps themselves, temporaries in the caller's workspace (DECISION 17).

How a kernel is built (``numba_codegen``): the expression is traced on symbolic operands into a
DAG whose node dtypes are NumPy's own; the DAG becomes straight-line code for one element; that
code is placed in a *walker* (``host_launch``: flat, rows or panels) which loops over the blocks
of the host plan (``prange``, one block per thread) and the tiles inside them. The generated
module is written to a cache directory (``OPSNN_CACHE_DIR``, default ``~/.cache/opsnn``) and
compiled with ``cache=True``, so a second process loads machine code instead of compiling.
Nothing is compiled at import; each variant compiles on first use (the serial walker below
``PARALLEL_MIN_BYTES`` of work, the ``prange`` one above).

Large dense 4/8-byte outputs (flat and rows walkers, from ``STREAM_MIN_BYTES``, not in place)
are computed tile by tile into an L1 scratch row and written with non-temporal stores
(``_numba_support.stream_copy``).

float16/bfloat16 are read and written as uint16 bits and computed in float32 with one
round-to-nearest-even (``_numba_support``), so results are bit-identical to the NumPy backend,
NaN payloads included, but for an arithmetic op whose two operands are both NaN (a NaN slope
times a NaN gradient): IEEE 754 leaves open which payload that carries, and neither NumPy nor
LLVM keeps an operand order for it, so it is either operand's quiet NaN on both backends.
Expressions, dtypes or layouts it cannot lower run on the NumPy backend instead (logged once).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import sys
import tempfile
import threading
import weakref
from pathlib import Path

import numba
import numpy as np

from .._core import dtypes, settings
from .._core.tiling.host import CACHE_LINE_BYTES
from . import _numba_support, numpy_backend
from . import numba_codegen as cg
from .host_launch import FAR_BYTES, HostLaunch, plan_launch

NAME = "numba"
log = logging.getLogger("opsnn")

_SUPPORT_VERSION = cg.digest(Path(_numba_support.__file__).read_text(), Path(cg.__file__).read_text(),
                             numba.__version__, np.__version__)
_LOCK = threading.RLock()
_MODULES: dict[str, object] = {}
_PROGRAMS: dict[int, tuple] = {}   # id(plan) -> (plan, Program or None)
_WARNED: set = set()


def _start_pool() -> None:
    """Start numba's thread pool now (``numba.get_num_threads`` starts it), leaving torch's
    intra-op thread count as it was. numba's OpenMP layer starts with
    ``omp_set_num_threads(NUMBA_NUM_THREADS)``, and where torch was imported first that symbol
    is torch's libgomp's (torch loads it into the global scope), so the first opsnn kernel
    changed ``torch.get_num_threads()`` under its user (a breaker's: 1 -> 2, and torch's own conv
    gradients changed with it). Later launches pass their thread count per parallel region and
    leave it alone."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    numba.get_num_threads()
    if before is not None and torch.get_num_threads() != before:
        torch.set_num_threads(before)


_start_pool()

# A forked child cannot use numba's pool where it is GNU OpenMP (the ``omp`` threading layer,
# the one installed here): its first parallel region ends the child ("Terminating: fork() called
# from a process already using GNU OpenMP, this is unsafe"), and fork is how ``multiprocessing``
# starts workers on Linux (a breaker: a Pool whose parent had made one opsnn call hung, its
# worker gone). So a child runs every launch on its calling thread (``use_parallel``), drops the
# launches planned before the fork, and gives its thread one pool thread: a compiled call of
# ``_fastpath`` (a plan-cache entry, an aclnn launch's bound call) whose launch is a pool one
# replans on the serial walker (its REPLAN; it tests _FORKED first, as a launch planned for one
# pool thread passes ``_check_source``'s planned-thread test), and a step bound to the pool
# before the fork (a repeatable aclnn executor, ``Program.bind``) plans anew. Spawned or
# forkserver workers start afresh.
_FORKED = False
_LIVE_PROGRAMS: weakref.WeakSet = weakref.WeakSet()  # every Program, whose launches a fork drops


def _after_fork_in_child() -> None:
    global _FORKED, _LOCK
    try:
        layer = numba.threading_layer()
    except ValueError:  # no pool started: nothing to avoid
        return
    if layer != "omp":  # tbb and workqueue pools survive a fork
        return
    _FORKED = True
    _LOCK = threading.RLock()  # another thread of the parent may have held it: it is gone here
    numba.set_num_threads(1)
    for program in list(_LIVE_PROGRAMS):
        program.forget_launches()
    from .. import _fastpath  # (imported here: _fastpath imports the kernels)
    _fastpath.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


class Fallback(Exception):
    """This launch cannot run compiled; the caller uses the NumPy backend."""


def _warn_once(key, message: str) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        log.warning("numba backend: %s; running it on the NumPy backend", message)


# ---- generated modules -------------------------------------------------------------------

def cache_dir() -> Path:
    """Where generated kernel modules (and numba's cache beside them) live."""
    root = os.environ.get("OPSNN_CACHE_DIR")
    if root:
        base = Path(root)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "opsnn"
    path = base / f"numba-kernels-{_SUPPORT_VERSION[:8]}"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".writable"
        probe.touch()
        return path
    except OSError:
        fallback = Path(tempfile.gettempdir()) / f"opsnn-numba-kernels-{os.getuid()}-{_SUPPORT_VERSION[:8]}"
        fallback.mkdir(parents=True, exist_ok=True)
        return fallback


def _load_module(source: str):
    """Import generated ``source`` from a file named by its hash (written once, atomically)."""
    key = cg.digest(source)
    with _LOCK:
        module = _MODULES.get(key)
        if module is not None:
            return module
        path = cache_dir() / f"k_{key}.py"
        if not path.exists() or path.read_text() != source:
            tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(source)
            os.replace(tmp, path)
        name = f"opsnn_numba_kernels.k_{key}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        _MODULES[key] = module
        return module


_HEADER = """# Generated by opsnn.kernels.numba_backend -- do not edit (support {version}).
import numpy as np
from numba import njit, prange
from opsnn.kernels._numba_support import {helpers}
"""


# A walker's ``check`` argument from this bit up: the pool size a cached launch was planned for
# (0: any). Its ``prange`` variant then returns 2, writing nothing, under another thread count
# (``set_num_threads`` since), and the caller plans again. Asked inside the kernel because from
# Python, right after a kernel swept the caches, ``numba.get_num_threads()`` (two locks) cost
# ~10 us of a 125 us call (float16 1e6 on two threads of the Xeon VM of BENCHMARKS.md).
PLANNED_THREADS_BIT = 16


def _check_source(n_inputs: int, strided: bool, parallel: bool) -> list[str]:
    """Kernel prologue. ``alias``: out's memory range meets an input's (in place), which the
    F16C fast path must know. With bit 0 of ``check`` (an ``out`` the caller gave, see
    ``_fastpath``): return 1 when out's range meets an input's other than as the same view (same
    start, which bit k+1 of ``check`` says is possible); and (``parallel``) 2 when the pool size
    differs from the one the launch was planned for (PLANNED_THREADS_BIT); the caller then
    re-plans, running the real check. Only bit 0 asks for the comparison: a pool launch whose
    overlap phase 1 checked carries its planned threads alone (with ``if check`` its in-place
    call returned 1 and wrote nothing)."""
    lines = []
    if parallel:
        lines += [f"planned = check >> {PLANNED_THREADS_BIT}",
                  "if planned and planned != pool_threads():",
                  "    return 2"]
    lines += ["o_lo = out.ctypes.data",
              "o_hi = o_lo + out.size * out.itemsize",
              "alias = False"]
    o_start = "o_lo + offsets[0] * out.itemsize" if strided else "o_lo"
    for k in range(n_inputs):
        start = f"lo{k} + offsets[{k + 1}] * a{k}.itemsize" if strided else f"lo{k}"
        lines += [f"lo{k} = a{k}.ctypes.data",
                  f"hi{k} = lo{k} + a{k}.size * a{k}.itemsize",
                  f"if lo{k} < o_hi and o_lo < hi{k}:",
                  "    alias = True",
                  f"    same{k} = ((check >> {k + 1}) & 1) == 1 and {start} == {o_start}",
                  f"    if check & 1 and ranges_clash(o_lo, o_hi, lo{k}, hi{k}, same{k}):",
                  "        return 1"]
    return lines


def _geometry_source(n_operands: int) -> list[str]:
    """Strided walkers: unpack ``geom`` (``launch_arrays``: dims, then the element strides of each
    operand, out first, then their offsets) into views ``dims``, ``strides[k, d]``, ``offsets[k]``."""
    return [f"ndim = (geom.shape[0] - {n_operands}) // {n_operands + 1}",
            "dims = geom[:ndim]",
            f"strides = geom[ndim:{n_operands + 1} * ndim].reshape(({n_operands}, ndim))",
            f"offsets = geom[{n_operands + 1} * ndim:]"]


def _indent(lines, depth: int) -> list[str]:
    pad = "    " * depth
    return [pad + line for line in lines]


_HW_NAMES = re.compile(r"\b(h2f|f2h)\(")
# NaN screen per stored dtype: (type of the running max, magnitude bits of a raw value, NaN above)
_NAN_SCREEN = {cg.F16: ("np.uint16", "np.uint16({r} & np.uint16(0x7FFF))", "np.uint16(0x7C00)"),
               cg.BF16: ("np.uint16", "np.uint16({r} & np.uint16(0x7FFF))", "np.uint16(0x7F80)"),
               cg.F32: ("np.uint32", "(f32_bits({r}) & np.uint32(0x7FFFFFFF))", "np.uint32(0x7F800000)")}


def _loop(var: str, count: str, loads: dict, code: cg.ElementCode, store: str, hw: bool, screened: set,
          hoisted: dict, store_apart: bool = False) -> list[str]:
    """``for var in range(count)``: load, compute and store one element. Names it defines:
    ``ld<k>`` (raw loads), ``x<k>`` (converted inputs), ``m<k>`` (NaN screens); the element code
    defines ``e_<n>``. Walker names must not clash with these.

    ``loads``: operand -> (raw load, dtype chain) inside the loop; ``hoisted``: the same for
    loop-invariant operands, loaded before it. ``hw``: the code converts float16 and the host has
    F16C; the loop then runs with the F16C instructions (exact for every value but a signalling
    NaN, which they quiet). ``screened`` operands are those a quieted NaN could reach the result
    from: they are screened for NaN and the tile is recomputed with the bit formulas if any of
    them holds a NaN. If ``out`` aliases an input the screen runs first instead, unless
    ``store_apart`` (the store goes to a scratch row, so the inputs are still there to recompute
    from)."""
    def body(hw: bool, only_raw=False):
        lines = [f"ld{k} = {raw}" for k, (raw, _) in loads.items()]
        if only_raw:
            return lines
        lines += [f"x{k} = {cg.convert_source(f'ld{k}', chain)}" for k, (_, chain) in loads.items()]
        lines += list(code.lines) + [f"{store} = {code.result}"]
        return [_HW_NAMES.sub(lambda m: m.group(1) + "_hw(", line) for line in lines] if hw else lines

    head = f"for {var} in range({count}):"
    pre = [f"ld{k} = {raw}" for k, (raw, _) in hoisted.items()]
    pre += [f"x{k} = {cg.convert_source(f'ld{k}', chain)}" for k, (_, chain) in hoisted.items()]
    if not screened:
        return pre + [head] + _indent(body(hw), 1)
    inner = [k for k in screened if k in loads]
    outer = [k for k in screened if k in hoisted]
    chains = {**loads, **hoisted}
    init = [f"m{k} = {_NAN_SCREEN[chains[k][1][0]][0]}(0)" for k in inner]
    update = [f"m{k} = max(m{k}, {_NAN_SCREEN[chains[k][1][0]][1].format(r=f'ld{k}')})" for k in inner]
    nan = [f"m{k} > {_NAN_SCREEN[chains[k][1][0]][2]}" for k in inner]
    nan += [f"{_NAN_SCREEN[chains[k][1][0]][1].format(r=f'ld{k}')} > {_NAN_SCREEN[chains[k][1][0]][2]}"
            for k in outer]
    cond = " or ".join(nan)
    fast = body(True)
    n_raw = len(loads)
    fused = init + [head] + _indent(fast[:n_raw] + update + fast[n_raw:], 1)
    fused += [f"if {cond}:", "    " + head] + _indent(body(False), 2)
    # the screen first: a pass over the raw loads of the screened inputs read in the loop (none
    # when every screened input is loop-invariant: its screen is a hoisted value)
    scan_first = init + ([head] + _indent(body(False, only_raw=True) + update, 1) if inner else [])
    scan_first += [f"if {cond}:", "    " + head] + _indent(body(False), 2)
    scan_first += ["else:", "    " + head] + _indent(fast, 2)
    if store_apart:
        return pre + fused
    return pre + ["if alias:"] + _indent(scan_first, 1) + ["else:"] + _indent(fused, 1)


def _gather(k: int, segmented: bool) -> list[str]:
    """Panels walker: copy the tile of gathered input ``k`` into its scratch ``s<k>`` (row r of
    the tile at ``r * rs``; ``segmented``: slice ``sg`` of the tile's group at column ``sg *
    tile_cols``), by ``_numba_support.gather_tile``."""
    sr, si = f"sr{k + 1}", f"si{k + 1}"
    slices = f"s3_{k + 1}, nseg" if segmented else "0, 1"
    return [f"gather_tile(a{k}, base{k + 1} + r0 * {sr} + c0 * {si}, {sr}, {si}, {slices}, s{k}, rs, tile_cols,",
            "            nr, run, far)"]


def _line_rows(gathered: list, in_chains) -> int:
    """Elements of the first gathered input in a cache line (0 without one): how many rows
    taller than ``tile_rows`` a panel may be (``_panel_rows``)."""
    return CACHE_LINE_BYTES // in_chains[gathered[0]][0].itemsize if gathered else 0


def _panel_rows(gathered: list, in_chains) -> list[str]:
    """Panels walker: the rows ``[r0, r0 + nr)`` of panel ``p``. Panels are ``tile_rows`` high,
    except that their borders are moved up by ``shift`` rows (the first panel shorter, the last
    up to ``shift`` taller) so that they fall on cache-line borders of the first gathered
    input's source rows, where all its rows are aligned alike (a row step of whole lines) and a
    panel spans whole lines: a line cut between two panels was fetched from memory by both.
    NumPy's large arrays start 16 bytes into a line, so every panel of a transposed float32 /
    float64 self read 3 lines per source row where 2 held its rows. Measured (separate processes
    alternating, 2 threads, two rounds): float32 10000 x 10000 77-82 -> 62 ms, float64 164 ->
    128-137 ms, float64 1000 x 10000 15.1-15.4 -> 12.5-12.7 ms; float32 1e6-1e7 and float16
    1e8 within the noise (float32 1000-element rows are not whole lines apart)."""
    lines = ["        ti = p - outer * per_outer",
             "        shift = 0"]
    if gathered:
        k = gathered[0]
        item = in_chains[k][0].itemsize
        line = _line_rows(gathered, in_chains)
        lines += [f"        if per_outer > 1 and sr{k + 1} == 1 and tile_rows % {line} == 0 and "
                  f"si{k + 1} * {item} % {CACHE_LINE_BYTES} == 0:",
                  f"            shift = (a{k}.ctypes.data + base{k + 1} * {item}) % {CACHE_LINE_BYTES} // {item}"]
    return lines + ["        r0 = max(0, ti * tile_rows - shift)",
                    "        nr = (rows if ti == per_outer - 1 else ti * tile_rows + tile_rows - shift) - r0"]


def _stream_source(stream_min: int) -> list[str]:
    """Prologue of a rows walker that may stream its output (``streams_output``). ``stream``: the
    output has at least ``stream_min`` bytes, meets no input's memory (in place, its lines were
    just read: flat float32 1e8 in place took 28 ms, 41 streamed) and is dense in the walk's
    order, so a tile ``[t0, t1)`` of the walk is ``out[t0:t1]``. Tiles are then computed into
    the block's scratch row ``so`` (``tgt`` with index offset ``qs``) and written out in whole
    lines with non-temporal stores (``stream_copy``).

    Measured (2-core EPYC, 1e7-1e8 elements, 1 thread): 1.2x (f32) and 1.35x (f64) for
    LeakyReluBackward grad (N, 1) x self (1, M), but 0.6-0.9x with two full-size inputs read as
    well, so it was kept to broadcast inputs there; on the Xeon VM of BENCHMARKS.md (2 threads)
    a (10000, 10000) float32 out of a contiguous grad and a reversed self: 42.7-43.4 -> 36.5-36.9
    ms (float64 (5000, 5000): 21.0-21.4 -> 17.9-18.6), as for flat launches (STREAM_MIN_BYTES)."""
    return ["out_bytes = out.size * out.itemsize",
            f"stream = out_bytes >= {stream_min} and not alias and offsets[0] == 0",
            "span = 1",
            "for d in range(ndim - 1, -1, -1):",
            "    stream = stream and strides[0, d] == span",
            "    span *= dims[d]",
            "if stream:",
            "    scr_out = np.empty(n_blocks * tile, out.dtype)",
            "else:",
            "    scr_out = out[:0]"]  # not streaming: no allocation


# a tile's store target: the block's scratch row when streaming (index t0 - qs from 0), else out
_STREAM_TILE = ["tgt = so if stream else out",
                "qs = t0 if stream else 0"]
# after a tile: write it out from the scratch row
_STREAM_TILE_END = ["if stream:",
                    "    stream_copy(out, t0, so, t1 - t0)"]
# after a block: its streamed lines are visible before the kernel returns
_STREAM_BLOCK_END = ["if stream:",
                     "    store_fence()"]


def streams_output(walker: str, modes: str, store_dtype: np.dtype) -> bool:
    """Whether the walker may stream its output (decided per launch by its size, see
    STREAM_MIN_BYTES and ``_stream_source``): flat, or rows with a unit-stride out, of 4- or
    8-byte elements. Not 2-byte outputs: f16/bf16 are converted per element and already written
    at about the memory's rate; the extra pass through L1 cost more than it saved (bf16 1e8,
    1 thread: 0.8x; flat on two threads: float16 0.84-0.91x, bfloat16 0.79x)."""
    return walker in ("flat", "rows") and modes[0] == "c" and store_dtype.itemsize >= 4


def generate(code: cg.ElementCode, in_chains, store_dtype, scalar_names, walker: str, modes: str,
             stream_min: int, segmented: bool = False) -> str:
    """Module source with ``kernel_serial`` and ``kernel_parallel`` for one walker/modes variant.
    ``stream_min``: the output bytes from which it streams, where it may (``streams_output``).
    ``segmented``: the panels walker's tiles hold ``seg`` > 1 slices side by side (a variant of
    its own, so launches with one keep the shorter code: a single-slice launch through this one
    measured up to 14 % slower)."""
    n = len(in_chains)
    params = ", ".join(["out"] + [f"a{k}" for k in range(n)] + [cg.scalar_param(s) for s in scalar_names])
    out_mode, in_modes = modes[0], modes[1:]
    streams = streams_output(walker, modes, np.dtype(store_dtype))
    all_text = "\n".join([*code.lines, code.result, *(cg.load_source("a", "i", c) for c in in_chains)])
    hw = _numba_support.HAS_F16C and bool(_HW_NAMES.search(all_text))
    # screen an input whose own load converts float16, or every input when the element code or
    # the store converts (a loaded value may pass through to it); native bits need no screen, nor
    # an input only compared (F16C keeps a NaN a NaN, only its payload may change)
    converts_later = bool(_HW_NAMES.search("\n".join([*code.lines, code.result])))
    screened = {k for k in range(n) if hw and in_chains[k][0] in _NAN_SCREEN and k in code.value_inputs
                and (converts_later or _HW_NAMES.search(cg.load_source("a", "i", in_chains[k])))}

    def idx(k, var):  # element index of operand k (0 = out) at inner position var (strided walkers)
        mode = modes[k]
        if mode == "c":
            return f"np.uint64(q{k} + {var})"
        if mode == "b":
            return f"np.uint64(q{k})"
        if mode == "r":  # a constant stride, so LLVM vectorizes it (loads, then a reversing shuffle)
            return f"np.uint64(q{k} - {var})"
        if mode == "e":  # every second element: a constant stride LLVM reads as whole vectors
            return f"np.uint64(q{k} + 2 * {var})"
        return f"np.uint64(q{k} + {var} * si{k})"

    arr = ["out"] + [f"a{k}" for k in range(n)]
    funcs = []
    for parallel in (False, True):
        rng = "prange" if parallel else "range"
        name = "kernel_parallel" if parallel else "kernel_serial"
        deco = f"@njit(parallel={parallel}, cache=True, nogil=True)"
        if walker == "flat":
            sig = f"def {name}({params}, n_blocks, block_former, numel, tile, check):"
            lines = _check_source(n, strided=False, parallel=parallel)
            hoisted = {k: (f"a{k}[0]", in_chains[k]) for k in range(n) if in_modes[k] == "s"}
            loads = {k: (f"a{k}[np.uint64(t0 + j)]", in_chains[k]) for k in range(n) if in_modes[k] != "s"}
            # in place (out is an input's own memory): LLVM's vectorized loop checks the two
            # ranges at run time and, finding them the same, runs its scalar loop (3.7x slower:
            # float32 LeakyRelu 1e6, 249 us against 67); so each tile is computed into a scratch
            # row, then copied into out (allocated per block, and only then: a 1e5-element call
            # measured 4 % slower with an empty allocation made every call). A streamed output
            # (``streams_output``) goes through the same scratch row, written with ``stream_copy``;
            # never in place, where out's lines were just read (float32 1e8: 28 -> 41 ms streamed)
            if streams:
                lines.append(f"stream = not alias and out.size * out.itemsize >= {stream_min}")
            lines += [f"for b in {rng}(n_blocks):",
                      "    start = b * block_former",
                      "    stop = min(start + block_former, numel)",
                      "    so = out[:0]",
                      f"    if {'alias or stream' if streams else 'alias'}:",
                      "        so = np.empty(tile, out.dtype)",
                      "    for t0 in range(start, stop, tile):",
                      "        run = min(t0 + tile, stop) - t0"]
            into_scratch = _indent(_loop("j", "run", loads, code, "so[np.uint64(j)]", hw, screened, hoisted,
                                         store_apart=True), 3)
            if streams:  # its own copy of the loop: sharing the in-place one made that 8 % slower
                lines += ["        if stream:"] + into_scratch + ["            stream_copy(out, t0, so, run)"]
            lines += [f"        {'elif' if streams else 'if'} alias:"] + into_scratch
            lines += ["            for j in range(run):",
                      "                out[np.uint64(t0 + j)] = so[np.uint64(j)]",
                      "        else:"]
            lines += _indent(_loop("j", "run", loads, code, "out[np.uint64(t0 + j)]", hw, screened, hoisted), 3)
            if streams:
                lines += _indent(_STREAM_BLOCK_END, 1)
            lines.append("return 0")
        else:
            ops = range(n + 1)
            if walker == "rows":
                hoisted = {k: (f"{arr[k + 1]}[{idx(k + 1, '0')}]", in_chains[k]) for k in range(n) if in_modes[k] == "b"}
                loads = {k: (f"{arr[k + 1]}[{idx(k + 1, 'j')}]", in_chains[k]) for k in range(n) if in_modes[k] != "b"}
                store = "tgt[np.uint64(q0 + j)]" if streams else f"out[{idx(0, 'j')}]"
                sig = f"def {name}({params}, geom, n_blocks, block_former, numel, tile, check):"
                lines = _geometry_source(n + 1) + _check_source(n, strided=True, parallel=parallel)
                lines += ["inner = dims[ndim - 1]"]
                if streams:
                    lines += _stream_source(stream_min)
                lines += [f"si{k} = strides[{k}, ndim - 1]" for k in ops]
                # the row dim (second-last) in locals: the next row starts one row stride on;
                # the multi-index in memory is touched only when the rows wrap (rows of 16-50
                # elements: up to 15 % faster than carrying every dim through memory)
                lines += ["nrow = dims[ndim - 2] if ndim >= 2 else 1"]
                lines += [f"sr{k} = strides[{k}, ndim - 2] if ndim >= 2 else 0" for k in ops]
                lines += [f"for b in {rng}(n_blocks):",
                          "    start = b * block_former",
                          "    stop = min(start + block_former, numel)",
                          "    idx = index_buffer()"]
                if streams:
                    lines.append("    so = scr_out[b * tile:(b + 1) * tile]")
                # the block's first element decoded once; the walk then carries its position
                # (row start p, column c, row r, outer dims in idx) from tile to tile (a decode
                # per tile, 2 divisions a dim, cost 6 % at 4000-element tiles)
                lines += ["    rem = start",
                          "    for d in range(ndim - 1, -1, -1):",
                          "        idx[d] = rem % dims[d]",
                          "        rem //= dims[d]"]
                lines += [f"    p{k} = offsets[{k}]" for k in ops]
                lines += ["    for d in range(ndim - 1):"]
                lines += [f"        p{k} += idx[d] * strides[{k}, d]" for k in ops]
                lines += ["    c = idx[ndim - 1]",
                          "    r = idx[ndim - 2] if ndim >= 2 else 0",
                          "    t0 = start",
                          "    while t0 < stop:",
                          "        t1 = min(t0 + tile, stop)"]
                if streams:
                    lines += _indent(_STREAM_TILE, 2)
                # whole rows up to the tile's end or the row dim's, in a counted loop: their
                # starts step by constant strides, so LLVM checks the operands' overlap once for
                # all of them, not once per row (rows of 32 float32: 1.35x faster); a row begun
                # in the tile before, or cut by the tile's end, is a run of its own
                lines += ["        pos = t0",
                          "        while pos < t1:",
                          "            if c == 0 and t1 - pos >= inner:",
                          "                rows_done = min(nrow - r, (t1 - pos) // inner)",
                          "                length = inner",
                          "            else:",
                          "                rows_done = 1",
                          "                length = min(inner - c, t1 - pos)"]
                # rows of 3 (an RGB image's channels) with their count a constant: LLVM unrolls
                # the row, where a loop of 3 is set up and left per row (float32 2x faster)
                for test, count in (("if length == 3:", "3"), ("else:", "length")):
                    lines += [f"            {test}",
                              "                for rr in range(rows_done):"]
                    lines += [f"                    q{k} = p{k} + c * si{k} + rr * sr{k}" +
                              (" - qs" if k == 0 and streams else "") for k in ops]
                    lines += _indent(_loop("j", count, loads, code, store, hw, screened, hoisted), 5)
                lines += ["            pos += rows_done * length",
                          "            if c + length < inner:  # cut by the tile's end: the next goes on",
                          "                c += length",
                          "                continue",
                          "            c = 0",
                          "            r += rows_done"]
                lines += [f"            p{k} += rows_done * sr{k}" for k in ops]
                lines += ["            if r == nrow:",
                          "                r = 0"]
                lines += [f"                p{k} -= nrow * sr{k}" for k in ops]
                lines += ["                d = ndim - 3",
                          "                while d >= 0:",
                          "                    idx[d] += 1"]
                lines += [f"                    p{k} += strides[{k}, d]" for k in ops]
                lines += ["                    if idx[d] < dims[d]:",
                          "                        break"]
                lines += [f"                    p{k} -= dims[d] * strides[{k}, d]" for k in ops]
                lines += ["                    idx[d] = 0",
                          "                    d -= 1"]
                if streams:
                    lines += _indent(_STREAM_TILE_END, 2)
                lines.append("        t0 = t1")
                if streams:
                    lines += _indent(_STREAM_BLOCK_END, 1)
                lines.append("return 0")
            else:  # panels: 2-D tiles; operands read with a large inner stride go through scratch
                gathered = [k for k in range(n) if in_modes[k] == "g"]
                scatter = out_mode == "g"
                # slices side by side are for an out that continues its rows (host_launch._segments)
                assert not (segmented and scatter), "a scattered out takes one slice per tile"
                p_loads = {k: (f"s{k}[np.uint64(srow + j)]" if k in gathered else f"a{k}[{idx(k + 1, 'j')}]",
                               in_chains[k]) for k in range(n) if in_modes[k] != "b"}
                p_hoisted = {k: (f"a{k}[np.uint64(q{k + 1})]", in_chains[k]) for k in range(n) if in_modes[k] == "b"}
                p_store = "so[np.uint64(srow + j)]" if scatter else f"out[{idx(0, 'j')}]"
                sig = (f"def {name}({params}, geom, n_blocks, block_former, n_panels, tile_rows, tile_cols, seg,"
                       " check):")
                lines = _geometry_source(n + 1) + _check_source(n, strided=True, parallel=parallel)
                lines += ["rows = dims[ndim - 2]",
                          "cols = dims[ndim - 1]",
                          "per_outer = (rows + tile_rows - 1) // tile_rows"]
                if segmented:  # a tile row: seg slices of dim ndim - 3, each tile_cols (= cols) long
                    lines += [f"rs = tile_cols * seg + {SCRATCH_PAD}",
                              "above = dims[ndim - 3]",
                              "groups = (above + seg - 1) // seg"]
                lines += [f"si{k} = strides[{k}, ndim - 1]" for k in ops]
                lines += [f"sr{k} = strides[{k}, ndim - 2]" for k in ops]
                if segmented:
                    lines += [f"s3_{k} = strides[{k}, ndim - 3]" for k in ops]
                # a tile spanning whole rows that every operand holds back to back (its scratch
                # rows too) is one run: short rows (an image's 3 channels) then pay no loop per row
                row_step = {"c": "cols", "r": "-cols", "e": "2 * cols", "b": "0"}
                dense = [f"sr{k} == {row_step[modes[k]]}" for k in ops
                         if not (k == 0 and scatter) and (k == 0 or k - 1 not in gathered)]
                if not segmented:  # (with slices side by side out continues its rows elsewhere)
                    lines += ["whole = " + " and ".join(["tile_cols == cols"] + dense),
                              f"rs = tile_cols if whole else tile_cols + {SCRATCH_PAD}"]
                # a panel may be taller by its shift (_panel_rows)
                lines.append(f"area = (tile_rows + {_line_rows(gathered, in_chains)}) * rs")
                lines += [f"scr{k} = np.empty((n_blocks, area), a{k}.dtype)" for k in gathered]
                if scatter:
                    lines.append("scro = np.empty((n_blocks, area), out.dtype)")
                # from FAR_BYTES spanned by the operands (host_launch: beyond the last-level cache)
                # the register-transpose gathers prefetch the next block's source rows
                # (transpose_block's ahead). Measured (A/B in one process, 2-core EPYC): 4-14 %
                # faster at 1e7-1e8 elements, 0-8 % slower at 1e5-1e6, whose lines come from cache
                span = " + ".join(f"{x}.size * {x}.itemsize" for x in arr)
                lines.append(f"far = 1 if {span} >= {FAR_BYTES} else 0")
                lines += [f"for b in {rng}(n_blocks):",
                          "    pstart = b * block_former",
                          "    pstop = min(pstart + block_former, n_panels)"]
                lines += [f"    s{k} = scr{k}[b]" for k in gathered]
                if scatter:
                    lines.append("    so = scro[b]")
                lines += ["    for p in range(pstart, pstop):",
                          "        outer = p // per_outer"]
                lines += [f"        base{k} = offsets[{k}]" for k in ops]
                if segmented:  # outer counts groups of seg slices of dim ndim - 3, then the dims above
                    lines += ["        rem = outer // groups",
                              "        i3 = (outer - rem * groups) * seg",
                              "        nseg = min(seg, above - i3)"]
                    lines += [f"        base{k} += i3 * s3_{k}" for k in ops]
                else:
                    lines += ["        rem = outer"]
                lines += [f"        for d in range(ndim - {4 if segmented else 3}, -1, -1):",
                          "            i_d = rem % dims[d]",
                          "            rem //= dims[d]"]
                lines += [f"            base{k} += i_d * strides[{k}, d]" for k in ops]
                lines += _panel_rows(gathered, in_chains)
                lines += ["        for c0 in range(0, cols, tile_cols):",
                          "            run = min(c0 + tile_cols, cols) - c0"]
                for k in gathered:
                    lines += _indent(_gather(k, segmented), 3)
                # the tile's rows, each a run of the operands (segmented: across its slices, which
                # every operand but the gathered ones continues, host_launch._segments); a tile of
                # whole rows held back to back is one run (its c0 is 0, its scratch unpadded)
                if segmented:
                    lines += ["            n_runs = nr", "            length = nseg * run"]
                else:
                    lines += ["            n_runs = 1 if whole else nr", "            length = nr * run if whole else run"]
                lines += ["            for r in range(n_runs):", "                srow = r * rs"]
                lines += [f"                q{k} = base{k} + (r0 + r) * sr{k} + c0 * si{k}" for k in ops]
                lines += _indent(_loop("j", "length", p_loads, code, p_store, hw, screened, p_hoisted), 4)
                if scatter:
                    lines.append("            scatter_tile(out, base0 + r0 * sr0 + c0 * si0, sr0, si0, so, rs, nr, run)")
                lines.append("return 0")
        funcs.append("\n".join([deco, sig] + _indent(lines, 1)))
    text = "\n".join(funcs)
    helpers = {h for h in _numba_support.SUPPORT_NAMES if re.search(rf"\b{h}\(", text)}
    header = _HEADER.format(version=_SUPPORT_VERSION, helpers=", ".join(sorted(helpers)))
    return header + "\n\n" + "\n\n\n".join(funcs) + "\n"


# ---- programs: a fused chain, runnable on any layout ------------------------------------------

_COPY_KINDS = ("Contiguous", "Cast", "ViewCopy")


def _dedupe(chain) -> tuple:
    out = []
    for dt in chain:
        dt = np.dtype(dt)
        if not out or out[-1] != dt:
            out.append(dt)
    return tuple(out)


class Program:
    """One fused elementwise pass: ``inputs`` (tensor names, in kernel order) loaded through their
    dtype chains, the DAG, and the store chain into the tensor ``output``. Scalar values are
    arguments (``run(..., scalars)``), so one compiled program serves every slope or bound."""

    def __init__(self, dag: cg.Node, inputs: tuple, in_chains: tuple, store_chain: tuple, output: str,
                 scalar_names: tuple, label: str):
        self.dag = dag
        self.inputs = inputs
        self.in_chains = in_chains
        self.store_chain = store_chain
        self.output = output
        self.scalar_names = scalar_names
        self.label = label
        # inputs stored as float16/bfloat16 and only widened (exact): sign tests and compares
        # against scalars on their bits (numba_codegen._sign_test, _bits_compare)
        raw = {k: chain[0] for k, chain in enumerate(in_chains)
               if chain[0] in cg.HALVES and all(dt in (cg.F32, cg.F64) for dt in chain[1:])}
        self.code = cg.element_source(dag, store_chain, raw)
        for chain in in_chains:  # every conversion must lower now, not at first run
            cg.load_source("a", "i", chain)
        self.itemsizes = (store_chain[-1].itemsize,) + tuple(c[0].itemsize for c in in_chains)
        self._fns: dict[tuple, object] = {}
        self._launches: dict[tuple, tuple] = {}
        _LIVE_PROGRAMS.add(self)

    def function(self, launch: HostLaunch, parallel: bool):
        """The compiled walker for ``launch``'s walker, modes and tiles (generated and imported on
        first use; numba compiles or loads its on-disk cache at the first call)."""
        segmented = launch.seg > 1
        key = (launch.walker, launch.modes, segmented, parallel, STREAM_MIN_BYTES)
        fn = self._fns.get(key)
        if fn is None:
            source = generate(self.code, self.in_chains, self.store_chain[-1], self.scalar_names,
                              launch.walker, launch.modes, STREAM_MIN_BYTES, segmented)
            module = _load_module(source)
            fn = module.kernel_parallel if parallel else module.kernel_serial
            self._fns[key] = fn
        return fn

    def launch_for(self, out: np.ndarray, ins: list, n_threads: int) -> HostLaunch:
        """The host launch these arrays get on ``n_threads`` (raises Fallback for layouts it
        cannot address)."""
        shape = out.shape
        operands = [_aligned_strides(out, shape)] + [_aligned_strides(a, shape) for a in ins]
        return plan_launch(shape, operands, self.itemsizes, n_threads)

    def planned(self, out: np.ndarray, ins: list) -> tuple[HostLaunch, int]:
        """The launch under the thread rule, and its work (``work_bytes``): planned for one
        thread, and again for the pool when the work pays for waking it."""
        launch = self.launch_for(out, ins, 1)
        work = work_bytes(out, ins, launch)
        if use_parallel(work):
            launch = self.launch_for(out, ins, threads_for(work))
        return launch, work

    def run(self, arrays: dict, scalars: tuple) -> None:
        """Run on live arrays (``arrays[name]``). ``out`` may be exactly an input's view (in
        place); if it meets an input's memory any other way the kernel refuses (it compares
        address ranges first) and the result goes through a temporary, as NumPy would."""
        out = arrays[self.output]
        ins = [arrays[name] for name in self.inputs]
        key = (numba.get_num_threads(), out.shape, out.strides, tuple((a.shape, a.strides) for a in ins))
        cached = self._launches.get(key)
        if cached is None:
            cached = self._prepare(out, ins)
            if len(self._launches) > 256:
                self._launches.clear()
            self._launches[key] = cached
        launch, geometry, check, fn = cached
        if self.call(fn, launch, geometry, out, ins, scalars, check):
            tmp = np.empty(out.shape, out.dtype)
            tmp_launch, geometry, _, tmp_fn = self._prepare(tmp, ins)
            self.call(tmp_fn, tmp_launch, geometry, tmp, ins, scalars, 0)
            np.copyto(out, tmp)

    def forget_launches(self) -> None:
        """Drop the launches ``run`` planned (their thread decisions), as after a fork."""
        self._launches.clear()

    def bind(self, arrays: dict, scalars: tuple):
        """``run`` prepared once for these very arrays: a no-argument call. For an aclnn launch,
        whose operands (device views, workspace slots) are fixed when it is queued."""
        out = arrays[self.output]
        ins = [arrays[name] for name in self.inputs]
        launch, geometry, check, fn = self._prepare(out, ins)
        args = self.arguments(launch, geometry, out, ins, scalars, check)
        pooled = fn is self.function(launch, True)  # the prange variant (same module: no compile)
        fn = entry_point(fn, args)

        def call() -> None:
            # bound to the pool before a fork (see _after_fork_in_child): plan anew; or out meets
            # an input other than exactly: run's temporary path
            if (_FORKED and pooled) or fn(*args):
                self.run(arrays, scalars)
        return call

    def _prepare(self, out: np.ndarray, ins: list) -> tuple:
        """``(launch, geometry, check, compiled walker)`` for arrays laid out like these
        (``planned``; ``check``: ``overlap_check``)."""
        launch, work = self.planned(out, ins)
        return (launch, launch_arrays(launch), overlap_check(out, ins),
                self.function(launch, use_parallel(work)))

    def call(self, fn, launch: HostLaunch, geometry, out, ins, scalars: tuple, check: int) -> int:
        return fn(*self.arguments(launch, geometry, out, ins, scalars, check))

    @staticmethod
    def arguments(launch: HostLaunch, geometry, out, ins, scalars: tuple, check: int) -> tuple:
        """The kernel's arguments for this launch: operands, scalars, the walk."""
        plan = launch.plan
        bases = (base(out),) + tuple(base(a) for a in ins)
        if launch.walker == "flat":
            return (*bases, *scalars, plan.n_blocks, plan.block_former, plan.numel, plan.tile, check)
        if launch.walker == "rows":
            return (*bases, *scalars, geometry, plan.n_blocks, plan.block_former, plan.numel, plan.tile, check)
        return (*bases, *scalars, geometry, plan.n_blocks, plan.block_former, plan.numel, launch.tile_rows,
                launch.tile_cols, launch.seg, check)


def entry_point(fn, sample: tuple):
    """The machine-code entry of the numba dispatcher ``fn`` for arguments typed like ``sample``:
    a call then skips numba's per-call type dispatch (about 0.2 us of a 4-element call).

    Sound only where every later call passes arguments of the same numba types: a bound launch
    (``Program.bind``: the very arrays of ``sample``), or a plan-cache hit, whose key fixes dtype,
    shape and strides (so ndim and layout), alignment and writeability of each array
    (``_fastpath``). The entry takes a float16/bfloat16 array where the kernel reads uint16 bits:
    it unboxes an array by its data pointer, shape, strides and itemsize (checked), which is what
    ``.view(np.uint16)`` would give it, without the view's 0.12 us. A numba that checked more
    would raise TypeError there, and a raising hit is a miss (the full path runs). Falls back to
    the dispatcher itself."""
    try:
        return fn.compile(tuple(fn.typeof_pyval(a) for a in sample))
    except Exception:  # noqa: BLE001 - a numba without this interface: dispatch per call
        log.debug("no numba entry point for %s; dispatching per call", fn, exc_info=True)
        return fn


# A panels tile's scratch rows lie this many elements further apart than its columns (unless the
# tile is one run of whole rows): rows 2 KiB apart (512 float32 columns) fall in two of L1's 64
# sets, and the gather into them then ran at 0.2 or at 0.4 ns per element depending on where the
# process's allocations put the scratch against the source (float32 100 x 1000, one thread, six
# processes each); 32 more elements (64-256 B, whole cache lines) spread the rows over the sets.
SCRATCH_PAD = 32

# Below PARALLEL_MIN_BYTES of work (``work_bytes``) a launch stays on the calling thread: waking the
# pool costs more than a second thread saves. Where that turns depends on the host (how fast one
# core moves data from L2, L3 and memory, what waking the pool costs) and on OMP_WAIT_POLICY, so it
# is measured once per process, on the first launch that asks (``parallel_min_bytes``): a copy
# moving 1, 1.41, 2, 2.83, ... MiB is timed on the calling thread and on the pool, and the first
# size where the pool is PARALLEL_GAIN times faster is the threshold (the top of PARALLEL_MIN_RANGE
# if none is; the lower of two scans; ~40-50 ms). A model from the wake-up round trip alone (an
# empty parallel region) missed by 2-4x across hosts: with OMP_WAIT_POLICY=PASSIVE a 2-vCPU Zen 4
# EPYC VM woke its pool in 40-80 us and ran 12 MB launches 1.3-1.7x faster on one thread; a Zen 3
# one woke in 18-26 us, tied at 3.6 MB and gained 1.2-1.5x from 6 MB (another Zen 3 VM: 82-110 us,
# 11.3 MiB scanned, and 1.41 MiB with GOMP_SPINCOUNT=30000 instead); an AVX-512 Xeon VM woke in
# 43-81 us yet gained 1.4x at 12 MB (one of its cores moves ~27 GB/s out of L3), and measured 8-11.3
# MiB this way (with the pool's copy still scalar, below: the threshold was then too high). A
# 2-vCPU Zen 4 VM, scanning with both copies vectorized, answers 8-11.3 MiB (the pool's copy
# 0.73-1.16x as fast as the calling thread's at 5.7-8 MiB, 1.09-1.12x at 11.3, 1.6-1.9x at
# 16-22.6). Counted in bytes moved, not output bytes, so a broadcast launch (a small input, a
# large output) and a contiguous one of equal traffic are treated alike. OPSNN_PARALLEL_MIN_BYTES
# sets it instead (no measuring).
PARALLEL_GAIN = 1.1
PARALLEL_MIN_RANGE = (1 << 20, 64 << 20)
PARALLEL_MIN_UNMEASURED = 16 << 20  # a one-thread pool, or one that cannot be timed
PARALLEL_MIN_BYTES: int | None = settings.env_bytes("OPSNN_PARALLEL_MIN_BYTES", None)


# Both index with unsigned integers, as the walkers do: a signed index whose sign numba cannot
# prove (a block's start) gets a wraparound test for negative values, which kept the loop scalar
# (the pool's copy then ran 2x slower than the calling thread's at every size, 2 to 128 MiB, on a
# Zen 4 VM whose walkers gained 1.2-1.6x from a second thread, and the scan answered 64 MiB).
@numba.njit(parallel=True, nogil=True, cache=True)
def _copy_parallel(dst, src, blocks):  # one block per thread, as the walkers' host plans
    step = -(-src.size // blocks)
    for b in numba.prange(blocks):
        for i in range(np.uint64(b * step), np.uint64(min(src.size, (b + 1) * step))):
            dst[i] = src[i]
    return 0


@numba.njit(nogil=True, cache=True)
def _copy_serial(dst, src, blocks):  # blocks unused: called as _copy_parallel is
    for i in range(np.uint64(src.size)):
        dst[i] = src[i]
    return 0


def copy_times_us(moved: int, samples: int = 5) -> tuple[float, float]:
    """Median microseconds of a copy moving ``moved`` bytes (half read, half written) on the
    calling thread and on every pool thread: ``samples`` calls in a row each, after an untimed
    one (compiling or loading, first touch of the pages, the lines in the caches the variant
    leaves them in: alternating the two sample by sample moved every line between the cores'
    L2 each call, which made both 1.1-2.5x slower than in a loop)."""
    import time

    before = numba.get_num_threads()
    threads = numba.config.NUMBA_NUM_THREADS
    numba.set_num_threads(threads)
    try:
        src = np.ones(max(1, moved // 16))
        dst = np.empty_like(src)
        times = {_copy_serial: [], _copy_parallel: []}
        for fn, out in times.items():
            fn(dst, src, threads)
            for _ in range(samples):
                t0 = time.perf_counter()
                fn(dst, src, threads)
                out.append(time.perf_counter() - t0)
    finally:
        numba.set_num_threads(before)
    serial, parallel = (sorted(t)[samples // 2] * 1e6 for t in times.values())
    return serial, parallel


def threshold_candidates() -> list[int]:
    """The sizes ``second_thread_pays_from`` tries: PARALLEL_MIN_RANGE in steps of sqrt(2)
    (1, 1.41, 2, 2.83, ... 45.25 MiB), bytes."""
    lo, hi = PARALLEL_MIN_RANGE
    return [int(lo * 2 ** (k / 2)) for k in range(2 * (hi // lo).bit_length() - 2)]


def second_thread_pays_from() -> int:
    """Bytes moved from which the pool copies PARALLEL_GAIN times faster than the calling thread
    (``copy_times_us``): the first of ``threshold_candidates`` that does, the top of
    PARALLEL_MIN_RANGE if none does. Scanned twice, the smaller answer kept (the second scan
    stops below the first's): a stolen vCPU or another tenant's burst only ever makes the pool
    look slower, and on a shared 2-vCPU VM of BENCHMARKS.md one scan in a few answered 2-3x
    high (22.6 MiB where others gave 8-11.3), which kept 12 MB launches on one thread (0.73x
    torch). A too-low answer costs little: at 4-6 MiB the two variants tie."""
    found = PARALLEL_MIN_RANGE[1]
    for _ in range(2):
        for size in threshold_candidates():
            if size >= found:
                break
            serial, parallel = copy_times_us(size)
            if parallel * PARALLEL_GAIN <= serial:
                found = size
                break
    return found


def _measured_parallel_min_bytes() -> int:
    if numba.config.NUMBA_NUM_THREADS < 2:
        return PARALLEL_MIN_UNMEASURED
    try:
        return second_thread_pays_from()
    except Exception as exc:  # noqa: BLE001 - a pool that cannot start: run as before measuring
        log.warning("numba backend: could not time the thread pool (%s); using %d bytes", exc,
                    PARALLEL_MIN_UNMEASURED)
        return PARALLEL_MIN_UNMEASURED


def parallel_min_bytes() -> int:
    """PARALLEL_MIN_BYTES (bytes of work), measured on first use (see above) unless set;
    PARALLEL_MIN_UNMEASURED (16 MiB), never measured, where the pool has one thread (it then
    only picks the ``prange`` variant, ``use_parallel``) or cannot be timed."""
    global PARALLEL_MIN_BYTES
    if PARALLEL_MIN_BYTES is None:
        with _LOCK:
            if PARALLEL_MIN_BYTES is None:
                PARALLEL_MIN_BYTES = _measured_parallel_min_bytes()
                log.info("numba backend: launches of %d bytes or more go to the thread pool", PARALLEL_MIN_BYTES)
    return PARALLEL_MIN_BYTES


# From this many output bytes, the flat and rows walkers write a dense 4/8-byte output that
# meets no input with non-temporal stores (``streams_output``, ``_stream_source``): such an
# output leaves the last level cache anyway, and each tile is computed in L1 and then written
# in whole lines, without reading them first. Default: twice the 32 MiB L3 of the EPYC VMs it was
# tuned on (at 40 MB, f32 1e7, an output written again and again still partly hits L3 with
# ordinary stores: broadcast streamed measured 0.75x there, 0.65-0.87x on the Xeon VM of
# BENCHMARKS.md, contiguous the same either way). Contiguous, on that Xeon (LeakyReluBackward
# out=, 2 threads, three processes each): float32 1e8 40.1-40.8 -> 37.4-37.7 ms, float64 1e7
# 7.5-7.9 -> 7.0-7.5 ms; on the EPYC a streamed contiguous output had measured 0.6-0.9x (an
# earlier kernel, one thread). Override with OPSNN_STREAM_MIN_BYTES.
STREAM_MIN_BYTES = settings.env_bytes("OPSNN_STREAM_MIN_BYTES", 64 << 20)


def moved_bytes(out: np.ndarray, ins: list) -> int:
    """Bytes a launch moves: the output plus the memory each input spans (a broadcast input
    spans only its own elements, however large the output)."""
    return out.size * out.itemsize + sum(_span_bytes(a) for a in ins)


def _span_bytes(a: np.ndarray) -> int:
    if a.size == 0:
        return 0
    return sum((d - 1) * abs(s) for d, s in zip(a.shape, a.strides)) + a.itemsize


# An input read across its memory order (a transposed view: the panels walker gathers it through
# register transposes) costs about this many dense bytes per byte. Measured (2-core EPYC, one
# thread, LeakyReluBackward 1000 x 1000, self transposed): float32 230 us against 110 us
# contiguous, float16 123 against 61: the 4 or 2 MB gathered cost what ~13 or ~7 MB moved
# densely do. So such a launch goes to two threads from about a third of the bytes: float32
# 850 x 850 147 -> 125 us, 1000 x 1000 230 -> 179 us. Short rows gathered a row at a time
# (host_launch._short_rows) count the same, over a span that holds the gaps between their rows:
# a float32 [:, :2] of 4 at 1e6 (40 MB counted) took 380-435 us on one thread, 269-290 on two.
GATHER_WEIGHT = 4


def work_bytes(out: np.ndarray, ins: list, launch: HostLaunch) -> int:
    """A launch's work in dense bytes moved, what the serial/parallel rule compares with
    ``PARALLEL_MIN_BYTES``: ``moved_bytes``, each input the launch gathers
    (``HostLaunch.gathered``) counted ``GATHER_WEIGHT`` times. ``ins`` in the kernel's order."""
    gathered = sum(_span_bytes(a) for a, g in zip(ins, launch.gathered) if g)
    return moved_bytes(out, ins) + (GATHER_WEIGHT - 1) * gathered


def threads_for(work: int) -> int:
    """Worker threads the host plan may use for a launch of ``work`` bytes (``work_bytes``)."""
    return numba.get_num_threads() if use_parallel(work) else 1


def use_parallel(work: int) -> bool:
    """Whether to run the ``prange`` variant of a walker. Above PARALLEL_MIN_BYTES always, even
    for one block: numba compiles a parfor body as its own function, which LLVM optimises better
    (the panels walker runs up to 1.6x faster), for ~1 us more launch cost."""
    if _FORKED:  # a forked child of a process whose OpenMP pool had started (above)
        return False
    lo, hi = PARALLEL_MIN_RANGE
    if PARALLEL_MIN_BYTES is None and not lo <= work < hi:  # the same whatever is measured
        return work >= hi
    return work >= parallel_min_bytes()


def overlap_check(out: np.ndarray, ins: list) -> int:
    """A walker's ``check`` argument for an ``out`` the caller gave: bit 0 has the kernel compare
    out's address range with each input's first, bit k + 1 allows input k to be exactly out's
    view (in place)."""
    return 1 | sum(1 << (k + 1) for k, a in enumerate(ins)
                   if a.shape == out.shape and a.strides == out.strides and a.dtype == out.dtype)


def launch_arrays(launch: HostLaunch) -> np.ndarray | None:
    """The geometry of a strided launch as the walkers take it: one int64 array of the dims, the
    element strides of each operand (out first) and their offsets (``_geometry_source``); None
    for the flat walker, which takes none. One array, not three: each array argument costs a
    4-element call ~0.06 us to unbox."""
    if launch.walker == "flat":
        return None
    parts = [*launch.dims, *(s for lay in launch.operands for s in lay.strides),
             *(lay.offset for lay in launch.operands)]
    return np.array(parts, dtype=np.int64)


def _aligned_strides(a: np.ndarray, shape) -> tuple:
    """``a``'s element strides over the broadcast ``shape`` (0 on broadcast dims)."""
    item = a.itemsize
    pad = len(shape) - a.ndim
    out = [0] * pad
    for d, s, full in zip(a.shape, a.strides, shape[pad:]):
        if s % item:
            raise Fallback("a byte stride that is not a whole number of elements")
        out.append(0 if d == 1 and full != 1 else s // item)
    return tuple(out)


def dense_order(a: np.ndarray) -> tuple | None:
    """The axis order in which ``a`` is one C-contiguous block (a transposed view: its axes
    reversed), or None: ``a`` has a negative stride or gaps. ``a.transpose(order).reshape(-1)``
    (equally ``a.ravel("K")``) is then a view of its memory, lowest address first."""
    if a.ndim and min(a.strides) < 0:
        return None
    order = tuple(sorted(range(a.ndim), key=lambda d: -a.strides[d]))
    return order if a.transpose(order).flags.c_contiguous else None


def base(a: np.ndarray) -> np.ndarray:
    """A 1-D view of ``a``'s memory from its lowest-addressed element (f16/bf16 as uint16)."""
    if not a.flags.c_contiguous and a.size and 0 in a.strides:
        # broadcast: the memory of one slice across the repeated dims, often dense ((32, 1)
        # broadcast to (32, 32): 7.6 -> 2.8 us a call)
        a = a[tuple(0 if s == 0 else slice(None) for s in a.strides) + (Ellipsis,)]
    if a.dtype in cg.HALVES:
        a = a.view(np.uint16)
    if a.flags.c_contiguous:
        return a.reshape(-1)
    if min(a.strides) < 0:
        a = a[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in a.strides)]
    return _numba_support.span_view(a)


def span_entry(template: np.ndarray):
    """``base`` for arrays laid out like ``template`` (every stride > 0, not C-contiguous): the
    machine-code entry of ``span_view`` for its type (``entry_point``), which takes float16 and
    bfloat16 arrays as their bits. For a plan-cache hit, whose key fixes that layout: a gapped
    (32, 32) operand 0.9 -> ~0.3 us."""
    sample = template.view(np.uint16) if template.dtype in cg.HALVES else template
    return entry_point(_numba_support.span_view, (sample,))


def scalar_values(step) -> tuple:
    """The Kernel step's scalars as the compiled code takes them: ``compute.type(value)`` (what
    the NumPy backend passes), f16/bf16 as bits."""
    compute = dtypes.to_numpy(step.compute)
    values = []
    for _, value in step.scalars:
        v = compute.type(value)
        values.append(np.uint16(np.asarray(v).view(np.uint16)) if compute in cg.HALVES else v)
    return tuple(values)


_PROGRAM_CACHE: dict[tuple, Program | None] = {}


def _program_for(step, inputs: tuple, src_chains: list, store_tail: tuple, output: str) -> Program:
    """The (cached) Program of Kernel ``step`` reading ``inputs`` through ``src_chains`` (storage
    dtype first, up to the dtype the step receives) and storing along ``store_tail``."""
    compute = dtypes.to_numpy(step.compute)
    names = tuple(name for name, _ in step.scalars)
    key = (step.kernel, step.native, compute, names, inputs, tuple(src_chains), store_tail, output)
    if key in _PROGRAM_CACHE:
        prog = _PROGRAM_CACHE[key]
        if prog is None:
            raise cg.Unsupported("cached: not compilable")
        return prog
    try:
        kernel_in = [chain[-1] if native else compute for chain, native in zip(src_chains, step.native)]
        in_chains = tuple(_dedupe(chain + (k,)) for chain, k in zip(src_chains, kernel_in))
        for chain in in_chains:
            if any(dt not in cg.STORE_DTYPES for dt in chain):
                raise cg.Unsupported(f"dtype chain {chain}")
        dag = cg.trace(step.kernel, numpy_backend.OPS, kernel_in, {name: compute for name in names})
        store_chain = _dedupe((dag.dtype,) + store_tail)
        if any(dt not in cg.STORE_DTYPES for dt in store_chain):
            raise cg.Unsupported(f"store chain {store_chain}")
        prog = Program(dag, inputs, in_chains, store_chain, output, names, step.name or "kernel")
    except cg.Unsupported:
        _PROGRAM_CACHE[key] = None
        raise
    _PROGRAM_CACHE[key] = prog
    return prog


def _fuse(plan, input_dtypes: dict):
    """(kernel step, input names, source chains, store tail) of a recorded chain; raises
    Unsupported when the chain has another form."""
    kernel_steps = [s for s in plan.steps if s.kind == "Kernel"]
    if len(kernel_steps) != 1 or any(s.kind not in _COPY_KINDS + ("Kernel",) for s in plan.steps):
        raise cg.Unsupported("not a single-kernel copy chain")
    kernel = kernel_steps[0]
    k_index = plan.steps.index(kernel)
    slot_dtype = {s.index: dtypes.to_numpy(s.dtype) for s in plan.slots}
    producer = {}
    for i, step in enumerate(plan.steps):
        if step.dst.tensor is not None and step.dst.tensor != "out":
            raise cg.Unsupported(f"a step writes tensor {step.dst.tensor}")
        if step.dst.slot is not None:
            producer[step.dst.slot] = (i, step)
    inputs, src_chains = [], []
    for ref in kernel.srcs:  # back to a tensor through copies recorded before the kernel
        chain = []
        while ref.slot is not None:
            i, step = producer.get(ref.slot, (None, None))
            if step is None or i > k_index or step.kind not in _COPY_KINDS:
                raise cg.Unsupported("a kernel input is not produced by a copy before it")
            chain.insert(0, slot_dtype[ref.slot])
            ref = step.srcs[0]
        if ref.tensor is None or ref.tensor == "out":
            raise cg.Unsupported("a kernel input is not an input tensor")
        inputs.append(ref.tensor)
        src_chains.append(_dedupe((input_dtypes[ref.tensor],) + tuple(chain)))
    cur = kernel.dst
    tail = [np.dtype(input_dtypes["out"]) if cur.tensor else slot_dtype[cur.slot]]
    for step in plan.steps[k_index + 1:]:  # copies of the result, ending in out
        if step.kind not in _COPY_KINDS or step.srcs[0] != cur:
            raise cg.Unsupported("a step after the kernel is not a copy of its result")
        cur = step.dst
        tail.append(dtypes.to_numpy(step.dtype))
    if cur.tensor != "out":
        raise cg.Unsupported("the chain does not end in out")
    return kernel, tuple(inputs), src_chains, _dedupe(tail)


def program(plan, input_dtypes: dict):
    """``(Program, scalar values)`` fusing ``plan``'s chain, cached per plan object; None when it
    cannot be compiled (the engine then runs the steps one by one; logged once).

    ``input_dtypes``: NumPy dtypes of the bound input tensors (a plan records only the dtypes
    it converts to)."""
    hit = _PROGRAMS.get(id(plan))
    if hit is not None and hit[0] is plan:
        return hit[1]
    bound = None
    try:
        kernel, inputs, src_chains, tail = _fuse(plan, input_dtypes)
        bound = (_program_for(kernel, inputs, src_chains, tail, "out"), scalar_values(kernel))
    except cg.Unsupported as exc:
        kernel = next((s for s in plan.steps if s.kind == "Kernel"), None)
        _warn_once((getattr(kernel, "kernel", None), str(exc)), f"{plan.op}: cannot compile ({exc})")
    with _LOCK:
        if len(_PROGRAMS) > 4096:
            _PROGRAMS.clear()
        _PROGRAMS[id(plan)] = (plan, bound)
    return bound


def run_fused(bound, arrays: dict) -> None:
    """Run a fused program after phase 1 checked aliasing (out is an input's exact view or shares
    no element with it). Raises Fallback for layouts the walkers cannot address."""
    prog, scalars = bound
    prog.run(arrays, scalars)


_STEPS: dict[int, tuple] = {}  # id(step) -> (step, dtypes, Program or None, scalars): plans are cached


def launch(step, srcs: list, dst: np.ndarray) -> None:
    """The launch contract (see ``kernels``): one Kernel step on arrays, compiled."""
    prog, scalars = _step_program(step, srcs, dst)
    if prog is not None and dst.size:
        try:
            prog.run({"out": dst, **{f"in{k}": s for k, s in enumerate(srcs)}}, scalars)
            return
        except Fallback as exc:
            _warn_once(("layout", str(exc)), f"{step.name}: {exc}")
    numpy_backend.launch(step, srcs, dst)


def step_program(step, srcs: list, dst: np.ndarray) -> tuple | None:
    """``(Program, scalar values)`` that runs a Kernel / Contiguous / Cast / ViewCopy step on
    arrays of these dtypes (its operands: ``dst`` as the program's output, ``srcs`` as its inputs
    in order), or None where that cannot be compiled (``launch`` / ``copy`` then run it)."""
    if step.kind == "Kernel":
        prog, scalars = _step_program(step, srcs, dst)
    else:
        src = srcs[0]
        prog = _copy_program(np.dtype(src.dtype), np.dtype(dst.dtype)) if dst.shape == src.shape else None
        scalars = ()
    return None if prog is None else (prog, scalars)


def bind_step(step, srcs: list, dst: np.ndarray):
    """A Kernel / Contiguous / Cast / ViewCopy step on these very arrays as a no-argument call,
    prepared once (``Program.bind``); what cannot be compiled runs as ``launch`` / ``copy`` would."""
    bound = step_program(step, srcs, dst)
    if bound is not None and dst.size:
        prog, scalars = bound
        try:
            return prog.bind({prog.output: dst, **dict(zip(prog.inputs, srcs))}, scalars)
        except Fallback as exc:
            _warn_once(("layout", str(exc)), f"{step.name or step.kind}: {exc}")

    def fallback() -> None:
        with np.errstate(all="ignore"):
            if step.kind == "Kernel":
                launch(step, srcs, dst)
            else:
                copy(dst, srcs[0])
    return fallback


def _step_program(step, srcs: list, dst: np.ndarray) -> tuple:
    """(Program or None, scalar values) of a Kernel step for these dtypes, cached per step."""
    dts = (dst.dtype,) + tuple(s.dtype for s in srcs)
    hit = _STEPS.get(id(step))
    if hit is not None and hit[0] is step and hit[1] == dts:
        prog, scalars = hit[2], hit[3]
    else:
        try:
            prog = _program_for(step, tuple(f"in{k}" for k in range(len(srcs))),
                                [(np.dtype(s.dtype),) for s in srcs], (np.dtype(dst.dtype),), "out")
        except cg.Unsupported as exc:
            _warn_once((step.kernel, str(exc)), f"{step.name}: cannot compile ({exc})")
            prog = None
        scalars = scalar_values(step)
        if len(_STEPS) > 4096:
            _STEPS.clear()
        _STEPS[id(step)] = (step, dts, prog, scalars)
    return prog, scalars


_COPIES: dict[tuple, Program | None] = {}


def _copy_program(src: np.dtype, dst: np.dtype) -> Program | None:
    key = (src, dst)
    if key not in _COPIES:
        try:
            dag = cg.Node("input", (), src, 0)
            _COPIES[key] = Program(dag, ("src",), ((src,),), _dedupe((src, dst)), "out", (), "Copy")
        except cg.Unsupported as exc:
            _warn_once(("copy", key), f"copy {src} -> {dst}: {exc}")
            _COPIES[key] = None
    return _COPIES[key]


def copy(dst: np.ndarray, src: np.ndarray) -> None:
    """A Contiguous / Cast / ViewCopy step, compiled: ``dtypes.cast_into`` semantics (one rounding
    to nearest even), any strides on either side, no temporaries."""
    prog = _copy_program(np.dtype(src.dtype), np.dtype(dst.dtype))
    if prog is not None and dst.size and dst.shape == src.shape:
        try:
            prog.run({"out": dst, "src": src}, ())
            return
        except Fallback as exc:
            _warn_once(("layout", str(exc)), f"copy: {exc}")
    dtypes.cast_into(dst, src)


def host_launch(plan, arrays: dict) -> tuple[HostLaunch, int] | None:
    """The HostLaunch the fused program of ``plan`` uses for ``arrays`` and the threads it may
    use (``Program.planned``, for ``opsnn tiling``); None when there is no fused program."""
    bound = program(plan, {k: v.dtype for k, v in arrays.items()})
    if bound is None:
        return None
    prog = bound[0]
    launch, work = prog.planned(arrays[prog.output], [arrays[n] for n in prog.inputs])
    return launch, threads_for(work)


def get_num_threads() -> int:
    return numba.get_num_threads()


def set_num_threads(n: int) -> None:
    numba.set_num_threads(n)


__all__ = ["NAME", "Fallback", "HostLaunch", "Program", "base", "bind_step", "step_program", "dense_order",
           "cache_dir", "copy", "entry_point", "get_num_threads", "host_launch", "launch",
           "launch_arrays", "program", "run_fused", "scalar_values", "set_num_threads",
           "span_entry", "moved_bytes", "work_bytes", "GATHER_WEIGHT", "PLANNED_THREADS_BIT",
           "overlap_check", "threads_for", "use_parallel", "PARALLEL_MIN_BYTES",
           "parallel_min_bytes", "second_thread_pays_from", "threshold_candidates", "copy_times_us"]
