"""Emulated events (aclrtEvent): markers a stream reaches when its queue runs.

``record`` queues a task on a stream (``_core.stream``) that stamps the event with the host's
clock when the stream's queue runs it, so the time between two events recorded on one stream is
the time the tasks between them took, as on a device. An event is complete when the task of its
latest record has run; a record dropped by an earlier task's failure never completes (CANN:
"not executed or failed" reads as not ready).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Generator

from . import forksafe
from .checks import is_c_int, is_null, shown
from .status import AclError, AclnnError
from .stream import Stream, drive

NOT_READY, COMPLETE = 0, 1  # aclrtEventRecordedStatus


class Event:
    """One event: its latest record (each record keeps its own outcome: run and stamped, or
    dropped by a failure before it), how many were made, and whether a stream may wait for it
    (``waitable``: made by aclrtCreateEvent, or with ACL_EVENT_SYNC)."""

    def __init__(self, handle: int, waitable: bool = True):
        self.handle = handle
        self.waitable = waitable
        self._changed = forksafe.condition()  # notified when a record runs or is dropped
        self.recorded = 0                       # records made so far
        self.latest: _Record | None = None

    def record(self, stream: Stream) -> None:
        with self._changed:
            task = _Record(self, stream)
            task.place = stream.enqueue(f"record_event {self.handle:#x}", task)
            self.recorded, self.latest = self.recorded + 1, task

    @property
    def status(self) -> int:
        latest = self.latest
        return COMPLETE if latest is not None and latest.stamp is not None else NOT_READY

    def dropped_text(self, record: _Record) -> str:
        return (f"event {self.handle:#x}'s record was dropped, not run: a task queued before it failed "
                f"({record.lost}); record it again")

    def synchronize(self) -> None:
        """Waits for the latest record (none: returns at once); then, as a stream's synchronize
        does, raises if another thread's run of that stream failed or dropped tasks this thread
        had queued before the record (the record ran, but work before it did not)."""
        with self._changed:
            latest = self.latest
        drive(self._wait_for(latest))
        if latest is not None:
            latest.stream.report_dropped(before=latest.place)

    def waiter(self):
        """A task for another stream that waits for the latest record made so far (none: no wait)."""
        with self._changed:
            latest = self.latest

        def wait():  # a task: its run of the recorded stream, for Stream._run_tasks (none when it ran)
            if latest is not None and latest.stamp is None:
                return self._wait_for(latest, for_a_stream=True)
        return wait

    def _wait_for(self, record: _Record | None, for_a_stream: bool = False) -> Generator:
        """A wait (a generator, for ``stream.drive``) that ends once ``record`` ran: runs its
        stream's queue up to it (yields ``Stream.run_until``'s run), or, while another
        thread runs that stream, waits for it to get there. Raises the failure that drops it
        (500003), then, for a record dropped earlier, says so. ``for_a_stream``: the wait is a
        task of another stream (stream_wait_event), whose failure is that stream's, so a failure
        met here is also told at the recorded stream's own next synchronize (``Stream.run_until``);
        synchronize_event's caller asked about the recorded stream itself and is told by the raise."""
        if record is None:
            return
        settled, stream = record.settled, record.stream
        while True:
            with self._changed:
                if record.stamp is not None:
                    return
                if record.lost is not None:
                    raise AclnnError(AclError.RT_FAILURE, self.dropped_text(record))
            claims, ran = stream.claims(), False
            try:
                ran = stream.claim()
                if ran:
                    yield stream.run_until(settled, tell_caller=for_a_stream)
            finally:  # (by count where a Ctrl-C came between the claim and ``ran``)
                if ran or stream.claims() > claims:
                    stream.unclaim()
            if not ran:
                with self._changed:  # another thread runs the stream: it gets to the record
                    self._changed.wait_for(settled, 0.05)
            elif not settled() and not stream.pending:
                return  # the queue ran dry without it (not expected: every record is queued)


class _Record:
    """The task a record queues, its ``place`` in its stream's queue order, and its outcome:
    ``stamp`` (time.perf_counter() when it ran, seconds), or ``lost`` (why a failure before it
    dropped it)."""

    __slots__ = ("event", "lost", "place", "stamp", "stream")

    def __init__(self, event: Event, stream: Stream):
        self.event, self.stream = event, stream
        self.place = 0
        self.stamp: float | None = None
        self.lost: str | None = None

    def settled(self) -> bool:
        return self.stamp is not None or self.lost is not None

    def __call__(self) -> None:
        now = time.perf_counter()
        with self.event._changed:
            self.stamp = now
            self.event._changed.notify_all()

    def dropped(self, why: str) -> None:
        with self.event._changed:
            self.lost = why
            self.event._changed.notify_all()


class EventTable:
    """Live events by handle (ints, like the streams')."""

    def __init__(self) -> None:
        self._events: dict[int, Event] = {}
        self._ids = itertools.count(0x6000_0000_0001, 0x40)  # apart from the streams' (stream.py)
        self._lock = forksafe.lock()

    def create(self, waitable: bool = True) -> int:
        with self._lock:
            handle = next(self._ids)
            self._events[handle] = Event(handle, waitable)
        return handle

    def get(self, handle, what: str = "event") -> Event:
        """The live event ``handle`` names: 100000 for NULL (None, 0), 200005 for anything else."""
        if is_null(handle):
            raise AclnnError(AclError.INVALID_PARAM, f"{what} is NULL ({handle!r})")
        event = self._events.get(int(handle)) if is_c_int(handle) else None
        if event is None:
            raise AclnnError(AclError.INVALID_RESOURCE_HANDLE,
                             f"{what} {shown(handle)} is not a live event (create it with acl.rt.create_event)")
        return event

    def destroy(self, handle, what: str = "event") -> None:
        """Forgets the event; a record still queued runs all the same (nothing waits for it)."""
        event = self.get(handle, what)
        with self._lock:
            if self._events.pop(event.handle, None) is None:  # another thread destroyed it
                raise AclnnError(AclError.INVALID_RESOURCE_HANDLE,
                                 f"{what} {shown(handle)} is not a live event (already destroyed)")

    def reset(self) -> None:
        """Forget every event (the device's last reset, acl.finalize)."""
        with self._lock:
            self._events.clear()
