"""Where the compiled walkers live on disk: one directory per support version
(``walker_source.SUPPORT_VERSION``: opsnn's support code, numba and NumPy) under a root the
user may choose, holding the generated modules and numba's machine code beside them. A new
version starts a new directory; the old ones are never read again, and ``opsnn cache`` lists and
removes them (never on its own: two environments with different versions may share one root)."""

from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path

from .walker_source import SUPPORT_VERSION

CACHE_PREFIX = "numba-kernels-"  # + the first 8 hex digits of SUPPORT_VERSION


def cache_root() -> Path:
    """The directory that holds one kernel cache per support version: ``$OPSNN_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/opsnn``, else ``~/.cache/opsnn``."""
    root = os.environ.get("OPSNN_CACHE_DIR")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "opsnn"


def stale_cache_dirs() -> list[Path]:
    """Kernel caches under ``cache_root()`` of other support versions (another opsnn, numba or
    NumPy made them: this one never reads them again), oldest first. Only directories named as
    ``cache_dir`` names them, and no symbolic link (whose target may be anything): nothing else
    under the root is ever listed."""
    current = CACHE_PREFIX + SUPPORT_VERSION[:8]
    try:
        found = [p for p in cache_root().iterdir() if p.is_dir() and not p.is_symlink() and p.name != current
                 and re.fullmatch(re.escape(CACHE_PREFIX) + "[0-9a-f]{8}", p.name)]
    except OSError:  # no root yet
        return []
    return sorted(found, key=lambda p: p.stat().st_mtime)


def cache_dir() -> Path:
    """Where generated kernel modules (and numba's cache beside them) live: a directory of
    ``cache_root()`` named by the support version (created), or one in the temporary directory
    where that is not writable."""
    path = cache_root() / f"{CACHE_PREFIX}{SUPPORT_VERSION[:8]}"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".writable"
        probe.touch()
        return path
    except OSError:
        return _temporary_cache()


_TEMPORARY_CACHE: list[Path] = []


def _temporary_cache() -> Path:
    """The kernel cache where ``cache_root()`` is not writable: a directory of the temporary
    directory named for the user and version, which later processes reuse, when it is this
    user's own and private; else a fresh private one (anyone may create that name first in a
    shared /tmp, and plant modules there that opsnn would import)."""
    if not _TEMPORARY_CACHE:
        path = Path(tempfile.gettempdir()) / f"opsnn-numba-kernels-{os.getuid()}-{SUPPORT_VERSION[:8]}"
        try:
            path.mkdir(mode=0o700, exist_ok=True)
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
                raise PermissionError(f"{path} is not a private directory of this user")
        except OSError:
            path = Path(tempfile.mkdtemp(prefix=f"opsnn-numba-kernels-{os.getuid()}-"))
        _TEMPORARY_CACHE.append(path)
    return _TEMPORARY_CACHE[0]


__all__ = ["CACHE_PREFIX", "cache_dir", "cache_root", "stale_cache_dirs"]
