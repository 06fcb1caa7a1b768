"""Recycled output buffers for the Pythonic API's allocating calls.

A fresh ``np.empty`` of a large array is backed by fresh pages: the kernel's first write to each
page faults (and the kernel zeroes it), which for big outputs costs as much as the kernel itself.
This pool keeps large buffers and hands one out again **only when no reference to it is left**:

* every array the pool returns is a view whose ``.base`` is the pooled buffer (NumPy collapses
  view chains to the owner, so any further view, slice, ``torch.from_numpy``, memoryview or
  DLPack export of the result also holds a reference to that buffer);
* a buffer is reused only when ``sys.getrefcount`` shows the pool's own references alone, i.e.
  the caller has dropped the result and everything derived from it.

So a result the caller still holds is never overwritten. Contents of a recycled buffer are
stale, like ``np.empty``'s. Buffers below ``MIN_BYTES`` are not pooled (malloc recycles those
without page faults). Free buffers are kept up to ``max_bytes`` in all (``OPSNN_POOL_BYTES``,
default 2 GiB; 0 disables the pool); ``clear()`` releases them.
"""

from __future__ import annotations

import math
import os
import sys
import threading

import numpy as np

MIN_BYTES = 1 << 20
DEFAULT_MAX_BYTES = 2 << 30
_BASELINE = 3  # references while a buffer is tested: the bucket list, the loop variable, the argument


class OutputPool:
    """Buffers by exact byte size; ``empty(shape, dtype)`` returns a reused or new array."""

    def __init__(self, max_bytes: int | None = None):
        if max_bytes is None:
            max_bytes = int(os.environ.get("OPSNN_POOL_BYTES", DEFAULT_MAX_BYTES))
        self.max_bytes = max_bytes
        self._buckets: dict[int, list[np.ndarray]] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """An uninitialised array like ``np.empty(shape, dtype)``, C-contiguous, owned by the caller."""
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < MIN_BYTES or nbytes > self.max_bytes:
            return np.empty(shape, dtype)
        with self._lock:
            bucket = self._buckets.get(nbytes)
            if bucket is not None:
                for buf in bucket:
                    if sys.getrefcount(buf) == _BASELINE:
                        self.hits += 1
                        return buf.view(dtype).reshape(shape)
            self.misses += 1
            if self._bytes + nbytes > self.max_bytes:
                self._evict(self._bytes + nbytes - self.max_bytes)
            if self._bytes + nbytes > self.max_bytes:  # everything pooled is in use
                return np.empty(shape, dtype)
            buf = np.empty(nbytes, np.uint8)
            self._buckets.setdefault(nbytes, []).append(buf)
            self._bytes += nbytes
            return buf.view(dtype).reshape(shape)

    def _evict(self, needed: int) -> None:
        freed = 0
        for size in sorted(self._buckets, reverse=True):
            bucket = self._buckets[size]
            for i in range(len(bucket) - 1, -1, -1):
                if freed >= needed:
                    return
                buf = bucket[i]
                if sys.getrefcount(buf) == _BASELINE:
                    del bucket[i]
                    self._bytes -= size
                    freed += size
                del buf
            if not bucket:
                del self._buckets[size]

    def clear(self) -> None:
        """Forget every buffer (arrays the caller holds stay valid: they keep their memory)."""
        with self._lock:
            self._buckets.clear()
            self._bytes = 0

    @property
    def pooled_bytes(self) -> int:
        return self._bytes


POOL = OutputPool()


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return POOL.empty(shape, dtype)


def clear() -> None:
    POOL.clear()
