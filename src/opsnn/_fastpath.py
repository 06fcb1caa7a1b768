"""The Pythonic API's plan cache: a repeated identical call skips phase 1 and goes straight to the
compiled kernel.

Key (like CANN's aclnn executor cache): the operator, the SoC selection, the kernel backend, and
per argument -- tensors: dtype, shape, strides (bytes); scalars: type and exact value (sign of
zero included; NaN is never cached); flags: type and value -- and for ``out`` the same as a
tensor (or "allocate"). Only plain NumPy arrays and Python/NumPy numbers take part; anything
else (DLPack objects, Python numbers passed as tensors, aclScalars) takes the full path. A plain
torch CPU tensor takes part as its NumPy view: the Pythonic boundary replaces each one among the
tensor inputs and ``out`` by its DLPack view (the same memory, shape and strides;
``functional._torch_views``, after a miss; an in-place ``self`` before the lookup), so a
repeated 4-element call with torch tensors takes 5.5-11 us where the full path (DLPack, phase 1)
took 40-59 (Zen 5 VM of BENCHMARKS.md); a torch out is then version-bumped and returned, as the
full path does. Tensors
the full path treats otherwise (a subclass, requires grad, bfloat16 ...) keep it.

Why a hit may skip phase 1: every phase-1 check is a function of that metadata, except the ones
that look at memory addresses (``out`` overlapping an input: the engine's check_out_overlap and
the forward ops' no-partial-overlap check). For those the compiled kernel first compares the
address ranges of ``out`` and each input (``check`` argument): if they are disjoint, or ``out``
is exactly an input's view (same start, shape, strides and dtype), the check passes and the
kernel runs; otherwise it returns without writing and the call takes the full path, which
runs every check (and raises, or runs, exactly as before). ``out``'s writeability is part of the
key (a read-only out always takes the full path). An allocated ``out`` comes from
``_core.outpool`` (a fresh or recycled buffer no one else references), so it cannot overlap.

A hit runs the same fused Program the full path ran for that key (``kernels.numba_backend``),
with the same scalars, so results are identical. An entry is built when a key's full call
succeeds for the second time (``remember``): a call that never repeats does not pay for one.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from . import kernels
from ._core import outpool, platform
from ._core.status import AclError, AclnnError

log = logging.getLogger("opsnn")
ENTRIES: dict[tuple, object] = {}
MAX_ENTRIES = 512
# Keys whose full call succeeded once: the entry is built at the second sighting. Building one
# (generating the call, looking up the compiled entry point) costs ~150 us, more than the full
# path (~85 us for a small call), so a call that never repeats -- a slope drawn anew each time,
# shapes cycling through more than MAX_ENTRIES -- no longer pays it every time (241 -> 85 us).
_SEEN: dict[tuple, None] = {}
_KEY_FUNCS: dict[str, object] = {}
# Per operator, the (key, entry) of its last hit: a call repeating the one before (a training
# loop, a benchmark) compares its key with that one instead of hashing it for the dict (~0.2 us
# of a ~1.8 us 4-element call: the key's ~20 parts hash anew every call, as its shape and strides
# tuples are new). The same equality a dict lookup applies, so it hits exactly where ENTRIES would.
_LAST: dict[str, list] = {}
_NO = object()
# NumPy's flag bits (``ndarray.flags.num``: NPY_ARRAY_ALIGNED, NPY_ARRAY_WRITEABLE). numba types an
# array by them too, so they are part of the key; read as one integer, not two flag attributes.
_ALIGNED, _WRITEABLE = 0x100, 0x400


def hit(spec, kwargs: dict, out):
    """The result of a cache hit that ran, else None (then take the full path, which reports
    any error: a hit never raises)."""
    try:
        return _key_funcs(spec)[0](kwargs, out)[0]
    except Exception:  # noqa: BLE001 - a miss
        return None


def key(spec, kwargs: dict, out) -> tuple | None:
    """The cache key of a Pythonic call, or None when it is not cacheable."""
    return _key_funcs(spec)[0](kwargs, out, False)[1]


def caller(spec):
    """``call(*args, out)`` with the spec's parameters in order (``out`` last): the result of a
    cache hit that ran, else None. For the public functions, which call it before anything
    else; it never raises (anything unexpected is a miss: the full path reports it)."""
    return _key_funcs(spec)[1]


def _key_funcs(spec):
    fns = _KEY_FUNCS.get(spec.name)
    if fns is None:
        fns = _KEY_FUNCS[spec.name] = _make_key(spec)
    return fns


def _number_key(value):
    """Key part of a NumPy scalar (type, value and the sign of zero), or _NO (not cached)."""
    # kind V: ml_dtypes' bfloat16 (and float8s), not a structured or raw void, which float()
    # refuses (the full path names it: 161002), nor its 4-byte bcomplex32, whose float() warns
    # that it drops the imaginary part (a regression breaker: a ComplexWarning before the refusal)
    if isinstance(value, np.generic) and not isinstance(value, np.void) and (
            value.dtype.kind in "fiub" and value.dtype.itemsize <= 8
            or value.dtype.kind == "V" and value.dtype.itemsize <= 2):
        as_float = float(value)
        if as_float == as_float:
            return math.copysign(1.0, as_float)
    return _NO


def _make_key(spec):
    """The key function specialised to ``spec``'s parameters (generated: this runs every call),
    as ``key(kw, out, lookup=True)`` and positional ``fast(*args, out)`` (see ``caller``)."""
    names = [p.name for p in spec.params if p.name != "out"]
    body = []  # "MISS" stands for the function's not-cacheable return
    parts = []
    tensors = []
    for i, p in enumerate(q for q in spec.params if q.name != "out"):
        if p.kind == "tensor":
            tensors.append(f"v{i}")
            body += [f"if type(v{i}) is not ndarray: MISS"]
            parts += [f"v{i}.dtype", f"v{i}.shape", f"v{i}.strides", f"v{i}.flags.num & ALIGNED_WRITEABLE"]
        else:
            body += [f"t{i} = type(v{i})",
                     f"if t{i} is float:",
                     f"    if v{i} != v{i}: MISS",
                     # the value tells a nonzero's sign; only a zero needs it spelled out
                     f"    s{i} = None if v{i} else copysign(1.0, v{i})",
                     f"elif t{i} is bool or t{i} is int:",
                     f"    s{i} = None",
                     "else:",
                     f"    s{i} = number_key(v{i})",
                     f"    if s{i} is NO: MISS"]
            parts += [f"t{i}", f"v{i}", f"s{i}"]
    body += ["if out is None:",
             "    o = None",
             "elif type(out) is ndarray and (fo := out.flags.num) & WRITEABLE:",
             "    o = (out.dtype, out.shape, out.strides, fo & ALIGNED)",
             "else:",
             "    MISS",
             # the SoC and backend *selections* (thread / process / environment), inlined:
             # platform.current_name() and kernels.default_name() cost more than the rest
             "soc = selected() or platform._process_soc or env_get(SOC_ENV)",
             "backend = kernels.DEFAULT or env_get(BACKEND_ENV)",
             f"k = ({spec.name!r}, soc, backend, {', '.join(parts)}, o)"]
    call = f"entry({', '.join(tensors + ['out'])})"
    args = ", ".join(f"v{i}" for i in range(len(names)))
    lines = [f"def found({args}, out, lookup=True):"]
    lines += [f"    {line.replace('MISS', 'return None, None')}" for line in body]
    lines += ["    if lookup:",
              "        entry = ENTRIES.get(k)",
              "        if entry is not None:",
              f"            done = {call}",
              "            if done is not None:",
              "                return done, None",
              "    return None, k"]
    lines += ["def key(kw, out, lookup=True):",
              f"    return found({', '.join(f'kw[{name!r}]' for name in names)}, out, lookup)"]
    # the same body inline (one Python call less on the hot path)
    lines += [f"def fast({args}, out):",
              "    try:"]
    lines += [f"        {line.replace('MISS', 'return None')}" for line in body]
    lines += ["        last = LAST[0]",
              "        if k == last[0]:",
              "            entry = last[1]",
              "        else:",
              "            entry = ENTRIES.get(k)",
              "            if entry is None:",
              "                return None",
              "            LAST[0] = (k, entry)  # one store: a thread reading LAST sees a whole pair",
              f"        return {call}",
              "    except Exception:  # noqa: BLE001 - a miss; the full path reports the error",
              "        return None"]
    last = _LAST.setdefault(spec.name, [(None, None)])
    env = {"ENTRIES": ENTRIES, "LAST": last, "ndarray": np.ndarray, "ALIGNED": _ALIGNED, "WRITEABLE": _WRITEABLE,
           "ALIGNED_WRITEABLE": _ALIGNED | _WRITEABLE, "copysign": math.copysign, "number_key": _number_key, "NO": _NO,
           "selected": platform.SELECTED.get, "platform": platform, "kernels": kernels, "env_get": platform.getenv,
           "SOC_ENV": platform.ENV_VAR, "BACKEND_ENV": kernels.ENV_VAR}
    if platform._ENV_DATA is not None:  # the raw mapping (bytes keys and values) is enough for a key
        env.update(env_get=platform._ENV_DATA.get, SOC_ENV=platform._encode(platform.ENV_VAR),
                   BACKEND_ENV=platform._encode(kernels.ENV_VAR))
    exec("\n".join(lines), env)  # noqa: S102 - source built above from parameter names only
    return env["key"], env["fast"]


def soc_of(cache_key: tuple | None) -> str | None:
    """The SoC selection ``cache_key`` read, for the full path's phase 1 to plan under (None
    without a key: phase 1 reads the selection itself). Read once, with the key: a ``set_soc``
    on another thread between the key and phase 1 had filed a plan checked for one SoC under
    another's key (bfloat16 then passed on Ascend910). Phase 1 resolves it after its null
    checks (an unknown $OPSNN_SOC is 361001 there)."""
    return None if cache_key is None else _selection(cache_key, 1)


def backend_of(cache_key: tuple | None) -> str | None:
    """The kernel backend that ``cache_key``'s backend selection names, for the full path to run
    and ``remember`` to compile with (None without a key: ``engine.run`` reads the selection
    itself). Read once, with the key, as ``soc_of``: a ``kernels.set_default`` on another
    thread in between had filed a numba-compiled entry under a "numpy" key. A selection naming
    no usable backend is AclnnError 561003 here, as phase 1 reports it."""
    if cache_key is None:
        return None
    return kernels.selected(_selection(cache_key, 2)).NAME


def _selection(cache_key: tuple, index: int) -> str | None:
    """The selection (SoC at 1, backend at 2) the key read, as a str: the generated key functions
    read the environment as CPython's raw mapping, whose values are bytes."""
    selection = cache_key[index]
    return platform._decode(selection) if isinstance(selection, bytes) else selection


def remember(cache_key: tuple, spec, executor, backend: str) -> None:
    """After a full call with this key succeeded on ``backend`` (``backend_of(cache_key)``): at
    the key's second success, keep what a hit needs (when that backend can run the plan as a
    compiled fused program)."""
    if cache_key not in _SEEN:
        if len(_SEEN) >= 4 * MAX_ENTRIES:
            _SEEN.clear()
        _SEEN[cache_key] = None
        return
    arrays = {name: t.array() for name, t in executor.tensors.items()}
    if not executor.plan.steps:
        out = arrays["out"]
        entry = _Empty(out.shape, out.dtype)
    else:
        allocating = cache_key[-1] is None
        entry = compiled(kernels.get(backend), spec, executor.plan, arrays, check_overlap=not allocating,
                         allocating=allocating)
        if entry is None:
            return
    if len(ENTRIES) >= MAX_ENTRIES:  # the older half goes (insertion order): the rest still hit
        for stale in list(ENTRIES)[:MAX_ENTRIES // 2]:
            ENTRIES.pop(stale, None)
    ENTRIES[cache_key] = entry


def compiled(impl, spec, plan, arrays: dict, check_overlap: bool, allocating: bool = False):
    """The compiled fused call of ``plan`` for arrays laid out like ``arrays``, called as
    ``call(*tensor_params, out)`` (the spec's tensor parameters in order; ``out`` None when
    ``allocating``) and returning ``out``, or None when the overlap check refused. None when the
    backend cannot compile this plan or address this layout.

    ``check_overlap``: compare ``out``'s address range with each input's first (see the module
    doc); False where phase 1 already checked these very arrays (a bound aclnn executor)."""
    if not hasattr(impl, "program"):
        return None
    bound = impl.program(plan, {name: a.dtype for name, a in arrays.items()})
    if bound is None:
        return None
    tensor_names = tuple(p.name for p in spec.params if p.kind == "tensor" and p.name != "out")
    try:
        entry = _Entry(impl, bound, arrays, tensor_names, allocating, check_overlap)
    except impl.Fallback:
        return None
    return entry.fast


def step_call(impl, step, srcs: list, dst):
    """The compiled call of one recorded step for arrays laid out like ``srcs`` and ``dst``,
    called as ``call(*srcs, dst)``: it returns ``dst``, or None without writing where ``dst``
    meets an input other than exactly (the caller then runs the step through the backend's
    ``launch`` / ``copy``, whose temporary handles it). None when the backend cannot compile the
    step or address this layout. The aclnn path's fresh executors run their steps through these
    (``engine.bind``), as a Pythonic hit runs the fused chain through ``compiled``."""
    if not hasattr(impl, "step_program") or not dst.size:
        return None
    bound = impl.step_program(step, srcs, dst)
    if bound is None:
        return None
    prog = bound[0]
    arrays = {prog.output: dst, **dict(zip(prog.inputs, srcs))}
    try:
        return _Entry(impl, bound, arrays, prog.inputs, allocating=False, check_overlap=True).fast
    except impl.Fallback:
        return None


def clear() -> None:
    ENTRIES.clear()  # the generated key functions hold this very dict: clear, never rebind
    _SEEN.clear()
    for last in _LAST.values():
        last[0] = (None, None)


def _repeated_slice(template: np.ndarray) -> tuple | None:
    """The index ``kernels.numba_backend.base`` takes of a broadcast array laid out like
    ``template`` (its first element on each repeated dim), where the slice it leaves is
    C-contiguous, so that base() returns ``a[index].reshape(-1)`` (half floats as their bits: the
    caller views it as uint16, which base() does before reshaping, the same memory). None where
    base() goes on from there. A function of shape, strides and dtype alone, which the key fixes."""
    if template.flags.c_contiguous or not template.size or 0 not in template.strides:
        return None
    index = tuple(0 if s == 0 else slice(None) for s in template.strides) + (Ellipsis,)
    return index if template[index].flags.c_contiguous else None


class _Empty:
    """A cached empty-tensor call: nothing to launch."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

    def __call__(self, *tensors_and_out):
        out = tensors_and_out[-1]
        return _allocate(self.shape, self.dtype) if out is None else out


def _allocate(shape, dtype) -> np.ndarray:
    try:
        return outpool.empty(shape, dtype)
    except (MemoryError, ValueError) as exc:
        nbytes = math.prod(shape) * dtype.itemsize
        raise AclnnError(AclError.BAD_ALLOC, f"out: cannot allocate {nbytes} bytes: {exc}") from None


class _Entry:
    """A cached call: the fused program, its scalars and the precomputed layout of the launch.
    Called as ``entry(*tensor_params, out)`` (the spec's tensor parameters in order)."""

    def __init__(self, impl, bound, arrays: dict, tensor_names: tuple, allocating: bool,
                 check_overlap: bool):
        prog, scalars = bound
        out = arrays[prog.output]
        ins = [arrays[name] for name in prog.inputs]
        self.impl = impl
        self.prog = prog
        self.scalars = tuple(scalars)
        self.positions = tuple(tensor_names.index(name) for name in prog.inputs)
        self.allocating = allocating
        self.shape = out.shape
        self.dtype = out.dtype
        self.numel = out.size
        # an out the caller gave: the kernel compares address ranges first (see module doc);
        # an allocated out is a buffer nobody else references
        self.check = impl.overlap_check(out, ins) if check_overlap else 0
        launch, self.work = prog.planned(out, ins)  # the thread rule, as a full-path call applies it
        self.walker = launch.walker
        # threads -> (launch, geometry); a serial launch is planned for one thread
        threads = impl.parallelism.threads_for(self.work)
        self.launches = {threads: (launch, impl.launch_arrays(launch))}
        self.fast = self._make_fast(len(tensor_names), [out] + ins, threads)

    def _make_fast(self, n_tensors: int, templates: list, threads: int):
        """The hit path as one generated function: the reshapes and transposes this key needs
        (fixed by its shapes and strides), the allocation, one call of the kernel's machine-code
        entry -- nothing else. A pool launch is planned for ``threads``; under another thread
        count (``set_num_threads`` since) its kernel returns 2 without writing and the call goes
        to ``__call__``, which plans for that count.

        Lean even for a launch of a millisecond: the Python that runs between two kernels runs
        with the caches the kernel just swept, at ~10x its warm cost (float16 1e6 on two threads
        of the Xeon VM of BENCHMARKS.md: 113 us in the kernel; 150 us through ``__call__``, which
        types every argument anew in numba's dispatcher; 125 us through this call while it
        asked ``numba.get_num_threads()`` from Python; 115 us now)."""
        operands = ["out"] + [f"t{pos}" for pos in self.positions]
        launch, geometry = self.launches[threads]
        parallel = self.impl.parallelism.use_parallel(self.work)
        # a pool launch returns 2 under another thread count (numba_backend.PLANNED_THREADS_BIT)
        check = self.check | (threads << self.impl.PLANNED_THREADS_BIT if parallel else 0)
        nbytes = self.numel * self.dtype.itemsize
        env = {"alloc": np.empty if nbytes < outpool.MIN_BYTES else _allocate, "SHAPE": self.shape,
               "DTYPE": self.dtype, "CHECK": check, "u16": np.uint16, "NUMEL": self.numel,
               "TILE": launch.plan.tile, "base": self.impl.base, "REPLAN": self}
        env.update({f"S{k}": v for k, v in enumerate(self.scalars)})
        flat = []  # per operand, the 1-D array the kernel walks
        for k, (src, tmpl) in enumerate(zip(operands, templates)):
            if tmpl.ndim == 1 and tmpl.strides[0] == tmpl.itemsize:
                flat.append(src)
            elif tmpl.flags.c_contiguous:
                flat.append(f"{src}.ravel()")  # a view: the key fixes these strides
            elif self.impl.dense_order(tmpl) is not None:
                # a permutation of a dense array (e.g. a transposed view): in memory order, a view
                # (ravel("K") copies only what is not dense in some order)
                flat.append(f"{src}.ravel('K')")
            elif min(tmpl.strides) > 0:  # gapped or stepped: its memory span (half floats as bits)
                env[f"SPAN{k}"] = self.impl.span_entry(tmpl)
                flat.append(f"SPAN{k}({src})")
            elif (repeated := _repeated_slice(tmpl)) is not None:
                # broadcast from one C-contiguous slice (torch's gradient of a sum, an expanded
                # scalar): what base() returns, its index made once (base() takes ~0.9 us, ~0.15)
                env[f"ONE{k}"] = repeated
                flat.append(f"{src}[ONE{k}].reshape(-1)")
            else:  # broadcast or reversed: its memory span from the lowest address
                flat.append(f"base({src})")
        plan = launch.plan
        if self.walker == "flat":
            tail = f"{plan.n_blocks}, {plan.block_former}, NUMEL, TILE, CHECK"
        else:
            env["GEOM"] = geometry
            last = "TILE" if self.walker == "rows" else f"{launch.tile_rows}, {launch.tile_cols}, {launch.seg}"
            tail = f"GEOM, {plan.n_blocks}, {plan.block_former}, {plan.numel}, {last}, CHECK"
        scalars = "".join(f"S{k}, " for k in range(len(self.scalars)))
        # the entry point is compiled for half floats as their uint16 bits (the sample), and the
        # call passes them as they are (see numba_backend.entry_point)
        halves = [a.dtype.itemsize == 2 and a.dtype.kind not in "iu" for a in templates]
        bits = [f"{e}.view(u16)" if half and not e.startswith(("base(", "SPAN")) else e
                for e, half in zip(flat, halves)]
        sample = eval(f"({', '.join(bits)}, {scalars}{tail})", {**env, **dict(zip(operands, templates))})  # noqa: S307
        env["FN"] = self.prog.entry(launch, parallel, sample)  # raises Fallback: no entry
        env["DISPATCHER"] = self.prog.function(launch, parallel)  # for introspection (numba's cache statistics)
        params = ", ".join([f"t{i}" for i in range(n_tensors)] + ["out"])
        lines = [f"def call({params}):"]
        if parallel:
            # a forked child must not enter the pool (parallelism.FORKED): a
            # launch planned for one pool thread passes the kernel's planned-thread test there
            env["PARALLELISM"] = self.impl.parallelism
            lines += ["    if PARALLELISM.FORKED:",
                      f"        return REPLAN({params})"]
        if self.allocating:
            lines.append("    out = alloc(SHAPE, DTYPE)")
        lines += [f"    b{k} = {e}" for k, e in enumerate(flat)]
        lines += [f"    status = FN({', '.join(f'b{k}' for k in range(len(flat)))}, {scalars}{tail})",
                  "    if status:",  # 1: out overlaps an input (the full path checks); 2: see above
                  f"        return REPLAN({params}) if status == 2 else None",
                  "    return out"]
        exec("\n".join(lines), env)  # noqa: S102 - source built from this entry's own fields
        return env["call"]

    def __call__(self, *tensors_and_out):
        """A pool launch (PARALLEL_MIN_BYTES or more) under a thread count ``fast`` was not
        planned for: the ``prange`` walker over the plan for the current count; the serial one
        where the backend no longer uses its pool (a forked child, ``use_parallel``). None, as
        for a refused call, where that walker does not compile."""
        out = tensors_and_out[-1]
        ins = [tensors_and_out[pos] for pos in self.positions]
        if self.allocating:
            out = _allocate(self.shape, self.dtype)
        threads = self.impl.parallelism.threads_for(self.work)
        prepared = self.launches.get(threads)
        if prepared is None:
            launch = self.prog.launch_for(out, ins, threads)
            prepared = self.launches[threads] = (launch, self.impl.launch_arrays(launch))
        launch, geometry = prepared
        try:
            fn = self.prog.function(launch, self.impl.parallelism.use_parallel(self.work))
            status = self.prog.call(fn, launch, geometry, out, ins, self.scalars, self.check)
        except self.impl.Fallback:  # that walker did not compile: the caller's full path runs
            return None
        return None if status else out


__all__ = ["ENTRIES", "MAX_ENTRIES", "caller", "clear", "compiled", "hit", "key", "remember", "step_call"]
