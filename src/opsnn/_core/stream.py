"""Emulated streams: in-order task queues, run when the stream is synchronized.

Phase 2 of an aclnn call only enqueues (like an NPU launch). ``synchronize`` runs the queued
tasks in order and reports the first failure, as ``aclrtSynchronizeStream`` does; tasks after a
failure are dropped. A host program that reads results without synchronizing sees the old data,
as it could on a device.
"""

from __future__ import annotations

import collections
import itertools
import threading
from collections.abc import Callable

from .status import AclError, AclnnError


class Stream:
    def __init__(self, handle: int):
        self.handle = handle
        self._tasks: collections.deque[tuple[str, Callable[[], None]]] = collections.deque()
        self._lock = threading.Lock()

    def enqueue(self, label: str, task: Callable[[], None]) -> None:
        with self._lock:
            self._tasks.append((label, task))

    @property
    def pending(self) -> int:
        return len(self._tasks)

    def synchronize(self) -> None:
        """Run every queued task in order; raise the first failure (the rest are dropped)."""
        with self._lock:
            tasks, self._tasks = self._tasks, collections.deque()
        for label, task in tasks:
            try:
                task()
            except AclnnError as exc:
                raise AclnnError(AclError.RT_FAILURE, f"stream task {label} failed: {exc.message}") from exc


class StreamTable:
    """Live streams by handle; handle 0 (or None) is the default stream."""

    def __init__(self) -> None:
        self._streams: dict[int, Stream] = {0: Stream(0)}
        self._ids = itertools.count(0x5000_0001, 0x40)
        self._lock = threading.Lock()

    def create(self) -> int:
        with self._lock:
            handle = next(self._ids)
            self._streams[handle] = Stream(handle)
        return handle

    def get(self, handle) -> Stream:
        key = 0 if handle is None else handle
        if isinstance(key, bool) or not isinstance(key, int) or key not in self._streams:
            raise AclnnError(AclError.INVALID_RESOURCE_HANDLE,
                             f"stream {handle!r} is not a live stream (create it with acl.rt.create_stream)")
        return self._streams[key]

    def destroy(self, handle) -> None:
        """Runs what is queued, then forgets the stream (like aclrtDestroyStream's wait)."""
        stream = self.get(handle)
        if stream.handle == 0:
            raise AclnnError(AclError.INVALID_PARAM, "the default stream cannot be destroyed")
        with self._lock:
            del self._streams[stream.handle]
        stream.synchronize()

    def reset(self) -> None:
        with self._lock:
            self._streams = {0: Stream(0)}
