"""Shared test data for the registry-style conformance suite.

Everything here is plain NumPy: dtype lists, shape groups, special values, stride makers, bit
comparison and the two float golden formulas written from ../shared/spec/DECISIONS.md (independent
of opsnn's own kernels and of opsnn.reference).
"""

from __future__ import annotations

import dataclasses
import itertools
import re

import ml_dtypes
import numpy as np

# ---- dtypes ------------------------------------------------------------------------------------
F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
C64 = np.dtype(np.complex64)
C128 = np.dtype(np.complex128)

FLOAT_DTYPES = (F32, F16, BF16, F64)
HARDTANH_DTYPES = (F32, F16, BF16)

# NumPy dtypes that no tensor list accepts (neither op), with their aclDataType names.
INT_BOOL_DTYPES = tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8,
                                              np.uint16, np.uint32, np.uint64, np.bool_))
BAD_TENSOR_DTYPES = INT_BOOL_DTYPES + (C64, C128)

# aclDataType name (without ACL_) of each NumPy dtype; the value is spec §2.2.
ACL_NAME = {
    F32: "FLOAT", F16: "FLOAT16", F64: "DOUBLE", BF16: "BF16", C64: "COMPLEX64", C128: "COMPLEX128",
    np.dtype(np.int8): "INT8", np.dtype(np.int16): "INT16", np.dtype(np.int32): "INT32",
    np.dtype(np.int64): "INT64", np.dtype(np.uint8): "UINT8", np.dtype(np.uint16): "UINT16",
    np.dtype(np.uint32): "UINT32", np.dtype(np.uint64): "UINT64", np.dtype(np.bool_): "BOOL",
}
ACL_DTYPE_VALUES = {
    "FLOAT": 0, "FLOAT16": 1, "INT8": 2, "INT32": 3, "UINT8": 4, "INT16": 6, "UINT16": 7,
    "UINT32": 8, "INT64": 9, "UINT64": 10, "DOUBLE": 11, "BOOL": 12, "COMPLEX64": 16,
    "COMPLEX128": 17, "BF16": 27,
}
ACL_FORMAT_VALUES = {
    "NCHW": 0, "NHWC": 1, "ND": 2, "NC1HWC0": 3, "FRACTAL_Z": 4, "HWCN": 16, "NDHWC": 27,
    "FRACTAL_NZ": 29, "NCDHW": 30, "NDC1HWC0": 32, "NC": 35, "NCL": 47, "NC1HWC0_C04": 12,
    "FRACTAL_NZ_C0_16": 50, "FRACTAL_NZ_C0_32": 51, "FRACTAL_NZ_C0_2": 52, "FRACTAL_NZ_C0_4": 53,
    "FRACTAL_NZ_C0_8": 54,
}
CARRIED_FORMATS = ("ND", "NCHW", "NHWC", "HWCN", "NDHWC", "NCDHW", "NC1HWC0")
NOT_A_FORMAT = (5, 999, 12345)  # integers that are no aclFormat value

# Aliases a message may use for a dtype (CANN DT_ names or NumPy names).
_DTYPE_ALIASES = {
    "FLOAT": ("FLOAT", "float32"), "FLOAT16": ("FLOAT16", "float16", "half"),
    "DOUBLE": ("DOUBLE", "float64"), "BF16": ("BF16", "bfloat16"),
}

STATUS = {"SUCCESS": 0, "NULLPTR": 161001, "INVALID": 161002, "FIND_KERNEL": 561003}


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """opbase PromoteType restricted to the four float dtypes (spec §2.4)."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    if F64 in (a, b):
        return F64
    return F32  # f16+f32, bf16+f32, f16+bf16


def uint_of(dtype: np.dtype) -> np.dtype:
    return np.dtype({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize])


def bits(a) -> np.ndarray:
    """Contiguous unsigned-integer view of a float array (complex: of its real/imag parts)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "c":
        a = a.view(F32 if a.dtype == C64 else F64)
    return a.reshape(-1).view(uint_of(a.dtype))


def isnan(a) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "c":
        a = a.view(F32 if a.dtype == C64 else F64)
    return np.isnan(a.reshape(-1).astype(F64 if a.dtype == F64 else F32))


def assert_bits_equal(actual, expected, *, nan_payload: bool = False, what: str = "") -> None:
    """Bit-exact comparison; NaN equals NaN unless nan_payload (then NaN bits must match too)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != expected {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != expected {expected.shape}"
    ab, eb = bits(actual), bits(expected)
    if nan_payload:
        bad = ab != eb
    else:
        an, en = isnan(actual), isnan(expected)
        bad = (an != en) | (~an & ~en & (ab != eb))
    if bad.any():
        idx = np.flatnonzero(bad)[:8]
        af = np.ascontiguousarray(actual).reshape(-1)
        ef = np.ascontiguousarray(expected).reshape(-1)
        if actual.dtype.kind == "c":
            af, ef = af.view(af.real.dtype), ef.view(ef.real.dtype)
        detail = ", ".join(f"[{i}] got {af[i]!r} (0x{int(ab[i]):x}) want {ef[i]!r} (0x{int(eb[i]):x})"
                           for i in idx)
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} elements differ: {detail}")


# ---- scalar conversion (CANN ToFloat, spec §2.8) ----------------------------------------------
def to_float32(value) -> np.float32:
    """aclScalar::ToFloat of a Python number / NumPy scalar: RNE, overflow -> +-inf, complex -> 0."""
    if isinstance(value, (complex, np.complexfloating)):
        return np.float32(0.0)
    with np.errstate(all="ignore"):
        if isinstance(value, (bool, np.bool_)):
            return np.float32(1.0 if value else 0.0)
        if isinstance(value, (int, np.integer)):
            return np.float32(value)  # int -> float RNE
        return np.float32(np.float64(value))


# ---- golden formulas (DECISIONS 1-3, 8) --------------------------------------------------------
def ref_leaky(grad, self, slope32, out_dtype=None) -> np.ndarray:
    """DECISIONS 1-3: compare/multiply in f32 (f64 for a DOUBLE result), round once, cast to out."""
    grad, self = np.asarray(grad), np.asarray(self)
    p = promote(grad.dtype, self.dtype)
    c = F64 if p == F64 else F32
    g = grad.astype(c)
    x = self.astype(c)
    g, x = np.broadcast_arrays(g, x)
    with np.errstate(all="ignore"):
        prod = g * c.type(np.float32(slope32))
        r = np.where(x > 0, g, prod).astype(p)
        return cast(r, out_dtype or p)


def cast(a: np.ndarray, dtype) -> np.ndarray:
    """Round-to-nearest-even cast. ml_dtypes rounds float64 -> bfloat16 twice (through float32),
    so that pair goes through float32 rounded to odd, which makes the second rounding exact."""
    a, dtype = np.asarray(a), np.dtype(dtype)
    if a.dtype != F64 or dtype != BF16:
        with np.errstate(all="ignore"):
            return a.astype(dtype)
    with np.errstate(all="ignore"):
        f = a.astype(F32)
        away = np.isfinite(a) & (np.abs(f.astype(F64)) > np.abs(a))
        u = f.view(np.uint32).copy()
        u[away] -= 1                                   # toward zero: now truncated
        f = u.view(F32)
        inexact = np.isfinite(a) & (f.astype(F64) != a)
        u[inexact] |= 1                                # sticky bit: round to odd
        return u.view(F32).astype(BF16)


def ref_hardtanh(grad, self, lo32, hi32) -> np.ndarray:
    """DECISION 8: grad bits where lo < self < hi (in f32) or self is NaN, else +0.0."""
    grad, self = np.asarray(grad), np.asarray(self)
    xf = self.astype(F32)
    with np.errstate(all="ignore"):
        mask = ((xf > np.float32(lo32)) & (xf < np.float32(hi32))) | np.isnan(xf)
    u = uint_of(grad.dtype)
    gb = np.ascontiguousarray(grad).reshape(-1).view(u).reshape(grad.shape)
    out = np.where(mask, gb, u.type(0)).astype(u)
    return out.reshape(-1).view(grad.dtype).reshape(out.shape)


# ---- special values ----------------------------------------------------------------------------
def finfo(dtype):
    return ml_dtypes.finfo(dtype) if np.dtype(dtype) == BF16 else np.finfo(dtype)


def from_bits(u: int, dtype) -> np.generic:
    dtype = np.dtype(dtype)
    return np.array([u], uint_of(dtype)).view(dtype)[0]


def step(value, dtype, direction: int):
    """The next representable value of `dtype` from `value` toward +inf (1) or -inf (-1)."""
    dtype = np.dtype(dtype)
    v = np.array([value], dtype)
    if v[0] == 0:
        tiny = from_bits(1, dtype)
        return tiny if direction > 0 else -tiny
    u = v.view(uint_of(dtype)).copy()
    u += 1 if (v[0] > 0) == (direction > 0) else np.array(-1).astype(u.dtype)
    return u.view(dtype)[0]


def quiet_nan_with_payload(dtype) -> np.generic:
    """A quiet NaN whose payload is not the default one."""
    return from_bits({2: 0x7E15, 4: 0x7FC12345, 8: 0x7FF8000012345678}[np.dtype(dtype).itemsize]
                     if np.dtype(dtype) != BF16 else 0x7FD5, dtype)


def signaling_nan(dtype) -> np.generic:
    return from_bits({2: 0x7D01 if np.dtype(dtype) == F16 else 0x7F81, 4: 0x7F812345,
                      8: 0x7FF0000000012345}[np.dtype(dtype).itemsize], dtype)


def self_specials(dtype, bounds=()) -> np.ndarray:
    """self values: zeros, NaN, infinities, extremes, denormals and (for hardtanh) the bounds
    as the dtype rounds them, with their neighbours."""
    dtype = np.dtype(dtype)
    fi = finfo(dtype)
    sub = from_bits(1, dtype)
    vals = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5, -2.5, 3.0, -3.0, 1e-3,
            float(fi.max), -float(fi.max), float(fi.tiny), -float(fi.tiny), sub, -sub,
            0.1, 0.7, -0.5, 0.8, 6.0]
    with np.errstate(all="ignore"):
        for b in bounds:
            vb = np.array(b).astype(dtype)[()]
            if np.isfinite(vb):
                vals += [vb, step(vb, dtype, 1), step(vb, dtype, -1)]
        return np.array([np.array(v).astype(dtype)[()] for v in vals], dtype)


def grad_specials(dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    fi = finfo(dtype)
    sub = from_bits(1, dtype)
    vals = [1.0, -1.0, 0.0, -0.0, np.nan, np.inf, -np.inf, float(fi.max), -float(fi.max),
            sub, -sub, 2.5, 1e-3, 3.0, -7.5]
    with np.errstate(all="ignore"):
        arr = [np.array(v).astype(dtype)[()] for v in vals]
    arr.append(quiet_nan_with_payload(dtype))
    return np.array(arr, dtype)


def grid(g_dtype, x_dtype, bounds=()):
    """Every grad special against every self special: two arrays of shape (n_grad, n_self)."""
    g = grad_specials(g_dtype)
    x = self_specials(x_dtype, bounds)
    gg, xx = np.meshgrid(g, x, indexing="ij")
    return np.ascontiguousarray(gg), np.ascontiguousarray(xx)


def filled(shape, dtype, seed: int, specials=None) -> np.ndarray:
    """Deterministic data of a shape: special values first, then small random values."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    rng = np.random.default_rng(seed)
    vals = rng.uniform(-4, 4, n).astype(np.float64)
    if dtype.kind == "u":
        vals = np.abs(vals)
    if specials is not None:
        k = min(n, len(specials))
        out = vals.astype(dtype)
        out[:k] = specials[:k]
        rng.shuffle(out)
        return out.reshape(shape)
    return vals.astype(dtype).reshape(shape)


# ---- shape groups ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ShapeCase:
    name: str
    grad: tuple
    self: tuple
    out: tuple

    @property
    def empty(self) -> bool:
        return 0 in self.out


LEAKY_SHAPES = (
    ShapeCase("equal", (2, 3), (2, 3), (2, 3)),
    ShapeCase("bcast_3x1_1x4", (3, 1), (1, 4), (3, 4)),
    ShapeCase("bcast_2x3_3", (2, 3), (3,), (2, 3)),
    ShapeCase("bcast_3_2x3", (3,), (2, 3), (2, 3)),
    ShapeCase("zero_d", (), (), ()),
    ShapeCase("zero_d_grad", (), (3,), (3,)),
    ShapeCase("zero_d_self", (2, 2), (), (2, 2)),
    ShapeCase("empty_0", (0,), (0,), (0,)),
    ShapeCase("empty_2x0", (2, 0), (2, 0), (2, 0)),
    ShapeCase("empty_0x3", (0, 3), (0, 3), (0, 3)),
    ShapeCase("empty_grad_0x3_self_3", (0, 3), (3,), (0, 3)),
    ShapeCase("empty_grad_0_self_1", (0,), (1,), (0,)),
    ShapeCase("empty_self_1_0", (1,), (0,), (0,)),
    ShapeCase("rank8", (1, 2, 1, 2, 1, 2, 1, 2), (1, 2, 1, 2, 1, 2, 1, 2), (1, 2, 1, 2, 1, 2, 1, 2)),
    ShapeCase("rank8_bcast", (2, 1, 1, 1, 1, 1, 1, 2), (2,), (2, 1, 1, 1, 1, 1, 1, 2)),
)

HARDTANH_SHAPES = (
    ShapeCase("equal", (2, 3), (2, 3), (2, 3)),
    ShapeCase("one_d", (7,), (7,), (7,)),
    ShapeCase("zero_d", (), (), ()),
    ShapeCase("empty_0", (0,), (0,), (0,)),
    ShapeCase("empty_2x0", (2, 0), (2, 0), (2, 0)),
    ShapeCase("empty_0x3", (0, 3), (0, 3), (0, 3)),
    ShapeCase("rank8", (1, 2, 1, 2, 1, 2, 1, 2), (1, 2, 1, 2, 1, 2, 1, 2), (1, 2, 1, 2, 1, 2, 1, 2)),
)

RANK9 = (1, 2, 1, 1, 1, 1, 1, 1, 2)
RANK8 = (1, 2, 1, 1, 1, 1, 1, 2)


# ---- stride makers ------------------------------------------------------------------------------
# Each maker takes a contiguous array `a` and returns (view, base): `base` is C-contiguous,
# `view` is a view into it holding exactly a's values, laid out as the maker's name says.
def _contig(a):
    b = np.array(a, order="C", copy=True)
    return b, b


def _transposed(a):
    base = np.array(a.T, order="C", copy=True)
    return base.T, base


def _sliced(a):
    """[::2] on every dim (and [::3] on the second one)."""
    steps = tuple(3 if i == 1 else 2 for i in range(a.ndim))
    base = np.empty(tuple(max(n * s, 0) for n, s in zip(a.shape, steps)), a.dtype)
    base[...] = np.array(7).astype(a.dtype)
    view = base[tuple(slice(None, None, s) for s in steps) + (Ellipsis,)]
    view[...] = a
    return view, base


def _offset(a):
    if a.ndim == 0:
        base = np.zeros(3, a.dtype)
        view = base[1:2].reshape(())
    else:
        base = np.zeros(tuple(n + 1 for n in a.shape), a.dtype)
        view = base[tuple(slice(1, None) for _ in a.shape)]
    view[...] = a
    return view, base


def _reversed(a):  # negative strides: Pythonic layer only
    base = np.ascontiguousarray(a[::-1]) if a.ndim else a.copy()
    return (base[::-1] if a.ndim else base), base


STRIDE_MAKERS = {"contig": _contig, "transposed": _transposed, "sliced": _sliced, "offset": _offset}
PY_ONLY_MAKERS = {"reversed": _reversed}


def make_layout(a, name):
    maker = STRIDE_MAKERS.get(name) or PY_ONLY_MAKERS[name]
    view, base = maker(np.asarray(a))
    assert np.shares_memory(view, base) or view.size == 0
    assert bits(view).tobytes() == bits(np.asarray(a)).tobytes() or view.size == 0
    return view, base


def out_layout(shape, dtype, name, sentinel=777.0):
    """An out view of `shape` laid out per `name`, inside a base filled with `sentinel`."""
    zeros = np.zeros(shape, dtype)
    view, base = make_layout(zeros, name)
    with np.errstate(all="ignore"):
        base[...] = np.array(sentinel).astype(dtype)
    return view, base


def outside_mask(view, base) -> np.ndarray:
    """Boolean array over `base`: True where `view` does not reach."""
    flat = np.ones(base.size, bool)
    if view.size:
        strides, off = layout_of(view, base)
        pos = np.full(view.shape, off, np.int64)
        for axis, st in enumerate(strides):
            shape = [1] * view.ndim
            shape[axis] = view.shape[axis]
            pos = pos + (np.arange(view.shape[axis]) * st).reshape(shape)
        flat[pos.reshape(-1)] = False
    return flat.reshape(base.shape)


def _offset_elems(view, base) -> int:
    return (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize


def layout_of(view, base):
    """(strides, offset) in elements of a view inside a C-contiguous base."""
    assert base.flags.c_contiguous
    return [s // base.itemsize for s in view.strides], _offset_elems(view, base)


# ---- messages -----------------------------------------------------------------------------------
ARG_PATTERNS = {
    "gradOutput": r"gradOutput|grad_output",
    "self": r"\bself\b",
    "negativeSlope": r"negativeSlope|negative_slope",
    "out": r"\bout\b",
    "min": r"\bmin(_val)?\b",
    "max": r"\bmax(_val)?\b",
}


def names_arg(message: str, arg: str) -> bool:
    return re.search(ARG_PATTERNS[arg], message or "") is not None


def names_dtype(message: str, acl_name: str) -> bool:
    for alias in _DTYPE_ALIASES.get(acl_name, (acl_name,)):
        if re.search(rf"(?<![A-Za-z0-9]){alias}(?![0-9])", message or "", re.I):
            return True
    return False


def names_shape(message: str, shape) -> bool:
    """The shape appears as (a, b) / [a, b] / (a,) / [] / () in the message (spaces ignored)."""
    text = (message or "").replace(" ", "")
    inner = ",".join(str(int(d)) for d in shape)
    forms = {f"[{inner}]", f"({inner})"}
    if len(shape) == 1:
        forms.add(f"({inner},)")
    return any(f in text for f in forms)


def subsets(names):
    """Every non-empty subset of `names`, in a stable order."""
    for r in range(1, len(names) + 1):
        yield from itertools.combinations(names, r)
