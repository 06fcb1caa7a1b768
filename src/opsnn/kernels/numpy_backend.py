"""The reference backend: evaluates a kernel expression with NumPy ufuncs on whole arrays."""

from __future__ import annotations

import types

import numpy as np

from .._core import dtypes

NAME = "numpy"


def _where(cond, a, b):
    """np.where, with a Python number beside an array first made a scalar of that array's dtype.

    The results are the same bits (NumPy 2 takes a Python number in the other operand's dtype
    anyway), but NumPy 2.0.x crashes the process (a segfault within ~1000 calls) on np.where of a
    bfloat16 array and a Python int, as HardtanhBackward's native bfloat16 grad beside ops.zero
    was; 2.1 and later do not, nor does a zero of the array's own dtype. Only ``int`` and
    ``float`` themselves are converted: a NumPy scalar (np.float64 is a float subclass) keeps its
    own dtype and promotes as NumPy promotes it.
    """
    if type(b) in _PY_NUMBERS and isinstance(a, np.ndarray):
        b = a.dtype.type(b)
    elif type(a) in _PY_NUMBERS and isinstance(b, np.ndarray):
        a = b.dtype.type(a)
    return np.where(cond, a, b)


_PY_NUMBERS = (int, float, bool)


def _maximum(a, b):
    """max(a, b): NaN if either is NaN; on a tie (-0.0 vs +0.0) ``a`` (torch's clamp keeps x)."""
    return _where((a < b) | (b != b), b, a)


def _minimum(a, b):
    """min(a, b): NaN if either is NaN; on a tie (-0.0 vs +0.0) ``a``."""
    return _where((b < a) | (b != b), b, a)


# The ``ops`` namespace a kernel expression is written against (operators cover the rest).
# maximum/minimum are not np.maximum/np.minimum: those return the second operand on a signed-zero
# tie for float32/float64 (np.maximum(-0.0, 0.0) is +0.0), the opposite of torch.clamp. where is
# _where so that no Python number meets a bfloat16 array inside np.where (see there).
OPS = types.SimpleNamespace(where=_where, zero=0, maximum=_maximum, minimum=_minimum)


def launch(step, srcs: list[np.ndarray], dst: np.ndarray) -> None:
    compute = dtypes.to_numpy(step.compute)
    args = [src if native else src.astype(compute, copy=False)
            for src, native in zip(srcs, step.native)]
    scalars = {name: compute.type(value) for name, value in step.scalars}
    with np.errstate(all="ignore"):  # IEEE results (inf * 0 = NaN, overflow to inf) are the contract
        result = step.kernel(OPS, *args, **scalars)
        dtypes.cast_into(dst, np.asarray(result))
