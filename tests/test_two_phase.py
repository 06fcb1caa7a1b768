"""The two-phase protocol and the acl runtime it runs on: phase 1 plans without touching data,
phase 2 runs on a stream in order, workspace accounting, executor lifecycle, memory copies."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import cases
import opsnn.acl as acl
from cases import F16, F32, F64
from conftest import HARDTANH, LEAKY, assert_out_written, expect_acl_failure
from opsnn import aclnn


def _leaky(env, g, x, slope=0.5, out_dtype=None, layouts=("contig", "contig"), out_layout="contig"):
    gt, xt = env.put_layout(g, layouts[0]), env.put_layout(x, layouts[1])
    shape = np.broadcast_shapes(np.shape(g), np.shape(x))
    ot = env.out(shape, out_dtype or cases.promote(g.dtype, x.dtype), out_layout)
    ws, ex, ret = LEAKY.phase1(gt.tensor, xt.tensor, env.scalar(slope, "DOUBLE"), False, ot.tensor)
    assert ret == 0, acl.get_recent_err_msg()
    return ws, ex, gt, xt, ot


# ---- runtime basics -----------------------------------------------------------------------------
def test_device_count_and_memcpy_round_trip(acl_env):
    count, ret = acl.rt.get_device_count()
    assert ret == 0 and count >= 1
    a = np.arange(12, dtype=F32)
    d1, d2 = acl_env.malloc(a.nbytes), acl_env.malloc(a.nbytes)
    acl_env.write(d1, a)
    assert acl.rt.memcpy(d2, a.nbytes, d1, a.nbytes, acl.ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
    cases.assert_bits_equal(acl_env.read(d2, (12,), F32), a)
    # host buffers given as ints: malloc_host, numpy_to_ptr, bytes_to_ptr, ptr_to_bytes
    h, ret = acl.rt.malloc_host(a.nbytes)
    assert ret == 0
    try:
        assert acl.rt.memcpy(h, a.nbytes, d2, a.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        assert acl.util.ptr_to_bytes(h, a.nbytes) == a.tobytes()
        b = np.full(12, -1.0, F32)
        assert acl.rt.memcpy(acl.util.numpy_to_ptr(b), b.nbytes, h, a.nbytes, acl.ACL_MEMCPY_HOST_TO_HOST) == 0
        cases.assert_bits_equal(b, a)
    finally:
        assert acl.rt.free_host(h) == 0
    raw = (np.arange(3, dtype=F64) + 7).tobytes()  # kept alive while its pointer is used
    d3 = acl_env.malloc(len(raw))
    assert acl.rt.memcpy(d3, len(raw), acl.util.bytes_to_ptr(raw), len(raw), acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    cases.assert_bits_equal(acl_env.read(d3, (3,), F64), np.array([7.0, 8.0, 9.0]))
    bb = bytearray(len(raw))
    assert acl.rt.memcpy(bb, len(bb), d3, len(raw), acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert bytes(bb) == raw


def test_memcpy_async_runs_in_stream_order_with_the_launches(acl_env):
    """acl.rt.memcpy_async (aclrtMemcpyAsync) queues its copy on the stream: the host bytes are
    read and the result written back when the stream runs, in order with the launch between
    them, so the copy back queued after the launch reads its result."""
    g = np.array([1.0, -2.0, 0.0, 4.0], F32)
    d_in, d_out = acl_env.malloc(16), acl_env.malloc(16)
    host_in, host_out = g.copy(), np.full(4, -7.0, F32)
    assert acl.rt.memcpy_async(d_in, 16, host_in, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE, acl_env.stream) == 0
    def tensor(addr):
        return acl.create_tensor([4], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [4], addr)
    gt, ot = tensor(d_in), tensor(d_out)
    try:
        ws, ex, ret = LEAKY.phase1(gt, gt, acl_env.scalar(0.5, "DOUBLE"), False, ot)
        assert ret == 0
        assert LEAKY.phase2(None, ws, ex, acl_env.stream) == 0
        assert acl.rt.memcpy_async(host_out, 16, d_out, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST, acl_env.stream) == 0
        host_in[:] = 99.0  # before the stream runs: the queued copy reads the bytes then, as a device's
        cases.assert_bits_equal(host_out, np.full(4, -7.0, F32))  # nothing ran yet
        assert acl.rt.synchronize_stream(acl_env.stream) == 0
        cases.assert_bits_equal(host_out, np.full(4, 99.0, F32))
        assert acl.rt.memcpy_async(d_in, 16, g, 16, acl.ACL_MEMCPY_DEFAULT, None) == 0  # the default stream
        assert acl.rt.synchronize_stream(None) == 0
        cases.assert_bits_equal(acl_env.read(d_in, (4,), F32), g)
    finally:
        assert acl.destroy_tensor(gt) == 0 and acl.destroy_tensor(ot) == 0


def test_ptr_to_numpy_shares_the_memory(acl_env):
    """acl.util.ptr_to_numpy is an array over the pointer's memory, as pyACL's (a breaker: it was
    a copy, so a port filling pinned memory through it sent zeros to the device): writes through
    it reach memcpy, memcpy / memset into the memory show in it; over bytes_to_ptr memory it is
    read-only."""
    h, ret = acl.rt.malloc_host(16)
    assert ret == 0
    try:
        view = acl.util.ptr_to_numpy(h, (4,), 11)  # NPY_FLOAT
        view[:] = np.arange(1, 5, dtype=F32)
        d = acl_env.malloc(16)
        assert acl.rt.memcpy(d, 16, h, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        cases.assert_bits_equal(acl_env.read(d, (4,), F32), np.arange(1, 5, dtype=F32))
        assert acl.rt.memset(h, 16, 0, 16) == 0
        cases.assert_bits_equal(view, np.zeros(4, F32))
        acl_env.write(d, np.array([7, 8, 9, 10], F32))
        assert acl.rt.memcpy(h, 16, d, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        cases.assert_bits_equal(view, np.array([7, 8, 9, 10], F32))
        grid = acl.util.ptr_to_numpy(h + 4, [1, 2], 11)  # an interior pointer, 2-D
        cases.assert_bits_equal(grid, np.array([[8, 9]], F32))
    finally:
        assert acl.rt.free_host(h) == 0
    a = np.zeros(3, F32)
    acl.util.ptr_to_numpy(acl.util.numpy_to_ptr(a), [3], 11)[1] = 5.0
    cases.assert_bits_equal(a, np.array([0, 5, 0], F32))
    raw = np.arange(2, dtype=F32).tobytes()
    frozen = acl.util.ptr_to_numpy(acl.util.bytes_to_ptr(raw), [2], 11)
    assert not frozen.flags.writeable and frozen.tolist() == [0.0, 1.0]


def test_pointers_into_an_array_stay_valid_while_it_lives(acl_env):
    """numpy_to_ptr of a contiguous view (``batch[i]``, a reshape), gone as the call returns,
    gives a pointer valid while the array it views lives, as a C pointer into that memory is (a
    breaker: it was forgotten with the view object, while a non-contiguous view's copy lived on);
    pointers into a registered array reach any byte of it, though a smaller buffer at the same
    address was registered first (a breaker: the row's 32 bytes refused the array's 128); a
    dead array's pointers are forgotten; a range past every buffer is refused naming the
    largest that holds the address."""
    images = np.arange(32, dtype=F32).reshape(4, 8)
    d = acl_env.malloc(128)
    row = acl.util.numpy_to_ptr(images[1])
    gc.collect()
    assert acl.rt.memcpy(d, 32, row, 32, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    cases.assert_bits_equal(acl_env.read(d, (8,), F32), images[1])
    acl_env.write(d, np.full(8, -1, F32))
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(images[2]), 32, d, 32, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert images[2].tolist() == [-1.0] * 8 and images[3, 0] == 24.0
    first_row, whole = acl.util.numpy_to_ptr(images[0]), acl.util.numpy_to_ptr(images.reshape(-1))
    assert first_row == whole
    assert acl.rt.memcpy(d, 128, whole, 128, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    cases.assert_bits_equal(acl_env.read(d, (4, 8), F32), images)
    assert acl.rt.memcpy(d, 40, whole + 96, 40, acl.ACL_MEMCPY_HOST_TO_DEVICE) != 0
    message = acl.get_recent_err_msg()
    assert "40 bytes at" in message and "the 128-byte host buffer" in message, message
    fortran = np.asfortranarray(np.arange(6, dtype=F32).reshape(2, 3))
    col = acl.util.numpy_to_ptr(fortran[:, 1])  # contiguous column of a Fortran-ordered array
    assert acl.util.ptr_to_bytes(col, 8) == fortran[:, 1].tobytes()
    del images, fortran
    gc.collect()
    for gone in (row, whole, col):
        assert acl.util.ptr_to_bytes(gone, 4) is None


def test_host_pointer_registry_keeps_read_only_views_and_stays_bounded(acl_env):
    """A read-only view of a writable array stays read-only through its pointer, though its
    entry covers the whole array (a breaker: the row became writable); where the same bytes are
    registered read-only and writable, a write through the writable one's pointer goes (it
    was refused for the read-only one registered first); a loop over the rows of a
    Fortran-ordered array, each copied privately, keeps one copy per row whatever the epochs (a
    breaker: one more per row every epoch, each lookup slower), each refreshed at its call."""
    from opsnn.acl import _host

    base = np.zeros((4, 4), F32)
    row = base[1]
    row.flags.writeable = False
    src = np.arange(1, 5, dtype=F32)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(row), 16, src, 16, acl.ACL_MEMCPY_HOST_TO_HOST) != 0
    assert "is read-only host memory" in acl.get_recent_err_msg() and not base.any()
    writable = acl.util.numpy_to_ptr(base[1])  # the same address, registered writable now
    assert acl.rt.memcpy(writable, 16, src, 16, acl.ACL_MEMCPY_HOST_TO_HOST) == 0
    assert base[1].tolist() == [1, 2, 3, 4]
    raw = bytearray(16)
    frozen, thawed = np.frombuffer(memoryview(raw).toreadonly(), F32), np.frombuffer(raw, F32)
    assert acl.util.numpy_to_ptr(frozen) == acl.util.numpy_to_ptr(thawed)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(thawed), 16, src, 16, acl.ACL_MEMCPY_HOST_TO_HOST) == 0
    assert thawed.tolist() == [1, 2, 3, 4]

    data = np.asfortranarray(np.arange(64 * 4, dtype=F32).reshape(64, 4))
    d = acl_env.malloc(16)
    sizes = []
    for epoch in range(3):
        data += 1  # each call copies the row as it is then
        for i in range(64):
            with pytest.warns(RuntimeWarning):
                ptr = acl.util.numpy_to_ptr(data[i])
            assert acl.rt.memcpy(d, 16, ptr, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
            cases.assert_bits_equal(acl_env.read(d, (4,), F32), data[i])
        sizes.append(len(_host._registered))
    assert sizes[0] == sizes[1] == sizes[2], sizes
    del data
    gc.collect()
    assert len(_host._registered) <= sizes[0] - 64



def test_an_array_dying_inside_the_registry_lock_does_not_hang(acl_env):
    """An array's finalizer may run on a thread that holds the host registry's lock (the cyclic
    GC runs at any allocation there): its entry goes at the next registry call, where taking
    the lock again hung that thread for good (a breaker: numpy_to_ptr of an array while an
    earlier one, in a reference cycle, was collected)."""
    import threading

    from opsnn.acl import _host

    doomed = [np.ones(8, F32)]
    ptr = acl.util.numpy_to_ptr(doomed[0])

    def drop_under_lock():
        with _host._lock:
            doomed.clear()  # the last reference: its finalizer runs here, in this thread
    worker = threading.Thread(target=drop_under_lock, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "the finalizer waited for the lock its own thread held"
    assert acl.util.ptr_to_bytes(ptr, 4) is None  # forgotten (not a dangling read)
    keep = np.arange(4, dtype=F32)
    assert acl.util.ptr_to_bytes(acl.util.numpy_to_ptr(keep), 16) == keep.tobytes()

# ---- phase 1 plans, phase 2 runs ----------------------------------------------------------------
def test_phase1_writes_nothing_phase2_writes_out(acl_env):
    g, x = cases.grid(F32, F32)
    ws, ex, gt, xt, ot = _leaky(acl_env, g, x, out_layout="sliced")
    storage = ot.storage()
    assert (storage == np.float32(777.0)).all(), "phase 1 must not write out (still the sentinel)"
    assert LEAKY.phase2(acl_env.malloc(ws) if ws else None, ws, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    cases.assert_bits_equal(ot.view(), cases.ref_leaky(g, x, np.float32(0.5)))


def test_a_backend_that_cannot_load_fails_phase1_with_561003(acl_env, monkeypatch):
    """$OPSNN_BACKEND naming no usable backend: GetWorkspaceSize returns 561003 (no kernel found,
    where CANN finds the kernel), after the argument checks (a bad dtype still reports 161002);
    an empty output, which launches nothing, still succeeds."""
    from opsnn import kernels

    g, x = cases.grid(F32, F32)
    gt, xt = acl_env.put_layout(g, "contig"), acl_env.put_layout(x, "contig")
    ot = acl_env.out(g.shape, F32, "contig")
    monkeypatch.setenv(kernels.ENV_VAR, "foo")
    monkeypatch.setattr(kernels, "DEFAULT", None)
    ws, ex, ret = LEAKY.phase1(gt.tensor, xt.tensor, acl_env.scalar(0.5, "DOUBLE"), False, ot.tensor)
    assert (ret, ex) == (561003, None)
    assert acl.get_recent_err_msg().startswith("LeakyReluBackward: $OPSNN_BACKEND='foo'")
    bad = acl_env.out(g.shape, np.dtype(np.int32), "contig")
    assert LEAKY.phase1(gt.tensor, xt.tensor, acl_env.scalar(0.5, "DOUBLE"), False, bad.tensor)[2] == 161002
    e = np.ones((0, 3), F32)
    et, eo = acl_env.put_layout(e, "contig"), acl_env.out(e.shape, F32, "contig")
    assert LEAKY.phase1(et.tensor, et.tensor, acl_env.scalar(0.5, "DOUBLE"), False, eo.tensor)[2] == 0


def test_a_backend_that_stops_loading_between_the_phases_fails_the_launch_by_name(acl_env, monkeypatch):
    """$OPSNN_BACKEND changed after GetWorkspaceSize to name no usable backend: the launch returns
    561003 naming the operator (a breaker: the message did not name it, and the phase-2 statuses
    did not list 561003), nothing is queued or written, and the single-use executor is released,
    as by any failed launch (CANN's releases it whatever the launch returns); back to a usable
    backend, phase 1 again launches."""
    from opsnn import kernels

    g, x = cases.grid(F32, F32)
    ws, ex, _, _, ot = _leaky(acl_env, g, x)
    monkeypatch.setattr(kernels, "DEFAULT", None)
    monkeypatch.setenv(kernels.ENV_VAR, "nope")
    assert LEAKY.phase2(None, ws, ex, acl_env.stream) == 561003
    assert acl.get_recent_err_msg().startswith("LeakyReluBackward: $OPSNN_BACKEND='nope' selects no usable")
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    assert (ot.storage() == np.float32(777.0)).all()
    monkeypatch.delenv(kernels.ENV_VAR)
    expect_acl_failure(LEAKY.phase2(None, ws, ex, acl_env.stream), 161002, words=("released it at a failed launch",))
    ws, ex, _, _, ot = _leaky(acl_env, g, x)
    assert LEAKY.phase2(None, ws, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    cases.assert_bits_equal(ot.view(), cases.ref_leaky(g, x, np.float32(0.5)))


def test_workspace_size_is_deterministic(acl_env):
    g, x = cases.filled((4, 5), F16, 1), cases.filled((4, 5), F32, 2)
    sizes = {_leaky(acl_env, g, x, out_dtype=F64, layouts=("sliced", "transposed"), out_layout="sliced")[0]
             for _ in range(3)}
    assert len(sizes) == 1
    ws = sizes.pop()
    assert isinstance(ws, int) and ws > 0


def test_workspace_holds_the_temporaries(acl_env):
    """DECISION 17: the Cast/Contiguous temporaries live in the caller's workspace."""
    g, x = cases.filled((4, 5), F16, 3), cases.filled((4, 5), F32, 4)
    ws, ex, gt, xt, ot = _leaky(acl_env, g, x, out_dtype=F64, layouts=("sliced", "transposed"),
                                out_layout="sliced")
    assert ws > 0
    described = ex.plan.describe().splitlines()  # one printable text: steps, then the slots
    slots = [line for line in described if line.startswith("ws[")]
    assert len(slots) == len(ex.plan.slots) >= 2 and described[-len(slots):] == slots
    assert sum(int(line.split(", ")[-1].removesuffix(" bytes")) for line in slots) == ws
    wsp = acl_env.malloc(ws)
    pattern = np.full(ws, 0xA5, np.uint8)
    acl_env.write(wsp, pattern)
    assert LEAKY.phase2(wsp, ws, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    assert acl_env.read(wsp, (ws,), np.uint8).tobytes() != pattern.tobytes()
    cases.assert_bits_equal(ot.view(), cases.ref_leaky(g, x, np.float32(0.5), F64))


def test_two_executors_from_the_same_arguments(acl_env):
    g, x = cases.grid(F16, F16)
    a = _leaky(acl_env, g, x, 0.25)
    b = _leaky(acl_env, g, x, 0.25)
    for ws, ex, *_ in (a, b):
        assert LEAKY.phase2(acl_env.malloc(ws) if ws else None, ws, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    for *_, ot in (a, b):
        cases.assert_bits_equal(ot.view(), cases.ref_leaky(g, x, np.float32(0.25)))


def test_stream_runs_in_order(acl_env):
    """LeakyReluBackward writes X; HardtanhBackward, queued after it on the same stream before any
    synchronisation, reads X as gradOutput and sees the written values."""
    g, x = cases.grid(F32, F32)
    gt, xt = acl_env.put(g), acl_env.put(x)
    mid = acl_env.out(g.shape, F32)
    fin = acl_env.out(g.shape, F32)
    ws1, ex1, r1 = LEAKY.phase1(gt.tensor, xt.tensor, acl_env.scalar(0.5, "DOUBLE"), False, mid.tensor)
    ws2, ex2, r2 = HARDTANH.phase1(mid.tensor, xt.tensor, acl_env.scalar(-1.0, "DOUBLE"),
                                   acl_env.scalar(1.0, "DOUBLE"), fin.tensor)
    assert r1 == 0 and r2 == 0
    assert LEAKY.phase2(acl_env.malloc(ws1) if ws1 else None, ws1, ex1, acl_env.stream) == 0
    assert HARDTANH.phase2(acl_env.malloc(ws2) if ws2 else None, ws2, ex2, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    step1 = cases.ref_leaky(g, x, np.float32(0.5))
    cases.assert_bits_equal(mid.view(), step1)
    cases.assert_bits_equal(fin.view(), cases.ref_hardtanh(step1, x, -1.0, 1.0), nan_payload=True)


def test_two_streams(acl_env):
    s2, ret = acl.rt.create_stream()
    assert ret == 0
    try:
        g, x = cases.grid(F32, F32)
        a = _leaky(acl_env, g, x, 0.5)
        b = _leaky(acl_env, g, x, -2.0)
        assert LEAKY.phase2(acl_env.malloc(a[0]) if a[0] else None, a[0], a[1], acl_env.stream) == 0
        assert LEAKY.phase2(acl_env.malloc(b[0]) if b[0] else None, b[0], b[1], s2) == 0
        assert acl.rt.synchronize_stream(s2) == 0
        assert acl.rt.synchronize_stream(acl_env.stream) == 0
        cases.assert_bits_equal(a[-1].view(), cases.ref_leaky(g, x, np.float32(0.5)))
        cases.assert_bits_equal(b[-1].view(), cases.ref_leaky(g, x, np.float32(-2.0)))
    finally:
        assert acl.rt.destroy_stream(s2) == 0


def test_a_streams_claim_count_without_rlock_recursion_count():
    """An event wait reads how many times its thread holds a stream's run lock (``Stream.claims``)
    with RLock._recursion_count, which CPython has only from 3.11: on 3.10 every stream's creation
    raised AttributeError (``opsnn demo`` and the suite's collection failed). There the count is
    read from the lock's repr; a lock that hides the method, as 3.10's does, gives the same
    counts, per thread."""
    import threading

    from opsnn._core.stream import _claims_of

    class Py310RLock:  # only the repr of a real lock: no _recursion_count
        def __init__(self, lock):
            self.lock = lock

        def __repr__(self):
            return repr(self.lock)

    lock = threading.RLock()
    claims = _claims_of(Py310RLock(lock))
    seen = [claims()]
    lock.acquire()
    seen.append(claims())
    lock.acquire()
    seen.append(claims())
    other = []
    t = threading.Thread(target=lambda: other.append(claims()))
    t.start()
    t.join()
    lock.release()
    seen.append(claims())
    lock.release()
    seen.append(claims())
    assert seen == [0, 1, 2, 1, 0] and other == [0]


def test_stream_and_event_handles_are_never_reused_and_their_ranges_never_meet():
    """A destroyed stream's handle is not given again (a stale handle stays refused, not taken for
    a later stream), and 2**38 streams can be created before their handles would reach the first
    event's: they had met after ~4.19 M creates (0x5000_0001 and 0x6000_0001, steps of 0x40)."""
    from opsnn._core.event import EventTable
    from opsnn._core.stream import StreamTable

    streams, events = StreamTable(), EventTable()
    first = streams.create()
    streams.destroy(first)
    assert streams.create() == first + 0x40
    assert (events.create() - first) // 0x40 >= 2**38


def test_fresh_executors_run_their_steps_compiled_and_fill_the_workspace(acl_env, monkeypatch):
    """Fresh executors of one cached plan with temporaries (a sliced float16 grad, a transposed
    float32 self, a sliced float64 out: Contiguous, Cast, Contiguous, Kernel, Cast, ViewCopy) run
    every step through the compiled call built for that layout (engine.bind,
    _fastpath.step_call), never through the backend's planning ``launch`` / ``copy``; each result
    is the reference's bits, and the workspace holds each temporary: self's contiguous copy,
    grad widened to float32, the float32 result and its float64 cast."""
    from opsnn import kernels
    from opsnn._core import dtypes
    from opsnn.kernels import numba_backend

    if kernels.default_name() != "numba":
        pytest.skip("the compiled step calls are the numba backend's")

    def refused(*_):
        raise AssertionError("a step ran through the backend's launch / copy")
    monkeypatch.setattr(numba_backend, "launch", refused)
    monkeypatch.setattr(numba_backend, "copy", refused)
    for slope in (0.5, -2.0, 0.5):  # two plans (the slope is in the key); the third call hits the first's
        g, x = cases.grid(F16, F32)
        ws, ex, _, _, ot = _leaky(acl_env, g, x, slope, out_dtype=F64, layouts=("sliced", "transposed"),
                                  out_layout="sliced")
        wsp = acl_env.malloc(ws)
        acl_env.write(wsp, np.full(ws, 0xA5, np.uint8))
        assert LEAKY.phase2(wsp, ws, ex, acl_env.stream) == 0, acl.get_recent_err_msg()
        assert acl.rt.synchronize_stream(acl_env.stream) == 0, acl.get_recent_err_msg()
        expected = cases.ref_leaky(g, x, np.float32(slope), F64)
        cases.assert_bits_equal(ot.view(), expected)
        space = acl_env.read(wsp, (ws,), np.uint8)
        assert [step.kind for step in ex.plan.steps] == ["Contiguous", "Cast", "Contiguous", "Kernel", "Cast",
                                                         "ViewCopy"]
        assert [str(step.srcs[0]) for step in ex.plan.steps[::2]] == ["grad_output", "self", "ws[3]"]
        held = []  # what each step before the ViewCopy left in its workspace slot
        for step in ex.plan.steps[:-1]:
            slot = ex.plan.slots[step.dst.slot]
            dtype = dtypes.to_numpy(slot.dtype)
            held.append(space[slot.offset:slot.offset + int(np.prod(slot.shape)) * dtype.itemsize]
                        .view(dtype).reshape(slot.shape))
        for kept, value in zip(held, [g, g.astype(F32), x, cases.ref_leaky(g, x, np.float32(slope)), expected]):
            cases.assert_bits_equal(kept, value)


def test_a_fresh_executor_on_the_same_tensors_queues_the_last_launch_again(acl_env, monkeypatch):
    """The CANN samples' loop (GetWorkspaceSize, launch, synchronize, on the same tensors): a
    fresh executor whose plan and tensor objects are those of its operator's last fresh launch
    queues that launch again, which reads the data current when it runs; another out makes a new
    launch, and any free or destroy drops the kept one (it holds views of device memory)."""
    built = []
    real_init = aclnn._Launch.__init__
    monkeypatch.setattr(aclnn._Launch, "__init__", lambda self, *a: built.append(a[1]) or real_init(self, *a))
    gt = acl_env.put(np.array([1.0, 2.0, 3.0], F32))
    xt = acl_env.put(np.array([1.0, -1.0, 1.0], F32))
    ot, other = acl_env.out((3,), F32), acl_env.out((3,), F32)
    slope = acl_env.scalar(0.5, "DOUBLE")

    def launch(out):
        ws, ex, ret = LEAKY.phase1(gt.tensor, xt.tensor, slope, False, out.tensor)
        assert ret == 0 and ws == 0
        assert LEAKY.phase2(None, 0, ex, acl_env.stream) == 0
        assert acl.rt.synchronize_stream(acl_env.stream) == 0
        return out.view()

    aclnn._RECENT.clear()
    cases.assert_bits_equal(launch(ot), np.array([1.0, 1.0, 3.0], F32))
    acl_env.write(xt.addr, np.array([-1.0, 1.0, -1.0], F32))  # new data in the same tensor
    cases.assert_bits_equal(launch(ot), np.array([0.5, 2.0, 1.5], F32))
    assert len(built) == 1
    cases.assert_bits_equal(launch(other), np.array([0.5, 2.0, 1.5], F32))
    cases.assert_bits_equal(launch(other), np.array([0.5, 2.0, 1.5], F32))
    assert len(built) == 2
    spare, ret = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0 and acl.rt.free(spare) == 0  # any release
    assert not aclnn._RECENT
    acl_env.write(gt.addr, np.array([4.0, 5.0, 6.0], F32))
    cases.assert_bits_equal(launch(other), np.array([2.0, 5.0, 3.0], F32))
    assert len(built) == 3


# ---- executor lifecycle -------------------------------------------------------------------------
def test_repeatable_executor_reads_current_device_data(acl_env):
    g = np.array([1.0, 2.0, 3.0], F32)
    x = np.array([1.0, -1.0, 1.0], F32)
    ws, ex, gt, xt, ot = _leaky(acl_env, g, x, 0.5)
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    wsp = acl_env.malloc(ws) if ws else None
    assert LEAKY.phase2(wsp, ws, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    cases.assert_bits_equal(ot.view(), np.array([1.0, 1.0, 3.0], F32))
    acl_env.write(xt.addr, np.array([-1.0, 1.0, -1.0], F32))
    acl_env.write(gt.addr, np.array([4.0, 5.0, 6.0], F32))
    assert LEAKY.phase2(wsp, ws, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    cases.assert_bits_equal(ot.view(), np.array([2.0, 5.0, 3.0], F32))
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0
    expect_acl_failure(LEAKY.phase2(wsp, ws, ex, acl_env.stream), 161002)


@pytest.mark.parametrize("grad_dtype, layouts, out_layout", [
    (F32, ("contig", "contig"), "contig"),        # one compiled Kernel call into out
    (F16, ("contig", "contig"), "contig"),        # Cast grad into the workspace first
    (F16, ("transposed", "sliced"), "offset"),    # Contiguous, Cast, Kernel, ViewCopy
])
def test_repeatable_executor_follows_moved_tensors(acl_env, grad_dtype, layouts, out_layout):
    """aclSetInputTensorAddr / aclSetOutputTensorAddr between launches of a repeatable executor:
    the relaunch (the very arguments of the last one, so the path that skips the checks) reads
    the inputs at their new storage and writes the new out, bit for bit; the old out keeps the
    bytes it had and the new out's storage outside the view its sentinel; moved back, the old
    storage is used again."""
    g, x = cases.grid(grad_dtype, F32)
    ws, ex, gt, xt, ot = _leaky(acl_env, g, x, 0.5, layouts=layouts, out_layout=out_layout)
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    wsp = acl_env.malloc(ws) if ws else None

    def launch(expected, out):
        assert LEAKY.phase2(wsp, ws, ex, acl_env.stream) == 0, acl.get_recent_err_msg()
        assert acl.rt.synchronize_stream(acl_env.stream) == 0, acl.get_recent_err_msg()
        cases.assert_bits_equal(out.view(), expected)

    launch(cases.ref_leaky(g, x, np.float32(0.5)), ot)
    old_out = ot.storage_bytes()
    g2, x2 = -g[::-1], -x
    # storage laid out as the first: the new tensors made here only lend their addresses
    gt2, xt2 = acl_env.put_layout(g2, layouts[0]), acl_env.put_layout(x2, layouts[1])
    ot2 = acl_env.out(ot.view_shape, ot.dtype, out_layout)
    assert aclnn.aclSetInputTensorAddr(ex, 0, gt.tensor, gt2.addr) == 0
    assert aclnn.aclSetInputTensorAddr(ex, 1, xt.tensor, xt2.addr) == 0
    assert aclnn.aclSetOutputTensorAddr(ex, 0, ot.tensor, ot2.addr) == 0
    assert (gt.tensor.addr, xt.tensor.addr, ot.tensor.addr) == (gt2.addr, xt2.addr, ot2.addr)
    sentinel = ot2.storage()
    launch(cases.ref_leaky(g2, x2, np.float32(0.5)), ot2)
    assert ot.storage_bytes() == old_out
    outside = cases.outside_mask(*cases.out_layout(ot.view_shape, ot.dtype, out_layout))
    cases.assert_bits_equal(ot2.storage()[outside], sentinel[outside])
    acl_env.write(ot.addr, np.zeros(ot.base_shape, ot.dtype))
    assert aclnn.aclSetInputTensorAddr(ex, 0, gt.tensor, gt.addr) == 0
    assert aclnn.aclSetInputTensorAddr(ex, 1, xt.tensor, xt.addr) == 0
    assert aclnn.aclSetOutputTensorAddr(ex, 0, ot.tensor, ot.addr) == 0
    second = ot2.storage_bytes()
    launch(cases.ref_leaky(g, x, np.float32(0.5)), ot)
    assert ot2.storage_bytes() == second
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_moved_tensor_reaches_every_executor_and_phase_1(acl_env):
    """The address lives in the aclTensor (opbase's SetStorageAddr): moving self through one
    repeatable executor moves it for another bound to it (its relaunch, which had skipped the
    checks, reads the new storage), for a fresh executor not launched yet (whose operator's
    last fresh launch had bound the same handles) and for a new phase 1."""
    g = np.array([1.0, 2.0, 3.0, 4.0], F32)
    x = np.array([-1.0, 0.0, 0.5, 2.0], F32)
    x2 = np.array([2.0, -2.0, -0.5, 0.25], F32)
    gt, xt, ot, ht = acl_env.put(g), acl_env.put(x), acl_env.out((4,), F32), acl_env.out((4,), F32)
    lo, hi = acl_env.scalar(-1.0, "FLOAT"), acl_env.scalar(1.0, "FLOAT")
    slope = acl_env.scalar(0.5, "DOUBLE")
    _, leaky, _ = LEAKY.phase1(gt.tensor, xt.tensor, slope, False, ot.tensor)
    _, hard, _ = HARDTANH.phase1(gt.tensor, xt.tensor, lo, hi, ht.tensor)
    for ex in (leaky, hard):
        assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0

    def run(op, ex, out, expected):
        assert op.phase2(None, 0, ex, acl_env.stream) == 0, acl.get_recent_err_msg()
        assert acl.rt.synchronize_stream(acl_env.stream) == 0
        cases.assert_bits_equal(out.view(), np.array(expected, F32))

    run(LEAKY, leaky, ot, [0.5, 1.0, 3.0, 4.0])
    run(HARDTANH, hard, ht, [0.0, 2.0, 3.0, 0.0])  # strict bounds: 0.0 < self < 1.0 keeps grad
    assert aclnn.aclSetInputTensorAddr(leaky, 1, xt.tensor, acl_env.put(x2).addr) == 0
    run(LEAKY, leaky, ot, [1.0, 1.0, 1.5, 4.0])
    run(HARDTANH, hard, ht, [0.0, 0.0, 3.0, 4.0])
    # a fresh executor of the same handles; moved before its one launch, it reads the new storage
    ot2 = acl_env.out((4,), F32)
    _, fresh, ret = LEAKY.phase1(gt.tensor, xt.tensor, slope, False, ot.tensor)
    assert ret == 0 and LEAKY.phase2(None, 0, fresh, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    _, fresh, ret = LEAKY.phase1(gt.tensor, xt.tensor, slope, False, ot.tensor)
    assert ret == 0 and aclnn.aclSetOutputTensorAddr(fresh, 0, ot.tensor, ot2.addr) == 0
    acl_env.write(ot.addr, np.zeros(4, F32))
    run(LEAKY, fresh, ot2, [1.0, 1.0, 1.5, 4.0])
    cases.assert_bits_equal(ot.view(), np.zeros(4, F32))
    # phase 1 with the moved handles binds the new storage too
    _, again, ret = LEAKY.phase1(gt.tensor, xt.tensor, slope, False, ot.tensor)
    assert ret == 0
    acl_env.write(ot2.addr, np.zeros(4, F32))
    run(LEAKY, again, ot2, [1.0, 1.0, 1.5, 4.0])
    for ex in (leaky, hard):
        assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_in_place_operator_tensor_is_input_0_and_output_0(acl_env):
    """aclnnInplaceLeakyRelu's selfRef is input 0 and output 0 (opbase's ref parameters): either
    call moves the one aclTensor, and the repeatable executor then updates the new storage in
    place, leaving the old one as it was; index 1 is out of range for both."""
    x = np.array([-4.0, -1.0, 0.0, 2.0], F32)
    xt = acl_env.put(x)
    ws, ex, ret = aclnn.aclnnInplaceLeakyReluGetWorkspaceSize(xt.tensor, acl_env.scalar(0.25, "DOUBLE"))
    assert ret == 0 and ws == 0 and aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    assert aclnn.aclnnInplaceLeakyRelu(None, 0, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    first = np.array([-1.0, -0.25, 0.0, 2.0], F32)
    cases.assert_bits_equal(xt.view(), first)
    for k, call in enumerate((aclnn.aclSetOutputTensorAddr, aclnn.aclSetInputTensorAddr)):
        moved = acl_env.put(x * (k + 2))
        expect_acl_failure(call(ex, 1, xt.tensor, moved.addr), 161002)
        assert call(ex, 0, xt.tensor, moved.addr) == 0
        assert aclnn.aclnnInplaceLeakyRelu(None, 0, ex, acl_env.stream) == 0
        assert acl.rt.synchronize_stream(acl_env.stream) == 0
        cases.assert_bits_equal(moved.view(), first * (k + 2))
        cases.assert_bits_equal(xt.view(), first)  # the first storage, read through its address
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


@pytest.mark.parametrize("grad_dtype, layouts, out_layout", [
    (F32, ("contig", "contig"), "contig"),        # one Kernel step into out
    (F16, ("contig", "contig"), "contig"),        # Cast grad into the workspace first
    (F16, ("transposed", "sliced"), "offset"),    # Contiguous, Cast, Kernel, ViewCopy
    (F32, ("offset", "transposed"), "transposed"),
])
def test_repeatable_executor_under_each_backend(acl_env, grad_dtype, layouts, out_layout):
    """One repeatable executor launched under the numpy, then the numba, then the numpy backend
    again (each launch binds the backend in force; numba prepares each step once on its fixed
    operands): every run is the reference's bits."""
    from opsnn import kernels

    g, x = cases.grid(grad_dtype, F32)
    ws, ex, gt, xt, ot = _leaky(acl_env, g, x, 0.5, layouts=layouts, out_layout=out_layout)
    assert (ws > 0) == (grad_dtype == F16 or layouts != ("contig", "contig") or out_layout != "contig")
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    wsp = acl_env.malloc(ws) if ws else None
    saved = kernels.DEFAULT
    try:
        for name in ("numpy", "numba", "numpy"):
            kernels.set_default(name)
            acl_env.write(ot.addr, np.zeros(ot.base_shape, ot.dtype))  # the whole storage
            assert LEAKY.phase2(wsp, ws, ex, acl_env.stream) == 0, acl.get_recent_err_msg()
            assert acl.rt.synchronize_stream(acl_env.stream) == 0, acl.get_recent_err_msg()
            cases.assert_bits_equal(ot.view(), cases.ref_leaky(g, x, np.float32(0.5)))
    finally:
        kernels.set_default(saved)
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_repeatable_hardtanh_executor(acl_env):
    g = np.array([1.0, 2.0], F16)
    x = np.array([0.0, 3.0], F16)
    gt, xt, ot = acl_env.put(g), acl_env.put(x), acl_env.out((2,), F16)
    ws, ex, ret = HARDTANH.phase1(gt.tensor, xt.tensor, acl_env.scalar(-1.0, "FLOAT"),
                                  acl_env.scalar(1.0, "FLOAT"), ot.tensor)
    assert ret == 0
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    wsp = acl_env.malloc(ws) if ws else None
    for _ in range(2):
        assert HARDTANH.phase2(wsp, ws, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    cases.assert_bits_equal(ot.view(), np.array([1.0, 0.0], F16))
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0
    expect_acl_failure(HARDTANH.phase2(wsp, ws, ex, acl_env.stream), 161002)


def test_single_use_executor_second_run_refused_and_out_kept(acl_env):
    g, x = cases.grid(F32, F32)
    ws, ex, gt, xt, ot = _leaky(acl_env, g, x, 0.5)
    wsp = acl_env.malloc(ws) if ws else None
    assert LEAKY.phase2(wsp, ws, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    after_first = ot.storage_bytes()
    acl_env.write(gt.addr, np.zeros_like(g))
    expect_acl_failure(LEAKY.phase2(wsp, ws, ex, acl_env.stream), 161002)
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    assert ot.storage_bytes() == after_first


def test_a_failed_launch_releases_a_single_use_executor(acl_env):
    """(A breaker) a single-use executor whose launch failed on a bad stream (destroyed, or a
    handle never made) could be launched again. opbase's CommonOpExecutorRun deletes an executor
    not made repeatable once past its null checks whatever the launch returns (its stream's
    failure included), so a C program's retry uses freed memory on a device: a launch whose
    arguments a C caller could pass that fails releases it (161002 afterwards, naming why, and
    aclDestroyAclOpExecutor too: a double free); one refused for a Python type no C call could
    pass (a float workspaceSize) keeps it, as pyACL would not have called C; a repeatable one
    stays (test_relaunch_skips_checks_only_for_the_same_call). out is untouched throughout."""
    g, x = cases.grid(F32, F32)
    dead, ret = acl.rt.create_stream()
    assert ret == 0 and acl.rt.destroy_stream(dead) == 0
    for bad_stream, why in ((dead, "not a live stream"), (dead + 4096, "not a live stream")):
        ws, ex, _, _, ot = _leaky(acl_env, g, x, 0.5)
        before = ot.storage_bytes()
        wsp = acl_env.malloc(ws) if ws else None
        msg = expect_acl_failure(LEAKY.phase2(wsp, ws, ex, bad_stream), 361001, words=(why,))
        assert msg.endswith("; the failed launch released the executor, as CANN's launch releases one not made "
                            "repeatable whatever it returns: run GetWorkspaceSize again"), msg
        expect_acl_failure(LEAKY.phase2(wsp, ws, ex, acl_env.stream), 161002,
                           words=("already destroyed", "aclnnLeakyReluBackward released it at a failed launch"))
        expect_acl_failure(aclnn.aclDestroyAclOpExecutor(ex), 161002, words=("already destroyed",))
        assert acl.rt.synchronize_stream(acl_env.stream) == 0 and ot.storage_bytes() == before
    # a workspace smaller than asked: C's launch would run (and corrupt memory), then release it
    ws, ex, *_ = _leaky(acl_env, g, x, 0.5, out_dtype=F16)  # (a cast to out: a workspace slot)
    assert ws > 0
    expect_acl_failure(LEAKY.phase2(acl_env.malloc(ws), ws - 1, ex, acl_env.stream), 161002, words=("smaller",))
    expect_acl_failure(LEAKY.phase2(acl_env.malloc(ws), ws, ex, acl_env.stream), 161002, words=("already destroyed",))
    # a Python type no C call passes: refused before any C call would run, the executor kept
    ws, ex, _, _, ot = _leaky(acl_env, g, x, 0.5, out_dtype=F16)
    wsp = acl_env.malloc(ws)
    expect_acl_failure(LEAKY.phase2(wsp, float(ws), ex, acl_env.stream), 161002, words=("workspaceSize",))
    assert LEAKY.phase2(wsp, ws, ex, acl_env.stream) == 0 and acl.rt.synchronize_stream(acl_env.stream) == 0


def test_phase2_without_executor_is_refused(acl_env):
    ret = LEAKY.phase2(None, 0, None, acl_env.stream)
    assert isinstance(ret, int) and ret != 0
    assert acl.get_recent_err_msg()
    ret = HARDTANH.phase2(None, 0, None, acl_env.stream)
    assert isinstance(ret, int) and ret != 0
    assert acl.get_recent_err_msg()


def test_exact_workspace_size_is_enough_for_every_layout(acl_env):
    """Phase 2 with exactly the reported size succeeds for strided / casting cases."""
    g, x = cases.grid(F16, F32)
    for layouts in (("sliced", "offset"), ("transposed", "contig")):
        for out_layout, odt in (("sliced", F64), ("transposed", F16), ("offset", F32)):
            ws, ex, gt, xt, ot = _leaky(acl_env, g, x, 0.5, out_dtype=odt, layouts=layouts,
                                        out_layout=out_layout)
            assert LEAKY.phase2(acl_env.malloc(ws) if ws else None, ws, ex, acl_env.stream) == 0
            assert acl.rt.synchronize_stream(acl_env.stream) == 0
            cases.assert_bits_equal(ot.view(), cases.ref_leaky(g, x, np.float32(0.5), odt))


_PHASE1 = {  # name -> phase 1 of (grad, self, out) in float32, slope 0.5 or bounds [-1, 1]
    "LeakyReluBackward": lambda env, g, x, out: aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(
        g, x, env.scalar(0.5, "DOUBLE"), False, out),
    "HardtanhBackward": lambda env, g, x, out: aclnn.aclnnHardtanhBackwardGetWorkspaceSize(
        g, x, env.scalar(-1.0, "DOUBLE"), env.scalar(1.0, "DOUBLE"), out),
    "LeakyRelu": lambda env, g, x, out: aclnn.aclnnLeakyReluGetWorkspaceSize(x, env.scalar(0.5, "DOUBLE"), out),
    "Hardtanh": lambda env, g, x, out: aclnn.aclnnHardtanhGetWorkspaceSize(
        x, env.scalar(-1.0, "DOUBLE"), env.scalar(1.0, "DOUBLE"), out),
}


@pytest.mark.parametrize("op, contiguous, transposed", [
    ("LeakyReluBackward", ["Kernel"], ["Kernel", "ViewCopy"]),
    ("HardtanhBackward", ["Kernel"], ["Contiguous", "Kernel", "ViewCopy"]),  # ops-nn's copy of out first
    ("LeakyRelu", ["Kernel"], ["Kernel", "ViewCopy"]),
    ("Hardtanh", ["Kernel"], ["Kernel", "ViewCopy"]),
])
def test_a_strided_out_needing_no_cast_is_written_by_a_view_copy(acl_env, op, contiguous, transposed):
    """An out of the promoted dtype (float32 here: no Cast) is the kernel's destination only where
    it is contiguous (workspace 0, the one Kernel step); a transposed one takes the result through
    the chain's ViewCopy from a contiguous temporary in the workspace (8 x 16 float32: 512 bytes),
    as ops-nn's l0 chain does. (A mutation breaker: a plan writing the kernel straight into any
    out of the promoted dtype, its steps and workspace off the chain, passed every test.)"""
    g, x = cases.filled((8, 16), F32, 5), cases.filled((8, 16), F32, 6)
    reference = {"LeakyReluBackward": lambda: cases.ref_leaky(g, x, np.float32(0.5)),
                 "HardtanhBackward": lambda: cases.ref_hardtanh(g, x, -1.0, 1.0),
                 "LeakyRelu": lambda: np.where(x > 0, x, x * np.float32(0.5)),
                 "Hardtanh": lambda: np.clip(x, np.float32(-1.0), np.float32(1.0))}[op]()
    for layout, steps, size in (("contig", contiguous, 0), ("transposed", transposed, 512)):
        gt, xt = acl_env.put_layout(g, "contig"), acl_env.put_layout(x, "contig")
        ot = acl_env.out(x.shape, F32, layout)
        ws, ex, ret = _PHASE1[op](acl_env, gt.tensor, xt.tensor, ot.tensor)
        assert ret == 0, acl.get_recent_err_msg()
        assert (ws, [step.kind for step in ex.plan.steps]) == (size, steps), layout
        run = getattr(aclnn, "aclnn" + op)
        assert run(acl_env.malloc(ws) if ws else None, ws, ex, acl_env.stream) == 0, acl.get_recent_err_msg()
        assert acl.rt.synchronize_stream(acl_env.stream) == 0
        cases.assert_bits_equal(ot.view(), reference)


@pytest.mark.parametrize("dt", [F32, F16], ids=str)
def test_hardtanh_strided_out_workspace(acl_env, dt):
    g, x = cases.grid(dt, dt, bounds=(-1.0, 1.0))
    gt, xt = acl_env.put_layout(g, "sliced"), acl_env.put_layout(x, "transposed")
    ot = acl_env.out(x.shape, dt, "sliced")
    before = ot.storage()
    ws, ex, ret = HARDTANH.phase1(gt.tensor, xt.tensor, acl_env.scalar(-1.0, "DOUBLE"),
                                  acl_env.scalar(1.0, "DOUBLE"), ot.tensor)
    assert ret == 0
    assert ot.storage_bytes() == before.tobytes()
    assert HARDTANH.phase2(acl_env.malloc(ws) if ws else None, ws, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    assert_out_written(ot, cases.ref_hardtanh(g, x, -1.0, 1.0), before, "hardtanh strided out")


@pytest.mark.parametrize("stride", [2**40, 2**61, 2**63 - 1])
def test_a_size_one_dim_takes_any_int64_stride(acl_env, stride):
    """A size-1 dim's stride is never stepped, and aclCreateTensor takes any int64 there. Found by
    a numerics breaker: from 2**61 a float32 one is past 2**63 in bytes, which NumPy refused for
    the device view, so the launch failed 561000 (an internal error). Now each launch is right:
    a [1, 4] grad so strided broadcast against a [3, 4] self, and an in-place Hardtanh on it."""
    F, ND = acl.ACL_FLOAT, acl.ACL_FORMAT_ND
    g, x = np.array([1.0, -2.0, 3.0, -4.0], F32), np.arange(-6.0, 6.0, dtype=F32).reshape(3, 4)
    ga, xa, oa = acl_env.malloc(16), acl_env.malloc(48), acl_env.malloc(48)
    acl_env.write(ga, g)
    acl_env.write(xa, x)
    gt = acl.create_tensor([1, 4], F, [stride, 1], 0, ND, [4], ga)
    xt = acl.create_tensor([3, 4], F, [4, 1], 0, ND, [12], xa)
    ot = acl.create_tensor([3, 4], F, [4, 1], 0, ND, [12], oa)
    acl_env._tensors += [gt, xt, ot]
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, acl_env.scalar(0.5, "DOUBLE"), False, ot)
    assert (ret, ws) == (0, 0), acl.get_recent_err_msg()
    assert aclnn.aclnnLeakyReluBackward(None, 0, ex, acl_env.stream) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    cases.assert_bits_equal(acl_env.read(oa, (3, 4), F32), np.where(x > 0, g, g * np.float32(0.5)))
    ws, ex, ret = aclnn.aclnnInplaceHardtanhGetWorkspaceSize(gt, acl_env.scalar(-1.5, "DOUBLE"),
                                                            acl_env.scalar(2.0, "DOUBLE"))
    assert ret == 0, acl.get_recent_err_msg()
    assert aclnn.aclnnInplaceHardtanh(acl_env.malloc(ws) if ws else None, ws, ex, acl_env.stream) == 0, \
        acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    cases.assert_bits_equal(acl_env.read(ga, (4,), F32), np.array([1.0, -1.5, 2.0, -1.5], F32))


def test_tensors_made_without_memory_get_it_from_set_tensor_addr(acl_env):
    """The aclSetInputTensorAddr documentation's sample: every aclTensor made with a null
    tensorData, phase 1, aclSetAclOpExecutorRepeatable, then the addresses set before the first
    launch. opbase's aclCreateTensor stores the pointer as given and phase 1 reads no memory, so
    all of it passes (create_tensor had refused the null tensorData; a broadcast phase 1 over
    null tensors then failed the out-overlap check, reading address 0). A launch while a tensor
    still has no memory is 161002, naming it and the calls that give it an address."""
    def unbacked(shape):
        t = acl.create_tensor(shape, acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, shape, None)
        assert t is not None, acl.get_recent_err_msg()
        acl_env._tensors.append(t)
        return t

    gt, xt, ot = unbacked([2, 3]), unbacked([1, 3]), unbacked([2, 3])
    assert acl.get_raw_tensor_addr(gt) == (0, 0)
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, acl_env.scalar(0.5, "FLOAT"), False, ot)
    assert ret == 0 and ws == 0, acl.get_recent_err_msg()
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    g = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], F32)
    x = np.array([[-1.0, 0.0, 2.0]], F32)
    gd, xd = acl_env.put(g), acl_env.put(x)
    assert aclnn.aclSetInputTensorAddr(ex, 0, gt, gd.addr) == 0
    assert aclnn.aclSetInputTensorAddr(ex, 1, xt, xd.addr) == 0
    msg = expect_acl_failure(aclnn.aclnnLeakyReluBackward(None, 0, ex, acl_env.stream), 161002)
    assert msg == ("LeakyReluBackward: out has no device memory: its tensorData is a null pointer; give it "
                   "its storage's address with aclSetOutputTensorAddr (a repeatable executor) or "
                   "acl.set_raw_tensor_addr before the launch")
    od = acl_env.out((2, 3), F32)
    assert aclnn.aclSetOutputTensorAddr(ex, 0, ot, od.addr) == 0
    assert aclnn.aclnnLeakyReluBackward(None, 0, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    cases.assert_bits_equal(od.view(), np.array([[0.5, 1.0, 3.0], [2.0, 2.5, 6.0]], F32))
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0


def test_in_place_launch_refusals_name_self_ref(acl_env):
    """An in-place operator's caller passed selfRef: the launch's refusals of its tensor (no
    memory yet: InplaceLeakyRelu; destroyed after phase 1: InplaceHardtanh) name selfRef (they
    had said "self"). Phase 1's refusals of it name self, the name CANN's logs give it: its
    in-place entry points call the out-of-place body with out = selfRef, whose checks name their
    own argument (spec sections 5 and 6); asserted here for a null selfRef of both."""
    for phase1, scalars in ((aclnn.aclnnInplaceLeakyReluGetWorkspaceSize, [0.5]),
                            (aclnn.aclnnInplaceHardtanhGetWorkspaceSize, [-1.0, 1.0])):
        op = phase1.__name__.removeprefix("aclnn").removesuffix("GetWorkspaceSize")
        ret = phase1(None, *(acl_env.scalar(v, "FLOAT") for v in scalars))[2]
        assert expect_acl_failure(ret, 161001) == f"{op}: self must be an aclTensor, got a null pointer (None)"
    unbacked = acl.create_tensor([4], acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, [4], None)
    acl_env._tensors.append(unbacked)
    ws, ex, ret = aclnn.aclnnInplaceLeakyReluGetWorkspaceSize(unbacked, acl_env.scalar(0.5, "FLOAT"))
    assert ret == 0, acl.get_recent_err_msg()
    msg = expect_acl_failure(aclnn.aclnnInplaceLeakyRelu(None, ws, ex, acl_env.stream), 161002)
    released = ("; the failed launch released the executor, as CANN's launch releases one not made repeatable "
                "whatever it returns: run GetWorkspaceSize again")
    assert msg == ("InplaceLeakyRelu: selfRef has no device memory: its tensorData is a null pointer; give it "
                   "its storage's address with aclSetInputTensorAddr (a repeatable executor) or "
                   "acl.set_raw_tensor_addr before the launch" + released)
    x = np.array([-2.0, 0.5, 1.0, -1.0], F32)
    xt = acl_env.put(x)
    lo, hi = acl_env.scalar(-1.0, "FLOAT"), acl_env.scalar(1.0, "FLOAT")
    ws, ex, ret = aclnn.aclnnInplaceHardtanhGetWorkspaceSize(xt.tensor, lo, hi)
    assert ret == 0 and acl.destroy_tensor(xt.tensor) == 0
    acl_env._tensors.remove(xt.tensor)
    msg = expect_acl_failure(aclnn.aclnnInplaceHardtanh(None, ws, ex, acl_env.stream), 161002)
    assert msg == ("InplaceHardtanh: selfRef was destroyed (aclDestroyTensor or aclDestroyTensorList) after "
                   "GetWorkspaceSize; destroy tensors only after the launch" + released)
    cases.assert_bits_equal(xt.view(), x)


def test_an_empty_view_over_a_null_storage_launches(acl_env):
    """A view with no elements needs no memory, whatever storage it names: create_tensor takes
    a null tensorData for it (as C callers pass nullptr there), and its launch has nothing to
    read or write, so it runs (ret 0), out-of-place and in place. The launch had looked the
    null address up as the storage's memory and refused it, 161002 "gradOutput's device memory
    is gone: ... address 0x0 is not inside a live device allocation", the freed-memory wording,
    for a tensor create_tensor had taken."""
    def empty(view, storage):
        t = acl.create_tensor(view, acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, storage, None)
        assert t is not None, acl.get_recent_err_msg()
        acl_env._tensors.append(t)
        return t

    gt, xt, ot = empty([0], [4]), empty([2, 0], [4]), empty([2, 0], [2, 3])
    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt, xt, acl_env.scalar(0.5, "FLOAT"), False, ot)
    assert (ws, ret) == (0, 0), acl.get_recent_err_msg()
    assert aclnn.aclnnLeakyReluBackward(None, 0, ex, acl_env.stream) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    ws, ex, ret = aclnn.aclnnInplaceHardtanhGetWorkspaceSize(empty([0, 3], [3]), acl_env.scalar(-1.0, "FLOAT"),
                                                           acl_env.scalar(1.0, "FLOAT"))
    assert (ws, ret) == (0, 0), acl.get_recent_err_msg()
    assert aclnn.aclnnInplaceHardtanh(None, 0, ex, acl_env.stream) == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
