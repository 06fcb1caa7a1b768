"""The reference backend: evaluates a kernel expression with NumPy ufuncs on whole arrays."""

from __future__ import annotations

import types

import numpy as np

from .._core import dtypes

NAME = "numpy"


def _maximum(a, b):
    """max(a, b): NaN if either is NaN; on a tie (-0.0 vs +0.0) ``a`` (torch's clamp keeps x)."""
    return np.where((a < b) | (b != b), b, a)


def _minimum(a, b):
    """min(a, b): NaN if either is NaN; on a tie (-0.0 vs +0.0) ``a``."""
    return np.where((b < a) | (b != b), b, a)


# The ``ops`` namespace a kernel expression is written against (operators cover the rest).
# maximum/minimum are not np.maximum/np.minimum: those return the second operand on a signed-zero
# tie for float32/float64 (np.maximum(-0.0, 0.0) is +0.0), the opposite of torch.clamp.
OPS = types.SimpleNamespace(where=np.where, zero=0, maximum=_maximum, minimum=_minimum)


def launch(step, srcs: list[np.ndarray], dst: np.ndarray) -> None:
    compute = dtypes.to_numpy(step.compute)
    args = [src if native else src.astype(compute, copy=False)
            for src, native in zip(srcs, step.native)]
    scalars = {name: compute.type(value) for name, value in step.scalars}
    with np.errstate(all="ignore"):  # IEEE results (inf * 0 = NaN, overflow to inf) are the contract
        result = step.kernel(OPS, *args, **scalars)
        dtypes.cast_into(dst, np.asarray(result))
