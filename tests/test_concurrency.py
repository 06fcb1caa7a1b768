"""Concurrency (docs/reliability.md, "threads"): many threads, each with its own stream, run
both operators on shared read-only inputs into private outputs and get exact results; a stream
keeps task order whoever synchronizes it; recent-error messages are per thread; a single-use
executor launched from many threads at once runs once; allocation from many threads balances;
a stream destroyed while another thread launches on it loses nothing."""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np
import pytest

import opsnn
import opsnn.acl as acl
from conftest import run_python
from hostile import F16, F32, Dev, dev, mem_state, runtime_guard  # noqa: F401 - fixtures
from opsnn import aclnn

THREADS = 8


@pytest.fixture(autouse=True)
def fast_thread_switching():
    """Switch threads every microsecond (CPython's default is 5 ms), so races get a chance."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


def run_threads(target, n=THREADS, *args):
    """Start ``n`` threads on ``target(i, barrier, *args)``; re-raise the first failure."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def body(i):
        try:
            target(i, barrier, *args)
        except BaseException as exc:  # noqa: BLE001 - reported to the main thread
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive(), "a thread hung"
    if errors:
        raise errors[0]


def ref_leaky(g, x, slope):
    with np.errstate(all="ignore"):
        return np.where(x > 0, g, g * np.float32(slope)).astype(g.dtype)


def ref_hardtanh(g, x, lo, hi):
    return np.where(((x > np.float32(lo)) & (x < np.float32(hi))) | np.isnan(x), g, 0).astype(g.dtype)


def test_threads_with_own_streams_on_shared_inputs(dev):
    """8 threads x 40 iterations, each with its own stream and private outputs, run both ops
    (aclnn two-phase, fp32 and fp16 -> workspace, and the Pythonic API) on the same read-only
    device tensors and NumPy arrays: every result exact, the shared inputs unchanged."""
    rng = np.random.default_rng(7)
    g = rng.standard_normal((16, 33)).astype(F32)
    x = rng.standard_normal((16, 33)).astype(F32)
    x[0, :4] = [0.0, -0.0, np.nan, 1.0]
    g16 = g.astype(F16)
    gt, xt, g16t = dev.tensor(g), dev.tensor(x), dev.tensor(g16)
    shared = [bytes(dev.read(a, (16 * 33 * 4,), np.uint8)) for a in dev.addrs[:2]]
    g_host, x_host = g.copy(), x.copy()
    mem0 = mem_state()

    def worker(i, barrier):
        stream, ret = acl.rt.create_stream()
        assert ret == 0
        mine = Dev(stream)
        try:
            out = mine.tensor(np.zeros((16, 33), F32))
            out_addr = mine.addrs[-1]
            barrier.wait()
            for it in range(40):
                slope, lo, hi = 0.01 * (i + 1), -0.5 - 0.1 * i, 0.5 + 0.05 * it
                grad = g16t if it % 3 == 0 else gt  # fp16 grad -> a Cast temporary in the workspace
                if it % 2:
                    s = mine.scalar(slope)
                    ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(grad, xt, s, False, out)
                    expected = ref_leaky((g16 if grad is g16t else g).astype(F32), x, slope)
                else:
                    a, b = mine.scalar(lo), mine.scalar(hi)
                    if grad is g16t:
                        grad = gt
                    ws, ex, ret = aclnn.aclnnHardtanhBackwardGetWorkspaceSize(grad, xt, a, b, out)
                    expected = ref_hardtanh(g, x, lo, hi)
                assert ret == 0, acl.get_recent_err_msg()
                workspace = mine.malloc(ws) if ws else None
                phase2 = aclnn.aclnnLeakyReluBackward if it % 2 else aclnn.aclnnHardtanhBackward
                assert phase2(workspace, ws, ex, stream) == 0, acl.get_recent_err_msg()
                assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()
                np.testing.assert_array_equal(mine.read(out_addr, (16, 33), F32), expected)
                if workspace:
                    mine.addrs.remove(workspace)
                    assert acl.rt.free(workspace) == 0
                # the Pythonic layer on the shared NumPy arrays
                res = opsnn.leaky_relu_backward(g_host, x_host, slope) if it % 2 else \
                    opsnn.hardtanh_backward(g_host, x_host, lo, hi)
                np.testing.assert_array_equal(res, ref_leaky(g, x, slope) if it % 2 else ref_hardtanh(g, x, lo, hi))
        finally:
            mine.close()
            assert acl.rt.destroy_stream(stream) == 0

    run_threads(worker)
    assert [bytes(dev.read(a, (16 * 33 * 4,), np.uint8)) for a in dev.addrs[:2]] == shared
    assert g_host.tobytes() == g.tobytes() and x_host.tobytes() == x.tobytes()
    assert mem_state() == mem0


def _copy_chain(dev: Dev, stream, length: int):
    """Queue ``length`` launches on ``stream`` where launch k copies buffer k into buffer k+1
    (LeakyReluBackward with self > 0 passes grad through): buffer ``length`` gets the value only
    if every launch ran after its predecessor."""
    value = np.arange(1, 9, dtype=F32)
    pos = dev.tensor(np.ones(8, F32))
    s = dev.scalar(0.0)
    bufs = [dev.tensor(value)] + [dev.tensor(np.zeros(8, F32)) for _ in range(length)]
    last = dev.addrs[-1]
    executors = []
    for k in range(length):
        ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(bufs[k], pos, s, False, bufs[k + 1])
        assert ret == 0 and ws == 0
        executors.append(ex)
    return executors, last, value


def test_stream_keeps_task_order(dev):
    """A chain of dependent launches queued on one stream from one thread while 4 other threads
    keep synchronizing the same stream: the tasks still run one at a time, in order."""
    stream = dev.stream
    for _ in range(10):
        executors, last, value = _copy_chain(dev, stream, 60)
        stop = threading.Event()

        def syncer(i, barrier):
            barrier.wait()
            while not stop.is_set():
                assert acl.rt.synchronize_stream(stream) == 0, acl.get_recent_err_msg()

        def launcher(i, barrier):
            if i:
                return syncer(i, barrier)
            barrier.wait()
            try:
                for ex in executors:
                    assert aclnn.aclnnLeakyReluBackward(None, 0, ex, stream) == 0
            finally:
                stop.set()

        run_threads(launcher, 5)
        assert acl.rt.synchronize_stream(stream) == 0
        np.testing.assert_array_equal(dev.read(last, (8,), F32), value)


def test_threads_queue_on_one_stream(dev):
    """4 threads each queue their own dependent chain on one shared stream and synchronize it:
    each chain's tasks keep their relative order (its last buffer gets the value)."""
    stream = dev.stream
    chains = [_copy_chain(dev, stream, 25) for _ in range(4)]

    def worker(i, barrier):
        executors = chains[i][0]
        barrier.wait()
        for k, ex in enumerate(executors):
            assert aclnn.aclnnLeakyReluBackward(None, 0, ex, stream) == 0
            if k % 5 == 4:
                assert acl.rt.synchronize_stream(stream) == 0

    run_threads(worker, 4)
    assert acl.rt.synchronize_stream(stream) == 0
    for _, last, value in chains:
        np.testing.assert_array_equal(dev.read(last, (8,), F32), value)


def test_recent_error_is_per_thread(acl_runtime):
    """Each thread sees only its own failure's message; another thread's failure neither
    replaces nor clears it. (The runtime is initialised by the fixture: the frees below failed
    with 100001 where no earlier test of the same xdist worker had initialised it.)"""
    acl.get_recent_err_msg()
    assert acl.rt.free(0xDEAD_0000) == 100000  # the main thread's own failure
    bogus = [0x3_0000_0000 + 0x1000 * i for i in range(THREADS)]

    def worker(i, barrier):
        assert acl.get_recent_err_msg() is None, "a new thread starts with no message"
        barrier.wait()
        assert acl.rt.free(bogus[i]) == 100000
        barrier.wait()  # every thread has failed now
        msg = acl.get_recent_err_msg()
        assert hex(bogus[i]) in msg and all(hex(b) not in msg for j, b in enumerate(bogus) if j != i), msg
        assert acl.get_recent_err_msg() is None
        try:
            opsnn.leaky_relu_backward(np.zeros(2, F32), np.zeros(3, F32))
        except opsnn.AclnnError as exc:
            assert exc.status == 161002
        barrier.wait()

    run_threads(worker)
    msg = acl.get_recent_err_msg()
    assert msg is not None and hex(0xDEAD_0000) in msg
    assert acl.get_recent_err_msg() is None


def test_single_use_executor_runs_once(dev):
    """One single-use executor launched by 8 threads at the same instant: exactly one launch is
    accepted, the others get 161002 'already run' (50 rounds)."""
    g, x = dev.tensor(np.arange(4, dtype=F32)), dev.tensor(-np.ones(4, F32))
    s = dev.scalar(2.0)
    out = dev.tensor(np.zeros(4, F32))
    out_addr = dev.addrs[-1]
    for _ in range(50):
        ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(g, x, s, False, out)
        assert ret == 0
        results = [None] * THREADS

        def worker(i, barrier):
            barrier.wait()
            results[i] = aclnn.aclnnLeakyReluBackward(None, 0, ex, dev.stream)
            if results[i]:
                assert "already run" in acl.get_recent_err_msg()

        run_threads(worker)
        assert sorted(results) == [0] + [161002] * (THREADS - 1), results
        assert dev.stream and acl.rt.synchronize_stream(dev.stream) == 0
        assert len(acl.rt.STATE.streams.get(dev.stream)._tasks) == 0
    np.testing.assert_array_equal(dev.read(out_addr, (4,), F32), np.arange(4, dtype=F32) * 2)


def test_malloc_free_from_threads_balances():
    """8 threads x 500 malloc/free pairs (plus double frees that must fail): addresses never
    collide and the accounting returns to where it was."""
    mem0 = mem_state()
    seen: list[set] = [set() for _ in range(THREADS)]

    def worker(i, barrier):
        barrier.wait()
        for k in range(500):
            addr, ret = acl.rt.malloc(32 + (k % 7) * 64, 0)
            assert ret == 0
            seen[i].add(addr)
            assert acl.rt.free(addr) == 0
            if k % 50 == 0:
                assert acl.rt.free(addr) == 100000

    run_threads(worker)
    everything = set().union(*seen)
    assert len(everything) == THREADS * 500, "two live allocations got the same address"
    assert mem_state() == mem0


def test_stream_destroyed_while_another_thread_launches(dev):
    """Thread A launches on stream S in a loop while thread B destroys S: each launch either is
    accepted and its work runs (destroy waits for it) or is refused with 361001; none is
    accepted and then dropped."""
    g, x = dev.tensor(np.arange(1, 5, dtype=F32)), dev.tensor(np.ones(4, F32))
    s = dev.scalar(0.5)
    launchers, per_thread = 3, 12
    for round_ in range(40):
        stream, ret = acl.rt.create_stream()
        assert ret == 0
        executors, out_addrs = [], []
        for _ in range(launchers * per_thread):
            out = dev.tensor(np.zeros(4, F32))
            out_addrs.append(dev.addrs[-1])
            ws, ex, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(g, x, s, False, out)
            assert ret == 0
            executors.append(ex)
        statuses: dict[int, int] = {}
        destroyed = []

        def worker(i, barrier):
            barrier.wait()
            if i < launchers:
                for k in range(i, len(executors), launchers):
                    statuses[k] = aclnn.aclnnLeakyReluBackward(None, 0, executors[k], stream)
            else:
                for _ in range(800 * round_):  # let some launches in first (more each round)
                    pass
                destroyed.append(acl.rt.destroy_stream(stream))

        run_threads(worker, launchers + 1)
        assert destroyed == [0]
        assert set(statuses.values()) <= {0, 361001}, statuses
        for k, addr in enumerate(out_addrs):
            written = dev.read(addr, (4,), F32)
            if statuses[k] == 0:
                np.testing.assert_array_equal(written, np.arange(1, 5, dtype=F32), "an accepted launch was lost")
            else:
                assert not written.any()


def test_a_destroy_racing_phase_1_leaves_no_handle_to_skip_checks_for(acl_env, monkeypatch):
    """Found by a breaker: a destroy on another thread landing while phase 1 checked (simulated
    inside the out-overlap check) cleared the memo of checked handles before that call stored
    its own, and a later call with the destroyed scalar returned 0 instead of 161002; the memo
    now holds the release count read before the checks."""
    import cases

    from opsnn import engine

    g = cases.filled((4, 5), F32, 0, cases.grad_specials(F32))
    x = cases.filled((4, 5), F32, 1, cases.self_specials(F32))
    gt, xt, out = acl_env.put(g), acl_env.put(x), acl_env.out(g.shape, F32)
    slope = acl_env.scalar(0.5, "DOUBLE")
    real = engine.check_out_overlap

    def racing(spec, args):
        real(spec, args)
        assert acl.destroy_scalar(slope) == 0
    monkeypatch.setattr(engine, "check_out_overlap", racing)
    assert aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt.tensor, xt.tensor, slope, False, out.tensor)[2] == 0
    monkeypatch.undo()
    assert aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt.tensor, xt.tensor, slope, False, out.tensor)[2] == 161002
    assert "negativeSlope" in acl.get_recent_err_msg()


def test_racing_destroys_destroy_once(acl_runtime):
    """Found by a breaker: two threads destroying one tensor, one list, two lists sharing a tensor,
    or a list and a tensor in it both got 0 (~70 in 3000 races: the destroyed flags were checked
    and set with no lock). Two threads each destroy their side of 3000 pairs of each kind, a
    barrier lining them up every time: exactly one destroy of a pair gets 0, the other 100000,
    and the tensor ends destroyed."""
    kinds = {  # name: (the pair of targets for a tensor, the destroy of each side)
        "one tensor": (lambda t: (t, t), acl.destroy_tensor, acl.destroy_tensor),
        "one list": (lambda t: (acl.create_tensor_list([t]),) * 2, acl.destroy_tensor_list, acl.destroy_tensor_list),
        "two lists sharing a tensor": (lambda t: (acl.create_tensor_list([t]), acl.create_tensor_list([t])),
                                       acl.destroy_tensor_list, acl.destroy_tensor_list),
        "a list and its tensor": (lambda t: (acl.create_tensor_list([t]), t), acl.destroy_tensor_list,
                                  acl.destroy_tensor)}
    trials = 3000
    for name, (make, first, second) in kinds.items():
        tensors = [acl.create_tensor([0], acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, [0], None) for _ in range(trials)]
        pairs = [make(t) for t in tensors]
        rets = [[None] * trials, [None] * trials]

        def worker(i, barrier, pairs=pairs, rets=rets, destroy=(first, second)):
            for k, pair in enumerate(pairs):
                barrier.wait()
                rets[i][k] = destroy[i](pair[i])

        run_threads(worker, 2)
        outcomes = [sorted(race) for race in zip(*rets)]
        assert outcomes == [[0, 100000]] * trials, (
            f"{name}: {outcomes.count([0, 0])} of {trials} races destroyed twice")
        assert all(t.destroyed for t in tensors)
    acl.get_recent_err_msg()


def test_list_creation_and_destroys_are_atomic(acl_runtime, monkeypatch):
    """create_tensor_list / create_scalar_list read their elements' destroyed flags under the
    lock every acl_meta.h destroy sets them under, so a destroy on another thread lands wholly
    before the list is made or after it (they were read unlocked: a list could be made from a
    tensor whose destroy was under way). While the constructor checks an element, another thread
    finds that lock taken (a non-blocking acquire: no timing involved); the lock is free after."""
    from opsnn._core import arrays
    from opsnn.acl import _meta

    real, probes = arrays.HandleList.element, []

    def probed(self, value, index):
        got = []
        prober = threading.Thread(target=lambda: got.append(_meta._DESTROYED_LOCK.acquire(blocking=False)))
        prober.start()
        prober.join()
        if got[0]:
            _meta._DESTROYED_LOCK.release()
        probes.append((type(self).__name__, index, got[0]))
        return real(self, value, index)

    monkeypatch.setattr(arrays.HandleList, "element", probed)
    a, b = (acl.create_tensor([0], acl.ACL_FLOAT, None, 0, acl.ACL_FORMAT_ND, [0], None) for _ in range(2))
    tensors = acl.create_tensor_list([a, b])
    scalars = acl.create_scalar_list([acl.create_scalar(1.0, acl.ACL_FLOAT)])
    assert tensors.size == 2 and scalars.size == 1
    # each element checked twice, both times under the lock (read again after construction)
    assert probes == [("aclTensorList", 0, False), ("aclTensorList", 1, False)] * 2 + [("aclScalarList", 0, False)] * 2
    assert _meta._DESTROYED_LOCK.acquire(blocking=False)  # released when the constructor returned
    _meta._DESTROYED_LOCK.release()
    monkeypatch.undo()
    # a destroy after the list was made: the list's destroy is refused, nothing destroyed twice
    assert acl.destroy_tensor(b) == 0
    assert acl.destroy_tensor_list(tensors) == 100000 and not a.destroyed
    assert "value[1], an aclTensor, was destroyed after the list was made" in acl.get_recent_err_msg()
    assert acl.destroy_tensor(a) == 0 and acl.destroy_scalar_list(scalars) == 0
    # the lock is reentrant: a destroy run on the constructing thread itself (a wrapper's __del__
    # the cycle collector runs at an allocation inside the constructor; here the value's own
    # __iter__) goes through and the list refuses the element it destroyed (a plain lock hung)
    keep, gone = acl.create_scalar(1.0, acl.ACL_FLOAT), acl.create_scalar(2.0, acl.ACL_FLOAT)

    class DestroysOnIter(list):
        def __iter__(self):
            assert acl.destroy_scalar(gone) == 0
            return super().__iter__()

    assert acl.create_scalar_list(DestroysOnIter([keep, gone])) is None and gone.destroyed
    assert "value[1] is an aclScalar that was already destroyed" in acl.get_recent_err_msg()
    assert acl.destroy_scalar(keep) == 0
    # a list's destroy claims the list before it reads its elements, and reads them twice: a
    # destroy run on the same thread meanwhile (a __del__, a signal handler) of the list itself
    # is refused, and one of an element fails the list's destroy, nothing destroyed twice (a
    # breaker: both destroys of the list had returned 0)
    from opsnn._core import arrays

    real_owned, inner = arrays.HandleList.owned, []

    def destroying(target):
        def owned(self):
            if not inner:
                inner.append(acl.destroy_scalar_list(listed) if target is None else acl.destroy_scalar(target))
            return real_owned(self)
        return owned

    first, second = acl.create_scalar(1.0, acl.ACL_FLOAT), acl.create_scalar(2.0, acl.ACL_FLOAT)
    listed = acl.create_scalar_list([first, second])
    monkeypatch.setattr(arrays.HandleList, "owned", destroying(None))
    assert acl.destroy_scalar_list(listed) == 0 and inner == [100000]
    assert listed.destroyed and first.destroyed and second.destroyed
    inner.clear()
    first, second = acl.create_scalar(1.0, acl.ACL_FLOAT), acl.create_scalar(2.0, acl.ACL_FLOAT)
    listed = acl.create_scalar_list([first, second])
    monkeypatch.setattr(arrays.HandleList, "owned", destroying(second))
    assert acl.destroy_scalar_list(listed) == 100000 and inner == [0]
    assert "value[1], an aclScalar, was destroyed after the list was made" in acl.get_recent_err_msg()
    assert not listed.destroyed and not first.destroyed
    monkeypatch.undo()
    assert acl.destroy_scalar(first) == 0


def test_a_move_landing_during_the_launch_checks_is_checked(dev, monkeypatch):
    """acl.set_raw_tensor_addr takes no launch lock: a move of ``out`` on another thread that
    lands right after the launch's checks (simulated at that point, deterministically) is seen
    when the launch compares the addresses it checked with those it bound, so the launch checks
    again and refuses the partial overlap with self (161002), writing nothing; it had queued the
    kernel over the unchecked address, and later relaunches took that address for checked."""
    host = -np.arange(1, 9, dtype=F32)
    big = dev.upload(host)
    xt = dev.tensor(host[:4], big)
    ot = dev.tensor(np.zeros(4, F32))
    ws, ex, ret = aclnn.aclnnLeakyReluGetWorkspaceSize(xt, dev.scalar(0.5, acl.ACL_FLOAT), ot)
    assert (ws, ret) == (0, 0)
    real, moves = aclnn._check_bound_tensors, []

    def then_moved(*args):
        found = real(*args)
        if not moves:  # once: out onto big[1:5], one element past self's start
            moves.append(acl.set_raw_tensor_addr(ot, big + 4))
        return found

    monkeypatch.setattr(aclnn, "_check_bound_tensors", then_moved)
    assert aclnn.aclnnLeakyRelu(None, 0, ex, dev.stream) == 161002 and moves == [0]
    assert "out and self overlap in memory without being the same view" in acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(dev.stream) == 0
    back = np.empty(8, F32)
    assert acl.rt.memcpy(back, 32, big, 32, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    np.testing.assert_array_equal(back, host)
    # a move there and back (out to big + 4 before the binding, home after it): the addresses
    # compare equal, the moves do not, so the launch checks and binds again at home and writes
    # there (a breaker: it had kept the views bound over self's memory, and so had relaunches)
    monkeypatch.undo()
    home = dev.malloc(16)
    assert acl.set_raw_tensor_addr(ot, home) == 0
    real_bind, moves = aclnn.engine.bind, []

    def bound_while_away(*args, **kwargs):
        if not moves:
            moves.append(acl.set_raw_tensor_addr(ot, big + 4))
            run = real_bind(*args, **kwargs)
            moves.append(acl.set_raw_tensor_addr(ot, home))
            return run
        return real_bind(*args, **kwargs)

    monkeypatch.setattr(aclnn.engine, "bind", bound_while_away)
    # (the refused launch released ex, as CANN's failed launch does: phase 1 again)
    ws, ex, ret = aclnn.aclnnLeakyReluGetWorkspaceSize(xt, dev.scalar(0.5, acl.ACL_FLOAT), ot)
    assert (ws, ret) == (0, 0)
    assert aclnn.aclnnLeakyRelu(None, 0, ex, dev.stream) == 0 and moves == [0, 0]
    assert acl.rt.synchronize_stream(dev.stream) == 0
    assert acl.rt.memcpy(back, 32, big, 32, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    np.testing.assert_array_equal(back, host)  # self's memory untouched
    result = np.empty(4, F32)
    assert acl.rt.memcpy(result, 16, home, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    np.testing.assert_array_equal(result, host[:4] * np.float32(0.5))
    # moved there and back at every binding (a thread moving it on and on): refused after
    # aclnn._BIND_TRIES tries, nothing written, rather than held in the loop (a new out tensor:
    # the launch above, still intact, would be reused for the same tensors without a binding)
    moves.clear()
    assert acl.rt.memset(home, 16, 0, 16) == 0
    ot2 = dev.tensor(np.zeros(4, F32), home)
    ws, ex, ret = aclnn.aclnnLeakyReluGetWorkspaceSize(xt, dev.scalar(0.5, acl.ACL_FLOAT), ot2)
    assert (ws, ret) == (0, 0)

    def always_moved(*args, **kwargs):
        moves.append(acl.set_raw_tensor_addr(ot2, big + 4))
        try:
            return real_bind(*args, **kwargs)
        finally:
            moves.append(acl.set_raw_tensor_addr(ot2, home))

    monkeypatch.setattr(aclnn.engine, "bind", always_moved)
    assert aclnn.aclnnLeakyRelu(None, 0, ex, dev.stream) == 161002
    assert f"addresses changed during each of {aclnn._BIND_TRIES} tries to check and bind them" in \
        acl.get_recent_err_msg()
    assert moves == [0] * 2 * aclnn._BIND_TRIES and acl.rt.synchronize_stream(dev.stream) == 0
    assert acl.rt.memcpy(result, 16, home, 16, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0 and not result.any()
    assert acl.rt.memcpy(back, 32, big, 32, acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    np.testing.assert_array_equal(back, host)


def _with_a_last_reset_during(monkeypatch, call: str):
    """``acl.rt.<call>()`` while another thread's last reset_device lands right after the call's
    device check (the check pauses 0.2 s for it, unless a lock holds the reset off): the call's
    result and the reset's."""
    from opsnn.acl import rt

    while rt.STATE.device_refs:
        acl.rt.reset_device(0)
    assert acl.rt.set_device(0) == 0
    checked, reset_done = threading.Event(), []
    real = rt.STATE.require_device

    def slow_check(name):
        real(name)
        if name == call:
            checked.set()
            time.sleep(0.2)  # the reset on the other thread lands here, unless the lock holds it
    monkeypatch.setattr(rt.STATE, "require_device", slow_check)
    resetter = threading.Thread(target=lambda: (checked.wait(5), reset_done.append(acl.rt.reset_device(0))))
    resetter.start()
    result = getattr(acl.rt, call)()
    resetter.join(10)
    monkeypatch.undo()
    return result, reset_done


@pytest.mark.parametrize("make, query", [("create_stream", "synchronize_stream"),
                                         ("create_event", "query_event_status")])
def test_a_stream_or_event_made_while_the_last_reset_runs_goes_with_the_device(runtime_guard, monkeypatch,
                                                                                make, query):
    """Found in session 36's read-through: create_stream / create_event checked for a device,
    then made the handle, outside the lock the last reset_device drops them all under, so a
    reset landing in between (simulated: the check pauses while another thread resets) left a
    stream or event alive with no device. Now either the make fails with 107002 or its handle
    goes with the reset (200005 after a new set_device)."""
    (handle, ret), reset_done = _with_a_last_reset_during(monkeypatch, make)
    assert reset_done == [0] and ret == 0
    assert acl.rt.set_device(0) == 0
    status = getattr(acl.rt, query)(handle)
    assert (status if isinstance(status, int) else status[1]) == 200005, status
    assert "is not a live" in acl.get_recent_err_msg()
    assert acl.rt.reset_device(0) == 0


def test_get_device_while_the_last_reset_runs(runtime_guard, monkeypatch):
    """(a breaker) get_device checked for a device, then read the device table outside the
    runtime's lock: a last reset_device between the two (simulated as above) gave 561000
    ("dictionary changed size", StopIteration). Now the reset waits for the read: (0, 0), then
    107002."""
    got, reset_done = _with_a_last_reset_during(monkeypatch, "get_device")
    assert got == (0, 0) and reset_done == [0], (got, acl.get_recent_err_msg())
    assert acl.rt.get_device()[1] == 107002


def test_first_bfloat16_use_fills_the_dtype_tables_at_once():
    """Found by a breaker: ml_dtypes' types joined the dtype tables one by one on the first
    bfloat16 use, so a thread that found bfloat16 there could miss a float8 type and an fp8
    aclScalar failed with "internal error: KeyError". At every line of the fill and its return (a tracer, in a
    fresh process, where ml_dtypes is not loaded yet), either no ml_dtypes type is in the tables
    or every one is, both ways; then float8 has its NumPy dtype. (aclScalar takes no float8 now,
    as opbase's; float8 tensors still do.)"""
    code = (
        "import sys\n"
        "import opsnn.acl as acl\n"
        "from opsnn._core import dtypes\n"
        "assert 'ml_dtypes' not in sys.modules\n"
        "ml = list(dtypes._ML_DTYPES)\n"
        "seen = []\n"
        "def line(frame, event, arg):\n"
        "    if event in ('line', 'return'):\n"
        "        there = [t in dtypes.NUMPY for t in ml]\n"
        "        back = [dtypes._FROM_NUMPY.get(dtypes.NUMPY[t]) == t for t in ml if t in dtypes.NUMPY]\n"
        "        seen.append(sum(there))\n"
        "        assert sum(there) in (0, len(ml)) and all(back), (there, back)\n"
        "    return line\n"
        "sys.settrace(lambda frame, event, arg: line if frame.f_code is dtypes._ml_dtypes.__code__ else None)\n"
        "assert acl.create_scalar(0.5, acl.ACL_BF16) is not None, acl.get_recent_err_msg()\n"
        "sys.settrace(None)\n"
        "assert seen[0] == 0 and seen[-1] == len(ml), seen\n"
        "assert str(dtypes.to_numpy(acl.ACL_FLOAT8_E5M2)) == 'float8_e5m2'\n"
        "print('ok')\n")
    assert "ok" in run_python(code)


@pytest.mark.skipif(sys.platform != "linux", reason="fork-started workers: multiprocessing's default on Linux")
def test_fork_started_workers_after_the_parent_used_the_pool():
    """Found by a breaker: numba's GNU OpenMP pool cannot run in a forked child (its first
    parallel region ends the child), so a multiprocessing Pool whose parent had made one opsnn
    call hung, its worker gone. A child now runs every launch on its calling thread, the
    parent's cached launches dropped; results as in the parent, which keeps its pool."""
    script = """
import multiprocessing as mp
import numpy as np, opsnn
def f(_):
    x = np.full(300_000, -1.0, np.float32)
    g = np.ones((1000, 1000), np.float32); s = -np.ones((1000, 1000), np.float32).T
    return float(opsnn.leaky_relu(x)[0]), float(opsnn.leaky_relu_backward(g, s, 0.5)[0, 0])
for _ in range(3):
    expected = f(0)  # the parent's launches, above the pool's threshold, cached
with mp.get_context("fork").Pool(1) as pool:
    got = pool.map_async(f, [0, 1]).get(timeout=120)
print(got == [expected] * 2, f(0) == expected, expected)
"""
    assert run_python(script, 300).split()[:2] == ["True", "True"]
    # (a second breaker) an aclnn launch queued before the fork, of a repeatable executor that ran
    # on the parent's pool, synchronized in the child and launched there again
    assert run_python(_FORKED_ACLNN, 300).split() == ["0", "True"]
    # (a third) a parent on one pool thread: its pool launches, planned for one thread, passed
    # the kernels' planned-thread test in the child, whose first fresh aclnn launch ended it
    one_thread = {**os.environ, "OPSNN_PARALLEL_MIN_BYTES": "1"}
    assert run_python(_FORKED_ONE_THREAD, 300, one_thread).split() == ["0", "True"]


@pytest.mark.skipif(sys.platform != "linux", reason="fork-started workers: multiprocessing's default on Linux")
def test_forked_child_runs_torch_after_the_parent_used_the_pool():
    """Found by a breaker: numba's pool and torch's intra-op threads are one GNU OpenMP runtime
    (one libgomp.so.1, whichever loads first), so after one large opsnn call in the parent a
    forked child's torch op waited for good on the parent's threads. The child now runs torch
    on one thread (the parent keeps its count) and its results equal the parent's."""
    pytest.importorskip("torch")
    script = """
import os, signal, torch, numpy as np, opsnn
import torch.nn.functional as F
torch.set_num_threads(2)
x = torch.linspace(-3, 3, 4_000_000).reshape(2000, 2000)
np.asarray(opsnn.leaky_relu(x.numpy(), 0.1))  # the parent's only parallel region: opsnn's
pid = os.fork()
if pid == 0:
    signal.alarm(30)  # a hang ends the child with SIGALRM
    ok = torch.equal(F.leaky_relu(x, 0.1), torch.from_numpy(opsnn.leaky_relu(x.numpy(), 0.1)))
    os._exit(0 if ok and torch.get_num_threads() == 1 else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status), torch.get_num_threads())
"""
    assert run_python(script, 300).split() == ["0", "2"]
    # (a regression breaker) a parent that never imported torch: the child's own torch import
    # started on two threads of the parent's runtime and waited for good
    later = """
import os, signal, numpy as np, opsnn
x = np.linspace(-3, 3, 4_000_000, dtype=np.float32)
expected = opsnn.leaky_relu(x, 0.1)  # a parallel region of the shared runtime
pid = os.fork()
if pid == 0:
    signal.alarm(30)
    import torch
    import torch.nn.functional as F
    ok = torch.equal(F.leaky_relu(torch.from_numpy(x), 0.1), torch.from_numpy(expected))
    os._exit(0 if ok and torch.get_num_threads() == 1 else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""
    assert run_python(later, 300).split() == ["0"]


_FORKED_ONE_THREAD = """
import os, numba, numpy as np, opsnn, opsnn.acl as acl
from opsnn import aclnn
numba.set_num_threads(1)
acl.init(); acl.rt.set_device(0); stream, _ = acl.rt.create_stream()
g = np.linspace(-2, 2, 256 * 256, dtype=np.float32).reshape(256, 256)
base = np.linspace(3, -3, 256 * 256, dtype=np.float32).reshape(256, 256)
def dev(a):
    p, _ = acl.rt.malloc(a.nbytes, 0)
    acl.rt.memcpy(p, a.nbytes, a, a.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    return p
pg, pb, po = dev(g), dev(base), dev(np.zeros_like(g))
tg = acl.create_tensor([256, 256], acl.ACL_FLOAT, [256, 1], 0, acl.ACL_FORMAT_ND, [256, 256], pg)
tt = acl.create_tensor([256, 256], acl.ACL_FLOAT, [1, 256], 0, acl.ACL_FORMAT_ND, [256, 256], pb)  # base.T
to = acl.create_tensor([256, 256], acl.ACL_FLOAT, [256, 1], 0, acl.ACL_FORMAT_ND, [256, 256], po)
sc = acl.create_scalar(0.1, acl.ACL_DOUBLE)
ws_addr, _ = acl.rt.malloc(1 << 20, 0)
def launch(self_tensor):
    ws, ex, r = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(tg, self_tensor, sc, False, to)
    return r or aclnn.aclnnLeakyReluBackward(ws_addr if ws else None, ws, ex, stream) or acl.rt.synchronize_stream(stream)
def result(self_array):
    out = np.empty_like(g)
    acl.rt.memcpy(out, out.nbytes, po, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return np.array_equal(out, opsnn.leaky_relu_backward(g, self_array, 0.1))
def both():  # one kernel into out; a Contiguous step into the workspace, then the kernel
    return all(launch(t) == 0 and launch(t) == 0 and result(a) for t, a in ((tg, g), (tt, base.T)))
ok = both()
pid = os.fork()
if pid == 0:
    os._exit(0 if both() else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status), ok and both())
"""


_FORKED_ACLNN = """
import os, numpy as np, opsnn, opsnn.acl as acl
from opsnn import aclnn
N = 1 << 22
x = np.linspace(-1, 1, N, dtype=np.float32)
expected = opsnn.leaky_relu(x, 0.1)
acl.init(); acl.rt.set_device(0); stream, _ = acl.rt.create_stream()
def dev(a):
    p, _ = acl.rt.malloc(a.nbytes, 0)
    acl.rt.memcpy(p, a.nbytes, a, a.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    return p
ps, po = dev(x), dev(np.zeros(N, np.float32))
ts = acl.create_tensor([N], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [N], ps)
to = acl.create_tensor([N], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [N], po)
sc = acl.create_scalar(0.1, acl.ACL_FLOAT)
ws, ex, _ = aclnn.aclnnLeakyReluGetWorkspaceSize(ts, sc, to)
aclnn.aclSetAclOpExecutorRepeatable(ex)
aclnn.aclnnLeakyRelu(None, ws, ex, stream)
acl.rt.synchronize_stream(stream)
aclnn.aclnnLeakyRelu(None, ws, ex, stream)
def result():
    out = np.empty(N, np.float32)
    acl.rt.memcpy(out, out.nbytes, po, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return np.array_equal(out, expected)
pid = os.fork()
if pid == 0:
    ok = acl.rt.synchronize_stream(stream) == 0 and result()
    ok = ok and aclnn.aclnnLeakyRelu(None, ws, ex, stream) == 0 and acl.rt.synchronize_stream(stream) == 0
    os._exit(0 if ok and result() else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status), acl.rt.synchronize_stream(stream) == 0 and result())
"""


@pytest.mark.skipif(sys.platform != "linux", reason="os.fork")
def test_fork_while_another_thread_holds_opsnn_locks():
    """(a breaker) A fork while another thread held the output pool's lock or aclnn's launch
    lock (a few forks in a few hundred, beside a thread making calls) left the child waiting for
    good at its first pooled result or launch: the lock was held by a thread the child does not
    have. Every opsnn lock is made by ``_core.forksafe``, which frees it in the child. Here a
    thread holds the pool's, the launch lock, the stream's run lock, the stream and event tables'
    and the device memory's across the fork; the child's calls go through. A lock the forking
    thread holds itself stays its own in the child (a reviewer: it had been reset under it)."""
    script = """
import os, threading, faulthandler
import numpy as np, opsnn
import opsnn.acl as acl
from opsnn import aclnn
from opsnn._core import forksafe, outpool
assert acl.init() == 0 and acl.rt.set_device(0) == 0
stream, _ = acl.rt.create_stream()
x = np.full(1 << 18, -1.0, np.float32)  # 1 MiB results: from the pool
opsnn.leaky_relu(x, 0.5)
locks = [outpool.POOL._lock, aclnn._LAUNCH_LOCK]
assert all(lock in forksafe._MADE for lock in locks) and len(forksafe._MADE) >= 8
held, release = threading.Event(), threading.Event()
from opsnn.acl import rt
from opsnn._core import memory
def hold():
    with outpool.POOL._lock, aclnn._LAUNCH_LOCK, rt.STATE.streams.get(stream)._run, rt.STATE.streams._lock, \
            rt.STATE.events._lock, memory.DEVICE._lock:
        held.set()
        release.wait()
t = threading.Thread(target=hold)
t.start()
held.wait()
own = forksafe.rlock()
own.acquire()
pid = os.fork()
if pid == 0:
    faulthandler.dump_traceback_later(60, exit=True)  # hung: exit 1 with the stacks
    own.release()  # the forking thread's own hold goes on in the child
    ok = opsnn.leaky_relu(x, 0.5)[0] == -0.5
    event, _ = acl.rt.create_event()
    ok &= acl.rt.record_event(event, stream) == 0
    n = 4
    dev, _ = acl.rt.malloc(4 * n, 0)
    t_in = acl.create_tensor((n,), acl.ACL_FLOAT, (1,), 0, acl.ACL_FORMAT_ND, (n,), dev)
    acl.rt.memcpy(dev, 4 * n, np.full(n, -2.0, np.float32), 4 * n, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    slope = acl.create_scalar(0.5, acl.ACL_FLOAT)
    ws, ex, ret = aclnn.aclnnInplaceLeakyReluGetWorkspaceSize(t_in, slope)
    ok &= ret == 0 and aclnn.aclnnInplaceLeakyRelu(None, ws, ex, stream) == 0
    ok &= acl.rt.synchronize_stream(stream) == 0
    out = np.zeros(n, np.float32)
    acl.rt.memcpy(out, 4 * n, dev, 4 * n, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    os._exit(0 if ok and (out == -1.0).all() else 5)
_, status = os.waitpid(pid, 0)
release.set()
t.join()
print(os.waitstatus_to_exitcode(status))
"""
    assert run_python(script, 300).split() == ["0"]


@pytest.mark.skipif(sys.platform != "linux", reason="fork-started workers: multiprocessing's default on Linux")
def test_fork_started_worker_of_a_parent_that_ran_numba_before_opsnn():
    """(a breaker) A parent that ran numba's own parallel code, never importing opsnn, forks a
    Pool worker that imports opsnn: opsnn's at-fork handler did not exist at the fork, and the
    worker was killed at its first large launch (GNU OpenMP in a forked child), Pool.map hung.
    At import, a pool started before it in a multiprocessing child makes launches serial."""
    script = """
import multiprocessing as mp
import numpy as np, numba

@numba.njit(parallel=True)
def total(a):
    s = 0.0
    for i in numba.prange(a.size):
        s += a[i]
    return s

def work(_):
    import opsnn
    from opsnn.kernels import parallelism
    return parallelism.FORKED, float(opsnn.leaky_relu(np.full(1 << 23, -1.0, np.float32), 0.5)[0])

if __name__ == "__main__":
    total(np.ones(10))
    with mp.get_context("fork").Pool(1) as pool:
        try:
            print(pool.map_async(work, [0]).get(timeout=120))
        except mp.TimeoutError:
            print("hung")
"""
    assert run_python(script, 300).split() == ["[(True,", "-0.5)]"]


@pytest.mark.skipif(sys.platform != "linux", reason="os.fork")
def test_fork_while_another_thread_runs_a_stream_task():
    """(a breaker) A fork while another thread's synchronize ran a task: the child's copy of the
    stream had the task taken but not run, and its synchronize returned 0 and ran what was queued
    after (an event record showed complete). The child's next synchronize now fails it (500003
    naming it) and drops what followed, as after any failure."""
    script = """
import os, threading, faulthandler
import opsnn.acl as acl
from opsnn.acl import rt
assert acl.init() == 0 and acl.rt.set_device(0) == 0
stream, _ = acl.rt.create_stream()
event, _ = acl.rt.create_event()
running, finish, ran = threading.Event(), threading.Event(), []
def task():
    running.set()
    finish.wait()
    ran.append(os.getpid())
rt.STATE.streams.get(stream).enqueue("slowTask", task)
assert acl.rt.record_event(event, stream) == 0
t = threading.Thread(target=acl.rt.synchronize_stream, args=(stream,))
t.start()
running.wait()
pid = os.fork()
if pid == 0:
    faulthandler.dump_traceback_later(60, exit=True)
    ret = acl.rt.synchronize_stream(stream)
    msg = acl.get_recent_err_msg() or ""
    status, _ = acl.rt.query_event_status(event)
    again = acl.rt.synchronize_stream(stream)
    ok = ret == 500003 and "slowTask was running on another thread of the parent" in msg and not ran
    ok &= "the child cannot tell whether it finished" in msg
    os._exit(0 if ok and status == acl.ACL_EVENT_RECORDED_STATUS_NOT_READY and again == 0 else 5)
finish.set()
t.join()
_, st = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(st), ran == [os.getpid()], acl.rt.query_event_status(event))
"""
    assert run_python(script, 300).split() == ["0", "True", "(1,", "0)"]


def test_fork_while_another_thread_imports_the_kernel_backend():
    """(a breaker) A fork while another thread made the process's first opsnn call, importing the
    numba backend (seconds), left the child holding that module's import lock for a thread it
    does not have: the child's first call waited for good. The fork now waits for the import
    (forksafe.waited_at_fork, as for numba's compiler lock and llvmlite's)."""
    script = """
import os, sys, threading, time, faulthandler
import numpy as np, opsnn, opsnn.kernels as kernels
g = np.ones((64, 48), np.float32)
t = threading.Thread(target=lambda: opsnn.leaky_relu_backward(g, g, 0.5))
t.start()
def importing():  # the backend module begun (in sys.modules) and not yet loaded
    return "opsnn.kernels.numba_backend" in sys.modules and "numba" not in kernels._loaded
deadline = time.monotonic() + 120
while not importing() and "numba" not in kernels._loaded and time.monotonic() < deadline:
    time.sleep(0.0005)
held = importing()
pid = os.fork()
if pid == 0:
    faulthandler.dump_traceback_later(60, exit=True)  # hung: exit 1 with the stacks
    d = np.ones(5, np.float32)
    os._exit(0 if (opsnn.leaky_relu_backward(d, -d, 0.5) == 0.5).all() else 5)
_, status = os.waitpid(pid, 0)
t.join()
print(held, os.waitstatus_to_exitcode(status))
"""
    assert run_python(script, 300).split() == ["True", "0"]


def test_the_backend_import_leaves_the_first_call_no_numpy_import():
    """The test above hung now and then on a loaded machine (its child at exit 1, waiting on
    numpy.ma's import lock): numba's typeof of an ndarray reads np.ma, which NumPy 2 imports on
    first touch, so the first kernel call imported it, after the backend's import that a fork
    waits for. The backend imports it itself now (run apart: a fresh process)."""
    script = """
import sys, opsnn.kernels as kernels
kernels.get("numba")
print("numpy.ma" in sys.modules)
"""
    assert run_python(script, 300).split() == ["True"]


def test_fork_while_another_thread_compiles(tmp_path):
    """(a new user's breaker) A fork while another thread of the parent compiled a walker left the
    child holding numba's compiler lock, owned by a thread it does not have: its first call that
    compiled hung for good. The fork now waits for the compile to end (parallelism's at-fork
    handlers take and give back that lock). An empty kernel cache, so that the thread's call and
    the child's both compile."""
    script = """
import os, threading, time, faulthandler
import numpy as np, opsnn
from numba.core.compiler_lock import global_compiler_lock
g = np.ones((64, 48), np.float32)
opsnn.leaky_relu_backward(g, g, 0.5)  # the backend imported (a fork during an import is Python's own hazard)
h = np.ones((64, 48), np.float16)
t = threading.Thread(target=lambda: opsnn.hardtanh_backward(h, h, -1.0, 1.0))
t.start()
def compiling():  # the lock held by another thread (is_locked asks about this one)
    if global_compiler_lock._lock.acquire(False):
        global_compiler_lock._lock.release()
        return False
    return True
deadline = time.monotonic() + 120
while not compiling() and time.monotonic() < deadline:
    time.sleep(0.0005)
held = compiling()
pid = os.fork()
if pid == 0:
    faulthandler.dump_traceback_later(60, exit=True)  # hung: exit 1 with the stacks
    d = np.ones(5, np.float64)  # a walker not compiled yet
    os._exit(0 if (opsnn.leaky_relu_backward(d, -d, 0.5) == 0.5).all() else 5)
_, status = os.waitpid(pid, 0)
t.join()
print(held, os.waitstatus_to_exitcode(status))
"""
    assert run_python(script, 300, {**os.environ, "OPSNN_CACHE_DIR": str(tmp_path)}).split() == ["True", "0"]
