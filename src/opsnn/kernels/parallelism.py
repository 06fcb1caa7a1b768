"""How many threads a launch uses: the serial/parallel rule of the compiled walkers, and the
life of numba's thread pool under it (started at import, left alone by a forked child).

A launch's work is the bytes it moves (``work_bytes``: gathered inputs weigh more); from
``PARALLEL_MIN_BYTES`` of work it runs the ``prange`` walker over one block per pool thread
(``use_parallel``, ``threads_for``), below it the serial walker on the calling thread. The
threshold is measured once per process on the host (``parallel_min_bytes``) unless
``OPSNN_PARALLEL_MIN_BYTES`` sets it.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys

import numba
import numpy as np

from .._core import forksafe, settings
from . import kernel_cache
from .host_launch import HostLaunch

kernel_cache.claim_package_sources()  # before the cache=True functions below

log = logging.getLogger("opsnn")

_LOCK = forksafe.rlock()


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


def _pool_from_a_parent() -> bool:
    """Whether numba's GNU OpenMP pool was started before opsnn was imported, in a process that
    ``multiprocessing`` started: a fork-started worker whose parent had run numba's own parallel
    code (a breaker: the worker was killed at its first large opsnn launch, and Pool.map hung).
    opsnn's at-fork handler below was not registered then, so this is all it can tell: a spawn
    or forkserver worker that started numba's pool itself before importing opsnn is taken for
    one too (its launches then run on one thread), and a plain ``os.fork`` of such a process is
    not seen (README)."""
    import multiprocessing

    return multiprocessing.parent_process() is not None and _omp_pool_started()


def _omp_pool_started() -> bool:
    """Whether numba's pool has started and is GNU OpenMP's, the one a forked child cannot use
    (tbb and workqueue pools survive a fork)."""
    try:
        return numba.threading_layer() == "omp"
    except ValueError:  # no pool started yet
        return False


# A forked child cannot use numba's pool where it is GNU OpenMP (the ``omp`` threading layer, the
# one installed here): its first parallel region ends the child ("Terminating: fork() called from a
# process already using GNU OpenMP, this is unsafe"), and fork is how ``multiprocessing`` starts
# workers on Linux (a breaker: a Pool whose parent had made one opsnn call hung, its worker gone).
# So a child runs every launch on its calling thread (``use_parallel``), drops the launches planned
# before the fork, and gives its thread one pool thread: a compiled call of ``_fastpath`` (a
# plan-cache entry, an aclnn launch's bound call) whose launch is a pool one replans on the serial
# walker (its REPLAN; it tests FORKED first, as a launch planned for one pool thread passes the
# planned-thread test of ``walker_source._check_source``), and a step bound to the pool before the
# fork (a repeatable aclnn executor, ``numba_backend.Program.bind``) plans anew. Spawned or
# forkserver workers start afresh (unless they started numba's pool before importing opsnn:
# ``_pool_from_a_parent``, asked before this process's own pool starts).
FORKED = _pool_from_a_parent()
_start_pool()


def _one_thread_after_fork() -> None:
    """Run this forked process's GNU OpenMP runtime on one thread: numba's pool (opsnn's
    launches), and torch's intra-op threads where torch is loaded, as they are the same runtime:
    whichever of the two loads ``libgomp.so.1`` first, the other binds to it (one soname; torch
    loads its copy into the global scope). So once a parallel region had run in the parent,
    opsnn's or torch's own, torch's next parallel op in the child waited for good on the parent's
    threads (a breaker: a fork-started Pool's workers hung in ``F.leaky_relu`` after one large
    opsnn.torch call in the parent). opsnn cannot see whether one ran and assumes it, as it does
    for its own launches; torch then runs its ops on one thread, as in DataLoader's workers. A
    torch the child imports later reads its thread count from the runtime, so the runtime's own
    default is set to one thread too (``omp_set_num_threads``; a regression breaker: such a child
    still started torch on two threads and waited for good)."""
    numba.set_num_threads(1)
    for libgomp in _loaded_libgomps():
        try:
            ctypes.CDLL(libgomp).omp_set_num_threads(1)
        except (OSError, AttributeError):  # not loadable here, or no such symbol: nothing to set
            pass
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.get_num_threads() > 1:
            torch.set_num_threads(1)
    except AttributeError:  # torch half-imported by another thread when the process forked
        pass


def _loaded_libgomps() -> list[str]:
    """The paths of the GNU OpenMP runtimes mapped into this process (``/proc/self/maps``; one,
    or two where torch brought its copy: numba's pool then runs on one of them and torch on the
    same one, but which cannot be told from here)."""
    try:
        with open("/proc/self/maps") as maps:
            return sorted({line.split()[-1] for line in maps if "libgomp" in line and "/" in line})
    except OSError:  # no /proc (not Linux)
        return []


if FORKED:
    _one_thread_after_fork()  # as in a child forked after opsnn's import (below)


# numba compiles under one process-wide lock, and llvmlite makes every LLVM call under another: a
# fork waits for both (forksafe.waited_at_fork), numba's first, as a compile takes them. (A fork
# while another thread compiled had left the child holding one for a thread it does not have, and
# its first compile waited for good: a new user's breaker, a fork in a threaded server whose
# other thread made its first opsnn call; a later one, the compiler lock free between two
# kernels while the thread was inside LLVM.)
def _wait_at_fork_for_numba() -> None:
    try:
        from llvmlite.binding import ffi
        from numba.core.compiler_lock import global_compiler_lock
    except ImportError:  # another layout: forks as before
        return
    for owner in (global_compiler_lock, getattr(getattr(ffi, "lib", None), "_lock", None)):
        if hasattr(owner, "_lock"):
            forksafe.waited_at_fork(owner, "_lock")


_wait_at_fork_for_numba()


def _after_fork_in_child() -> None:
    """In a forked child: FORKED where the pool is GNU OpenMP (above); ``_LOCK`` is free there
    (``forksafe``). Registered, so run, before ``numba_backend``'s handler (that module imports
    this one first), which reads FORKED."""
    global FORKED
    if _omp_pool_started():
        FORKED = True
        _one_thread_after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)


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
PARALLEL_MIN_SET = PARALLEL_MIN_BYTES is not None  # by the environment, not measured (opsnn tiling says which)


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
    if FORKED:  # a forked child of a process whose OpenMP pool had started (above)
        return False
    lo, hi = PARALLEL_MIN_RANGE
    if PARALLEL_MIN_BYTES is None and not lo <= work < hi:  # the same whatever is measured
        return work >= hi
    return work >= parallel_min_bytes()


__all__ = ["FORKED", "GATHER_WEIGHT", "PARALLEL_MIN_BYTES", "PARALLEL_MIN_SET", "copy_times_us", "moved_bytes", "parallel_min_bytes",
           "second_thread_pays_from", "threads_for", "threshold_candidates", "use_parallel", "work_bytes"]
