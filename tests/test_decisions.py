"""One test (or parametrised group) per decision of ../shared/spec/DECISIONS.md, each pinning the
exact value the decision names."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import cases
import opsnn
import opsnn.acl as acl
from cases import BF16, C64, C128, F16, F32, F64, RANK8, RANK9
from conftest import (HARDTANH, LEAKY, acl_format, expect_acl_failure, expect_py_failure, run_hardtanh,
                      run_leaky)

LAYERS = ("py", "acl")
NULLPTR, INVALID, FIND_KERNEL = 161001, 161002, 561003


def f32a(*v):
    return np.array(v, F32)


def leaky_phase1(env, g, x, slope, sir=False, out=None, sdt="DOUBLE", out_dtype=None):
    """Phase 1 only; returns (ws, executor, ret, out DevTensor)."""
    g, x = np.asarray(g), np.asarray(x)
    gt, xt = env.put(g), env.put(x)
    shape = np.broadcast_shapes(g.shape, x.shape) if out is None else out
    ot = env.out(shape, out_dtype or cases.promote(g.dtype, x.dtype))
    ws, ex, ret = LEAKY.phase1(gt.tensor, xt.tensor, env.scalar(slope, sdt), sir, ot.tensor)
    return ws, ex, ret, ot


def hardtanh_phase1(env, g, x, lo=-1.0, hi=1.0, out=None, bdt="DOUBLE"):
    g, x = np.asarray(g), np.asarray(x)
    gt, xt = env.put(g), env.put(x)
    ot = env.out(x.shape if out is None else out[0], x.dtype if out is None else out[1])
    ws, ex, ret = HARDTANH.phase1(gt.tensor, xt.tensor, env.scalar(lo, bdt), env.scalar(hi, bdt), ot.tensor)
    return ws, ex, ret, ot


# ---- 1. strict >, multiplication in the slope branch, bit copy in the pass branch ---------------
@pytest.mark.parametrize("layer", LAYERS)
def test_decision_01_zero_and_nan_self_take_slope_branch(layer, env):
    x = f32a(-2, -0.0, 0.0, 1.4e-45, -1.4e-45, 3, np.nan, np.inf, -np.inf)
    g = np.ones_like(x)
    s = np.float32(0.2)
    res = run_leaky(layer, env, g, x, 0.2)
    cases.assert_bits_equal(res, f32a(s, s, s, 1, s, 1, s, 1, s))
    assert float(res[1]) == 0.20000000298023224


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("slope,expected_neg", [
    (0.2, (np.nan, np.inf, -np.inf, -0.0)),
    (0.0, (np.nan, np.nan, np.nan, -0.0)),      # inf * 0 = NaN
    (-0.5, (np.nan, -np.inf, np.inf, 0.0)),     # -0.0 * -0.5 = +0.0
])
def test_decision_01_slope_branch_is_ieee_multiplication(layer, env, slope, expected_neg):
    g = f32a(np.nan, np.inf, -np.inf, -0.0, np.nan, np.inf, -np.inf, -0.0)
    x = f32a(1, 1, 1, 1, -1, -1, -1, -1)
    res = run_leaky(layer, env, g, x, slope)
    cases.assert_bits_equal(res, f32a(np.nan, np.inf, -np.inf, -0.0, *expected_neg))
    assert np.signbit(res[3]) and np.signbit(res[7]) == (slope >= 0)


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dt", [F32, F64, F16, BF16], ids=str)
def test_decision_01_pass_branch_copies_grad_bits(layer, env, dt):
    """Same-dtype pass branch: grad's bits come back unchanged, a quiet NaN's payload and a
    signalling NaN included (bfloat16 too: widened to float32 and narrowed back, nothing changes)."""
    sub = cases.from_bits(1, dt)
    g = np.array([cases.quiet_nan_with_payload(dt), -cases.quiet_nan_with_payload(dt), -0.0, sub, -sub,
                  np.inf, cases.signaling_nan(dt), np.inf], dt)
    bits = g.view(f"u{g.itemsize}")
    bits[7] = bits[6] | (1 << (8 * g.itemsize - 1))  # the negative signalling NaN, set bitwise
    x = np.ones(8, dt)
    res = run_leaky(layer, env, g, x, 0.5)
    cases.assert_bits_equal(res, g, nan_payload=True)


# ---- 2. s = float32(negativeSlope), DOUBLE included; overflow -> +-inf ---------------------------
@pytest.mark.parametrize("layer", LAYERS)
def test_decision_02_slope_is_float32_even_for_double(layer, env):
    res = run_leaky(layer, env, np.array([1.0, 3.0], F64), np.array([-1.0, -1.0], F64), 0.1)
    assert res.dtype == F64
    assert res[0] == 0.10000000149011612
    assert res[1] == 3.0 * float(np.float32(0.1)) == 0.30000000447034836
    res = run_leaky(layer, env, f32a(3.0), f32a(-1.0), 0.1)
    assert res[0] == np.float32(0.30000001192092896)


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dt", [F32, F64, F16, BF16], ids=str)
@pytest.mark.parametrize("slope", [1e39, -1e39, 1e300])
def test_decision_02_slope_overflow_is_inf_not_error(layer, env, dt, slope):
    g = np.array([1.0, -1.0, 0.0, 2.0], dt)
    x = np.array([-1.0, -1.0, -1.0, 1.0], dt)
    inf = np.inf if slope > 0 else -np.inf
    res = run_leaky(layer, env, g, x, slope)
    cases.assert_bits_equal(res, np.array([inf, -inf, np.nan, 2.0], dt))


# ---- 3. compute dtype, f32 compute for f16/bf16, one rounding, cast to out ----------------------
@pytest.mark.parametrize("layer", LAYERS)
def test_decision_03_half_computes_in_float32_rounds_once(layer, env):
    g = np.array([3.0, 0.333251953125, 1000, -7.5], F16)
    res = run_leaky(layer, env, g, -np.ones(4, F16), 0.1)
    assert res.dtype == F16
    cases.assert_bits_equal(res, np.array([0.300048828125, 0.0333251953125, 100.0, -0.75], F16))


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dt", [F16, BF16], ids=str)
def test_decision_03_matches_float32_compute_then_astype(layer, env, dt):
    rng = np.random.default_rng(0)
    g = rng.uniform(-100, 100, 2000).astype(dt)
    x = -np.abs(rng.uniform(0.5, 2, 2000)).astype(dt)
    for slope in (0.01, 0.1, 0.2, 1 / 3):
        res = run_leaky(layer, env, g, x, slope)
        expected = (g.astype(F32) * np.float32(slope)).astype(dt)
        cases.assert_bits_equal(res, expected, what=f"{dt} slope {slope}")
        # the test can tell: rounding the slope to the dtype first gives other numbers
        other = (g * np.array(slope).astype(dt)).astype(dt)
        assert (cases.bits(other) != cases.bits(expected)).any()


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dt", [F16, BF16], ids=str)
def test_decision_03_round_to_nearest_even(layer, env, dt):
    tiny = float(cases.from_bits(1, dt))
    g = np.array([tiny, 3 * tiny, 5 * tiny, -3 * tiny], dt)
    res = run_leaky(layer, env, g, -np.ones(4, dt), 0.5)
    cases.assert_bits_equal(res, np.array([0.0, 2 * tiny, 2 * tiny, -2 * tiny], dt))


@pytest.mark.parametrize("layer", LAYERS)
def test_decision_03_promotion_and_out_cast(layer, env):
    # f16 + f32 -> f32 compute
    res = run_leaky(layer, env, np.array([3.0], F16), f32a(-1), 0.1)
    assert res.dtype == F32 and res[0] == np.float32(0.30000001192092896)
    # f16 + bf16 -> f32
    res = run_leaky(layer, env, np.array([3.0], F16), np.array([-1.0], BF16), 0.1)
    assert res.dtype == F32 and res[0] == np.float32(0.30000001192092896)
    # f32 + f64 -> f64 with the float32 slope
    res = run_leaky(layer, env, f32a(3.0), np.array([-1.0], F64), 0.1)
    assert res.dtype == F64 and res[0] == 0.30000000447034836
    # f16 inputs, f32 out: f16-rounded values, widened
    res = run_leaky(layer, env, np.array([3.0], F16), np.array([-1.0], F16), 0.1, out_dtype=F32)
    assert res.dtype == F32 and res[0] == np.float32(0.300048828125)
    # f32 result cast to f16 out with round-to-nearest-even (ties)
    g = f32a(1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 65520.0)
    res = run_leaky(layer, env, g, f32a(1, 1, 1), 0.1, out_dtype=F16)
    cases.assert_bits_equal(res, np.array([1.0, 1 + 2.0 ** -9, np.inf], F16))
    # a float64 result cast to bf16 / f16 out is rounded once (not through float32)
    g = np.array([1 + 2.0 ** -8 + 2.0 ** -30, -(1 + 2.0 ** -8 + 2.0 ** -30)], F64)
    res = run_leaky(layer, env, g, np.ones(2, F64), 0.5, out_dtype=BF16)
    cases.assert_bits_equal(res, np.array([1.0078125, -1.0078125], BF16))
    g = np.array([1 + 2.0 ** -11 + 2.0 ** -40], F64)
    res = run_leaky(layer, env, g, np.ones(1, F64), 0.5, out_dtype=F16)
    cases.assert_bits_equal(res, np.array([1 + 2.0 ** -10], F16))


# ---- 4. selfIsResult ----------------------------------------------------------------------------
@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("slope,expected", [(-0.0, -0.0), (np.nan, np.nan), (0.0, 0.0), (2.0, 2.0)])
def test_decision_04_self_is_result_accepts_non_negative_double(layer, env, slope, expected):
    res = run_leaky(layer, env, f32a(1, 1), f32a(1, -1), slope, sir=True)
    cases.assert_bits_equal(res, f32a(1.0, expected))


def test_decision_04_tiny_negative_double_rejected(acl_env):
    ws, ex, ret, _ = leaky_phase1(acl_env, f32a(1, 1), f32a(1, -1), -1e-46, sir=True)
    expect_acl_failure(ret, INVALID, words=["slope"])
    expect_py_failure(opsnn.leaky_relu_backward, f32a(1, 1), f32a(1, -1), -1e-46, self_is_result=True,
                      status=INVALID, words=["slope"])
    # ... while the same value created as a FLOAT scalar is stored as -0.0 and accepted
    res = run_leaky("acl", acl_env, f32a(1, 1), f32a(1, -1), -1e-46, sir=True, slope_dtype="FLOAT")
    cases.assert_bits_equal(res, f32a(1.0, -0.0))


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)])
def test_decision_04_checked_before_empty_shortcut(acl_env, shape):
    e = np.zeros(shape, F32)
    ws, ex, ret, _ = leaky_phase1(acl_env, e, e, -1.0, sir=True)
    expect_acl_failure(ret, INVALID, words=["slope"])
    expect_py_failure(opsnn.leaky_relu_backward, e, e, -1.0, self_is_result=True, status=INVALID,
                      words=["slope"])


@pytest.mark.parametrize("layer", LAYERS)
def test_decision_04_self_is_result_never_changes_arithmetic(layer, env):
    g, x = cases.grid(F32, F32)
    for slope in (0.0, 0.5, 3.0):
        a = run_leaky(layer, env, g, x, slope, sir=True)
        b = run_leaky(layer, env, g, x, slope, sir=False)
        cases.assert_bits_equal(a, b, nan_payload=True)
        cases.assert_bits_equal(a, cases.ref_leaky(g, x, np.float32(slope)))


# ---- 5. out dtype: CanCast(promoted, out) -------------------------------------------------------
@pytest.mark.parametrize("odt", cases.INT_BOOL_DTYPES, ids=str)
def test_decision_05_integer_or_bool_out_rejected(acl_env, odt):
    for dt in (F32, F16, F64):
        g = np.array([1.0, -2.0], dt)
        ws, ex, ret, ot = leaky_phase1(acl_env, g, g, 0.5, out_dtype=odt)
        before = ot.storage_bytes()
        expect_acl_failure(ret, INVALID, names=["out"], dtypes=[cases.ACL_NAME[odt]], words=["cast"])
        assert ot.storage_bytes() == before
        out = np.zeros(2, odt)
        expect_py_failure(opsnn.leaky_relu_backward, g, g, 0.5, out=out, status=INVALID, names=["out"],
                          words=["cast"], untouched=[g, out])


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("gdt,xdt,odt", [(F32, F32, C64), (F16, F16, C64), (BF16, F32, C64),
                                         (F64, F64, C128), (F64, F32, C64), (F32, F32, C128)], ids=str)
def test_decision_05_complex_out_works(layer, env, gdt, xdt, odt):
    g, x = cases.grid(gdt, xdt)
    res = run_leaky(layer, env, g, x, -0.5, out_dtype=odt)
    real = cases.ref_leaky(g, x, np.float32(-0.5))
    assert res.dtype == odt
    cases.assert_bits_equal(res.real, cases.cast(real, res.real.dtype))
    assert cases.bits(res.imag).max() == 0, "imaginary part must be +0.0"


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("odt", [C64, C128], ids=str)
@pytest.mark.parametrize("out_layout", ["transposed", "sliced", "offset"])
def test_decision_05_complex_out_in_strided_layouts(layer, env, odt, out_layout):
    """Found by a breaker: a transposed complex64 out (33 x 65) failed at synchronize with 500003
    'LLVM IR parsing error' (the register transpose built a vector of complex structs); large
    enough here for the panels walker's transposes and gathers (aclnn's ViewCopy step)."""
    g = np.linspace(-3, 3, 33 * 65, dtype=F32).reshape(33, 65)
    x = -g[::-1].copy()
    res = run_leaky(layer, env, g, x, -0.5, out_dtype=odt, out_layout=out_layout)
    cases.assert_bits_equal(res.real, cases.cast(cases.ref_leaky(g, x, np.float32(-0.5)), res.real.dtype))
    assert cases.bits(res.imag).max() == 0, "imaginary part must be +0.0"


# ---- 6. empty tensors (LeakyReluBackward) -------------------------------------------------------
@pytest.mark.parametrize("gs,xs", [((0,), (0,)), ((2, 0), (2, 0)), ((0, 3), (0, 3)), ((1,), (0,)),
                                   ((0, 3), (3,)), ((0,), (1,)), ((0, 3), (1, 3))], ids=str)
def test_decision_06_empty_success_workspace_zero(acl_env, gs, xs):
    g = np.ones(gs, F16)
    x = np.ones(xs, F32)
    out_shape = np.broadcast_shapes(gs, xs)
    gt, xt = acl_env.put(g), acl_env.put(x)
    # out: an empty view over a 4-element storage that must stay untouched
    base = np.full(4, 777.0, F32)
    ot = acl_env.put(np.lib.stride_tricks.as_strided(base, out_shape, (4,) * len(out_shape)), base)
    ws, ex, ret = LEAKY.phase1(gt.tensor, xt.tensor, acl_env.scalar(0.5, "DOUBLE"), False, ot.tensor)
    assert ret == 0 and ws == 0 and ex is not None, acl.get_recent_err_msg()
    assert LEAKY.phase2(None, 0, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    assert ot.storage_bytes() == base.tobytes()
    res = opsnn.leaky_relu_backward(g, x, 0.5)
    assert res.shape == out_shape and res.dtype == F32


def test_decision_06_empty_shape_numpy_cannot_hold(acl_env):
    """Found by a breaker: a broadcast with no elements whose nonzero dims multiply past NumPy's
    2**63-byte cap. The aclnn layer (tensors, no NumPy array for out) succeeds as for any empty
    call; the Pythonic layer, which must return an ndarray, refuses with 161002 naming out and
    the shape, not 200000 'cannot allocate 0 bytes'."""
    g = np.zeros((2**40, 0, 1), F32)
    x = np.zeros((1, 0, 2**30), F32)  # empty too: nothing to allocate or upload
    exc = expect_py_failure(opsnn.leaky_relu_backward, g, x, 0.5, status=161002,
                            words=["out", "no elements", "NumPy", "2**63"])
    assert str((2**40, 0, 2**30)) in exc.message
    gt, xt = acl_env.put(g), acl_env.put(x)
    shape = [2**40, 0, 2**30]  # an aclTensor may have any int64 dims, NumPy or not
    out = acl.create_tensor(shape, acl.ACL_FLOAT, [2**30, 2**30, 1], 0, acl.ACL_FORMAT_ND, [0],
                            acl_env.malloc(4))
    ws, ex, ret = LEAKY.phase1(gt.tensor, xt.tensor, acl_env.scalar(0.5, "DOUBLE"), False, out)
    assert ret == 0 and ws == 0, acl.get_recent_err_msg()
    assert LEAKY.phase2(None, 0, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    assert acl.destroy_tensor(out) == 0


# ---- 7. unsupported product line ----------------------------------------------------------------
def test_decision_07_ascend310b_find_kernel_error(acl_env):
    with opsnn.use_soc("Ascend310B"):
        ws, ex, ret, ot = leaky_phase1(acl_env, f32a(1, 2), f32a(1, -1), 0.5)
        before = ot.storage_bytes()
        expect_acl_failure(ret, FIND_KERNEL, words=["Ascend310B", "Atlas A2"])
        assert ot.storage_bytes() == before
        expect_py_failure(opsnn.leaky_relu_backward, f32a(1, 2), f32a(1, -1), 0.5, status=FIND_KERNEL,
                          words=["Ascend310B"])
    assert run_leaky("acl", acl_env, f32a(1, 2), f32a(1, -1), 0.5).tolist() == [1.0, 1.0]


# ---- 8. hardtanh: strict bounds, NaN passes, +0.0 otherwise, bit copy ---------------------------
@pytest.mark.parametrize("layer", LAYERS)
def test_decision_08_strict_bounds(layer, env):
    x = f32a(-2, -1, -0.999999, -0.0, 0.0, 0.5, 1.0, 1.0000001, 2, np.inf, -np.inf)
    res = run_hardtanh(layer, env, np.full(11, 5.0, F32), x, -1.0, 1.0)
    cases.assert_bits_equal(res, f32a(0, 0, 5, 5, 5, 5, 0, 0, 0, 0, 0), nan_payload=True)
    # +-inf self with +-inf bounds -> 0 (inf < inf is false)
    res = run_hardtanh(layer, env, f32a(5, 5, 5), f32a(np.inf, -np.inf, 0), -np.inf, np.inf)
    cases.assert_bits_equal(res, f32a(0, 0, 5), nan_payload=True)


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dt", cases.HARDTANH_DTYPES, ids=str)
@pytest.mark.parametrize("n", [1, 17, 40, 100])
def test_decision_08_nan_self_passes_grad_everywhere(layer, env, dt, n):
    x = np.full(n, np.nan, dt)
    g = (np.arange(n) + 1).astype(dt)
    res = run_hardtanh(layer, env, g, x, -1.0, 1.0)
    cases.assert_bits_equal(res, g, nan_payload=True)


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dt", cases.HARDTANH_DTYPES, ids=str)
def test_decision_08_grad_bits_copied_else_positive_zero(layer, env, dt):
    sub = cases.from_bits(1, dt)
    gvals = [-0.0, cases.quiet_nan_with_payload(dt), cases.signaling_nan(dt), np.inf, -np.inf, sub, -sub]
    g = np.array(gvals * 2, dt)
    x = np.array([0.0] * 7 + [2.0] * 7, dt)
    res = run_hardtanh(layer, env, g, x, -1.0, 1.0)
    expected = np.concatenate([g[:7], np.zeros(7, dt)])
    cases.assert_bits_equal(res, expected, nan_payload=True)
    assert cases.bits(res[7:]).max() == 0, "out of range must be +0.0 (bits 0)"


@pytest.mark.parametrize("layer", LAYERS)
def test_decision_08_bounds_are_float32(layer, env):
    # f32 self = f32(0.1), min 0.1 (a double) -> bound f32(0.1) == self -> 0
    assert run_hardtanh(layer, env, f32a(1), f32a(0.1), 0.1, 1.0)[0] == 0
    # bf16 self 0.69921875, max 0.7 -> 0.69921875 < 0.7f -> passes
    r = run_hardtanh(layer, env, np.array([1.0], BF16), np.array([0.7], BF16), -1.0, 0.7)
    assert np.array([0.7], BF16)[0] == 0.69921875 and float(r[0]) == 1.0
    # f16 self f16(0.1) = 0.0999755859375, min 0.1 -> 0
    assert float(run_hardtanh(layer, env, np.array([1.0], F16), np.array([0.1], F16), 0.1, 1.0)[0]) == 0.0
    # f16 self 0.0999755859375 with an f16 min scalar 0.1 (same value) -> 0; f32 self 0.1 > f16 min -> passes
    if layer == "acl":
        r = run_hardtanh(layer, env, f32a(1), f32a(0.1), 0.1, 1.0, bound_dtype="FLOAT16")
        assert r[0] == 1.0
    else:
        r = run_hardtanh(layer, env, f32a(1), f32a(0.1), np.float16(0.1), 1.0)
        assert r[0] == 1.0


# ---- 9. min > max allowed; min/max dtypes unchecked, complex -> 0 --------------------------------
@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("lo,hi", [(1.0, -1.0), (0.0, -975.75), (511.06, -523.07), (0.5, 0.5)])
def test_decision_09_min_greater_than_max(layer, env, lo, hi):
    for dt in cases.HARDTANH_DTYPES:
        g, x = cases.grid(dt, dt, bounds=(lo, hi))
        res = run_hardtanh(layer, env, g, x, lo, hi)
        nan = np.isnan(x.astype(F32))
        expected = np.where(nan, g, np.zeros_like(g))
        cases.assert_bits_equal(res, expected, nan_payload=True, what=str(dt))
        assert cases.bits(res[~nan]).max() == 0


COMPLEX_BOUNDS = [(((5 + 5j), "COMPLEX64"), (1.0, "DOUBLE"), (1, 0, 0, 0)),
                  ((-1.0, "DOUBLE"), ((-7 + 1j), "COMPLEX128"), (0, 2, 0, 0))]


@pytest.mark.parametrize("lo,hi,expected", COMPLEX_BOUNDS, ids=["complex-min", "complex-max"])
def test_decision_09_complex_bound_converts_to_zero(acl_env, lo, hi, expected):
    g = f32a(1, 2, 3, 4)
    x = f32a(0.5, -0.5, 0.0, 2.0)
    gt, xt, ot = acl_env.put(g), acl_env.put(x), acl_env.out((4,), F32)
    r = acl_env.launch(HARDTANH, gt.tensor, xt.tensor, acl_env.scalar(*lo), acl_env.scalar(*hi), ot.tensor)
    assert r.ok(), f"{r} {acl.get_recent_err_msg()!r}"
    cases.assert_bits_equal(ot.view(), f32a(*expected))
    py_value = {"COMPLEX64": np.complex64, "COMPLEX128": np.complex128, "DOUBLE": float}
    res = opsnn.hardtanh_backward(g, x, min_val=py_value[lo[1]](lo[0]), max_val=py_value[hi[1]](hi[0]))
    cases.assert_bits_equal(res, f32a(*expected))


@pytest.mark.parametrize("soc", ["Ascend910", "Ascend910B"])
@pytest.mark.parametrize("bdt", ["UINT64", "UINT32", "BOOL", "INT8", "BF16", "COMPLEX64", "FLOAT16"])
def test_decision_09_bound_dtypes_not_checked(acl_env, soc, bdt):
    g = f32a(1, 2, 3)
    x = f32a(-0.5, 0.0, 0.5)
    with opsnn.use_soc(soc):
        lo = {"UINT64": 0, "UINT32": 0, "BOOL": False, "INT8": -1, "BF16": -1.0, "COMPLEX64": 0j,
              "FLOAT16": -1.0}[bdt]
        res = run_hardtanh("acl", acl_env, g, x, lo, 1, bound_dtype=bdt)
    lo32 = 0.0 if bdt.startswith("COMPLEX") else float(lo)
    hi32 = 0.0 if bdt.startswith("COMPLEX") else 1.0
    cases.assert_bits_equal(res, cases.ref_hardtanh(g, x, lo32, hi32))
    assert res.tolist() == ([0, 0, 0] if hi32 == 0 else [0, 0, 3] if lo32 == 0 else [1, 2, 3])


# ---- 10. hardtanh: same dtype and shape, out dtype/shape equal self's ---------------------------
@pytest.mark.parametrize("what", ["grad_dtype", "grad_shape", "out_dtype", "out_shape"])
def test_decision_10_equal_dtype_and_shape(acl_env, what):
    g, x = np.ones((2, 3), F32), np.ones((2, 3), F32)
    out = ((2, 3), F32)
    if what == "grad_dtype":
        g = g.astype(F16)
    elif what == "grad_shape":
        g = np.ones((1, 3), F32)
    elif what == "out_dtype":
        out = ((2, 3), F16)
    else:
        out = ((3, 2), F32)
    ws, ex, ret, ot = hardtanh_phase1(acl_env, g, x, out=out)
    name = "gradOutput" if what.startswith("grad") else "out"
    expect_acl_failure(ret, INVALID, names=[name])
    kw = {"out": np.zeros(out[0], out[1])}
    expect_py_failure(opsnn.hardtanh_backward, g, x, -1.0, 1.0, status=INVALID, names=[name], **kw)


# ---- 11. hardtanh empties, no DOUBLE ------------------------------------------------------------
@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)])
def test_decision_11_hardtanh_empty_workspace_zero(acl_env, shape):
    e = np.zeros(shape, F16)
    ws, ex, ret, ot = hardtanh_phase1(acl_env, e, e)
    assert ret == 0 and ws == 0 and ex is not None, acl.get_recent_err_msg()
    assert HARDTANH.phase2(None, 0, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    res = opsnn.hardtanh_backward(e, e, -1.0, 1.0)
    assert res.shape == shape and res.dtype == F16


@pytest.mark.parametrize("soc", ["Ascend910", "Ascend910B", "Ascend910_93", "Ascend950", "Ascend310P"])
def test_decision_11_hardtanh_no_double(acl_env, soc):
    d = np.ones((2,), F64)
    with opsnn.use_soc(soc):
        ws, ex, ret, _ = hardtanh_phase1(acl_env, d, d)
        expect_acl_failure(ret, INVALID, names=["gradOutput"], dtypes=["DOUBLE"])
        expect_py_failure(opsnn.hardtanh_backward, d, d, -1.0, 1.0, status=INVALID, dtypes=["DOUBLE"])


# ---- 12. dtype lists per SoC --------------------------------------------------------------------
def test_decision_12_bf16_accepted_on_a2_class(acl_env, soc_with_bf16):
    b = np.array([1.0, -1.0, 0.5], BF16)
    cases.assert_bits_equal(run_leaky("acl", acl_env, b, b, 0.5), np.array([1.0, -0.5, 0.5], BF16))
    cases.assert_bits_equal(run_hardtanh("acl", acl_env, b, b, -1.0, 1.0), np.array([0.0, 0.0, 0.5], BF16))
    cases.assert_bits_equal(opsnn.leaky_relu_backward(b, b, 0.5), np.array([1.0, -0.5, 0.5], BF16))
    # a BF16 slope scalar is in the A2 scalar list
    res = run_leaky("acl", acl_env, f32a(1, 1), f32a(1, -1), 0.5, slope_dtype="BF16")
    cases.assert_bits_equal(res, f32a(1, 0.5))


def test_decision_12_bf16_rejected_elsewhere(acl_env, soc_without_bf16):
    b = np.array([1.0, -1.0], BF16)
    f = f32a(1.0, -1.0)
    for g, x, first in [(b, b, "gradOutput"), (f, b, "self"), (b, f, "gradOutput")]:
        ws, ex, ret, _ = leaky_phase1(acl_env, g, x, 0.5)
        expect_acl_failure(ret, INVALID, names=[first], dtypes=["BF16"])
        expect_py_failure(opsnn.leaky_relu_backward, g, x, 0.5, status=INVALID, names=[first], dtypes=["BF16"])
    ws, ex, ret, _ = hardtanh_phase1(acl_env, b, b)
    expect_acl_failure(ret, INVALID, names=["gradOutput"], dtypes=["BF16"])
    expect_py_failure(opsnn.hardtanh_backward, b, b, -1.0, 1.0, status=INVALID, dtypes=["BF16"])
    # the scalar list loses BF16 too (spec §3.2)
    ws, ex, ret, _ = leaky_phase1(acl_env, f, f, 0.5, sdt="BF16")
    expect_acl_failure(ret, INVALID, names=["negativeSlope"], dtypes=["BF16"])
    # the other dtypes still work there
    cases.assert_bits_equal(run_leaky("acl", acl_env, f, f, 0.5), f32a(1.0, -0.5))
    h = np.array([1.0, -1.0], F16)
    cases.assert_bits_equal(run_hardtanh("acl", acl_env, h, h * 0.5, -1.0, 1.0), h)
    d = np.array([1.0, -1.0], F64)
    cases.assert_bits_equal(run_leaky("acl", acl_env, d, d, 0.5), np.array([1.0, -0.5], F64))


def test_decision_12_profile_from_env_and_use_soc_wins(acl_env, monkeypatch):
    """OPSNN_SOC selects the profile; a use_soc block overrides it for the calling thread."""
    b = np.array([1.0, -1.0], BF16)
    monkeypatch.setenv("OPSNN_SOC", "Ascend910")
    ws, ex, ret, _ = leaky_phase1(acl_env, b, b, 0.5)
    expect_acl_failure(ret, INVALID, names=["gradOutput"], dtypes=["BF16"])
    with opsnn.use_soc("Ascend910B"):
        cases.assert_bits_equal(run_leaky("acl", acl_env, b, b, 0.5), np.array([1.0, -0.5], BF16))
    monkeypatch.delenv("OPSNN_SOC")
    cases.assert_bits_equal(opsnn.leaky_relu_backward(b, b, 0.5), np.array([1.0, -0.5], BF16))


def test_decision_12_soc_names_ignore_surrounding_whitespace(acl_env, monkeypatch):
    """(Found by the docs audit) README reads $OPSNN_BACKEND "case and surrounding spaces
    ignored, as OPSNN_SOC's; only spaces is unset", but $OPSNN_SOC=' ascend910 ' (a shell quoting
    slip) was an unknown SoC, every call 361001, and one of only spaces was one too. A SoC name
    is read ignoring case and surrounding whitespace, wherever it comes from; $OPSNN_SOC of only
    whitespace is unset; an unknown name is still refused naming the value as given."""
    from opsnn._core import platform

    b, x = np.array([1.0, -1.0], BF16), np.array([1.0, -1.0], F32)
    monkeypatch.setenv("OPSNN_SOC", " ascend910\t")
    assert platform.current().name == "Ascend910" and acl.get_soc_name() == "Ascend910"
    ret = leaky_phase1(acl_env, b, b, 0.5)[2]
    expect_acl_failure(ret, INVALID, names=["gradOutput"], dtypes=["BF16"])
    for _ in range(2):  # the second call takes the plan cache's front door, which reads the raw value
        expect_py_failure(opsnn.leaky_relu_backward, b, b, 0.5, status=INVALID, names=["gradOutput"], dtypes=["BF16"])
        assert opsnn.leaky_relu_backward(x, x, 0.5).tolist() == [1.0, -0.5]
    monkeypatch.setenv("OPSNN_SOC", "  ")
    assert platform.current().name == "Ascend910B" and platform.current_name() == "  "
    for _ in range(2):
        cases.assert_bits_equal(opsnn.leaky_relu_backward(b, b, 0.5), np.array([1.0, -0.5], BF16))
    monkeypatch.setenv("OPSNN_SOC", " Ascend999 ")
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.leaky_relu_backward(x, x, 0.5)
    assert info.value.status == 361001
    assert info.value.message == ("LeakyReluBackward: $OPSNN_SOC: unknown SoC ' Ascend999 '; known: Ascend910, "
                                  "Ascend910B, Ascend910_93, Ascend950, Ascend310P, Ascend310B")
    monkeypatch.delenv("OPSNN_SOC")
    try:
        assert opsnn.set_soc(" ascend310P ").name == "Ascend310P"
        with opsnn.use_soc("Ascend950 ") as profile:
            assert profile.name == "Ascend950" and platform.current_name() == "Ascend950"
    finally:
        opsnn.set_soc(None)


def test_decision_12_use_soc_is_per_asyncio_task():
    """(A breaker) use_soc kept its selection per thread: two coroutines whose blocks overlapped
    across an await each restored the other's, so neither's SoC was in force inside its block and
    the loop's thread kept Ascend910 after both ended (a bf16 call refused for good). It is per
    context now: per asyncio task, carried by asyncio.to_thread, none in a new thread."""
    import asyncio

    from opsnn._core import platform

    b, seen, before = np.array([1.0, -1.0], BF16), {}, platform.current_name()

    async def first():
        with opsnn.use_soc("Ascend910"):
            await asyncio.sleep(0.01)
            seen["first"] = platform.current_name()
            try:
                await asyncio.to_thread(opsnn.leaky_relu, b)
            except opsnn.AclnnError as exc:
                seen["to_thread"] = exc.status

    async def second():
        await asyncio.sleep(0.005)
        with opsnn.use_soc("Ascend950"):
            await asyncio.sleep(0.02)
            seen["second"] = platform.current_name()

    async def both():
        await asyncio.gather(first(), second())
        seen["after"] = platform.current_name()

    asyncio.run(both())
    assert seen == {"first": "Ascend910", "to_thread": 161002, "second": "Ascend950", "after": before}
    cases.assert_bits_equal(opsnn.leaky_relu(b, 0.5), np.array([1.0, -0.5], BF16))
    with opsnn.use_soc("Ascend910"):
        in_thread = []
        worker = threading.Thread(target=lambda: in_thread.append(platform.current_name()))
        worker.start()
        worker.join(10)
    assert in_thread == [before]


def test_decision_12_profile_fixed_at_phase1(acl_env):
    """The profile in force at phase 1 decides; phase 2 under another profile still runs."""
    b = np.array([1.0, -1.0], BF16)
    gt, xt, ot = acl_env.put(b), acl_env.put(b), acl_env.out((2,), BF16)
    ws, ex, ret = LEAKY.phase1(gt.tensor, xt.tensor, acl_env.scalar(0.5, "DOUBLE"), False, ot.tensor)
    assert ret == 0
    with opsnn.use_soc("Ascend910"):
        assert LEAKY.phase2(acl_env.malloc(ws) if ws else None, ws, ex, acl_env.stream) == 0
        assert acl.rt.synchronize_stream(acl_env.stream) == 0
    cases.assert_bits_equal(ot.view(), np.array([1.0, -0.5], BF16))


# ---- 13. formats carried, unknown format rejected by create_tensor ------------------------------
@pytest.mark.parametrize("fmt,shape", [("NCHW", (5,)), ("NC1HWC0", (2, 3)), ("NCDHW", (2, 3)),
                                       ("HWCN", ()), ("NDHWC", (1, 2, 1, 2, 1, 2, 1, 2)), ("NHWC", (3, 1, 2))],
                         ids=str)
def test_decision_13_formats_never_checked_against_rank(acl_env, fmt, shape):
    g = cases.filled(shape, F32, 21, cases.grad_specials(F32))
    x = cases.filled(shape, F32, 22, cases.self_specials(F32, (-1.0, 1.0)))
    res = run_leaky("acl", acl_env, g, x, 0.25, fmt=fmt)
    cases.assert_bits_equal(res, cases.ref_leaky(g, x, np.float32(0.25)))
    res = run_hardtanh("acl", acl_env, g, x, -1.0, 1.0, fmt=fmt)
    cases.assert_bits_equal(res, cases.ref_hardtanh(g, x, -1.0, 1.0), nan_payload=True)


@pytest.mark.parametrize("fmt", cases.NOT_A_FORMAT)
def test_decision_13_unknown_format_rejected(acl_env, fmt):
    addr = acl_env.malloc(16)
    acl.get_recent_err_msg()
    assert acl.create_tensor([4], acl.ACL_FLOAT, [1], 0, fmt, [4], addr) is None
    msg = acl.get_recent_err_msg()
    assert isinstance(msg, str) and str(fmt) in msg
    # the message gives what is expected too: every aclFormat by its constant name and value
    assert "ACL_FORMAT_NCHW 0" in msg and "ACL_FRACTAL_Z_3D 33" in msg and "ACL_FORMAT_FRACTAL_NZ_C0_8 54" in msg
    assert acl.get_recent_err_msg() is None
    for name in cases.CARRIED_FORMATS:
        t = acl.create_tensor([4], acl.ACL_FLOAT, [1], 0, acl_format(name), [4], addr)
        assert t is not None, name
        acl.destroy_tensor(t)


# ---- 14. max rank 8; a 0-d tensor is not empty --------------------------------------------------
@pytest.mark.parametrize("layer", LAYERS)
def test_decision_14_rank8_ok_rank9_rejected(layer, env):
    g8 = cases.filled(RANK8, F32, 31)
    x8 = cases.filled(RANK8, F32, 32)
    cases.assert_bits_equal(run_leaky(layer, env, g8, x8, 0.5), cases.ref_leaky(g8, x8, np.float32(0.5)))
    cases.assert_bits_equal(run_hardtanh(layer, env, g8, x8, -1.0, 1.0), cases.ref_hardtanh(g8, x8, -1, 1))
    g9 = np.ones(RANK9, F32)
    if layer == "acl":
        ws, ex, ret, _ = leaky_phase1(env, g9, g9, 0.5)
        expect_acl_failure(ret, INVALID, names=["gradOutput"])
        ws, ex, ret, _ = hardtanh_phase1(env, g9, g9)
        expect_acl_failure(ret, INVALID, names=["gradOutput"])
    else:
        expect_py_failure(opsnn.leaky_relu_backward, g9, g9, 0.5, status=INVALID, names=["gradOutput"])
        expect_py_failure(opsnn.hardtanh_backward, g9, g9, -1.0, 1.0, status=INVALID, names=["gradOutput"])


@pytest.mark.parametrize("layer", LAYERS)
def test_decision_14_zero_d_is_computed(layer, env):
    res = run_leaky(layer, env, np.array(3.0, F32), np.array(-1.0, F32), 0.5)
    assert res.shape == () and res == np.float32(1.5)
    res = run_hardtanh(layer, env, np.array(3.0, F16), np.array(0.5, F16), -1.0, 1.0)
    assert res.shape == () and res == np.float16(3.0)
    if layer == "acl":
        ws, ex, ret, ot = leaky_phase1(env, np.array(2.0, F32), np.array(-1.0, F32), 0.5)
        assert ret == 0 and ex is not None
        r = LEAKY.phase2(env.malloc(ws) if ws else None, ws, ex, env.stream)
        assert r == 0 and acl.rt.synchronize_stream(env.stream) == 0
        assert ot.view() == np.float32(1.0), "0-d out must be written (not the empty shortcut)"


# ---- 15. null order -----------------------------------------------------------------------------
def test_decision_15_null_order(acl_env):
    ws, ex, ret = LEAKY.phase1(None, None, None, False, None)
    expect_acl_failure(ret, NULLPTR, names=["gradOutput"])
    ws, ex, ret = HARDTANH.phase1(None, None, None, None, None)
    expect_acl_failure(ret, NULLPTR, names=["self"])
    t = acl_env.put(f32a(1.0))
    s = acl_env.scalar(1.0, "DOUBLE")
    for args, first in [((t.tensor, None, None, False, None), "self"),
                        ((t.tensor, t.tensor, None, False, None), "negativeSlope"),
                        ((t.tensor, t.tensor, s, False, None), "out")]:
        expect_acl_failure(LEAKY.phase1(*args)[-1], NULLPTR, names=[first])
    for args, first in [((None, t.tensor, None, None, None), "gradOutput"),
                        ((t.tensor, t.tensor, None, None, None), "out"),
                        ((t.tensor, t.tensor, None, None, t.tensor), "min"),
                        ((t.tensor, t.tensor, s, None, t.tensor), "max")]:
        expect_acl_failure(HARDTANH.phase1(*args)[-1], NULLPTR, names=[first])
    # the int 0 is a null pointer too (pyACL's handles are ints): 161001, not a wrong handle type
    expect_acl_failure(LEAKY.phase1(t.tensor, 0, s, False, t.tensor)[-1], NULLPTR, names=["self"])
    expect_acl_failure(HARDTANH.phase1(t.tensor, t.tensor, np.int64(0), s, t.tensor)[-1], NULLPTR, names=["min"])
    expect_acl_failure(LEAKY.phase1(t.tensor, 1, s, False, t.tensor)[-1], INVALID, names=["self"])


def test_decision_15_null_executor(acl_env):
    """Phase 2 answers a null executor (None or 0) with 161001, as CommonOpExecutorRun does
    before anything else; aclSetAclOpExecutorRepeatable / aclDestroyAclOpExecutor with 561103
    (opbase: ACLNN_ERR_INNER_NULLPTR); out stays untouched."""
    from opsnn import aclnn
    ws, ex, ret, ot = leaky_phase1(acl_env, f32a(1, 2), f32a(1, -1), 0.5)
    assert ret == 0
    wsp = acl_env.malloc(ws) if ws else None
    before = ot.storage_bytes()
    for null in (None, 0):
        for phase2 in (LEAKY.phase2, HARDTANH.phase2):
            expect_acl_failure(phase2(wsp, ws, null, acl_env.stream), NULLPTR, words=["executor", "null"])
        expect_acl_failure(aclnn.aclSetAclOpExecutorRepeatable(null), 561103, words=["executor", "null"])
        expect_acl_failure(aclnn.aclDestroyAclOpExecutor(null), 561103, words=["executor", "null"])
    expect_acl_failure(LEAKY.phase2(wsp, ws, 7, acl_env.stream), INVALID, words=["executor", "int"])
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    assert ot.storage_bytes() == before, "a refused launch must not write out"
    assert LEAKY.phase2(wsp, ws, ex, acl_env.stream) == 0, "the refusals must not consume it"
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    cases.assert_bits_equal(ot.view(), f32a(1.0, 1.0))


# ---- 16. executors: single use, repeatable until destroyed --------------------------------------
def test_decision_16_executor_single_use(acl_env):
    ws, ex, ret, ot = leaky_phase1(acl_env, f32a(1, 2), f32a(1, -1), 0.5)
    assert ret == 0
    wsp = acl_env.malloc(ws) if ws else None
    assert LEAKY.phase2(wsp, ws, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    expect_acl_failure(LEAKY.phase2(wsp, ws, ex, acl_env.stream), INVALID)
    # an executor of another op
    ws, ex, ret, _ = leaky_phase1(acl_env, f32a(1, 2), f32a(1, -1), 0.5)
    assert ret == 0
    expect_acl_failure(HARDTANH.phase2(acl_env.malloc(ws) if ws else None, ws, ex, acl_env.stream), INVALID)
    ws, ex, ret, _ = hardtanh_phase1(acl_env, f32a(1, 2), f32a(0, 2))
    assert ret == 0
    expect_acl_failure(LEAKY.phase2(acl_env.malloc(ws) if ws else None, ws, ex, acl_env.stream), INVALID)


def test_decision_16_repeatable_until_destroyed(acl_env):
    from opsnn import aclnn
    g, x = acl_env.put(f32a(1, 2)), acl_env.put(f32a(1, -1))
    ot = acl_env.out((2,), F32)
    ws, ex, ret = LEAKY.phase1(g.tensor, x.tensor, acl_env.scalar(0.5, "DOUBLE"), False, ot.tensor)
    assert ret == 0
    assert aclnn.aclSetAclOpExecutorRepeatable(ex) == 0
    wsp = acl_env.malloc(ws) if ws else None
    for _ in range(3):
        assert LEAKY.phase2(wsp, ws, ex, acl_env.stream) == 0
        assert acl.rt.synchronize_stream(acl_env.stream) == 0
        cases.assert_bits_equal(ot.view(), f32a(1.0, 1.0))
    assert aclnn.aclDestroyAclOpExecutor(ex) == 0
    expect_acl_failure(LEAKY.phase2(wsp, ws, ex, acl_env.stream), INVALID)


# ---- 17. workspace checks in phase 2 ------------------------------------------------------------
def _needs_workspace(env):
    """Mixed dtypes + strided operands + a strided f64 out: Cast/Contiguous temporaries."""
    g = cases.filled((4, 5), F16, 41)
    x = cases.filled((4, 5), F32, 42)
    gt, xt = env.put_layout(g, "sliced"), env.put_layout(x, "transposed")
    ot = env.out((4, 5), F64, "sliced")
    ws, ex, ret = LEAKY.phase1(gt.tensor, xt.tensor, env.scalar(0.5, "DOUBLE"), False, ot.tensor)
    assert ret == 0, acl.get_recent_err_msg()
    assert ws > 0, "Cast/Contiguous temporaries live in the workspace, so its size must be > 0"
    return ws, ex, ot, cases.ref_leaky(g, x, np.float32(0.5), F64)


def test_decision_17_workspace_too_small_or_missing(acl_env):
    for workspace, size_delta, status in [("alloc", -1, INVALID), (None, 0, NULLPTR), (0, 0, NULLPTR)]:
        ws, ex, ot, expected = _needs_workspace(acl_env)
        before = ot.storage_bytes()
        wsp = acl_env.malloc(ws) if workspace == "alloc" else workspace
        expect_acl_failure(LEAKY.phase2(wsp, ws + size_delta, ex, acl_env.stream), status)
        assert acl.rt.synchronize_stream(acl_env.stream) == 0
        assert ot.storage_bytes() == before, "a refused launch must not write out"
    ws, ex, ot, expected = _needs_workspace(acl_env)
    assert LEAKY.phase2(acl_env.malloc(ws), ws, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    cases.assert_bits_equal(ot.view(), expected)


# ---- 18. recent error message: per thread, fetch-and-clear; same text in AclnnError -------------
def test_decision_18_recent_error_per_thread(acl_env):
    i32 = np.ones(2, np.int32)
    ws, ex, ret, _ = leaky_phase1(acl_env, i32, f32a(1, 2), 0.5)
    assert ret == INVALID
    seen = {}

    def worker():
        seen["before"] = acl.get_recent_err_msg()
        r = LEAKY.phase1(None, None, None, False, None)[-1]
        seen["ret"] = r
        seen["own"] = acl.get_recent_err_msg()
        seen["again"] = acl.get_recent_err_msg()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen["before"] is None, "another thread's message leaked"
    assert seen["ret"] == NULLPTR and cases.names_arg(seen["own"], "gradOutput") and seen["again"] is None
    msg = acl.get_recent_err_msg()
    assert cases.names_arg(msg, "gradOutput") and cases.names_dtype(msg, "INT32")
    assert acl.get_recent_err_msg() is None


@pytest.mark.parametrize("case", ["int32_grad", "sir_negative", "out_shape", "broadcast"])
def test_decision_18_pythonic_error_carries_same_status_and_text(acl_env, case):
    g, x, slope, sir, out = f32a(1, 2), f32a(1, -1), 0.5, False, None
    if case == "int32_grad":
        g = np.ones(2, np.int32)
    elif case == "sir_negative":
        slope, sir = -0.5, True
    elif case == "out_shape":
        out = np.zeros((1, 2), F32)
    else:
        x = f32a(1, 2, 3)
    out_shape = np.broadcast_shapes(g.shape, x.shape) if case != "broadcast" else (2,)
    ws, ex, ret, _ = leaky_phase1(acl_env, g, x, slope, sir=sir, out=out_shape if out is None else out.shape,
                                  out_dtype=None if out is None else out.dtype)
    msg = acl.get_recent_err_msg()
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.leaky_relu_backward(g, x, slope, sir, out=out)
    assert info.value.status == ret == INVALID
    assert info.value.message == msg
    assert msg in str(info.value)
