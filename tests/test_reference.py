"""opsnn.reference against torch.ops.aten (bit-exact where DECISIONS.md says they agree) and against
the observed boundary tables of spec/torch_semantics.md §1.2, §2.1, §2.3, §3 and §4."""

from __future__ import annotations

import math

import cases
import ml_dtypes
import numpy as np
import pytest

from opsnn import reference as R

torch = pytest.importorskip("torch")

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
NAN, INF = math.nan, math.inf


def to_torch(a: np.ndarray):
    a = np.ascontiguousarray(a)
    if a.dtype == BF16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def to_numpy(t) -> np.ndarray:
    return t.view(torch.int16).numpy().view(BF16) if t.dtype == torch.bfloat16 else t.numpy()


def assert_same_bits(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal dtype, shape and bits; any NaN equals any NaN (payloads are not part of the contract)."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    a64, e64 = actual.astype(F64), expected.astype(F64)
    unsigned = f"u{actual.dtype.itemsize}"
    same = (actual.view(unsigned) == expected.view(unsigned)) | (np.isnan(a64) & np.isnan(e64))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, f"{bad.size} elements differ, first at {bad[0]}: {actual.flat[bad[0]]!r} vs {expected.flat[bad[0]]!r}"


def random_pair(dtype, n=4096, seed=0, specials=True):
    rng = np.random.default_rng(seed)
    grad = rng.uniform(-100, 100, n)
    self_ = rng.uniform(-2, 2, n)
    if specials:
        grad[:6] = [NAN, INF, -INF, -0.0, 0.0, 6e4]
        self_[6:12] = [0.0, -0.0, INF, -INF, 1e-40, -1e-40]
    with np.errstate(over="ignore"):
        return grad.astype(dtype), self_.astype(dtype)


# ---- LeakyReluBackward --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=str)
@pytest.mark.parametrize("slope", [0.0, 0.01, 0.1, 0.2, 1 / 3, 5.5, -0.5, -752.277139130999, 458.92])
def test_leaky_backward_matches_torch(dtype, slope):
    """f32 and f16/bf16 (float32 compute, one rounding): torch agrees bit for bit (DECISIONS 1-3)."""
    grad, self_ = random_pair(dtype)
    expected = to_numpy(torch.ops.aten.leaky_relu_backward(to_torch(grad), to_torch(self_), slope, False))
    assert_same_bits(R.leaky_relu_backward(grad, self_, slope), expected)


@pytest.mark.parametrize("slope", [0.0, 0.5, -0.25, 2.0, 0.375])
def test_leaky_backward_double_matches_torch_for_float32_exact_slopes(slope):
    slope = float(np.float32(slope))  # DECISIONS 2 and torch agree exactly when float32(s) == s
    grad, self_ = random_pair(F64)
    expected = torch.ops.aten.leaky_relu_backward(to_torch(grad), to_torch(self_), slope, False).numpy()
    assert_same_bits(R.leaky_relu_backward(grad, self_, slope), expected)


def test_leaky_backward_double_uses_float32_slope():
    """DECISIONS 2: DOUBLE tensors still multiply by float32(slope) (0.1 -> 0.100000001490116...)."""
    out = R.leaky_relu_backward(np.array([1.0, 3.0]), np.array([-1.0, -1.0]), 0.1)
    assert out.tolist() == [float(np.float32(0.1)), 3.0 * float(np.float32(0.1))]
    assert out[0] != 0.1  # torch would give the double slope


def test_leaky_backward_self_table():
    """torch_semantics §1.2, grad 1, slope 0.2, float32: strict > 0, NaN takes the slope branch."""
    self_ = np.array([-2, -0.0, 0.0, 1.4e-45, -1.4e-45, 3, NAN, INF, -INF], F32)
    s = np.float32(0.2)
    expected = np.array([s, s, s, 1, s, 1, s, 1, s], F32)
    assert_same_bits(R.leaky_relu_backward(np.ones(9, F32), self_, 0.2), expected)


@pytest.mark.parametrize("slope, slope_row", [
    (0.2, [INF, -INF, -0.0]),
    (0.0, [NAN, NAN, -0.0]),
    (-0.5, [-INF, INF, 0.0]),
])
def test_leaky_backward_grad_table(slope, slope_row):
    """torch_semantics §1.2: pass branch copies grad; slope branch is an IEEE multiply."""
    grad = np.array([NAN, INF, -INF, -0.0], F32)
    passed = R.leaky_relu_backward(grad, np.ones(4, F32), slope)
    assert_same_bits(passed, grad)
    scaled = R.leaky_relu_backward(grad, -np.ones(4, F32), slope)
    assert_same_bits(scaled, np.array([NAN] + slope_row, F32))


def test_leaky_backward_half_rounds_once_from_float32():
    """torch_semantics §1.4: f16, slope 0.1 -> product in float32, one rounding to half."""
    grad = np.array([3.0, 0.333251953125, 1000, -7.5], F16)
    out = R.leaky_relu_backward(grad, -np.ones(4, F16), 0.1)
    assert out.dtype == F16
    assert out.tolist() == [0.300048828125, 0.0333251953125, 100.0, -0.75]


def test_leaky_backward_promotion_broadcast_and_out_dtype():
    grad, self_ = np.ones((3, 1), F16), np.array([[-1.0, 0.0, 1.0, 2.0]], BF16)
    out = R.leaky_relu_backward(grad, self_, 0.5)
    assert out.dtype == F32 and out.shape == (3, 4)  # PromoteType(f16, bf16) = f32
    # spec §3.3: f16 inputs with an f32 out give f16-rounded values, widened
    widened = R.leaky_relu_backward(np.array([3.0], F16), np.array([-1.0], F16), 0.1, out_dtype=F32)
    assert widened.dtype == F32 and widened.tolist() == [0.300048828125]


def test_leaky_backward_double_to_bf16_out_rounds_once():
    """DECISIONS 3: the final cast is one round-to-nearest-even (not float64 -> float32 -> bf16)."""
    value = 1 + 2**-8 + 2**-40  # just above the bf16 tie between 1 and 1 + 2**-7
    out = R.leaky_relu_backward(np.array([value]), np.array([1.0]), 0.0, out_dtype=BF16)
    assert float(out[0]) == 1 + 2**-7


def test_scalar_conversion():
    """spec §2.8: ToFloat overflows to inf, bool -> 0/1, complex -> 0, bf16 widens exactly."""
    assert R.to_float32(1e100) == np.float32(INF) and R.to_float32(-1e100) == np.float32(-INF)
    import warnings
    with warnings.catch_warnings():  # an int beyond float32's range (and beyond a double's): inf, silently
        warnings.simplefilter("error")
        assert R.to_float32(2**128) == np.float32(INF) and R.to_float32(-10**400) == np.float32(-INF)
    assert R.to_float32(True) == 1 and R.to_float32(3 + 4j) == 0
    assert R.to_float32(np.array(0.69921875, BF16)[()]) == np.float32(0.69921875)
    assert R.to_double(np.float16(0.1)) == float(np.float16(0.1))


# an int beyond 2**53 whose float32 rounding a detour through float64 would move: float() makes
# the first 2**62 + 2**38 (a tie, then rounded to even: 2**62); the second is a tie itself
INT_TIES = [2**62 + 2**38 + 1, -(2**62 + 2**38 + 1), 2**62 + 2**38, 2**63 - 1, -2**63, 2**53 + 1]


@pytest.mark.parametrize("value", INT_TIES)
def test_int_scalars_round_to_float32_once_as_torch(value):
    """ToFloat of an INT64 scalar is C's int64 -> float cast, one rounding, as torch's Scalar
    (the golden went through float(), which rounded 2**62 + 2**38 + 1 down to 2**62)."""
    grad, self_ = np.ones(2, F32), np.array([-1.0, 1.0], F32)
    expected = to_numpy(torch.ops.aten.leaky_relu_backward(to_torch(grad), to_torch(self_), value, False))
    assert_same_bits(R.leaky_relu_backward(grad, self_, value), expected)
    assert R.to_float32(value) == R.to_float32(np.int64(value))
    x = np.array([-1e19, -5e18, 5e18, 1e19], F32)
    for dtype in (F32, BF16):
        bound = abs(value)
        expected = to_numpy(torch.ops.aten.hardtanh(to_torch(x.astype(dtype)), -bound, bound))
        assert_same_bits(R.hardtanh(x.astype(dtype), -bound, bound), expected)
        got = R.hardtanh_backward(np.ones(4, dtype), x.astype(dtype), -bound, bound)
        expected = to_numpy(torch.ops.aten.hardtanh_backward(to_torch(np.ones(4, dtype)), to_torch(x.astype(dtype)),
                                                             -bound, bound))
        assert_same_bits(got, expected)


# ---- HardtanhBackward ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=str)
@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (-0.7, 0.3), (0.1, 0.9), (-502.37, 0.0), (1.0, -1.0)])
def test_hardtanh_backward_matches_torch(dtype, bounds):
    """Without NaN in self torch agrees bit for bit (bounds are float32 for f16/bf16/f32)."""
    grad, self_ = random_pair(dtype)
    expected = to_numpy(torch.ops.aten.hardtanh_backward(to_torch(grad), to_torch(self_), *bounds))
    assert_same_bits(R.hardtanh_backward(grad, self_, *bounds), expected)


def test_hardtanh_backward_self_table():
    """torch_semantics §2.1: grad 5, bounds (-1, 1), strict interior, +0.0 outside."""
    self_ = np.array([-2, -1, -0.999999, -0.0, 0.0, 0.5, 1.0, 1.0000001, 2, INF, -INF], F32)
    expected = np.array([0, 0, 5, 5, 5, 5, 0, 0, 0, 0, 0], F32)
    assert_same_bits(R.hardtanh_backward(np.full(11, 5, F32), self_, -1, 1), expected)


def test_hardtanh_backward_grad_bits_and_positive_zero():
    grad = np.array([NAN, INF, -INF, -0.0], F32)
    assert_same_bits(R.hardtanh_backward(grad, np.zeros(4, F32), -1, 1), grad)
    assert_same_bits(R.hardtanh_backward(grad, np.full(4, 2, F32), -1, 1), np.zeros(4, F32))


@pytest.mark.parametrize("dtype, self_value, bounds, passes", [
    (F32, np.float32(0.1), (0.1, 1.0), False),       # bound becomes float32(0.1) == self
    (BF16, 0.69921875, (-1.0, 0.7), True),           # bf16(0.7) < float32(0.7)
    (F16, float(np.float16(0.1)), (0.1, 1.0), False),  # 0.09998 <= float32(0.1)
])
def test_hardtanh_backward_float32_bounds(dtype, self_value, bounds, passes):
    """torch_semantics §2.3 / DECISIONS 8: compare in float32 against float32(min), float32(max)."""
    out = R.hardtanh_backward(np.ones(1, dtype), np.array([self_value], dtype), *bounds)
    assert float(out[0]) == (1.0 if passes else 0.0)


def test_hardtanh_backward_nan_rules():
    """DECISIONS 8/9: NaN self passes at every position; min > max zeroes all else; a NaN bound
    makes its strict compare false (the arch35 kernel rule), so only NaN self passes."""
    self_ = np.array([NAN] * 40 + [-3, 0, 0.5, 1, 3], F32)
    grad = np.full(45, 5, F32)
    assert R.hardtanh_backward(grad, self_, -1, 1).tolist() == [5] * 40 + [0, 5, 5, 0, 0]
    assert R.hardtanh_backward(grad, self_, 1, -1).tolist() == [5] * 40 + [0] * 5
    assert R.hardtanh_backward(grad, self_, NAN, 1).tolist() == [5] * 40 + [0] * 5


# ---- forward LeakyRelu / Hardtanh ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=str)
@pytest.mark.parametrize("slope", [0.0, 0.01, 0.2, -0.5, 1e5])
def test_leaky_relu_matches_torch(dtype, slope):
    _, x = random_pair(dtype)
    expected = to_numpy(torch.ops.aten.leaky_relu(to_torch(x), slope))
    assert_same_bits(R.leaky_relu(x, slope), expected)


@pytest.mark.parametrize("slope, expected", [
    (0.01, [np.float32(-2) * np.float32(0.01), -0.0, 0.0, 3, NAN, INF, -INF]),
    (0.0, [-0.0, -0.0, 0.0, 3, NAN, INF, NAN]),
    (-0.5, [1.0, 0.0, -0.0, 3, NAN, INF, INF]),
])
def test_leaky_relu_table(slope, expected):
    """torch_semantics §3, float32."""
    x = np.array([-2, -0.0, 0.0, 3, NAN, INF, -INF], F32)
    assert_same_bits(R.leaky_relu(x, slope), np.array(expected, F32))


@pytest.mark.parametrize("x, bounds, expected", [
    ([-3, 0, 0.5, 1, 3, NAN], (-1, 1), [-1, 0, 0.5, 1, 1, NAN]),
    ([-3, 0, 0.5, 1, 3, NAN], (1, -1), [-1, -1, -1, -1, -1, NAN]),
    ([-3, 0, 0.5, 1, 3, NAN], (NAN, 1), [NAN] * 6),
    ([-0.0, 0.0, -2, 2], (-1, 1), [-0.0, 0.0, -1, 1]),
    ([-0.0, 0.0, -2, 2], (0, 6), [-0.0, 0.0, 0.0, 2]),
    ([-0.0, 0.0, -2, 2], (-0.0, 6), [-0.0, 0.0, -0.0, 2]),
    ([-INF, INF, -2, 2], (-1, 1), [-1, 1, -1, 1]),
])
def test_hardtanh_float_table(x, bounds, expected):
    """torch_semantics §4: clamp = min(max(x, lo), hi), NaN propagates, the sign of zero follows x."""
    assert_same_bits(R.hardtanh(np.array(x, F32), *bounds), np.array(expected, F32))


@pytest.mark.parametrize("bounds, expected", [((-1.5, 1.5), [-1, -1, 0, 1, 1]), ((-1.9, 2.9), [-1, -1, 0, 1, 2])])
def test_hardtanh_integer_bounds_truncate(bounds, expected):
    out = R.hardtanh(np.array([-3, -1, 0, 1, 3], np.int64), *bounds)
    assert out.dtype == np.int64 and out.tolist() == expected
    assert R.hardtanh(np.array(2, np.int64), 4, 3).tolist() == 3


def test_hardtanh_integer_bound_past_int64_wraps_as_a_c_conversion():
    """A bound an integer self cannot hold has a value here as the module docstring promises: its
    integer value (a float's truncated) wrapped modulo 2**64, then to self's dtype, as C converts
    a uint64 (2**63 is -2**63 in int64). An int in [2**63, 2**64) had raised OverflowError
    (a breaker's; torch and opsnn refuse the call: 161002). An infinite or NaN bound has no
    integer value: a ValueError naming it."""
    x = np.array([1, -5, 7], np.int64)
    assert R.hardtanh(x, 0, 2**63).tolist() == [-2**63] * 3
    assert R.hardtanh(x, 2.0**63, 3).tolist() == [1, -5, 3]
    assert R.hardtanh(x.astype(np.int8), 0, 2**64 - 1).tolist() == [-1] * 3
    assert R.hardtanh(np.array([1, 5, 200], np.uint8), 0, 2**63 + 300).tolist() == [1, 5, 44]
    assert R.hardtanh(x, np.uint64(2**64 - 1), 9).tolist() == [1, -1, 7]
    for bound, shown in ((INF, "inf"), (NAN, "nan")):
        with pytest.raises(ValueError) as info:
            R.hardtanh(x, -1, bound)
        assert str(info.value) == (f"hardtanh: max_val must be finite for an integer self (dtype int64), "
                                   f"got {shown}: no integer has its value")


def test_hardtanh_of_an_empty_integer_self_takes_any_bound():
    """opsnn accepts an empty self whatever its bounds (the empty fast path comes before their
    conversion), so its golden must have a value: an infinite or NaN bound of an empty integer
    self had raised (math.trunc), where the result has no element to clamp."""
    for dt in (np.int8, np.uint8, np.int64):
        for bound in (NAN, INF, -INF):
            got = R.hardtanh(np.zeros((0, 3), dt), bound, 1.0)
            assert got.dtype == dt and got.shape == (0, 3)
    with pytest.raises(ValueError, match="min_val must be finite"):
        R.hardtanh(np.zeros(1, np.int8), NAN, 1.0)


def test_hardtanh_bounds_round_to_self_dtype():
    assert R.hardtanh(np.array([-1, 1], F16), -0.1, 0.1).tolist() == [-0.0999755859375, 0.0999755859375]
    assert R.hardtanh(np.array([-1, 1], BF16), -0.7, 0.7).astype(F32).tolist() == [-0.69921875, 0.69921875]


@pytest.mark.parametrize("dtype", [F32, F16, BF16, F64, np.int8, np.int16, np.int32, np.int64, np.uint8], ids=str)
def test_hardtanh_matches_torch(dtype):
    rng = np.random.default_rng(1)
    x = rng.uniform(-60, 60, 2048)
    x[:3] = [NAN, -0.0, INF]
    with np.errstate(invalid="ignore"):
        x = np.abs(x) if np.dtype(dtype) == np.uint8 else x
        x = np.nan_to_num(x, posinf=100).astype(dtype) if np.dtype(dtype).kind in "iu" else x.astype(dtype)
    lo, hi = (3, 40) if np.dtype(dtype) == np.uint8 else (-25, 17)
    expected = to_numpy(torch.ops.aten.hardtanh(to_torch(x), lo, hi))
    assert_same_bits(R.hardtanh(x, lo, hi), expected)


# ---- NaN sign and payload: the golden writes the bits the kernels' contract names --------------
# README / docs/torch.md §5: a NaN keeps its sign and quiet payload (torch's own conversions do not,
# so these are checked against hand-computed bits and against the NumPy backend, not torch).

def _bits(values, dtype) -> np.ndarray:
    return np.array(values, f"u{np.dtype(dtype).itemsize}").view(dtype)


def test_golden_nan_bits_are_the_contracts():
    snan_bf16 = _bits([0xFFA6, 0x7F81], BF16)  # signalling, negative and positive
    # slope branch: widened, quieted by the multiply, payload and sign kept, narrowed back
    got = R.leaky_relu_backward(snan_bf16, np.array([-0.25, -1.0], BF16), 0.5)
    assert got.view(np.uint16).tolist() == [0xFFE6, 0x7FC1]
    # pass branch: the bits as they are, in the operator's dtype and narrowed to a bf16 out
    assert R.leaky_relu_backward(snan_bf16, np.ones(2, BF16), 0.5).view(np.uint16).tolist() == [0xFFA6, 0x7F81]
    f32_nans = _bits([0x7F810000, 0xFFA61234], F32)  # low half zero: kept; else quiet bit set
    assert R.leaky_relu_backward(f32_nans, np.ones(2, F32), 0.5, out_dtype=BF16).view(np.uint16).tolist() \
        == [0x7F81, 0xFFE6]
    # float64 compute to bf16: the payload's top bits, quiet
    f64_nan = _bits([0x7FF4C00000000000], F64)
    assert R.leaky_relu_backward(f64_nan, np.ones(1, F64), 0.5, out_dtype=BF16).view(np.uint16).tolist() == [0x7FE6]
    # clamps return a NaN x as it is; the backward's pass copies grad's bits
    assert R.hardtanh(snan_bf16, -1.0, 1.0).view(np.uint16).tolist() == [0xFFA6, 0x7F81]
    assert R.hardtanh(f32_nans, -1.0, 1.0).view(np.uint32).tolist() == [0x7F810000, 0xFFA61234]
    assert R.hardtanh_backward(snan_bf16, np.zeros(2, BF16), -1.0, 1.0).view(np.uint16).tolist() == [0xFFA6, 0x7F81]
    # a NaN bound fills every element: the max's, else the min's, as self's dtype holds it
    x = np.array([0.5, -2.0, NAN], F32)
    payload = float(_bits([0x7FC12345], F32)[0])
    assert R.hardtanh(x, -NAN, 1.0).view(np.uint32).tolist() == [0xFFC00000] * 3
    assert R.hardtanh(x, payload, -NAN).view(np.uint32).tolist() == [0xFFC00000] * 3
    assert R.hardtanh(x, -1.0, payload).view(np.uint32).tolist() == [0x7FC12345] * 3
    signalling = float(_bits([0x7FF4000012345678], F64)[0])
    assert R.hardtanh(x.astype(F64), signalling, 1.0).view(np.uint64).tolist() == [0x7FF4000012345678] * 3
    assert R.hardtanh(x.astype(F16), signalling, 1.0).view(np.uint16).tolist() == [0x7F00] * 3  # via float32
    assert R.hardtanh(x.astype(BF16), payload, 1.0).view(np.uint16).tolist() == [0x7FC0] * 3  # ml_dtypes' cast


def _nans(dtype) -> np.ndarray:
    """Signalling and quiet NaNs of both signs with payloads, then two ordinary values."""
    dtype = np.dtype(dtype)
    top = {2: 0x7C00 if dtype == F16 else 0x7F80, 4: 0x7F800000, 8: 0x7FF0000000000000}[dtype.itemsize]
    sign = 1 << (8 * dtype.itemsize - 1)
    payloads = {2: [0x26, 0x41], 4: [0x260000, 0x410000, 0x1234], 8: [0x26 << 45, 0x123456789]}[dtype.itemsize]
    values = [top | p for p in payloads]
    return np.concatenate([_bits(values + [v | sign for v in values], dtype), np.array([-2.0, 0.5], dtype)])


@pytest.mark.parametrize("grad_dtype", [F16, BF16, F32, F64], ids=str)
@pytest.mark.parametrize("self_dtype", [F16, BF16, F32, F64], ids=str)
def test_golden_nan_bits_equal_the_numpy_backends(grad_dtype, self_dtype, monkeypatch):
    """Every dtype pair and out dtype, every op: the golden and the NumPy backend (which the numba
    backend equals bit for bit, tests/test_numba_backend.py) write the same NaN bits."""
    import opsnn
    from opsnn import kernels

    monkeypatch.setattr(kernels, "DEFAULT", kernels.DEFAULT)  # restored after set_default below
    kernels.set_default("numpy")
    grad = _nans(grad_dtype)
    self_ = np.resize(np.array([-0.5, 2.0, 0.25], self_dtype), grad.shape)
    self_[::4] = _nans(self_dtype)[: self_[::4].size]
    for out_dtype in (F16, BF16, F32, F64):
        out = np.empty(grad.shape, out_dtype)
        opsnn.leaky_relu_backward(grad, self_, 0.5, out=out)
        golden = R.leaky_relu_backward(grad, self_, 0.5, out_dtype=out_dtype)
        cases.assert_bits_equal(out, golden, nan_payload=True, what="leaky_relu_backward")
        opsnn.leaky_relu(grad, 0.5, out=out)
        golden = R.leaky_relu(grad, 0.5, out_dtype=out_dtype)
        cases.assert_bits_equal(out, golden, nan_payload=True, what="leaky_relu")
        if grad_dtype == self_dtype == out_dtype != F64:  # the API's dtypes (DECISIONS 10)
            opsnn.hardtanh_backward(grad, self_, -1.0, 1.0, out=out)
            golden = R.hardtanh_backward(grad, self_, -1.0, 1.0, out_dtype=out_dtype)
            cases.assert_bits_equal(out, golden, nan_payload=True, what="hardtanh_backward")
    same = np.empty(grad.shape, grad_dtype)
    for bounds in ((-1.0, 1.0), (-NAN, 1.0), (-1.0, float(_nans(F64)[1])), (float(_nans(F32)[3]), NAN)):
        opsnn.hardtanh(grad, *bounds, out=same)
        cases.assert_bits_equal(same, R.hardtanh(grad, *bounds), nan_payload=True, what=f"hardtanh {bounds}")

