"""The command that installs one of opsnn's optional extras (``torch``, ``train``, ``bench``,
``test``), worded once for every message that needs it.

opsnn is not on PyPI. In a clone (an editable install, or ``src`` on ``PYTHONPATH``) an extra is
``pip install -e '<clone>[extra]'``; an opsnn installed from a wheel or sdist gets it with
``pip install 'opsnn[extra]'``, which keeps the installed opsnn and adds the extra's packages.
"""

from __future__ import annotations

import shlex
from pathlib import Path

# the opsnn package this module belongs to (src/opsnn in a clone, site-packages/opsnn otherwise)
_PACKAGE = Path(__file__).resolve().parents[1]


def source_tree(package: Path) -> Path | None:
    """The clone that the opsnn package directory *package* sits in (the folder holding ``src``
    and pyproject.toml), or None for an installed copy."""
    root = package.parents[1]
    return root if package.parent.name == "src" and (root / "pyproject.toml").is_file() else None


def install_hint(extra: str) -> str:
    """The pip command line that installs opsnn's optional *extra* for the opsnn running now:
    ``pip install -e '/path/to/clone[extra]'`` in a clone, ``pip install 'opsnn[extra]'``
    otherwise (quoted for a POSIX shell)."""
    root = source_tree(_PACKAGE)
    if root is None:
        return f"pip install {shlex.quote(f'opsnn[{extra}]')}"
    return f"pip install -e {shlex.quote(f'{root}[{extra}]')}"
