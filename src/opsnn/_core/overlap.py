"""Memory-overlap geometry of tensor views (device address ranges or NumPy arrays).

A view is described by its first element's address (in bits, so sub-byte dtypes work), its shape
and its strides (in bits); size-1 dims carry no stride. Two views *overlap* when some element of
one shares a byte with an element of the other. The engine's ``check_out_overlap`` uses these to
allow ``out`` to be exactly an input (in place) or disjoint from it, and to refuse the rest.

Only metadata is read for the common cases (disjoint byte ranges, identical views); the exact
test (NumPy's bounded ``shares_memory``) resolves the live data views, which for device tensors
are views of the same emulated allocation, so their host addresses mirror the device ranges (a
dtype NumPy cannot hold is viewed as its bytes).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from . import dtypes
from .tensor import DataLessTensor, aclTensor

# NumPy's exact overlap search is exponential in the worst case; beyond this bound the views are
# treated as overlapping (refused, never silently computed wrong).
MAX_WORK = 1 << 16
# An out whose strides do not prove its elements distinct is checked element by element up to
# this many elements; beyond it, it is refused.
MAX_ENUMERATE = 1 << 20


class Layout(NamedTuple):
    """Where a view's elements lie: ``space`` ("device" / "host"), first element at bit
    ``start``, ``shape``, ``strides`` in bits (0 for size-1 dims), element width ``bits``, and
    ``[lo, hi)``, the bits that cover every element (negative strides reach down)."""

    space: str
    start: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    bits: int
    dtype: int
    lo: int
    hi: int

    @property
    def empty(self) -> bool:
        return 0 in self.shape


def layout(tensor) -> Layout:
    """The Layout of an aclTensor (from its metadata; no memory access; kept on the tensor with
    the address it was computed for, the only metadata that can change: ``set_storage_addr``)
    or an ArrayTensor."""
    if isinstance(tensor, aclTensor):
        addr = tensor.addr  # read once: the key and the layout both follow it, whatever a move does meanwhile
        cached = tensor.layout
        if cached is None or cached[0] != addr:
            cached = tensor.layout = (addr, _layout(tensor, addr))
        return cached[1]
    return _layout(tensor)


def _layout(tensor, addr: int | None = None) -> Layout:
    """The Layout of ``tensor``; an aclTensor's at device address ``addr`` (read by the caller)."""
    if isinstance(tensor, aclTensor):
        bits = dtypes.BITS[tensor.dtype]
        start = addr * 8 + tensor.offset * bits
        strides = tuple(s * bits for s in tensor.strides)
        space = "device"
    else:
        arr = _host_memory(tensor)
        bits = arr.dtype.itemsize * 8
        start = int(arr.__array_interface__["data"][0]) * 8
        strides = tuple(s * 8 for s in arr.strides)
        space = "host"
    shape = tuple(tensor.shape)
    strides = tuple(0 if d == 1 else s for d, s in zip(shape, strides))
    lo = hi = start
    for dim, stride in zip(shape, strides):
        reach = (dim - 1) * stride
        if reach > 0:
            hi += reach
        else:
            lo += reach
    return Layout(space, start, shape, strides, bits, int(tensor.dtype), lo, hi + bits)


def same_view(a: Layout, b: Layout) -> bool:
    """Element i of ``a`` is exactly element i of ``b`` for every i (an in-place pair)."""
    return a == b


def disjoint_ranges(a: Layout, b: Layout) -> bool:
    """The two views' address ranges do not even intersect (cheap, metadata only)."""
    if a.space != b.space or a.empty or b.empty:
        return True
    return a.hi <= b.lo or b.hi <= a.lo


def shares_memory(a, b) -> bool | None:
    """Whether an element of tensor ``a`` shares a byte with one of ``b``: True, False, or None
    where opsnn cannot tell (NumPy's exact search passed its work bound; a packed sub-byte view
    at strides of no whole bytes, compared as its whole run of bytes, meets the other). Reads
    the live memory views, not the elements; AclnnError where one is gone (``aclTensor.array``)."""
    a_arr, a_exact = _memory_view(a)
    b_arr, b_exact = _memory_view(b)
    try:
        shared = np.shares_memory(a_arr, b_arr, max_work=MAX_WORK)
    except np.exceptions.TooHardError:
        return None
    return bool(shared) if not shared or (a_exact and b_exact) else None


def _memory_view(tensor) -> tuple[np.ndarray, bool]:
    """A NumPy view of ``tensor``'s elements' memory and whether it holds theirs alone: the live
    array where NumPy has the dtype, else the bytes (``aclTensor.byte_view``, a DataLessTensor's
    ``memory``): HIFLOAT8, COMPLEX32, INT4 ... have no NumPy type (an out may be of any dtype
    when this runs)."""
    if isinstance(tensor, aclTensor):
        return (tensor.array(), True) if dtypes.holds_data(tensor.dtype) else tensor.byte_view()
    return _host_memory(tensor), True


def _host_memory(tensor) -> np.ndarray:
    """The NumPy view of a host tensor's memory: an ArrayTensor's array, a DataLessTensor's
    ``memory`` (torch.complex32's, as int32)."""
    return tensor.memory if isinstance(tensor, DataLessTensor) else tensor.array()


def internal_overlap(lay: Layout) -> bool | None:
    """Whether two elements of one view share memory: False (proved distinct), True (found),
    or None (too large to decide). A 0 stride on a dim > 1 (a broadcast view) always overlaps."""
    return _internal_overlap(lay.shape, lay.strides, lay.bits)


@functools.lru_cache(maxsize=1024)  # a property of the geometry alone; outs repeat call after call
def _internal_overlap(shape: tuple, strides: tuple, bits: int) -> bool | None:
    dims = sorted(((abs(s), d) for d, s in zip(shape, strides) if d > 1))
    if not dims:
        return False
    if dims[0][0] == 0:
        return True
    extent = bits  # sufficient condition: each stride clears the span of the smaller ones
    for stride, dim in dims:
        if stride < extent:
            break
        extent += (dim - 1) * stride
    else:
        return False
    count = 1
    for _, dim in dims:
        count *= dim
    if count > MAX_ENUMERATE:
        return None
    offsets = np.zeros(1, dtype=object if extent >= 2**62 else np.int64)
    for stride, dim in dims:
        offsets = (offsets[:, None] + np.arange(dim, dtype=offsets.dtype)[None, :] * stride).reshape(-1)
    offsets.sort()
    # elements overlap when two starts are closer than one element's width
    return bool((np.diff(offsets) < bits).any())
