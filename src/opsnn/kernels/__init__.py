"""Kernel backends: each executes a Kernel step (an elementwise expression) over NumPy views.

Launch contract (every backend): ``launch(step, srcs, dst)`` where ``srcs`` are the kernel inputs
in ``step.kernel``'s order (already contiguous and in the promoted dtype, broadcastable to
``dst``), ``step.native[i]`` says whether input i stays in its own dtype (bits copied) instead of
being widened to ``step.compute`` (float32/float64, or an integer dtype computed natively),
``step.scalars`` are the kernel attributes as Python numbers exact in ``step.compute`` (float32
values for ToFloat attrs; values of self's dtype for Hardtanh's bounds), the ``ops`` namespace
offers ``where``, ``zero``, ``maximum`` and ``minimum`` (NaN-propagating, a signed-zero
tie returns the first operand; see numpy_backend), and ``dst`` receives the result rounded once
(to nearest even) to its dtype. No checks, no allocation decisions, no dtype policy: the engine
made those in phase 1.

Optional, per backend: ``copy(dst, src)`` runs a Contiguous/Cast/ViewCopy step (default
``dtypes.cast_into``); ``program(plan, input_dtypes)`` returns a fused form of a whole recorded
chain (or None) that ``run_fused(bound, arrays)`` executes reading the inputs in place -- the engine
uses it when the caller does not look at the workspace (``engine.run(..., fused=True)``, the
Pythonic API); ``Fallback`` is raised for layouts it cannot address and kernels that did not
compile. ``bind_step(step, srcs, dst)``
returns a step prepared for those very arrays as a no-argument call (an aclnn launch, whose
operands are fixed when it is queued); ``step_program(step, srcs, dst)`` returns the compiled
program of one step and its scalars (or None), which fresh aclnn executors run through
``_fastpath.step_call``.

Backends: ``numpy`` (the reference) and ``numba`` (compiled, multi-core; see numba_backend).
The default is numba when it loads, else numpy with one warning (``BackendFallbackWarning``);
``set_default(name)`` or ``OPSNN_BACKEND`` pick one explicitly, and a named backend that cannot
load raises ImportError. A name is read as ``OPSNN_SOC``'s is, ignoring case (``NumPy``) and
surrounding whitespace (`` numpy``: a shell quoting slip); an ``OPSNN_BACKEND`` of only whitespace is
unset (``platform.env_value``, the rule of the three OPSNN_* variables that name something).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading

from .._core import callsite, forksafe, outpool, platform
from .._core.status import AclnnError, Status

_BACKENDS = {"numpy": "opsnn.kernels.numpy_backend", "numba": "opsnn.kernels.numba_backend"}
ENV_VAR = "OPSNN_BACKEND"
# None: automatic -- numba when it imports, else numpy (said once). A name: that backend, and
# one that cannot load raises. Set with set_default() or the OPSNN_BACKEND environment variable.
DEFAULT: str | None = None

_loaded: dict[str, object] = {}
_auto: str | None = None


class BackendFallbackWarning(RuntimeWarning):
    """The automatic backend choice could not load numba and uses the NumPy backend."""


# Held while a backend module is imported (numba's takes seconds): a fork waits for it, as the
# child of a fork in the middle of that import waited for good at its first kernel call, on the
# module's import lock the importing thread held (a breaker). forksafe.waited_at_fork.
_IMPORTING = threading.RLock()
forksafe.waited_at_fork(sys.modules[__name__], "_IMPORTING")


def canonical(name: str) -> str:
    """The backend key a name spells: case and surrounding whitespace ignored, as platform's
    SoC names ignore case (``NumPy`` and `` numpy`` were unknown backends: 561003 on every call)."""
    return str(name).strip().lower()


def _import(name: str):
    key = canonical(name)
    module = _loaded.get(key)
    if module is None:
        if key not in _BACKENDS:
            raise ValueError(f"unknown kernel backend {name!r}; known: {', '.join(_BACKENDS)}")
        try:
            with _IMPORTING:
                module = importlib.import_module(_BACKENDS[key])
        except Exception as exc:  # noqa: BLE001 - numba may import and still fail to load (below)
            # numba is installed but the backend fails otherwise: numba refuses ``cache=True``
            # where no directory takes its cache, opsnn's own included (RuntimeError), or cannot
            # start the threading layer NUMBA_THREADING_LAYER names (ValueError), or the backend
            # refuses a NUMBA_NUM_THREADS of no thread before importing numba (numba_pool_refusal);
            # every call then failed
            reason = str(exc) if isinstance(exc, ImportError) else f"{type(exc).__name__}: {exc}"
            raise ImportError(f"kernel backend {key!r} cannot be loaded: {reason}") from exc
        _loaded[key] = module
        # the output pool's OPSNN_POOL_BYTES read with the backend's own variables (its import
        # reads them): a malformed one is told at the first call, where it was told only once an
        # output of 1 MiB or more was pooled (a new user's small calls ran silent)
        outpool.POOL.max_bytes  # noqa: B018
    return module


def usable_cpus() -> int:
    """The CPUs this process may run on (its CPU affinity, where the system gives one), at least
    1: the threads of numba's pool where $NUMBA_NUM_THREADS is unset."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cpus or 1)


def numba_threads_setting() -> int | None:
    """$NUMBA_NUM_THREADS as numba reads it (int()), ``usable_cpus()`` where it is unset; None
    where int() cannot read it (numba warns of itself and takes its default). The one reading of
    the variable for ``numba_pool_refusal`` and bench's ``pool_threads``, before numba imports."""
    text = os.environ.get("NUMBA_NUM_THREADS")
    if text is None:
        return usable_cpus()
    try:
        return int(text)
    except ValueError:
        return None


def numba_pool_refusal() -> str | None:
    """Why ``import numba`` would refuse $NUMBA_NUM_THREADS (0 or fewer: a pool of no thread, which
    it refuses in its own words alone, "Number of threads specified must be > 0."), naming the
    variable, its value and what it takes; None where it would not. The numba backend raises it
    before that import, and ``kernel_cache.numba_version`` (`opsnn cache`) too."""
    count = numba_threads_setting()
    if count is None or count >= 1:
        return None
    return (f"$NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']!r} leaves numba's thread pool no thread: "
            f"expected a whole number >= 1, or unset for numba's default, one a CPU ({usable_cpus()} here)")


def _selection() -> str | None:
    """The explicit selection: DEFAULT, else $OPSNN_BACKEND (None: automatic)."""
    return DEFAULT or platform.getenv(ENV_VAR) or None


def default_name() -> str:
    """The backend ``get(None)`` returns: DEFAULT, else $OPSNN_BACKEND, else ``automatic_name()``
    (as its key: ``canonical``)."""
    return canonical(platform.env_value(_selection()) or automatic_name())


def automatic_name() -> str:
    """The automatic choice: numba if it loads, else numpy, said once with a
    ``BackendFallbackWarning`` that points at the caller's line outside opsnn."""
    global _auto
    if _auto is None:
        try:
            _import("numba")
            _auto = "numba"
        except ImportError as exc:
            _auto = "numpy"
            # once per process, at the user's line whose call chose (not a log record too: that
            # printed the notice twice)
            callsite.warn(f"opsnn: the numba kernel backend is not available ({exc}); using the NumPy backend",
                          BackendFallbackWarning)
    return _auto


def get(name: str | None = None):
    """The backend module by name (``numpy``, ``numba``); None selects the default. A named
    backend that cannot load raises ImportError (ValueError for an unknown name); the automatic
    default falls back to numpy. A default that ``$OPSNN_BACKEND`` names and that cannot load is a
    configuration error of the run, not of the call: AclnnError 561003 (no kernel found), which the
    aclnn layer returns as its status."""
    if name:
        return _import(name)
    return selected(_selection())


def selected(selection: str | None):
    """The backend module a selection read earlier names (DEFAULT or $OPSNN_BACKEND; None:
    automatic), as ``get(None)`` would return it then: AclnnError 561003 where it names no
    usable backend (``set_default`` checks its names, so that one came from the environment)."""
    key = canonical(platform.env_value(selection) or automatic_name())
    try:
        return _import(key)
    except (ValueError, ImportError) as exc:
        raise AclnnError(Status.ERR_INNER_FIND_KERNEL_ERROR,
                         f"${ENV_VAR}={selection!r} selects no usable kernel backend: {exc}") from None


def for_command():
    """The default backend module (``get(None)``) for an ``opsnn`` command about to run kernels:
    ValueError (the command's usage error, exit 2) naming ``$OPSNN_BACKEND`` where the selection
    names no usable backend, as an unknown ``$OPSNN_SOC`` is refused, where every sample or case
    had failed in turn with 561003 (the library's answer, kept for its callers)."""
    try:
        return get()
    except AclnnError as exc:
        raise ValueError(exc.message) from None


def set_default(name: str | None) -> None:
    """Select the default backend for the process: ``"numpy"`` or ``"numba"`` (case and
    surrounding spaces ignored, as ``$OPSNN_BACKEND``'s), or None for the automatic choice; it
    wins over ``$OPSNN_BACKEND``. Raises ValueError for an unknown name (an empty one included:
    None is the automatic choice) and ImportError for a backend that cannot load (numba under
    ``NUMBA_DISABLE_JIT=1``), as ``get`` does; the default is then left as it was."""
    global DEFAULT
    if name is not None:
        _import(name)
        name = canonical(name)
    DEFAULT = name
