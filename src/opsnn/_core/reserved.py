"""Described storages: arrays whose memory is an address range reserved from this process's
address space, never committed and never readable.

``opsnn tiling`` runs an aclnn call's phase 1 on tensors of any size this way. Phase 1 reads
metadata only: shapes, strides, dtypes, and for its out-overlap check the address range each
storage covers (``_core.overlap``: a layout from the array's address and strides, NumPy's
``shares_memory``, which compares extents and reads no element). A reserved range gives every
storage addresses of its own, so the checks that run on these arrays are the very checks a
small call's real arrays get, with no second, descriptor-only copy of any of them, and a
terabyte tensor costs no memory. An element read (a bug: nothing on this path reads one) is a
segmentation fault, never a silent read of other memory.
"""

from __future__ import annotations

import math
import mmap

import numpy as np

# PROT_NONE (no access; the mmap module names no constant for it): the pages are never
# committed. MAP_NORESERVE (Linux) keeps the range out of the commit charge as well. Windows'
# mmap takes neither flags nor prot: there the storage is a zeroed array (pages committed as
# touched, which nothing here does), and a size past the host's memory is refused.
_PROT_NONE = 0
_POSIX = hasattr(mmap, "MAP_ANONYMOUS")
_FLAGS = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0) if _POSIX else 0


def described(shape: tuple[int, ...], dtype) -> np.ndarray:
    """A read-only C-contiguous array of ``shape`` (dims >= 0) and NumPy ``dtype`` over a storage
    of its own: ``prod(shape) * itemsize`` bytes of reserved, inaccessible addresses (none for
    an empty shape). Its metadata and address range are what phase 1 reads; its elements must
    never be read. Raises MemoryError when this host's address space cannot hold the range (about
    128 TiB, every live reservation together, on x86-64 Linux), naming the bytes asked for."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes == 0:
        return np.empty(shape, dtype)  # no storage: NumPy allocates nothing for it
    try:
        if not _POSIX:
            return np.zeros(shape, dtype)  # (its MemoryError, or ValueError past 2**63 bytes)
        region = mmap.mmap(-1, nbytes, flags=_FLAGS, prot=_PROT_NONE)
    except (OSError, OverflowError, ValueError, MemoryError) as exc:
        raise MemoryError(f"{nbytes} bytes of address space cannot be reserved on this host ({exc})") from None
    return np.frombuffer(region, dtype).reshape(shape)


__all__ = ["described"]
