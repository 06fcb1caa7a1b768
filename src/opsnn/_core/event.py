"""Emulated events (aclrtEvent): markers a stream reaches when its queue runs.

``record`` queues a task on a stream (``_core.stream``) that stamps the event with the host's
clock when the stream's queue runs it, so the time between two events recorded on one stream is
the time the tasks between them took, as on a device. An event is complete when the task of its
latest record has run; a record dropped by an earlier task's failure never completes (CANN:
"not executed or failed" reads as not ready).
"""

from __future__ import annotations

import itertools
import threading
import time

from .checks import is_c_int, is_null
from .status import AclError, AclnnError
from .stream import Stream

NOT_READY, COMPLETE = 0, 1  # aclrtEventRecordedStatus


class Event:
    """One event: how many records were queued, which of them ran last (and when), which were
    dropped by a failure before them."""

    def __init__(self, handle: int):
        self.handle = handle
        self._changed = threading.Condition()  # notified when a record runs or is dropped
        self.recorded = 0                  # records queued so far; each task carries its number
        self.completed = 0                 # the number of the latest record whose task ran
        self.lost = 0                      # the number of the latest record dropped by a failure
        self.lost_why = ""
        self.stamp: float | None = None    # time.perf_counter() when that task ran (seconds)
        self.stream: Stream | None = None  # the stream of the latest record

    def record(self, stream: Stream) -> None:
        with self._changed:
            number = self.recorded + 1
            stream.enqueue(f"record_event {self.handle:#x}", _Record(self, number))
            self.recorded, self.stream = number, stream

    def _reached(self, number: int) -> None:
        now = time.perf_counter()
        with self._changed:
            if number > self.completed:  # an older record, run late on another stream, counts for nothing
                self.completed, self.stamp = number, now
            self._changed.notify_all()

    def _lost(self, number: int, why: str) -> None:
        with self._changed:
            if number > self.lost:
                self.lost, self.lost_why = number, why
            self._changed.notify_all()

    @property
    def status(self) -> int:
        return COMPLETE if self.recorded and self.completed == self.recorded else NOT_READY

    def dropped_text(self) -> str:
        return (f"event {self.handle:#x}'s record was dropped, not run: a task queued before it failed "
                f"({self.lost_why}); record it again")

    def synchronize(self) -> None:
        """Waits for the latest record (none: returns at once)."""
        self._wait_for(self.stream, self.recorded)

    def waiter(self):
        """A task for another stream that waits for the latest record made so far (none: no wait)."""
        stream, number = self.stream, self.recorded
        return lambda: self._wait_for(stream, number)

    def _wait_for(self, stream: Stream | None, number: int) -> None:
        """Returns once record ``number`` (or a later one) ran on ``stream``: runs that stream's
        queue up to it, or, while another thread runs that stream, waits for it to get there.
        Raises the failure that drops it (500003), then, for a record dropped earlier, says so."""
        while stream is not None and number:
            with self._changed:
                if self.completed >= number:
                    return
                if self.lost >= number:
                    raise AclnnError(AclError.RT_FAILURE, self.dropped_text())
            if not stream.run_until(lambda: self.completed >= number or self.lost >= number):
                with self._changed:  # another thread runs the stream: it gets to the record
                    self._changed.wait_for(lambda: self.completed >= number or self.lost >= number, 0.05)
            elif self.completed < number and self.lost < number and not stream.pending:
                return  # the queue ran dry without it: not queued there (the enqueue was refused)


class _Record:
    """The task an event's record queues: stamps the event when run, marks it lost when dropped."""

    __slots__ = ("event", "number")

    def __init__(self, event: Event, number: int):
        self.event, self.number = event, number

    def __call__(self) -> None:
        self.event._reached(self.number)

    def dropped(self, why: str) -> None:
        self.event._lost(self.number, why)


class EventTable:
    """Live events by handle (ints, like the streams')."""

    def __init__(self) -> None:
        self._events: dict[int, Event] = {}
        self._ids = itertools.count(0x6000_0001, 0x40)
        self._lock = threading.Lock()

    def create(self) -> int:
        with self._lock:
            handle = next(self._ids)
            self._events[handle] = Event(handle)
        return handle

    def get(self, handle, what: str = "event") -> Event:
        """The live event ``handle`` names: 100000 for NULL (None, 0), 200005 for anything else."""
        if is_null(handle):
            raise AclnnError(AclError.INVALID_PARAM, f"{what} is NULL ({handle!r})")
        event = self._events.get(int(handle)) if is_c_int(handle) else None
        if event is None:
            raise AclnnError(AclError.INVALID_RESOURCE_HANDLE,
                             f"{what} {handle!r} is not a live event (create it with acl.rt.create_event)")
        return event

    def destroy(self, handle, what: str = "event") -> None:
        """Forgets the event; a record still queued runs all the same (nothing waits for it)."""
        event = self.get(handle, what)
        with self._lock:
            if self._events.pop(event.handle, None) is None:  # another thread destroyed it
                raise AclnnError(AclError.INVALID_RESOURCE_HANDLE,
                                 f"{what} {handle!r} is not a live event (already destroyed)")

    def reset(self) -> None:
        """Forget every event (the device's last reset, acl.finalize)."""
        with self._lock:
            self._events.clear()
