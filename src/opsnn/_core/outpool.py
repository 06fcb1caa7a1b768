"""Recycled output buffers for the Pythonic API's allocating calls.

A fresh ``np.empty`` of a large array is backed by fresh pages: the kernel's first write to each
page faults (and the kernel zeroes it), which for big outputs costs as much as the kernel itself.
This pool keeps large buffers and hands one out again **only when no reference to it is left**:

* every array the pool returns is a view whose ``.base`` is the pooled buffer (NumPy collapses
  view chains to the owner, so any further view, slice, ``torch.from_numpy``, memoryview or
  DLPack export of the result also holds a reference to that buffer);
* a buffer is reused only when ``sys.getrefcount`` shows the pool's own references alone, i.e.
  the caller has dropped the result and everything derived from it. What "alone" reads as is
  measured each time on a probe array the pool alone holds, read the same way (``_is_free``),
  not assumed: interpreters count a local's reference differently (CPython 3.14 borrows some),
  and a count one too low would hand out a buffer the caller still holds.

So a result the caller still holds is never overwritten. Contents of a recycled buffer are
stale, like ``np.empty``'s. Buffers below ``MIN_BYTES`` are not pooled (malloc recycles those
without page faults). Buffers are kept up to ``max_bytes`` in all (``OPSNN_POOL_BYTES``, default
2 GiB; 0 disables the pool), and at most ``MAX_IDLE`` free ones, the most recently used: outputs
whose size changes every call (nothing to reuse) then cost a few buffers, not 2 GiB held for
nothing, and their memory goes back to malloc; so do the free ones beyond ``MAX_IDLE`` after a
workload that held many results at once (activations kept for a backward pass) drops them, at
the next call that takes one. ``clear()`` releases them all.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from . import forksafe, settings

MIN_BYTES = 1 << 20
DEFAULT_MAX_BYTES = 2 << 30
MAX_IDLE = 4
# an array only the pool references: its count, read as a pooled buffer's is, is a free buffer's
_PROBE = [np.empty(0, np.uint8)]


def _is_free(buffers: list, i: int) -> bool:
    """Whether no reference to ``buffers[i]`` is left but the pool's: its count equals that of
    ``_PROBE``'s array, which only its list holds, both read into locals the same way."""
    buf, probe = buffers[i], _PROBE[0]
    return sys.getrefcount(buf) == sys.getrefcount(probe)


class OutputPool:
    """Large buffers, least recently handed out first; ``empty(shape, dtype)`` returns a reused
    buffer of exactly that many bytes, or a new one."""

    def __init__(self, max_bytes: int | None = None):
        self._max_bytes = max_bytes  # None: OPSNN_POOL_BYTES, read when first needed (max_bytes)
        self._buffers: list[np.ndarray] = []  # in use and free, least recently handed out first
        self._lock = forksafe.lock()
        self.hits = 0
        self.misses = 0

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """An uninitialised array like ``np.empty(shape, dtype)``, C-contiguous, owned by the caller."""
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < MIN_BYTES or nbytes > self.max_bytes:
            return np.empty(shape, dtype)
        with self._lock:
            for i in range(len(self._buffers)):
                if self._buffers[i].nbytes == nbytes and _is_free(self._buffers, i):
                    self.hits += 1
                    self._buffers.append(self._buffers.pop(i))
                    result = self._buffers[-1].view(dtype).reshape(shape)  # held from here on
                    if len(self._buffers) > MAX_IDLE:  # results held together, then dropped
                        # (the one handed out is free again once its result is dropped)
                        self._release_free(keep=MAX_IDLE - 1, needed=0)
                    return result
            self.misses += 1
            self._release_free(keep=MAX_IDLE - 1, needed=self.pooled_bytes + nbytes - self.max_bytes)
            if self.pooled_bytes + nbytes > self.max_bytes:  # everything pooled is in use
                return np.empty(shape, dtype)
            buf = np.empty(nbytes, np.uint8)
            self._buffers.append(buf)
            return buf.view(dtype).reshape(shape)

    def _release_free(self, keep: int, needed: int) -> None:
        """Release free buffers, least recently used first, until at most ``keep`` are left and
        ``needed`` bytes (if positive) were freed."""
        free = [self._buffers[i] for i in range(len(self._buffers)) if _is_free(self._buffers, i)]
        released, freed = set(), 0
        for count, buf in enumerate(free):
            if len(free) - count <= keep and freed >= needed:
                break
            released.add(id(buf))
            freed += buf.nbytes
        self._buffers = [buf for buf in self._buffers if id(buf) not in released]

    def clear(self) -> None:
        """Forget every buffer (arrays the caller holds stay valid: they keep their memory)."""
        with self._lock:
            self._buffers = []

    @property
    def max_bytes(self) -> int:
        """The bytes kept in all. ``OPSNN_POOL_BYTES`` is read by the first call, as a kernel
        backend loads (``kernels._import``) or the pool is first needed, not at import: a malformed
        value's warning then names that call's line, and under the ``opsnn`` command prints as the
        command's warnings do (at import it pointed at the console script's launcher, before the
        command took over the warnings' format)."""
        if self._max_bytes is None:
            self._max_bytes = settings.env_bytes("OPSNN_POOL_BYTES", DEFAULT_MAX_BYTES)
        return self._max_bytes

    @property
    def pooled_bytes(self) -> int:
        return sum(buf.nbytes for buf in self._buffers)


POOL = OutputPool()


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return POOL.empty(shape, dtype)


def clear() -> None:
    POOL.clear()
