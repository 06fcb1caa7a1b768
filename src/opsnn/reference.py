"""Independent float64 golden formulas for the activation operators (NumPy in, NumPy out).

These are the goldens ``opsnn verify`` and the tests compare the kernels against. They share no
code with ``opsnn.ops`` or ``opsnn.kernels``: every value is modelled in float64, and each
rounding the contract names (``spec/DECISIONS.md``, spec §3.3, §4.3, §5.2, §6.2) is one explicit
step here. Only the dtype tables (``PromoteType``, the NumPy mapping) are shared, because they are
data transcribed once from opbase.

The goldens model values, not the operators' argument checks: a call the operator refuses
(Hardtanh with min > max or a bound an integer self cannot hold, a float64 HardtanhBackward:
161002) still has a value here, the formula's (torch's where it has one), but for an infinite or
NaN bound of a non-empty integer self, which no integer has (ValueError).

Arrays may have any shape and strides; bf16 is ``ml_dtypes.bfloat16``. Scalars may be Python
numbers or NumPy scalars (bf16 included); they are converted like CANN's ``aclScalar::ToFloat`` /
``ToDouble`` (spec §2.8): bool -> 0/1, complex -> 0, overflow of the float32 conversion -> +-inf.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from opsnn._core.dtypes import DataType, from_numpy, promote_type, to_numpy

__all__ = [
    "fp16_t_exception",
    "hardtanh",
    "hardtanh_backward",
    "leaky_relu",
    "leaky_relu_backward",
    "to_double",
    "to_float32",
]

_FLOAT32 = np.dtype(np.float32)
_FLOAT64 = np.dtype(np.float64)


# ---- scalar conversion (opbase aclScalar::ToDouble / ToFloat, spec §2.8) ----------------------

def to_double(value) -> float:
    """``aclScalar::ToDouble``: a plain C cast to double; bool -> 0/1, complex -> 0.0.

    Source: spec §2.8 (a complex scalar converts to 0 with a warning; DECISIONS 9).
    """
    if isinstance(value, (complex, np.complexfloating)):
        return 0.0
    return float(value)


def to_float32(value) -> np.float32:
    """``aclScalar::ToFloat``: round to the nearest float32 once; a finite overflow gives +-inf.

    Source: spec §2.8, DECISIONS 2 (``s = float32(negativeSlope)`` for every tensor dtype).
    An integer is rounded from its exact value, as C's int64 -> float cast does (and torch's
    Scalar): through a double it would be rounded twice, which moves a tie (2**62 + 2**38 + 1
    is 2**62 + 2**39 in float32, but float() makes it 2**62 + 2**38, which then ties to 2**62).
    """
    with np.errstate(over="ignore"):
        if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_)):
            return np.float32(_to_odd_double(int(value)))
        return np.float32(to_double(value))


def _to_odd_double(value: int) -> float:
    """An integer as a double rounded to odd (toward zero, last bit set when inexact): its sticky
    bit survives, so a later nearest-even rounding to float32 is the single correct one. Beyond
    the double range (2**1024), +-inf: float32's range ends far below, so the result is the same."""
    magnitude = abs(value)
    excess = magnitude.bit_length() - 53
    if excess > 0:
        kept = magnitude >> excess
        if kept << excess != magnitude:
            kept |= 1
        try:
            magnitude = math.ldexp(kept, excess)
        except OverflowError:
            magnitude = math.inf
    return float(-magnitude if value < 0 else magnitude)


# ---- rounding helpers ---------------------------------------------------------------------------

def _round_from_f64(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Round float64 values once to ``dtype`` (round to nearest even); other sources cast as-is,
    but for a float32 NaN narrowed to bfloat16, which keeps its payload (``_f32_to_bf16``).

    ml_dtypes converts float64 through float32, which rounds twice (1 + 2^-8 + 2^-40 becomes bf16
    1.0 instead of 1.0078125). Rounding to float32 *to odd* first keeps the sticky bit, so the
    second, nearest-even rounding to a type of at most 22 fraction bits is the correct single
    rounding. NumPy's own float64 -> float16/float32 casts are already single roundings.
    """
    dtype = np.dtype(dtype)
    if values.dtype == _FLOAT64 and _is_ml_float(dtype):
        values = _f32_round_to_odd(values)
    if values.dtype == _FLOAT32 and from_numpy(dtype) == DataType.BF16:
        return _f32_to_bf16(values)
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(dtype)


def _f32_to_bf16(values: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16, round to nearest even; a NaN keeps its sign and payload.

    ml_dtypes writes every NaN as 0x7FC0 / 0xFFC0. The kernels' contract (README, docs/torch.md
    section 5) keeps the top 16 bits of a float32 NaN: as they are where the low 16 bits are zero
    (a bfloat16 NaN widened and narrowed back, signalling ones included), else with the quiet bit
    set, since the top half alone could read as infinity.
    """
    bfloat16 = to_numpy(DataType.BF16)
    with np.errstate(invalid="ignore"):  # a signalling NaN's cast: patched below
        result = values.astype(bfloat16)
    nan = np.isnan(values)
    if not nan.any():
        return result
    bits = values.view(np.uint32)
    top = (bits >> 16).astype(np.uint16)
    kept = np.where(bits & np.uint32(0xFFFF), top | np.uint16(0x0040), top).view(bfloat16)
    return np.where(nan, kept, result)


def _is_ml_float(dtype: np.dtype) -> bool:
    """True for the ml_dtypes floating types (bf16, the fp8 family); their NumPy kind varies."""
    return dtype.kind not in "biuc" and dtype.itemsize <= 2 and dtype != np.float16


def _f32_round_to_odd(values: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounding toward zero, with the last bit set when the result is inexact."""
    with np.errstate(over="ignore", invalid="ignore"):
        nearest = values.astype(_FLOAT32)
    toward_zero = np.where(np.abs(_widened(nearest)) > np.abs(values),
                           np.nextafter(nearest, np.float32(0)), nearest)
    bits = toward_zero.view(np.uint32)
    inexact = (_widened(toward_zero) != values) & ~np.isnan(values)
    return np.where(inexact, bits | np.uint32(1), bits).view(_FLOAT32)


def _widened(values: np.ndarray, dtype: np.dtype = _FLOAT64) -> np.ndarray:
    """``values`` cast exactly to ``dtype``, a type that holds them all (float64 by default).

    A signalling NaN makes the hardware cast raise *invalid*, which NumPy reports as a
    RuntimeWarning; NaN inputs are part of the contract, so the warning is not raised.
    """
    with np.errstate(invalid="ignore"):
        return values.astype(dtype)


def _check_floating(dtype: np.dtype, what: str) -> None:
    if from_numpy(dtype) not in (DataType.FLOAT, DataType.FLOAT16, DataType.DOUBLE, DataType.BF16):
        raise TypeError(f"{what}: compute dtype must be float16, bfloat16, float32 or float64, got {dtype}")


def _scaled(values: np.ndarray, slope: np.float32, dtype: np.dtype) -> np.ndarray:
    """``values * slope`` rounded as the kernels round it, returned in ``dtype``.

    f16/bf16/f32: the operands are at most 24-bit significands, so the float64 product is exact;
    rounding it to float32 is the float32 multiply, and f16/bf16 then round once more to their
    dtype (spec §3.3, §5.2: compute in float32, CAST_RINT back). f64: a float64 multiply by the
    float32-rounded slope (DECISIONS 2).
    """
    with np.errstate(over="ignore", invalid="ignore"):  # inf * 0 = NaN is part of the contract
        product = _widened(values) * np.float64(slope)
        if dtype == _FLOAT64:
            return product
        return _round_from_f64(product.astype(_FLOAT32), dtype)


# ---- LeakyReluBackward / LeakyRelu --------------------------------------------------------------

def leaky_relu_backward(grad_output: np.ndarray, self: np.ndarray, negative_slope,
                        out_dtype=None) -> np.ndarray:
    """Golden of ``aclnnLeakyReluBackward``: ``grad if self > 0 else grad * float32(slope)``.

    Args:
        grad_output: gradient, any float dtype, broadcastable with ``self``.
        self: forward input (or result; ``self_is_result`` never changes the arithmetic, DECISIONS 4).
        negative_slope: number or NumPy scalar; converted with ToFloat (DECISIONS 2).
        out_dtype: result dtype; default PromoteType(grad_output, self). Cast with round to nearest
            even (DECISIONS 3).

    Returns:
        Array of the broadcast shape in ``out_dtype``.

    Rules (DECISIONS 1-3, spec §3.3): compute dtype P = PromoteType(grad, self); both are cast to
    P. The compare is the strict ``self > 0``, so +0.0, -0.0 and NaN take the slope branch. The
    pass branch copies grad's bits (in P); the slope branch is a real IEEE multiplication, rounded
    by ``_scaled`` (inf * 0 = NaN, -0.0 * -0.5 = +0.0).
    """
    grad_output, self = np.asarray(grad_output), np.asarray(self)
    compute = to_numpy(promote_type(from_numpy(grad_output.dtype), from_numpy(self.dtype)))
    _check_floating(compute, "leaky_relu_backward")
    grad_p = _widened(grad_output, compute)
    passes = _widened(self) > 0  # self cast to P is exact: P holds self's dtype
    result = np.where(passes, grad_p, _scaled(grad_p, to_float32(negative_slope), compute))
    return _round_from_f64(result, np.dtype(out_dtype or compute))


def leaky_relu(self: np.ndarray, negative_slope=0.01, out_dtype=None) -> np.ndarray:
    """Golden of ``aclnnLeakyRelu``: ``x if x > 0 else x * float32(slope)``, shape of ``self``.

    Args:
        self: input, float16/bfloat16/float32/float64.
        negative_slope: number or NumPy scalar; ToFloat (spec §5.2: the kernel takes a float attr,
            also for DOUBLE, which runs in double with the float32-rounded slope).
        out_dtype: result dtype (CanCast(self, out)); default ``self.dtype``.

    f16/bf16 multiply in float32 and round once to their dtype; NaN stays NaN, -inf * 0 = NaN,
    +0.0 * negative slope = -0.0 (spec §5.2, torch_semantics §3).
    """
    self = np.asarray(self)
    _check_floating(self.dtype, "leaky_relu")
    result = np.where(_widened(self) > 0, self, _scaled(self, to_float32(negative_slope), self.dtype))
    return _round_from_f64(result, np.dtype(out_dtype or self.dtype))


# ---- HardtanhBackward / Hardtanh ----------------------------------------------------------------

def hardtanh_backward(grad_output: np.ndarray, self: np.ndarray, min_val, max_val,
                      out_dtype=None) -> np.ndarray:
    """Golden of ``aclnnHardtanhBackward``: grad passes iff ``min < self < max`` or self is NaN.

    Args:
        grad_output: gradient; the API requires the dtype and shape of ``self`` (DECISIONS 10).
        self: forward input (kernel input ``result``), float16/bfloat16/float32.
        min_val, max_val: numbers or NumPy scalars, converted with ToFloat (DECISIONS 9); any order
            (min > max gives zeros except at NaN positions).
        out_dtype: result dtype; default ``grad_output.dtype``.

    Rules (DECISIONS 8, spec §4.3 arch35 kernel): self is widened exactly and compared strictly
    against float32(min) and float32(max); NaN self passes. Where the gradient passes its bits are
    copied; elsewhere the result is +0.0 whatever grad holds.
    """
    grad_output, self = np.asarray(grad_output), np.asarray(self)
    x = _widened(self)
    lo, hi = np.float64(to_float32(min_val)), np.float64(to_float32(max_val))
    passes = ((x > lo) & (x < hi)) | np.isnan(x)
    result = np.where(passes, grad_output, np.zeros((), grad_output.dtype))
    return _round_from_f64(result, np.dtype(out_dtype or grad_output.dtype))


def hardtanh(self: np.ndarray, min_val=-1.0, max_val=1.0) -> np.ndarray:
    """Golden of ``aclnnHardtanh`` (ClipByValueV2): ``min(max(x, lo), hi)`` in ``self``'s dtype.

    Args:
        self: input, floating or integer dtype (spec §6.1 list).
        min_val, max_val: numbers or NumPy scalars, converted to self's dtype first (spec §2.8
            ``ConvertToTensor``): floats round to nearest (bf16 through float32, like a C++
            ``bfloat16(float(x))``), integers truncate toward zero and wrap like a C conversion
            (modulo 2**64 first, as a uint64 converts: 2**63 is -2**63 for int64, a bound torch
            and opsnn refuse); two integers become float16 as opbase's fp16_t makes them
            (``fp16_t_exception``).

    Raises:
        ValueError: an infinite or NaN bound of a non-empty integer self (no integer has its
            value; an empty one takes any bound, as opsnn's empty fast path does).

    Returns:
        Array of self's shape and dtype. NaN in x or in a bound propagates (spec §6.2 AICPU
        kernel and torch_semantics §4): a NaN max, else a NaN min, in every element; else x's NaN
        as it is. The clamp is C++ ``min(max(x, lo), hi)``, which returns x
        when it equals a bound, so the sign of zero follows x there (relu6(-0.0) = -0.0); with
        lo > hi every element equals hi (max is applied first).
    """
    self = np.asarray(self)
    if self.size == 0 and self.dtype.kind in "iu":  # no element to clamp: any bound (opsnn's empty
        return np.empty(self.shape, self.dtype)      # fast path accepts even a NaN one)
    lo, hi = _bound(min_val, self.dtype, "min_val"), _bound(max_val, self.dtype, "max_val")
    if self.dtype.kind not in "iu" and (np.isnan(np.float64(lo)) or np.isnan(np.float64(hi))):
        # min(max(x, lo), hi) with NaN-propagating max and min: a NaN max, else the NaN min, as
        # the kernels return it (its sign and payload as converted to self's dtype; float16 is
        # computed in float32, where a signalling one arrives quiet)
        bound = np.asarray(hi if np.isnan(np.float64(hi)) else lo, self.dtype)
        if self.dtype == np.float16:
            bound = (bound.view(np.uint16) | np.uint16(0x0200)).view(np.float16)
        return np.full(self.shape, bound, self.dtype)
    return _clamp(self, lo, hi)  # in self's dtype: a NaN x is returned as it is, payload and all


def _clamp(x: np.ndarray, lo, hi) -> np.ndarray:
    """``std::min(std::max(x, lo), hi)``: a bound replaces x only when strictly beyond it."""
    raised = np.where(x < lo, lo, x)
    return np.where(hi < raised, hi, raised)


def _bound(value, dtype: np.dtype, name: str):
    """A clamp bound converted to the tensor dtype (aclScalar -> tensor of self's dtype)."""
    exception = fp16_t_exception(value) if dtype == np.float16 else None
    if exception is not None:
        return exception
    if dtype.kind in "iu":
        return _integer_bound(value, dtype, name)
    if dtype.kind == "b" or dtype.kind == "c":
        raise TypeError(f"hardtanh: dtype {dtype} is not supported")
    if dtype == _FLOAT32 or _is_ml_float(dtype):  # bf16 through float32, as bfloat16(float(x))
        return to_float32(value).astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):  # invalid: a signalling NaN's cast
        return np.float64(to_double(value)).astype(dtype)


def _integer_bound(value, dtype: np.dtype, name: str):
    """A bound of an integer self: its integer value (a float's truncated toward zero) modulo
    2**64, then in self's dtype, as C converts a uint64 (or an int64, the same bits): past int64
    (2**63 is -2**63) it had raised OverflowError, though refused calls get a value here."""
    if isinstance(value, (numbers.Integral, np.integer)):
        number = int(value)
    else:
        double = to_double(value)
        if not math.isfinite(double):
            raise ValueError(f"hardtanh: {name} must be finite for an integer self (dtype {dtype}), "
                             f"got {double}: no integer has its value")
        number = math.trunc(double)
    return np.array(number % 2**64, dtype=np.uint64).astype(dtype)


def fp16_t_exception(value) -> np.float16 | None:
    """The float16 opbase's fp16_t builds from an integer where it does not round to nearest:
    an int8 -128 is -0.0 (its bits below the sign are 0), an int32 or int64 -2**31 is -0.5 (its
    negation overflows to itself); None for every other value. A Python int is an int64, as the
    Pythonic layer and torch's Scalar take it (docs/decisions-forward.md, F5)."""
    width = value.dtype.itemsize if isinstance(value, np.signedinteger) else 8 if type(value) is int else 0
    if width == 1 and value == -128:
        return np.float16(-0.0)
    if width in (4, 8) and value == -2**31:  # (by width: np.longlong is no np.int64 instance)
        return np.float16(-0.5)
    return None
