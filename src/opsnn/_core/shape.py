"""Shapes, strides and broadcasting (opbase ``shape_utils.cpp``; spec §2.6, §2.7)."""

from __future__ import annotations

import math

MAX_DIM = 8  # every checked tensor: MAX_DIM / MAX_DIM_LEN / MAX_SUPPORT_DIMS_NUMS in ops-nn
INT64_MAX = 2**63 - 1  # opbase's dims, strides, offsets and the tilings' counts are int64_t


def numel(shape: tuple[int, ...]) -> int:
    """Element count; a 0-d shape has one element."""
    return math.prod(shape)


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements."""
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= max(dim, 1)
    return tuple(reversed(strides))


def opbase_contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides as opbase's ``ToContiguousStrides`` computes them (what aclCreateTensor
    stores for a null stride): plain products of the inner dims, so a 0 dim makes every stride
    outside it 0 (``contiguous_strides`` keeps those at least 1, as torch does)."""
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= dim
    return tuple(reversed(strides))


def is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """True when a view with these element strides is row-major dense (size-1 dims ignored)."""
    if numel(shape) == 0:
        return True
    expected = 1
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """NumPy-style broadcast of two shapes, or None when a pair of dims conflicts.

    Dims align from the right; each pair must be equal or one side 1; 0 with 1 gives 0.
    """
    ndim = max(len(a), len(b))
    a = (1,) * (ndim - len(a)) + tuple(a)
    b = (1,) * (ndim - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def fmt(shape: tuple[int, ...]) -> str:
    """Shape as CANN logs print it: ``[2, 3]``."""
    return "[" + ", ".join(str(d) for d in shape) + "]"
