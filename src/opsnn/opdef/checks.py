"""The checks the op_host tiling functions run before tiling; each failure is a TilingError whose
reason names the tensors, what was expected and what was found."""

from __future__ import annotations

from .._core.dtypes import DataType, name
from .._core.tiling import TilingError
from .base import FLOAT_TYPES, Shape


def require_float_dtype(op: str, tensor: str, dtype: DataType) -> None:
    """The kernels here exist for FLOAT16, BF16 and FLOAT only."""
    if dtype not in FLOAT_TYPES:
        allowed = ", ".join(name(d) for d in FLOAT_TYPES)
        raise TilingError(op, f"{tensor} dtype {name(dtype)} is not supported; it must be one of {allowed}")


def require_same_dtype(op: str, *tensors: tuple[str, DataType]) -> None:
    """All the named tensors share one dtype."""
    if len({d for _, d in tensors}) > 1:
        listing = ", ".join(f"{n} {name(d)}" for n, d in tensors)
        raise TilingError(op, f"the dtypes of {', '.join(n for n, _ in tensors)} must be the same, got {listing}")


def require_same_shape(op: str, a: tuple[str, Shape], b: tuple[str, Shape]) -> None:
    """Two storage shapes (0-d already read as [1]) are equal."""
    if tuple(a[1]) != tuple(b[1]):
        raise TilingError(op, f"the shapes of {a[0]} and {b[0]} must be the same, got {list(a[1])} and {list(b[1])}")
