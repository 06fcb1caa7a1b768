"""The runtime's shared state and the boundary helpers of its calls (``acl.rt`` and its
memory calls, ``_rt_memory``): whether acl is initialised, which devices are set, the contexts,
streams and events; the decorators that turn a refusal into a status return."""

from __future__ import annotations

import itertools
import threading

from .._core import forksafe
from .._core.checks import is_c_int
from .._core.event import EventTable
from .._core.status import AclError, AclnnError, boundary
from .._core.stream import StreamTable

DEVICE_COUNT = 1
DEFAULT_CONTEXT = 1  # the handle of the context set_device makes current (one device)


class Runtime:
    """Process-wide runtime state: initialised?, which devices are set (by set_device and by
    explicit contexts), the explicit contexts, each thread's current one, the streams, the events."""

    def __init__(self) -> None:
        self.lock = forksafe.lock()
        self.initialized = False
        self.device_refs: dict[int, int] = {}
        self.contexts: dict[int, int] = {}  # explicit context -> its device
        self.context_ids = itertools.count(DEFAULT_CONTEXT + 1)
        self.current = threading.local()    # .context: the thread's current context, if it set one
        self.streams = StreamTable()
        self.events = EventTable()

    def reset_streams(self) -> list:
        """Drops every stream and event (the device's last reset, acl.finalize); the old streams,
        closed with their queues intact, for ``run_queued``."""
        self.events.reset()
        return self.streams.reset()

    def require_init(self, call: str) -> None:
        if not self.initialized:
            raise AclnnError(AclError.UNINITIALIZE, f"{call}: acl.init() has not been called (or "
                                                    "acl.finalize() already ran)")

    def require_device(self, call: str) -> None:
        """A call that needs the device's context (streams, device memory): 107002 before
        set_device and after the last reset_device, as on hardware."""
        self.require_init(call)
        if not self.device_refs:
            raise AclnnError(AclError.RT_CONTEXT_NULL, f"{call}: no device is set; call "
                                                       "acl.rt.set_device(0) first")


def run_queued(streams) -> list[str]:
    """Run what is still queued on streams that ``StreamTable.reset`` closed (``reset_device``,
    ``acl.finalize``: nothing is dropped), outside the runtime's lock; the messages of the tasks
    that failed."""
    failures = []
    for stream in streams:
        try:
            stream.synchronize()
        except AclnnError as exc:
            failures.append(exc.message)
    return failures


STATE = Runtime()

# the return shapes of a runtime call: ``ret``, ``(value, ret)`` or ``(value, value, ret)``
# (get_mem_info's ``(free, total, ret)``). A failed call's value means nothing (pyACL's convention)
# but must not read as an answer to a caller who skips ret: 0 where 0 answers nothing (a NULL
# handle or address, no bytes), else -1 (``returns_query``: no event status, device id, run mode
# or elapsed time is -1; query_event_status(None) was (0, 100000), 0 being
# ACL_EVENT_RECORDED_STATUS_NOT_READY, and get_device's 0 is device 0)
returns_ret = boundary(lambda code: code, invalid=AclError.INVALID_PARAM)
returns_pair = boundary(lambda code: (0, code), invalid=AclError.INVALID_PARAM)
returns_query = boundary(lambda code: (-1, code), invalid=AclError.INVALID_PARAM)
returns_triple = boundary(lambda code: (0, 0, code), invalid=AclError.INVALID_PARAM)


def c_int(value, what: str, call: str, minimum: int = 0) -> int:
    if not is_c_int(value) or value < minimum:
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: {what} must be an integer >= {minimum}, "
                                                 f"got {value!r}")
    return int(value)


def c_size_t(value, what: str, call: str) -> int:
    """``c_int`` of a byte count C declares a size_t (memset's maxCount, memcpy's destMax): also
    below 2**64 (memcpy had taken a destMax of 2**70 that memset refused)."""
    value = c_int(value, what, call)
    if value >= 2**64:
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: {what} {value} does not fit a size_t")
    return value


def live_stream(handle, call: str):
    """The live stream ``handle`` names; its refusal names ``call``."""
    with named(call):
        return STATE.streams.get(handle)


class named:
    """``with named(call):`` a refusal from inside (the stream table's) told with the name of the
    call it refused, once (a message that names it already is left as it is: "destroy_stream:
    destroy_stream:"). A class, not a generator context manager: it is on every synchronize's
    path (~0.5 us less a call)."""

    __slots__ = ("call",)

    def __init__(self, call: str):
        self.call = call

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if kind is not None and issubclass(kind, AclnnError) and not exc.message.startswith(f"{self.call}:"):
            raise AclnnError(exc.status, f"{self.call}: {exc.message}") from None
        return False


