"""The command that installs one of opsnn's optional extras (``torch``, ``train``, ``bench``,
``test``), worded once for every message that needs it.

opsnn is not on PyPI. In a clone (an editable install, or ``src`` on ``PYTHONPATH``) an extra is
``pip install -e '<clone>[extra]'``; an opsnn installed from a wheel or sdist gets it with
``pip install 'opsnn[extra]'``, which keeps the installed opsnn and adds the extra's packages.
Every extra pins torch==2.13.0, meant as its CPU build: on Linux, where PyPI's torch wheel is the
CUDA one (several GB of CUDA libraries), the command names PyTorch's CPU index too, as the
README's Quick start does.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

# the opsnn package this module belongs to (src/opsnn in a clone, site-packages/opsnn otherwise)
_PACKAGE = Path(__file__).resolve().parents[1]
# where pip finds torch's CPU builds (torch==2.13.0 resolves to 2.13.0+cpu there)
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def source_tree(package: Path) -> Path | None:
    """The clone that the opsnn package directory *package* sits in (the folder holding ``src``
    and pyproject.toml), or None for an installed copy."""
    root = package.parents[1]
    return root if package.parent.name == "src" and (root / "pyproject.toml").is_file() else None


def install_hint(extra: str) -> str:
    """The pip command line that installs opsnn's optional *extra* for the opsnn running now:
    ``pip install -e '/path/to/clone[extra]'`` in a clone, ``pip install 'opsnn[extra]'``
    otherwise (quoted for a POSIX shell), on Linux followed by ``--extra-index-url`` and
    PyTorch's CPU index."""
    root = source_tree(_PACKAGE)
    command = (f"pip install {shlex.quote(f'opsnn[{extra}]')}" if root is None
               else f"pip install -e {shlex.quote(f'{root}[{extra}]')}")
    # (every extra holds torch: a hint without the index installed the CUDA build on Linux)
    return f"{command} --extra-index-url {TORCH_CPU_INDEX}" if _pypi_torch_is_cuda() else command


def _pypi_torch_is_cuda() -> bool:
    """Whether the torch wheel pip takes from PyPI here is the CUDA build: Linux's."""
    return sys.platform.startswith("linux")
