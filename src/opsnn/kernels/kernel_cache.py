"""Where the compiled walkers live on disk: one directory per support version
(``SUPPORT_VERSION``: opsnn's support code, numba and NumPy) under a root the user may choose,
holding the generated modules and numba's machine code beside them, and in ``support/`` the
machine code of opsnn's own compiled helpers (``claim_package_sources``). A new version starts a
new directory; this install never reads the others again, and ``opsnn cache`` lists and removes
them (never on its own: two environments or checkouts of different versions may share one root,
and one whose directory was removed compiles its kernels again).

Imports no numba at module level (``opsnn cache`` works without it)."""

from __future__ import annotations

import functools
import os
import re
import stat
import tempfile
from pathlib import Path

import numpy as np

from .._core.platform import env_value
from . import numba_codegen as cg

_HERE = Path(__file__).resolve().parent


def numba_version() -> str | None:
    """numba's version, None where it is not installed. ValueError where $NUMBA_NUM_THREADS
    leaves its pool no thread, which its import refuses (in its own words alone: the variable
    named here): no version is known then, and None would take this version's cache for
    another's, which `opsnn cache --prune` removes."""
    from . import numba_pool_refusal

    refusal = numba_pool_refusal()
    if refusal:
        raise ValueError(refusal)
    try:
        import numba
    except ImportError:  # opsnn cache still lists and removes (no cache is this install's)
        return None
    return numba.__version__


# In every generated module's header, and in the cache directory's name: a change to the
# support code or the element-code lowering, or another numba or NumPy, starts a new cache.
# (The files are read, not imported: _numba_support's own compiled helpers are cached here.)
SUPPORT_VERSION = cg.digest((_HERE / "_numba_support.py").read_text(), Path(cg.__file__).read_text(),
                            numba_version(), np.__version__)

CACHE_PREFIX = "numba-kernels-"  # + the first 8 hex digits of SUPPORT_VERSION
# in the temporary directory (no usable cache root): + the user's id, "-", those 8 digits
TEMPORARY_PREFIX = "opsnn-numba-kernels-"


def cache_root() -> Path:
    """The directory that holds one kernel cache per support version: ``$OPSNN_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/opsnn``, else ``~/.cache/opsnn`` (a leading ``~`` expanded: a quoted one
    reaches opsnn as it is, and made a directory named ``~``). A relative OPSNN_CACHE_DIR is
    taken from the working directory of the first call that reads it, once per process; a
    relative XDG_CACHE_HOME is ignored, as the XDG Base Directory spec says."""
    root = env_value(os.environ.get("OPSNN_CACHE_DIR"))  # (surrounding whitespace dropped, as OPSNN_SOC's)
    if root:
        return _absolute(root)
    xdg = Path(os.environ.get("XDG_CACHE_HOME") or ".").expanduser()
    return (xdg if xdg.is_absolute() else _home() / ".cache") / "opsnn"


def _home() -> Path:
    """The home directory; "/" where none can be found (HOME unset and no password-database entry
    for this uid: a container run as a --user its image does not know), as Python reads an empty
    HOME. Path.home() raised RuntimeError there: the numba backend failed to load, every kernel
    ran on NumPy, and `opsnn cache` ended in a traceback; "/" takes no cache but the superuser's,
    so the kernels go to the private temporary directory (``cache_dir``)."""
    try:
        return Path.home()
    except RuntimeError:
        return Path("/")


@functools.cache
def _absolute(path: str) -> Path:
    """``path`` made absolute from the working directory of its first reading, which later
    readings keep: a process that changed directory had compiled helpers under one cache and its
    walkers under another (a breaker)."""
    return Path(path).expanduser().absolute()


def stale_cache_dirs() -> list[Path]:
    """Kernel caches under ``cache_root()`` of other support versions (another opsnn, numba or
    NumPy made them: this one never reads them again), oldest first. Only directories named as
    ``cache_dir`` names them, and no symbolic link (whose target may be anything): nothing else
    under the root is ever listed."""
    current = _versioned(Path()).name
    try:
        found = [p for p in cache_root().iterdir() if p.is_dir() and not p.is_symlink() and p.name != current
                 and re.fullmatch(re.escape(CACHE_PREFIX) + "[0-9a-f]{8}", p.name)]
    except OSError:  # no root yet
        return []
    return sorted(found, key=lambda p: p.stat().st_mtime)


def cache_dir() -> Path:
    """Where generated kernel modules (and numba's cache beside them) live: a directory of
    ``cache_root()`` named by the support version (created), or one in the temporary directory
    where that is not writable; OSError (``nowhere``'s message) where no temporary directory is
    usable either."""
    path = _versioned(cache_root())
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".writable"
        probe.touch()
        return path
    except OSError:
        return _temporary_cache()


def existing_cache_dir() -> Path | None:
    """The directory ``cache_dir`` would give where a process has made it already, else None;
    makes nothing (``opsnn cache`` only lists: a listing that created the cache surprised a new
    user). Under the root where it is there and writable, else this user's temporary one."""
    path = _versioned(cache_root())
    if root_takes_cache():  # (a root not made yet is no cache yet, whatever the temporary directory holds)
        return path if path.is_dir() else None
    if _TEMPORARY_CACHE:
        return _TEMPORARY_CACHE[0]
    try:
        name = _versioned(Path(tempfile.gettempdir()), temporary=True)
    except OSError:  # no temporary directory at all: no cache anywhere
        return None
    return name if _private(name) else _own_temporary(name)


def root_problem() -> str:
    """Why ``cache_root()`` takes no cache, as a sentence's end: a file there was said to be "not
    writable" (a breaker's)."""
    root = cache_root()
    return "is not a directory" if root.exists() and not root.is_dir() else "is not writable"


def nowhere(exc: OSError) -> str:
    """What to tell where neither ``cache_root()`` nor a temporary directory takes the cache
    (``exc``: the temporary directory's failure): numba had said only "cannot cache function
    'gather_tile': no locator available for file ...", and ``opsnn cache`` ended in tempfile's
    error (a read-only container's breaker)."""
    reason = exc.strerror if isinstance(exc, FileNotFoundError) and exc.strerror else exc
    return (f"no directory takes the compiled-kernel cache: {cache_root()} {root_problem()} and no "
            f"temporary directory is usable ({reason}); set OPSNN_CACHE_DIR to a writable directory")


def root_takes_cache() -> bool:
    """Whether ``cache_dir`` keeps this version's cache under ``cache_root()``: the cache's
    directory, or else its nearest existing parent, takes a file (tried and removed at once:
    os.access answers yes to root everywhere, /proc included). Where not, kernels go to the
    temporary directory."""
    nearest = _versioned(cache_root())
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent
    try:
        with tempfile.TemporaryFile(dir=nearest):
            return True
    except OSError:
        return False


def _versioned(parent: Path, temporary: bool = False) -> Path:
    """This version's cache directory under ``parent`` (in the temporary directory also named
    for the user, whom a shared /tmp does not tell apart)."""
    if temporary:
        return parent / f"{TEMPORARY_PREFIX}{os.getuid()}-{SUPPORT_VERSION[:8]}"
    return parent / f"{CACHE_PREFIX}{SUPPORT_VERSION[:8]}"


def _own_temporary(named: Path) -> Path | None:
    """The first private directory of this user's named after ``named`` with a suffix."""
    mine = sorted(p for p in named.parent.glob(named.name + "-*") if _private(p))
    return mine[0] if mine else None


_TEMPORARY_CACHE: list[Path] = []


def _private(path: Path) -> bool:
    """A directory (not a link) of this user's that no one else may read, write or enter."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def _temporary_cache() -> Path:
    """The kernel cache where ``cache_root()`` is not writable: a directory of the temporary
    directory named for the user and version, which later processes reuse, when it is this
    user's own and private. Anyone may create that name first in a shared /tmp (and plant
    modules there that opsnn would import), so else the first private one of this user's named
    after it with a suffix, else a fresh one so named (``mkdtemp``): later processes find and
    reuse it, where each made its own and compiled every kernel again (a new user's breaker)."""
    if not _TEMPORARY_CACHE:
        try:
            path = _versioned(Path(tempfile.gettempdir()), temporary=True)
            try:
                path.mkdir(mode=0o700)
            except OSError:  # there already, or the temporary directory is not writable either
                pass
            if not _private(path):
                path = _own_temporary(path) or Path(tempfile.mkdtemp(prefix=path.name + "-"))
        except OSError as exc:
            raise OSError(nowhere(exc)) from exc
        _TEMPORARY_CACHE.append(path)
    return _TEMPORARY_CACHE[0]


_CLAIMED: list[type] = []


def claim_package_sources() -> None:
    """Have numba keep the machine code of opsnn's own ``cache=True`` functions (``_numba_support``,
    ``parallelism``) in this version's cache directory, ``cache_dir() / "support"``, as the
    generated walkers'. numba's own places are the package's ``__pycache__`` (left behind by ``pip
    uninstall``) or ``~/.cache/numba``, which neither OPSNN_CACHE_DIR moves nor ``opsnn cache``
    lists, and where neither is writable numba refused to compile them, so the numba backend
    failed to load and every kernel ran on NumPy, ~17x slower (a breaker: a read-only install, no
    home, a writable OPSNN_CACHE_DIR). Those modules call it before their first ``cache=True``;
    the locators go first in numba's list and answer for files of this package and for the
    generated walkers in the cache directory only (the walkers' beside them, as numba's in-tree
    locator puts them, also where NUMBA_CACHE_DIR names another place)."""
    if _CLAIMED:
        return
    # every walker is a module written there: with no directory for it the backend could run no
    # kernel (each fell back to NumPy, logged), and numba's own locators took these helpers
    try:
        cache_dir()
    except OSError as exc:
        raise ImportError(str(exc)) from exc
    from numba.core import caching

    class Locator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """numba's cache locator for the files ``answers`` takes, their machine code in
        ``place(py_file)``; where no directory can be made there (none at all, the temporary
        one included), numba's own locators are asked."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(self.place(py_file))

        def get_cache_path(self):
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            if not cls.answers(Path(py_file).resolve().parent):
                return None
            try:
                return super().from_function(py_func, py_file)
            except OSError:
                return None

    class PackageSourceLocator(Locator):  # opsnn's own helpers: in support/
        @staticmethod
        def answers(folder):
            return folder == _HERE

        def place(self, py_file):
            return cache_dir() / "support" / self.get_suitable_cache_subpath(py_file)

    class GeneratedModuleLocator(Locator):
        """The generated walkers' machine code beside them, in the cache's ``__pycache__`` (as
        numba's in-tree locator would), whatever NUMBA_CACHE_DIR says: it had taken them, and
        ``opsnn cache`` neither listed nor removed them (a breaker)."""

        @staticmethod
        def answers(folder):
            return folder.name.startswith((CACHE_PREFIX, TEMPORARY_PREFIX)) and folder == cache_dir().resolve()

        def place(self, py_file):
            return Path(py_file).parent / "__pycache__"

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # (_CacheImpl in older numba)
    impl._locator_classes[:0] = [PackageSourceLocator, GeneratedModuleLocator]
    _CLAIMED.extend((PackageSourceLocator, GeneratedModuleLocator))


__all__ = ["CACHE_PREFIX", "SUPPORT_VERSION", "cache_dir", "cache_root", "claim_package_sources", "existing_cache_dir",
           "nowhere", "numba_version", "root_problem", "root_takes_cache", "stale_cache_dirs"]
