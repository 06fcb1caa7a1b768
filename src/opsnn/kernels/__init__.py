"""Kernel backends: each executes a Kernel step (an elementwise expression) over NumPy views.

Launch contract (every backend): ``launch(step, srcs, dst)`` where ``srcs`` are the kernel inputs
in ``step.kernel``'s order (already contiguous and in the promoted dtype, broadcastable to
``dst``), ``step.native[i]`` says whether input i stays in its own dtype (bits copied) instead of
being widened to ``step.compute`` (float32/float64, or an integer dtype computed natively),
``step.scalars`` are the kernel attributes as Python numbers exact in ``step.compute`` (float32
values for ToFloat attrs; values of self's dtype for Hardtanh's bounds), the ``ops`` namespace
offers ``where``, ``isnan``, ``zero``, ``maximum`` and ``minimum`` (NaN-propagating, a signed-zero
tie returns the first operand; see numpy_backend), and ``dst`` receives the result rounded once
(to nearest even) to its dtype. No checks, no allocation decisions, no dtype policy: the engine
made those in phase 1.
"""

from __future__ import annotations

import importlib

_BACKENDS = {"numpy": "opsnn.kernels.numpy_backend"}
DEFAULT = "numpy"


def get(name: str | None = None):
    """The backend module by name (``numpy``); None selects the default."""
    key = name or DEFAULT
    if key not in _BACKENDS:
        raise ValueError(f"unknown kernel backend {key!r}; known: {', '.join(_BACKENDS)}")
    return importlib.import_module(_BACKENDS[key])
