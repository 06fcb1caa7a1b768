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
code is placed in a *walker* (``host_launch`` picks flat, rows or panels; ``walker_source`` writes
its source) which loops over the blocks of the host plan (``prange``, one block per thread) and
the tiles inside them. The generated module is written to a cache directory (``kernel_cache``:
``OPSNN_CACHE_DIR``, default ``~/.cache/opsnn``) and compiled with ``cache=True``, so a second
process loads machine code instead of compiling.
Nothing is compiled at import; each variant compiles on first use (the serial walker below
``parallelism.PARALLEL_MIN_BYTES`` of work, the ``prange`` one above).

Large dense 4/8-byte outputs (flat and rows walkers, from ``STREAM_MIN_BYTES``, not in place)
are computed tile by tile into an L1 scratch row and written with non-temporal stores
(``_numba_support.stream_copy``).

float16/bfloat16 are read and written as uint16 bits and computed in float32 with one
round-to-nearest-even (``_numba_support``), so results are bit-identical to the NumPy backend,
NaN payloads included, but for an arithmetic op whose two operands are both NaN (a NaN slope
times a NaN gradient, or times a NaN self in the forward leaky_relu): IEEE 754 leaves open which
payload that carries, and neither NumPy nor LLVM keeps an operand order for it, so it is either
operand's quiet NaN on both backends.
Expressions, dtypes or layouts it cannot lower run on the NumPy backend instead (logged once).

A Ctrl-C while numba compiles (or loads its disk cache) is held until that compile ends, then
raised, and a disk-cache entry numba cannot read is compiled anew (``guard_compiles``): either
had sent every later compile of the process, or that kernel in every later process, to the NumPy
backend.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import sys
import threading
import weakref

from . import numba_pool_refusal

# numba's pool asked for no thread (NUMBA_NUM_THREADS 0 or fewer): refused here, before ``import
# numba``, which refuses it in numba's own words alone ("Number of threads specified must be > 0.",
# a reviewer's: no variable named): the automatic choice then takes the NumPy backend with its one
# warning, `opsnn bench` and a $OPSNN_BACKEND naming numba refuse (exit 2)
_NO_THREAD = numba_pool_refusal()
if _NO_THREAD:
    raise ImportError(_NO_THREAD)

import numba  # (after the check above, which numba's import would preempt)
import numpy as np

# numba's typeof of an ndarray, at a process's first kernel call, reads np.ma, which NumPy 2 imports
# on first touch: made here, inside the backend's import that os.fork waits for (kernels._IMPORTING),
# where outside it a fork at that moment left the child waiting for good on numpy.ma's import lock
# (test_fork_while_another_thread_imports_the_kernel_backend: 1 run in 14 with both cores kept busy)
import numpy.ma
from numba.core.caching import NullCache
from numba.core.sigutils import normalize_signature

if numba.config.DISABLE_JIT:
    # numba then hands back every njit function uncompiled: the walkers have no .compile (each
    # launch logged that it ran on the NumPy backend) and parallelism's threshold measurement ran
    # its copy loops in Python (~16 s at the first launch of 1 MiB or more). Refused at load, so
    # the automatic choice takes the NumPy backend once, with its one warning, as for a
    # NUMBA_NUM_THREADS=0 or a threading layer that cannot start (numba refuses those itself).
    raise ImportError("NUMBA_DISABLE_JIT is set: numba compiles nothing, and the compiled backend "
                      "cannot run uncompiled; unset NUMBA_DISABLE_JIT (or set it to 0) to use it")

from .._core import dtypes, forksafe, interrupts, settings
from . import _numba_support, kernel_cache, numpy_backend, parallelism
from . import numba_codegen as cg
from .host_launch import HostLaunch, plan_launch
from .walker_source import PLANNED_THREADS_BIT, generate

NAME = "numba"
log = logging.getLogger("opsnn")

_LOCK = forksafe.rlock()
_MODULES: dict[str, object] = {}
_PROGRAMS: dict[int, tuple] = {}   # id(plan) -> (plan, Program or None)
_WARNED: set = set()
_LIVE_PROGRAMS: weakref.WeakSet = weakref.WeakSet()  # every Program, whose launches a fork drops


def _after_fork_in_child() -> None:
    """In a forked child where it must not use the pool (``parallelism.FORKED``, set by that
    module's handler, which runs first): no launch planned before the fork (they may be pool
    launches). (``_LOCK`` is free there: ``forksafe``.)"""
    if not parallelism.FORKED:
        return
    for program in list(_LIVE_PROGRAMS):
        program.forget_launches()
    from .. import _fastpath  # (imported here: _fastpath imports the kernels)
    _fastpath.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


class Fallback(Exception):
    """This launch cannot run compiled; the caller uses the NumPy backend."""


class CompileFailure(Fallback):
    """A walker that did not generate, import or compile (logged when it failed)."""


class CacheWriteError(Exception):
    """A generated walker's module could not be written to the kernel cache (``error``: the
    OSError, a full disk, a directory made read-only after start): not a defect of opsnn's code
    generation, so not a COMPILE_FAILURE; the walker runs on the NumPy backend (it is imported
    from that file, and numba caches only what a file holds) and ``_cache_unwritable`` says so."""

    def __init__(self, error: OSError, where: os.PathLike):
        super().__init__(f"its module could not be written ({error.strerror or error})")
        self.error = error
        self.where = where


def _cache_unwritable(error: OSError, where) -> None:
    """Say once per process that the kernel cache cannot be written: a full disk (or a cache
    directory made read-only after start) had printed one warning per kernel, each as a compile
    failure (a breaker's). Kernels numba compiles from then on are not saved (``_compile_mending_cache``
    compiles them in memory), and walkers whose module cannot be written run on NumPy."""
    with _LOCK:
        if "cache unwritable" in _WARNED:
            return
        _WARNED.add("cache unwritable")
    log.warning("numba backend: cannot write to the compiled-kernel cache in %s (%s); from now on this process "
                "compiles kernels without saving them (later processes compile them again), and runs walkers "
                "it could not write there on the NumPy backend; free space there or set OPSNN_CACHE_DIR to a "
                "writable directory", where, error.strerror or error)


def _warn_once(key, message: str) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        _log_fallback(message)


def _log_fallback(message: str) -> None:
    """The log line of a launch sent to the NumPy backend, in one wording for both that say it:
    ``_warn_once`` (once per key) and ``_compile_failure`` (once per walker variant)."""
    log.warning("numba backend: %s; running it on the NumPy backend", message)


def _fell_back(where: str, exc: Fallback) -> None:
    """Log that ``where`` (an operator's step, or ``copy``) runs on the NumPy backend for a layout
    the walkers cannot address, once per operator and reason (a walker that did not compile was
    logged when it failed). Keyed by the reason alone, it named only the first operator to fall
    back for it, the others falling back silently (a breaker's)."""
    if not isinstance(exc, CompileFailure):
        _warn_once(("layout", where, str(exc)), f"{where}: {exc}")


# Walkers that failed to generate, import or compile in this process, one line each. Such a
# failure is a defect of opsnn's code generation (or of the numba / LLVM under it, on some CPU or
# version), never of the caller's input: the launch runs on the NumPy backend, as the issue's
# "NumPy stays the fallback" asks (same bits, slower), and is logged once. The test suite fails
# any test during which this grows (tests/conftest.py), so a fallback cannot hide a defect there.
COMPILE_FAILURES: list[str] = []
# why each failed variant failed, by what determines its source (``Program._variant``): another
# Program of the same source (the engine runs a fused chain that failed step by step, and its
# Kernel step's program generates the same walker) meets the failure without compiling again
_FAILED: dict[tuple, str] = {}


def _compile_failure(variant: tuple, what: str, exc: Exception) -> CompileFailure:
    """The CompileFailure of ``variant`` (``what`` names it), recorded, listed in
    COMPILE_FAILURES and logged the first time only."""
    with _LOCK:
        message = _FAILED.get(variant)
        if message is None and isinstance(exc, CacheWriteError):  # the disk's, said once per process
            message = _FAILED[variant] = f"{what} runs on the NumPy backend: {exc}"
            _cache_unwritable(exc.error, exc.where)
        elif message is None:
            message = _FAILED[variant] = f"{what} did not compile ({type(exc).__name__}: {str(exc).strip()[:500]})"
            COMPILE_FAILURES.append(message)
            _log_fallback(message)
    return CompileFailure(message)


# ---- compiles: a Ctrl-C waits for the end of one; a damaged disk cache is compiled anew ----------

def guard_compiles(dispatcher):
    """Wrap every compile of numba ``dispatcher`` (numba's compile and its disk-cache load both run
    through ``Dispatcher.compile``, whichever way they start: a first call for new argument types,
    ``entry_point``) in opsnn's two guards; returns ``dispatcher``. Every dispatcher opsnn
    compiles is wrapped: the generated walkers, those of ``_numba_support`` and ``parallelism``,
    the benchmark's.

    * A Ctrl-C (SIGINT) is held until the compile ends, then raised (``interrupts.held``): a
      KeyboardInterrupt raised inside numba -- its first compile in a process loads its typing
      registries -- left them part-loaded, and every later compile of the process failed
      ("Unknown attribute 'ctypes' of type array(float32, 1d, C)") onto the NumPy backend.
    * An entry of numba's disk cache that numba cannot read (a file cut short by a full disk, a
      killed copy: pickle's "data was truncated") is forgotten and compiled anew, once, with a
      warning (``_compile_mending_cache``): it had been taken for a compile failure, and that
      kernel ran on the NumPy backend in every later process (a breaker). A cache numba cannot
      write or read (an OSError: a full disk) is dropped for that dispatcher, which compiles in
      memory, said once per process (``_cache_unwritable``)."""
    compile_ = dispatcher.compile

    def guarded_compile(sig):
        if type(sig) is tuple and sig in dispatcher.overloads:  # compiled already: ~4 us less
            return compile_(sig)
        with interrupts.held(reraise=True):
            return _compile_mending_cache(dispatcher, compile_, sig)

    dispatcher.compile = guarded_compile
    return dispatcher


def _compile_mending_cache(dispatcher, compile_, sig):
    """``compile_(sig)``; where that fails inside numba's disk cache (``numba.core.caching``: an
    entry it cannot read), or its entry for ``sig`` holds another signature's machine code, the
    dispatcher's cache index is emptied (numba's ``Cache.flush``) and it compiles again. A failure
    of the second try is raised as any compile failure is. Where the failure is an OSError (a
    save on a full disk, a directory made read-only), the dispatcher drops its disk cache
    (numba's ``NullCache``) and compiles in memory, said once per process: each kernel had
    printed a warning of its own, and where flushing and saving again failed again (numba's
    writes refused), gone to the NumPy backend as a compile failure with a second one.

    Another signature's code: numba saves an index and a data file without a lock, so two
    processes saving two signatures of one function at once can leave the index naming one's
    data file for the other's signature (a breaker forced it: every later process then failed
    to unbox its arrays, or to type a walker calling the helper, and ran on NumPy). numba
    installs such an entry under the signature it holds, which is how it is told apart."""
    hits = dispatcher._cache_hits[sig]
    try:
        entry = compile_(sig)
    except Exception as exc:
        if not _raised_in(exc, _NUMBA_CACHING):
            raise
        if isinstance(exc, OSError):  # the cache cannot be written or read: compiled, not saved
            # (a write's OSError names no file: the directory numba saves the dispatcher's code in)
            _cache_unwritable(exc, getattr(dispatcher._cache, "_cache_path", None) or "the kernel cache")
            dispatcher._cache = NullCache()
            return compile_(sig)
        why = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
    else:
        if dispatcher._cache_hits[sig] == hits or tuple(normalize_signature(sig)[0]) in dispatcher.overloads:
            return entry
        why = "its entry for this signature holds another's machine code"
    log.warning("numba backend: numba's disk cache failed on %s (%s); its entries are forgotten and it "
                "compiles again", dispatcher.py_func.__qualname__, why)
    with contextlib.suppress(OSError):  # (a full disk: the compile below runs all the same)
        dispatcher._cache.flush()
    return compile_(sig)


_NUMBA_CACHING = os.path.join("numba", "core", "caching.py")


def _raised_in(exc: BaseException, source: str) -> bool:
    """Whether a frame of ``exc``'s traceback runs the file ending in ``source``."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith(source):
            return True
        tb = tb.tb_next
    return False


for _module in (_numba_support, parallelism):  # dispatchers compiled on their own, as span_view
    for _fn in vars(_module).values():
        if isinstance(_fn, numba.core.dispatcher.Dispatcher):
            guard_compiles(_fn)


# ---- generated modules -------------------------------------------------------------------

def _load_module(source: str):
    """Import generated ``source`` from a file named by its hash (written once, atomically)."""
    key = cg.digest(source)
    with _LOCK:
        module = _MODULES.get(key)
        if module is not None:
            return module
        path = kernel_cache.cache_dir() / f"k_{key}.py"
        if not path.exists() or path.read_text() != source:
            tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            try:
                tmp.write_text(source)
                os.replace(tmp, path)
            except OSError as exc:
                with contextlib.suppress(OSError):  # (a part-written file left on a full disk)
                    tmp.unlink()
                raise CacheWriteError(exc, path.parent) from exc
        name = f"opsnn_numba_kernels.k_{key}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        guard_compiles(module.kernel_serial)
        guard_compiles(module.kernel_parallel)
        _MODULES[key] = module
        return module




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
               if cg.half(chain[0]) and all(dt in (cg.F32, cg.F64) for dt in chain[1:])}
        self.code = cg.element_source(dag, store_chain, raw)
        for chain in in_chains:  # every conversion must lower now, not at first run
            cg.load_source("a", "i", chain)
        self.itemsizes = (store_chain[-1].itemsize,) + tuple(c[0].itemsize for c in in_chains)
        self._fns: dict[tuple, object] = {}
        self._launches: dict[tuple, tuple] = {}
        _LIVE_PROGRAMS.add(self)

    def function(self, launch: HostLaunch, parallel: bool):
        """The compiled walker for ``launch``'s walker, modes and tiles (generated and imported on
        first use; numba compiles or loads its on-disk cache at the first call). Raises Fallback
        for a walker that failed to generate, import or compile (``COMPILE_FAILURES``)."""
        rows_of_three = launch.walker == "rows" and launch.dims[-1] == 3
        key = (launch.walker, launch.modes, launch.seg > 1, parallel, STREAM_MIN_BYTES, rows_of_three)
        fn = self._fns.get(key)
        if fn is None:
            known = _FAILED.get(self._variant(key))
            if known is not None:  # another Program's walker of the same source failed
                self._fns[key] = known
                raise CompileFailure(known)
            try:
                source = generate(self.code, self.in_chains, self.store_chain[-1], self.scalar_names,
                                  launch.walker, launch.modes, STREAM_MIN_BYTES, launch.seg > 1, rows_of_three)
                module = _load_module(source)
            except Exception as exc:  # noqa: BLE001 - any failure here is opsnn's (see COMPILE_FAILURES)
                raise self._failed(key, exc) from exc
            fn = module.kernel_parallel if parallel else module.kernel_serial
            self._fns[key] = fn
        elif isinstance(fn, str):  # failed before: not tried again (a failed compile costs seconds)
            raise CompileFailure(fn)
        return fn

    def entry(self, launch: HostLaunch, parallel: bool, sample: tuple):
        """``function(launch, parallel)``'s machine-code entry for arguments typed like ``sample``
        (``entry_point``), compiled now; raises Fallback, and the walker is not tried again, where
        that fails."""
        fn = self.function(launch, parallel)
        try:
            return entry_point(fn, sample)
        except Exception as exc:  # noqa: BLE001 - see COMPILE_FAILURES
            raise self._failed(self._key_of(fn), exc) from exc

    def call(self, fn, launch: HostLaunch, geometry, out, ins, scalars: tuple, check: int) -> int:
        """``fn`` on these arrays through numba's dispatcher, which compiles it for their types at
        the first such call: a failure there marks the walker failed and raises Fallback before
        anything was written. Once compiled, a walker raises nothing but MemoryError (its scratch
        not allocated), which goes to the caller as any failed allocation does; the walker stays."""
        try:
            return fn(*self.arguments(launch, geometry, out, ins, scalars, check))
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - see COMPILE_FAILURES
            raise self._failed(self._key_of(fn), exc) from exc

    def _failed(self, key: tuple, exc: Exception) -> CompileFailure:
        """Walker ``key`` did not generate, import or compile: marked, so that neither this
        Program nor another of the same source tries it again, and its CompileFailure."""
        failure = _compile_failure(self._variant(key), self._what(key), exc)
        self._fns[key] = str(failure)
        self._launches.clear()  # those planned with the walker would call it again
        return failure

    def _key_of(self, fn) -> tuple:
        return next(key for key, known in self._fns.items() if known is fn)

    def _variant(self, key: tuple) -> tuple:
        """What determines walker ``key``'s source (``generate``'s arguments)."""
        return (self.code, self.in_chains, self.store_chain[-1], self.scalar_names) + key

    def _what(self, key: tuple) -> str:
        walker, modes, segmented, parallel = key[:4]
        return (f"{self.label} {'/'.join(dt.name for dt in self.store_chain)}: the "
                f"{'prange ' if parallel else ''}{walker} walker (modes {modes!r}"
                f"{', segmented' if segmented else ''})")

    def launch_for(self, out: np.ndarray, ins: list, n_threads: int) -> HostLaunch:
        """The host launch these arrays get on ``n_threads`` (raises Fallback for layouts it
        cannot address)."""
        shape = out.shape
        operands = [_aligned_strides(out, shape)] + [_aligned_strides(a, shape) for a in ins]
        return plan_launch(shape, operands, self.itemsizes, n_threads)

    def planned(self, out: np.ndarray, ins: list) -> tuple[HostLaunch, int]:
        """The launch under the thread rule, and its work (``parallelism.work_bytes``): planned for one
        thread, and again for the pool when the work pays for waking it."""
        launch = self.launch_for(out, ins, 1)
        work = parallelism.work_bytes(out, ins, launch)
        if parallelism.use_parallel(work):
            launch = self.launch_for(out, ins, parallelism.threads_for(work))
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

    def bind(self, arrays: dict, scalars: tuple, rerun):
        """``run`` prepared once for these very arrays: a no-argument call. For an aclnn launch,
        whose operands (device views, workspace slots) are fixed when it is queued. ``rerun()``
        runs the step anew where the bound walker cannot (below), and must fall back to the
        NumPy backend where a walker it plans does not compile."""
        out = arrays[self.output]
        ins = [arrays[name] for name in self.inputs]
        launch, geometry, check, fn = self._prepare(out, ins)
        args = self.arguments(launch, geometry, out, ins, scalars, check)
        pooled = self._key_of(fn)[3]  # the prange variant, which a forked child must not enter
        fn = self.entry(launch, pooled, args)

        def call() -> None:
            # bound to the pool before a fork (see _after_fork_in_child): plan anew; or out meets
            # an input other than exactly: run's temporary path
            if (parallelism.FORKED and pooled) or fn(*args):
                rerun()
        return call

    def _prepare(self, out: np.ndarray, ins: list) -> tuple:
        """``(launch, geometry, check, compiled walker)`` for arrays laid out like these
        (``planned``; ``check``: ``overlap_check``)."""
        launch, work = self.planned(out, ins)
        return (launch, launch_arrays(launch), overlap_check(out, ins),
                self.function(launch, parallelism.use_parallel(work)))

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
    """The machine-code entry of the numba dispatcher ``fn`` for arguments typed like ``sample``,
    compiled (or loaded from numba's disk cache) now: a call then skips numba's per-call type
    dispatch (about 0.2 us of a 4-element call). Raises what numba's compile raises (the
    callers make it a CompileFailure: ``Program.entry``, ``span_entry``).

    Sound only where every later call passes arguments of the same numba types: a bound launch
    (``Program.bind``: the very arrays of ``sample``), or a plan-cache hit, whose key fixes dtype,
    shape and strides (so ndim and layout), alignment and writeability of each array
    (``_fastpath``). The entry takes a float16/bfloat16 array where the kernel reads uint16 bits:
    it unboxes an array by its data pointer, shape, strides and itemsize (checked), which is what
    ``.view(np.uint16)`` would give it, without the view's 0.12 us. A numba that checked more
    would raise TypeError there, and a raising hit is a miss (the full path runs)."""
    return fn.compile(tuple(fn.typeof_pyval(a) for a in sample))



# From this many output bytes, the flat and rows walkers write a dense 4/8-byte output that meets no
# input with non-temporal stores (``walker_source.streams_output``): such an output leaves the last
# level cache anyway, and each tile is computed in L1 and then written in whole lines, without
# reading them first. Default: twice the 32 MiB L3 of the EPYC VMs it was tuned on (at 40 MB, f32
# 1e7, an output written again and again still partly hits L3 with ordinary stores: broadcast
# streamed measured 0.75x there, 0.65-0.87x on the Xeon VM of BENCHMARKS.md, contiguous the same
# either way). Contiguous, on that Xeon (LeakyReluBackward out=, 2 threads, three processes each):
# float32 1e8 40.1-40.8 -> 37.4-37.7 ms, float64 1e7 7.5-7.9 -> 7.0-7.5 ms; on the EPYC a streamed
# contiguous output had measured 0.6-0.9x (an earlier kernel, one thread). Override with
# OPSNN_STREAM_MIN_BYTES.
STREAM_MIN_BYTES = settings.env_bytes("OPSNN_STREAM_MIN_BYTES", 64 << 20)


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
    """``a``'s element strides over the broadcast ``shape`` (0 on its size-1 dims)."""
    item = a.itemsize
    pad = len(shape) - a.ndim
    out = [0] * pad
    for d, s in zip(a.shape, a.strides):
        if d == 1:  # never stepped along: broadcast (0) or a dim the launch drops, whatever its
            out.append(0)  # stride (a packed record row's: recs[2:3]["v"], strides (65, 4))
            continue
        if s % item:
            raise Fallback("a byte stride that is not a whole number of elements")
        out.append(s // item)
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
    """A 1-D view of ``a``'s memory from its lowest-addressed element (f16/bf16 as uint16).
    (A plan-cache hit makes the first step's index once per key: ``_fastpath._repeated_slice``.)"""
    if not a.flags.c_contiguous and a.size and 0 in a.strides:
        # broadcast: the memory of one slice across the repeated dims, often dense ((32, 1)
        # broadcast to (32, 32): 7.6 -> 2.8 us a call)
        a = a[tuple(0 if s == 0 else slice(None) for s in a.strides) + (Ellipsis,)]
    if cg.half(a.dtype):
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
    sample = template.view(np.uint16) if cg.half(template.dtype) else template
    try:
        return entry_point(_numba_support.span_view, (sample,))
    except Exception as exc:  # noqa: BLE001 - see COMPILE_FAILURES
        raise _compile_failure(("span_view", sample.dtype, sample.ndim), "span_view", exc) from exc


def scalar_values(step) -> tuple:
    """The Kernel step's scalars as the compiled code takes them: ``compute.type(value)`` (what
    the NumPy backend passes), f16/bf16 as bits."""
    compute = dtypes.to_numpy(step.compute)
    values = []
    for _, value in step.scalars:
        v = compute.type(value)
        values.append(np.uint16(np.asarray(v).view(np.uint16)) if cg.half(compute) else v)
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
            if not all(map(cg.is_store_dtype, chain)):
                raise cg.Unsupported(f"dtype chain {chain}")
        dag = cg.trace(step.kernel, numpy_backend.OPS, kernel_in, {name: compute for name in names})
        store_chain = _dedupe((dag.dtype,) + store_tail)
        if not all(map(cg.is_store_dtype, store_chain)):
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
            _fell_back(step.name, exc)
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
    def unbound() -> None:  # planned anew each call; on the NumPy backend where that fails
        with np.errstate(all="ignore"):
            if step.kind == "Kernel":
                launch(step, srcs, dst)
            else:
                copy(dst, srcs[0])

    bound = step_program(step, srcs, dst)
    if bound is not None and dst.size:
        prog, scalars = bound
        try:
            return prog.bind({prog.output: dst, **dict(zip(prog.inputs, srcs))}, scalars, unbound)
        except Fallback as exc:
            _fell_back(step.name or step.kind, exc)
    return unbound


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
            _fell_back("copy", exc)
    dtypes.cast_into(dst, src)


def host_launch(plan, arrays: dict) -> tuple[HostLaunch, int, int] | None:
    """The HostLaunch the fused program of ``plan`` uses for ``arrays``, the threads it may use
    and its work in bytes (``Program.planned``, ``parallelism.work_bytes``; for ``opsnn
    tiling``); None when there is no fused program."""
    bound = program(plan, {k: v.dtype for k, v in arrays.items()})
    if bound is None:
        return None
    prog = bound[0]
    launch, work = prog.planned(arrays[prog.output], [arrays[n] for n in prog.inputs])
    return launch, parallelism.threads_for(work), work


def get_num_threads() -> int:
    return numba.get_num_threads()


def set_num_threads(n: int) -> None:
    numba.set_num_threads(n)


__all__ = ["NAME", "Fallback", "CompileFailure", "HostLaunch", "Program", "base", "bind_step", "step_program",
           "guard_compiles",
           "dense_order", "COMPILE_FAILURES",
           "copy", "entry_point", "get_num_threads", "host_launch", "launch", "launch_arrays", "program",
           "run_fused", "scalar_values", "set_num_threads",
           "span_entry", "PLANNED_THREADS_BIT", "overlap_check"]
