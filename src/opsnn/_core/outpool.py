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
without page faults). Buffers are kept up to ``max_bytes`` in all (``OPSNN_POOL_BYTES``, default
2 GiB; 0 disables the pool), and at most ``MAX_IDLE`` free ones, the most recently used: outputs
whose size changes every call (nothing to reuse) then cost a few buffers, not 2 GiB held for
nothing, and their memory goes back to malloc. ``clear()`` releases them all.
"""

from __future__ import annotations

import math
import os
import sys
import threading

import numpy as np

MIN_BYTES = 1 << 20
DEFAULT_MAX_BYTES = 2 << 30
MAX_IDLE = 4
# references to a pooled buffer while it is tested, when the caller holds none: its bucket list,
# the order list, the loop variable and getrefcount's argument
_BASELINE = 4


class OutputPool:
    """Buffers by exact byte size; ``empty(shape, dtype)`` returns a reused or new array."""

    def __init__(self, max_bytes: int | None = None):
        if max_bytes is None:
            max_bytes = int(os.environ.get("OPSNN_POOL_BYTES", DEFAULT_MAX_BYTES))
        self.max_bytes = max_bytes
        self._buckets: dict[int, list[np.ndarray]] = {}
        self._order: list[np.ndarray] = []  # every pooled buffer, least recently handed out first
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
            for buf in self._buckets.get(nbytes, ()):
                if sys.getrefcount(buf) == _BASELINE:
                    self.hits += 1
                    self._order.append(self._order.pop(_index(self._order, buf)))
                    return buf.view(dtype).reshape(shape)
            self.misses += 1
            self._release_free(keep=MAX_IDLE - 1, needed=self._bytes + nbytes - self.max_bytes)
            if self._bytes + nbytes > self.max_bytes:  # everything pooled is in use
                return np.empty(shape, dtype)
            buf = np.empty(nbytes, np.uint8)
            self._buckets.setdefault(nbytes, []).append(buf)
            self._order.append(buf)
            self._bytes += nbytes
            return buf.view(dtype).reshape(shape)

    def _release_free(self, keep: int, needed: int) -> None:
        """Release free buffers, least recently used first, until at most ``keep`` are left and
        ``needed`` bytes (if positive) were freed."""
        free = [buf for buf in self._order if sys.getrefcount(buf) == _BASELINE]
        freed = 0
        for count, buf in enumerate(free):
            if len(free) - count <= keep and freed >= needed:
                return
            bucket = self._buckets[buf.nbytes]
            bucket.pop(_index(bucket, buf))
            if not bucket:
                del self._buckets[buf.nbytes]
            self._order.pop(_index(self._order, buf))
            self._bytes -= buf.nbytes
            freed += buf.nbytes

    def clear(self) -> None:
        """Forget every buffer (arrays the caller holds stay valid: they keep their memory)."""
        with self._lock:
            self._buckets.clear()
            self._order.clear()
            self._bytes = 0

    @property
    def pooled_bytes(self) -> int:
        return self._bytes


def _index(buffers: list[np.ndarray], buf: np.ndarray) -> int:
    """Position of ``buf`` itself in ``buffers`` (``list.index`` would compare arrays' values)."""
    return next(i for i, b in enumerate(buffers) if b is buf)


POOL = OutputPool()


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return POOL.empty(shape, dtype)


def clear() -> None:
    POOL.clear()
