"""``acl.rt``: the runtime calls (aclrt*), pyACL-shaped: ``(value, ret)`` or ``ret``; never raises.

Device memory is emulated (``opsnn._core.memory``); addresses are ints, every access is
bounds-checked. Host memory is either ``malloc_host`` memory, a pointer from ``acl.util``
(``numpy_to_ptr`` / ``bytes_to_ptr``), or, as a convenience, a NumPy array / bytes object passed
directly to ``memcpy``.
"""

from __future__ import annotations

import contextlib
import itertools
import threading

import numpy as np

from .._core import forksafe, memory
from .._core.checks import is_c_int, is_null
from .._core.status import AclError, AclnnError, boundary
from .._core.event import EventTable
from .._core.stream import StreamTable
from . import _host
from .constants import (ACL_HOST, ACL_MEMCPY_DEFAULT, ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST,
                        ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST)

DEVICE_COUNT = 1
DEFAULT_CONTEXT = 1  # the handle of the context set_device makes current (one device)


class _Runtime:
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


STATE = _Runtime()

# aclrtMemMallocPolicy: HUGE_FIRST .. HUGE1G_ONLY_P2P, plus OR-able flags (pyacl_conventions §1.1)
_POLICIES = frozenset(range(8))
_BANDWIDTH_FLAGS = 0x0100 | 0x1000
_POLICY_FLAGS = _BANDWIDTH_FLAGS | 0x100000

_ret = boundary(lambda code: code, invalid=AclError.INVALID_PARAM)
_pair = boundary(lambda code: (0, code), invalid=AclError.INVALID_PARAM)


def _int(value, what: str, call: str, minimum: int = 0) -> int:
    if not is_c_int(value) or value < minimum:
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: {what} must be an integer >= {minimum}, "
                                                 f"got {value!r}")
    return int(value)


def _device(device_id, call: str) -> int:
    device = _int(device_id, "deviceId", call)
    if device >= DEVICE_COUNT:
        raise AclnnError(AclError.INVALID_DEVICE, f"{call}: device {device} does not exist "
                                                  f"(device count {DEVICE_COUNT})")
    return device


@_ret
def set_device(device_id) -> int:
    """aclrtSetDevice: make ``device_id`` current (reference counted). Returns ret."""
    STATE.require_init("set_device")
    device = _device(device_id, "set_device")
    with STATE.lock:
        STATE.require_init("set_device")  # again under the lock: a concurrent finalize wins cleanly
        STATE.device_refs[device] = STATE.device_refs.get(device, 0) + 1
    return 0


@_ret
def reset_device(device_id) -> int:
    """aclrtResetDevice: drop one reference to ``device_id``. The last one releases the device's
    streams (their queued work runs first; later use of their handles is 107002 / 361001, as is
    any call needing a device until set_device again). Device memory stays allocated until freed
    (after a new set_device), so leaks stay visible. Returns ret (500003 when queued work failed:
    the device is reset all the same and the message names the task)."""
    STATE.require_init("reset_device")
    device = _int(device_id, "deviceId", "reset_device")
    with STATE.lock:
        STATE.require_init("reset_device")
        if device not in STATE.device_refs:
            raise AclnnError(AclError.INVALID_DEVICE, f"reset_device: device {device} is not set")
        streams = _release(device)
    _run_released(streams, "reset_device: the device was reset")
    return 0


def _release(device: int) -> list:
    """Drops one reference to ``device`` (under STATE.lock); at the last, its explicit contexts
    are gone too (reset_device may take a context's reference), and its streams are returned,
    closed (later launches are refused, not lost), for ``_run_released``."""
    STATE.device_refs[device] -= 1
    if STATE.device_refs[device]:
        return []
    del STATE.device_refs[device]
    for context in [c for c, d in STATE.contexts.items() if d == device]:
        del STATE.contexts[context]
    return STATE.reset_streams()


def _run_released(streams: list, done: str) -> None:
    """Runs what is still queued on ``streams`` (released ones, outside the lock, or every live
    one); 500003 naming the tasks that failed (``done`` happened all the same)."""
    failures = run_queued(streams)
    if failures:
        raise AclnnError(AclError.RT_FAILURE, f"{done}, but queued work failed: " + "; ".join(failures))


@_pair
def create_context(device_id):
    """aclrtCreateContext: ``(context, ret)``, an explicit context on ``device_id``, made current
    for the calling thread. It holds a reference to the device, as set_device does, until
    destroy_context (or the device's last reset_device, which drops the context), so a program
    may use contexts without set_device. Device state (streams, memory) is process-wide here: a
    context selects nothing else."""
    STATE.require_init("create_context")
    device = _device(device_id, "create_context")
    with STATE.lock:
        STATE.require_init("create_context")
        STATE.device_refs[device] = STATE.device_refs.get(device, 0) + 1
        context = next(STATE.context_ids)
        STATE.contexts[context] = device
    STATE.current.context = context
    return context, 0


@_ret
def destroy_context(context) -> int:
    """aclrtDestroyContext: drops an explicit context and its reference to the device (the last
    reference releases the device's streams, as reset_device). Returns ret: 100000 for the
    default context (reset_device releases it) and for NULL (None, 0), 200005 for one that is not
    live."""
    STATE.require_init("destroy_context")
    with STATE.lock:
        STATE.require_init("destroy_context")
        if is_c_int(context) and context == DEFAULT_CONTEXT:
            raise AclnnError(AclError.INVALID_PARAM, "destroy_context: the default context cannot be "
                                                     "destroyed (reset_device releases it)")
        device = STATE.contexts.pop(_live_context(context, "destroy_context"))
        streams = _release(device)
    if getattr(STATE.current, "context", None) == context:
        STATE.current.context = None
    _run_released(streams, "destroy_context: the context was destroyed")
    return 0


@_ret
def set_context(context) -> int:
    """aclrtSetCurrentContext: make ``context`` (an explicit one, or the default one while a
    device is set) current for the calling thread. Returns ret (100000 for NULL, 200005 for one
    not live)."""
    STATE.require_init("set_context")
    if not (is_c_int(context) and context == DEFAULT_CONTEXT and STATE.device_refs):
        _live_context(context, "set_context")
    STATE.current.context = int(context)
    return 0


@_pair
def get_context():
    """aclrtGetCurrentContext: ``(context, ret)``, the calling thread's current context: the one
    it created or set while live, else the default one while the device is held, by set_device
    or any thread's context (107002 if none)."""
    STATE.require_init("get_context")
    context = getattr(STATE.current, "context", None)
    if context in STATE.contexts:
        return context, 0
    if not STATE.device_refs:
        raise AclnnError(AclError.RT_CONTEXT_NULL, "get_context: no context is current; call "
                                                   "acl.rt.set_device or acl.rt.create_context first")
    return DEFAULT_CONTEXT, 0


def _live_context(context, call: str) -> int:
    if is_null(context):  # as the C API answers a NULL handle
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: context is NULL ({context!r})")
    if not is_c_int(context) or int(context) not in STATE.contexts:
        raise AclnnError(AclError.INVALID_RESOURCE_HANDLE, f"{call}: context {context!r} is not a live "
                                                           "context (create it with acl.rt.create_context)")
    return int(context)


@_pair
def get_device_count():
    """aclrtGetDeviceCount: ``(count, ret)``; opsnn emulates one device."""
    STATE.require_init("get_device_count")
    return DEVICE_COUNT, 0


@_pair
def get_device():
    """aclrtGetDevice: ``(device_id, ret)``, the device in use (107002 before set_device or
    create_context, and after the device's last release)."""
    with STATE.lock:  # (another thread's reset_device may empty the dict between a check and a read)
        STATE.require_device("get_device")
        return next(iter(STATE.device_refs)), 0


@_pair
def get_run_mode():
    """aclrtGetRunMode: ``(run_mode, ret)``; ACL_HOST (1): opsnn runs where a host program runs,
    with device memory apart (so a sample picks its HOST_TO_DEVICE copies, as on a card)."""
    STATE.require_init("get_run_mode")
    return ACL_HOST, 0


@_ret
def synchronize_device() -> int:
    """aclrtSynchronizeDevice: run what is queued on every live stream. Returns ret: every
    stream is run, then the first failure is reported (500003, naming the task)."""
    STATE.require_device("synchronize_device")
    _run_released(STATE.streams.live(), "synchronize_device: every stream ran")
    return 0


@_pair
def create_stream():
    """aclrtCreateStream: ``(stream, ret)``; the stream is an int handle."""
    with STATE.lock:  # checked and made under the lock a last reset_device takes to drop them all
        STATE.require_device("create_stream")
        return STATE.streams.create(), 0


@_ret
def destroy_stream(stream) -> int:
    """aclrtDestroyStream: waits for the queued tasks, then destroys. Returns ret."""
    STATE.require_device("destroy_stream")
    with _named("destroy_stream"):
        STATE.streams.destroy(stream)
    return 0


@_ret
def synchronize_stream(stream) -> int:
    """aclrtSynchronizeStream: run the queued tasks in order; ret is the first failure's code."""
    STATE.require_device("synchronize_stream")
    _stream(stream, "synchronize_stream").synchronize()
    return 0


@_pair
def create_event():
    """aclrtCreateEvent: ``(event, ret)``; the event is an int handle."""
    with STATE.lock:  # checked and made under the lock a last reset_device takes to drop them all
        STATE.require_device("create_event")
        return STATE.events.create(), 0


@_ret
def destroy_event(event) -> int:
    """aclrtDestroyEvent. Returns ret (100000 for NULL, 200005 for an event not live); a record
    still queued runs all the same."""
    STATE.require_device("destroy_event")
    STATE.events.destroy(event, "destroy_event: event")
    return 0


@_ret
def record_event(event, stream) -> int:
    """aclrtRecordEvent: queue a marker on ``stream``; the event completes, stamped with the
    host's clock, when the stream's queue runs it. Returns ret."""
    STATE.require_device("record_event")
    target = _stream(stream, "record_event")
    with _named("record_event"):  # (a stream another thread destroys meanwhile refuses the task)
        STATE.events.get(event, "event").record(target)
    return 0


@_ret
def synchronize_event(event) -> int:
    """aclrtSynchronizeEvent: wait for the event's latest record (runs its stream's queue up to
    it, or waits while another thread does; returns at once for an event never recorded).
    Returns ret: 500003 when a task before the record fails (the record is dropped with it and
    the event stays not ready; later calls say so until it is recorded again)."""
    STATE.require_device("synchronize_event")
    target = STATE.events.get(event, "synchronize_event: event")
    with _named("synchronize_event"):
        target.synchronize()
    return 0


@_pair
def query_event_status(event):
    """aclrtQueryEventStatus: ``(status, ret)``, ACL_EVENT_RECORDED_STATUS_COMPLETE (1) once the
    latest record has run, else ACL_EVENT_RECORDED_STATUS_NOT_READY (0: never recorded, still
    queued, or dropped by a failure). Runs nothing."""
    STATE.require_device("query_event_status")
    return STATE.events.get(event, "query_event_status: event").status, 0


@_pair
def event_elapsed_time(start, end):
    """aclrtEventElapsedTime: ``(ms, ret)``, milliseconds (a float) from ``start``'s record to
    ``end``'s, as the host's clock stamped them when the queue ran. Returns 107006
    (ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID) when either has not completed (synchronize first, as
    CANN's call order says), 107007 (..._TIMESTAMP_REVERSAL) when end ran before start."""
    STATE.require_device("event_elapsed_time")
    first = STATE.events.get(start, "event_elapsed_time: start")
    last = STATE.events.get(end, "event_elapsed_time: end")
    stamps = []
    for name, event in (("start", first), ("end", last)):
        latest = event.latest  # read once: another thread may record it again meanwhile
        stamps.append(None if latest is None else latest.stamp)
        if stamps[-1] is None:
            why = ("never recorded (record it, then synchronize its stream or the event)" if latest is None
                   else event.dropped_text(latest) if latest.lost is not None
                   else "its record has not run (synchronize its stream or the event first)")
            raise AclnnError(AclError.RT_EVENT_TIMESTAMP_INVALID,
                             f"event_elapsed_time: {name} event {event.handle:#x} has no timestamp: {why}")
    elapsed = (stamps[1] - stamps[0]) * 1e3
    if elapsed < 0:
        raise AclnnError(AclError.RT_EVENT_TIMESTAMP_REVERSAL,
                         f"event_elapsed_time: end event {last.handle:#x} ran {-elapsed:.3f} ms before start "
                         f"event {first.handle:#x}")
    return elapsed, 0


@_ret
def stream_wait_event(stream, event) -> int:
    """aclrtStreamWaitEvent: the tasks queued on ``stream`` after this call run after the
    event's latest record so far (when ``stream`` runs, it runs the record's stream up to that
    record first, or waits while another thread runs it; an event never recorded is no wait).
    Returns ret. A record dropped by a failure fails the wait (500003 at ``stream``'s
    synchronize)."""
    STATE.require_device("stream_wait_event")
    target = _stream(stream, "stream_wait_event")
    waiter = STATE.events.get(event, "stream_wait_event: event").waiter()
    with _named("stream_wait_event"):  # (a stream another thread destroys meanwhile refuses the task)
        target.enqueue(f"stream_wait_event {int(event):#x}", waiter)
    return 0


def _stream(handle, call: str):
    """The live stream ``handle`` names; its refusal names ``call``."""
    with _named(call):
        return STATE.streams.get(handle)


@contextlib.contextmanager
def _named(call: str):
    """A refusal from inside (the stream table's) told with the name of the call it refused."""
    try:
        yield
    except AclnnError as exc:
        raise AclnnError(exc.status, f"{call}: {exc.message}") from None


@_pair
def malloc(size, policy):
    """aclrtMalloc: ``(device_address, ret)``. ``size`` in bytes, > 0."""
    STATE.require_device("malloc")
    nbytes = _int(size, "size", "malloc", minimum=1)
    mode = _int(policy, "policy", "malloc")
    if (mode & ~_POLICY_FLAGS) not in _POLICIES or bin(mode & _BANDWIDTH_FLAGS).count("1") > 1:
        raise AclnnError(AclError.INVALID_PARAM,
                         f"malloc: policy {mode:#x} is not an aclrtMemMallocPolicy (ACL_MEM_MALLOC_* 0-7, "
                         "optionally OR-ed with one ACL_MEM_TYPE_* bandwidth flag and "
                         "ACL_MEM_ACCESS_USER_SPACE_READONLY)")
    return memory.DEVICE.malloc(nbytes), 0


@_ret
def free(dev_ptr) -> int:
    """aclrtFree: release device memory allocated by ``malloc``. Returns ret."""
    STATE.require_device("free")
    memory.DEVICE.free(_int(dev_ptr, "devPtr", "free"))
    return 0


@_ret
def memset(dev_ptr, max_count, value, count) -> int:
    """aclrtMemset (synchronous): set ``count`` bytes at ``dev_ptr`` (device memory, or host
    memory from ``malloc_host`` / ``acl.util``) to ``value``'s low byte, as C's memset.
    ``max_count`` bounds the destination. Returns ret (100000 for count > max_count, a value
    outside int32, a range outside an allocation)."""
    STATE.require_init("memset")
    max_count = _int(max_count, "maxCount", "memset")
    count = _int(count, "count", "memset")
    if not is_c_int(value) or not -2**31 <= value < 2**31:
        raise AclnnError(AclError.INVALID_PARAM, f"memset: value must be an int32, got {value!r}")
    if max_count >= 2**64:  # a size_t in C
        raise AclnnError(AclError.INVALID_PARAM, f"memset: maxCount {max_count} does not fit a size_t")
    if count > max_count:
        raise AclnnError(AclError.INVALID_PARAM, f"memset: count {count} exceeds maxCount {max_count}")
    side = _side_of(dev_ptr)
    if side == "device":
        STATE.require_device("memset")
    _region(dev_ptr, count, side, "memset destination", writable=True)[:] = int(value) & 0xFF
    return 0


@_pair
def malloc_host(size):
    """aclrtMallocHost: ``(host_address, ret)`` of page-locked (here: registered) host memory."""
    STATE.require_init("malloc_host")
    return memory.HOST.malloc(_int(size, "size", "malloc_host", minimum=1)), 0


@_ret
def free_host(host_ptr) -> int:
    """aclrtFreeHost. Returns ret."""
    STATE.require_init("free_host")
    memory.HOST.free(_int(host_ptr, "hostPtr", "free_host"), "free_host")
    return 0


@_ret
def memcpy(dst, dest_max, src, count, kind) -> int:
    """aclrtMemcpy (synchronous): copy ``count`` bytes; ``dest_max`` bounds the destination.

    ``kind``: ACL_MEMCPY_HOST_TO_HOST/HOST_TO_DEVICE/DEVICE_TO_HOST/DEVICE_TO_DEVICE or
    ACL_MEMCPY_DEFAULT (direction inferred from the addresses). Returns ret (100000 for a range
    outside an allocation, a wrong direction or count > dest_max).
    """
    target, source, _ = _copy_regions("memcpy", dst, dest_max, src, count, kind)
    target[:] = source
    return 0


@_ret
def memcpy_async(dst, dest_max, src, count, kind, stream) -> int:
    """aclrtMemcpyAsync: queue the copy ``memcpy`` would make on ``stream`` (None or 0: the
    default stream). Its arguments are checked now, as memcpy's (100000; 107002 without a device;
    200005 for a stream that is not live); the bytes move when the stream runs, in order with the operators queued
    before and after it (so a copy back queued after a launch reads its result). Memory freed
    before then fails the copy at the stream's synchronize (500003, naming it), where a device
    would fault. A non-contiguous NumPy array given as the source is read at the call (into a
    private contiguous copy, as numpy_to_ptr makes of one); the bytes of a pointer or of a
    contiguous array, when the stream runs. Returns ret."""
    target, source, allocations = _copy_regions("memcpy_async", dst, dest_max, src, count, kind)
    STATE.require_device("memcpy_async")  # a stream lives in the device's context
    target_stream = _stream(stream, "memcpy_async")

    def copy() -> None:
        for alloc in allocations:
            if not alloc.live:
                raise AclnnError(AclError.INVALID_PARAM, f"the {alloc.kind} memory at {alloc.addr:#x} was "
                                                         "freed before the copy ran")
        target[:] = source
    with _named("memcpy_async"):  # (a stream another thread destroys meanwhile refuses the task)
        target_stream.enqueue("memcpy_async", copy)
    return 0


_MEMCPY_SIDES = {ACL_MEMCPY_HOST_TO_HOST: ("host", "host"), ACL_MEMCPY_HOST_TO_DEVICE: ("host", "device"),
                 ACL_MEMCPY_DEVICE_TO_HOST: ("device", "host"), ACL_MEMCPY_DEVICE_TO_DEVICE: ("device", "device")}


def _copy_regions(call: str, dst, dest_max, src, count, kind) -> tuple:
    """memcpy's checks: the destination's and the source's bytes (views), and the allocations
    they lie in (device, malloc_host), for a queued copy to check again when it runs."""
    STATE.require_init(call)
    count = _int(count, "count", call)
    dest_max = _int(dest_max, "destMax", call)
    kind = _int(kind, "kind", call)
    if count > dest_max:
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: count {count} exceeds destMax {dest_max}")
    if kind == ACL_MEMCPY_DEFAULT:
        sides = (_side_of(src), _side_of(dst))
    elif kind in _MEMCPY_SIDES:
        sides = _MEMCPY_SIDES[kind]
    else:
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: kind {kind} is not an aclrtMemcpyKind")
    if "device" in sides:
        STATE.require_device(call)
    # The allocations are looked up before the regions are checked: one freed by another thread
    # in between is then refused by the check, or found dead when the queued copy runs; looked up
    # after, it was missing from the list and the copy ran unchecked.
    allocations = [alloc for alloc in (memory.DEVICE.find(int(ptr)) or memory.HOST.find(int(ptr))
                                       for ptr in (dst, src) if is_c_int(ptr)) if alloc is not None]
    # count 0 copies nothing, but both addresses are still checked: a freed or unknown one is
    # refused as for any count (README: "a freed address is refused by ... memcpy")
    try:
        source = _region(src, count, sides[0], f"{call} source", writable=False)
        target = _region(dst, count, sides[1], f"{call} destination", writable=True)
    except AclnnError as exc:
        raise _wrong_kind(exc, call, src, dst, sides, kind) from None
    return target, source, allocations


_KIND_NAMES = {ACL_MEMCPY_HOST_TO_HOST: "ACL_MEMCPY_HOST_TO_HOST", ACL_MEMCPY_HOST_TO_DEVICE: "ACL_MEMCPY_HOST_TO_DEVICE",
               ACL_MEMCPY_DEVICE_TO_HOST: "ACL_MEMCPY_DEVICE_TO_HOST",
               ACL_MEMCPY_DEVICE_TO_DEVICE: "ACL_MEMCPY_DEVICE_TO_DEVICE", ACL_MEMCPY_DEFAULT: "ACL_MEMCPY_DEFAULT"}


def _wrong_kind(exc: AclnnError, call: str, src, dst, sides: tuple, kind: int) -> AclnnError:
    """``exc`` (an address refused), told where the kind and the addresses disagree: a device
    address where the kind reads or writes host memory, or known host memory where it wants
    device memory (else ``exc`` as it is)."""
    for ptr, side, what in ((src, sides[0], "source"), (dst, sides[1], "destination")):
        if not is_c_int(ptr) or ptr == 0:
            continue
        actual = _side_of(ptr)
        if actual == "host" and side == "device" and not (_host.known(int(ptr)) or memory.HOST.spans(int(ptr))):
            continue  # an unknown address: exc says so
        if actual != side:
            return AclnnError(exc.status, f"{call} {what}: {int(ptr):#x} is {actual} memory, but "
                                          f"{_KIND_NAMES[kind]} takes {side} memory there; pass the kind "
                                          f"for the copy's direction, or ACL_MEMCPY_DEFAULT")
    return exc


def _side_of(ptr) -> str:
    """Which memory an address given without a direction (memcpy's DEFAULT kind, memset) is in:
    the emulated device range's addresses are device ones, freed ones too (so their refusal
    says the device allocation is gone, not that host memory is unknown)."""
    if is_c_int(ptr) and memory.DEVICE.spans(int(ptr)):
        return "device"
    return "host"


def _region(ptr, nbytes: int, side: str, what: str, writable: bool) -> np.ndarray:
    if side == "device":
        if not is_c_int(ptr):
            raise AclnnError(AclError.INVALID_PARAM, f"{what}: a device address (int) was expected "
                                                     f"for this memcpy kind, got {type(ptr).__name__}")
        return memory.DEVICE.region(int(ptr), nbytes, what)
    return _host.region(ptr, nbytes, what, writable)
