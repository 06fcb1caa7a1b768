"""Warnings that point at the caller's line outside opsnn.

opsnn warns from deep inside: an ``OPSNN_*`` variable read where opsnn first needs it (an import,
a first launch), the kernel backend chosen at a first call. A fixed ``stacklevel`` lands on a
line of opsnn (a new user's finding, and a packaging breaker's: ``engine.py``), so ``warn`` walks
the stack to the first frame outside the opsnn package, past importlib's too (``import_module``
loads the kernel backend); the frames of importlib's ``_bootstrap`` are not counted, as
``warnings`` skips them itself. (Python 3.12's ``skip_file_prefixes`` does this; opsnn runs on
3.10.)
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_IMPORTLIB = importlib.__file__
_RUNPY = os.sep + "runpy.py"


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)``, attributed to the first caller outside opsnn."""
    warnings.warn(message, category, stacklevel=_first_frame_outside_opsnn())


def _first_frame_outside_opsnn() -> int:
    """``warnings.warn``'s stacklevel, from ``warn``, of the first caller outside opsnn (and
    outside what calls opsnn for the user: torch's dispatcher and ``nn.Module.__call__``, which
    run opsnn.torch's operators, and runpy, which runs ``python -m``: a breaker's warnings pointed
    at torch/nn/modules/module.py and <frozen runpy>)."""
    torch = sys.modules.get("torch")
    torch_dir = os.path.dirname(getattr(torch, "__file__", None) or os.sep) + os.sep if torch else None
    level, frame = 2, sys._getframe(2)  # 0: here, 1: warn (level 1), 2: its caller
    while frame is not None:
        name = frame.f_code.co_filename
        if not ("importlib" in name and "_bootstrap" in name):
            if not (name.startswith(_PACKAGE) or name in (_IMPORTLIB, "<frozen runpy>") or name.endswith(_RUNPY)
                    or (torch_dir and name.startswith(torch_dir))):
                return level
            level += 1
        frame = frame.f_back
    return level
