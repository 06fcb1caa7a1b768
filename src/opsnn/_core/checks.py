"""Check primitives. Each raises ``AclnnError`` with CANN's status and a message that names the
operator and argument, the expected and the actual value (spec §10 paraphrased)."""

from __future__ import annotations

import numpy as np

from . import dtypes
from .dtypes import DataType
from .shape import MAX_DIM, fmt
from .status import AclnnError, Status


def fail(op: str, message: str, status: int = Status.ERR_PARAM_INVALID) -> AclnnError:
    return AclnnError(status, f"{op}: {message}")


def not_null(op: str, value, api_name: str, type_name: str) -> None:
    if value is None:
        raise fail(op, f"{api_name} must be an {type_name}, got a null pointer (None)",
                   Status.ERR_PARAM_NULLPTR)


def dtype_in(op: str, dtype: DataType, allowed: tuple[DataType, ...], api_name: str, soc: str,
             what: str = "tensor") -> None:
    if dtype not in allowed:
        names = ", ".join(dtypes.name(d) for d in allowed)
        raise fail(op, f"{what} {api_name} has dtype {dtypes.name(dtype)}, which {soc} does not "
                       f"support; it must be one of [{names}]")


def same_dtype(op: str, dtype: DataType, expected: DataType, api_name: str, ref_name: str) -> None:
    if dtype != expected:
        raise fail(op, f"{api_name} must have the dtype of {ref_name} ({dtypes.name(expected)}), "
                       f"got {dtypes.name(dtype)}")


def max_rank(op: str, shape: tuple[int, ...], api_name: str) -> None:
    if len(shape) > MAX_DIM:
        raise fail(op, f"{api_name} has {len(shape)} dimensions {fmt(shape)}; at most {MAX_DIM} "
                       "are supported")


def same_shape(op: str, shape: tuple[int, ...], expected: tuple[int, ...], api_name: str,
               ref_name: str) -> None:
    if tuple(shape) != tuple(expected):
        raise fail(op, f"{api_name} shape must equal {ref_name} shape {fmt(expected)}, got {fmt(shape)}")


# shares_memory's bound on its exact search; beyond it the views are treated as overlapping
_OVERLAP_WORK = 1 << 16


def no_partial_overlap(op: str, written, read, written_name: str, read_name: str, advice: str) -> None:
    """``written`` (an output tensor) may be exactly ``read`` (the same view: in place) or share
    no element with it; a partial overlap is refused (161002), since a tiled kernel would read
    elements it already wrote. ``advice`` says what to do instead."""
    if written.is_empty or read.is_empty:
        return
    w, r = written.array(), read.array()
    if not np.may_share_memory(w, r):
        return
    if (w.__array_interface__["data"][0], w.shape, w.strides, w.dtype) == \
            (r.__array_interface__["data"][0], r.shape, r.strides, r.dtype):
        return
    try:
        overlap = np.shares_memory(w, r, max_work=_OVERLAP_WORK)
    except np.exceptions.TooHardError:
        overlap = True
    if overlap:
        raise fail(op, f"{written_name} and {read_name} overlap in memory without being the same "
                       f"view ({written_name} {written.describe()}, {read_name} {read.describe()}); "
                       f"{advice}")
