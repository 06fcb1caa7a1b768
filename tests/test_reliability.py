"""Misuse, one test (or parametrised group) per row of docs/reliability.md, named after the row.

Each row: the documented status (or AclnnError in the Pythonic layer) and a recent-error message;
no exception escapes; inputs and out keep their bytes; the emulated device memory accounting is
balanced afterwards (the ``dev`` fixture asserts it at teardown).
"""

from __future__ import annotations

import collections
import gc
import itertools
import logging
import os
import re
import subprocess
import sys
import threading
import warnings

import ml_dtypes
import numpy as np
import pytest

import opsnn
import opsnn.acl as acl
from conftest import run_python
from hostile import (F16, F32, F64, Dev, Exploding, Sentinel, check_null, check_ret, dev,  # noqa: F401 - fixtures
                     launch, mem_state, rss_bytes, runtime_guard)
from opsnn import aclnn
from opsnn._core import dtypes, memory, platform
from opsnn._core.dtypes import DataType
from opsnn.acl import _rt_memory as rt_memory
from opsnn.acl import rt

G = np.array([1.0, 2.0, 3.0, 4.0], F32)
X = np.array([-1.0, 0.0, 0.5, 2.0], F32)
LEAKY_05 = np.array([0.5, 1.0, 3.0, 4.0], F32)   # leaky_relu_backward(G, X, 0.5)
HT_01 = np.array([0.0, 2.0, 3.0, 0.0], F32)      # hardtanh_backward(G, X, -1, 1): strict bounds


def fail_msg(ret, status, *words) -> str:
    """``ret`` is ``status`` and the message mentions every word (case-insensitive)."""
    msg = check_ret(ret, success_ok=False, allowed={status})
    for w in words:
        assert w.lower() in msg.lower(), f"{w!r} not in {msg!r}"
    assert acl.get_recent_err_msg() is None, "get_recent_err_msg must fetch and clear"
    return msg


def py_fail(status, fn, *args, words=(), untouched=(), **kwargs) -> opsnn.AclnnError:
    before = [np.asarray(a).tobytes() for a in untouched]
    with pytest.raises(opsnn.AclnnError) as info:
        fn(*args, **kwargs)
    assert info.value.status == status, info.value
    assert info.value.message.strip()
    for w in words:
        assert w.lower() in info.value.message.lower(), f"{w!r} not in {info.value.message!r}"
    assert [np.asarray(a).tobytes() for a in untouched] == before, "a failing call changed an argument"
    return info.value


def leaky(dev: Dev, g=G, x=X, slope=0.5, out_dtype=F32):
    """Device tensors for LeakyReluBackward(g, x, slope) -> out; returns (gt, xt, s, ot, out_addr)."""
    gt, xt = dev.tensor(g), dev.tensor(x)
    ot = dev.tensor(np.zeros(np.broadcast_shapes(g.shape, x.shape), out_dtype))
    return gt, xt, dev.scalar(slope), ot, dev.addrs[-1]


def planned(dev: Dev, g=G, x=X, out_dtype=F32):
    gt, xt, s, ot, oa = leaky(dev, g, x, out_dtype=out_dtype)
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ret == 0, acl.get_recent_err_msg()
    return ws, ex, oa


def read_out(dev: Dev, addr, n=4, dtype=F32):
    return dev.read(addr, (n,), dtype)


# ============================================================================================
# runtime lifecycle
# ============================================================================================
def test_use_before_init(runtime_guard):
    """Runtime calls before acl.init -> 100001 ACL_ERROR_UNINITIALIZE; phase 2 -> 361001;
    phase 1 and the Pythonic API (host-only planning) still work."""
    keep = Dev()
    gt, xt = keep.tensor(G), keep.tensor(X)
    s, ot = keep.scalar(0.5), keep.tensor(np.zeros(4, F32))
    acl.rt.reset_device(0)
    assert acl.finalize() == 0
    before = mem_state()
    fail_msg(acl.rt.malloc(64, 0)[1], 100001, "acl.init")
    fail_msg(acl.rt.create_stream()[1], 100001)
    fail_msg(acl.rt.set_device(0), 100001)
    fail_msg(acl.rt.get_device_count()[1], 100001)
    fail_msg(acl.rt.free(keep.addrs[0]), 100001)
    fail_msg(acl.rt.malloc_host(64)[1], 100001)
    fail_msg(acl.rt.memcpy(keep.addrs[0], 16, G, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE), 100001)
    fail_msg(acl.rt.synchronize_stream(None), 100001)
    fail_msg(acl.rt.destroy_stream(None), 100001)
    for late in (lambda: acl.rt.synchronize_stream_with_timeout(None, -1), lambda: acl.rt.get_mem_info(0)[2],
                 lambda: acl.rt.synchronize_event_with_timeout(None, -1), lambda: acl.rt.create_event_with_flag(1)[1],
                 lambda: acl.rt.memset_async(keep.addrs[0], 16, 0, 16, None)):
        fail_msg(late(), 100001, "acl.init")
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ret == 0 and ws == 0
    fail_msg(aclnn.aclnnLeakyReluBackward(None, 0, ex, None), 361001, "launch failed", "acl.init",
             "released the executor")
    np.testing.assert_array_equal(opsnn.leaky_relu_backward(G, X, 0.5), LEAKY_05)
    assert mem_state() == before
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    # the failed launch released it, as CANN's does (a retry would use freed memory): phase 1 again
    fail_msg(aclnn.aclnnLeakyReluBackward(None, 0, ex, None), 161002, "released it at a failed launch")
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ret == 0 and aclnn.aclnnLeakyReluBackward(None, 0, ex, None) == 0
    assert acl.rt.synchronize_stream(None) == 0
    np.testing.assert_array_equal(read_out(keep, keep.addrs[-1]), LEAKY_05)
    keep.close()


def test_init_twice_and_finalize_twice(runtime_guard, tmp_path):
    """acl.init twice -> 100002; finalize without init -> 100037; init(config of a wrong type)
    -> 100000; init(a path that is no readable file) -> 100003, the runtime left uninitialised.
    A repeat with a path that is no readable file is 100002, as CANN's aclInit checks the repeat
    before it reads the configuration (it was 100003)."""
    fail_msg(acl.init(), 100002, "already")
    fail_msg(acl.init("/no/such/acl.json"), 100002, "already")
    for junk in (123, 1.5, b"x", ["a"], Sentinel()):
        fail_msg(acl.init(junk), 100000, "configPath")
    acl.rt.reset_device(0)
    assert acl.finalize() == 0
    fail_msg(acl.finalize(), 100037, "not initialised")
    for missing in ("/no/such/acl.json", str(tmp_path)):  # a directory is no file either
        fail_msg(acl.init(missing), 100003, "not a readable file")
        fail_msg(acl.rt.set_device(0), 100001)
    config = tmp_path / "acl.json"
    config.write_text("{}")
    assert acl.init(config) == 0 and acl.finalize() == 0  # a file path (str or os.PathLike)
    assert acl.init("") == 0  # "" is no configuration, as None


def test_use_after_finalize(runtime_guard):
    """After acl.finalize: runtime calls -> 100001, launches -> 361001, streams are gone
    (200005 after re-init); device memory stays accounted until freed after re-init."""
    d = Dev()
    gt, xt, s, ot, oa = leaky(d)
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    stream, _ = acl.rt.create_stream()
    acl.rt.reset_device(0)
    assert acl.finalize() == 0
    count = mem_state()[1]
    fail_msg(acl.rt.free(oa), 100001)
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, stream), 361001)
    assert mem_state()[1] == count, "finalize must not drop allocations behind the caller's back"
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    fail_msg(acl.rt.synchronize_stream(stream), 200005)
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)  # (the failed launch released ex)
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, stream), 361001, "not a live stream")
    d.close()


def _queue_good_then_failing_launch(d: Dev, stream) -> tuple:
    """Launch a LeakyReluBackward on ``stream``, then one over memory freed after its launch
    (its queued task will fail). Returns (the good launch's out address, the bad aclTensor)."""
    ws, ex, oa = planned(d)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, stream) == 0
    gone = d.malloc(16)
    bad = acl.create_tensor([4], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4], gone)
    ws2, ex2, _ = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(bad, bad, d.scalar(0.5), False,
                                                               d.tensor(np.zeros(4, F32)))
    assert aclnn.aclnnLeakyReluBackward(None, ws2, ex2, stream) == 0
    d.addrs.remove(gone)
    assert acl.rt.free(gone) == 0
    return oa, bad


def test_finalize_runs_queued_work(runtime_guard):
    """acl.finalize with launches still queued runs them first (nothing is lost); if one fails,
    finalize still finalizes and returns 500003 naming it."""
    d = Dev()
    stream, _ = acl.rt.create_stream()
    oa, bad = _queue_good_then_failing_launch(d, stream)
    fail_msg(acl.finalize(), 500003, "finalized", "aclnnLeakyReluBackward")
    assert not rt.STATE.initialized
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    np.testing.assert_array_equal(read_out(d, oa), LEAKY_05)
    acl.destroy_tensor(bad)
    d.close()


def test_reset_device_releases_its_streams(runtime_guard):
    """The last reset_device runs what is queued (nothing is lost; a failed task gives 500003
    naming it, the device reset all the same), then the streams made before are gone: a launch
    on one is 361001, destroying one 200005 once a device is set again. Until then every call
    that needs a device is 107002, as on hardware (they had all returned 0); the memory allocated
    before stays allocated (a leak stays visible) and is freed after set_device."""
    while rt.STATE.device_refs:
        acl.rt.reset_device(0)
    assert acl.rt.set_device(0) == 0
    d = Dev()
    stream, _ = acl.rt.create_stream()
    oa, bad = _queue_good_then_failing_launch(d, stream)
    ws3, ex3, _ = planned(d)
    fail_msg(acl.rt.reset_device(0), 500003, "reset", "aclnnLeakyReluBackward")
    for call in (lambda: acl.rt.synchronize_stream(stream), lambda: acl.rt.synchronize_stream(None),
                 lambda: acl.rt.destroy_stream(stream), lambda: acl.rt.free(d.addrs[0]),
                 lambda: acl.rt.memcpy(d.addrs[0], 4, np.zeros(1, F32), 4, acl.ACL_MEMCPY_HOST_TO_DEVICE)):
        fail_msg(call(), 107002, "no device is set")
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws3, ex3, None), 361001, "no device is set")
    assert acl.rt.set_device(0) == 0
    np.testing.assert_array_equal(read_out(d, oa), LEAKY_05)  # the first launch ran before the reset
    ws3, ex3, _ = planned(d)  # (each failed launch releases its single-use executor, as CANN's)
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws3, ex3, stream), 361001, "not a live stream")
    fail_msg(acl.rt.destroy_stream(stream), 200005, "not a live stream")
    ws3, ex3, _ = planned(d)
    assert aclnn.aclnnLeakyReluBackward(None, ws3, ex3, None) == 0 and acl.rt.synchronize_stream(None) == 0
    acl.destroy_tensor(bad)
    d.close()


def test_no_device_set(runtime_guard):
    """No set_device -> 107002 for malloc / create_stream (and the other calls that need the
    device's context: the timed synchronizes, get_mem_info, create_event_with_flag); set_device(1) -> 200002 (one device);
    set_device(-1 / '0' / 0.0 / True) -> 100000; reset_device of a device not set -> 200002."""
    while rt.STATE.device_refs:
        acl.rt.reset_device(0)
    fail_msg(acl.rt.malloc(64, 0)[1], 107002, "set_device")
    fail_msg(acl.rt.create_stream()[1], 107002)
    for late in (lambda: acl.rt.synchronize_stream_with_timeout(None, -1), lambda: acl.rt.get_mem_info(0)[2],
                 lambda: acl.rt.synchronize_event_with_timeout(1, -1), lambda: acl.rt.create_event_with_flag(1)[1]):
        fail_msg(late(), 107002, "no device is set")
    fail_msg(acl.rt.set_device(1), 200002, "does not exist")
    for junk in (-1, "0", 0.0, True, None, [0]):
        fail_msg(acl.rt.set_device(junk), 100000, "deviceId")
    fail_msg(acl.rt.reset_device(0), 200002, "not set")


def test_contexts(runtime_guard):
    """pyACL's optional contexts (pyacl_conventions section 1.1; a breaker porting a sample met an
    AttributeError): create_context holds a device reference until destroy_context, so a program
    may run on a context alone; the current context is per thread, the default one (set_device's)
    while a device is set; misuse is a status, never an exception."""
    while rt.STATE.device_refs:
        acl.rt.reset_device(0)
    fail_msg(acl.rt.get_context()[1], 107002, "no context is current")
    ctx, ret = acl.rt.create_context(0)
    assert ret == 0 and acl.rt.get_context() == (ctx, 0)
    d = Dev()  # memory, a stream and a launch on the context alone
    stream, ret = acl.rt.create_stream()
    ws, ex, oa = planned(d)
    assert ret == 0 and aclnn.aclnnLeakyReluBackward(None, ws, ex, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(read_out(d, oa), LEAKY_05)
    seen = []
    worker = threading.Thread(target=lambda: seen.extend([acl.rt.get_context(), acl.rt.set_context(ctx),
                                                          acl.rt.get_context()]))
    worker.start()
    worker.join()
    assert seen == [(rt.DEFAULT_CONTEXT, 0), 0, (ctx, 0)]  # a new thread starts on the default one
    fail_msg(acl.rt.destroy_context(rt.DEFAULT_CONTEXT), 100000, "default context")
    fail_msg(acl.rt.create_context(1)[1], 200002, "does not exist")
    for junk in (ctx + 1000, "1", 1.0):
        fail_msg(acl.rt.set_context(junk), 200005, "not a live context")
    for null in (None, 0):
        fail_msg(acl.rt.set_context(null), 100000, "context is NULL")
        fail_msg(acl.rt.destroy_context(null), 100000, "context is NULL")
    assert acl.rt.set_device(0) == 0 and acl.rt.destroy_context(ctx) == 0
    fail_msg(acl.rt.destroy_context(ctx), 200005, "not a live context")
    assert acl.rt.get_context() == (rt.DEFAULT_CONTEXT, 0) and acl.rt.set_context(rt.DEFAULT_CONTEXT) == 0
    assert acl.rt.synchronize_stream(stream) == 0  # set_device's reference keeps the streams
    d.close()
    assert acl.rt.destroy_stream(stream) == 0 and acl.rt.reset_device(0) == 0  # pyACL's teardown order
    fail_msg(acl.rt.set_context(rt.DEFAULT_CONTEXT), 200005, "not a live context")
    ctx3, _ = acl.rt.create_context(0)  # a reset_device takes the context's reference: both are gone
    assert acl.rt.reset_device(0) == 0 and not rt.STATE.device_refs
    fail_msg(acl.rt.destroy_context(ctx3), 200005, "not a live context")
    fail_msg(acl.rt.get_context()[1], 107002, "no context is current")
    ctx2, _ = acl.rt.create_context(0)
    assert acl.finalize() == 0
    fail_msg(acl.rt.destroy_context(ctx2), 100001, "acl.init")
    assert acl.init() == 0
    fail_msg(acl.rt.destroy_context(ctx2), 200005, "not a live context")


def test_device_queries(runtime_guard):
    """pyACL calls samples make around the operators (a breaker porting them met AttributeError):
    get_run_mode is ACL_HOST (device memory apart, so HOST_TO_DEVICE copies), after init;
    get_device needs a device; synchronize_device runs every stream's queue, then reports the
    first failure (500003), the other streams' work done all the same."""
    while rt.STATE.device_refs:
        acl.rt.reset_device(0)
    assert acl.rt.get_run_mode() == (acl.ACL_HOST, 0) and acl.ACL_HOST == 1 and acl.ACL_DEVICE == 0
    fail_msg(acl.rt.get_device()[1], 107002, "get_device", "no device is set")
    fail_msg(acl.rt.synchronize_device(), 107002, "synchronize_device")
    assert acl.rt.set_device(0) == 0 and acl.rt.get_device() == (0, 0)
    d = Dev()
    streams = [acl.rt.create_stream()[0] for _ in range(2)]
    ws, ex, oa = planned(d)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, streams[1]) == 0
    ws2, ex2, oa2 = planned(d)
    assert aclnn.aclnnLeakyReluBackward(None, ws2, ex2, streams[0]) == 0
    _free(d, oa)  # the first launch's out: its task fails at synchronize, the second's runs
    fail_msg(acl.rt.synchronize_device(), 500003, "synchronize_device", "stream task")
    np.testing.assert_array_equal(read_out(d, oa2), LEAKY_05)
    assert acl.rt.synchronize_device() == 0
    for s in streams:
        assert acl.rt.destroy_stream(s) == 0
    d.close()
    assert acl.finalize() == 0
    fail_msg(acl.rt.get_run_mode()[1], 100001, "acl.init")
    assert acl.init() == 0


@pytest.mark.usefixtures("runtime_guard")
def test_a_failed_query_returns_a_value_no_answer_takes():
    """query_event_status(None) was (0, 100000): 0 is ACL_EVENT_RECORDED_STATUS_NOT_READY, so a
    caller that read the status before ret saw "not ready"; get_device's 0 was device 0, and
    get_run_mode's and event_elapsed_time's 0 ACL_DEVICE and no time. Their value on failure is -1,
    which none takes; the calls whose 0 means none keep it (a NULL handle or address, no bytes)."""
    while rt.STATE.device_refs:
        acl.rt.reset_device(0)
    assert acl.rt.get_device() == (-1, 107002) and "no device is set" in acl.get_recent_err_msg()
    assert acl.rt.query_event_status(1) == (-1, 107002) and acl.get_recent_err_msg()
    assert acl.rt.create_stream() == (0, 107002) and acl.rt.malloc(64, 0) == (0, 107002)
    assert acl.rt.set_device(0) == 0
    event, ret = acl.rt.create_event()
    assert ret == 0 and acl.rt.query_event_status(event) == (acl.ACL_EVENT_RECORDED_STATUS_NOT_READY, 0)
    for handle, status in ((None, 100000), (0, 100000), (event + 12345, 200005)):
        assert acl.rt.query_event_status(handle) == (-1, status), handle
        assert acl.rt.event_elapsed_time(handle, event) == (-1, status), handle
        assert acl.get_recent_err_msg()
    assert acl.rt.event_elapsed_time(event, event) == (-1, 107006) and "never recorded" in acl.get_recent_err_msg()
    assert acl.rt.destroy_event(event) == 0
    assert acl.rt.query_event_status(event) == (-1, 200005) and "not a live event" in acl.get_recent_err_msg()
    assert acl.rt.get_context() == (1, 0) and acl.rt.get_device() == (0, 0)
    assert acl.finalize() == 0
    assert acl.rt.get_run_mode() == (-1, 100001) and acl.rt.get_device_count() == (0, 100001)
    assert acl.rt.get_context() == (0, 100001) and acl.rt.get_mem_info(0) == (0, 0, 100001)
    acl.get_recent_err_msg()
    assert acl.init() == 0


def _free(dev: Dev, addr: int) -> None:
    """Free device memory a queued task will write (its task then fails at synchronize)."""
    dev.addrs.remove(addr)
    assert acl.rt.free(addr) == 0


def test_events(dev):
    """aclrtEvent: a record completes when its stream's queue runs it, stamped with the host's
    clock; elapsed time between two records of one stream; a record dropped by an earlier task's
    failure stays not ready; stream_wait_event runs the recorded stream first; misuse: NULL
    100000, not live 200005, elapsed time without timestamps 107006, reversed 107007."""
    stream, _ = acl.rt.create_stream()
    other, _ = acl.rt.create_stream()
    start, ret = acl.rt.create_event()
    end, ret2 = acl.rt.create_event()
    assert ret == ret2 == 0 and start != end
    assert acl.rt.query_event_status(start) == (acl.ACL_EVENT_RECORDED_STATUS_NOT_READY, 0)
    assert acl.rt.synchronize_event(start) == 0  # never recorded: nothing to wait for
    fail_msg(acl.rt.event_elapsed_time(start, end)[1], 107006, "start event", "never recorded")
    ws, ex, oa = planned(dev)
    assert acl.rt.record_event(start, stream) == 0
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, stream) == 0
    assert acl.rt.record_event(end, stream) == 0
    assert acl.rt.query_event_status(end) == (0, 0)  # queued, not run: querying runs nothing
    fail_msg(acl.rt.event_elapsed_time(start, end)[1], 107006, "has not run")
    assert acl.rt.synchronize_event(end) == 0
    assert acl.rt.query_event_status(start) == acl.rt.query_event_status(end) == (1, 0)
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    ms, ret = acl.rt.event_elapsed_time(start, end)
    assert ret == 0 and isinstance(ms, float) and 0 < ms < 60_000
    fail_msg(acl.rt.event_elapsed_time(end, start)[1], 107007, "before start")
    # another stream waits for a record of the first: running it runs the first one's queue
    ws, ex, oa = planned(dev, x=-X)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, stream) == 0
    assert acl.rt.record_event(start, stream) == 0 and acl.rt.stream_wait_event(other, start) == 0
    assert acl.rt.record_event(end, other) == 0
    assert acl.rt.synchronize_stream(other) == 0
    assert acl.rt.query_event_status(start) == (1, 0) and acl.rt.query_event_status(end) == (1, 0)
    np.testing.assert_array_equal(read_out(dev, oa), np.where(-X > 0, G, G * np.float32(0.5)))
    # a record behind a failing task is dropped with it: not ready, elapsed time refused
    ws, ex, oa = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, stream) == 0
    assert acl.rt.record_event(end, stream) == 0
    _free(dev, oa)
    fail_msg(acl.rt.synchronize_event(end), 500003, "stream task")
    assert acl.rt.synchronize_stream(stream) == 0  # told once: the caller asked about this stream
    assert acl.rt.query_event_status(end) == (0, 0)
    fail_msg(acl.rt.event_elapsed_time(start, end)[1], 107006, "end event")
    # misuse
    for call in (lambda e: acl.rt.record_event(e, stream), acl.rt.synchronize_event,
                 lambda e: acl.rt.query_event_status(e)[1], acl.rt.destroy_event,
                 lambda e: acl.rt.stream_wait_event(stream, e)):
        fail_msg(call(None), 100000, "is NULL")
        fail_msg(call(0), 100000, "is NULL")
        for junk in (end + 7, "1", 1.5):
            fail_msg(call(junk), 200005, "not a live event")
    fail_msg(acl.rt.record_event(start, 12345), 200005, "not a live stream")
    assert acl.rt.destroy_event(start) == 0
    fail_msg(acl.rt.destroy_event(start), 200005, "not a live event")
    fail_msg(acl.rt.event_elapsed_time(start, end)[1], 200005, "start")
    assert acl.rt.destroy_event(end) == 0
    assert acl.rt.destroy_stream(stream) == 0 and acl.rt.destroy_stream(other) == 0


def test_events_across_streams_and_threads(dev):
    """Streams that wait on each other's events finish as a device would (a breaker: crossed
    waits from one thread were 561000, an IndexError; two threads synchronizing the two streams
    deadlocked, each holding its stream and wanting the other's). A wait runs the recorded
    stream only up to the record, or waits while another thread runs it. A record dropped by a
    failure fails what waits for it, and says so, until it is recorded again."""
    a, b = acl.rt.create_stream()[0], acl.rt.create_stream()[0]
    ea, eb = acl.rt.create_event()[0], acl.rt.create_event()[0]
    for _ in range(2):  # crossed waits, one thread
        for stream, event, other in ((a, ea, b), (b, eb, a)):
            assert acl.rt.record_event(event, stream) == 0 and acl.rt.stream_wait_event(other, event) == 0
    assert acl.rt.synchronize_stream(a) == 0 and acl.rt.synchronize_device() == 0
    assert acl.rt.query_event_status(ea) == acl.rt.query_event_status(eb) == (1, 0)
    # two threads: b holds launches, then its record and a wait for a's record after a waits for it
    outs = []
    for _ in range(3):
        ws, ex, oa = planned(dev, g=np.ones(1 << 18, F32), x=np.full(1 << 18, -1.0, F32))
        assert aclnn.aclnnLeakyReluBackward(None, ws, ex, b) == 0
        outs.append(oa)
    assert acl.rt.record_event(eb, b) == 0 and acl.rt.stream_wait_event(a, eb) == 0
    assert acl.rt.record_event(ea, a) == 0 and acl.rt.stream_wait_event(b, ea) == 0
    rets = {}
    threads = [threading.Thread(target=lambda s=s: rets.__setitem__(s, acl.rt.synchronize_stream(s)), daemon=True)
               for s in (b, a)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "deadlock"
    assert rets == {a: 0, b: 0}
    for oa in outs:
        np.testing.assert_array_equal(dev.read(oa, (1 << 18,), F32), np.full(1 << 18, 0.5, F32))
    # a dropped record: every later wait for it fails, naming the drop, until recorded again
    ws, ex, oa = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, b) == 0 and acl.rt.record_event(eb, b) == 0
    _free(dev, oa)
    fail_msg(acl.rt.synchronize_event(eb), 500003, "synchronize_event: stream task", "already freed")
    fail_msg(acl.rt.synchronize_event(eb), 500003, "synchronize_event", "record was dropped, not run")
    fail_msg(acl.rt.event_elapsed_time(ea, eb)[1], 107006, "record was dropped")
    assert acl.rt.stream_wait_event(a, eb) == 0
    fail_msg(acl.rt.synchronize_stream(a), 500003, "stream_wait_event", "record was dropped")
    assert acl.rt.record_event(eb, b) == 0 and acl.rt.synchronize_event(eb) == 0
    assert acl.rt.query_event_status(eb) == (1, 0)
    # (a reviewer) a wait's failure drops the recorded stream's tasks up to the record only: the
    # later ones stay for that stream's own synchronize (they were dropped, and it returned 0)
    ws, ex, oa = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, b) == 0 and acl.rt.record_event(eb, b) == 0
    later = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, later[0], later[1], b) == 0
    _free(dev, oa)
    assert acl.rt.stream_wait_event(a, eb) == 0
    fail_msg(acl.rt.synchronize_stream(a), 500003, "stream_wait_event", "already freed")
    # (a breaker) b's own synchronize runs the later launch and tells the failure again: it had
    # returned 0 over b's failed launch, told only through a's wait
    assert rt.STATE.streams.get(b).pending == 1
    fail_msg(acl.rt.synchronize_stream(b), 500003, "2 task(s) this thread queued", "stream_wait_event (stream task")
    assert acl.rt.synchronize_stream(b) == 0
    np.testing.assert_array_equal(read_out(dev, later[2]), LEAKY_05)
    # each wait waits for its own record: a later record of the event dropped on another stream
    # neither fails it nor, completed, lets it pass early
    c = acl.rt.create_stream()[0]
    assert acl.rt.record_event(eb, b) == 0 and acl.rt.stream_wait_event(a, eb) == 0  # waits for b's record
    ws, ex, oa = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, c) == 0 and acl.rt.record_event(eb, c) == 0
    _free(dev, oa)
    fail_msg(acl.rt.synchronize_stream(c), 500003, "already freed")  # the later record dropped
    assert acl.rt.synchronize_stream(a) == 0  # its own record, on b, ran
    assert acl.rt.query_event_status(eb) == (0, 0)  # the latest record is the dropped one
    for e in (ea, eb):
        assert acl.rt.destroy_event(e) == 0
    assert acl.rt.destroy_stream(a) == 0 and acl.rt.destroy_stream(b) == 0 and acl.rt.destroy_stream(c) == 0


def _chain(n, first=None):
    """``n`` streams, each waiting for an event the one before recorded: stream j queues a wait
    for event j - 1 (j > 0), ``first`` (stream 0 only, when given) or a task noting j, then
    records event j. Returns (streams, events, what ran)."""
    from opsnn.acl import rt

    streams = [acl.rt.create_stream()[0] for _ in range(n)]
    events = [acl.rt.create_event()[0] for _ in range(n)]
    ran = []
    for j, (stream, event) in enumerate(zip(streams, events)):
        if j:
            assert acl.rt.stream_wait_event(stream, events[j - 1]) == 0
        rt.STATE.streams.get(stream).enqueue(f"task{j}", first if j == 0 and first else lambda j=j: ran.append(j))
        assert acl.rt.record_event(event, stream) == 0
    return streams, events, ran


def _end_chain(streams, events):
    for event in events:
        assert acl.rt.destroy_event(event) == 0
    for stream in streams:
        acl.rt.destroy_stream(stream)  # (500003 for the chains a failure or Ctrl-C broke: told before)


def test_a_long_chain_of_stream_waits_runs_in_order(dev):
    """Streams each waiting for an event recorded by the one before, three times as many as
    Python's recursion limit allows nested calls: synchronizing the last stream (or its event)
    runs the whole chain in order, and every record is stamped in chain order (each wait's run of
    the stream before had been a nested call: ~250 streams failed 500003 with a RecursionError)."""
    from opsnn.acl import rt

    n = 3 * sys.getrecursionlimit()
    streams, events, ran = _chain(n)
    assert acl.rt.synchronize_stream(streams[-1]) == 0
    assert ran == list(range(n))
    stamps = [rt.STATE.events.get(event).latest.stamp for event in events]
    assert all(a <= b for a, b in itertools.pairwise(stamps))
    assert all(acl.rt.synchronize_stream(stream) == 0 for stream in streams)
    _end_chain(streams, events)
    streams, events, ran = _chain(n)  # the same through synchronize_event
    assert acl.rt.synchronize_event(events[-1]) == 0 and ran == list(range(n))
    assert acl.rt.query_event_status(events[0]) == (1, 0)
    _end_chain(streams, events)


def test_a_failure_at_the_far_end_of_a_long_chain(dev):
    """A task failing at the far end of a chain of stream waits fails every wait after it: 500003
    at the last stream's synchronize, every record dropped. The message names the outermost
    wait and the four deepest levels in full (down to the failed task and its cause) and counts
    the ones between: each level's text had held the whole text of the one inside it (53 kB and
    55 MB for a chain of 1000 streams)."""
    def fails():
        raise opsnn.AclnnError(161002, "the root cause")

    for n in (4, 5, 6, 1500):
        streams, events, _ = _chain(n, first=fails)
        msg = fail_msg(acl.rt.synchronize_stream(streams[-1]), 500003)
        deepest = ["stream task task0 failed: the root cause"]
        for j in range(min(n, 4) - 1):
            deepest.insert(0, f"stream task stream_wait_event {events[j]:#x} failed: ")
        if n <= 4:
            assert msg == "".join(deepest)
        else:
            between = f"[{n - 5} more stream_wait_event task(s), each failed by the one after it] " if n > 5 else ""
            assert msg == f"stream task stream_wait_event {events[n - 2]:#x} failed: {between}{''.join(deepest)}"
        for event in (events[0], events[-1]):
            assert acl.rt.query_event_status(event) == (0, 0)
            fail_msg(acl.rt.synchronize_event(event), 500003, "record was dropped", "the root cause")
        _end_chain(streams, events)


def test_ctrl_c_deep_in_a_long_chain(dev):
    """A Ctrl-C (KeyboardInterrupt) in a task at the far end of a long chain of stream waits goes
    on to the caller, leaves no stream's run lock held, and puts every wait it cut short back at
    the head of its queue as a task that fails, as a Ctrl-C inside any task (the next synchronize
    of each stream: 500003 naming it)."""
    from opsnn.acl import rt

    def ctrl_c():
        raise KeyboardInterrupt

    n = 2 * sys.getrecursionlimit()
    streams, events, ran = _chain(n, first=ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        acl.rt.synchronize_stream(streams[-1])
    locks, free = [rt.STATE.streams.get(s)._run for s in streams], []
    probe = threading.Thread(target=lambda: free.extend(
        lock.acquire(blocking=False) and (lock.release() or True) for lock in locks))
    probe.start()
    probe.join()
    assert free == [True] * n and ran == []
    fail_msg(acl.rt.synchronize_stream(streams[0]), 500003, "task0 was interrupted (KeyboardInterrupt)")
    for j in (1, n // 2, n - 1):
        fail_msg(acl.rt.synchronize_stream(streams[j]), 500003,
                 f"stream_wait_event {events[j - 1]:#x} was interrupted (KeyboardInterrupt)")
    assert ran == []
    _end_chain(streams, events)


def test_ctrl_c_as_a_task_or_a_stream_run_is_taken(dev):
    """A Ctrl-C landing just after a task left the queue, before it started, puts it back as it
    was (it had been lost: the next synchronize returned 0 without running it); one landing just
    after an event wait claimed the recorded stream gives the claim back (the stream's run lock
    had stayed held, so another thread's synchronize of it would wait forever). Found by random
    Ctrl-C trials over chains of stream waits."""
    from opsnn.acl import rt

    class CutAfterPop(collections.deque):  # a Ctrl-C right after the entry leaves the queue
        def popleft(self):
            entry = super().popleft()
            type(self).popleft = collections.deque.popleft
            raise KeyboardInterrupt
            return entry

    stream, ran = acl.rt.create_stream()[0], []
    queue = rt.STATE.streams.get(stream)
    queue.enqueue("first", lambda: ran.append(1))
    queue._tasks = CutAfterPop(queue._tasks)
    with pytest.raises(KeyboardInterrupt):
        acl.rt.synchronize_stream(stream)
    assert ran == [] and queue.pending == 1
    assert acl.rt.synchronize_stream(stream) == 0 and ran == [1]

    streams, events, ran = _chain(2)
    recorded = rt.STATE.streams.get(streams[0])
    claim = recorded.claim

    def cut_claim():  # a Ctrl-C right after the claim is taken
        claim()
        raise KeyboardInterrupt
    recorded.claim = cut_claim
    with pytest.raises(KeyboardInterrupt):
        acl.rt.synchronize_stream(streams[1])
    recorded.claim = claim
    free = []
    probe = threading.Thread(target=lambda: free.append(
        recorded._run.acquire(blocking=False) and (recorded._run.release() or True)))
    probe.start()
    probe.join()
    assert free == [True] and ran == []
    fail_msg(acl.rt.synchronize_stream(streams[1]), 500003, "interrupted (KeyboardInterrupt)")
    assert acl.rt.synchronize_stream(streams[0]) == 0 and ran == [0]
    _end_chain(streams, events)


def test_a_stream_emptied_under_its_run_ends_it(dev):
    """A signal handler that synchronizes the stream being run, on the same thread, landing just
    before the run takes its next task, runs that task itself and empties the queue: the outer run
    then has nothing left and ends, 0 (it had met an empty queue as a task failure with no task:
    an UnboundLocalError, 561000; an IndexError before this session's driver)."""
    from opsnn.acl import rt

    stream, ran = acl.rt.create_stream()[0], []
    queue = rt.STATE.streams.get(stream)

    class Reentered(collections.deque):  # as a handler's synchronize landing at the take
        def __getitem__(self, index):
            if not ran:
                queue.synchronize()
            return super().__getitem__(index)

    queue.enqueue("only", lambda: ran.append(1))
    queue._tasks = Reentered(queue._tasks)
    assert acl.rt.synchronize_stream(stream) == 0 and ran == [1] and queue.pending == 0
    assert acl.rt.destroy_stream(stream) == 0


def test_ctrl_c_between_two_steps_of_a_stream_run(dev):
    """A Ctrl-C landing in stream.drive's own loop (between two steps of a stream's run, where
    CPython checks for signals: here raised by a trace function at the loop's test) ends every
    run left on its stack then and there, innermost first: the wait it cut short comes back to
    its queue as a task that fails, and the recorded stream's run is free. A breaker: the runs
    stayed suspended until the traceback was freed, so a retry in the handler ran the tasks
    queued after the wait (returning 0) before the ones it waited for, and another thread found
    the recorded stream's run held."""
    import inspect

    from opsnn._core import stream as stream_mod
    from opsnn.acl import rt

    a, b = acl.rt.create_stream()[0], acl.rt.create_stream()[0]
    event = acl.rt.create_event()[0]
    recorded, waiting, ran = rt.STATE.streams.get(a), rt.STATE.streams.get(b), []
    recorded.enqueue("task_a", lambda: ran.append("a"))
    assert acl.rt.record_event(event, a) == 0 and acl.rt.stream_wait_event(b, event) == 0
    waiting.enqueue("task_b", lambda: ran.append("b"))
    lines, first = inspect.getsourcelines(stream_mod._drive_stack)
    test_line = first + next(i for i, line in enumerate(lines) if line.strip() == "while stack:")
    tests = []

    def tracer(frame, event, arg):
        if frame.f_code is not stream_mod._drive_stack.__code__:
            return None

        def at_line(frame, event, arg):
            if event == "line" and frame.f_lineno == test_line:
                tests.append(1)
                if len(tests) == 2:  # the wait has claimed stream a and yielded its run
                    raise KeyboardInterrupt
            return at_line
        return at_line

    sys.settrace(tracer)
    try:
        acl.rt.synchronize_stream(b)
    except KeyboardInterrupt:  # checked in the handler, the traceback (and its frames) alive
        sys.settrace(None)
        assert len(tests) == 2 and not recorded._run._is_owned() and ran == []
        free = []
        probe = threading.Thread(target=lambda: free.append(
            recorded._run.acquire(blocking=False) and (recorded._run.release() or True)))
        probe.start()
        probe.join()
        assert free == [True]
        fail_msg(acl.rt.synchronize_stream(b), 500003, f"stream_wait_event {event:#x} was interrupted")
        assert ran == [] and acl.rt.synchronize_stream(a) == 0 and ran == ["a"]
    else:
        raise AssertionError("no KeyboardInterrupt")
    finally:
        sys.settrace(None)
    assert acl.rt.destroy_event(event) == 0 and acl.rt.destroy_stream(a) == acl.rt.destroy_stream(b) == 0


def test_a_failed_chain_leaves_no_garbage_and_reports_in_linear_time(dev):
    """A failure through a chain of stream waits leaves no reference cycle for the collector (a
    breaker: 47 objects a failed two-stream synchronize, 287 MB for a failed 100000-stream
    chain, until gc ran) and its report does not walk the chain at each level (each level's
    500003 is raised while handling the one inside it: its context chain had grown with the
    depth, and Python walks that at every raise, quadratic: 40000 streams 7.8 s)."""
    def fails():
        raise opsnn.AclnnError(161002, "the root cause")

    from opsnn.acl import rt

    def garbage(first) -> int:  # what the collector finds after a chain's synchronize
        streams, events, _ = _chain(2, first=first)
        ret = acl.rt.synchronize_stream(streams[-1])
        assert ret == (500003 if first else 0)
        acl.get_recent_err_msg()
        _end_chain(streams, events)
        return gc.collect()

    gc.collect()
    gc.disable()
    try:
        # (an event and its record refer to each other: a cycle whether the chain fails or not;
        # a failure adds the note for the thread whose task failed, a dict in the stream's cycle)
        found = [(garbage(None), garbage(fails)) for _ in range(3)][1:]
    finally:
        gc.enable()
    assert all(failed <= ok + 1 for ok, failed in found), found
    streams, events, _ = _chain(300, first=fails)
    with pytest.raises(opsnn.AclnnError) as info:
        rt.STATE.streams.get(streams[-1]).synchronize()
    depth, cause = 0, info.value
    while cause.__context__ is not None:
        depth, cause = depth + 1, cause.__context__
    assert depth <= 2  # (each level's 500003 keeps its cause as __cause__)
    depth, cause = 0, info.value
    while cause.__cause__ is not None:
        depth, cause = depth + 1, cause.__cause__
    assert depth == 300 and cause.message == "the root cause"
    _end_chain(streams, events)


def test_events_end_with_the_device(runtime_guard):
    """The device's last reset_device (and finalize) drops its events: their handles are 200005
    after a new set_device, 107002 before it."""
    while rt.STATE.device_refs:
        acl.rt.reset_device(0)
    assert acl.rt.set_device(0) == 0
    event, _ = acl.rt.create_event()
    assert acl.rt.reset_device(0) == 0
    fail_msg(acl.rt.query_event_status(event)[1], 107002, "no device is set")
    assert acl.rt.set_device(0) == 0
    fail_msg(acl.rt.query_event_status(event)[1], 200005, "not a live event")
    assert acl.rt.reset_device(0) == 0


# ============================================================================================
# memory
# ============================================================================================
@pytest.mark.parametrize("size, policy", [(0, 0), (-1, 0), (1.5, 0), (True, 0), (None, 0), ("64", 0),
                                          (64, -1), (64, 99), (64, 0x1100), (64, None), (64, 2.0)])
def test_malloc_bad_size_or_policy(dev, size, policy):
    """malloc with a size < 1 / non-int, or a policy that is no aclrtMemMallocPolicy -> 100000."""
    before = mem_state()
    addr, ret = acl.rt.malloc(size, policy)
    fail_msg(ret, 100000)
    assert addr == 0 and mem_state() == before


def test_malloc_beyond_capacity(dev):
    """malloc beyond the emulated device memory (64 GiB) -> 200000 ACL_ERROR_BAD_ALLOC, refused
    before any host memory is touched; a valid malloc still works."""
    before, rss = mem_state(), rss_bytes()
    for size in (memory.DEVICE_CAPACITY + 1, 2**62, 2**64, 10**30):
        addr, ret = acl.rt.malloc(size, 0)
        fail_msg(ret, 200000, "cannot allocate")
        assert addr == 0
    # the whole capacity: the message gives the padded size that does not fit (a breaker read
    # "cannot allocate N bytes: N ... are free" as an off-by-one)
    cap = memory.DEVICE_CAPACITY
    fail_msg(acl.rt.malloc(cap, 0)[1], 200000, f"cannot allocate {cap} bytes ({cap + 32} with aclrtMalloc's rounding")
    assert mem_state() == before and rss_bytes() - rss < 64 << 20
    assert dev.malloc(128)


def test_malloc_host_refusal_names_its_call_and_its_limit(acl_runtime, monkeypatch):
    """Found by a breaker: malloc_host(2**40) was told of "aclrtMalloc's rounding" and "the
    68719476736-byte emulated host memory", though README's 64 GiB is the emulated device's. It
    names aclrtMallocHost and the limit that binds: the host's RAM, which pinned memory is
    (less the live device and pinned allocations), or the 64 GiB cap opsnn puts on pinned host
    memory where that is lower or the RAM cannot be read."""
    head = ("malloc_host: cannot allocate {} bytes of pinned host memory (aclrtMallocHost; {} bytes as opsnn counts "
            "it, padded as aclrtMalloc pads: rounded up to 32 B, plus 32 B): ")
    monkeypatch.setattr(memory, "host_total", lambda: None)
    in_use = sum(space.capacity - space.free_bytes for space in (memory.DEVICE, memory.HOST))  # live, padded
    monkeypatch.setattr(memory, "host_total", lambda: in_use + (8 << 20))  # an 8 MiB host beside them
    addr, ret = acl.rt.malloc_host(16 << 20)
    assert addr == 0 and fail_msg(ret, 200000) == head.format(16 << 20, (16 << 20) + 32) + (
        f"pinned host memory is the host's RAM, and the host's {in_use + (8 << 20)}-byte RAM, less the live device "
        f"and pinned host allocations, leaves {8 << 20}")
    for total in (None, 1 << 50):  # the RAM unread, or larger than the cap
        monkeypatch.setattr(memory, "host_total", lambda total=total: total)
        host_free = memory.HOST.free_bytes
        addr, ret = acl.rt.malloc_host(2**40)
        assert addr == 0 and fail_msg(ret, 200000) == head.format(2**40, 2**40 + 32) + (
            f"{host_free} of the 68719476736 bytes (64 GiB) opsnn lets pinned host memory hold are free")


def test_emulated_addresses_are_never_real_ones(dev):
    """Found by a breaker: pinned host allocations (then at 0x7e00...) came to cover the real
    address of a NumPy array that numpy_to_ptr had handed out, and memcpy read the emulated
    buffer in its place. Emulated addresses start at 2**56, which no user-space pointer reaches."""
    a = np.arange(16, dtype=F32)
    real = acl.util.numpy_to_ptr(a)
    host, _ = acl.rt.malloc_host(64)
    assert real < 2**56 <= memory.DEVICE._base < memory.DEVICE._end <= memory.HOST._base < memory.HOST._end < 2**63
    assert memory.DEVICE._base <= dev.malloc(64) < memory.DEVICE._end and memory.HOST._base <= host
    out = np.zeros(4, F32)
    assert acl.rt.memcpy(out, 16, real, 16, acl.ACL_MEMCPY_HOST_TO_HOST) == 0 and out.tolist() == [0, 1, 2, 3]
    assert acl.rt.free_host(host) == 0


def test_malloc_past_the_end_of_the_address_range(dev, monkeypatch):
    """Found by a breaker: addresses are never reused, and ~32 000 rounds of a 4 GiB malloc/free
    walked the device range into the pinned host range (one integer was then both). The ranges
    are disjoint and bounded: near the end a malloc that fits still works, one that does not is
    200000 naming the range, and the host range is untouched."""
    assert memory.DEVICE._end <= memory.HOST._base
    monkeypatch.setattr(memory.DEVICE, "_next", memory.DEVICE._end - (1 << 20))
    fits = dev.malloc(4096)
    assert memory.DEVICE._base <= fits < memory.DEVICE._end
    before = mem_state()
    addr, ret = acl.rt.malloc(1 << 20, 0)
    fail_msg(ret, 200000, "device address range [0x100000000000000, 0x4000000000000000) is used up")
    assert addr == 0 and mem_state() == before
    host, ret = acl.rt.malloc_host(64)
    assert ret == 0 and memory.HOST._base <= host < memory.HOST._end and memory.DEVICE.find(host) is None
    assert acl.rt.free_host(host) == 0


def test_free_misuse(dev):
    """free of a never-allocated, interior, already-freed, None, str, or host address, and
    free_host of a device address -> 100000; the accounting is unchanged. An address of the
    other memory is told as such (a breaker: a live malloc_host address given to free was
    "never allocated, already freed, or an interior address"), an interior or dead one too,
    without guessing which (a second breaker: a never-allocated one was "already freed")."""
    live = dev.malloc(256)
    freed, _ = acl.rt.malloc(64, 0)
    assert acl.rt.free(freed) == 0
    before = mem_state()
    for addr in (0x3_0000_0000, live + 64, freed, None, "0x100", -1, 1.0, np.zeros(4)):
        fail_msg(acl.rt.free(addr), 100000)
    fail_msg(acl.rt.free_host(live), 100000, f"free_host: {live:#x} is device memory (acl.rt.malloc; "
                                             "acl.rt.free releases it), not pinned host memory")
    fail_msg(acl.rt.free_host(freed), 100000, f"free_host: {freed:#x} is an address of device memory's range "
                                              "(acl.rt.malloc), not pinned host memory; no live allocation holds "
                                              "it (never allocated, or already freed)")
    fail_msg(acl.rt.free_host(live + 8), 100000, f"free_host: {live + 8:#x} lies 8 bytes into device memory "
                                                 f"(acl.rt.malloc at {live:#x}), not pinned host memory")
    host, _ = acl.rt.malloc_host(64)
    fail_msg(acl.rt.free(host), 100000, f"free: {host:#x} is pinned host memory (acl.rt.malloc_host; "
                                        "acl.rt.free_host releases it), not device memory")
    assert acl.rt.free_host(host) == 0
    fail_msg(acl.rt.free_host(host), 100000, f"free_host: {host:#x} is not the start of a live host allocation")
    fail_msg(acl.rt.free(host), 100000, "is an address of pinned host memory's range (acl.rt.malloc_host), not "
                                        "device memory; no live allocation holds it")
    assert mem_state() == before


def test_memcpy_misuse(dev):
    """memcpy out of bounds, to freed memory, bad kind, impossible direction, into a read-only or
    non-contiguous host array, junk types -> 100000; nothing is written (the sizes rtMemcpy
    refuses, 107000: test_memcpy_sizes_are_refused_as_canns_runtime_refuses_them)."""
    d = dev.upload(np.arange(4, dtype=F32))
    freed, _ = acl.rt.malloc(64, 0)
    acl.rt.free(freed)
    H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST
    ro = np.zeros(4, F32)
    ro.flags.writeable = False
    strided = np.zeros(8, F32)[::2]
    cases_ = [(d, 32, np.zeros(8, F32), 32, H2D),          # past the 16-byte allocation
              (d + 8, 16, np.zeros(4, F32), 16, H2D),      # interior start, runs past the end
              (freed, 16, np.zeros(4, F32), 16, H2D),
              (d, 2**70, np.zeros(4, F32), 16, H2D),       # a destMax no size_t holds (memset's maxCount too)
              (d, 16, np.zeros(4, F32), 16, 9), (d, 16, np.zeros(4, F32), 16, None),
              (d, 16, np.zeros(4, F32), 16, D2H),          # host array as a device source
              (np.zeros(4, F32), 16, d, 16, H2D),          # device address as a host source
              (ro, 16, d, 16, D2H), (strided, 16, d, 16, D2H),
              (d, 16, [1.0, 2.0], 16, H2D), (d, 16, "abcd" * 4, 16, H2D), (d, 16, None, 16, H2D),
              (d, -1, np.zeros(4, F32), -1, H2D), (d, 16, np.zeros(4, F32), 16.0, H2D),
              (d, 16, np.zeros(2, F32), 16, H2D),          # host source smaller than count
              (d, 16, memoryview(np.ones(8, F32))[::2], 16, H2D),  # buffers with no flat bytes
              (memoryview(strided), 16, d, 16, D2H), (d, 16, np.array([object()] * 16), 16, H2D)]
    for args in cases_:
        assert "internal error" not in fail_msg(acl.rt.memcpy(*args), 100000, "memcpy")
    np.testing.assert_array_equal(dev.read(d, (4,), F32), np.arange(4, dtype=F32))
    assert not ro.any() and not strided.any()
    # a host array that cannot be written in place is told which condition failed, with the
    # array's own (a breaker: each was "the host array must be C-contiguous and writable")
    must = "the host array must be C-contiguous and writable, but it is"
    fortran = np.zeros((2, 2), F32, order="F")
    ro_strided = np.zeros(8, F32)[::2]
    ro_strided.flags.writeable = False
    copy_in = "copy into a C-contiguous array (np.empty(shape, dtype)) and assign that into"

    def d2h(a):
        return acl.rt.memcpy(a, 16, d, 16, D2H)
    for call, target, where, why in (
            (d2h, ro, "memcpy destination", "read-only (flags.writeable is False): pass a writable array"),
            (d2h, strided, "memcpy destination", f"not C-contiguous (shape (4,), strides (8,) in bytes): {copy_in} it"),
            (d2h, fortran, "memcpy destination",
             f"not C-contiguous (shape (2, 2), strides (4, 8) in bytes): {copy_in} it"),
            (d2h, ro_strided, "memcpy destination", (f"not C-contiguous (shape (4,), strides (8,) in bytes) and "
                                                     f"read-only (flags.writeable is False): {copy_in} a writable one")),
            (lambda a: acl.rt.memset(a, 16, 1, 16), ro,
             "memset destination", "read-only (flags.writeable is False): pass a writable array"),
            (lambda a: acl.rt.memcpy_async(a, 16, d, 16, D2H, 0), strided,
             "memcpy_async destination", f"not C-contiguous (shape (4,), strides (8,) in bytes): {copy_in} it")):
        assert fail_msg(call(target), 100000) == f"{where}: {must} {why}"
    assert not ro.any() and not strided.any() and not fortran.any()


def test_memcpy_sizes_are_refused_as_canns_runtime_refuses_them(dev):
    """aclrtMemcpy checks dst and src for NULL and its kind (ACL_ERROR_INVALID_PARAM 100000),
    then hands the sizes to rtMemcpy, which refuses a destMax of 0, a count of 0 and a count past
    destMax with ACL_ERROR_RT_PARAM_INVALID (107000) before it looks at an address
    (hicann/runtime: aclrtMemcpyImpl, ApiErrorDecorator::MemCopySync; aclrtMemcpyAsync the same
    less the destMax check). opsnn had answered 100000, and a copy of 0 bytes succeeded: a port
    that copies an empty tensor passed here and failed on a device."""
    d = dev.upload(np.arange(4, dtype=F32))
    host = np.zeros(4, F32)
    H2D, D2H = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST
    for args, status, message in (
            ((d, 8, host, 16, H2D), 107000, "memcpy: count 16 exceeds destMax 8"),
            ((d, 16, host, 0, H2D), 107000, "memcpy: count must be greater than 0 (bytes), got 0"),
            ((d, 0, host, 0, H2D), 107000, "memcpy: destMax must be greater than 0 (bytes), got 0"),
            ((12345, 0, 999, 0, H2D), 107000, "memcpy: destMax must be greater than 0 (bytes), got 0"),
            ((d, 8, host, 16, 9), 100000, ("memcpy: kind 9 is not an aclrtMemcpyKind (ACL_MEMCPY_HOST_TO_HOST 0, "
                                           "ACL_MEMCPY_HOST_TO_DEVICE 1, ACL_MEMCPY_DEVICE_TO_HOST 2, "
                                           "ACL_MEMCPY_DEVICE_TO_DEVICE 3, ACL_MEMCPY_DEFAULT 4)")),
            ((0, 0, host, 0, H2D), 100000, "memcpy: dst is a null pointer (0)"),
            ((d, 16, None, 0, H2D), 100000, "memcpy: src is a null pointer (None)")):
        assert acl.rt.memcpy(*args) == status
        assert acl.get_recent_err_msg() == message
    for args, status, message in (
            ((host, 8, d, 16, D2H, dev.stream), 107000, "memcpy_async: count 16 exceeds destMax 8"),
            ((host, 16, d, 0, D2H, dev.stream), 107000, "memcpy_async: count must be greater than 0 (bytes), got 0"),
            ((host, 0, d, 0, D2H, dev.stream), 107000, "memcpy_async: count must be greater than 0 (bytes), got 0")):
        assert acl.rt.memcpy_async(*args) == status
        assert acl.get_recent_err_msg() == message
    assert acl.rt.synchronize_stream(dev.stream) == 0
    assert not host.any()
    np.testing.assert_array_equal(dev.read(d, (4,), F32), np.arange(4, dtype=F32))


def test_memcpy_async_refuses_a_host_to_host_copy(dev):
    """aclrtMemcpyAsync's documentation: in the EP form (a card beside the host: run mode
    ACL_HOST, what acl.rt.get_run_mode() reports here) it does not copy host memory to host
    memory, and a kind of ACL_MEMCPY_HOST_TO_HOST returns ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    (207000); its runtime refuses the copy kind after resolving ACL_MEMCPY_DEFAULT from the
    addresses (hicann/runtime ApiErrorDecorator::MemcpyAsync: "Not support h2h"). opsnn queued it
    (0) and wrote the bytes at the synchronize. Nothing is queued; a device copy still is."""
    assert acl.rt.get_run_mode() == (acl.ACL_HOST, 0)
    pinned, ret = acl.rt.malloc_host(16)
    assert ret == 0
    try:
        host = np.zeros(4, F32)
        source = np.arange(4, dtype=F32)
        h2h = "ACL_MEMCPY_HOST_TO_HOST copies host memory to host memory"
        for dst, src, kind, what in ((host, source, acl.ACL_MEMCPY_HOST_TO_HOST, h2h),
                                     (pinned, source, acl.ACL_MEMCPY_HOST_TO_HOST, h2h),
                                     (host, pinned, acl.ACL_MEMCPY_DEFAULT,
                                      "ACL_MEMCPY_DEFAULT with both addresses in host memory")):
            assert acl.rt.memcpy_async(dst, 16, src, 16, kind, dev.stream) == 207000
            assert acl.get_recent_err_msg() == (
                f"memcpy_async: {what}, which CANN's runtime does not queue where the device is a card beside "
                "the host (run mode ACL_HOST): use acl.rt.memcpy")
        assert acl.rt.synchronize_stream(dev.stream) == 0
        assert not host.any() and acl.util.ptr_to_bytes(pinned, 16) == bytes(16)
        d = dev.upload(np.zeros(4, F32))
        assert acl.rt.memcpy_async(d, 16, source, 16, acl.ACL_MEMCPY_DEFAULT, dev.stream) == 0
        assert acl.rt.synchronize_stream(dev.stream) == 0
        np.testing.assert_array_equal(dev.read(d, (4,), F32), source)
    finally:
        assert acl.rt.free_host(pinned) == 0


def test_refusals_say_which_memory_and_which_call(dev):
    """Found by a breaker: a memcpy whose kind disagrees with an address's memory said the device
    address "is not host memory opsnn knows" (or a live pinned address "is not inside a live
    device allocation"); it says which memory the address is and what the kind takes. Stream
    refusals name their call and print the handle in hex; a repeatable executor relaunched after
    one of its tensors was destroyed is told its tensors live until its last launch."""
    d = dev.upload(np.arange(4, dtype=F32))
    h, ret = acl.rt.malloc_host(16)
    assert ret == 0
    try:
        host = np.zeros(4, F32)
        for dst, src, kind, words in (
                (d, d, acl.ACL_MEMCPY_HOST_TO_DEVICE,
                 [f"memcpy source: {d:#x} is device memory, but ACL_MEMCPY_HOST_TO_DEVICE takes host memory"]),
                (host, h, acl.ACL_MEMCPY_DEVICE_TO_HOST,
                 [f"memcpy source: {h:#x} is host memory, but ACL_MEMCPY_DEVICE_TO_HOST takes device memory"]),
                (h, d, acl.ACL_MEMCPY_DEVICE_TO_DEVICE,
                 [f"memcpy destination: {h:#x} is host memory, but ACL_MEMCPY_DEVICE_TO_DEVICE takes device"]),
                (d, 0x1234, acl.ACL_MEMCPY_HOST_TO_DEVICE, ["memcpy source: 0x1234 is not host memory opsnn knows"])):
            fail_msg(acl.rt.memcpy(dst, 16, src, 16, kind), 100000, *words)
        assert not host.any() and acl.util.ptr_to_bytes(h, 16) == bytes(16)
        # (a breaker) a tensor over pinned memory, a device address read as host memory
        assert acl.create_tensor([4], acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, [4], h) is None
        assert acl.get_recent_err_msg() == (f"create_tensor: address {h:#x} is pinned host memory "
                                            "(acl.rt.malloc_host; acl.rt.free_host releases it), not device memory")
        assert acl.util.ptr_to_numpy(d, (4,), 11) is None
        assert acl.get_recent_err_msg() == (f"ptr_to_numpy: {d:#x} is device memory (acl.rt.malloc; acl.rt.free "
                                            "releases it), not host memory: copy it to the host with "
                                            "acl.rt.memcpy first")
    finally:
        assert acl.rt.free_host(h) == 0
    np.testing.assert_array_equal(dev.read(d, (4,), F32), np.arange(4, dtype=F32))
    stream, _ = acl.rt.create_stream()
    assert acl.rt.destroy_stream(stream) == 0
    fail_msg(acl.rt.synchronize_stream(stream), 200005, f"synchronize_stream: stream {stream:#x} is not a live stream")
    fail_msg(acl.rt.destroy_stream(stream), 200005, f"destroy_stream: stream {stream:#x} is not a live stream")
    gt, xt, s, ot, _ = leaky(dev)
    ws, ex, _ = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    assert acl.destroy_tensor(xt) == 0
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002,
             "self was destroyed (aclDestroyTensor or aclDestroyTensorList) after GetWorkspaceSize; a repeatable "
             "executor's tensors live until its last launch is done; destroy them after aclDestroyAclOpExecutor")
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_memcpy_async_misuse(dev, monkeypatch):
    """memcpy_async checks its arguments when called, as memcpy (107000: count > destMax; 100000: a
    wrong kind, a freed or unknown address; 200005 a dead stream; nothing queued); memory freed after
    it was queued fails the copy at synchronize (500003 naming memcpy_async), and the work
    queued after it is dropped, as after any failed task."""
    d = dev.upload(np.arange(4, dtype=F32))
    host = np.zeros(4, F32)
    freed, _ = acl.rt.malloc(16, 0)
    assert acl.rt.free(freed) == 0
    stream, _ = acl.rt.create_stream()
    assert acl.rt.destroy_stream(stream) == 0
    for args, status, words in (
            ((host, 8, d, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST, dev.stream), 107000, "memcpy_async: count 16 exceeds destMax 8"),
            ((host, 16, d, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE, dev.stream), 100000,
             f"memcpy_async source: {d:#x} is device memory, but ACL_MEMCPY_HOST_TO_DEVICE takes host"),
            ((host, 16, freed, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST, dev.stream), 100000,
             f"memcpy_async source: address {freed:#x} is not inside a live device allocation"),
            ((host, 16, d, 16, 7, dev.stream), 100000, ("kind 7 is not an aclrtMemcpyKind (ACL_MEMCPY_HOST_TO_HOST 0, "
             "ACL_MEMCPY_HOST_TO_DEVICE 1, ACL_MEMCPY_DEVICE_TO_HOST 2, ACL_MEMCPY_DEVICE_TO_DEVICE 3, "
             "ACL_MEMCPY_DEFAULT 4)")),
            ((host, 16, d, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST, stream), 200005,
             f"memcpy_async: stream {stream:#x} is not a live stream")):
        fail_msg(acl.rt.memcpy_async(*args), status, words)
    assert acl.rt.synchronize_stream(dev.stream) == 0 and not host.any()
    scratch, _ = acl.rt.malloc(16, 0)
    assert acl.rt.memcpy_async(host, 16, scratch, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST, dev.stream) == 0
    assert acl.rt.memcpy_async(host, 16, d, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST, dev.stream) == 0
    assert acl.rt.free(scratch) == 0
    fail_msg(acl.rt.synchronize_stream(dev.stream), 500003,
             f"stream task memcpy_async failed: the device memory at {scratch:#x} was freed before the copy ran")
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(host, np.zeros(4, F32))  # the copy after the failed one was dropped
    # (a breaker) a stream another thread destroys between the lookup and the enqueue: the
    # refusal names the call, as the lookup's does
    stream2, _ = acl.rt.create_stream()
    real_stream = rt_memory._stream

    def destroyed_meanwhile(handle, call):
        found = real_stream(handle, call)
        assert acl.rt.destroy_stream(stream2) == 0
        return found
    monkeypatch.setattr(rt_memory, "_stream", destroyed_meanwhile)
    fail_msg(acl.rt.memcpy_async(host, 16, d, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST, stream2), 200005,
             f"memcpy_async: stream {stream2:#x} was destroyed; its queue takes no more tasks")
    monkeypatch.undo()
    # memory another thread frees right after the call checked its region: the queued copy
    # still finds it freed (the allocation was looked up before the check, not after)
    scratch, _ = acl.rt.malloc(16, 0)
    real_region = rt_memory._region

    def freed_meanwhile(ptr, *args, **kwargs):
        found = real_region(ptr, *args, **kwargs)
        if isinstance(ptr, int) and ptr == scratch:
            assert acl.rt.free(scratch) == 0
        return found
    monkeypatch.setattr(rt_memory, "_region", freed_meanwhile)
    assert acl.rt.memcpy_async(host, 16, scratch, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST, dev.stream) == 0
    monkeypatch.undo()
    fail_msg(acl.rt.synchronize_stream(dev.stream), 500003,
             f"stream task memcpy_async failed: the device memory at {scratch:#x} was freed before the copy ran")
    # a non-contiguous source is read at the call, a contiguous one when the stream runs
    strided, dense = np.zeros(8, F32)[::2], np.zeros(4, F32)
    for source, expected in ((strided, 0.0), (dense, 7.0)):
        assert acl.rt.memcpy_async(d, 16, source, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE, dev.stream) == 0
        source[:] = 7.0
        assert acl.rt.synchronize_stream(dev.stream) == 0
        np.testing.assert_array_equal(dev.read(d, (4,), F32), np.full(4, expected, F32))
    pinned, _ = acl.rt.malloc_host(16)  # (a reviewer) host memory freed before the copy runs
    assert acl.rt.memcpy_async(pinned, 16, d, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST, dev.stream) == 0
    assert acl.rt.free_host(pinned) == 0
    fail_msg(acl.rt.synchronize_stream(dev.stream), 500003,
             f"stream task memcpy_async failed: the host memory at {pinned:#x} was freed before the copy ran")
    # (a breaker) freed pinned memory is told as such, not as device memory or unknown memory
    fail_msg(acl.rt.memcpy(host, 16, pinned, 16, acl.ACL_MEMCPY_DEFAULT), 100000,
             f"memcpy source: the host memory at {pinned:#x} (acl.rt.malloc_host) was already freed (acl.rt.free_host)")
    fail_msg(acl.rt.memcpy(pinned, 16, d, 16, acl.ACL_MEMCPY_DEVICE_TO_DEVICE), 100000,
             f"memcpy destination: {pinned:#x} is host memory, but ACL_MEMCPY_DEVICE_TO_DEVICE takes device")


def test_memset_misuse(dev):
    """memset sets value's low byte (C's memset) on device or host memory; out of bounds, freed
    memory, count > maxCount, a value outside int32, junk types -> 100000, nothing written."""
    d = dev.upload(np.arange(4, dtype=F32))
    assert acl.rt.memset(d + 4, 8, 0x1FF, 8) == 0  # bytes 4-11 become 0xFF
    expected = np.arange(4, dtype=F32)
    expected.view(np.uint8)[4:12] = 0xFF
    np.testing.assert_array_equal(dev.read(d, (16,), np.uint8), expected.view(np.uint8))
    host, _ = acl.rt.malloc_host(8)
    assert acl.rt.memset(host, 8, -2, 8) == 0 and acl.util.ptr_to_bytes(host, 8) == b"\xfe" * 8
    assert acl.rt.free_host(host) == 0
    freed, _ = acl.rt.malloc(64, 0)
    acl.rt.free(freed)
    for args in [(d, 32, 0, 32), (d + 8, 16, 0, 16), (freed, 16, 0, 16), (d, 8, 0, 16), (d, 16, 2**31, 16),
                 (d, 16, -2**31 - 1, 16), (d, 16, 1.0, 16), (d, 16, None, 16), (d, -1, 0, -1), (d, 16, 0, 16.0),
                 ("abc", 16, 0, 16), (12345, 0, 0, 0), (d, 2**64, 0, 8)]:
        assert "internal error" not in fail_msg(acl.rt.memset(*args), 100000, "memset")
    # a freed device address is told as one (a breaker: "not host memory opsnn knows")
    fail_msg(acl.rt.memset(freed, 16, 0, 16), 100000, "not inside a live device allocation")
    np.testing.assert_array_equal(dev.read(d, (16,), np.uint8), expected.view(np.uint8))


def test_memset_async(dev):
    """memset_async checks its arguments at the call as memset does (100000, nothing queued;
    200005 for a dead stream) and sets the bytes when the stream runs, in order with the copies
    queued around it; memory freed before then fails the task at synchronize (500003)."""
    stream = dev.stream
    d = dev.upload(np.arange(4, dtype=F32))
    host = np.zeros(16, np.uint8)
    assert acl.rt.memcpy_async(host, 16, d, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0  # before: old bytes
    assert acl.rt.memset_async(d + 4, 8, 0x1AB, 8, stream) == 0
    after = np.zeros(16, np.uint8)
    assert acl.rt.memcpy_async(after, 16, d, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    original = np.arange(4, dtype=F32).view(np.uint8)
    np.testing.assert_array_equal(dev.read(d, (16,), np.uint8), original)  # queued, not run
    assert acl.rt.synchronize_stream(stream) == 0
    expected = original.copy()
    expected[4:12] = 0xAB
    np.testing.assert_array_equal(host, original)
    np.testing.assert_array_equal(after, expected)
    np.testing.assert_array_equal(dev.read(d, (16,), np.uint8), expected)
    pinned, _ = acl.rt.malloc_host(8)  # host memory, on the default stream
    assert acl.rt.memset_async(pinned, 8, -1, 8, None) == 0 and acl.rt.synchronize_stream(None) == 0
    assert acl.util.ptr_to_bytes(pinned, 8) == b"\xff" * 8
    # misuse at the call: memset's refusals, named memset_async; nothing queued
    freed, _ = acl.rt.malloc(64, 0)
    acl.rt.free(freed)
    for args in [(d, 32, 0, 32), (d + 8, 16, 0, 16), (freed, 16, 0, 16), (d, 8, 0, 16), (d, 16, 2**31, 16),
                 (d, 16, 1.0, 16), (d, 16, None, 16), (d, -1, 0, -1), ("abc", 16, 0, 16), (d, 2**64, 0, 8)]:
        assert "internal error" not in fail_msg(acl.rt.memset_async(*args, stream), 100000, "memset_async")
    fail_msg(acl.rt.memset_async(d, 16, 0, 8, 0x7777), 200005, "memset_async", "not a live stream")
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(dev.read(d, (16,), np.uint8), expected)
    # memory freed after the memset was queued: the task fails, the later ones are dropped
    scratch, _ = acl.rt.malloc(16, 0)
    assert acl.rt.memset_async(scratch, 16, 0, 16, stream) == 0
    assert acl.rt.memset_async(d, 16, 0, 16, stream) == 0
    assert acl.rt.free(scratch) == 0 and acl.rt.free_host(pinned) == 0
    fail_msg(acl.rt.synchronize_stream(stream), 500003,
             f"stream task memset_async failed: the device memory at {scratch:#x} was freed before the memset ran")
    np.testing.assert_array_equal(dev.read(d, (16,), np.uint8), expected)


def test_synchronize_with_timeout(dev):
    """synchronize_stream_with_timeout / synchronize_event_with_timeout: the emulated queue runs
    to the end, then 507046 / 507047 when work was waited for and took longer than the timeout
    (ms; -1 waits forever): 0 with work queued always exceeds it, the work done all the same;
    nothing to wait for is 0 whatever the timeout; a task failure is 500003; a timeout below -1
    is 107000 (before the handle is looked at), one not an int32 100000."""
    stream = dev.stream
    assert (acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, acl.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
            acl.ACL_ERROR_RT_PARAM_INVALID) == (507046, 507047, 107000)
    for timeout in (0, -1, 1):  # nothing queued
        assert acl.rt.synchronize_stream_with_timeout(stream, timeout) == 0
    for timeout, expected in ((-1, 0), (60_000, 0), (2**31 - 1, 0)):
        ws, ex, oa = planned(dev)
        assert aclnn.aclnnLeakyReluBackward(None, ws, ex, stream) == 0
        assert acl.rt.synchronize_stream_with_timeout(stream, timeout) == expected
        np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    ws, ex, oa = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, None) == 0  # the default stream too
    fail_msg(acl.rt.synchronize_stream_with_timeout(0, 0), 507046, "synchronize_stream_with_timeout",
             "longer than the timeout of 0 ms", "has run all the same")
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)  # the work ran
    assert acl.rt.synchronize_stream_with_timeout(None, 0) == 0  # and the stream is idle
    ws, ex, oa = planned(dev)  # a failing task: its failure, not the budget
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, stream) == 0
    _free(dev, oa)
    fail_msg(acl.rt.synchronize_stream_with_timeout(stream, 0), 500003, "stream task")
    # a run another thread has begun is waited for, and its budget checked (a reviewer: the
    # queue, already taken by that thread, read as empty, and 0 came back whatever the wait)
    started, release = threading.Event(), threading.Event()
    rt.STATE.streams.get(stream).enqueue("held", lambda: (started.set(), release.wait(10)))
    runner = threading.Thread(target=acl.rt.synchronize_stream, args=(stream,))
    runner.start()
    assert started.wait(10)
    threading.Timer(0.2, release.set).start()
    fail_msg(acl.rt.synchronize_stream_with_timeout(stream, 50), 507046, "longer than the timeout of 50 ms")
    runner.join(10)
    # events: the wait for a record that had not run
    event, _ = acl.rt.create_event()
    assert acl.rt.synchronize_event_with_timeout(event, 0) == 0  # never recorded
    ws, ex, oa = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, stream) == 0
    assert acl.rt.record_event(event, stream) == 0
    fail_msg(acl.rt.synchronize_event_with_timeout(event, 0), 507047, "synchronize_event_with_timeout",
             f"waiting for event {event:#x}", "longer than the timeout of 0 ms")
    assert acl.rt.query_event_status(event) == (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    assert acl.rt.synchronize_event_with_timeout(event, 0) == 0  # complete: nothing to wait for
    assert acl.rt.record_event(event, stream) == 0
    assert acl.rt.synchronize_event_with_timeout(event, -1) == 0
    assert acl.rt.record_event(event, stream) == 0
    assert acl.rt.synchronize_event_with_timeout(event, 60_000) == 0
    ws, ex, oa = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, stream) == 0
    assert acl.rt.record_event(event, stream) == 0
    _free(dev, oa)
    fail_msg(acl.rt.synchronize_event_with_timeout(event, 0), 500003, "synchronize_event_with_timeout",
             "stream task")
    # misuse
    for timeout in (-2, -2**31):
        fail_msg(acl.rt.synchronize_stream_with_timeout(stream, timeout), 107000, f"timeout {timeout} ms",
                 "[-1, 2147483647]")
        fail_msg(acl.rt.synchronize_stream_with_timeout(0x7777, timeout), 107000, "timeout")
        fail_msg(acl.rt.synchronize_event_with_timeout(None, timeout), 107000, "timeout")
    for timeout in (2**31, -2**31 - 1, 1.5, "1", None, True):
        fail_msg(acl.rt.synchronize_stream_with_timeout(stream, timeout), 100000, "timeout must be an int32")
        fail_msg(acl.rt.synchronize_event_with_timeout(event, timeout), 100000, "timeout must be an int32")
    fail_msg(acl.rt.synchronize_stream_with_timeout(0x7777, -1), 200005, "not a live stream")
    fail_msg(acl.rt.synchronize_event_with_timeout(None, -1), 100000, "event is NULL")
    fail_msg(acl.rt.synchronize_event_with_timeout(event + 7, -1), 200005, "not a live event")
    assert acl.rt.destroy_event(event) == 0


def test_create_event_with_flag(dev):
    """create_event_with_flag: ACL_EVENT_SYNC / _CAPTURE_STREAM_PROGRESS / _TIME_LINE or an OR of
    them make an event that records, synchronizes and times as create_event's; a stream waits
    only for one with ACL_EVENT_SYNC: stream_wait_event on another is 207000
    (ACL_ERROR_RT_FEATURE_NOT_SUPPORT), nothing queued, as CANN's runtime answers an event with
    no sync bit (its synchronize is taken). 0 or any other bit (ACL_EVENT_DEVICE_USE_ONLY 0x10,
    ACL_EVENT_EXTERNAL 0x20, unknown ones) is 107000, as CANN's runtime answers; a flag that is
    not a uint32 is 100000."""
    assert (acl.ACL_EVENT_SYNC, acl.ACL_EVENT_CAPTURE_STREAM_PROGRESS, acl.ACL_EVENT_TIME_LINE) == (1, 2, 8)
    assert acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT == 207000
    stream, other = dev.stream, acl.rt.create_stream()[0]
    for flag in (acl.ACL_EVENT_SYNC, acl.ACL_EVENT_TIME_LINE, acl.ACL_EVENT_CAPTURE_STREAM_PROGRESS,
                 acl.ACL_EVENT_TIME_LINE | acl.ACL_EVENT_SYNC, 0xB, np.uint32(8), np.uint32(9)):
        start, ret = acl.rt.create_event_with_flag(flag)
        end, ret2 = acl.rt.create_event_with_flag(flag)
        assert ret == ret2 == 0 and isinstance(start, int) and start != end
        ws, ex, oa = planned(dev)
        assert acl.rt.record_event(start, stream) == 0
        assert aclnn.aclnnLeakyReluBackward(None, ws, ex, stream) == 0
        assert acl.rt.record_event(end, stream) == 0
        if flag & acl.ACL_EVENT_SYNC:
            assert acl.rt.stream_wait_event(other, end) == 0
            assert acl.rt.synchronize_stream(other) == 0  # the wait ran the recorded stream first
        else:
            fail_msg(acl.rt.stream_wait_event(other, end), 207000, f"stream_wait_event: event {end:#x} was made "
                     "without ACL_EVENT_SYNC", "synchronize_event")
            assert acl.rt.synchronize_stream(other) == 0  # nothing was queued on other: the launch waits
            assert acl.rt.query_event_status(end) == (acl.ACL_EVENT_RECORDED_STATUS_NOT_READY, 0)
            assert acl.rt.synchronize_event(end) == 0  # a synchronize takes any event
        assert acl.rt.query_event_status(end) == (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)
        ms, ret = acl.rt.event_elapsed_time(start, end)
        assert ret == 0 and 0 <= ms < 60_000
        np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
        assert acl.rt.destroy_event(start) == 0 and acl.rt.destroy_event(end) == 0
    for flag in (0, 0x4, 0x10, 0x20, 0x40, 0x9 | 0x100, 2**32 - 1):
        assert acl.rt.create_event_with_flag(flag)[0] == 0
        fail_msg(acl.rt.create_event_with_flag(flag)[1], 107000, "create_event_with_flag", f"flag {flag:#x}")
    for flag in (-1, 2**32, 1.5, "1", None, True, [1]):
        fail_msg(acl.rt.create_event_with_flag(flag)[1], 100000, "flag must be a uint32")
    assert acl.rt.destroy_stream(other) == 0


def test_ctrl_c_inside_a_stream_task_is_reported_not_lost(dev):
    """A KeyboardInterrupt (Ctrl-C) inside a queued task goes on to the caller of synchronize /
    destroy_stream, and the task comes back to the head of the queue as one that fails: the next
    synchronize returns 500003 naming it and drops what was queued after it, as after any
    failure (it had returned 0 over a launch that never wrote its output; an interrupted destroy
    had dropped the rest for good, the stream already gone: a breaker)."""
    from opsnn.acl import rt

    stream, ret = acl.rt.create_stream()
    assert ret == 0
    queue, ran = rt.STATE.streams.get(stream), []

    def ctrl_c():
        raise KeyboardInterrupt

    for label, task in (("first", lambda: ran.append(1)), ("hit", ctrl_c), ("after", lambda: ran.append(3))):
        queue.enqueue(label, task)
    with pytest.raises(KeyboardInterrupt):
        acl.rt.synchronize_stream(stream)
    assert ran == [1] and queue.pending == 2
    fail_msg(acl.rt.synchronize_stream(stream), 500003, "hit", "interrupted (KeyboardInterrupt) as it ran")
    assert ran == [1] and acl.rt.synchronize_stream(stream) == 0
    queue.enqueue("hit", ctrl_c)
    queue.enqueue("after", lambda: ran.append(4))
    with pytest.raises(KeyboardInterrupt):
        acl.rt.destroy_stream(stream)
    assert rt.STATE.streams.get(stream) is queue and queue.closed  # still there, taking no new work
    fail_msg(acl.rt.destroy_stream(stream), 500003, "hit", "interrupted")
    assert ran == [1]
    fail_msg(acl.rt.synchronize_stream(stream), 200005, "not a live stream")  # destroyed now


def test_get_mem_info(dev, monkeypatch):
    """get_mem_info(attr) -> (free, total, ret), bytes: total is the emulated device's capacity
    (64 GiB) for every aclrtMemAttr; free is what malloc may still take (each live allocation
    counted with aclrtMalloc's padding, so a malloc beyond free is refused 200000), at most the
    host's RAM less the live device and pinned host allocations (it backs both); an attr that
    is no aclrtMemAttr is 107016, a non-integer 100000."""
    assert memory.host_total() > 0  # Linux's MemTotal here (or a cgroup's limit)
    # The limits read: each group of the process's own, then its parents (v2; v1's memory line)
    assert memory.cgroup_limit_files("0::/user.slice/job-7\n") == [
        "/sys/fs/cgroup/user.slice/job-7/memory.max", "/sys/fs/cgroup/user.slice/memory.max",
        "/sys/fs/cgroup/memory.max"]
    assert memory.cgroup_limit_files("9:cpu:/a\n4:memory:/docker/c1\n0::/\n") == [
        "/sys/fs/cgroup/memory/docker/c1/memory.limit_in_bytes",
        "/sys/fs/cgroup/memory/docker/memory.limit_in_bytes",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory.max"]
    assert memory.cgroup_limit_files("") == memory.cgroup_limit_files("junk") == [
        "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
    monkeypatch.setattr(memory, "host_total", lambda: None)  # (the spaces' own figures first)
    in_use = sum(space.capacity - space.free_bytes for space in (memory.DEVICE, memory.HOST))  # live, padded
    monkeypatch.setattr(memory, "host_total", lambda: in_use + (8 << 20))  # an 8 MiB host beside them
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM) == (8 << 20, 64 << 30, 0)  # the host caps it
    c = dev.malloc(1 << 20)  # each allocation counts against the host: 1 MiB + 32 B
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM) == ((7 << 20) - 32, 64 << 30, 0)
    pinned, ret = acl.rt.malloc_host(1 << 20)  # pinned host memory is the host's RAM too
    assert ret == 0 and acl.rt.get_mem_info(acl.ACL_HBM_MEM) == ((6 << 20) - 64, 64 << 30, 0)
    assert acl.rt.free_host(pinned) == 0
    fail_msg(acl.rt.malloc((7 << 20) - 64 + 1, 0)[1], 200000, "host's", "RAM")  # malloc agrees
    last = dev.malloc((7 << 20) - 64)  # padded to exactly what is free
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM) == (0, 64 << 30, 0)
    for addr in (c, last):
        dev.addrs.remove(addr)
        assert acl.rt.free(addr) == 0
    monkeypatch.setattr(memory, "host_total", lambda: None)  # where it cannot be read: no cap
    assert (acl.ACL_DDR_MEM, acl.ACL_HBM_MEM, acl.ACL_HBM_MEM_P2P_NORMAL, acl.ACL_MEM_P2P_HUGE1G) == (0, 1, 9, 17)
    free, total, ret = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
    assert ret == 0 and total == memory.DEVICE_CAPACITY == 64 << 30 and 0 < free <= total
    for attr in range(18):
        assert acl.rt.get_mem_info(attr) == (free, total, 0)
    a = dev.malloc(100)  # 100 B: 128 rounded up to 32 B, + 32 B
    assert acl.rt.get_mem_info(acl.ACL_DDR_MEM) == (free - 160, total, 0)
    b = dev.malloc(1)
    assert acl.rt.get_mem_info(np.int64(acl.ACL_MEM_NORMAL)) == (free - 160 - 64, total, 0)
    fail_msg(acl.rt.malloc(free - 160 - 64 + 1, 0)[1], 200000, "are free")
    for addr in (a, b):
        dev.addrs.remove(addr)
        assert acl.rt.free(addr) == 0
    assert acl.rt.get_mem_info(acl.ACL_HBM_MEM_HUGE) == (free, total, 0)
    for attr in (18, -1, 2**40):
        fail_msg(acl.rt.get_mem_info(attr)[2], 107016, "get_mem_info", f"attr {attr} is not an aclrtMemAttr")
        assert acl.rt.get_mem_info(attr)[:2] == (0, 0)
    for attr in (1.0, "0", None, True):
        fail_msg(acl.rt.get_mem_info(attr)[2], 100000, "attr must be an aclrtMemAttr")


def test_warnings_raised_as_errors_are_refusals(dev, monkeypatch):
    """Under ``warnings.simplefilter("error")`` (pytest's ``-W error``) a call that would warn
    refuses instead: the runtime returns 0 / 100000, the Pythonic layer raises AclnnError 161002
    naming the warning (not 561000, an opsnn bug); out and the inputs are untouched."""
    strided = np.arange(8, dtype=F32)[::2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert acl.util.numpy_to_ptr(strided) == 0
        assert "RuntimeWarning raised as an error by the warnings filter" in check_null(None)

        def warns(*args, **kwargs):
            warnings.warn("a warning on the way", UserWarning)

        monkeypatch.setattr(opsnn.functional._fastpath, "hit", warns)
        opsnn.functional._fastpath.clear()  # a call cached by an earlier test would not reach it
        out = np.full(4, 7.0, F32)
        py_fail(161002, opsnn.leaky_relu_backward, G, X, out=out, untouched=[G, X, out],
                words=["UserWarning raised as an error by the warnings filter: a warning on the way"])


def test_host_pointer_misuse(dev):
    """acl.util: a negative size, an unknown or dead pointer, a bad npy_type or shape, an object
    array -> None / 0 with a message; pointers to arrays, bytes, bytearrays or lists that died
    are forgotten (no leak); a non-contiguous array's pointer is to a copy, with a
    RuntimeWarning."""
    keep = np.arange(4, dtype=F32)
    ptr = acl.util.numpy_to_ptr(keep)
    assert acl.util.ptr_to_bytes(ptr, 16) == keep.tobytes()
    for size in (-1, 1.5, None, 17):
        check_null(acl.util.ptr_to_bytes(ptr, size))
    for shape, code in (([4], 99), ([4], "11"), ([-1, -4], 11), ([2**32, 2**32], 11), (np.array(4), 11),
                        ([5], 11), (None, 11)):
        check_null(acl.util.ptr_to_numpy(ptr, shape, code))
    np.testing.assert_array_equal(acl.util.ptr_to_numpy(ptr, [2, 2], 11), keep.reshape(2, 2))
    for shape in ([0, 2**63], [1] * 65):  # no bytes to read, but no NumPy array either (was 561000)
        assert "NumPy cannot make an array of shape" in check_null(acl.util.ptr_to_numpy(ptr, shape, 11))
    assert acl.util.bytes_to_ptr(5) == 0 and "expected bytes, a bytearray or a NumPy array, got int" in check_null(None)
    # (said "an object array" of None / an object; a str or bytes was taken as a text array and its
    # UTF-32 or ASCII bytes handed out, where pyACL takes arrays only and bytes_to_ptr takes bytes)
    for junk, name in ((None, "NoneType"), (object(), "object"), ("abc", "str"), (b"abc", "bytes"),
                       (["1", "2"], "list")):
        assert acl.util.numpy_to_ptr(junk) == 0 and f"expected a NumPy array (or a list of numbers), got {name}" \
            in check_null(None)
    check_null(acl.util.ptr_to_bytes(0x1234, 4))
    assert acl.util.numpy_to_ptr(np.array([object()])) == 0 and check_null(None)
    assert acl.util.bytes_to_ptr(memoryview(keep)[::2]) == 0 and "C-contiguous" in check_null(None)
    assert acl.util.numpy_to_ptr(Exploding()) == 0 and check_null(None)
    strided = np.arange(8, dtype=F32)[::2]  # pyACL warns: the pointer is to a private copy
    with pytest.warns(RuntimeWarning, match="not C-contiguous, so the pointer is to a private copy"):
        sptr = acl.util.numpy_to_ptr(strided)
    np.testing.assert_array_equal(acl.util.ptr_to_numpy(sptr, [4], 11), strided)
    # a pointer is valid while its array lives; after that it is unknown (not a dangling read)
    temp = np.ones(1024, F32)
    tptr = acl.util.numpy_to_ptr(temp)
    del temp
    gc.collect()
    check_null(acl.util.ptr_to_bytes(tptr, 16))
    from opsnn.acl import _host
    n = len(_host._registered)
    for _ in range(1000):
        acl.util.numpy_to_ptr(np.ones(16, F32))
    gc.collect()
    assert len(_host._registered) <= n + 1, "numpy_to_ptr keeps dead arrays registered (a leak)"
    # bytes, bytearrays, lists and non-contiguous arrays too (pyACL: keep the bytes object alive):
    # a pointer works while its object lives, is unknown once it is gone, and a loop of them
    # (the documented bytes_to_ptr(arr.tobytes()) pattern) holds neither memory nor slows lookups
    raw, buf, values = keep.tobytes(), bytearray(keep.tobytes()), [1.0, 2.0]
    with pytest.warns(RuntimeWarning):
        noncontig = np.arange(8, dtype=F32)[::2]
        nptr = acl.util.numpy_to_ptr(noncontig)
    ptrs = [acl.util.bytes_to_ptr(raw), acl.util.bytes_to_ptr(buf), acl.util.numpy_to_ptr(values), nptr]
    for _ in range(1000):
        assert acl.util.bytes_to_ptr(np.ones(1 << 16, F32).tobytes()) != 0  # 256 KiB, dropped at once
    assert len(_host._registered) <= n + 40
    assert acl.util.ptr_to_bytes(ptrs[0], 16) == raw and acl.util.ptr_to_bytes(ptrs[1], 16) == raw
    assert acl.util.ptr_to_bytes(ptrs[2], 16) == np.array(values).tobytes()
    assert acl.util.ptr_to_bytes(ptrs[3], 16) == noncontig.tobytes()
    del raw, buf, values, noncontig
    gc.collect()
    for gone in ptrs:
        check_null(acl.util.ptr_to_bytes(gone, 16))
    dropped = acl.util.bytes_to_ptr(keep.tobytes())  # the bytes object dies as the call returns
    check_null(acl.util.ptr_to_bytes(dropped, 16))
    # a live object's pointer is never forgotten: not for a temporary registered at the same
    # address (a memoryview of it, a reshaped view), nor for a view's copy while the array it
    # views lives, nor while another thread holds and drops extra references to it
    ba, arr, m = bytearray(range(16)), np.arange(4, dtype=F32), np.arange(20, dtype=F32).reshape(4, 5)
    pba, parr = acl.util.bytes_to_ptr(ba), acl.util.numpy_to_ptr(arr)
    acl.util.bytes_to_ptr(memoryview(ba))
    acl.util.numpy_to_ptr(arr.reshape(2, 2))
    with pytest.warns(RuntimeWarning):
        pmt = acl.util.numpy_to_ptr(m.T)  # the copy lives as long as m
    stop = []

    def churn():
        holder = []
        while not stop:
            holder.append(ba)
            holder.clear()

    import threading
    worker = threading.Thread(target=churn)
    worker.start()
    try:
        for _ in range(500):
            assert acl.util.bytes_to_ptr(ba) == pba
            acl.util.bytes_to_ptr(bytes(8))
            assert acl.util.ptr_to_bytes(pba, 16) == bytes(ba)
    finally:
        stop.append(True)
        worker.join()
    gc.collect()
    assert acl.util.ptr_to_bytes(parr, 16) == arr.tobytes()
    assert acl.util.ptr_to_bytes(pmt, 80) == np.ascontiguousarray(m.T).tobytes()
    # the same list registered again and again: one entry, gone with the list
    values = list(range(1000))
    for _ in range(50):
        acl.util.numpy_to_ptr(values)
    n = len(_host._registered)
    del values
    acl.util.ptr_to_bytes(pba, 1)  # a lookup prunes
    assert len(_host._registered) <= n - 50


# ============================================================================================
# tensors and scalars
# ============================================================================================
GOOD_TENSOR_ARGS = ([4], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4])


@pytest.mark.parametrize("position, junk", [(i, j) for i in range(7) for j in (
    None, "4", 4.0, [4.0], [None], {}, Sentinel(), Exploding(), (x for x in [4]), np.array([[4]]), True)
    # a null stride is the view's row-major strides (test_create_tensor_null_dims); a null
    # tensorData a tensor with no memory yet (test_create_tensor_null_data)
    if (i, j) not in ((2, None), (6, None))])
def test_create_tensor_wrong_types(dev, position, junk):
    """Any parameter of create_tensor of a wrong Python type -> None (C NULL) + message (None,
    the null pointer, for viewDims [4] with stride [1], and for storageDims under a 4-element
    view)."""
    addr = dev.malloc(16)
    args = list(GOOD_TENSOR_ARGS) + [addr]
    args[position] = junk
    before = mem_state()
    check_null(acl.create_tensor(*args))
    assert mem_state() == before


@pytest.mark.parametrize("view, strides, offset, storage", [
    ([-1], [1], 0, [4]), ([4], [-1], 0, [4]), ([4], [1], -1, [4]), ([4], [1], 0, [-4]),
    ([4], [1, 1], 0, [4]), ([2, 2], [2], 0, [4]), ([4], [1], 1.0, [4]), ([4], [1], True, [4]),
    ([4.0], [1], 0, [4]), ([4], [1], 0, [4.5]), ([4], [1], np.float32(0), [4])])
def test_create_tensor_bad_geometry(dev, view, strides, offset, storage):
    """Negative or non-integer dims / strides / offset, rank mismatch -> None + message."""
    check_null(acl.create_tensor(view, acl.ACL_FLOAT, strides, offset, acl.ACL_FORMAT_ND, storage,
                                 dev.malloc(16)))


def test_create_tensor_outside_allocation(dev):
    """A view outside its storage, a storage outside its allocation, a freed, never-allocated or
    interior-overrunning address, ACL_DT_UNDEFINED / non-enum dtype or format -> None
    (ACL_FORMAT_UNDEFINED is an aclFormat: test_create_tensor_takes_an_undefined_format)."""
    addr = dev.malloc(16)
    freed, _ = acl.rt.malloc(16, 0)
    acl.rt.free(freed)
    F, ND = acl.ACL_FLOAT, acl.ACL_FORMAT_ND
    for args in (([4], F, [1], 1, ND, [4], addr),        # offset pushes the view past the storage
                 ([2, 2], F, [3, 1], 0, ND, [4], addr),  # strides reach element 4
                 ([5], F, [1], 0, ND, [5], addr),        # storage of 20 bytes in a 16-byte block
                 ([4], F, [1], 0, ND, [4], addr + 4),    # interior start runs 4 bytes past the end
                 ([4], F, [1], 0, ND, [4], freed), ([4], F, [1], 0, ND, [4], 0x3_0000_0000),
                 ([4], acl.ACL_DOUBLE, [1], 0, ND, [4], addr), ([4], -1, [1], 0, ND, [4], addr),
                 ([4], 999, [1], 0, ND, [4], addr), ([4], F, [1], 0, 12345, [4], addr)):
        check_null(acl.create_tensor(*args))
    t = acl.create_tensor([2], F, [1], 2, ND, [4], addr)  # inside: fine
    assert t is not None and acl.destroy_tensor(t) == 0
    # a storage past its allocation names the arguments and the arithmetic (a breaker: it said
    # only "32 bytes at 0x... reach 16 bytes past the end", naming neither storageDims nor the dtype)
    for args, need in (
            (([4], acl.ACL_DOUBLE, [1], 0, ND, [4], addr),
             f"storageDims [4] of ACL_DOUBLE (8 bytes each) need 32 bytes at tensorData {addr:#x}; they reach 16 bytes"),
            (([5], F, [1], 0, ND, [5], addr),
             f"storageDims [5] of ACL_FLOAT (4 bytes each) need 20 bytes at tensorData {addr:#x}; they reach 4 bytes"),
            (([1], F, [1], 1, ND, [2], addr + 12),  # the offset lies in the storage: it does not count
             (f"storageDims [2] of ACL_FLOAT (4 bytes each) need 8 bytes at tensorData {addr + 12:#x} (12 bytes "
              "into the allocation); they reach 4 bytes")),
            (([17], acl.ACL_INT8, [1], 0, ND, [17], addr),
             f"storageDims [17] of ACL_INT8 (1 byte each) need 17 bytes at tensorData {addr:#x}; they reach 1 byte"),
            (([34], acl.ACL_INT4, [1], 0, ND, [34], addr),
             f"storageDims [34] of ACL_INT4 (4 bits each) need 17 bytes at tensorData {addr:#x}; they reach 1 byte")):
        assert check_null(acl.create_tensor(*args)) == (
            f"create_tensor: {need} past the end of the 16-byte allocation at {addr:#x}")


def test_create_tensor_takes_an_undefined_format(dev):
    """ACL_FORMAT_UNDEFINED (-1) is an aclFormat value: opbase's aclCreateTensor checks no format
    (its aclTensor keeps the view format as given, the storage format as ToOpFormat maps -1,
    FORMAT_MAX) and aclGetFormat reads it back as ACL_FORMAT_UNDEFINED, so create_tensor takes it
    (it was None) and phase 1 carries it as any format (DECISION 13: never checked); a value no
    aclFormat has (12345) stays refused (DECISION 13)."""
    x = np.array([1.0, -2.0, 0.0, 4.0], F32)
    ta = dev.malloc(16)
    assert acl.rt.memcpy(ta, 16, x, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    t = acl.create_tensor([4], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_UNDEFINED, [4], ta)
    assert isinstance(t, acl.aclTensor), acl.get_recent_err_msg()
    dev.tensors.append(t)
    assert acl.get_format(t) == (acl.ACL_FORMAT_UNDEFINED, 0) == (-1, 0)
    out, oa = dev.tensor(np.zeros(4, F32)), dev.addrs[-1]
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(t, t, dev.scalar(0.5), False, out)
    assert ret == 0, acl.get_recent_err_msg()
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0 and acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, oa), np.array([1.0, -1.0, 0.0, 4.0], F32))
    assert check_null(acl.create_tensor([4], acl.ACL_FLOAT, [1], 0, 12345, [4], ta)).startswith(
        "create_tensor: format 12345 is not a Format value; it must be one of ACL_FORMAT_UNDEFINED -1, "
        "ACL_FORMAT_NCHW 0, ACL_FORMAT_NHWC 1, ACL_FORMAT_ND 2, ")


def test_create_tensor_null_data(dev):
    """tensorData None (the null pointer) is 0, and is taken for any storage, as opbase's
    aclCreateTensor stores the pointer as given: a view with no elements (C callers pass nullptr
    there), and a tensor with elements but no memory yet, which gets an address from
    aclSetInputTensorAddr / set_raw_tensor_addr before a launch (CANN's aclSetInputTensorAddr
    sample; create_tensor had refused it). Its launch before then is refused:
    test_two_phase::test_tensors_made_without_memory_get_it_from_set_tensor_addr."""
    empty = acl.create_tensor([0, 3], acl.ACL_FLOAT, [3, 1], 0, acl.ACL_FORMAT_ND, [0, 3], None)
    assert isinstance(empty, acl.aclTensor) and empty.shape == (0, 3) and not empty.unbacked
    assert acl.destroy_tensor(empty) == 0
    for null in (None, 0):
        t = acl.create_tensor(*GOOD_TENSOR_ARGS, null)
        assert isinstance(t, acl.aclTensor), acl.get_recent_err_msg()
        assert acl.get_raw_tensor_addr(t) == (0, 0) and t.unbacked
        assert acl.destroy_tensor(t) == 0
    # it must still fit the device, where an address will hold it: a storage no allocation can
    # hold was taken (phase 1 then asked for a workspace of 55340232221128654848 bytes, past
    # uint64_t, for a [3, 2**62] view and its transposed out)
    fits = acl.create_tensor([2**34], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [2**34], None)
    assert isinstance(fits, acl.aclTensor) and acl.destroy_tensor(fits) == 0
    assert check_null(acl.create_tensor([1], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [2**34 + 1], None)) == (
        "create_tensor: tensorData is a null pointer (a tensor with no memory yet), but its storage "
        "(storageDims [17179869185] of ACL_FLOAT) needs 68719476740 bytes, more than the 68719476736-byte "
        "emulated device memory: no address could hold it")


def test_create_tensor_null_dims(dev):
    """A null stride (None, or the int 0: pyACL passes pointers as ints) gives the view's
    row-major strides as opbase's ToContiguousStrides computes them (a 0 dim zeroes the strides
    outside it); a null viewDims / storageDims is a 0-d shape, as opbase reads (nullptr, 0): a
    0-d view over a 0-d storage is made, a view reaching past element 0 of a null storage is
    refused, naming the null as given."""
    addr = dev.malloc(96)
    F, ND = acl.ACL_FLOAT, acl.ACL_FORMAT_ND
    for view, strides in (([2, 3], [3, 1]), ([2, 3, 4], [12, 4, 1]), ([3, 0], [0, 1]), ([2, 0, 3], [0, 3, 1]),
                          ([5], [1]), ([], [])):
        for null in (None, 0, np.int64(0)):
            t = acl.create_tensor(view, F, null, 0, ND, [max(int(np.prod(view)), 1)], addr)
            assert t is not None, acl.get_recent_err_msg()
            dev.tensors.append(t)
            assert acl.get_view_strides(t) == (strides, 0)
    for null in (0, np.int64(0)):  # the int 0 as None, for each dims pointer
        zero_d = acl.create_tensor(null, F, null, 0, ND, null, addr)
        assert zero_d is not None and (zero_d.shape, zero_d.strides, zero_d.storage_shape) == ((), (), ())
        dev.tensors.append(zero_d)
        msg = check_null(acl.create_tensor([2], F, [1], 0, ND, null, addr))
        assert msg.endswith(f"outside storage [] of 1 elements (storageDims {null!r}, a null pointer, is a "
                            "0-d storage)"), msg
    check_null(acl.create_tensor(False, F, None, 0, ND, [1], addr))  # a bool is no pointer
    x = dev.tensor(np.arange(-3, 3, dtype=F32).reshape(2, 3))
    t = acl.create_tensor([2, 3], F, None, 0, ND, [2, 3], x.addr)
    dev.tensors.append(t)
    y = dev.tensor(np.zeros((2, 3), F32))
    assert launch(aclnn.aclnnLeakyReluGetWorkspaceSize, (t, dev.scalar(0.5), y), dev.stream, dev) == (0, 0, 0)
    np.testing.assert_array_equal(dev.read(y.addr, (2, 3), F32), [[-1.5, -1, -0.5], [0, 1, 2]])
    scalar = acl.create_tensor(None, F, None, 0, ND, None, addr)
    assert scalar is not None and (scalar.shape, scalar.strides, scalar.storage_shape) == ((), (), ())
    dev.tensors.append(scalar)
    msg = check_null(acl.create_tensor([2], F, [1], 0, ND, None, addr))
    assert "outside storage [] of 1 elements" in msg and "storageDims None" in msg, msg
    msg = check_null(acl.create_tensor(None, F, [1], 0, ND, [4], addr))
    assert "stride has 1 entries but viewDims has 0" in msg, msg


def test_tensor_queries(dev):
    """get_view_shape / get_storage_shape / get_view_strides / get_view_offset / get_format /
    get_data_type return what create_tensor was given (fresh lists: changing one changes no
    tensor); a null tensor (None, 0) -> (None, 161001), as opbase's aclGetViewShape ...; a
    destroyed tensor or another object -> (None, 161002)."""
    addr = dev.malloc(64)
    t = acl.create_tensor([2, 3], acl.ACL_FLOAT16, [1, 2], 1, acl.ACL_FORMAT_NCHW, [8], addr)
    dev.tensors.append(t)
    assert acl.get_view_shape(t) == ([2, 3], 0)
    assert acl.get_storage_shape(t) == ([8], 0)
    assert acl.get_view_strides(t) == ([1, 2], 0)
    assert acl.get_view_offset(t) == (1, 0)
    assert acl.get_format(t) == (acl.ACL_FORMAT_NCHW, 0) and acl.get_data_type(t) == (acl.ACL_FLOAT16, 0)
    assert type(acl.get_format(t)[0]) is int and type(acl.get_data_type(t)[0]) is int
    acl.get_view_shape(t)[0].append(7)
    assert acl.get_view_shape(t) == ([2, 3], 0) and t.shape == (2, 3)
    zero_d = acl.create_tensor([], acl.ACL_BF16, [], 0, acl.ACL_FORMAT_ND, [1], addr)
    assert acl.get_view_shape(zero_d) == ([], 0) and acl.get_view_strides(zero_d) == ([], 0)
    assert acl.destroy_tensor(zero_d) == 0
    queries = (acl.get_view_shape, acl.get_storage_shape, acl.get_view_strides, acl.get_view_offset,
               acl.get_format, acl.get_data_type)
    for query in queries:
        name = query.__name__
        for null in (None, 0, np.int64(0)):
            assert query(null)[0] is None
            fail_msg(query(null)[1], 161001, f"{name}: tensor must be an aclTensor, got a null pointer")
        fail_msg(query(dev.scalar(1.0))[1], 161002, f"{name}: tensor must be an aclTensor, got aclScalar")
        for junk in ("t", 1.5, Sentinel(), Exploding(), [2, 3], addr):
            assert query(junk)[0] is None
            fail_msg(query(junk)[1], 161002, "must be an aclTensor, got")
        fail_msg(query(zero_d)[1], 161002, f"{name}: tensor is an aclTensor that was already destroyed")
        fail_msg(query()[1], 161002, "missing 1 required positional argument")


@pytest.mark.parametrize("create, destroy, size, stored", [
    (acl.create_int_array, acl.destroy_int_array, acl.get_int_array_size, [1, -2, 3, 2**63 - 1, -2**63]),
    (acl.create_float_array, acl.destroy_float_array, acl.get_float_array_size,
     [1.0, np.float32(0.1), np.inf, -np.inf, 1.0]),
    (acl.create_bool_array, acl.destroy_bool_array, acl.get_bool_array_size, [True, False, True, True, True])])
def test_meta_arrays(acl_runtime, create, destroy, size, stored):
    """create_int_array / create_float_array / create_bool_array copy the values, each stored as
    create_scalar stores one of INT64 / FLOAT / BOOL (C conversion: 3.9 -> 3, 1e300 -> inf,
    2 -> True); None or 0 (a null pointer) gives an empty array, as opbase; an element that cannot
    be stored, or a value that is no sequence (5, False) -> None naming it; the size getters -> (size, 0),
    (None, 161001) for a null array, (None, 161002) for another kind or a destroyed one; destroy
    -> 0 (a null pointer too), 100000 for another kind or a second destroy."""
    source = {acl.create_int_array: [1, np.int64(-2), 3.9, 2**63 - 1, -2**63],
              acl.create_float_array: [1, 0.1, 1e300, -np.inf, True],
              acl.create_bool_array: [True, 0, 2, np.bool_(True), 0.5]}[create]
    array = create(source)
    assert array is not None, acl.get_recent_err_msg()
    source[0] = 99
    assert size(array) == (5, 0) and list(array.values) == stored
    assert [type(v) for v in array.values] == [{acl.create_int_array: np.int64, acl.create_float_array: np.float32,
                                                acl.create_bool_array: np.bool_}[create]] * 5
    assert create(np.array([1, 0, 1])).values == create([1, 0, 1]).values
    kind = {acl.create_int_array: "aclIntArray", acl.create_float_array: "aclFloatArray",
            acl.create_bool_array: "aclBoolArray"}[create]
    assert repr(array).startswith(f"<{kind} [") and "np." not in repr(array)  # (np.int64(1), ... had shown)
    empty = create(None)
    assert size(empty) == (0, 0) and create([]).values == ()
    name = create.__name__
    bad = {acl.create_int_array: (float("nan"), "has no ACL_INT64 representation"),
           acl.create_float_array: (10**400, "does not fit a C double"),
           acl.create_bool_array: ("1", "cannot be stored as ACL_BOOL")}[create]
    msg = check_null(create([1, bad[0]]))
    assert msg.startswith(f"{name}: value[1]: ") and bad[1] in msg, msg
    for null in (0, np.int64(0)):  # 0 is the null pointer in every opsnn.acl call
        assert size(create(null)) == (0, 0)
    for junk, words in (("12", "got str"), ({}, "got dict"), ((x for x in [1]), "got generator"), (5, "got int"),
                        (False, "got bool"), (np.zeros((2, 2)), "got a 2-D array"), ([None], "value[0]"),
                        ([Sentinel()], "value[0]")):
        msg = check_null(create(junk))
        assert msg.startswith(f"{name}: ") and words in msg, msg
    for null in (None, 0):
        assert size(null)[0] is None
        fail_msg(size(null)[1], 161001, "must be an acl", "got a null pointer")
    other = (acl.create_bool_array if create is not acl.create_bool_array else acl.create_int_array)([1])
    fail_msg(size(other)[1], 161002, f"got {type(other).__name__}")
    fail_msg(destroy(other), 100000, f"expected an {type(array).__name__}, got {type(other).__name__}")
    assert destroy(None) == 0 and destroy(0) == 0 and not array.destroyed
    assert destroy(array) == 0 and array.destroyed
    fail_msg(destroy(array), 100000, "already destroyed")
    fail_msg(size(array)[1], 161002, "already destroyed")


def test_meta_messages_shorten_huge_values(acl_runtime):
    """Found by a breaker: an int past Python's 4300-digit str limit given to create_int_array /
    create_float_array / create_scalar (or, by the Pythonic API, as a slope) gave 561000
    "internal error: ValueError: Exceeds the limit", the element's index lost, and a 1000-digit
    one a 1109-character message. Each -> None (161002 from the Pythonic API) naming value[i],
    the value shown shortened: its bit length past 4096 bits, else its ends and length."""
    big, long = 10**5000, 10**1000
    int64 = "ACL_INT64 [-9223372036854775808, 9223372036854775807]"
    expected = [(acl.create_int_array, big, f"value[1]: value <an int of 16610 bits> is out of range for {int64}"),
                (acl.create_int_array, long, "value[1]: value 100000000000...000000 (1001 characters) is out of "
                                             f"range for {int64}"),
                (acl.create_float_array, big, "value[1]: value <an int of 16610 bits> does not fit a C double"),
                (acl.create_int_array, [big], "value[1]: value <a list holding an int too long to print> cannot be "
                                              "stored as ACL_INT64: it takes a bool, int or float (Python's or "
                                              "NumPy's, ml_dtypes' bfloat16, or a 0-d NumPy array of one), got list")]
    for create, value, words in expected:
        assert check_null(create([1, value])) == f"{create.__name__}: {words}"
    assert check_null(acl.create_scalar(-big, acl.ACL_INT64)) == f"create_scalar: value <an int of 16610 bits> " \
                                                                 f"is out of range for {int64}"
    assert check_null(acl.create_scalar(long, acl.ACL_FLOAT)) == ("create_scalar: value 100000000000...000000 "
                                                                  "(1001 characters) does not fit a C double")
    assert check_null(acl.create_scalar(1.0, big)).startswith(
        "create_scalar: dataType <an int of 16610 bits> is not a DataType value; it must be one of ACL_FLOAT 0, "
        "ACL_FLOAT16 1, ACL_INT8 2,")
    py_fail(161002, opsnn.leaky_relu, X, big, words=["negativeSlope must be an int in [-2**63, 2**64)",
                                                     "got <an int of 16610 bits>"])


def test_create_scalar_unknown_data_type_lists_what_a_scalar_takes(acl_runtime):
    """create_scalar of a value that is no aclDataType lists the dataTypes an aclScalar can hold
    (it had listed all 27, ACL_STRING and the float8 / float4 ones too, each then refused with
    "cannot hold an aclScalar"); create_tensor's listing keeps every one (a tensor takes them)."""
    scalar_types = ("ACL_FLOAT 0, ACL_FLOAT16 1, ACL_INT8 2, ACL_INT32 3, ACL_UINT8 4, ACL_INT16 6, ACL_UINT16 7, "
                    "ACL_UINT32 8, ACL_INT64 9, ACL_UINT64 10, ACL_DOUBLE 11, ACL_BOOL 12, ACL_COMPLEX64 16, "
                    "ACL_COMPLEX128 17, ACL_BF16 27")
    assert check_null(acl.create_scalar(1.0, 999)) == (
        f"create_scalar: dataType 999 is not a DataType value; it must be one of {scalar_types}")
    for listed in scalar_types.split(", "):  # each listed value is taken
        scalar = acl.create_scalar(1, int(listed.split()[1]))
        assert scalar is not None, acl.get_recent_err_msg()
        assert acl.destroy_scalar(scalar) == 0
    addr, _ = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    try:
        msg = check_null(acl.create_tensor([4], 999, [1], 0, acl.ACL_FORMAT_ND, [4], addr))
    finally:
        acl.rt.free(addr)
    assert msg.startswith(f"create_tensor: dataType 999 is not a DataType value; it must be one of {scalar_types[:40]}")
    assert "ACL_STRING 13" in msg and msg.endswith("ACL_FLOAT4_E1M2 41, ACL_HIFLOAT4 42")


def test_meta_arrays_beyond_host_memory(acl_runtime, monkeypatch):
    """Found by a breaker: create_int_array(range(10**20)) never returned (its memory grew without
    bound) and one of a 10**12-element broadcast array gave 561000 "internal error:
    MemoryError". A copy whose count times its C element size (int64 8, float 4, bool 1, a
    handle 8, a create_tensor dim 8 bytes) exceeds the host's RAM is refused first, from the
    count alone (a range's computed past sys.maxsize): None naming the bytes, as opbase's
    constructor whose allocation fails returns nullptr."""
    monkeypatch.setattr(memory, "host_total", lambda: 1000)  # a 1000-byte host: the boundary
    for create, fits in ((acl.create_int_array, 125), (acl.create_float_array, 250), (acl.create_bool_array, 1000),
                         (acl.create_tensor_list, 125)):
        if create is not acl.create_tensor_list:
            assert create(range(fits)).size == fits
        msg = check_null(create(range(fits + 1) if create is not acl.create_tensor_list else [None] * (fits + 1)))
        itemsize = 1000 // fits
        assert msg == (f"{create.__name__}: value of {fits + 1} elements of {itemsize} bytes needs "
                       f"{(fits + 1) * itemsize} bytes, more than the 1000 bytes of the host's RAM"), msg
    assert acl.create_tensor_list([None] * 125).size == 125
    monkeypatch.undo()
    host = memory.host_total()
    for value, count in ((range(10**20), 10**20), (range(10**20, -10**20, -3), (2 * 10**20 + 2) // 3),
                         (np.broadcast_to(np.int64(1), (10**12,)), 10**12)):
        msg = check_null(acl.create_int_array(value))
        assert msg == (f"create_int_array: value of {count} elements of 8 bytes needs {count * 8} bytes, more "
                       f"than the {host} bytes of the host's RAM"), msg
    msg = check_null(acl.create_tensor(range(10**20), acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, [0], None))
    assert msg.startswith(f"create_tensor: viewDims of {10**20} elements of 8 bytes needs"), msg


def test_meta_lists(dev):
    """create_tensor_list / create_scalar_list copy the handles (None or 0 kept as a null
    element; None or 0 for the whole list: an empty one, as opbase; False refused) and the size getters count them;
    destroying the list destroys every element, as opbase's aclDestroyTensorList does (a later
    destroy_tensor is 100000, an operator refuses the tensor, 161002); a non-handle or destroyed
    element -> None; a list whose element was destroyed after it was made, or listed twice ->
    destroy 100000 with nothing destroyed."""
    a, b = dev.tensor(G), dev.tensor(X)
    handles = [a, None, b, 0]
    tensors = acl.create_tensor_list(handles)
    handles.clear()
    assert acl.get_tensor_list_size(tensors) == (4, 0) and tensors.values == (a, None, b, None)
    for null in (None, 0):  # a null pointer (0 as everywhere in opsnn.acl): an empty list
        assert acl.get_tensor_list_size(acl.create_tensor_list(null)) == (0, 0)
        assert acl.get_scalar_list_size(acl.create_scalar_list(null)) == (0, 0)
    check_null(acl.create_tensor_list(False))
    msg = check_null(acl.create_tensor_list([a, dev.scalar(1.0)]))
    assert msg == "create_tensor_list: value[1] must be an aclTensor or None, got aclScalar", msg
    fail_msg(acl.get_scalar_list_size(tensors)[1], 161002, "scalarList must be an aclScalarList, got aclTensorList")
    fail_msg(acl.destroy_scalar_list(tensors), 100000, "expected an aclScalarList")
    assert acl.destroy_tensor_list(tensors) == 0 and a.destroyed and b.destroyed
    fail_msg(acl.destroy_tensor(a), 100000, "already destroyed")
    fail_msg(aclnn.aclnnLeakyReluGetWorkspaceSize(b, dev.scalar(0.5), dev.tensor(G))[2], 161002, "destroyed")
    fail_msg(acl.destroy_tensor_list(tensors), 100000, "already destroyed")
    fail_msg(acl.get_tensor_list_size(tensors)[1], 161002, "tensorList is an aclTensorList that was already destroyed")
    msg = check_null(acl.create_tensor_list([dev.tensor(G), a]))
    assert msg == "create_tensor_list: value[1] is an aclTensor that was already destroyed", msg
    c, d = dev.tensor(G), dev.tensor(X)
    later = acl.create_tensor_list((c, d))
    assert acl.destroy_tensor(d) == 0
    fail_msg(acl.destroy_tensor_list(later), 100000, "value[1]", "destroyed after the list was made")
    assert not later.destroyed and not c.destroyed
    twice = acl.create_tensor_list([c, c])
    fail_msg(acl.destroy_tensor_list(twice), 100000, "value[1] is an aclTensor listed before")
    assert not twice.destroyed and not c.destroyed
    s1, s2 = dev.scalar(1.0), dev.scalar(2.0)
    scalars = acl.create_scalar_list([s1, s2, None])
    assert acl.get_scalar_list_size(scalars) == (3, 0)
    assert acl.destroy_scalar_list(scalars) == 0 and s1.destroyed and s2.destroyed
    fail_msg(acl.destroy_scalar(s2), 100000, "already destroyed")
    assert acl.destroy_tensor_list(None) == 0 and acl.destroy_scalar_list(0) == 0


def test_create_tensor_geometry_beyond_int64(dev):
    """Found by a breaker: view dims, strides, an offset or storage dims beyond int64 (which
    aclCreateTensor takes as int64_t) were taken (a 5000-digit dim then made phase 1 return
    561000 and the tensor's repr raise), and a null stride whose row-major products pass 2**63
    was stored as the exact product where opbase's would wrap. Each -> None, the message naming
    the entry, the int64 range and the value (a long one shortened); 2**63 - 1 is taken."""
    F, ND, big = acl.ACL_FLOAT, acl.ACL_FORMAT_ND, 10**5000
    cases = [(([0, big], [1, 1], 0, [0]), "viewDims[1]", "<an int of 16610 bits>"),
             (([0, 4], [2**80, 1], 0, [0]), "stride[0]", str(2**80)),
             (([0], [1], 2**63, [0]), "offset", str(2**63)),
             (([0], [1], 0, [0, 2**63]), "storageDims[1]", str(2**63)),
             (([0], [-big], 0, [0]), "stride[0]", "<an int of 16610 bits>")]
    for (view, stride, offset, storage), entry, shown in cases:
        msg = check_null(acl.create_tensor(view, F, stride, offset, ND, storage, None))
        assert msg.startswith(f"create_tensor: {entry} must be an integer in [0, 2**63 - 1]"), msg
        assert msg.endswith(f"got {shown}") and len(msg) < 200, msg
    msg = check_null(acl.create_tensor([0, 2**40, 2**40], F, None, 0, ND, [0], None))
    assert msg == ("create_tensor: stride None (a null pointer) gives the row-major strides, but stride[0], the "
                   f"product of viewDims[1:], is {2**80}, outside int64 [0, 2**63 - 1]; pass the strides"), msg
    check_null(acl.create_tensor([0, 2**31, 2**32], F, None, 0, ND, [0], None))  # 2**63: one past
    inside = acl.create_tensor([0, 2**31, 2**31], F, None, 0, ND, [0], None)
    edge = acl.create_tensor([0, 2**63 - 1], F, None, 2**63 - 1, ND, [2**63 - 1, 0], None)
    dev.tensors += [inside, edge]
    assert acl.get_view_strides(inside) == ([2**62, 2**31, 1], 0)
    assert acl.get_view_strides(edge) == ([2**63 - 1, 1], 0) and acl.get_view_offset(edge) == (2**63 - 1, 0)
    assert repr(edge).startswith("<aclTensor DT_FLOAT [0, 9223372036854775807] strides [9223372036854775807, 1]")
    other = acl.create_tensor([0, 3], F, None, 0, ND, [0], None)
    dev.tensors.append(other)
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(edge, other, dev.scalar(0.5), False, other)[2], 161002,
             "gradOutput [0, 9223372036854775807] and the shape of self [0, 3] cannot broadcast")


def test_huge_dims_refused_before_allocation(dev):
    """Huge dims never make opsnn allocate: a 2**62-element view is refused by the bounds check;
    dims whose NumPy int64 product wraps are not mistaken for small or empty; an op on a
    2**62-element broadcast view reports its workspace without allocating, and malloc of it
    -> 200000; the Pythonic API -> AclnnError 200000, nothing allocated."""
    addr = dev.malloc(16)
    before, rss = mem_state(), rss_bytes()
    check_null(acl.create_tensor([2**62], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [2**62], addr))
    check_null(acl.create_tensor([2**31, 2**31], acl.ACL_FLOAT, [2**31, 1], 0, acl.ACL_FORMAT_ND, [4], addr))
    wrap = np.array([2**32, 2**32], np.int64)
    assert int(np.prod(wrap)) == 0  # what a NumPy product would say
    t = acl.create_tensor(wrap, acl.ACL_FLOAT, np.array([0, 0]), 0, acl.ACL_FORMAT_ND, [1], addr)
    assert t is not None
    dev.tensors.append(t)
    huge = acl.create_tensor([2**62], acl.ACL_FLOAT16, [0], 0, acl.ACL_FORMAT_ND, [1], addr)
    dev.tensors.append(huge)
    s = dev.scalar(0.5)
    for x in (t, huge):  # out (x itself) has elements that alias each other
        fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(x, x, s, False, x)[2], 161002, "share memory")
    # 2**64 elements are not empty: the out shape check sees them (not a 0-element fast path)
    small_out = dev.tensor(np.zeros(4, F32))
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(t, t, s, False, small_out)[2], 161002, "out")
    assert mem_state()[1] == before[1] + 1
    dev_mem = mem_state()
    addr2, ret = acl.rt.malloc(2**62 * 4, 0)
    fail_msg(ret, 200000)
    assert mem_state() == dev_mem
    big = np.broadcast_to(np.float32(1.0), (2**30, 2**30))
    py_fail(200000, opsnn.leaky_relu_backward, big, np.float32(2.0), words=["bytes"])
    py_fail(200000, opsnn.hardtanh_backward, big, big, words=["bytes"])
    assert rss_bytes() - rss < 64 << 20, "a huge request touched memory"


def test_destroy_twice_or_wrong_type(dev):
    """destroy_tensor / destroy_scalar twice, or of the wrong kind of object -> 100000; of a null
    pointer (None, 0) -> 0 with nothing destroyed, as opbase's aclDestroyTensor / aclDestroyScalar
    answer nullptr."""
    t, s = dev.tensor(G), dev.scalar(1.0)
    fail_msg(acl.destroy_tensor(s), 100000, "aclTensor")
    fail_msg(acl.destroy_scalar(t), 100000, "aclScalar")
    for junk in (0.0, False, "t", Sentinel()):
        fail_msg(acl.destroy_tensor(junk), 100000)
        fail_msg(acl.destroy_scalar(junk), 100000)
    for null in (None, 0, np.int64(0)):
        assert acl.destroy_tensor(null) == 0 and acl.destroy_scalar(null) == 0
    assert not t.destroyed and not s.destroyed
    t2 = acl.create_tensor([4], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4], dev.addrs[0])
    assert acl.destroy_tensor(t2) == 0
    fail_msg(acl.destroy_tensor(t2), 100000, "already destroyed")
    s2 = acl.create_scalar(2.0, acl.ACL_FLOAT)
    assert acl.destroy_scalar(s2) == 0
    fail_msg(acl.destroy_scalar(s2), 100000, "already destroyed")


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("value, dtype, stored", [
    (NAN, acl.ACL_FLOAT, "nan"), (INF, acl.ACL_FLOAT16, "inf"), (1e300, acl.ACL_FLOAT, "inf"),
    (-1e300, acl.ACL_BF16, "-inf"), (10**400, acl.ACL_DOUBLE, None), (True, acl.ACL_FLOAT, 1.0),
    (NAN, acl.ACL_INT32, None), (INF, acl.ACL_INT64, None), (2**63, acl.ACL_INT64, None),
    (-129, acl.ACL_INT8, None), (3.9, acl.ACL_INT8, 3), (-3.9, acl.ACL_INT16, -3),
    (1 + 2j, acl.ACL_FLOAT, None), (1 + 2j, acl.ACL_COMPLEX64, 1 + 2j), (NAN, acl.ACL_COMPLEX128, "nan"),
    (True, acl.ACL_BOOL, True), (2.5, acl.ACL_BOOL, True), ("1.0", acl.ACL_FLOAT, None),
    (None, acl.ACL_FLOAT, None), ([1.0], acl.ACL_FLOAT, None), (1.0, acl.ACL_STRING, None),
    (1.0, -1, None), (1.0, 99, None), (1.0, "FLOAT", None), (np.float64(NAN), acl.ACL_FLOAT16, "nan"),
    pytest.param(10**400, acl.ACL_COMPLEX64, None, id="10**400-complex64"),
    pytest.param(np.timedelta64(1, "s"), acl.ACL_FLOAT, None, id="timedelta64"),
    # ml_dtypes' bfloat16 scalar (no np.floating) as NumPy's floats are taken (a breaker: refused)
    pytest.param(ml_dtypes.bfloat16(0.5), acl.ACL_BF16, 0.5, id="bf16-bf16"),
    pytest.param(ml_dtypes.bfloat16(-1.5), acl.ACL_FLOAT, -1.5, id="bf16-float"),
    pytest.param(ml_dtypes.bfloat16(-3.5), acl.ACL_INT8, -3, id="bf16-int8"),
    pytest.param(ml_dtypes.bfloat16(NAN), acl.ACL_INT8, None, id="bf16nan-int8"),
    pytest.param(ml_dtypes.bfloat16(2.5), acl.ACL_COMPLEX64, 2.5 + 0j, id="bf16-complex64")])
def test_scalar_extremes(value, dtype, stored):
    """create_scalar with NaN / inf / huge / complex / bool / junk: float dtypes keep NaN and
    overflow to +-inf (C conversion); integer dtypes refuse NaN, inf and out-of-range values and
    truncate fractions; complex into a real dtype, strings, None -> None (C NULL) + message."""
    s = acl.create_scalar(value, dtype)
    if stored is None:
        check_null(s)
        return
    try:
        if stored in ("nan", "inf", "-inf"):
            v = complex(s.value).real
            assert (np.isnan(v) if stored == "nan" else v == float(stored))
        else:
            assert s.value == stored
    finally:
        acl.destroy_scalar(s)


# ============================================================================================
# operators, phase 1
# ============================================================================================
def test_null_arguments(dev):
    """A None argument -> 161001, in CANN's order (DECISION 15)."""
    gt, xt, s, ot, _ = leaky(dev)
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(None, None, None, False, None)[2], 161001, "gradOutput")
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, None)[2], 161001, "out")
    fail_msg(aclnn.aclnnHardtanhBackwardGetWorkspaceSize(None, None, s, s, ot)[2], 161001, "self")
    fail_msg(aclnn.aclnnHardtanhBackwardGetWorkspaceSize(gt, xt, s, None, ot)[2], 161001, "max")
    py_fail(161001, opsnn.leaky_relu_backward, None, X, 0.5, words=["gradOutput"])
    py_fail(161001, opsnn.hardtanh_backward, G, X, None, 1.0, words=["min"])
    # beside an out or in-place self that cannot take the result, the None still comes first
    # (it was 161002 naming the out or self: a breaker); inputs untouched
    read_only = X.copy()
    read_only.flags.writeable = False
    py_fail(161001, opsnn.leaky_relu_backward, None, X, 0.5, out=read_only, words=["gradOutput"])
    py_fail(161001, opsnn.leaky_relu_backward, None, X, 0.5, out="junk", words=["gradOutput"])
    py_fail(161001, opsnn.leaky_relu_, read_only, None, words=["negativeSlope"], untouched=[read_only])
    py_fail(161001, opsnn.leaky_relu_, "junk", None, words=["negativeSlope"])
    py_fail(161001, opsnn.leaky_relu, "junk", None, words=["negativeSlope"])
    py_fail(161002, opsnn.leaky_relu_, read_only, 0.1, words=["read-only"], untouched=[read_only])
    assert acl.get_recent_err_msg() is not None  # (the in-place path leaves it too)


def test_wrong_argument_count(dev):
    """A call whose arguments do not bind to the function (C would not compile it) -> 161002 for
    an operator (both phases), 100000 for a runtime call; the message is Python's own."""
    gt, xt, s, ot, _ = leaky(dev)
    # (only too many positional arguments get the pyACL-form hint below: a regression breaker's)
    assert fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s)[2], 161002) == (
        "aclnnLeakyReluBackwardGetWorkspaceSize() missing 2 required positional arguments: 'self_is_result' and 'out'")
    fail_msg(aclnn.aclnnHardtanhBackwardGetWorkspaceSize(gt, xt, s, s, ot, ot)[2], 161002, "takes 5")
    fail_msg(aclnn.aclnnLeakyReluBackward(None, 0), 161002, "aclnnLeakyReluBackward()")
    # C's form, out-parameters passed: the message says what the pyACL form returns instead
    msg = fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot, [0], [None])[2], 161002)
    assert msg == ("aclnnLeakyReluBackwardGetWorkspaceSize() takes 5 positional arguments but 7 were given"
                   " (pyACL form: the call returns (workspace_size, executor, ret); C's workspaceSize and"
                   " executor out-parameters are not passed)")
    assert fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot, bogus=1)[2], 161002) == (
        "aclnnLeakyReluBackwardGetWorkspaceSize() got an unexpected keyword argument 'bogus'")
    fail_msg(acl.rt.malloc(16)[1], 100000, "malloc()")
    fail_msg(acl.rt.synchronize_stream(dev.stream, 1), 100000, "synchronize_stream()")


def test_unknown_soc_in_environment(dev, monkeypatch, capsys):
    """$OPSNN_SOC naming no emulated SoC: get_soc_name() -> None (NULL) + message; phase 1 ->
    361001 (the runtime cannot report its SoC) after the null checks (161001 first), the
    Pythonic API raises it; not 561000."""
    gt, xt, s, ot, _ = leaky(dev)
    monkeypatch.setenv("OPSNN_SOC", "Ascend999")
    assert acl.get_soc_name() is None
    assert acl.get_recent_err_msg() == ("aclrtGetSocName: $OPSNN_SOC: unknown SoC 'Ascend999'; known: "
                                        + ", ".join(platform.PROFILES))
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)[2], 361001,
             "LeakyReluBackward: $OPSNN_SOC: unknown SoC 'Ascend999'", "Ascend910B")
    py_fail(361001, opsnn.hardtanh_backward, G, X, words=["HardtanhBackward: $OPSNN_SOC: unknown SoC"],
            untouched=[G, X])
    # the SoC is read after the null checks, as ops-nn reads it inside its dtype checks (a
    # breaker: 361001 had hidden the null argument)
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(None, xt, s, False, ot)[2], 161001, "gradOutput")
    fail_msg(aclnn.aclnnHardtanhGetWorkspaceSize(xt, None, s, ot)[2], 161001, "clipValueMin")
    py_fail(161001, opsnn.leaky_relu_backward, G, None, words=["self"], untouched=[G])
    from opsnn import cli  # the CLI names the variable too: the user typed no SoC

    # (describe: list, compare and cache, which no SoC concerns, are not stopped by it: test_compare)
    assert cli.main(["describe", "leaky_relu_backward"]) == 2
    assert "opsnn describe: error: $OPSNN_SOC: unknown SoC 'Ascend999'" in capsys.readouterr().err
    monkeypatch.setenv("OPSNN_SOC", "ascend910")  # names are case-insensitive
    assert acl.get_soc_name() == "Ascend910"
    np.testing.assert_array_equal(opsnn.hardtanh_backward(G, X), HT_01)


@pytest.mark.parametrize("slot", range(5))
@pytest.mark.parametrize("junk", ["scalar_for_tensor", 0, 1.5, "t", np.zeros(4, F32), Sentinel(), Exploding()])
def test_wrong_handle_types(dev, slot, junk):
    """A wrong Python type in any argument of phase 1 (a scalar for a tensor, a tensor for a
    scalar, numbers, strings, arrays, objects) -> 161002, but the int 0, a null pointer as
    pyACL's int handles have it -> 161001; nothing is written."""
    gt, xt, s, ot, oa = leaky(dev)
    args = [gt, xt, s, s, ot]
    if isinstance(junk, str) and junk == "scalar_for_tensor":
        junk = s if slot in (0, 1, 4) else gt
    args[slot] = junk
    status = 161001 if type(junk) is int and junk == 0 else 161002
    ret = aclnn.aclnnHardtanhBackwardGetWorkspaceSize(*args)[2]
    fail_msg(ret, status)
    if slot != 3:
        largs = args[:3] + [False, args[4]]
        fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(*largs)[2], status)
    assert not read_out(dev, oa).any()


def test_create_scalar_takes_opbase_scalar_dtypes_only():
    """aclCreateScalar holds the dtypes of opbase's aclScalar(const void*, DataType) switch and
    returns NULL for the rest (a breaker: float8 / hifloat8 / complex32 scalars were made, and
    aclnnLeakyRelu ran with one as its slope). The Pythonic layer refuses such a NumPy scalar
    as its argument's 161002."""
    held = (acl.ACL_FLOAT, acl.ACL_FLOAT16, acl.ACL_BF16, acl.ACL_DOUBLE, acl.ACL_BOOL, acl.ACL_INT8,
            acl.ACL_INT16, acl.ACL_INT32, acl.ACL_INT64, acl.ACL_UINT8, acl.ACL_UINT16, acl.ACL_UINT32,
            acl.ACL_UINT64, acl.ACL_COMPLEX64, acl.ACL_COMPLEX128)
    for dtype in held:
        scalar = acl.create_scalar(1, dtype)
        assert scalar is not None and scalar.dtype == dtype and acl.destroy_scalar(scalar) == 0
    for name in ("FLOAT8_E5M2", "FLOAT8_E4M3FN", "FLOAT8_E8M0", "HIFLOAT8", "COMPLEX32", "STRING",
                 "FLOAT4_E2M1", "INT4", "HIFLOAT4", "DT_UNDEFINED"):
        assert acl.create_scalar(0.5, getattr(acl, f"ACL_{name}")) is None, name
        msg = acl.get_recent_err_msg()
        assert msg.startswith(f"create_scalar: dataType ACL_{name} cannot hold an aclScalar (aclCreateScalar "
                              "takes BF16, BOOL, COMPLEX128, COMPLEX64, DOUBLE, FLOAT, FLOAT16,"), msg
    x = np.array([-2.0, 3.0], F32)
    with pytest.raises(opsnn.AclnnError) as exc:
        opsnn.leaky_relu(x, ml_dtypes.float8_e4m3fn(0.5))
    assert exc.value.status == 161002 and "negativeSlope" in str(exc.value)
    assert "ACL_FLOAT8_E4M3FN cannot hold an aclScalar" in str(exc.value)


def test_destroyed_tensor_or_scalar_passed(dev):
    """A destroyed tensor or scalar passed to phase 1 -> 161002 'already destroyed'."""
    gt, xt, s, ot, _ = leaky(dev)
    dead_t = acl.create_tensor([4], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4], dev.addrs[0])
    dead_s = acl.create_scalar(0.5, acl.ACL_FLOAT)
    acl.destroy_tensor(dead_t), acl.destroy_scalar(dead_s)
    for args in ((dead_t, xt, s, False, ot), (gt, dead_t, s, False, ot), (gt, xt, dead_s, False, ot),
                 (gt, xt, s, False, dead_t)):
        fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(*args)[2], 161002, "destroyed")
    fail_msg(aclnn.aclnnHardtanhBackwardGetWorkspaceSize(gt, xt, s, dead_s, ot)[2], 161002, "destroyed")


def test_handle_metadata_is_fixed_once_created(dev):
    """A breaker's: a scalar's value (or a tensor's shape) reassigned between two calls with the
    same handles passed the checks with the new value while the kernel kept the old one (the
    same-handles memo). CANN's handles have no setters: the metadata cannot be reassigned, and
    the calls keep computing what the handles were created with."""
    gt, xt, s, ot, oa = leaky(dev, slope=0.5)
    for _ in range(2):
        ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
        assert ret == 0 and aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
        assert acl.rt.synchronize_stream(dev.stream) == 0
        np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    for handle, name, value in ((s, "value", np.float32(3.0)), (s, "dtype", acl.ACL_COMPLEX64),
                                (gt, "shape", (2,)), (gt, "strides", (1,)), (ot, "addr", dev.addrs[0]),
                                (xt, "offset", 1)):
        before = getattr(handle, name)
        with pytest.raises(AttributeError, match=f"{name} is fixed when the handle is created"):
            setattr(handle, name, value)
        with pytest.raises(AttributeError, match=f"{name} is fixed"):  # a third breaker: del, then set
            delattr(handle, name)
        assert getattr(handle, name) == before
    acl.destroy_scalar(s)
    assert s.destroyed  # what the runtime itself changes stays changeable


def test_extreme_scalars_in_ops(dev, caplog):
    """NaN / inf / huge / complex / bool scalars reach the ops as documented: the slope is
    float32(ToFloat) (NaN and +-inf included; NaN passes the selfIsResult check); a complex slope
    is not in LeakyReluBackward's list (161002); complex Hardtanh bounds convert to 0 with a
    warning (DECISION 9); a bool slope is 0 or 1."""
    cases_ = [(NAN, acl.ACL_DOUBLE, True), (1e300, acl.ACL_DOUBLE, False), (-INF, acl.ACL_FLOAT, False),
              (True, acl.ACL_BOOL, True), (2**62, acl.ACL_INT64, True)]
    for value, dtype, sir in cases_:
        gt, xt, s, ot, oa = leaky(dev, slope=0.5)
        s = dev.scalar(value, dtype)
        r = _launch_leaky(dev, gt, xt, s, sir, ot)
        assert r == (0, 0, 0), (value, r)
        with np.errstate(all="ignore"):
            s32 = np.float32(value) if not isinstance(value, bool) else np.float32(int(value))
            expected = np.where(X > 0, G, G * s32)
        np.testing.assert_array_equal(read_out(dev, oa), expected)
    gt, xt, _, ot, _ = leaky(dev)
    c = dev.scalar(1 + 1j, acl.ACL_COMPLEX128)
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, c, False, ot)[2], 161002, "negativeSlope")
    with caplog.at_level(logging.WARNING, logger="opsnn"):
        gt, xt, _, ot, oa = leaky(dev)
        assert _launch_ht(dev, gt, xt, c, dev.scalar(1.0), ot) == (0, 0, 0)
    np.testing.assert_array_equal(read_out(dev, oa), np.array([0, 0, 3, 0], F32))  # (0, 1) bounds
    assert "cannot be converted" in caplog.text
    py_fail(161002, opsnn.leaky_relu_backward, G, X, 1j, words=["negativeSlope"])
    py_fail(161002, opsnn.leaky_relu_backward, G, X, "0.5", words=["negativeSlope"])


def test_a_timedelta64_is_no_c_int(dev):
    """(A breaker) NumPy makes np.timedelta64 an np.integer: it was taken as a C int, so as
    selfIsResult (above), and as a runtime argument it failed inside with 561000. A duration is
    no integer argument: 100000 / 161002 naming it, as any other wrong type."""
    td = np.timedelta64
    fail_msg(acl.rt.set_device(td(0, "s")), 100000, "deviceId must be an integer >= 0, got np.timedelta64(0,'s')")
    fail_msg(acl.rt.malloc(td(64, "ms"), 0)[1], 100000, "size must be an integer >= 1")
    addr = dev.malloc(64)
    assert acl.create_tensor([td(2, "s")], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [2], addr) is None
    assert "viewDims[0] must be an integer" in acl.get_recent_err_msg()


def _stream_calls(dev, event: int, addr: int) -> dict:
    """Every call taking a stream handle, by name: handle -> (ret, whose refusal is 200005; the
    launch's 361001)."""
    ws, ex, _ = planned(dev)
    return {
        "synchronize_stream": acl.rt.synchronize_stream,
        "synchronize_stream_with_timeout": lambda s: acl.rt.synchronize_stream_with_timeout(s, -1),
        "destroy_stream": acl.rt.destroy_stream,
        "record_event": lambda s: acl.rt.record_event(event, s),
        "stream_wait_event": lambda s: acl.rt.stream_wait_event(s, event),
        "memcpy_async": lambda s: acl.rt.memcpy_async(addr, 8, addr + 8, 8, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, s),
        "memset_async": lambda s: acl.rt.memset_async(addr, 16, 1, 16, s),
        "aclnnLeakyReluBackward": lambda s: aclnn.aclnnLeakyReluBackward(None, ws, ex, s),
    }


def test_a_timedelta64_is_no_stream_handle(dev):
    """(A breaker) the stream table took any np.integer as a handle: a np.timedelta64 (one to
    NumPy) was 561000 "internal error: TypeError" in every call taking a stream, and a
    nanosecond duration equal to a live handle named that stream (destroy_stream destroyed
    it). It is refused as any junk handle is (is_c_int): 200005 naming it, 361001 from a launch."""
    event, _ = acl.rt.create_event()
    addr = dev.malloc(16)
    calls = _stream_calls(dev, event, addr)
    for junk in (np.timedelta64(0, "s"), np.timedelta64("NaT", "ns"), np.timedelta64(dev.stream, "ns")):
        said = f"stream {junk!r} is not a live stream (create it with acl.rt.create_stream)"
        for name, call in calls.items():
            if name.startswith("aclnn"):
                assert fail_msg(call(junk), 361001) == f"{name.removeprefix('aclnn')}: launch failed: {said}"
            else:
                assert fail_msg(call(junk), 200005) == f"{name}: {said}"
    assert rt.STATE.streams.get(dev.stream).pending == 0  # nothing queued anywhere
    assert acl.rt.synchronize_stream(dev.stream) == 0  # the live stream is still there
    assert acl.rt.destroy_event(event) == 0


def test_an_int_subclass_is_a_stream_handle(dev):
    """(A breaker) a stream handle given as an int subclass was 200005 "stream 0x... is not a
    live stream" of a live stream, where every other handle (events, contexts, addresses) takes
    what is_c_int takes. Every call taking a stream takes it now, and H(0) is the default stream."""
    class H(int):
        pass

    event, _ = acl.rt.create_event()
    addr = dev.malloc(16)
    calls = _stream_calls(dev, event, addr)
    destroy = calls.pop("destroy_stream")
    for name, call in calls.items():
        assert call(H(dev.stream)) == 0, (name, acl.get_recent_err_msg())
    assert acl.rt.synchronize_stream(H(dev.stream)) == 0 and acl.rt.synchronize_stream(H(0)) == 0
    assert acl.rt.query_event_status(event) == (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)
    stream, _ = acl.rt.create_stream()
    assert destroy(H(stream)) == 0
    assert fail_msg(acl.rt.synchronize_stream(stream), 200005) == (
        f"synchronize_stream: stream {stream:#x} is not a live stream (create it with acl.rt.create_stream)")
    assert acl.rt.destroy_event(event) == 0


def _launch_leaky(dev, *args):
    from hostile import launch
    return launch(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize, args, dev.stream, dev)


def _launch_ht(dev, *args):
    from hostile import launch
    return launch(aclnn.aclnnHardtanhBackwardGetWorkspaceSize, args, dev.stream, dev)


@pytest.mark.parametrize("flag", [None, 2, -1, np.int64(2), "True", 1.0, [True], np.array([True, False]),
                                  np.timedelta64(1, "D"), np.timedelta64(0, "ns")])
def test_self_is_result_not_bool(dev, flag):
    """selfIsResult that is no C bool (None, ints other than 0 / 1, strings, floats, arrays) ->
    161002 naming it and the value; a wrong type, so at the null checks' point, as a wrong handle
    type is (C has no such failure): before an int32 gradOutput's dtype refusal."""
    gt, xt, s, ot, _ = leaky(dev)
    said = "selfIsResult must be a bool (True or False; the int 0 or 1, as C converts them), got "
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, flag, ot)[2], 161002, said)
    py_fail(161002, opsnn.leaky_relu_backward, G, X, 0.5, flag, words=[said], untouched=[G, X])
    it = dev.tensor(G.astype(np.int32))
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(it, xt, s, flag, ot)[2], 161002, said)


@pytest.mark.parametrize("zero,one", [(0, 1), (np.int32(0), np.uint8(1))], ids=["int", "numpy"])
def test_self_is_result_takes_the_ints_c_converts(dev, zero, one):
    """selfIsResult given as the int 0 or 1 (C's bool parameter converts them, as ctypes' c_bool
    does) is false / true in both layers: 1 with a negative slope is the in-place refusal, 0 runs;
    with an int32 gradOutput the dtype refusal speaks (a breaker: "selfIsResult must be a bool"
    had come first)."""
    gt, xt, s, ot, oa = leaky(dev)
    neg = dev.scalar(-0.5)
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, neg, one, ot)[2], 161002,
             "selfIsResult is true with negativeSlope")
    assert _launch_leaky(dev, gt, xt, s, zero, ot) == (0, 0, 0), acl.get_recent_err_msg()
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    it = dev.tensor(G.astype(np.int32))
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(it, xt, s, one, ot)[2], 161002,
             "tensor gradOutput has dtype DT_INT32")
    py_fail(161002, opsnn.leaky_relu_backward, G, X, -0.5, one, words=["selfIsResult is true"], untouched=[G, X])
    np.testing.assert_array_equal(opsnn.leaky_relu_backward(G, X, 0.5, zero), LEAKY_05)
    np.testing.assert_array_equal(opsnn.leaky_relu_backward(G, X, -0.5, zero),
                                  opsnn.leaky_relu_backward(G, X, -0.5, False))
    py_fail(161002, opsnn.leaky_relu_backward, G.astype(np.int32), X, 0.5, one,
            words=["tensor gradOutput has dtype DT_INT32"])


# ============================================================================================
# aliasing (out vs inputs): the engine's check_out_overlap
# ============================================================================================
@pytest.mark.parametrize("which", ["grad", "self"])
def test_out_is_input_in_place(dev, which):
    """out identical to an input (same address, shape, strides, dtype) computes in place, for
    both ops and both layers, also through a strided view."""
    # aclnn: the same aclTensor, and a second aclTensor describing the same view
    for op in ("leaky", "hardtanh"):
        g_addr, x_addr = dev.upload(G), dev.upload(X)
        gt, xt = dev.tensor(G, g_addr), dev.tensor(X, x_addr)
        same = dev.tensor(G if which == "grad" else X, g_addr if which == "grad" else x_addr)
        for out in ((gt if which == "grad" else xt), same):
            dev.read(g_addr, (4,), F32)
            acl.rt.memcpy(g_addr, 16, G, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
            acl.rt.memcpy(x_addr, 16, X, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE)
            if op == "leaky":
                r, expected = _launch_leaky(dev, gt, xt, dev.scalar(0.5), False, out), LEAKY_05
            else:
                r, expected = _launch_ht(dev, gt, xt, dev.scalar(-1.0), dev.scalar(1.0), out), HT_01
            assert r == (0, 0, 0), acl.get_recent_err_msg()
            np.testing.assert_array_equal(dev.read(g_addr if which == "grad" else x_addr, (4,), F32), expected)
    # Pythonic: out is the input array itself, or a strided view identical to it
    for op, expected in (("leaky", LEAKY_05), ("hardtanh", HT_01)):
        base = np.zeros((4, 2), F32)
        g, x = base[:, 0], np.array(X)
        g[:] = G
        if which == "self":
            g, x = np.array(G), base[:, 0]
            x[:] = X
        target = g if which == "grad" else x
        fn = opsnn.leaky_relu_backward if op == "leaky" else opsnn.hardtanh_backward
        res = fn(g, x, 0.5, out=base[:, 0]) if op == "leaky" else fn(g, x, -1.0, 1.0, out=base[:, 0])
        assert res is not None
        np.testing.assert_array_equal(target, expected)
        assert not base[:, 1].any()


def test_out_partially_overlaps_input(dev):
    """out sharing some (not all) memory with an input -> 161002 naming both; nothing written.
    Device tensors compare address ranges, NumPy arrays their memory."""
    storage = np.arange(8, dtype=F32)
    addr = dev.upload(storage)
    gt = dev.tensor(storage, addr, shape=[4], strides=[1], storage=[8])                  # elements 0-3
    shifted = dev.tensor(storage, addr, shape=[4], strides=[1], offset=2, storage=[8])   # elements 2-5
    every_other = dev.tensor(storage, addr, shape=[4], strides=[2], storage=[8])         # 0, 2, 4, 6
    xt = dev.tensor(X)
    s = dev.scalar(0.5)
    # prime the plan cache with the same metadata and a disjoint out: a cache hit checks again
    assert _launch_leaky(dev, gt, xt, s, False, dev.tensor(np.zeros(4, F32))) == (0, 0, 0)
    assert _launch_ht(dev, gt, xt, s, s, dev.tensor(np.zeros(4, F32))) == (0, 0, 0)
    # (views of one shape and strides are told apart by where they start: a breaker)
    for out, where in ((shifted, "its first element 8 bytes before out's first"),
                       (every_other, "its first element at out's first")):
        fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, out)[2], 161002,
                 "overlap", "gradOutput", "in-place", where)
        fail_msg(aclnn.aclnnHardtanhBackwardGetWorkspaceSize(gt, xt, s, s, out)[2], 161002, "overlap")
    # other dtype over the same bytes: not the same view
    as_f16 = acl.create_tensor([4], acl.ACL_FLOAT16, [1], 0, acl.ACL_FORMAT_ND, [16], addr)
    dev.tensors.append(as_f16)
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, as_f16)[2], 161002, "overlap")
    # disjoint views of one allocation are fine: odd elements vs even elements
    odd = dev.tensor(storage, addr, shape=[4], strides=[2], offset=1, storage=[8])
    assert _launch_leaky(dev, every_other, xt, s, False, odd) == (0, 0, 0)
    assert dev.read(addr, (8,), F32)[0::2].tolist() == [0, 2, 4, 6]
    np.testing.assert_array_equal(dev.read(addr, (8,), F32)[1::2], np.where(X > 0, [0, 2, 4, 6], np.multiply([0, 2, 4, 6], 0.5, dtype=F32)))
    # Pythonic
    buf = np.arange(8, dtype=F32)
    before = buf.copy()
    for _ in range(3):  # same layouts, disjoint out: warms every cache of the Pythonic path
        opsnn.leaky_relu_backward(buf[:4], X, 0.5, out=np.zeros(8, F32)[2:6])
        opsnn.hardtanh_backward(X, buf[::2], out=np.zeros(8, F32)[1:5])
    py_fail(161002, opsnn.leaky_relu_backward, buf[:4], X, 0.5, out=buf[2:6],
            words=["overlap", "gradOutput", "first element 8 bytes before out's first"])
    py_fail(161002, opsnn.hardtanh_backward, X, buf[::2], out=buf[1:5], words=["overlap", "self"])
    py_fail(161002, opsnn.leaky_relu_backward, buf[:4], X, out=buf[:8].view(np.float16)[:4].view(F16),
            words=["overlap"])
    assert buf.tobytes() == before.tobytes()
    opsnn.leaky_relu_backward(buf[0::2], X, 0.5, out=buf[1::2])  # disjoint interleaved views: fine


# (input's first element, its stride; out's first element, its stride) in elements of one storage
# of 16 floats, 4 elements each: one shared element at either end of either view, or none
_ONE_SHARED = [
    ((0, 1), (3, 1), "12 bytes before"),   # input's last is out's first
    ((3, 1), (0, 1), "12 bytes after"),    # input's first is out's last
    ((0, 3), (9, 1), "36 bytes before"),   # strided input (0, 3, 6, 9): its last is out's first
    ((9, 1), (0, 3), "36 bytes after"),    # strided out (0, 3, 6, 9): its last is input's first
]
_SIDE_BY_SIDE = [((0, 1), (4, 1)), ((4, 1), (0, 1)), ((0, 3), (10, 1)), ((10, 1), (0, 3))]


@pytest.mark.parametrize("op", ["LeakyReluBackward", "HardtanhBackward"])
def test_out_sharing_one_element_with_an_input(dev, op):
    """An out and an input that share exactly one element (the last of one is the first of the
    other, dense or strided views, either order; in NumPy reversed views too) -> 161002, nothing
    written; views exactly side by side (the next element on) are computed. A view's address
    range ends one element past its last element's start: a mutant ending it at that start took
    the one shared element for no overlap (a mutation breaker)."""
    storage = np.arange(16, dtype=F32)
    s, lo, hi = dev.scalar(0.5), dev.scalar(-1.0), dev.scalar(5.0)
    other = dev.tensor(X)

    def phase1(inp, out):  # the overlapping input is gradOutput for LeakyReluBackward, self for Hardtanh's
        if op == "LeakyReluBackward":
            return aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(inp, other, s, False, out)[2]
        return aclnn.aclnnHardtanhBackwardGetWorkspaceSize(other, inp, lo, hi, out)[2]

    name = "gradOutput" if op == "LeakyReluBackward" else "self"
    for (i0, istep), (o0, ostep), where in _ONE_SHARED:
        addr = dev.upload(storage)
        inp = dev.tensor(storage, addr, shape=[4], strides=[istep], offset=i0, storage=[16])
        out = dev.tensor(storage, addr, shape=[4], strides=[ostep], offset=o0, storage=[16])
        fail_msg(phase1(inp, out), 161002, f"{op}: out and {name} overlap in memory without being the same "
                 "view", f"its first element {where} out's first")
        assert dev.read(addr, (16,), F32).tobytes() == storage.tobytes()
    for (i0, istep), (o0, ostep) in _SIDE_BY_SIDE:
        addr = dev.upload(storage)
        inp = dev.tensor(storage, addr, shape=[4], strides=[istep], offset=i0, storage=[16])
        out = dev.tensor(storage, addr, shape=[4], strides=[ostep], offset=o0, storage=[16])
        if op == "LeakyReluBackward":
            assert _launch_leaky(dev, inp, other, s, False, out) == (0, 0, 0), acl.get_recent_err_msg()
        else:
            assert _launch_ht(dev, other, inp, lo, hi, out) == (0, 0, 0), acl.get_recent_err_msg()
        expected = storage.copy()
        g_in = storage[i0:i0 + 4 * istep:istep]
        expected[o0:o0 + 4 * ostep:ostep] = (opsnn.leaky_relu_backward(g_in, X, 0.5) if op == "LeakyReluBackward"
                                             else opsnn.hardtanh_backward(X, g_in, -1.0, 5.0))
        assert dev.read(addr, (16,), F32).tobytes() == expected.tobytes()
    # Pythonic: the same pairs, and reversed views (a negative stride reaches down: its range
    # ends one element past its first element's start)
    buf = np.arange(16, dtype=F32)

    def call(inp, out):
        if op == "LeakyReluBackward":
            return opsnn.leaky_relu_backward(inp, X, 0.5, out=out)
        return opsnn.hardtanh_backward(X, inp, -1.0, 5.0, out=out)

    def views(pairs):
        return [(buf[i0:i0 + 4 * istep:istep], buf[o0:o0 + 4 * ostep:ostep]) for (i0, istep), (o0, ostep) in pairs]

    shared = views(pair[:2] for pair in _ONE_SHARED)
    shared += [(buf[3::-1], buf[3:7]),     # reversed input (3, 2, 1, 0): its first is out's first
               (buf[0:4], buf[6:2:-1]),    # reversed out (6, 5, 4, 3): its last is input's last
               (buf[6:2:-1], buf[0:4]),
               (buf[3::-1], buf[9:2:-2])]  # both reversed, out strided (9, 7, 5, 3)
    for inp, out in shared:
        py_fail(161002, call, inp, out, words=[f"out and {name} overlap in memory"], untouched=[buf])
    apart = views(_SIDE_BY_SIDE)
    apart += [(buf[3::-1], buf[4:8]), (buf[0:4], buf[7:3:-1]), (buf[7:3:-1], buf[0:4])]
    for inp, out in apart:
        expected = call(inp.copy(), np.empty(4, F32))
        assert call(inp, out) is not None
        assert out.tobytes() == expected.tobytes()


_OUT_OVERLAP_CALLS = {  # name -> phase 1 of (self, a disjoint gradOutput, a scalar, out)
    "LeakyRelu": lambda x, g, s, out: aclnn.aclnnLeakyReluGetWorkspaceSize(x, s, out),
    "Hardtanh": lambda x, g, s, out: aclnn.aclnnHardtanhGetWorkspaceSize(x, s, s, out),
    "LeakyReluBackward": lambda x, g, s, out: aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(g, x, s, False, out),
    "HardtanhBackward": lambda x, g, s, out: aclnn.aclnnHardtanhBackwardGetWorkspaceSize(g, x, s, s, out),
}


@pytest.mark.parametrize("op", list(_OUT_OVERLAP_CALLS))
@pytest.mark.parametrize("dtype", [d for d in DataType if d != DataType.DT_UNDEFINED], ids=lambda d: d.name)
def test_out_of_a_dtype_numpy_cannot_hold_overlapping_an_input(dev, op, dtype):
    """An out of any aclDataType over part of self's bytes: the overlap refusal (161002 naming out
    and self) wherever the same out placed apart passes every check before it, else that check's
    own refusal; never 561000. A breaker's: HIFLOAT8, COMPLEX32, INT4, fp6, fp4 ... outs (no NumPy
    type) gave 561000 "internal error: KeyError", the overlap check reading their elements."""
    call = _OUT_OVERLAP_CALLS[op]
    addr = dev.upload(np.zeros(128, F32))
    # self: 16 floats from byte 1; the outs start at byte 0 (their first byte or bit is self's
    # neighbour, whatever their width: 1 bit for UINT1) or 256 bytes on, apart from self
    x = acl.create_tensor([16], acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, [16], addr + 1)
    over = acl.create_tensor([16], int(dtype), None, 0, acl.ACL_FORMAT_ND, [16], addr)
    apart = acl.create_tensor([16], int(dtype), None, 0, acl.ACL_FORMAT_ND, [16], addr + 256)
    dev.tensors += [x, over, apart]
    g, s = dev.tensor(np.ones(16, F32)), dev.scalar(0.5, acl.ACL_FLOAT)
    ret_apart = call(x, g, s, apart)[2]
    msg_apart = acl.get_recent_err_msg()
    ret = call(x, g, s, over)[2]
    if ret_apart in (0, 561103):  # passed every check before the overlap one
        fail_msg(ret, 161002, f"{op}: out and self overlap in memory without being the same view",
                 f"out {dtypes.name(dtype)} [16]", "its first element 1 byte after out's first")
    else:
        assert ret_apart == 161002, msg_apart
        assert fail_msg(ret, 161002) == msg_apart


def test_sub_byte_out_overlap_is_decided_by_bytes(dev):
    """A sub-byte out (INT4, UINT1, fp4: elements packed into bytes) over self's allocation is
    compared byte by byte: its elements at whole-byte strides are exact (between self's elements:
    no overlap, so the next check's refusal, 561103 "no Cast kernel"); packed at strides of no
    whole bytes, its run of bytes stands for it: refused where that run meets self, though the
    elements may miss self's, saying that opsnn cannot prove them apart."""
    addr = dev.upload(np.zeros(16, F32))
    x = acl.create_tensor([4], acl.ACL_FLOAT16, [2], 0, acl.ACL_FORMAT_ND, [8], addr)  # bytes 0-1, 4-5 ...
    between = acl.create_tensor([4], acl.ACL_INT4, [8], 4, acl.ACL_FORMAT_ND, [32], addr)  # bytes 2, 6 ...
    dense = acl.create_tensor([4], acl.ACL_INT4, [1], 3, acl.ACL_FORMAT_ND, [32], addr)  # bytes 1-3
    # bits 16, 28, 48, 60: bytes 2, 3, 6, 7, apart from self's; their byte run, 2-7, is not
    spread = acl.create_tensor([2, 2], acl.ACL_FLOAT4_E2M1, [8, 3], 4, acl.ACL_FORMAT_ND, [32], addr)
    dev.tensors += [x, between, dense, spread]
    s = dev.scalar(0.5, acl.ACL_FLOAT)
    fail_msg(aclnn.aclnnLeakyReluGetWorkspaceSize(x, s, between)[2], 561103, "no Cast kernel from DT_FLOAT16 to DT_INT4")
    fail_msg(aclnn.aclnnLeakyReluGetWorkspaceSize(x, s, dense)[2], 161002,
             "out and self overlap in memory", "its first element 12 bits before out's first")
    x2 = acl.create_tensor([2, 2], acl.ACL_FLOAT16, [4, 2], 0, acl.ACL_FORMAT_ND, [8], addr)  # bytes 0-1, 4-5 ...
    dev.tensors.append(x2)
    fail_msg(aclnn.aclnnLeakyReluGetWorkspaceSize(x2, s, spread)[2], 161002,
             "out and self share an address range, and opsnn cannot prove their elements apart, without being "
             "the same view (out DT_FLOAT4_E2M1 [2, 2] strides [8, 3] ND", "2 bytes before out's first")


def test_out_elements_alias(dev):
    """An out whose own elements share memory (a 0 stride on a dim > 1) -> 161002."""
    addr = dev.upload(np.zeros(4, F32))
    gt, xt, s = dev.tensor(G), dev.tensor(X), dev.scalar(0.5)
    bcast = dev.tensor(np.zeros(4, F32), addr, shape=[4], strides=[0], storage=[4])
    fail_msg(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, bcast)[2], 161002, "share memory")
    rows = dev.tensor(np.zeros(4, F32), addr, shape=[2, 2], strides=[1, 1], storage=[4])  # (0,1) is (1,0)
    g2, x2 = dev.tensor(G.reshape(2, 2)), dev.tensor(X.reshape(2, 2))
    fail_msg(aclnn.aclnnHardtanhBackwardGetWorkspaceSize(g2, x2, s, s, rows)[2], 161002, "share memory")
    out = np.zeros(4, F32)
    py_fail(161002, opsnn.leaky_relu_backward, G, X, out=np.lib.stride_tricks.as_strided(out, (4,), (0,)),
            words=["out DT_FLOAT [4] strides [0]", "share memory"])
    assert not out.any()
    # in place the tensor is the caller's self: the message names selfRef, not an out never passed
    stride0 = dev.tensor(np.zeros(4, F32), addr, shape=[4], strides=[0], storage=[4])
    ret = aclnn.aclnnInplaceHardtanhGetWorkspaceSize(stride0, s, s)[2]
    fail_msg(ret, 161002, "InplaceHardtanh: selfRef DT_FLOAT [4] strides [0]")
    py_fail(161002, opsnn.hardtanh_, np.lib.stride_tricks.as_strided(out, (4,), (0,)),
            words=["selfRef DT_FLOAT [4] strides [0]", "dense or sliced selfRef",
                   "(Python arguments: selfRef is self)"])  # (a breaker: no note said so)


def test_inputs_may_overlap_each_other(dev):
    """Inputs may share memory with each other (they are only read)."""
    addr = dev.upload(np.array([1.0, -2.0, 3.0, -4.0, 5.0], F32))
    a = dev.tensor(np.zeros(5, F32), addr, shape=[4], strides=[1], storage=[5])
    b = dev.tensor(np.zeros(5, F32), addr, shape=[4], strides=[1], offset=1, storage=[5])
    out = dev.tensor(np.zeros(4, F32))
    assert _launch_leaky(dev, a, b, dev.scalar(0.5), False, out) == (0, 0, 0)
    # a = [1, -2, 3, -4], self = a shifted by one = [-2, 3, -4, 5]
    np.testing.assert_array_equal(read_out(dev, dev.addrs[-1]), np.array([0.5, -2.0, 1.5, -4.0], F32))
    v = np.array([1.0, -2.0, 3.0, -4.0, 5.0], F32)
    np.testing.assert_array_equal(opsnn.leaky_relu_backward(v[:4], v[1:], 0.5), np.array([0.5, -2, 1.5, -4], F32))


def test_workspace_overlaps_tensor(dev):
    """A workspace that overlaps a tensor of the executor -> 161002 (the temporaries would
    overwrite it); nothing is written, and the executor is released, as a launch CANN's would run
    (CommonOpExecutorRun releases a single-use one whatever it returns): phase 1 again."""
    g16 = G.astype(F16)
    gt, xt, s = dev.tensor(g16), dev.tensor(X), dev.scalar(0.5)
    big = dev.malloc(4096)
    ot = dev.tensor(np.zeros(4, F32), big, storage=[4])
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ret == 0 and 0 < ws <= 4096
    fail_msg(aclnn.aclnnLeakyReluBackward(big, 4096, ex, dev.stream), 161002, "overlaps out", "released the executor")
    assert not read_out(dev, big).any()
    fail_msg(aclnn.aclnnLeakyReluBackward(dev.malloc(ws), ws, ex, dev.stream), 161002, "already destroyed")
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert aclnn.aclnnLeakyReluBackward(dev.malloc(ws), ws, ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, big), LEAKY_05)


# ============================================================================================
# executors and phase 2
# ============================================================================================
def test_executor_run_twice(dev):
    """A second phase 2 with the same executor -> 161002, and so does making it repeatable
    after it ran; made repeatable before its first launch it runs again until destroyed."""
    ws, ex, oa = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002, "already run")
    # released by its launch: it cannot be made repeatable afterwards
    fail_msg(aclnn.aclSetAclOpExecutorRepeatable(ex), 161002, "already ran", "before the first launch")
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002, "already run")
    assert acl.rt.synchronize_stream(dev.stream) == 0
    ws, ex, oa = planned(dev)
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    for _ in range(3):
        assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002, "destroyed")
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)


def test_executor_destroyed(dev):
    """Phase 2 after aclDestroyAclOpExecutor -> 161002; destroy twice -> 161002. A null
    executor (None or 0) is 161001 at phase 2 (CommonOpExecutorRun) and 561103 at destroy /
    set-repeatable (opbase's CHECK_RET ... ACLNN_ERR_INNER_NULLPTR, and their documentation);
    a non-executor is 161002 at all three (opbase's magic-number check gives 561000 there,
    which opsnn keeps for its own bugs). A single-use executor that was launched is released by
    its launch (CANN's documentation): destroying it is refused (161002, a double free on a
    device) and the queued run still happens; one that never ran may be destroyed."""
    ws, ex, oa = planned(dev)
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0

    def same_rule(statuses, executor, *words):
        """The three calls that take an executor refuse it with one message, each naming itself."""
        msgs = [fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, executor, dev.stream), statuses[0], *words),
                fail_msg(aclnn.aclDestroyAclOpExecutor(executor), statuses[1], *words),
                fail_msg(aclnn.aclSetAclOpExecutorRepeatable(executor), statuses[1], *words)]
        for msg, call in zip(msgs, ("LeakyReluBackward", "aclDestroyAclOpExecutor",
                                    "aclSetAclOpExecutorRepeatable")):
            assert call in msg, msg
        assert len({m[m.index("executor"):] for m in msgs}) == 1, msgs

    same_rule((161002, 161002), ex, "already destroyed (aclDestroyAclOpExecutor)")
    for null in (None, 0, np.uint64(0)):
        same_rule((161001, 561103), null, "executor", "null pointer")
    for junk in (1, "ex", Sentinel(), dev.tensors[0]):
        same_rule((161002, 161002), junk, "aclOpExecutor", type(junk).__name__)
    ws, ex, oa = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    fail_msg(aclnn.aclDestroyAclOpExecutor(ex), 161002, "already ran", "released by its launch", "twice",
             "aclSetAclOpExecutorRepeatable")
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    fail_msg(aclnn.aclDestroyAclOpExecutor(ex), 161002, "already ran")  # after it ran, too


def test_executor_of_another_op(dev):
    """Phase 2 of one op with the other op's executor -> 161002 naming both, run or not; one not
    run is released, as CANN's launch, which would run it, releases it."""
    ws, ex, oa = planned(dev)
    fail_msg(aclnn.aclnnHardtanhBackward(None, ws, ex, dev.stream), 161002, "aclnnLeakyReluBackward",
             "aclnnHardtanhBackward", "released the executor")
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002,
             "already destroyed (aclnnHardtanhBackward released it at a failed launch)")
    ws, ex, oa = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    # once run, it still belongs to the other op first (a breaker: "already run" hid that)
    fail_msg(aclnn.aclnnHardtanhBackward(None, ws, ex, dev.stream), 161002, "belongs to aclnnLeakyReluBackward")


def test_workspace_misuse(dev):
    """workspace_size smaller than asked -> 161002; a null workspace with a size > 0 -> 161001,
    which deletes the executor (CommonOpExecutorRun does: its later use is 161002), also where
    GetWorkspaceSize asked for 0 bytes; a freed, never-allocated or too-small workspace, or one
    of a wrong type -> 161002; a size that is negative / not an int -> 161002. A refusal of what
    C's launch would run anyway (a size smaller than asked, a workspace that is no live memory of
    that size) releases the executor, as CommonOpExecutorRun does whatever the run returns; one
    for a Python type no C argument has (a float, a negative size) leaves it usable."""
    for null in (None, 0):
        for grad, size in ((G.astype(F16), None), (G, 512), (G, 1)):  # (None: the size asked for)
            ws, ex, oa = planned(dev, g=grad)
            size = ws if size is None else size
            fail_msg(aclnn.aclnnLeakyReluBackward(null, size, ex, dev.stream), 161001,
                     f"workspace is null but workspaceSize is {size} byte{'s' * (size != 1)} (GetWorkspaceSize asked "
                     f"for {ws}); the failed launch deleted the executor")
            fail_msg(aclnn.aclnnLeakyReluBackward(dev.malloc(max(ws, 1)), ws, ex, dev.stream), 161002,
                     "already destroyed (aclnnLeakyReluBackward deleted it when launched with a null workspace)")
            assert acl.rt.synchronize_stream(dev.stream) == 0 and not read_out(dev, oa).any()
    # (a reviewer) a repeatable executor so deleted is not relaunched through its last launch,
    # whose repeat skips the checks; and the deletion comes first, as in CommonOpExecutorRun:
    # another operator's executor is deleted too
    ws, ex, oa = planned(dev)
    assert ws == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    assert aclnn.aclnnLeakyReluBackward(None, 0, ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0 and acl.rt.memset(oa, 16, 0, 16) == 0
    fail_msg(aclnn.aclnnLeakyReluBackward(None, 512, ex, dev.stream), 161001, "deleted the executor")
    fail_msg(aclnn.aclnnLeakyReluBackward(None, 0, ex, dev.stream), 161002, "already destroyed")
    assert acl.rt.synchronize_stream(dev.stream) == 0 and not read_out(dev, oa).any()
    ws, ex, oa = planned(dev)  # (a breaker) one that already ran is told so too
    assert aclnn.aclnnLeakyReluBackward(None, 0, ex, dev.stream) == 0
    fail_msg(aclnn.aclnnLeakyReluBackward(None, 8, ex, dev.stream), 161001, "deleted the executor, as CANN's "
             "does; it had also run already, and single-use executors are released by their launch")
    assert acl.rt.synchronize_stream(dev.stream) == 0
    ws, ex, oa = planned(dev)
    fail_msg(aclnn.aclnnHardtanhBackward(None, 64, ex, dev.stream), 161001, "deleted the executor")
    fail_msg(aclnn.aclnnLeakyReluBackward(None, 0, ex, dev.stream), 161002, "already destroyed")
    ws, ex, oa = planned(dev, g=G.astype(F16))
    assert ws > 0
    good = dev.malloc(ws)
    freed, _ = acl.rt.malloc(ws, 0)
    acl.rt.free(freed)
    small = dev.malloc(ws // 2)
    for args, word in (((good, ws - 1), "smaller"), ((None, 0), "smaller"),
                       *(((bad, ws), "live device memory") for bad in (freed, small, 0x3_0000_0000, good + 16))):
        ws, ex, oa = planned(dev, g=G.astype(F16))
        fail_msg(aclnn.aclnnLeakyReluBackward(*args, ex, dev.stream), 161002, word, "released the executor")
        fail_msg(aclnn.aclnnLeakyReluBackward(good, ws, ex, dev.stream), 161002, "already destroyed")
    ws, ex, oa = planned(dev, g=G.astype(F16))
    for junk in ("ws", 1.5, [good], Sentinel(), True):
        fail_msg(aclnn.aclnnLeakyReluBackward(junk, ws, ex, dev.stream), 161002, "workspace")
    for size in (-1, float(ws), None, "512", True, 2**64):  # a uint64_t in C
        fail_msg(aclnn.aclnnLeakyReluBackward(good, size, ex, dev.stream), 161002, "workspaceSize")
    assert not read_out(dev, oa).any()
    assert aclnn.aclnnLeakyReluBackward(np.int64(good), np.uint64(ws), ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)


def test_tensor_destroyed_between_phases(dev):
    """A tensor destroyed after phase 1 but before phase 2, by destroy_tensor or by destroying a
    list holding it -> 161002 (use after free of the descriptor), the message naming both ways
    (it had named aclDestroyTensor alone); destroyed after phase 2 (before synchronize, as
    torch_npu does) -> the launch captured it and the result is right."""
    gt, xt, s, ot, oa = leaky(dev)
    ws, ex, _ = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    acl.destroy_tensor(xt)
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002, "self", "destroyed")
    gt, xt, s, ot, oa = leaky(dev)
    ws, ex, _ = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert acl.destroy_tensor_list(acl.create_tensor_list([gt])) == 0 and gt.destroyed
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002,
             "LeakyReluBackward: gradOutput was destroyed (aclDestroyTensor or aclDestroyTensorList) after "
             "GetWorkspaceSize; destroy tensors only after the launch")
    gt, xt, s, ot, oa = leaky(dev)
    ws, ex, _ = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    for t in (gt, xt, ot):
        assert acl.destroy_tensor(t) == 0
    assert acl.destroy_scalar(s) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)


def test_memory_freed_between_phases(dev):
    """Device memory of a tensor freed after phase 1 -> phase 2 refuses (161002); freed after
    phase 2 but before synchronize -> synchronize returns 500003 naming the task, and the
    tasks queued after it on that stream are dropped."""
    gone = dev.upload(G)
    gt = dev.tensor(G, gone)
    xt, s, ot = dev.tensor(X), dev.scalar(0.5), dev.tensor(np.zeros(4, F32))
    ws, ex, _ = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    dev.addrs.remove(gone)
    acl.rt.free(gone)
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002, "gradOutput", "memory")
    gone = dev.upload(G)
    gt = dev.tensor(G, gone)
    ws, ex, _ = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    ws2, ex2, oa2 = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, ws2, ex2, dev.stream) == 0
    dev.addrs.remove(gone)
    acl.rt.free(gone)
    fail_msg(acl.rt.synchronize_stream(dev.stream), 500003, "aclnnLeakyReluBackward", "already freed")
    assert not read_out(dev, oa2).any(), "tasks after a failed one are dropped"
    assert acl.rt.synchronize_stream(dev.stream) == 0


def test_repeatable_executor_relaunch(dev):
    """A repeatable executor reuses what its last launch captured only while that still holds:
    relaunches on the same or another workspace run and read the current device data; the
    workspace freed, a tensor's memory freed or a tensor destroyed since the last launch ->
    161002 with the first launch's message; memory freed after a relaunch, before synchronize
    -> 500003 at synchronize_stream."""
    g16 = G.astype(F16)
    g_addr = dev.upload(g16)
    gt = dev.tensor(g16, g_addr)
    xt, s, ot = dev.tensor(X), dev.scalar(0.5), dev.tensor(np.zeros(4, F32))
    oa = dev.addrs[-1]
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ret == 0 and ws > 0  # float16 grad is cast to float32 in the workspace
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    w1, w2 = dev.malloc(ws), dev.malloc(ws)

    def run(workspace, grad):
        assert acl.rt.memcpy(g_addr, 8, grad, 8, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        assert acl.rt.memcpy(oa, 16, np.zeros(4, F32), 16, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        assert aclnn.aclnnLeakyReluBackward(workspace, ws, ex, dev.stream) == 0
        assert acl.rt.synchronize_stream(dev.stream) == 0
        return read_out(dev, oa)

    for k, workspace in enumerate((w1, w1, w2, w1)):
        np.testing.assert_array_equal(run(workspace, g16 * (k + 1)), LEAKY_05 * (k + 1))
    other = dev.malloc(64)  # a release of memory the executor does not use: checked, still intact
    dev.addrs.remove(other)
    acl.rt.free(other)
    np.testing.assert_array_equal(run(w1, g16 * 5), LEAKY_05 * 5)
    dev.addrs.remove(w2)
    acl.rt.free(w2)
    fail_msg(aclnn.aclnnLeakyReluBackward(w2, ws, ex, dev.stream), 161002, "live device memory")
    np.testing.assert_array_equal(run(w1, g16), LEAKY_05)
    assert aclnn.aclnnLeakyReluBackward(w1, ws, ex, dev.stream) == 0
    dev.addrs.remove(g_addr)
    acl.rt.free(g_addr)
    fail_msg(acl.rt.synchronize_stream(dev.stream), 500003, "aclnnLeakyReluBackward", "already freed")
    fail_msg(aclnn.aclnnLeakyReluBackward(w1, ws, ex, dev.stream), 161002, "gradOutput", "memory")
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0

    gt, xt, s, ot, oa = leaky(dev)
    ws, ex, _ = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    for _ in range(2):
        assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    acl.destroy_tensor(xt)  # after the launches: they captured it
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002, "self", "destroyed")
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_relaunch_skips_checks_only_for_the_same_call(runtime_guard, dev, monkeypatch):
    """A relaunch passing the very objects of the last checked launch skips the phase-2 checks;
    anything that could change their outcome takes them again: an equal float workspaceSize
    (refused), another operator's phase 2, a destroyed stream (361001), another stream, a
    backend switch (bound anew), acl.finalize; each refusal leaves the executor relaunchable."""
    from opsnn import engine, kernels

    gt, xt, s, ot, oa = leaky(dev, g=G.astype(F16))
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ret == 0 and ws > 0
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    w = dev.malloc(ws)
    binds = []
    real_bind = engine.bind
    monkeypatch.setattr(engine, "bind", lambda *a, **k: binds.append(kernels.default_name()) or real_bind(*a, **k))

    def relaunch(stream=dev.stream, size=ws, phase2=aclnn.aclnnLeakyReluBackward):
        assert acl.rt.memcpy(oa, 16, np.zeros(4, F32), 16, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        ret = phase2(w, size, ex, stream)
        if ret == 0:
            assert acl.rt.synchronize_stream(stream) == 0
            np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
        return ret

    for _ in range(3):
        assert relaunch() == 0
    assert binds == [kernels.default_name()]
    fail_msg(relaunch(size=float(ws)), 161002, "workspaceSize")
    fail_msg(relaunch(phase2=aclnn.aclnnHardtanhBackward), 161002, "aclnnLeakyReluBackward")
    other, _ = acl.rt.create_stream()
    assert relaunch() == 0 and relaunch(other) == 0 and relaunch(other) == 0
    assert acl.rt.destroy_stream(other) == 0
    fail_msg(relaunch(other), 361001, "stream")
    assert relaunch() == 0
    saved = kernels.DEFAULT
    try:
        kernels.set_default("numpy" if kernels.default_name() == "numba" else "numba")
        assert relaunch() == 0 and relaunch() == 0
    finally:
        kernels.set_default(saved)
    assert relaunch() == 0
    assert binds[1:] == ["numpy" if binds[0] == "numba" else "numba", binds[0]]
    assert acl.finalize() == 0
    fail_msg(aclnn.aclnnLeakyReluBackward(w, ws, ex, dev.stream), 361001, "init")
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    stream, _ = acl.rt.create_stream()
    assert relaunch(stream) == 0 and relaunch(stream) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


ADDR_CALLS = (aclnn.aclSetInputTensorAddr, aclnn.aclSetOutputTensorAddr)


def test_tensor_addr_refused(dev):
    """aclSetInputTensorAddr / aclSetOutputTensorAddr: a null tensor, then a null executor ->
    561103 (the documented status, in opbase's order); a non-executor, a destroyed executor or a
    single-use one that already ran (its launch released it) -> 161002; an index that is no
    integer in range -> 161002 (documented); a tensor that is not the one at that index, or
    destroyed, -> 161002 naming both; an addr that is no integer in [0, 2**64) -> 161002. A
    refused call moves nothing: the executor then runs on the tensors' own storage."""
    gt, xt, s, ot, oa = leaky(dev)
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    spare = dev.malloc(16)
    addrs = [t.addr for t in (gt, xt, ot)]
    foreign = dev.tensor(G)
    for call, role, first, count in zip(ADDR_CALLS, ("input", "output"), (gt, ot), (2, 1)):
        name = call.__name__
        for null in (None, 0, np.uint64(0)):
            fail_msg(call(ex, 0, null, spare), 561103, name, "tensor must be an aclTensor", "null pointer")
            fail_msg(call(null, 0, null, spare), 561103, "tensor must be an aclTensor")  # tensor first
            fail_msg(call(null, 0, first, spare), 561103, name, "executor must be an aclOpExecutor",
                     "null pointer")
        for junk in (1, "ex", Sentinel(), gt):
            fail_msg(call(junk, 0, first, spare), 161002, name, "must be an aclOpExecutor", type(junk).__name__)
        for index in (-1, count, 2**64, 1.0, "0", True, None):
            fail_msg(call(ex, index, first, spare), 161002, f"index must be an integer in [0, {count})",
                     f"aclnnLeakyReluBackward's {role}s: 0 {'gradOutput, 1 self' if count == 2 else 'out'}",
                     f"got {index!r}")
        for addr in (-1, 2**64, 1.5, "0x100", Sentinel(), gt):
            fail_msg(call(ex, 0, first, addr), 161002, "addr must be a device address", "int in [0, 2**64)")
    fail_msg(aclnn.aclSetInputTensorAddr(ex, 0, xt, spare), 161002, "input 0 (gradOutput)", "its input 1 (self)")
    fail_msg(aclnn.aclSetInputTensorAddr(ex, 1, ot, spare), 161002, "input 1 (self)", "its output 0 (out)")
    fail_msg(aclnn.aclSetOutputTensorAddr(ex, 0, gt, spare), 161002, "output 0 (out)", "its input 0 (gradOutput)")
    for other in (foreign, Sentinel(), 7):
        fail_msg(aclnn.aclSetInputTensorAddr(ex, 0, other, spare), 161002, "tensor must be the aclTensor",
                 f"got {other!r}")
    assert [t.addr for t in (gt, xt, ot)] == addrs
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    assert not read_out(dev, spare).any()
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0
    for call in ADDR_CALLS:
        fail_msg(call(ex, 0, gt if call is ADDR_CALLS[0] else ot, spare), 161002,
                 "already destroyed (aclDestroyAclOpExecutor)")
    ws, ex, oa = planned(dev)  # single use: released by its launch
    gt, xt, ot = dev.tensors[-4], dev.tensors[-3], dev.tensors[-2]
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    fail_msg(aclnn.aclSetOutputTensorAddr(ex, 0, ot, spare), 161002, "already ran", "released by its launch",
             "aclSetAclOpExecutorRepeatable")
    assert acl.rt.synchronize_stream(dev.stream) == 0
    ws, ex, oa = planned(dev)
    xt = dev.tensors[-2]
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0 and acl.destroy_tensor(xt) == 0
    fail_msg(aclnn.aclSetInputTensorAddr(ex, 1, xt, spare), 161002, "self",
             "already destroyed (aclDestroyTensor or aclDestroyTensorList)")
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_raw_tensor_addr(dev):
    """set_raw_tensor_addr / get_raw_tensor_addr (aclSetRawTensorAddr / aclGetRawTensorAddr): the
    tensor's storage address, set and read; a tensor reused over new memory computes from it
    (in a later phase 1, or, as opbase lets it, a launch of an executor planned before: CANN
    calls that unsupported, opsnn checks the new address at the launch). 161001 for a null
    tensor (the failure CANN documents), 161002 for another object, a destroyed tensor or an
    addr that is not an int in [0, 2**64) (nothing changed); an address that is no live storage
    is refused where the tensor is used (161002 at the launch), as for aclSetInputTensorAddr."""
    gt, xt, s, ot, oa = leaky(dev)
    xa = dev.addrs[-2]
    assert acl.get_raw_tensor_addr(xt) == (xa, 0)
    x2 = dev.upload(np.array([2.0, -1.0, -3.0, 1.0], F32))
    assert acl.set_raw_tensor_addr(xt, x2) == 0 and acl.get_raw_tensor_addr(xt) == (x2, 0)
    assert launch(aclnn.aclnnLeakyReluBackwardGetWorkspaceSize, (gt, xt, s, False, ot), dev.stream, dev) == (0, 0, 0)
    np.testing.assert_array_equal(read_out(dev, oa), [1.0, 1.0, 1.5, 4.0])  # G where x2 > 0, else G * 0.5
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ret == 0 and acl.set_raw_tensor_addr(xt, np.uint64(xa)) == 0  # between the phases
    assert aclnn.aclnnLeakyReluBackward(ws and dev.malloc(ws), ws, ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    freed, _ = acl.rt.malloc(16, 0)
    assert acl.rt.free(freed) == 0
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ret == 0 and acl.set_raw_tensor_addr(xt, freed) == 0 and acl.rt.memset(oa, 16, 0, 16) == 0
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002,
             "self's address, given by aclSetInputTensorAddr / aclSetOutputTensorAddr / aclSetRawTensorAddr, "
             "is not live device memory holding its storage", "not inside a live device allocation")
    assert acl.rt.synchronize_stream(dev.stream) == 0 and not read_out(dev, oa).any()
    for call, args in ((acl.set_raw_tensor_addr, (xa,)), (acl.get_raw_tensor_addr, ())):
        name = call.__name__
        for null in (None, 0, np.int64(0)):
            fail_msg(call(null, *args) if args else call(null)[1], 161001,
                     f"{name}: tensor must be an aclTensor, got a null pointer")
        for junk in (s, "t", Sentinel()):
            fail_msg(call(junk, *args) if args else call(junk)[1], 161002, f"{name}: tensor must be an aclTensor")
    for bad in (-1, 2**64, 1.5, "0x40", True, [xa]):
        fail_msg(acl.set_raw_tensor_addr(xt, bad), 161002, "set_raw_tensor_addr: addr must be a device address",
                 "int in [0, 2**64)", "got")
        assert acl.get_raw_tensor_addr(xt) == (freed, 0)
    fail_msg(acl.set_raw_tensor_addr(xt), 161002, "missing 1 required positional argument")
    assert acl.set_raw_tensor_addr(xt, None) == 0 and acl.get_raw_tensor_addr(xt) == (0, 0)
    gone = acl.create_tensor([4], acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, [4], xa)
    assert acl.destroy_tensor(gone) == 0
    fail_msg(acl.set_raw_tensor_addr(gone, x2), 161002, "set_raw_tensor_addr: tensor is an aclTensor that was "
                                                        "already destroyed")
    assert acl.get_raw_tensor_addr(gone)[1] == 161002 and "already destroyed" in acl.get_recent_err_msg()


def test_tensor_addr_not_live_memory(dev):
    """A tensor given an address that does not hold its storage (freed, never allocated, too
    small, an interior address running past the end, a host or null pointer): the call returns
    0, as opbase's does (it checks nothing), and the next launch refuses it (161002), where
    every tensor's memory is checked, writing nothing; given live storage again, it runs."""
    gt, xt, s, ot, oa = leaky(dev)
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0  # a last launch to drop
    assert acl.rt.synchronize_stream(dev.stream) == 0 and acl.rt.memset(oa, 16, 0, 16) == 0
    freed, _ = acl.rt.malloc(16, 0)
    assert acl.rt.free(freed) == 0
    small, host = dev.malloc(8), acl.util.numpy_to_ptr(np.zeros(4, F32))
    for addr, words in ((freed, "not inside a live device allocation"), (0x7777, "not inside a live"),
                        (small, "past the end"), (dev.addrs[0] + 8, "past the end"), (host, "not inside")):
        assert aclnn.aclSetInputTensorAddr(ex, 1, xt, addr) == 0
        fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002,
                 "self's address, given by aclSetInputTensorAddr / aclSetOutputTensorAddr / aclSetRawTensorAddr, "
                 "is not live device memory holding its storage", words)
    for null in (None, 0):  # the null pointer: a tensor with no memory, said so
        assert aclnn.aclSetInputTensorAddr(ex, 1, xt, null) == 0
        fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002,
                 "self has no device memory: its tensorData is a null pointer; give it its storage's address "
                 "with aclSetInputTensorAddr")
    assert acl.rt.synchronize_stream(dev.stream) == 0 and not read_out(dev, oa).any()
    assert aclnn.aclSetInputTensorAddr(ex, 1, xt, dev.upload(X)) == 0
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_tensor_addr_moves_out_onto_an_input(dev):
    """out given an address that partially overlaps an input: the relaunch runs phase 1's
    overlap check again (its verdict read the addresses) -> 161002, nothing written, and so does
    a new phase 1 with those handles; given exactly the input's view, the launch is in place
    and right. Moving the input onto out works the same way."""
    x_addr = dev.upload(np.concatenate([X, np.zeros(4, F32)]))
    gt, xt, s = dev.tensor(G), dev.tensor(X, x_addr), dev.scalar(0.5)
    ot = dev.tensor(np.zeros(4, F32))
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    before = bytes(dev.read(x_addr, (32,), np.uint8))
    assert aclnn.aclSetOutputTensorAddr(ex, 0, ot, x_addr + 4) == 0
    words = ("out and self overlap in memory without being the same view", "4 bytes before out's first")
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002, *words)
    _, ex2, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ex2 is None
    fail_msg(ret, 161002, *words)
    assert acl.rt.synchronize_stream(dev.stream) == 0
    assert bytes(dev.read(x_addr, (32,), np.uint8)) == before
    assert aclnn.aclSetOutputTensorAddr(ex, 0, ot, x_addr) == 0  # in place: self's very view
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, x_addr), LEAKY_05)
    assert aclnn.aclSetInputTensorAddr(ex, 0, gt, x_addr + 8) == 0  # gradOutput over half of out
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002, "out and gradOutput overlap")
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, x_addr), LEAKY_05)
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_tensor_moved_while_a_launch_is_queued(dev):
    """Tensors moved after a launch, before synchronize: the queued launch keeps the addresses
    it was launched with (a device's kernel got them at its launch), the next launch uses the new
    ones, each result exact; memory the queued launch uses, freed after the move, fails it at
    synchronize (500003), as any freed memory does."""
    x2 = np.array([2.0, -2.0, -0.5, 0.25], F32)
    gt, xt, s, ot, oa = leaky(dev)
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, s, False, ot)
    assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    x_addr, o2 = dev.upload(x2), dev.malloc(16)
    assert aclnn.aclSetInputTensorAddr(ex, 1, xt, x_addr) == 0
    assert aclnn.aclSetOutputTensorAddr(ex, 0, ot, o2) == 0
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    np.testing.assert_array_equal(read_out(dev, o2), np.array([1.0, 1.0, 1.5, 4.0], F32))
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    o3 = dev.malloc(16)
    assert aclnn.aclSetOutputTensorAddr(ex, 0, ot, o3) == 0
    dev.addrs.remove(o2)
    assert acl.rt.free(o2) == 0
    fail_msg(acl.rt.synchronize_stream(dev.stream), 500003, "aclnnLeakyReluBackward", "already freed")
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, o3), np.array([1.0, 1.0, 1.5, 4.0], F32))
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


@pytest.mark.parametrize("stream", ["destroyed", 0x7777, -1, "s", 1.5, Sentinel()])
def test_launch_on_bad_stream(dev, stream):
    """Phase 2 on a destroyed, never-created or junk stream -> 361001 ACLNN_ERR_RUNTIME_ERROR
    (the launch is a failed runtime call). A handle a C caller could pass releases the executor,
    as CANN's failed launch does (CommonOpExecutorRun deletes a single-use one whatever its run
    returns); a Python object no C call takes leaves it usable."""
    if stream == "destroyed":
        stream, _ = acl.rt.create_stream()
        acl.rt.destroy_stream(stream)
    c_handle = isinstance(stream, int)
    ws, ex, oa = planned(dev)
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, stream), 361001, "launch failed", "stream")
    if c_handle:
        fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002, "released it at a failed launch")
        ws, ex, oa = planned(dev)
    assert aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream) == 0
    assert acl.rt.synchronize_stream(dev.stream) == 0
    np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    # the runtime is checked before the tensors, as CANN's launch fails at its first runtime call
    # and reads no tensor (the CANN-developer breaker's: a freed out said 161002 first)
    ws, ex, oa = planned(dev)
    assert acl.rt.free(oa) == 0
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, stream), 361001, "launch failed", "stream")
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, dev.stream), 161002, "already destroyed" if c_handle else "out")


# ============================================================================================
# streams
# ============================================================================================
def test_stream_runs_what_was_queued_when_synchronized():
    """synchronize runs the tasks queued when it was called, in order; a task queued meanwhile
    (here by a running task) waits for the next synchronize; after a failure (500003) the rest
    of that batch is dropped for good, and what was queued meanwhile survives."""
    from opsnn._core.stream import Stream

    stream, ran = Stream(0x99), []
    stream.enqueue("a", lambda: (ran.append("a"), stream.enqueue("c", lambda: ran.append("c"))))
    stream.enqueue("b", lambda: ran.append("b"))
    stream.synchronize()
    assert ran == ["a", "b"] and stream.pending == 1
    stream.synchronize()
    assert ran == ["a", "b", "c"] and stream.pending == 0

    def failing():
        stream.enqueue("late", lambda: ran.append("late"))
        raise opsnn.AclnnError(161002, "memory gone")

    ran.clear()
    stream.enqueue("x", failing)
    stream.enqueue("y", lambda: ran.append("y"))
    with pytest.raises(opsnn.AclnnError) as info:
        stream.synchronize()
    assert info.value.status == 500003 and "stream task x failed: memory gone" in info.value.message
    stream.synchronize()
    assert ran == ["late"] and stream.pending == 0


def test_stream_reports_dropped_tasks_to_the_thread_that_queued_them():
    """A failure drops the tasks queued after it; a thread whose task was dropped by another
    thread's synchronize hears of it at its own next synchronize (once), not a silent success
    (a breaker's: its result was never computed and its synchronize returned 0)."""
    from opsnn._core.stream import Stream

    stream, ran = Stream(0x98), []

    def failing():
        raise opsnn.AclnnError(161002, "memory gone")

    stream.enqueue("x", failing)
    other = {}

    def queue_then_wait():
        stream.enqueue("b", lambda: ran.append("b"))
        other["queued"].set()
        other["go"].wait()
        for key in ("first", "second"):
            try:
                stream.synchronize()
                other[key] = None
            except opsnn.AclnnError as exc:
                other[key] = exc

    other["queued"], other["go"] = threading.Event(), threading.Event()
    worker = threading.Thread(target=queue_then_wait)
    worker.start()
    assert other["queued"].wait(10)
    stream.enqueue("c", lambda: ran.append("c"))  # the synchronizing thread's own: told directly
    with pytest.raises(opsnn.AclnnError) as info:
        stream.synchronize()
    assert info.value.status == 500003 and "stream task x failed: memory gone" in info.value.message
    stream.synchronize()  # nothing of its own was dropped behind its back
    other["go"].set()
    worker.join(10)
    assert ran == [] and stream.pending == 0
    first = other["first"]
    assert isinstance(first, opsnn.AclnnError) and first.status == 500003, first
    assert "1 task(s) this thread queued" in first.message and "stream task x failed: memory gone" in first.message
    assert other["second"] is None, "reported once"


def test_the_thread_whose_task_failed_or_was_dropped_hears_of_it():
    """(A reviewer) the thread whose own task failed, run by another thread's synchronize, got 0
    from its next synchronize; and a synchronize_event whose record ran, after another thread's
    failure had dropped this thread's earlier task, returned 0 (a read then saw stale data).
    Both are 500003 now, once."""
    from opsnn._core.event import Event
    from opsnn._core.stream import Stream

    def failing():
        raise opsnn.AclnnError(161002, "memory gone")

    for case in ("own task failed", "event after a dropped task"):
        stream, event, steps, got = Stream(0x9A), Event(0x6A), {k: threading.Event() for k in ("queued", "go")}, {}
        if case == "event after a dropped task":
            stream.enqueue("k", failing)  # the main thread's; the worker's task below is dropped

        def worker(case=case, stream=stream, event=event, steps=steps, got=got):
            stream.enqueue("w", failing if case == "own task failed" else (lambda: None))
            steps["queued"].set()
            steps["go"].wait(10)
            for key in ("first", "second"):
                try:
                    if case == "own task failed":
                        stream.synchronize()
                    else:
                        event.record(stream)
                        event.synchronize()
                    got[key] = None
                except opsnn.AclnnError as exc:
                    got[key] = exc

        thread = threading.Thread(target=worker)
        thread.start()
        assert steps["queued"].wait(10)
        with pytest.raises(opsnn.AclnnError, match="memory gone"):
            stream.synchronize()
        steps["go"].set()
        thread.join(10)
        first = got["first"]
        assert isinstance(first, opsnn.AclnnError) and first.status == 500003, (case, first)
        assert "1 task(s) this thread queued" in first.message and "failed or were dropped" in first.message
        assert got["second"] is None, "reported once"


def test_a_failure_is_told_at_the_synchronize_it_concerns():
    """(A breaker) a failure of a task queued after an event's record, met by another thread's
    synchronize, was told to the queuing thread's synchronize_event (whose record ran, with all
    before it) and not to its synchronize of the stream, which returned 0; and a failure met by a
    stream_wait_event was told to the waiting stream's synchronize only, the failed stream's
    returning 0. Now each is told where it belongs, once."""
    from opsnn._core.event import COMPLETE, NOT_READY, Event
    from opsnn._core.stream import Stream

    def failing():
        raise opsnn.AclnnError(161002, "memory gone")

    def outcome(call):
        try:
            call()
        except opsnn.AclnnError as exc:
            return exc.status, exc.message
        return 0, None

    # after the record, run by another thread
    stream, event, got, steps = Stream(0x9B), Event(0x6B), [], {k: threading.Event() for k in ("queued", "go")}

    def worker():
        event.record(stream)
        stream.enqueue("w", failing)
        steps["queued"].set()
        steps["go"].wait(10)
        got.extend([outcome(event.synchronize), outcome(stream.synchronize), outcome(stream.synchronize)])

    thread = threading.Thread(target=worker)
    thread.start()
    assert steps["queued"].wait(10)
    assert outcome(stream.synchronize) == (500003, "stream task w failed: memory gone")
    steps["go"].set()
    thread.join(10)
    assert event.status == COMPLETE
    assert got[0] == (0, None), "the record ran, and nothing queued before it failed"
    assert got[1] == (500003, ("1 task(s) this thread queued on stream 0x9b failed or were dropped, not run: "
                               "the failure was met by another thread (its synchronize or event wait) or by "
                               "another stream's stream_wait_event (stream task w failed: memory gone)"))
    assert got[2] == (0, None), "told once"

    # through another stream's wait, one thread
    a, b, event = Stream(0x9C), Stream(0x9D), Event(0x6C)
    a.enqueue("k", failing)
    event.record(a)
    b.enqueue("wait", event.waiter())
    assert outcome(b.synchronize) == (500003, "stream task wait failed: stream task k failed: memory gone")
    assert outcome(a.synchronize) == (500003, ("2 task(s) this thread queued on stream 0x9c failed or were "
                                               "dropped, not run: the failure was met by another thread (its "
                                               "synchronize or event wait) or by another stream's "
                                               "stream_wait_event (stream task k failed: memory gone)"))
    assert outcome(a.synchronize) == (0, None) and event.status == NOT_READY  # (the record was dropped)

    # (a second breaker) failures before and after the record, both noted: each told where it belongs
    stream, event, got = Stream(0x9E), Event(0x6D), []
    steps = [threading.Event() for _ in range(4)]

    def failing_as(name):
        def fail():
            raise opsnn.AclnnError(161002, f"{name} gone")
        return fail

    def worker_both():
        stream.enqueue("early", failing_as("early"))
        steps[0].set()
        steps[1].wait(10)
        event.record(stream)
        stream.enqueue("late", failing_as("late"))
        steps[2].set()
        steps[3].wait(10)
        got.extend([outcome(event.synchronize), outcome(stream.synchronize), outcome(stream.synchronize)])

    thread = threading.Thread(target=worker_both)
    thread.start()
    for first, second in ((0, 1), (2, 3)):
        assert steps[first].wait(10)
        assert outcome(stream.synchronize)[0] == 500003
        steps[second].set()
    thread.join(10)
    assert [(status, message and message[:9], message and message[-30:]) for status, message in got] == [
        (500003, "1 task(s)", "(stream task early failed: early gone)"[-30:]),
        (500003, "1 task(s)", "(stream task late failed: late gone)"[-30:]), (0, None, None)]


def test_stream_destroyed_with_queued_work(dev):
    """destroy_stream with work queued runs it first (the destroy waits, as aclrtDestroyStream);
    afterwards launches on it -> 361001, synchronize / destroy -> 200005; the default stream
    cannot be destroyed (100000). Queued work that fails: 500003, the stream destroyed all the
    same (as reset_device and finalize say of theirs)."""
    stream, _ = acl.rt.create_stream()
    outs = []
    for _ in range(3):
        ws, ex, oa = planned(dev)
        assert aclnn.aclnnLeakyReluBackward(None, ws, ex, stream) == 0
        outs.append(oa)
    assert acl.rt.destroy_stream(stream) == 0
    for oa in outs:
        np.testing.assert_array_equal(read_out(dev, oa), LEAKY_05)
    ws, ex, oa = planned(dev)
    fail_msg(aclnn.aclnnLeakyReluBackward(None, ws, ex, stream), 361001, "not a live stream")
    fail_msg(acl.rt.synchronize_stream(stream), 200005)
    fail_msg(acl.rt.destroy_stream(stream), 200005)
    fail_msg(acl.rt.destroy_stream(None), 100000, "default stream")
    msg = fail_msg(acl.rt.destroy_stream(0), 100000, "default stream")
    assert msg.count("destroy_stream:") == 1, msg  # (it named the call twice: a breaker)
    for junk in ("s", 1.5, [1], Sentinel()):
        fail_msg(acl.rt.synchronize_stream(junk), 200005)
    # (a breaker) queued work that fails: 500003 saying the stream was destroyed all the same (it
    # said only that the task failed, as if the stream were still there)
    stream, _ = acl.rt.create_stream()
    src, dst = dev.malloc(16), dev.malloc(16)
    assert acl.rt.memcpy_async(dst, 16, src, 16, acl.ACL_MEMCPY_DEVICE_TO_DEVICE, stream) == 0
    _free(dev, src)
    assert fail_msg(acl.rt.destroy_stream(stream), 500003) == (
        "destroy_stream: the stream was destroyed, but queued work failed: stream task memcpy_async failed: "
        f"the device memory at {src:#x} was freed before the copy ran")
    assert fail_msg(acl.rt.destroy_stream(stream), 200005) == (
        f"destroy_stream: stream {stream:#x} is not a live stream (create it with acl.rt.create_stream)")


# ============================================================================================
# the Pythonic API
# ============================================================================================
@pytest.mark.parametrize("arg, status", [
    (None, 161001), ("abc", 161002), (Sentinel(), 161002), (Exploding(), 161002), ({}, 161002),
    ([[1.0], [1.0, 2.0]], 161002), (np.array([None, None]), 161002), (np.array(["a", "b"]), 161002),
    (np.zeros(4, np.int32), 161002), (np.zeros(4, np.complex64), 161002), (np.zeros((1,) * 9, F32), 161002),
    (np.zeros(3, F32), 161002)])
def test_pythonic_wrong_types(arg, status):
    """Pythonic calls with None, strings, objects, ragged lists, object / string / int / complex
    arrays, 9-d or misshaped arrays -> AclnnError with the aclnn status; never another exception."""
    for fn, args in ((opsnn.leaky_relu_backward, (arg, X)), (opsnn.leaky_relu_backward, (G, arg)),
                     (opsnn.hardtanh_backward, (arg, X)), (opsnn.hardtanh_backward, (G, arg))):
        py_fail(status, fn, *args, untouched=[G, X])
    py_fail(161002, opsnn.leaky_relu_backward, 1j, X, words=["gradOutput"])  # a weak scalar: no float32 value


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
def test_pythonic_odd_arrays():
    """Arrays of unusual kinds: big-endian -> AclnnError 161002 (no aclDataType); misaligned
    data, record fields (byte strides that are no element multiple), np.matrix and masked
    arrays (their data; a mask is not applied) compute correctly, as inputs and as out."""
    py_fail(161002, opsnn.leaky_relu_backward, G.astype(">f4"), X,
            words=["gradOutput has dtype float32 in non-native byte order", "no aclDataType",
                   "one of [DT_FLOAT, DT_FLOAT16, DT_DOUBLE, DT_BF16]", "newbyteorder('=')"])
    py_fail(161002, opsnn.hardtanh_backward, G, X, out=np.zeros(4, ">f4"), words=["out has dtype float32"])
    py_fail(161002, opsnn.leaky_relu_backward, G, X.astype(np.longdouble), words=["self has dtype float128"])
    # text and records name their layout (a breaker: "str64", "void32" hid what the array held)
    for array, said in ((np.array(["a", "bc"]), "self has dtype str64 (<U2, a NumPy string dtype)"),
                        (np.zeros(2, "S4"), "self has dtype bytes32 (|S4, a NumPy bytes dtype)"),
                        (np.zeros(2, [("a", "<f4")]), "self has dtype void32 ([('a', '<f4')], a NumPy structured")):
        py_fail(161002, opsnn.leaky_relu, array, words=[said])
    py_fail(161002, opsnn.leaky_relu_backward, G, 2**70, words=[f"self {2**70} is an int beyond int64 and uint64"])
    misaligned = np.zeros(17, np.uint8)[1:].view(F32)
    misaligned[:] = G
    record = np.zeros(4, dtype=[("a", F32), ("b", np.int8)])["a"]
    record[:] = X
    for g, x in ((misaligned, X), (G, record), (np.matrix(G), np.matrix(X)), (np.ma.array(G, mask=[0, 1, 0, 0]), X)):
        res = opsnn.leaky_relu_backward(g, x, 0.5)
        np.testing.assert_array_equal(np.asarray(res).reshape(-1), LEAKY_05)
    for out in (np.zeros(17, np.uint8)[1:].view(F32), np.zeros(4, dtype=[("a", F32), ("b", np.int8)])["a"],
                np.matrix(np.zeros(4, F32))):
        shape = out.shape
        res = opsnn.hardtanh_backward(G.reshape(shape), X.reshape(shape), out=out)
        assert res is out
        np.testing.assert_array_equal(np.asarray(out).reshape(-1), HT_01)


@pytest.mark.parametrize("out", ["readonly", "list", "tuple", "scalar", "wrong_shape", "int32", "f64_hardtanh"])
def test_pythonic_out_misuse(out):
    """out= that is read-only, not an array, misshaped or of a refused dtype -> AclnnError
    161002; out and the inputs are unchanged."""
    ro = np.zeros(4, F32)
    ro.flags.writeable = False
    target = {"readonly": ro, "list": [0.0] * 4, "tuple": (0.0,) * 4, "scalar": 0.0,
              "wrong_shape": np.zeros((2, 2), F32), "int32": np.zeros(4, np.int32),
              "f64_hardtanh": np.zeros(4, F64)}[out]
    fn = opsnn.hardtanh_backward if out == "f64_hardtanh" else opsnn.leaky_relu_backward
    keep = [a for a in (target,) if isinstance(a, np.ndarray)]
    py_fail(161002, fn, G, X, out=target, untouched=[G, X] + keep, words=["out"])


def test_refusals_show_byte_strides_that_are_no_element_multiple():
    """(A breaker) a refusal naming an array whose byte strides are no multiple of its elements (a
    record field, an odd as_strided) printed "strides [-1]", a stride no view has; it shows the
    byte strides now. A reversed view's element stride of -1 is shown as it is."""
    from numpy.lib.stride_tricks import as_strided

    out = as_strided(np.zeros(64, np.uint8).view(F32), (5,), (2,))
    error = py_fail(161002, opsnn.leaky_relu, np.ones(5, F32), out=out)
    assert error.message.startswith("LeakyRelu: out DT_FLOAT [5] byte strides [2] (no multiple of its 4-byte "
                                    "elements) ND is not a valid output: two of its elements share memory")
    base = np.zeros(8, F32)
    error = py_fail(161002, opsnn.leaky_relu, base[:4], out=base[1:5][::-1])
    assert "out DT_FLOAT [4] strides [-1] ND" in error.message, error.message


def test_pythonic_hostile_write_targets():
    """(A breaker) an out= or in-place self whose attributes raise (a hostile __getattr__, a torch
    subclass whose __torch_function__ raises) let that exception escape an in-place call, and was
    561000 as out=; a NumPy subclass whose view() raised was 561000, and one whose view() copied
    was "updated" in place unchanged. Now 161002 naming the argument, nothing written, and an
    ndarray subclass is read through ndarray's own view (its memory, whatever view() does)."""
    torch = pytest.importorskip("torch")

    class Raising(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            raise ValueError("refused by __torch_function__")

    class ViewRaises(np.ndarray):
        def view(self, *args, **kwargs):
            raise RuntimeError("no view")

    class ViewCopies(np.ndarray):
        def view(self, *args, **kwargs):
            return np.ndarray.view(self.copy(), *args, **kwargs)

    x = np.array([-2.0, 0.5], F32)
    for name, call in (("self", lambda t: opsnn.leaky_relu_(t)), ("out", lambda t: opsnn.leaky_relu(x, out=t)),
                       ("out", lambda t: opsnn.hardtanh_backward(x, x, out=t))):
        for target, why in ((Exploding(), "RuntimeError: hostile attribute"),
                            (torch.zeros(2).as_subclass(Raising), "ValueError: refused by __torch_function__")):
            error = py_fail(161002, call, target, untouched=[x])
            assert f"{name} cannot be read as an array to write into: {why}" in error.message, error.message
    for cls in (ViewRaises, ViewCopies):
        y = x.copy().view(cls)
        assert opsnn.leaky_relu_(y, 0.5) is y and np.ndarray.view(y, np.ndarray).tolist() == [-1.0, 0.5]
        np.testing.assert_array_equal(np.ndarray.view(opsnn.leaky_relu(y, 0.5), np.ndarray), [-0.5, 0.5])


def _read_only(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("call,says", [
    (lambda ro: opsnn.leaky_relu_backward(G.astype(np.int32), X, 0.5, out=ro(F32)),
     "LeakyReluBackward: tensor gradOutput has dtype DT_INT32, which Ascend910B does not support"),
    (lambda ro: opsnn.hardtanh_backward(G.astype(F64), X.astype(F64), out=ro(F64)),
     "HardtanhBackward: tensor gradOutput has dtype DT_DOUBLE, which Ascend910B does not support"),
    (lambda ro: opsnn.leaky_relu_backward(G, X, -0.5, True, out=ro(F32)),
     "LeakyReluBackward: selfIsResult is true with negativeSlope"),
    (lambda ro: opsnn.leaky_relu_backward(G, X, 0.5, out=ro(F32)[:2]),
     "LeakyReluBackward: out shape must equal the broadcast result shape"),
    (lambda ro: opsnn.leaky_relu_(ro(np.int32)), "InplaceLeakyRelu: tensor self has dtype DT_INT32"),
    (lambda ro: opsnn.hardtanh_(ro(F32), 1.0, -1.0), "InplaceHardtanh: clipValueMin"),
], ids=["leaky_int32_grad", "hardtanh_f64", "self_is_result", "out_shape", "inplace_int32", "inplace_min_gt_max"])
def test_pythonic_unwritable_target_after_the_aclnn_checks(call, says):
    """A read-only out= or in-place self is opsnn's refusal, not CANN's: every check of the aclnn
    API comes first, with its status and text (a breaker: an int32 gradOutput with a read-only
    out was told "out is a read-only array"); nothing is written."""
    made = []

    def ro(dtype):
        made.append(_read_only(np.full(4, 7, dtype)))
        return made[-1]

    err = py_fail(161002, call, ro, words=[says], untouched=[G, X])
    assert "read-only" not in err.message and made and not made[0].flags.writeable
    assert (made[0] == 7).all()


def test_pythonic_unwritable_target_refused_once_the_aclnn_checks_pass():
    """With every aclnn check passed, a read-only out= / in-place self is 161002 naming it,
    before anything is written (a plan cache warmed by a writable twin does not write it
    either); a None argument beside it is 161001 first, an out that is no array at all is
    refused at once (a wrong type, as a wrong handle type), before an int32 gradOutput's dtype."""
    opsnn.leaky_relu_backward(G, X, 0.5, out=np.zeros(4, F32))  # the plan cache knows this call
    opsnn.leaky_relu_(X.copy(), 0.5)
    ro = _read_only(np.full(4, 7.0, F32))
    py_fail(161002, opsnn.leaky_relu_backward, G, X, 0.5, out=ro, untouched=[G, X, ro],
            words=["LeakyReluBackward: out is a read-only array; the result needs a writable one"])
    py_fail(161002, opsnn.leaky_relu_, ro, 0.5, untouched=[ro],
            words=["InplaceLeakyRelu: self is a read-only array; the result needs a writable one"])
    py_fail(161001, opsnn.leaky_relu_backward, G, None, 0.5, out=ro, untouched=[G, ro],
            words=["self must be an aclTensor, got a null pointer"])
    py_fail(161001, opsnn.hardtanh_, ro, None, untouched=[ro], words=["clipValueMin must be an aclScalar"])
    py_fail(161002, opsnn.leaky_relu_backward, G.astype(np.int32), X, 0.5, out=[0.0] * 4,
            words=["out must be an array (NumPy or DLPack) to be written, got list"])
    assert (ro == 7.0).all()


def test_pythonic_huge_broadcast():
    """A broadcast whose result would need more than the emulated device memory -> AclnnError
    200000 (ACL_ERROR_BAD_ALLOC), decided before allocating; a huge out= that aliases itself
    -> 161002."""
    rss = rss_bytes()
    big = np.broadcast_to(np.float32(1.0), (2**40,))
    py_fail(200000, opsnn.leaky_relu_backward, big, X[:1], words=["bytes"])
    py_fail(200000, opsnn.hardtanh_backward, big, big)
    out = np.lib.stride_tricks.as_strided(np.zeros(1, F32), (2**40,), (0,))
    py_fail(161002, opsnn.leaky_relu_backward, big, X[:1], out=out, words=["share memory"])
    assert rss_bytes() - rss < 64 << 20


def test_pythonic_failure_leaves_arguments_unchanged():
    """Every failing Pythonic call leaves its inputs and out= bytes as they were (checks run
    before any write)."""
    g, x, out = G.copy(), X.copy(), np.full(4, 7.0, F32)
    for kwargs in ({"negative_slope": -0.5, "self_is_result": True}, {"negative_slope": "x"},
                   {"negative_slope": None}, {"self_is_result": "yes"}):
        py_fail(161001 if kwargs.get("negative_slope", 0) is None else 161002,
                opsnn.leaky_relu_backward, g, x, out=out, untouched=[g, x, out], **kwargs)
    py_fail(161002, opsnn.hardtanh_backward, g.astype(F16), x, out=out, untouched=[g, x, out])
    assert (out == 7.0).all() and (g == G).all() and (x == X).all()


def test_pythonic_failure_sets_recent_error():
    """A failing Pythonic call leaves AclnnError.message as get_recent_err_msg()'s next text, as
    the aclnn boundary does; the in-place functions' own refusals too."""
    acl.get_recent_err_msg()
    err = py_fail(161002, opsnn.hardtanh, X, 2.0, 1.0, words=["clipValueMin"])
    assert acl.get_recent_err_msg() == err.message
    ro = X.copy()
    ro.flags.writeable = False
    err = py_fail(161002, opsnn.hardtanh_, ro, words=["read-only"], untouched=[ro])
    assert acl.get_recent_err_msg() == err.message
    err = py_fail(161002, opsnn.leaky_relu_, "x", words=["self"])
    assert acl.get_recent_err_msg() == err.message and acl.get_recent_err_msg() is None


def test_aclnn_error_pickles():
    """AclnnError (and its subclasses, whose __init__ takes other arguments) survives pickling,
    as a failure sent back from a worker process: same type, status, message and text."""
    import pickle

    from opsnn._core.tiling.base import TilingError

    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.hardtanh(X, 2.0, 1.0)
    for exc in (info.value, TilingError("LeakyReluGrad", "tile of 0 elements")):
        back = pickle.loads(pickle.dumps(exc))
        assert type(back) is type(exc) and str(back) == str(exc)
        assert (back.status, back.message) == (exc.status, exc.message)


def test_pythonic_scalar_ints_beyond_torch():
    """A Python int scalar outside [-2**63, 2**64) (what torch.Scalar holds) -> 161002 naming the
    argument, the value shortened; one in [2**63, 2**64) is used (as a double, its float32 value
    here, like torch's uint64 Scalar)."""
    for value in (2**64, -2**63 - 1, 10**400):
        err = py_fail(161002, opsnn.leaky_relu_backward, G, X, value, words=["negativeSlope", "2**64"])
        assert len(err.message) < 200
    py_fail(161002, opsnn.hardtanh, X, -10**30, 1, words=["clipValueMin"])
    big = 2**63 + 2**40
    expected = np.where(X > 0, G, G * np.float32(big))
    np.testing.assert_array_equal(opsnn.leaky_relu_backward(G, X, big), expected)


def test_pythonic_numpy_scalars_are_strong():
    """A NumPy scalar passed as a tensor is a 0-d array of its own dtype (NumPy 2 / NEP 50),
    np.float64 included, though it subclasses float; a Python float is weak (takes the other
    input's dtype)."""
    x16 = X.astype(F16)
    assert opsnn.leaky_relu_backward(np.float64(2.0), x16, 0.5).dtype == F64
    assert opsnn.leaky_relu_backward(np.float32(2.0), x16, 0.5).dtype == F32
    assert opsnn.leaky_relu_backward(2.0, x16, 0.5).dtype == F16
    np.testing.assert_array_equal(opsnn.leaky_relu_backward(np.float64(2.0), x16, 0.5),
                                  np.where(x16 > 0, 2.0, 1.0))


def test_pythonic_zero_d_arrays_as_scalar_arguments():
    """A 0-d array as a scalar argument is its NumPy scalar (a common carrier of one; a breaker:
    161002 "must be a number, got ndarray", where opsnn.torch takes a 0-d tensor); an array of
    any other rank is refused naming its shape; two Python numbers as both tensors are what
    np.asarray makes them: floats float64, an int int64, refused with a note naming the number
    (a breaker: README said float64 for both, and the refusal named a dtype the call never gave)."""
    x16 = X.astype(F16)
    for _ in range(2):  # the full path, then the plan cache
        np.testing.assert_array_equal(opsnn.leaky_relu_backward(G, X, np.array(0.5)), LEAKY_05)
        np.testing.assert_array_equal(opsnn.hardtanh_backward(G, X, np.array(-1.0, F16), np.array(1)), HT_01)
        np.testing.assert_array_equal(opsnn.leaky_relu(x16, np.array(0.1, F32)), opsnn.leaky_relu(x16, np.float32(0.1)))
    for bad in (np.array([0.5]), np.zeros((1, 1))):
        py_fail(161002, opsnn.leaky_relu_backward, G, X, bad, words=["negativeSlope", "0-d array",
                                                                     f"ndarray of shape {bad.shape}"])
    assert opsnn.leaky_relu_backward(2.0, -1.0, 0.5).dtype == F64
    py_fail(161002, opsnn.leaky_relu_backward, 1, -2.0, words=[
        "gradOutput has dtype DT_INT64", ("(gradOutput is the Python number 1, a 0-d tensor of DT_INT64 as NumPy "
                                          "makes it: no input is an array whose dtype it could take)")])
    # the flag too (a breaker: np.True_ was taken, np.array(True) refused)
    assert opsnn.leaky_relu_backward(G, X, 0.5, np.array(True)).tolist() == opsnn.leaky_relu_backward(
        G, X, 0.5, True).tolist()
    py_fail(161002, opsnn.leaky_relu_backward, G, X, 0.5, np.array([True]), words=["selfIsResult"])


def test_pythonic_void_scalars_are_refused_as_arguments():
    """Found by breakers: a raw or structured NumPy void as a scalar reached the plan cache's key,
    whose float() raised: 561000 ("an opsnn bug"). It is the argument's 161002 now, on a warm
    cache too; bfloat16 scalars (also of kind V) still key and run."""
    x = X.astype(F32)
    for _ in range(2):
        opsnn.leaky_relu(x, 0.5)
        opsnn.hardtanh_backward(x, x, -0.5, 1.0)
    for junk in (np.void(b"\0" * 4), np.zeros(1, dtype=[("a", "f4")])[0]):
        py_fail(161002, opsnn.leaky_relu, x, junk, words=["negativeSlope", "no aclDataType describes"], untouched=[x])
        py_fail(161002, opsnn.hardtanh_backward, x, x, junk, 1.0, words=["min", "no aclDataType describes"])
    # (a breaker: np.longdouble's refusal quoted a runtime status and ACL_DT_UNDEFINED)
    py_fail(161002, opsnn.leaky_relu, x, np.longdouble(0.5),
            words=["negativeSlope", "NumPy float128 scalar, a dtype no aclDataType describes"])
    for _ in range(3):
        np.testing.assert_array_equal(opsnn.leaky_relu(x, ml_dtypes.bfloat16(0.5)), opsnn.leaky_relu(x, 0.5))


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_dlpack_pending_negation():
    """A torch view with a pending negation (``z.conj().imag``: is_neg()) would cross DLPack
    without it, with every value's sign wrong: refused (161002, naming the argument and the
    fix); resolved, it computes. A view with a pending conjugation is refused by DLPack itself."""
    torch = pytest.importorskip("torch")
    z = torch.tensor([1 + 1j, 2 - 3j, -1 + 0.5j])
    neg = z.conj().imag
    assert neg.is_neg()
    before = neg.clone()
    py_fail(161002, opsnn.hardtanh, neg, -10.0, 10.0, words=["self", "resolve_neg"])
    py_fail(161002, opsnn.leaky_relu_backward, neg, torch.ones(3), words=["gradOutput", "resolve_neg"])
    py_fail(161002, opsnn.hardtanh_, neg, words=["InplaceHardtanh: self", "resolve_neg", "in-place"])
    assert torch.equal(neg, before)
    np.testing.assert_array_equal(opsnn.hardtanh(neg.resolve_neg(), -10.0, 10.0), [-1.0, 3.0, -0.5])
    py_fail(161002, opsnn.hardtanh, z.conj(), words=["DLPack"])
    # a conjugated complex32 out got torch's internal message on views of conjugate tensors
    half = torch.zeros(3, dtype=torch.complex32).conj()
    py_fail(161002, opsnn.leaky_relu_backward, np.ones(3, np.float32), np.ones(3, np.float32), out=half,
            words=["out cannot be read through DLPack", "conjugate bit"])


def test_dlpack_tensors_without_memory():
    """A torch tensor that holds no memory of its values crossed DLPack over memory that is not
    its values (a breaker): a ZeroTensor (reads as zeros) and a FakeTensor read as garbage, and a
    result written into one "succeeded" and was lost (a ZeroTensor is immutable). Refused, 161002
    naming the argument, what it is and what is expected, as an input of either op family, as
    ``out`` and as an in-place ``self``; nothing written (no version bump), the other arguments
    untouched. A meta tensor and a wrapper subclass holding no storage are named alike."""
    torch = pytest.importorskip("torch")
    from torch._subclasses.fake_tensor import FakeTensorMode

    class Hollow(torch.Tensor):  # a wrapper subclass: shape and dtype, no storage of its own
        @staticmethod
        def __new__(cls, shape):
            return torch.Tensor._make_wrapper_subclass(cls, shape, dtype=torch.float32)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise NotImplementedError(func)

    with FakeTensorMode():
        fake = torch.ones(4)
    x, g = torch.tensor([-1.0, 0.0, 0.5, 2.0]), torch.ones(4)
    said = {"ZeroTensor": ["ZeroTensor", "holds no memory", "expected a tensor with memory", "clone()"],
            "FakeTensor": ["FakeTensor", "storage is on the meta device", "expected a tensor holding its data"]}
    for kind, value in (("ZeroTensor", torch._efficientzerotensor(4)), ("FakeTensor", fake)):
        words = said[kind]
        py_fail(161002, opsnn.leaky_relu, value, words=["LeakyRelu: self is a torch", *words])
        py_fail(161002, opsnn.hardtanh, value, words=["Hardtanh: self is a torch", *words])
        py_fail(161002, opsnn.leaky_relu_backward, value, x, words=["gradOutput is a torch", *words], untouched=[x])
        py_fail(161002, opsnn.hardtanh_backward, g, value, words=["HardtanhBackward: self is a torch", *words],
                untouched=[g])
        written = ["immutable", "result would be lost"] if kind == "ZeroTensor" else ["no memory to write the result"]
        version = value._version
        py_fail(161002, opsnn.leaky_relu, x, out=value, words=["LeakyRelu: out is a torch", kind, *written],
                untouched=[x])
        py_fail(161002, opsnn.leaky_relu_backward, g, x, out=value,
                words=["LeakyReluBackward: out is a torch", kind, *written], untouched=[g, x])
        py_fail(161002, opsnn.hardtanh_backward, g, x, out=value,
                words=["HardtanhBackward: out is a torch", kind, *written], untouched=[g, x])
        py_fail(161002, opsnn.hardtanh_, value, words=["InplaceHardtanh: self is a torch", kind, *written])
        assert value._version == version, "a refused call bumped the version of its out"
    zero = torch._efficientzerotensor(4)
    assert zero._is_zerotensor() and torch.equal(zero, torch.zeros(4))
    np.testing.assert_array_equal(opsnn.leaky_relu_backward(zero.clone(), x), np.zeros(4, F32))
    py_fail(161002, opsnn.leaky_relu, torch.ones(4, device="meta"),
            words=["self is a torch Tensor on device meta", "no values to read"])
    py_fail(161002, opsnn.leaky_relu, Hollow((3,)), words=["self is a torch Hollow of 3 elements",
                                                           "data pointer is null", "no values to read"])


def test_recent_error_is_fetched_once(acl_runtime):
    """get_recent_err_msg returns the last failure's text once, then None; a success does not
    clear an earlier failure's text (CANN keeps the last error)."""
    acl.get_recent_err_msg()
    assert acl.rt.free(None) == 100000
    assert aclnn.aclDestroyAclOpExecutor(None) == 561103
    msg = acl.get_recent_err_msg()
    assert "executor" in msg and acl.get_recent_err_msg() is None


def test_bfloat16_dlpack_tensors():
    """NumPy's DLPack import has no bfloat16: a torch bfloat16 tensor crosses as its int16 view
    (same memory and strides), as an input and in place, a transposed view too, bit for bit
    torch's; one that requires grad is refused as torch refuses every dtype's export."""
    torch = pytest.importorskip("torch")
    g = torch.tensor([1.5, -2.0, 3.0, 0.25, -0.0, 7.0], dtype=torch.bfloat16)
    x = torch.tensor([-1.0, 0.0, 0.5, -3.0, 2.0, -0.0], dtype=torch.bfloat16)
    got = opsnn.leaky_relu_backward(g, x, 0.2)
    want = torch.ops.aten.leaky_relu_backward(g, x, 0.2, False)
    assert got.dtype == np.dtype("bfloat16") and got.view(np.int16).tolist() == want.view(torch.int16).tolist()
    got = opsnn.hardtanh_backward(g, x, -1.0, 1.0)
    want = torch.ops.aten.hardtanh_backward(g, x, -1.0, 1.0)
    assert got.view(np.int16).tolist() == want.view(torch.int16).tolist()
    m = torch.tensor([[-2.0, 0.5, 3.0], [4.0, -0.25, 1.0]], dtype=torch.bfloat16)
    view = m.t()  # in place through a transposed view: the update lands in m
    assert opsnn.hardtanh_(view) is view
    assert m.float().tolist() == [[-1.0, 0.5, 1.0], [1.0, -0.25, 1.0]]
    assert opsnn.leaky_relu_(m, 0.5) is m and m.float().tolist() == [[-0.5, 0.5, 1.0], [1.0, -0.125, 1.0]]
    needs_grad = m.clone().requires_grad_()
    error = py_fail(161002, opsnn.leaky_relu, needs_grad, words=["self cannot be read through DLPack", "require"])
    assert error.status == 161002


def test_malformed_variables_do_not_stop_opsnn():
    """A fresh process with all three variables malformed imports opsnn, runs a call on the
    compiled backend and keeps the defaults; each variable is named in a warning that points at
    the caller's line that read it (the import of its kernel backend, the output pool's too: read
    at import, its warning pointed at the console script's launcher under the opsnn command), not
    at opsnn's."""
    script = ("import numpy as np, opsnn\n"
              "from opsnn._core import outpool\n"
              "from opsnn.kernels import numba_backend as nb, parallelism as par\n"
              "r = opsnn.hardtanh_backward(np.ones(1 << 18, np.float32), np.resize(np.array([-2, 0.5, 2], np.float32), "
              "1 << 18), -1.0, 1.0)[:3]\n"
              "print(r.tolist(), outpool.POOL.max_bytes, par.PARALLEL_MIN_BYTES >= 1 << 20,"  # (measured: 1 MiB up)
              " nb.STREAM_MIN_BYTES)\n")
    env = dict(os.environ, OPSNN_POOL_BYTES="1e9x", OPSNN_PARALLEL_MIN_BYTES="16 megs",
               OPSNN_STREAM_MIN_BYTES="abc", OPSNN_BACKEND="numba")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[0.0,", "1.0,", "0.0]", str(2 << 30), "True", str(64 << 20)]
    for name, line in (("OPSNN_POOL_BYTES='1e9x'", 4), ("OPSNN_PARALLEL_MIN_BYTES='16 megs'", 3),
                       ("OPSNN_STREAM_MIN_BYTES='abc'", 3)):
        assert f"<string>:{line}: RuntimeWarning: opsnn: ignoring {name}" in done.stderr, done.stderr



def test_a_malformed_pool_size_is_told_at_the_first_call_of_any_size_once():
    """(a new user) OPSNN_POOL_BYTES=abc was told only once an output of 1 MiB or more was pooled:
    small calls ran silent. It is read with the kernel backend's variables, at the first call,
    and told once, at that call's line, whichever the backend."""
    script = ("import numpy as np, opsnn\n"
              "x = np.ones(4, np.float32)\n"
              "opsnn.leaky_relu(x, 0.1)\n"
              "opsnn.leaky_relu(x, 0.1)\n"
              "opsnn.leaky_relu(np.ones(1 << 20, np.float32), 0.1)\n")
    env = dict(os.environ, OPSNN_POOL_BYTES="abc", OPSNN_BACKEND="numpy")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("ignoring OPSNN_POOL_BYTES") == 1, done.stderr
    assert "<string>:3: RuntimeWarning: opsnn: ignoring OPSNN_POOL_BYTES='abc'" in done.stderr, done.stderr


def test_cli_verify_files_without_cases(tmp_path, capsys):
    """An empty file, a header alone, '{}' or '[]' hold no case: a usage error, not a green run
    of 0 cases."""
    from opsnn import cli

    (tmp_path / "a.csv").write_text("")
    (tmp_path / "b.csv").write_text("a,b\n")
    (tmp_path / "c.json").write_text("{}")
    (tmp_path / "d.json").write_text("[]")
    for name, kind in (("a.csv", "ttk kernel ST csv"), ("b.csv", "ttk kernel ST csv"),
                       ("c.json", "atk aclnn ST json"), ("d.json", "atk aclnn ST json")):
        assert cli.main(["verify", str(tmp_path / name)]) == 2
        captured = capsys.readouterr()
        assert f"{name}: holds no case; expected a case file ({kind})" in captured.err, captured.err
        assert "0 cases" not in captured.out


@pytest.mark.parametrize("argv, words", [
    (["--quick", "--ops", "HardtanhBackward", "--dtypes", "f64"],
     ["opsnn bench: error: nothing to measure for HardtanhBackward: it has none of --dtypes f64 (its dtypes: f32 f16 bf16)"]),
    (["--quick", "--ops", "LeakyRelu", "--layouts", "broadcast"],
     ["nothing to measure for LeakyRelu", "broadcast is the backward pair's"]),
    (["--quick", "--threads", "1", "100000"], ["argument --threads: expected an integer from 1 to",
                                               "got '100000' (numba's pool has"]),
    (["--sizes", "-5"], ["argument --sizes", "integer >= 1", "'-5'"]),
    (["--sizes", "1.5e3", "1e-2"], ["argument --sizes", "'1e-2'"]),
    (["--sizes", "1e999999999"], ["argument --sizes", "'1e999999999'"]),  # refused at once, no billion digits
    (["--threads", "0"], ["argument --threads", "integer from 1 to", "'0'"]),
], ids=str)
def test_bench_selection_that_measures_nothing(tmp_path, capsys, argv, words):
    """A usage error (exit 2) before anything is measured or written, naming why."""
    pytest.importorskip("torch")
    pytest.importorskip("numba")
    from opsnn import cli

    try:
        code = cli.main(["bench", *argv, "--out-dir", str(tmp_path / "out")])
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    for word in words:
        assert word in err, err
    assert not (tmp_path / "out").exists()


def test_in_place_launches_on_the_pool_write_their_result(acl_env, monkeypatch):
    """Found by a breaker: an in-place launch with no temporaries, on the thread pool (work above
    the parallel threshold, forced here to 0), returned 0 and wrote nothing: its compiled call
    carried only its planned thread count in ``check``, which the kernel read as "compare the
    address ranges" without the bit that allows out to be exactly an input, so it refused the
    in-place view. InplaceLeakyRelu, LeakyReluBackward into gradOutput, InplaceHardtanh."""
    import cases

    from opsnn import _fastpath, engine
    from opsnn.kernels import parallelism

    monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 0)
    engine.clear_plan_cache()
    _fastpath.clear()
    x = cases.filled((64, 33), F32, 5, cases.self_specials(F32))
    g = cases.filled((64, 33), F32, 6, cases.grad_specials(F32))
    for _ in range(2):  # a fresh executor, then one that reuses its compiled call
        xt, gt, other = acl_env.put(x), acl_env.put(g), acl_env.put(x)
        slope, lo, hi = acl_env.scalar(0.5, "DOUBLE"), acl_env.scalar(-0.5, "DOUBLE"), acl_env.scalar(0.5, "DOUBLE")
        launches = [(aclnn.aclnnInplaceLeakyReluGetWorkspaceSize(xt.tensor, slope), aclnn.aclnnInplaceLeakyRelu),
                    (aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt.tensor, other.tensor, slope, False, gt.tensor),
                     aclnn.aclnnLeakyReluBackward)]
        for (ws, ex, ret), run in launches:
            assert ret == 0 and ws == 0, acl.get_recent_err_msg()
            assert run(None, 0, ex, acl_env.stream) == 0 and acl.rt.synchronize_stream(acl_env.stream) == 0
        cases.assert_bits_equal(xt.view(), opsnn.leaky_relu(x, 0.5))
        cases.assert_bits_equal(gt.view(), cases.ref_leaky(g, x, np.float32(0.5)))
        ws, ex, ret = aclnn.aclnnInplaceHardtanhGetWorkspaceSize(other.tensor, lo, hi)
        assert ret == 0 and aclnn.aclnnInplaceHardtanh(None, ws, ex, acl_env.stream) == 0
        assert acl.rt.synchronize_stream(acl_env.stream) == 0
        cases.assert_bits_equal(other.view(), opsnn.hardtanh(x, -0.5, 0.5))


def test_automatic_backend_falls_back_when_numba_fails_other_than_by_import():
    """(a new user's breaker) numba imports but opsnn's compiled backend fails to load with
    another error: a read-only install without a writable cache, where numba refuses
    ``cache=True`` ("no locator available"), or NUMBA_THREADING_LAYER=tbb without TBB
    (ValueError). Every call failed with 561000; the automatic choice now takes the NumPy backend
    with the one warning, which names the error, and naming numba raises ImportError."""
    code = (
        "import warnings\n"
        "import numba\n"
        "def refused(*args, **kwargs):\n"
        "    raise RuntimeError(\"cannot cache function 'gather_tile': no locator available\")\n"
        "numba.njit = refused\n"
        "import numpy as np, opsnn\n"
        "from opsnn import kernels\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    r = opsnn.leaky_relu_backward(np.ones(3, np.float32), -np.ones(3, np.float32), 0.5)\n"
        "assert kernels.default_name() == 'numpy' and (r == 0.5).all()\n"
        "[warning] = [x for x in w if issubclass(x.category, kernels.BackendFallbackWarning)]\n"
        "assert 'RuntimeError' in str(warning.message) and 'no locator' in str(warning.message), warning\n"
        "try:\n"
        "    kernels.get('numba')\n"
        "except ImportError as exc:\n"
        "    assert 'no locator' in str(exc), exc\n"
        "else:\n"
        "    raise AssertionError('numba loaded')\n"
        "print('ok')\n")
    assert "ok" in run_python(code)


def test_numba_disable_jit_falls_back_to_numpy_once():
    """(a packaging breaker) Under NUMBA_DISABLE_JIT=1 numba compiles nothing: the first launch of
    1 MiB or more stalled ~16 s (the threshold measurement's copy loops ran in Python), every
    kernel logged that its walker 'did not compile' and default_name() still said numba. The
    backend refuses to load there: one BackendFallbackWarning naming the variable, the NumPy
    backend, no log line; naming numba raises ImportError."""
    code = (
        "import logging, warnings\n"
        "import numpy as np, opsnn\n"
        "from opsnn import kernels\n"
        "records = []\n"
        "logging.getLogger('opsnn').addHandler(logging.Handler())\n"
        "logging.getLogger('opsnn').handlers[-1].emit = records.append\n"
        "x = np.ones(1 << 19, np.float32)\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    r = opsnn.leaky_relu_backward(x, -x, 0.5)\n"
        "    h = opsnn.hardtanh_backward(x, -x)\n"
        "assert (r == 0.5).all() and (h == 0).all()\n"
        "print(kernels.default_name(), len(records))\n"
        "for warning in w:\n"
        "    print(warning.category.__name__, warning.message)\n"
        "try:\n"
        "    kernels.get('numba')\n"
        "except ImportError as exc:\n"
        "    print(exc)\n")
    out = run_python(code, env=dict(os.environ, NUMBA_DISABLE_JIT="1"))
    reason = ("NUMBA_DISABLE_JIT is set: numba compiles nothing, and the compiled backend cannot run "
              "uncompiled; unset NUMBA_DISABLE_JIT (or set it to 0) to use it")
    assert out == ("numpy 0\n"
                   f"BackendFallbackWarning opsnn: the numba kernel backend is not available (kernel backend "
                   f"'numba' cannot be loaded: {reason}); using the NumPy backend\n"
                   f"kernel backend 'numba' cannot be loaded: {reason}\n")


def test_opsnn_own_compiled_helpers_are_cached_in_the_kernel_cache():
    """numba caches opsnn's own cache=True helpers in this version's kernel cache (support/), not
    beside the package or in ~/.cache/numba, which OPSNN_CACHE_DIR did not move: where neither
    was writable (a read-only install, no home) numba refused them and every kernel ran on the
    NumPy backend. The locator answers for opsnn's kernel sources only."""
    import pathlib

    from numba.core import caching

    from opsnn.kernels import _numba_support, parallelism
    from opsnn.kernels import kernel_cache as kc

    support = kc.cache_dir() / "support"
    for helper in (_numba_support.gather_tile, parallelism._copy_serial):
        assert pathlib.Path(helper._cache._cache_path).is_relative_to(support), helper
    assert (getattr(caching, "CacheImpl", None) or caching._CacheImpl)._locator_classes[:2] == kc._CLAIMED
    for locator in kc._CLAIMED:
        assert locator.from_function(test_opsnn_own_compiled_helpers_are_cached_in_the_kernel_cache, __file__) is None


def test_the_kernel_cache_holds_every_compiled_kernel_wherever_numba_and_the_process_point(tmp_path):
    """(A breaker) Under NUMBA_CACHE_DIR numba had put the generated walkers' machine code there,
    which `opsnn cache` neither listed nor removed; and a relative OPSNN_CACHE_DIR followed the
    working directory, so a process that changed directory kept its helpers under one cache and
    its walkers under another. Both stay in the one kernel cache now."""
    (tmp_path / "start").mkdir()
    (tmp_path / "elsewhere").mkdir()
    code = f"""
import os
import numpy as np
import opsnn
from opsnn.kernels import _numba_support  # the helpers' cache is placed as they load
os.chdir({str(tmp_path / "elsewhere")!r})
print(opsnn.leaky_relu(np.array([-2.0, 3.0], np.float32), 0.5).tolist())
"""
    env = {**os.environ, "OPSNN_CACHE_DIR": "cache", "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path / "start", timeout=300, check=False)
    assert done.returncode == 0 and done.stdout == "[-1.0, 3.0]\n", done.stderr[-2000:]
    cache, = (tmp_path / "start" / "cache").glob("numba-kernels-*")
    assert list(cache.glob("support/*/_numba_support.*.nbi")) and list(cache.glob("__pycache__/k_*.nbi"))
    assert not (tmp_path / "elsewhere" / "cache").exists() and not (tmp_path / "numba").exists()


def test_doc_rows_match_tests():
    """docs/reliability.md and the reliability tests are the same list: every test named in the
    document exists (in any test module: a row may cite a command's own test), and every test of
    test_reliability / test_concurrency / test_fuzz / test_soak has its row."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parent
    doc = (root.parent / "docs" / "reliability.md").read_text()
    named = set(re.findall(r"`(test_\w+)`", doc))

    def tests_of(module):
        return set(re.findall(r"^def (test_\w+)", module.read_text(), re.M))

    defined = set().union(*(tests_of(root / f"{m}.py") for m in ("test_reliability", "test_concurrency",
                                                                  "test_fuzz", "test_soak")))
    anywhere = set().union(*map(tests_of, root.glob("test_*.py")))
    named.discard("test_doc_rows_match_tests")
    defined.discard("test_doc_rows_match_tests")
    assert named - anywhere == set(), f"rows without a test: {sorted(named - anywhere)}"
    assert defined - named == set(), f"tests without a row: {sorted(defined - named)}"


@pytest.fixture
def broken_walkers(monkeypatch):
    """Every walker generated from now on is broken as asked ("typing": numba's typing fails at
    the first call, "serial": only for the serial walker of each module; "syntax": the module does
    not import; "generate": generating its source raises); the caches of programs, plans and
    plan-cache entries start empty (and the originals come back afterwards, warm). Returns
    ``(break_as, failures)``: call ``break_as(kind)``; ``failures`` is this test's own
    ``COMPILE_FAILURES`` list (the conftest guard watches the process's)."""
    from opsnn import _fastpath, engine
    from opsnn.kernels import numba_backend

    generate = numba_backend.generate
    kind = []

    def broken(*args):
        if kind == ["generate"]:
            raise RuntimeError("no source")
        source = generate(*args)
        if kind == ["syntax"]:
            return source + "\nthis is not Python(\n"
        # a call of a name nothing defines, first in each kernel's body ("serial": its serial one)
        which = "kernel_serial" if kind == ["serial"] else r"kernel_\w+"
        return re.sub(rf"(def {which}\(.*\):\n)", r"\1    opsnn_undefined_function()\n", source)

    failures: list[str] = []
    monkeypatch.setattr(numba_backend, "generate", broken)
    monkeypatch.setattr(numba_backend, "COMPILE_FAILURES", failures)
    monkeypatch.setattr(numba_backend, "_WARNED", set())
    monkeypatch.setattr(numba_backend, "_FAILED", {})
    for name in ("_PROGRAMS", "_PROGRAM_CACHE", "_STEPS", "_COPIES"):
        monkeypatch.setattr(numba_backend, name, {})
    monkeypatch.setattr(engine, "_PLAN_CACHE", {})
    monkeypatch.setattr(engine, "_BOUND_CALLS", {})
    _fastpath.clear()
    yield (lambda k: kind.append(k)), failures
    _fastpath.clear()


@pytest.mark.parametrize("kind", ["typing", "syntax", "generate"])
@pytest.mark.parametrize("layer", ["py", "acl"])
def test_walker_that_does_not_compile_runs_on_numpy(broken_walkers, kind, layer, env, caplog):
    """A generated walker that fails to compile (an opsnn or numba/LLVM defect, never the
    caller's) is logged once and the call runs on the NumPy backend, bit for bit as it would
    (issue 3: NumPy stays the fallback), where it was ACLNN_ERR_INNER (561000, Pythonic) or
    500003 at synchronize (aclnn): a complex64 transpose did so in session 30. A walker that
    failed is not compiled again (a failed compile costs a second or more), nor its twin of the same
    source (the engine runs a fused chain that failed step by step: its Kernel step generates the
    same walker; a breaker saw two compiles and two warnings)."""
    import cases
    from conftest import run_leaky

    from opsnn import reference

    break_as, failures = broken_walkers
    break_as(kind)
    rng = np.random.default_rng(31)
    g = rng.standard_normal((37, 29)).astype(F16)
    x = rng.standard_normal((37, 29)).astype(F16)
    x[0, :4] = [np.nan, -0.0, np.inf, -np.inf]
    expect = reference.leaky_relu_backward(g, x, 0.25)  # the float64 golden
    with caplog.at_level(logging.WARNING, logger="opsnn"):
        # transposed self: a Contiguous step (a copy program) before the Kernel; contiguous: the
        # Pythonic layer's fused chain is the Kernel step alone, whose walker the steps share
        for layouts in (("contig", "transposed"), ("contig", "contig")):
            for _ in range(3):  # the third call of the Pythonic layer tries its plan-cache entry
                res = run_leaky(layer, env, g, x, 0.25, layouts=layouts)
                assert cases.bits(res).tobytes() == cases.bits(expect).tobytes()
    assert failures, "the walkers were really broken"
    assert len(failures) == len(set(failures)), f"a failed walker compiled again: {failures}"
    warned = [r.message for r in caplog.records if "numba backend" in r.message]
    assert len(warned) == len(failures), f"logged once each, nothing else: {warned}"
    assert all("did not compile" in m and "NumPy backend" in m for m in warned)
    assert {"typing": "NameError", "syntax": "SyntaxError", "generate": "RuntimeError: no source"}[kind] in warned[0]


def test_walker_out_of_memory_is_not_a_compile_failure(monkeypatch):
    """A compiled walker raises MemoryError when its scratch cannot be allocated: the call
    fails as any failed allocation does (200000, ACL_ERROR_BAD_ALLOC), and the walker is not
    taken for one that did not compile (not marked, not logged, used again next call)."""
    from opsnn import _fastpath, engine
    from opsnn.kernels import numba_backend

    function = numba_backend.Program.function
    short = [True]

    def walker(self, launch, parallel):  # the real walker, out of memory while `short`
        fn = function(self, launch, parallel)

        def call(*args):
            if short[0]:
                raise MemoryError("scratch")
            return fn(*args)
        return call

    monkeypatch.setattr(numba_backend.Program, "function", walker)
    engine.clear_plan_cache()
    _fastpath.clear()
    g = np.full((40, 50), 3.0, F32)
    x = np.full((50, 40), -1.0, F32).T  # the panels walker, whose gather has scratch tiles
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.leaky_relu_backward(g, x, 0.5)
    assert info.value.status == 200000 and "scratch" in info.value.message
    assert not numba_backend.COMPILE_FAILURES
    short[0] = False
    assert (opsnn.leaky_relu_backward(g, x, 0.5) == 1.5).all()
    assert not numba_backend.COMPILE_FAILURES


@pytest.mark.parametrize("where", ["generate", "compile"])
def test_ctrl_c_inside_a_compile_is_not_a_compile_failure(monkeypatch, caplog, where):
    """Ctrl-C while a walker's source is generated or while numba compiles it: the
    KeyboardInterrupt goes on to the caller (numba does not wrap it: its error contexts catch
    Exception only), and the walker is not taken for one that did not compile (not marked, not
    logged, no NumPy fallback): the next call compiles it and runs it. (A real Ctrl-C, a signal,
    is held until numba's compile ends: the next test.)"""
    from numba.core import dispatcher

    from opsnn import _fastpath, engine
    from opsnn.kernels import numba_backend

    # fresh modules, so fresh dispatchers: the call compiles (or loads numba's disk cache)
    for name in ("_MODULES", "_PROGRAMS", "_PROGRAM_CACHE", "_STEPS", "_COPIES"):
        monkeypatch.setattr(numba_backend, name, {})
    monkeypatch.setattr(engine, "_PLAN_CACHE", {})
    monkeypatch.setattr(engine, "_BOUND_CALLS", {})
    _fastpath.clear()
    owner, attr = (numba_backend, "generate") if where == "generate" else (dispatcher.Dispatcher, "compile")
    original = getattr(owner, attr)
    interrupts = [KeyboardInterrupt]

    def interrupted(*args, **kwargs):  # Ctrl-C the first time
        if interrupts:
            raise interrupts.pop()
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, attr, interrupted)
    g = np.full((40, 50), 3.0, F32)
    x = np.full((50, 40), -1.0, F32).T  # the panels walker
    with caplog.at_level(logging.WARNING, logger="opsnn"):
        with pytest.raises(KeyboardInterrupt):
            opsnn.leaky_relu_backward(g, x, 0.5)
        assert not interrupts, "the interrupt was raised"
        assert not numba_backend.COMPILE_FAILURES and not numba_backend._FAILED
        assert (opsnn.leaky_relu_backward(g, x, 0.5) == 1.5).all()
    assert not numba_backend.COMPILE_FAILURES and not numba_backend._FAILED
    assert not [r.message for r in caplog.records if "numba backend" in r.message]
    walkers = [fn for prog in numba_backend._PROGRAM_CACHE.values() if prog for fn in prog._fns.values()]
    assert walkers and not any(isinstance(fn, str) for fn in walkers), "compiled walkers ran"


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_during_a_compile_is_held_until_it_ends(tmp_path, presses):
    """(Session 42) A Ctrl-C (SIGINT) as numba's first compile of a process loads its typing
    registries was raised inside numba, which could leave them part-loaded: every later compile
    failed ("Unknown attribute 'ctypes' of type array(float32, 1d, C)") and ran on the NumPy
    backend. It is held until the compile ends, then raised: the call raises KeyboardInterrupt
    with its kernel compiled, and the next call runs that kernel. A second Ctrl-C in the same
    compile is not held: it is raised at once, inside the compile. In a fresh interpreter with an
    empty kernel cache, so that the call compiles; the signals are sent from inside numba's
    registry loading, so they land mid-compile whatever the machine's speed."""
    code = f"""
import os, signal
os.environ["OPSNN_CACHE_DIR"] = {str(tmp_path)!r}
import numpy as np
from numba.core.typing import context
import opsnn
from opsnn.kernels import numba_backend

refresh, install = context.BaseContext.refresh, context.BaseContext.install_registry
sent, installs = [], []

def refreshing(self):  # a Ctrl-C as the first compile starts loading numba's typing registries
    if not sent:
        sent.append(1)
        os.kill(os.getpid(), signal.SIGINT)
    return refresh(self)

def installing(self, registry):  # with presses=2, another one midway through the loading
    installs.append(1)
    if len(installs) == 5 and {presses} == 2:
        os.kill(os.getpid(), signal.SIGINT)
    return install(self, registry)

context.BaseContext.refresh, context.BaseContext.install_registry = refreshing, installing
g, x = np.full((40, 50), 3.0, np.float32), np.full((40, 50), -1.0, np.float32)
try:
    opsnn.leaky_relu_backward(g, x, 0.5)
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted")
print(sum(len(m.kernel_serial.overloads) for m in numba_backend._MODULES.values()))
print(bool((opsnn.leaky_relu_backward(g, x, 0.5) == 1.5).all()), numba_backend.COMPILE_FAILURES)
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""
    interrupted, compiled, runs, handler = run_python(code, sigint=True).split("\n")[:4]
    assert interrupted == "interrupted"
    assert compiled == ("1" if presses == 1 else "0"), "held until the compile ended (once)"
    assert runs == "True []", "the next call ran compiled, no compile failure"
    assert handler == "True", "Python's own SIGINT handler is back"


@pytest.mark.parametrize("case", ["second press in a nested compile", "fork while held", "own handler",
                                  "handler set meanwhile"])
def test_ctrl_c_hold_nested_and_forked(case):
    """(A breaker, session 42) A compile inside a held one (a walker's compile compiles
    _numba_support's functions) had held a second Ctrl-C too: each level of nesting took one more
    press to stop a compile. One hold at a time now: the second press is raised at once, inside
    the nested compile (the outer one never ends). And a child forked from another thread while
    the main thread's compile held SIGINT kept the temporary handler and swallowed its first
    Ctrl-C: the fork hook gives it Python's handler back (forked here from the main thread, as the
    hold goes in: a fork while numba's compile lock is held waits for the compile, forksafe).
    (A second breaker) A program's own SIGINT handler is not held (asyncio's ran twice for one
    press, a handler raising its own exception had it taken for a compile failure): it runs when
    the signal comes; and a handler set during the compile stays in force after it."""
    code = f"""
import os, signal
import numba
from opsnn.kernels import numba_backend

@numba.njit
def inner(x):
    return x + 1

@numba.njit
def outer(x):
    return inner(x) * 2

numba_backend.guard_compiles(inner)
numba_backend.guard_compiles(outer)
held_compile, set_handler = inner.compile, signal.signal
child, pressed = [], []

def nested(sig):  # inner's compile, which numba starts inside outer's (held) one
    if {case!r} == "handler set meanwhile":
        signal.signal(signal.SIGINT, mine)
    elif not pressed:  # (numba may compile inner more than once)
        pressed.append(2)
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
    return held_compile(sig)

def mine(signum, frame):  # a program's own handler: it notes whether outer had compiled then
    child.append(len(outer.overloads))

def forking(signum, handler):  # a fork as soon as the hold is in (numba's compile lock not yet taken)
    previous = set_handler(signum, handler)
    if getattr(handler, "__name__", "") == "hold" and not child:
        pid = os.fork()
        if pid == 0:
            os._exit(0 if signal.getsignal(signal.SIGINT) is signal.default_int_handler else 1)
        child.append(os.waitpid(pid, 0)[1])
    return previous

if {case!r} == "fork while held":
    signal.signal = forking
else:
    inner.compile = nested
if {case!r} == "own handler":
    signal.signal(signal.SIGINT, mine)
try:
    print(outer(1))
except KeyboardInterrupt:
    print("interrupted")
print(len(outer.overloads), child, signal.getsignal(signal.SIGINT) in (signal.default_int_handler, mine))
"""
    first, second = run_python(code, sigint=True).split("\n")[:2]
    if case == "fork while held":
        assert first == "4" and second == "1 [0] True", "the child had Python's handler back"
    elif case == "own handler":
        assert first == "4" and second == "1 [0, 0] True", "run at each press, mid-compile"
    elif case == "handler set meanwhile":
        assert first == "4" and second == "1 [] True", "still in force"
    else:
        assert first == "interrupted" and second == "0 [] True", "raised at once: outer's compile never ended"


def test_a_damaged_disk_cache_entry_is_compiled_anew(tmp_path):
    """(A breaker) A file of numba's disk cache cut short (a full disk, a killed copy) raised
    pickle's "data was truncated" as numba loaded it: taken for a compile failure, its kernel ran
    on the NumPy backend in every later process, logged as not compiling. The entry is forgotten
    and compiled anew now, once, with a warning that says so: a damaged index, then a damaged
    data file; the next process loads the mended entry and warns of nothing. A save that fails
    (a full disk) keeps the kernel compiled before it, said once."""
    code = f"""
import logging, os, sys
os.environ["OPSNN_CACHE_DIR"] = {str(tmp_path)!r}
logging.basicConfig(stream=sys.stdout, level=logging.WARNING, format="%(message)s")
import numpy as np
import opsnn
from opsnn.kernels import numba_backend
x = np.array([1, -2, 3, -4], np.float32)
print(opsnn.leaky_relu_backward(np.ones(4, np.float32), x, 0.5).tolist(), numba_backend.COMPILE_FAILURES)
"""
    clean = "[1.0, 0.5, 1.0, 0.5] []\n"
    assert run_python(code) == clean
    for suffix in (".nbi", ".nbc"):
        damaged = sorted(tmp_path.rglob(f"k_*{suffix}"))
        assert damaged
        for path in damaged:
            path.write_bytes(path.read_bytes()[:20])
        *warned, last = run_python(code).splitlines()
        assert last + "\n" == clean, suffix
        assert len(warned) == 1 and "numba's disk cache failed on kernel_serial (UnpicklingError: " in warned[0]
        assert warned[0].endswith("; its entries are forgotten and it compiles again"), warned
    assert run_python(code) == clean
    # a save that fails (a full disk): the kernel compiled before it runs, no compile failure
    full = code.replace(repr(str(tmp_path)), repr(str(tmp_path / "full"))).replace("import opsnn\n", """import errno
from numba.core import caching
def full(self, key, data):
    raise OSError(errno.ENOSPC, "No space left on device")
caching.IndexDataCacheFile.save = full
import opsnn
""")
    # (one warning for the process, test_numba_backend's cache_that_cannot_be_written: it had
    # been one per kernel, "its entries are forgotten and it compiles again")
    *warned, last = run_python(full).splitlines()
    assert last + "\n" == clean and len(warned) == 1, warned
    assert warned[0].startswith(f"numba backend: cannot write to the compiled-kernel cache in {tmp_path / 'full'}")
    assert " (No space left on device); from now on this process compiles kernels without saving them" in warned[0]


def test_a_disk_cache_entry_holding_another_signatures_code_is_compiled_anew(tmp_path):
    """(A breaker) numba saves its cache index and data files without a lock: two processes saving
    two signatures of one function at once can leave the entry of one naming the other's machine
    code. numba installed that code under its own signature, the asked one stayed uncompiled, and
    every later process failed to unbox its arrays (or to type a walker calling the helper) and
    ran that kernel on NumPy. Such an entry is forgotten and compiled anew, with a warning, and
    the next process loads the mended entry. (Here the float64 entry's data file is overwritten
    with the float32 one's, what the race leaves.)"""
    (tmp_path / "twice.py").write_text("from numba import njit\n\n\n@njit(cache=True)\n"
                                       "def twice(a):\n    return a[0] * 2\n")
    code = f"""
import logging, sys
sys.path.insert(0, {str(tmp_path)!r})
logging.basicConfig(stream=sys.stdout, level=logging.WARNING, format="%(message)s")
import numpy as np
from opsnn.kernels.numba_backend import guard_compiles
import twice
guard_compiles(twice.twice)
print(twice.twice(np.array([1.5], np.float32)), twice.twice(np.array([1.25])))
"""
    assert run_python(code) == "3.0 2.5\n"
    first, second = sorted(tmp_path.glob("__pycache__/twice.twice-*.nbc"))  # float32's, float64's
    second.write_bytes(first.read_bytes())
    *warned, last = run_python(code).splitlines()
    assert last == "3.0 2.5"
    assert warned == [("numba backend: numba's disk cache failed on twice (its entry for this signature holds another's "
                       "machine code); its entries are forgotten and it compiles again")], warned
    assert run_python(code) == "3.0 2.5\n"


def test_every_dispatcher_opsnn_compiles_holds_interrupts():
    """(A breaker, session 42) The thread-pool threshold's copy kernels (parallelism), compiled
    by the first launch of 1-64 MiB, were a process's first compile and held no Ctrl-C: one
    landing as numba loaded its typing registries broke every later compile. Every dispatcher
    of _numba_support and parallelism, and the benchmark's bandwidth kernels, hold it now (the
    generated walkers: test_ctrl_c_during_a_compile_is_held_until_it_ends)."""
    import numba

    from opsnn import bench
    from opsnn.kernels import _numba_support, parallelism

    found = [fn for module in (_numba_support, parallelism) for fn in vars(module).values()
             if isinstance(fn, numba.core.dispatcher.Dispatcher)]
    found += [fn for pair in bench._bandwidth_kernels().values() for fn in pair]
    assert parallelism._copy_serial in found and _numba_support.span_view in found
    unheld = [fn.py_func.__name__ for fn in found if "guarded_compile" not in fn.compile.__qualname__]
    assert not unheld


@pytest.mark.parametrize("layout", ["contig", "transposed"])
def test_bound_pool_launch_replanned_onto_a_walker_that_does_not_compile(broken_walkers, acl_env, monkeypatch,
                                                                          layout):
    """A repeatable executor bound to the pool, launched where it must plan anew (a forked child,
    emulated by parallelism.FORKED, runs every launch on its calling thread) onto a serial
    walker that does not compile: the NumPy backend runs it. A breaker's: 500003 at every
    synchronize. Contiguous: the fused call (engine.bind's first branch); transposed: the bound
    steps, a Contiguous step into the workspace first (Program.bind)."""
    import cases

    from opsnn import reference
    from opsnn.kernels import parallelism

    break_as, failures = broken_walkers
    break_as("serial")
    monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 0)  # the pool from the first byte
    g = cases.filled((300, 200), F32, 5, cases.grad_specials(F32))
    x = cases.filled((300, 200), F32, 6, cases.self_specials(F32))
    gt, xt, ot = acl_env.put(g), acl_env.put_layout(x, layout), acl_env.put(np.zeros_like(g))
    slope = acl_env.scalar(0.5, "DOUBLE")
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt.tensor, xt.tensor, slope, False, ot.tensor)
    assert ret == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    workspace = acl_env.malloc(ws) if ws else None
    want = reference.leaky_relu_backward(g, x, 0.5)
    for forked in (False, True, True):
        monkeypatch.setattr(parallelism, "FORKED", forked)
        assert aclnn.aclnnLeakyReluBackward(workspace, ws, ex, acl_env.stream) == 0
        assert acl.rt.synchronize_stream(acl_env.stream) == 0, acl.get_recent_err_msg()
        cases.assert_bits_equal(ot.view(), want)
    assert failures and len(failures) == len(set(failures))


def test_fp6_packs_four_elements_in_three_bytes(dev):
    """ACL_FLOAT6_E3M2 / E2M3 take 6 bits an element (metadef's GetSizeByDataType,
    kDataTypeSizeBitOffset + 6), not a byte: 100 of them need 75 bytes, and an out whose element
    crosses a byte's end into self's bytes overlaps self, where its first byte alone does not
    (bits 30-35: bytes 3 and 4; self's float16 elements at bytes 0-1, 4-5, 8-9, 12-13; out's
    elements 96 bits, 12 bytes, apart)."""
    addr = dev.upload(np.zeros(16, F32))
    fits = acl.create_tensor([80], acl.ACL_FLOAT6_E2M3, [1], 0, acl.ACL_FORMAT_ND, [80], addr + 4)  # 60 bytes
    assert fits is not None
    dev.tensors.append(fits)
    assert acl.create_tensor([100], acl.ACL_FLOAT6_E3M2, [1], 0, acl.ACL_FORMAT_ND, [100], addr) is None
    assert acl.get_recent_err_msg() == (
        f"create_tensor: storageDims [100] of ACL_FLOAT6_E3M2 (6 bits each) need 75 bytes at tensorData {hex(addr)}; "
        f"they reach 11 bytes past the end of the 64-byte allocation at {hex(addr)}")
    x = acl.create_tensor([4], acl.ACL_FLOAT16, [2], 0, acl.ACL_FORMAT_ND, [8], addr)  # bytes 0-1, 4-5 ...
    apart = acl.create_tensor([4], acl.ACL_FLOAT6_E3M2, [16], 3, acl.ACL_FORMAT_ND, [64], addr)  # bytes 2, 14, 26, 38
    across = acl.create_tensor([4], acl.ACL_FLOAT6_E3M2, [16], 5, acl.ACL_FORMAT_ND, [64], addr)  # bytes 3-4, 15-16 ...
    dev.tensors += [x, apart, across]
    s = dev.scalar(0.5, acl.ACL_FLOAT)
    fail_msg(aclnn.aclnnLeakyReluGetWorkspaceSize(x, s, apart)[2], 561103, "no Cast kernel from DT_FLOAT16 to DT_FLOAT6_E3M2")
    fail_msg(aclnn.aclnnLeakyReluGetWorkspaceSize(x, s, across)[2], 161002, "out and self")
