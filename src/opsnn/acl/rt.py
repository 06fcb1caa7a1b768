"""``acl.rt``: the runtime calls (aclrt*), pyACL-shaped: ``(value, ret)`` or ``ret``; never raises.

This module holds the device, context, stream and event calls; the memory calls (malloc, memcpy,
memset, ..., ``_rt_memory``) are re-exported here, so every call is ``acl.rt.<name>`` as in
pyACL. The state they share (``STATE``) and their boundary helpers are in ``_rt_state``.

Two statuses hold for every call and are not repeated in each docstring: 100001
(ACL_ERROR_UNINITIALIZE) before ``acl.init()`` (and after ``acl.finalize()``), and 107002
(ACL_ERROR_RT_CONTEXT_NULL) with no device set for every call that needs one: all but
``set_device``, ``create_context``, ``get_device_count``, ``get_run_mode``, ``malloc_host`` /
``free_host`` and a ``memcpy`` / ``memset`` of host memory only (their async forms need a
stream, so a device); ``set_context`` and ``destroy_context`` check their context instead (a
live one holds its device).
"""

from __future__ import annotations

import time

from .._core.checks import is_c_int as _is_c_int
from .._core.checks import is_null as _is_null
from .._core.status import AclError, AclnnError
from ._rt_memory import (free, free_host, get_mem_info, malloc, malloc_host, memcpy,  # noqa: F401 - acl.rt API
                         memcpy_async, memset, memset_async)
from ._rt_state import DEFAULT_CONTEXT, DEVICE_COUNT, STATE
from ._rt_state import c_int as _int
from ._rt_state import live_stream as _stream
from ._rt_state import named as _named
from ._rt_state import returns_pair as _pair
from ._rt_state import returns_query as _query
from ._rt_state import returns_ret as _ret
from ._rt_state import run_queued as _run_queued
from .constants import ACL_EVENT_CAPTURE_STREAM_PROGRESS, ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE, ACL_HOST


def _device(device_id, call: str) -> int:
    device = _int(device_id, "deviceId", call)
    if device >= DEVICE_COUNT:
        raise AclnnError(AclError.INVALID_DEVICE, f"{call}: device {device} does not exist "
                                                  f"(device count {DEVICE_COUNT})")
    return device


@_ret
def set_device(device_id) -> int:
    """aclrtSetDevice: make ``device_id`` current (reference counted: each call is one
    reference, which ``reset_device`` drops). Returns ret: 0; 100001 before ``init``, 200002
    for a device that does not exist (opsnn emulates device 0 only), 100000 for an id that is
    no non-negative integer."""
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
    (after a new set_device), so leaks stay visible. Returns ret: 0; 500003 when queued work
    failed (the device is reset all the same and the message names the task); 200002 for a
    device not set (or that does not exist); 100000 for an id that is no non-negative
    integer."""
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
    failures = _run_queued(streams)
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
        if _is_c_int(context) and context == DEFAULT_CONTEXT:
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
    if not (_is_c_int(context) and context == DEFAULT_CONTEXT and STATE.device_refs):
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
    if _is_null(context):  # as the C API answers a NULL handle
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: context is NULL ({context!r})")
    if not _is_c_int(context) or int(context) not in STATE.contexts:
        raise AclnnError(AclError.INVALID_RESOURCE_HANDLE, f"{call}: context {context!r} is not a live "
                                                           "context (create it with acl.rt.create_context)")
    return int(context)


@_pair
def get_device_count():
    """aclrtGetDeviceCount: ``(count, ret)``; opsnn emulates one device."""
    STATE.require_init("get_device_count")
    return DEVICE_COUNT, 0


@_query
def get_device():
    """aclrtGetDevice: ``(device_id, ret)``, the device in use; ``(-1, 107002)`` before set_device
    or create_context, and after the device's last release (-1: no device's id)."""
    with STATE.lock:  # (another thread's reset_device may empty the dict between a check and a read)
        STATE.require_device("get_device")
        return next(iter(STATE.device_refs)), 0


@_query
def get_run_mode():
    """aclrtGetRunMode: ``(run_mode, ret)``; ACL_HOST (1): opsnn runs where a host program runs,
    with device memory apart (so a sample picks its HOST_TO_DEVICE copies, as on a card);
    ``(-1, 100001)`` before init (-1: neither ACL_DEVICE nor ACL_HOST)."""
    STATE.require_init("get_run_mode")
    return ACL_HOST, 0


@_ret
def synchronize_device() -> int:
    """aclrtSynchronizeDevice: run what is queued on every live stream. Returns ret: every
    stream is run, then the first failure is reported (500003, naming the task); 107002 with no
    device set."""
    STATE.require_device("synchronize_device")
    _run_released(STATE.streams.live(), "synchronize_device: every stream ran")
    return 0


@_pair
def create_stream():
    """aclrtCreateStream: ``(stream, ret)``; the stream is an int handle (0 with ret 100001
    before ``init``, 107002 with no device set). It lives until ``destroy_stream`` or the
    device's last ``reset_device``."""
    with STATE.lock:  # checked and made under the lock a last reset_device takes to drop them all
        STATE.require_device("create_stream")
        return STATE.streams.create(), 0


@_ret
def destroy_stream(stream) -> int:
    """aclrtDestroyStream: waits for the queued tasks, then destroys. Returns ret (500003 when
    queued work failed: the stream is destroyed all the same and the message names the task;
    100000 for NULL, the default stream, which cannot be destroyed; 200005 for a stream that is
    not live; 107002 with no device set)."""
    STATE.require_device("destroy_stream")
    with _named("destroy_stream"):
        STATE.streams.destroy(stream)
    return 0


@_ret
def synchronize_stream(stream) -> int:
    """aclrtSynchronizeStream: run the queued tasks in order. Returns ret: 0; 500003 when a
    task failed (the message names it; the tasks queued after it are dropped), 200005 for a
    stream that is not live, 107002 with no device set. None or 0 is the default stream."""
    STATE.require_device("synchronize_stream")
    _stream(stream, "synchronize_stream").synchronize()
    return 0


@_ret
def synchronize_stream_with_timeout(stream, timeout) -> int:
    """aclrtSynchronizeStreamWithTimeout: ``synchronize_stream`` with a time budget, ``timeout``
    in milliseconds (an int32: -1 waits forever, as synchronize_stream; CANN's range is
    [-1, INT32_MAX], 0 included).

    The emulated queue runs on the calling thread and cannot be interrupted, so it always runs
    to the end; the budget is then checked: when the stream had work queued and running it took
    longer than ``timeout`` ms, the call returns ACL_ERROR_RT_STREAM_SYNC_TIMEOUT (507046), as a
    device does once the budget passes. Why not return 0 for any wait: a ported program's
    timeout branch (log, give up, abort the stream) then never runs here, while it can be
    driven here, by a budget the queued work exceeds (or 0 with work queued), and a program
    whose budget the emulated work exceeds learns that its wait was longer than it allowed.
    Unlike on a device, the work has run by then (its results are in memory) and the stream is
    idle. A stream with nothing queued returns 0 at once, whatever the budget.

    Returns ret: 507046 as above; 500003 when a queued task fails (that failure is reported
    rather than the budget: it ends the run, and the next synchronize would not tell it);
    107000 (ACL_ERROR_RT_PARAM_INVALID, CANN's answer) for a timeout below -1; 100000 for a
    timeout that is not an int32; 200005 for a stream that is not live; 107002 without a
    device."""
    call = "synchronize_stream_with_timeout"
    STATE.require_device(call)
    limit = _timeout(timeout, call)
    target = _stream(stream, call)
    queued, start = target.busy, time.perf_counter()  # (a run on another thread: waited for too)
    target.synchronize()
    if queued:
        _check_budget(call, limit, start, AclError.RT_STREAM_SYNC_TIMEOUT, f"running stream {target.handle:#x}'s queue")
    return 0


def _timeout(value, call: str) -> int:
    """The timeout argument of the *_with_timeout calls, in ms: an int32 of at least -1."""
    if not _is_c_int(value) or not -2**31 <= value < 2**31:
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: timeout must be an int32 (milliseconds, -1 to "
                                                 f"wait forever), got {value!r}")
    if value < -1:  # CANN's aclrtSynchronize*WithTimeout check, before the handle's
        raise AclnnError(AclError.RT_PARAM_INVALID, f"{call}: timeout {int(value)} ms is outside [-1, {2**31 - 1}] "
                                                    "(-1 waits forever)")
    return int(value)


def _check_budget(call: str, timeout: int, start: float, status: int, what: str) -> None:
    """``status`` (a sync timeout) when ``what``, begun at ``start`` (time.perf_counter()),
    took longer than ``timeout`` ms (-1: no budget)."""
    elapsed = (time.perf_counter() - start) * 1e3
    if timeout != -1 and elapsed > timeout:
        raise AclnnError(status, f"{call}: {what} took {elapsed:.3f} ms, longer than the timeout of {timeout} ms "
                                 "(the emulated queue cannot be interrupted: its work has run all the same)")


@_pair
def create_event():
    """aclrtCreateEvent: ``(event, ret)``; the event is an int handle (0 with ret 100001
    before ``init``, 107002 with no device set), waitable by ``stream_wait_event``."""
    return _new_event("create_event"), 0


def _new_event(call: str, waitable: bool = True) -> int:
    with STATE.lock:  # checked and made under the lock a last reset_device takes to drop them all
        STATE.require_device(call)
        return STATE.events.create(waitable)


# aclrtCreateEventWithFlag's flags opsnn takes; CANN's runtime also takes ACL_EVENT_DEVICE_USE_ONLY
# (0x10) and ACL_EVENT_EXTERNAL (0x20), for device-side use and graph capture, which opsnn lacks
_EVENT_FLAGS = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE


@_pair
def create_event_with_flag(flag):
    """aclrtCreateEventWithFlag: ``(event, ret)``. ``flag`` is ACL_EVENT_SYNC (1),
    ACL_EVENT_CAPTURE_STREAM_PROGRESS (2), ACL_EVENT_TIME_LINE (8) or an OR of them (a uint32
    bitmap, acl_rt.h). Every emulated event stamps its records, so the event records, times,
    synchronizes and is queried as create_event's whatever the flag; but a stream waits only
    for one made with ACL_EVENT_SYNC (``stream_wait_event`` refuses the others with 207000, as
    CANN's runtime: its documentation says such an event cannot be waited for, and its
    aclrtStreamWaitEvent answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT for an event whose flag has
    no sync bit; aclrtSynchronizeEvent takes any).

    Returns ``(0, ret)`` on failure: 107000 (ACL_ERROR_RT_PARAM_INVALID, what CANN's runtime
    answers a flag outside its set) for 0 or a flag with any other bit, ACL_EVENT_DEVICE_USE_ONLY
    and ACL_EVENT_EXTERNAL included (opsnn has no device-side code or graph capture); 100000
    for a flag that is not a uint32; 107002 without a device."""
    call = "create_event_with_flag"
    STATE.require_device(call)  # (again when the event is made, under the lock)
    if not _is_c_int(flag) or not 0 <= flag < 2**32:
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: flag must be a uint32 bitmap of ACL_EVENT_* flags, "
                                                 f"got {flag!r}")
    flag = int(flag)  # (a NumPy uint32 cannot take the negative mask below)
    if not flag or flag & ~_EVENT_FLAGS:
        raise AclnnError(AclError.RT_PARAM_INVALID,
                         f"{call}: flag {flag:#x} is not a non-empty OR of ACL_EVENT_SYNC (0x1), "
                         "ACL_EVENT_CAPTURE_STREAM_PROGRESS (0x2) and ACL_EVENT_TIME_LINE (0x8)")
    return _new_event(call, waitable=bool(flag & ACL_EVENT_SYNC)), 0


@_ret
def destroy_event(event) -> int:
    """aclrtDestroyEvent. Returns ret (100000 for NULL, 200005 for an event not live, 107002
    with no device set); a record still queued runs all the same."""
    STATE.require_device("destroy_event")
    STATE.events.destroy(event, "destroy_event: event")
    return 0


@_ret
def record_event(event, stream) -> int:
    """aclrtRecordEvent: queue a marker on ``stream``; the event completes, stamped with the
    host's clock, when the stream's queue runs it. Returns ret: 0; 100000 for a NULL event
    (None, 0), 200005 for an event or stream that is not live, 107002 with no device set."""
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
    the event stays not ready; later calls say so until it is recorded again); 100000 for a
    NULL event (None, 0), 200005 for one not live, 107002 with no device set."""
    STATE.require_device("synchronize_event")
    target = STATE.events.get(event, "synchronize_event: event")
    with _named("synchronize_event"):
        target.synchronize()
    return 0


@_ret
def synchronize_event_with_timeout(event, timeout) -> int:
    """aclrtSynchronizeEventWithTimeout: ``synchronize_event`` with a time budget, ``timeout``
    in milliseconds (an int32: -1 waits forever, as synchronize_event). As
    ``synchronize_stream_with_timeout`` (whose docstring says why): the wait always goes to the
    end (the record's stream runs up to it, or another thread's run gets there), then returns
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT (507047) when the latest record had not run at the call and
    the wait took longer than ``timeout`` ms; an event already complete, or never recorded,
    returns 0 at once.

    Returns ret: 507047 as above; 500003 when a task before the record fails (as
    synchronize_event); 107000 for a timeout below -1 (checked first, as CANN does); 100000 for
    a timeout that is not an int32 and for a NULL event, 200005 for an event not live; 107002
    without a device."""
    call = "synchronize_event_with_timeout"
    STATE.require_device(call)
    limit = _timeout(timeout, call)
    target = STATE.events.get(event, f"{call}: event")
    latest = target.latest
    pending, start = latest is not None and not latest.settled(), time.perf_counter()
    with _named(call):
        target.synchronize()
    if pending:
        _check_budget(call, limit, start, AclError.RT_EVENT_SYNC_TIMEOUT, f"waiting for event {target.handle:#x}")
    return 0


@_query
def query_event_status(event):
    """aclrtQueryEventStatus: ``(status, ret)``, ACL_EVENT_RECORDED_STATUS_COMPLETE (1) once the
    latest record has run, else ACL_EVENT_RECORDED_STATUS_NOT_READY (0: never recorded, still
    queued, or dropped by a failure). Runs nothing. On failure ``(-1, ret)``, -1 being neither
    status: ret 100000 for a NULL event (None, 0), 200005 for one not live, 107002 with no
    device set."""
    STATE.require_device("query_event_status")
    return STATE.events.get(event, "query_event_status: event").status, 0


@_query
def event_elapsed_time(start, end):
    """aclrtEventElapsedTime: ``(ms, ret)``, milliseconds (a float) from ``start``'s record to
    ``end``'s, as the host's clock stamped them when the queue ran. Returns 107006
    (ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID) when either has not completed (synchronize first, as
    CANN's call order says), 107007 (..._TIMESTAMP_REVERSAL) when end ran before start, 100000
    for a NULL event (None, 0), 200005 for one not live, 107002 with no device set; the value is
    -1 (no elapsed time) on each of these."""
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
    Returns ret: 0 (``stream`` None or 0 is the default stream); 100000 for a NULL event
    (None, 0), 200005 for a stream or event that is not live, 107002 with no device set. A
    record dropped by a failure fails the wait (500003 at ``stream``'s synchronize). 207000 (ACL_ERROR_RT_FEATURE_NOT_SUPPORT), nothing queued, for an event made
    by create_event_with_flag without ACL_EVENT_SYNC, as CANN's runtime answers (the stream and
    the event are checked first, as there)."""
    STATE.require_device("stream_wait_event")
    target = _stream(stream, "stream_wait_event")
    source = STATE.events.get(event, "stream_wait_event: event")
    if not source.waitable:
        raise AclnnError(AclError.RT_FEATURE_NOT_SUPPORT,
                         f"stream_wait_event: event {source.handle:#x} was made without ACL_EVENT_SYNC "
                         "(create_event_with_flag), so no stream can wait for it; make it with "
                         "ACL_EVENT_SYNC or create_event, or synchronize it (synchronize_event)")
    waiter = source.waiter()
    with _named("stream_wait_event"):  # (a stream another thread destroys meanwhile refuses the task)
        target.enqueue(f"stream_wait_event {int(event):#x}", waiter)
    return 0
