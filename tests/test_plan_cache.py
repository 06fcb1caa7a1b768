"""The plan caches (Pythonic fast path and engine phase 1) and the output pool: a repeated call
returns identical results, and any change of an argument still gets every check it would get
without the cache; recycled output buffers are never ones the caller still holds."""

from __future__ import annotations

import gc
import sys
import threading

import numpy as np
import pytest

import cases
import opsnn
import opsnn.acl as acl
from cases import BF16, F16, F32, F64
from opsnn import _fastpath, aclnn, engine, kernels
from opsnn._core import outpool


@pytest.fixture(autouse=True)
def fresh_caches():
    _fastpath.clear()
    engine.clear_plan_cache()
    yield
    _fastpath.clear()
    engine.clear_plan_cache()


def _status(fn, *args, **kwargs) -> int:
    with pytest.raises(opsnn.AclnnError) as info:
        fn(*args, **kwargs)
    return info.value.status


def _data(shape=(4, 5), dt=F32, seed=0):
    g = cases.filled(shape, dt, seed, cases.grad_specials(dt))
    x = cases.filled(shape, dt, seed + 1, cases.self_specials(dt))
    return g, x


@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=str)
def test_repeated_calls_hit_and_agree(dt):
    g, x = _data(dt=dt)
    first = opsnn.leaky_relu_backward(g, x, 0.1)
    assert not _fastpath.ENTRIES  # built at the second sighting of the key
    cases.assert_bits_equal(opsnn.leaky_relu_backward(g, x, 0.1), first, nan_payload=True)
    assert len(_fastpath.ENTRIES) == 1 or kernels.default_name() == "numpy"
    for _ in range(3):
        cases.assert_bits_equal(opsnn.leaky_relu_backward(g, x, 0.1), first, nan_payload=True)
    out = np.empty_like(first)
    assert opsnn.leaky_relu_backward(g, x, 0.1, out=out) is out
    cases.assert_bits_equal(out, first, nan_payload=True)
    assert opsnn.leaky_relu_backward(g, x, 0.1, out=out) is out  # the out= entry, hit
    cases.assert_bits_equal(out, first, nan_payload=True)


def test_clear_sends_the_next_call_down_the_full_path(monkeypatch):
    """After clear() no call hits, not even one repeating the last hit (each operator's memo of
    its last hit goes with the entries)."""
    if kernels.default_name() != "numba":
        pytest.skip("the compiled backend's plan cache")
    g, x = _data()
    for _ in range(3):
        opsnn.leaky_relu_backward(g, x, 0.1)
    full = []
    remember = _fastpath.remember
    monkeypatch.setattr(_fastpath, "remember", lambda *args: full.append(args[0]) or remember(*args))
    opsnn.leaky_relu_backward(g, x, 0.1)
    assert full == []
    _fastpath.clear()
    opsnn.leaky_relu_backward(g, x, 0.1)
    assert len(full) == 1


def _unaligned(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` at an address one byte past an aligned one (NumPy flags it unaligned)."""
    raw = np.zeros(a.nbytes + 1, np.uint8)
    view = raw[1:].view(a.dtype).reshape(a.shape)
    view[...] = a
    assert not view.flags.aligned or a.itemsize == 1
    return view


@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=str)
def test_hits_for_every_argument_type(dt):
    """The cache key fixes the compiled call's argument types (numba_backend.entry_point): aligned,
    unaligned and read-only inputs and an aligned or unaligned out each get their own entry, in any order,
    and every hit gives the reference's bits (half floats reach the kernel as their bits)."""
    g, x = _data((3, 5), dt)
    want = cases.ref_leaky(g, x, np.float32(0.25))
    read_only = x.copy()
    read_only.setflags(write=False)
    variants = [(g, x), (_unaligned(g), x), (g, _unaligned(x)), (g, read_only), (g, x)]
    for _ in range(2):
        for gv, xv in variants:
            cases.assert_bits_equal(opsnn.leaky_relu_backward(gv, xv, 0.25), want, nan_payload=True)
            for out in (np.zeros(want.shape, want.dtype), _unaligned(np.zeros(want.shape, want.dtype))):
                assert opsnn.leaky_relu_backward(gv, xv, 0.25, out=out) is out
                cases.assert_bits_equal(out, want, nan_payload=True)
    if kernels.default_name() == "numba":
        assert len(_fastpath.ENTRIES) == 3 * 4  # allocating, aligned and unaligned out=, per input type


def test_strided_and_broadcast_hits_agree():
    g, x = _data((6, 5))
    xt = np.ascontiguousarray(x.T).T
    first = opsnn.leaky_relu_backward(g, xt, 0.3)
    cases.assert_bits_equal(opsnn.leaky_relu_backward(g, xt, 0.3), first, nan_payload=True)
    gc_, xr = g[:, :1].copy(), x[:1].copy()
    first = opsnn.leaky_relu_backward(gc_, xr, 0.3)
    cases.assert_bits_equal(opsnn.leaky_relu_backward(gc_, xr, 0.3), first, nan_payload=True)


@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=str)
def test_hits_on_gapped_and_stepped_views(dt):
    """A hit takes a gapped or stepped operand's memory span through ``span_view``'s machine-code
    entry (half floats as their bits): inputs and outs sliced out of larger arrays, in 2-D and
    3-D, every call (the first fills the cache, the rest hit) the reference's bits, and nothing
    of the larger arrays outside the views written."""
    g, x = _data((6, 10), dt)
    want = opsnn.leaky_relu_backward(g, x, 0.3)  # NaN payloads: grad's bits where it passes
    cases.assert_bits_equal(want, cases.ref_leaky(g, x, np.float32(0.3)))
    wide_g, wide_x = np.zeros((6, 13), dt), np.zeros((6, 20), dt)
    wide_g[:, 2:12], wide_x[:, ::2] = g, x
    g3 = np.zeros((2, 6, 10), dt)
    g3[1] = g
    for _ in range(3):
        cases.assert_bits_equal(opsnn.leaky_relu_backward(wide_g[:, 2:12], wide_x[:, ::2], 0.3), want,
                                nan_payload=True)
        cases.assert_bits_equal(opsnn.leaky_relu_backward(g3[1:, :, :], x[None], 0.3)[0], want,
                                nan_payload=True)
        wide_out = np.zeros((6, 21), dt)
        out = wide_out[:, 1:21:2]
        assert opsnn.leaky_relu_backward(wide_g[:, 2:12], x, 0.3, out=out) is out
        cases.assert_bits_equal(out, want, nan_payload=True)
        assert not np.ascontiguousarray(wide_out[:, ::2]).view(np.uint8).any()


@pytest.mark.parametrize("dt", [F32, F16, BF16, F64], ids=str)
def test_hits_on_broadcast_inputs(dt):
    """A broadcast input whose repeated slice is C-contiguous (an expanded scalar, as torch's
    gradient of a sum is; a column or a row repeated) is taken as that slice on a hit
    (``_repeated_slice``: the index base() would take, made once per key); one whose slice is
    not (a gapped column repeated) through base(). Every call, the reference's bits."""
    g, x = _data((6, 5), dt)
    gapped = np.zeros((6, 3), dt)
    gapped[:, ::2] = g[:, :2]
    inputs = {"scalar": np.broadcast_to(g[0, :1].reshape(()), (6, 5)), "column": np.broadcast_to(g[:, :1].copy(), (6, 5)),
              "row": np.broadcast_to(g[:1], (6, 5)), "gapped": np.broadcast_to(gapped[:, None, ::2], (6, 5, 2))[..., 0]}
    assert [_fastpath._repeated_slice(a) is not None for a in inputs.values()] == [True, True, True, False]
    for grad in inputs.values():
        want = cases.ref_leaky(np.ascontiguousarray(grad), x, np.float32(0.3))
        for _ in range(3):  # the first call fills the cache, the others hit
            cases.assert_bits_equal(opsnn.leaky_relu_backward(grad, x, 0.3), want, nan_payload=True)
            cases.assert_bits_equal(opsnn.leaky_relu_backward(x, grad, 0.3),
                                    cases.ref_leaky(x, np.ascontiguousarray(grad), np.float32(0.3)), nan_payload=True)
    if kernels.default_name() == "numba":
        assert len(_fastpath.ENTRIES) == 2 * len(inputs)


@pytest.mark.parametrize("dt", [F32, F16, BF16], ids=str)
def test_hits_write_through_permuted_and_nd_outs(dt):
    """A hit flattens each operand in memory order (ravel / ravel('K')); for out that must be a
    view, or the result would land in a copy: transposed (dense) and 3-D outs, inputs and a
    transposed input of another permutation, every call checked against the reference."""
    g, x = _data((4, 3, 5), dt)
    want = cases.ref_leaky(g, x, np.float32(0.3))
    outs = {"c": np.empty((4, 3, 5), dt), "t": np.empty((5, 3, 4), dt).transpose(2, 1, 0),
            "p": np.empty((3, 5, 4), dt).transpose(2, 0, 1)}
    xp = np.ascontiguousarray(x.transpose(1, 2, 0)).transpose(2, 0, 1)  # x's values, permuted memory
    cases.assert_bits_equal(opsnn.leaky_relu_backward(g, x, 0.3), want)  # NaN payloads: below
    first = opsnn.leaky_relu_backward(g, x, 0.3)
    for _ in range(3):  # the first call of each kind fills the cache, the others hit
        for out in outs.values():
            out[...] = 0
            assert opsnn.leaky_relu_backward(g, xp, 0.3, out=out) is out
            cases.assert_bits_equal(out, first, nan_payload=True)
        cases.assert_bits_equal(opsnn.leaky_relu_backward(g.T.copy().T, xp, 0.3), first, nan_payload=True)


def test_scalar_values_are_part_of_the_key():
    g = np.full(4, 2.0, F32)
    x = np.full(4, -1.0, F32)
    assert (opsnn.leaky_relu_backward(g, x, 0.5) == 1.0).all()
    assert (opsnn.leaky_relu_backward(g, x, 0.25) == 0.5).all()
    pos, neg = opsnn.leaky_relu_backward(g, x, 0.0), opsnn.leaky_relu_backward(g, x, -0.0)
    assert not np.signbit(pos).any() and np.signbit(neg).all()  # -0.0 is its own key
    assert np.isnan(opsnn.leaky_relu_backward(g, x, float("nan"))).all()
    assert (opsnn.leaky_relu_backward(g, x, np.float32(0.5)) == 1.0).all()
    assert (opsnn.hardtanh_backward(g, x * 0.5, -1.0, 1.0) == 2.0).all()
    assert (opsnn.hardtanh_backward(g, x * 0.5, -0.25, 1.0) == 0.0).all()


def test_changed_flag_still_checked():
    g, x = _data()
    opsnn.leaky_relu_backward(g, x, -0.5)
    opsnn.leaky_relu_backward(g, x, -0.5)
    assert _status(opsnn.leaky_relu_backward, g, x, -0.5, True) == 161002  # in-place rule (DECISION 4)
    assert _status(opsnn.leaky_relu_backward, g, x, -0.5, 1) == 161002      # not a bool


def test_changed_tensor_metadata_still_checked():
    g, x = _data()
    out = np.empty((4, 5), F32)
    opsnn.leaky_relu_backward(g, x, 0.1, out=out)
    opsnn.leaky_relu_backward(g, x, 0.1, out=out)
    assert _status(opsnn.leaky_relu_backward, g, x, 0.1, out=np.empty((5, 4), F32)) == 161002
    assert _status(opsnn.leaky_relu_backward, g, x, 0.1, out=np.empty((4, 5), np.int32)) == 161002
    assert _status(opsnn.leaky_relu_backward, g, x[:, :3], 0.1) == 161002  # cannot broadcast
    assert _status(opsnn.leaky_relu_backward, np.zeros((4, 5), np.int32), x, 0.1) == 161002
    readonly = np.empty((4, 5), F32)
    readonly.flags.writeable = False
    assert _status(opsnn.leaky_relu_backward, g, x, 0.1, out=readonly) == 161002
    assert _status(opsnn.leaky_relu_backward, None, x, 0.1) == 161001
    assert _status(opsnn.hardtanh_backward, g, np.zeros((4, 5), F16), -1.0, 1.0) == 161002


def test_soc_change_still_checked(monkeypatch):
    g, x = _data(dt=BF16)
    opsnn.leaky_relu_backward(g, x, 0.1)
    opsnn.leaky_relu_backward(g, x, 0.1)
    with opsnn.use_soc("Ascend910"):
        assert _status(opsnn.leaky_relu_backward, g, x, 0.1) == 161002  # no BF16 there
    monkeypatch.setenv("OPSNN_SOC", "Ascend310B")
    assert _status(opsnn.leaky_relu_backward, g.astype(F32), x.astype(F32), 0.1) == 561003
    monkeypatch.delenv("OPSNN_SOC")
    opsnn.leaky_relu_backward(g, x, 0.1)


def test_overlap_check_runs_on_a_hit():
    """Same metadata, different addresses: a partially overlapping out is still refused; an
    exact in-place out still runs."""
    buf = np.zeros(12, F32)
    g = np.arange(8, dtype=F32) - 4
    x = np.linspace(-2, 2, 8, dtype=F32)
    ref = opsnn.leaky_relu_backward(g, x, 0.5)
    opsnn.leaky_relu_backward(g, x, 0.5, out=buf[:8])      # out disjoint from the inputs
    opsnn.leaky_relu_backward(g, x, 0.5, out=buf[4:])      # same key, still disjoint: a hit
    np.testing.assert_array_equal(buf[4:], ref)
    gg = buf[:8]
    gg[:] = g
    assert _status(opsnn.leaky_relu_backward, gg, x, 0.5, out=buf[2:10]) == 161002  # partial overlap
    gg[:] = g
    assert opsnn.leaky_relu_backward(gg, x, 0.5, out=gg) is gg                      # exact: in place
    np.testing.assert_array_equal(gg, ref)
    gg[:] = g
    assert opsnn.leaky_relu_backward(gg, x, 0.5, out=gg) is gg                      # and again (a hit)
    np.testing.assert_array_equal(gg, ref)


def test_backend_switch_is_part_of_the_key():
    g, x = _data(dt=F16)
    saved = kernels.DEFAULT
    try:
        kernels.set_default("numpy")
        a = opsnn.leaky_relu_backward(g, x, 0.1)
        kernels.set_default(None)
        b = opsnn.leaky_relu_backward(g, x, 0.1)
    finally:
        kernels.set_default(saved)
    cases.assert_bits_equal(a, b, nan_payload=True)
    assert {k[2] for k in _fastpath.ENTRIES} <= {"numpy", None}


def test_set_default_reads_names_as_the_variable_and_keeps_the_default_on_a_refusal(monkeypatch):
    """kernels.set_default's docstring (a reader's check: it said only "raises"): a name in any
    case with spaces around is taken, an unknown or empty one is ValueError, a backend that cannot
    load ImportError, and a refused name leaves the default as it was."""
    saved = kernels.DEFAULT
    monkeypatch.setitem(kernels._BACKENDS, "broken", "opsnn.kernels.no_such_backend")
    try:
        kernels.set_default(" NumPy ")
        assert kernels.DEFAULT == "numpy"
        for name, error in (("numbaa", ValueError), ("", ValueError), ("broken", ImportError)):
            with pytest.raises(error, match="kernel backend 'broken' cannot be loaded" if name == "broken"
                               else f"unknown kernel backend {name!r}; known: numpy, numba"):
                kernels.set_default(name)
            assert kernels.DEFAULT == "numpy"
    finally:
        kernels.set_default(saved)


def test_engine_plan_cache_for_the_aclnn_api(acl_env):
    g, x = _data()
    gt, xt = acl_env.put(g), acl_env.put(x)
    out = acl_env.out(g.shape, F32)
    slope = acl_env.scalar(0.1, "DOUBLE")
    ws1, ex1, r1 = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt.tensor, xt.tensor, slope, False, out.tensor)
    ws2, ex2, r2 = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt.tensor, xt.tensor, slope, False, out.tensor)
    assert r1 == r2 == 0 and ex1 is not ex2 and ex1.plan is ex2.plan   # one Plan, two executors
    assert aclnn.aclnnLeakyReluBackward(None, 0, ex2, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    neg = acl_env.scalar(-0.1, "DOUBLE")
    assert aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt.tensor, xt.tensor, neg, True, out.tensor)[2] == 161002
    acl.destroy_tensor(xt.tensor)
    assert aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt.tensor, xt.tensor, slope, False, out.tensor)[2] == 161002
    assert engine.plan_key(opsnn.registry.get("LeakyReluBackward"),
                           {"grad_output": gt.tensor, "self": xt.tensor, "negative_slope": slope,
                            "self_is_result": False, "out": out.tensor}, "Ascend910B") is None


def test_phase_1_on_the_very_same_handles_skips_only_the_checks_that_cannot_differ(acl_env, monkeypatch):
    """GetWorkspaceSize passed the very handle objects of its operator's last cached call (the
    CANN samples' loop) under the same SoC selection: the same Plan, without the key or the
    out-overlap check (functions of those handles' fixed metadata); another handle, another SoC,
    a destroy or a free sends it down the full path."""
    counted = []
    for name in ("plan_key", "check_out_overlap"):
        real = getattr(engine, name)
        monkeypatch.setattr(engine, name, lambda *a, real=real, name=name: counted.append(name) or real(*a))
    g, x = _data(dt=BF16)
    gt, xt, out, other = acl_env.put(g), acl_env.put(x), acl_env.out(g.shape, BF16), acl_env.out(g.shape, BF16)
    slope = acl_env.scalar(0.01, "DOUBLE")

    def phase1(o=out, s=slope):
        return aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(gt.tensor, xt.tensor, s, False, o.tensor)

    for _ in range(2):  # host arrays (the Pythonic path's full calls) are never kept: that would keep them alive
        opsnn.leaky_relu_backward(g, x, 0.01, out=np.zeros_like(g))
        assert "LeakyReluBackward" not in engine._LAST_CHECKED
    counted.clear()
    first, second = phase1(), phase1()
    assert first[2] == second[2] == 0 and second[1].plan is first[1].plan and second[1] is not first[1]
    assert counted == ["plan_key", "check_out_overlap"]
    assert second[1].tensors["out"] is out.tensor
    assert phase1(other)[2] == 0 and counted[2:] == ["plan_key", "check_out_overlap"]
    assert phase1(other)[2] == 0 and len(counted) == 4
    with opsnn.use_soc("Ascend910"):  # no bfloat16 there: the memo is not consulted
        assert phase1(other)[2] == 161002 and len(counted) == 5
        acl.get_recent_err_msg()
    spare, ret = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0 and acl.rt.free(spare) == 0  # any release: a handle may be gone
    assert phase1(other)[2] == 0 and len(counted) == 7
    assert acl.destroy_tensor(other.tensor) == 0
    assert phase1(other)[2] == 161002
    acl.get_recent_err_msg()
    assert aclnn.aclnnLeakyReluBackward(None, 0, phase1()[1], acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    cases.assert_bits_equal(out.view(), cases.ref_leaky(g, x, np.float32(0.01)))


# ---- the output pool --------------------------------------------------------------------------
def _addr(a):
    return a.__array_interface__["data"][0]


def test_pool_recycles_only_unreferenced_buffers():
    pool = outpool.OutputPool(max_bytes=64 << 20)
    shape, dt = ((1 << 20) // 4,), np.dtype(F32)
    a = pool.empty(shape, dt)
    a_addr = _addr(a)
    b = pool.empty(shape, dt)
    assert _addr(b) != a_addr
    view = a[10:20]
    del a
    c = pool.empty(shape, dt)
    assert _addr(c) not in (a_addr, _addr(b))  # a's buffer is still reachable through `view`
    del view, c
    gc.collect()
    d = pool.empty(shape, dt)
    assert _addr(d) in (a_addr,) or pool.hits >= 1
    assert pool.hits >= 1


def test_pool_tells_a_free_buffer_by_a_probe_read_the_same_way():
    """A buffer is free when its reference count equals that of an array only the pool holds,
    read the same way (a breaker: a fixed count of 3 would read a held buffer as free on an
    interpreter that counts a local's reference differently, as CPython 3.14 may): one more
    reference of any kind (a view's base, a list, a plain name) makes it held."""
    buffers = [np.empty(1 << 20, np.uint8), np.empty(1 << 20, np.uint8)]
    assert outpool._is_free(buffers, 0) and outpool._is_free(buffers, 1)
    view = buffers[0][5:]
    kept = [buffers[1]]
    assert not outpool._is_free(buffers, 0) and not outpool._is_free(buffers, 1)
    del view, kept
    assert outpool._is_free(buffers, 0) and outpool._is_free(buffers, 1)
    name = buffers[0]
    assert not outpool._is_free(buffers, 0)
    del name


def test_pool_keeps_a_held_result_where_getrefcount_counts_one_less(monkeypatch):
    """(A reviewer: the test above gives the same answers with the fixed count it replaced.) An
    interpreter whose getrefcount reads one reference fewer (a borrowed local, as CPython 3.14
    may): a fixed count of 3 would take a held result's buffer for free and hand it out again;
    the probe reads one fewer too, so the held result keeps its memory and its values."""
    class Borrowing:
        @staticmethod
        def getrefcount(obj):
            return sys.getrefcount(obj) - 2  # (this frame's argument too)
    monkeypatch.setattr(outpool, "sys", Borrowing)
    pool = outpool.OutputPool(max_bytes=64 << 20)
    shape, dt = ((1 << 20) // 4,), np.dtype(F32)
    held = pool.empty(shape, dt)
    held[:] = 7.0
    other = pool.empty(shape, dt)
    assert _addr(other) != _addr(held)
    other[:] = 1.0
    assert (held == 7.0).all()
    del other
    gc.collect()
    again = pool.empty(shape, dt)  # the dropped one's buffer, not the held one's
    assert _addr(again) != _addr(held) and pool.hits == 1


def test_pool_respects_its_budget():
    pool = outpool.OutputPool(max_bytes=3 << 20)
    held = [pool.empty((1 << 18,), np.dtype(F32)) for _ in range(5)]  # 1 MiB each, all held
    assert pool.pooled_bytes <= 3 << 20
    assert len({_addr(a) for a in held}) == 5
    pool.clear()
    assert pool.pooled_bytes == 0


def test_pool_keeps_few_idle_buffers_when_sizes_change():
    """Outputs whose size changes every call have nothing to reuse: the pool keeps at most
    MAX_IDLE free buffers (the most recently used), not its whole budget; a held result is never
    released or handed out again, and a repeated size still hits."""
    pool = outpool.OutputPool(max_bytes=256 << 20)
    held = pool.empty((1 << 18,), np.dtype(F32))
    held[:] = 7.0
    for k in range(12):  # twelve sizes, each dropped at once
        pool.empty(((1 << 18) + 1024 * (k + 1),), np.dtype(F32))
    free = outpool.MAX_IDLE
    assert pool.pooled_bytes <= held.nbytes + free * ((1 << 18) + 12 * 1024) * 4
    assert pool.misses == 13 and pool.hits == 0 and (held == 7.0).all()
    last = (1 << 18) + 12 * 1024
    again = pool.empty((last,), np.dtype(F32))  # the most recent size is still pooled
    assert pool.hits == 1 and again.size == last
    assert _addr(pool.empty((1 << 18,), np.dtype(F32))) != _addr(held)


def test_pool_lets_go_of_results_held_together_once_dropped():
    """Found by a breaker: sixty results held at once, then dropped, stayed pooled (960 MiB) as
    long as every later call hit: the free ones beyond MAX_IDLE were only released on a miss."""
    pool = outpool.OutputPool(max_bytes=256 << 20)
    size = (1 << 18,)
    held = [pool.empty(size, np.dtype(F32)) for _ in range(12)]
    kept = held[3]
    kept[:] = 5.0
    del held
    gc.collect()
    again = pool.empty(size, np.dtype(F32))  # a hit, which lets go of the idle ones
    assert pool.hits == 1 and pool.pooled_bytes == (1 + 1 + outpool.MAX_IDLE - 1) * kept.nbytes
    assert (kept == 5.0).all() and _addr(again) != _addr(kept)
    del again  # at most MAX_IDLE free ones once it is dropped too (a breaker: MAX_IDLE + 1 were)
    assert pool.pooled_bytes == (1 + outpool.MAX_IDLE) * kept.nbytes


def test_pythonic_results_are_never_overwritten_by_later_calls():
    n = (2 << 20) // 4
    g = np.linspace(-1, 1, n, dtype=F32)
    x = np.linspace(1, -1, n, dtype=F32)
    first = opsnn.leaky_relu_backward(g, x, 0.5)
    keep = first.copy()
    results = [opsnn.leaky_relu_backward(g * k, x, 0.5) for k in (2, 3)]
    np.testing.assert_array_equal(first, keep)
    assert len({_addr(first), *map(_addr, results)}) == 3
    addr = _addr(results[0])
    del results
    again = opsnn.leaky_relu_backward(g, x, 0.5)
    np.testing.assert_array_equal(again, keep)
    assert _addr(again) == addr or outpool.POOL.pooled_bytes > 0


def test_concurrent_pythonic_calls_are_independent():
    n = (1 << 20) // 4 + 3
    g = np.linspace(-1, 1, n, dtype=F32)
    x = np.linspace(1, -1, n, dtype=F32)
    ref = opsnn.leaky_relu_backward(g, x, 0.25)
    errors = []

    def work():
        for _ in range(20):
            r = opsnn.leaky_relu_backward(g, x, 0.25)
            if not np.array_equal(r, ref):
                errors.append("mismatch")

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.parametrize("layout", ["flat", "broadcast", "transposed"])
def test_hits_of_multi_block_launches(monkeypatch, layout):
    """A hit on a launch moving PARALLEL_MIN_BYTES or more runs the ``prange`` walker through its
    generated call: same bits as the full path, allocating and with ``out=``, under the thread
    count it was planned for and under another one (``set_num_threads``: planned anew), and an
    overlapping ``out`` still takes the full path's check."""
    if kernels.default_name() != "numba":
        pytest.skip("the compiled backend's plan cache")
    from opsnn.kernels import numba_backend, parallelism

    monkeypatch.setattr(parallelism, "PARALLEL_MIN_BYTES", 1)
    g, x = _data((40, 50), F16, 7)
    if layout == "broadcast":
        g = g[:, :1]
    elif layout == "transposed":
        x = np.ascontiguousarray(x.T).T
    first = opsnn.leaky_relu_backward(g, x, 0.1)
    cases.assert_bits_equal(opsnn.leaky_relu_backward(g, x, 0.1), first, nan_payload=True)  # builds it
    (entry,) = _fastpath.ENTRIES.values()
    assert entry.__globals__["DISPATCHER"].targetoptions["parallel"], "the prange walker"
    for _ in range(2):
        cases.assert_bits_equal(opsnn.leaky_relu_backward(g, x, 0.1), first, nan_payload=True)
    threads = numba_backend.get_num_threads()
    try:
        for n in {1, threads}:
            numba_backend.set_num_threads(n)
            cases.assert_bits_equal(opsnn.leaky_relu_backward(g, x, 0.1), first, nan_payload=True)
    finally:
        numba_backend.set_num_threads(threads)
    assert set(entry.__globals__["REPLAN"].launches) == {1, threads}  # one thread: planned anew
    out = np.empty_like(first)
    for _ in range(3):  # the full path twice (the second builds the entry), then the out= entry's hit
        assert opsnn.leaky_relu_backward(g, x, 0.1, out=out) is out
        cases.assert_bits_equal(out, first, nan_payload=True)
    if layout == "flat":  # out overlapping self by half a row: refused by the kernel, then 161002
        both = np.concatenate([x.ravel(), x.ravel()]).reshape(2, 40, 50)
        assert _status(opsnn.leaky_relu_backward, g, both[0], 0.1, out=both.reshape(-1)[25:2025].reshape(40, 50)) == 161002


def test_a_full_cache_keeps_its_newer_half(monkeypatch):
    """Past MAX_ENTRIES the older half of the entries goes, not all of them: the keys used last
    still hit. (An entry is built at a key's second call.)"""
    if kernels.default_name() != "numba":
        pytest.skip("the compiled backend's plan cache")
    monkeypatch.setattr(_fastpath, "MAX_ENTRIES", 4)
    g = np.linspace(-2, 2, 12, dtype=F32)
    keys = []
    for n in range(5, 12):  # seven shapes, each called twice: seven entries built
        for _ in range(2):
            opsnn.leaky_relu_backward(g[:n], g[:n], 0.1)
        keys.append(_fastpath.key(opsnn.registry.get("LeakyReluBackward"),
                                  {"grad_output": g[:n], "self": g[:n], "negative_slope": 0.1,
                                   "self_is_result": False}, None))
    assert 2 <= len(_fastpath.ENTRIES) <= 4
    assert keys[-1] in _fastpath.ENTRIES and keys[-2] in _fastpath.ENTRIES and keys[0] not in _fastpath.ENTRIES


def test_a_soc_switch_racing_a_call_files_no_wrong_entry(monkeypatch):
    """The full path plans under the SoC its cache key names: another thread's set_soc landing
    between the key and phase 1 (simulated here inside engine.plan) had filed a plan checked
    for Ascend910B under an Ascend910 key, and bfloat16 then passed on Ascend910 for good."""
    g, x = _data(dt=BF16)
    real_plan = engine.plan

    def racing_plan(*args, **kwargs):
        opsnn.set_soc(None)  # back to Ascend910B, after the call read its selection
        return real_plan(*args, **kwargs)

    monkeypatch.setattr(engine, "plan", racing_plan)
    try:
        for _ in range(3):
            opsnn.set_soc("Ascend910")
            assert _status(opsnn.leaky_relu_backward, g, x, 0.01) == 161002
        monkeypatch.undo()
        assert not [k for k in _fastpath.ENTRIES if "Ascend910" in k]
        opsnn.set_soc("Ascend910")
        for _ in range(3):
            assert _status(opsnn.leaky_relu_backward, g, x, 0.01) == 161002
    finally:
        opsnn.set_soc(None)
    assert opsnn.leaky_relu_backward(g, x, 0.01).dtype == BF16  # Ascend910B takes it


def test_a_backend_switch_racing_a_call_files_no_wrong_entry(monkeypatch):
    """The full path runs and compiles on the kernel backend its cache key names: a
    kernels.set_default on another thread landing between the key and the run (simulated inside
    engine.plan) had filed numba's compiled call under a "numpy" key, so that later numpy-backend
    calls ran numba's kernel. The NumPy backend compiles nothing: no entry under its key."""
    if kernels.automatic_name() != "numba":
        pytest.skip("the compiled backend's plan cache")
    g, x = _data()
    real_plan = engine.plan
    ran = []
    real_run = engine.run

    def run(executor, workspace, backend=None, fused=False):
        ran.append(backend)
        return real_run(executor, workspace, backend, fused)

    monkeypatch.setattr(engine, "run", run)

    def racing_plan(*args, **kwargs):
        kernels.set_default(None)  # automatic (numba) again, after the call read its selection
        return real_plan(*args, **kwargs)

    monkeypatch.setattr(engine, "plan", racing_plan)
    saved = kernels.DEFAULT
    try:
        for _ in range(3):
            kernels.set_default("numpy")
            np.testing.assert_array_equal(opsnn.leaky_relu_backward(g, x, 0.1), np.where(x > 0, g, g * np.float32(0.1)))
    finally:
        kernels.set_default(saved)
    assert ran == ["numpy"] * 3
    assert not [k for k in _fastpath.ENTRIES if k[2] == "numpy"]


def test_a_backend_switch_racing_a_bogus_environment_is_561003(monkeypatch):
    """$OPSNN_BACKEND names no backend, and set_default("numpy") lands after the call's key
    read the environment but before phase 1's kernel lookup (which then passes): the call is
    561003, as without the race, not an internal error (found by a breaker, 57 in 20000 calls)."""
    g, x = _data()
    real_plan = engine.plan

    def racing_plan(*args, **kwargs):
        kernels.set_default("numpy")
        return real_plan(*args, **kwargs)

    monkeypatch.setenv(kernels.ENV_VAR, "bogus")
    monkeypatch.setattr(engine, "plan", racing_plan)
    saved = kernels.DEFAULT
    try:
        kernels.set_default(None)
        assert _status(opsnn.leaky_relu_backward, g, x, 0.1) == 561003
    finally:
        kernels.set_default(saved)


def test_a_soc_switch_racing_phase_1_files_no_wrong_plan(monkeypatch, acl_env):
    """The two-phase API's plan cache too: phase 1 reads the SoC selection once, for its key and
    its checks (a set_soc landing in between, simulated inside the checks, had filed a plan
    checked for Ascend910B under an Ascend910 key)."""
    g, x = _data(dt=BF16)
    real = engine._plan_uncached

    def racing(*args, **kwargs):
        opsnn.set_soc(None)
        return real(*args, **kwargs)

    gt, xt, out = acl_env.put(g), acl_env.put(x), acl_env.put(np.zeros_like(g))
    slope = acl_env.scalar(0.01, "DOUBLE")
    call = (gt.tensor, xt.tensor, slope, False, out.tensor)
    monkeypatch.setattr(engine, "_plan_uncached", racing)
    try:
        opsnn.set_soc("Ascend910")
        assert aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(*call)[2] == 161002
        monkeypatch.undo()
        opsnn.set_soc("Ascend910")
        assert aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(*call)[2] == 161002
    finally:
        opsnn.set_soc(None)
        acl.get_recent_err_msg()
    assert aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(*call)[2] == 0
