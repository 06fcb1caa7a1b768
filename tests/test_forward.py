"""The forward partners: aclnnLeakyRelu / aclnnInplaceLeakyRelu and aclnnHardtanh /
aclnnInplaceHardtanh with opsnn.leaky_relu / leaky_relu_ / hardtanh / hardtanh_, through both
layers: the UT error rows (spec §9.1) with exact codes, the null and check orders (spec §5.1,
§6.1), dtype lists per SoC, special values bit for bit against independent goldens, in-place on
strided views, torch cross-checks and the forward -> backward round trip against torch autograd.
Decisions: docs/decisions-forward.md (F1-F11)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import cases
import opsnn
import opsnn.acl as acl
from cases import BF16, C64, C128, F16, F32, F64
from conftest import OpInfo, assert_out_written, expect_acl_failure, expect_py_failure

NULLPTR, INVALID, FIND_KERNEL = 161001, 161002, 561003
I8, I16, I32, I64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
U8, U16, U32, BOOL = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.bool_))
INT_DTYPES = (I8, I16, I32, I64, U8)
LAYERS = ("py", "acl")

LEAKY_FWD = OpInfo("leaky_fwd", "aclnnLeakyRelu", ("self", "negativeSlope", "out"), "leaky_relu")
LEAKY_INPLACE = OpInfo("leaky_inplace", "aclnnInplaceLeakyRelu", ("self", "negativeSlope"), "leaky_relu_")
HARDTANH_FWD = OpInfo("hardtanh_fwd", "aclnnHardtanh", ("self", "clipValueMin", "clipValueMax", "out"),
                      "hardtanh")
HARDTANH_INPLACE = OpInfo("hardtanh_inplace", "aclnnInplaceHardtanh", ("self", "clipValueMin", "clipValueMax"),
                          "hardtanh_")

# SoC -> (LeakyRelu list, Hardtanh list, LeakyRelu supported, Hardtanh supported) (spec §5.1, §6.1, F2, F7)
LEAKY_910 = (F32, F16, F64)
HARDTANH_910 = (F16, F32, I32, I64, I16, I8, U8, F64)
SOCS = {
    "Ascend910": (LEAKY_910, HARDTANH_910, True, True),
    "Ascend910B": (LEAKY_910 + (BF16,), HARDTANH_910 + (BF16,), True, True),
    "Ascend910_93": (LEAKY_910 + (BF16,), HARDTANH_910 + (BF16,), True, True),
    "Ascend950": (LEAKY_910 + (BF16,), HARDTANH_910 + (BF16,), True, True),
    "Ascend310P": (LEAKY_910, HARDTANH_910, False, True),
    "Ascend310B": (LEAKY_910, HARDTANH_910, False, False),
}
CANDIDATE_DTYPES = (F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, BOOL, C64, C128)


# ---- independent goldens --------------------------------------------------------------------------
def gold_leaky(x, slope, out_dtype=None) -> np.ndarray:
    """F1: leaky_relu(x) is leaky_relu_backward(x, x): the same DECISIONS 1-3 golden."""
    x = np.asarray(x)
    return cases.ref_leaky(x, x, cases.to_float32(slope), out_dtype)


def convert_bound(value, dtype):
    """F5: a bound in self's dtype (floats round, bf16 through float32; ints: a float truncates,
    an int wraps)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if isinstance(value, (int, np.integer)):
            span = 2 ** (8 * dtype.itemsize)
            return dtype.type((int(value) - int(info.min)) % span + int(info.min))
        return dtype.type(math.trunc(float(value)))
    with np.errstate(all="ignore"):
        v = np.array(float(value), F64)
        return (v.astype(F32) if dtype == BF16 else v).astype(dtype)[()]


def gold_hardtanh(x, lo, hi) -> np.ndarray:
    """F4: std::min(std::max(x, lo), hi) in self's dtype; NaN anywhere propagates."""
    x = np.asarray(x)
    lo_c, hi_c = convert_bound(lo, x.dtype), convert_bound(hi, x.dtype)
    if x.dtype.kind in "iu":
        r = np.where(x < lo_c, lo_c, x)
        return np.where(hi_c < r, hi_c, r).astype(x.dtype)
    l64, h64 = float(lo_c), float(hi_c)
    if math.isnan(l64) or math.isnan(h64):
        return np.full(x.shape, np.nan).astype(x.dtype)
    xf = x.astype(F64)
    r = np.where(xf < l64, l64, xf)
    return np.where(h64 < r, h64, r).astype(x.dtype)


def int_specials(dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    vals = [info.min, info.max, 0, 1, 2, 3, 5, 6, 7, 100, info.max - 1, info.min + 1]
    if dtype.kind == "i":
        vals += [-1, -2, -3, -5, -7, -100]
    return np.array(vals, dtype)


# ---- runners: both layers, any layout, out storage outside the view untouched -------------------
def run_leaky(layer, env, x, slope, *, out_dtype=None, layout="contig", out_layout="contig",
              slope_dtype="DOUBLE", fmt="ND"):
    x = np.asarray(x)
    odt = np.dtype(out_dtype or x.dtype)
    if layer == "py":
        xv, _ = cases.make_layout(x, layout)
        ov, ob = cases.out_layout(x.shape, odt, out_layout)
        before = ob.copy()
        res = opsnn.leaky_relu(xv, slope, out=ov)
        assert res is ov
        mask = cases.outside_mask(ov, ob)
        assert cases.bits(ob[mask]).tobytes() == cases.bits(before[mask]).tobytes()
        assert cases.bits(xv).tobytes() == cases.bits(x).tobytes(), "self was modified"
        return res.copy()
    xt = env.put_layout(x, layout, fmt=fmt)
    ot = env.out(x.shape, odt, out_layout, fmt=fmt)
    base_before, in_before = ot.storage(), xt.storage_bytes()
    r = env.launch(LEAKY_FWD, xt.tensor, env.scalar(slope, slope_dtype), ot.tensor)
    assert r.ok(), f"{r}: {acl.get_recent_err_msg()!r}"
    assert xt.storage_bytes() == in_before, "self was modified"
    res = ot.view()
    assert_out_written(ot, res, base_before, "out")
    return res


def run_hardtanh(layer, env, x, lo, hi, *, layout="contig", out_layout="contig", bound_dtype="DOUBLE"):
    x = np.asarray(x)
    sentinel = 77 if x.dtype.kind in "iu" else 777.0
    if layer == "py":
        xv, _ = cases.make_layout(x, layout)
        ov, ob = cases.out_layout(x.shape, x.dtype, out_layout, sentinel)
        before = ob.copy()
        res = opsnn.hardtanh(xv, lo, hi, out=ov)
        assert res is ov
        mask = cases.outside_mask(ov, ob)
        assert cases.bits(ob[mask]).tobytes() == cases.bits(before[mask]).tobytes()
        assert cases.bits(xv).tobytes() == cases.bits(x).tobytes(), "self was modified"
        return res.copy()
    xt = env.put_layout(x, layout)
    ot = env.out(x.shape, x.dtype, out_layout, sentinel)
    base_before, in_before = ot.storage(), xt.storage_bytes()
    r = env.launch(HARDTANH_FWD, xt.tensor, env.scalar(lo, bound_dtype), env.scalar(hi, bound_dtype), ot.tensor)
    assert r.ok(), f"{r}: {acl.get_recent_err_msg()!r}"
    assert xt.storage_bytes() == in_before, "self was modified"
    res = ot.view()
    assert_out_written(ot, res, base_before, "out")
    return res


def run_inplace(layer, env, op, x, scalars, *, layout="contig", scalar_dtype="DOUBLE"):
    """In place on a view laid out as asked; storage outside the view keeps its bytes."""
    x = np.asarray(x)
    if layer == "py":
        view, base = cases.make_layout(x, layout)
        before = base.copy()
        res = getattr(opsnn, op.pythonic)(view, *scalars)
        assert res is view
        mask = cases.outside_mask(view, base)
        assert cases.bits(base[mask]).tobytes() == cases.bits(before[mask]).tobytes()
        return view.copy()
    t = env.put_layout(x, layout)
    base_before = t.storage()
    r = env.launch(op, t.tensor, *(env.scalar(s, scalar_dtype) for s in scalars))
    assert r.ok(), f"{r}: {acl.get_recent_err_msg()!r}"
    storage = t.storage()
    view = np.lib.stride_tricks.as_strided(storage.reshape(-1)[t.offset:], shape=t.view_shape,
                                           strides=tuple(s * t.dtype.itemsize for s in t.strides))
    outside = cases.outside_mask(view, storage)
    assert cases.bits(storage[outside]).tobytes() == cases.bits(base_before[outside]).tobytes()
    return t.view()


# ==== LeakyRelu =====================================================================================
SLOPES = (0.01, 0.0, -0.5, 2.0, -0.0, 0.1, 1e5, float("nan"), float("inf"), -3.0e38)


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dtype", (F32, F16, BF16, F64), ids=str)
def test_leaky_dtypes_special_values(layer, env, dtype):
    x = cases.self_specials(dtype)
    for slope in SLOPES:
        cases.assert_bits_equal(run_leaky(layer, env, x, slope), gold_leaky(x, slope),
                                what=f"{dtype} slope {slope}")


def test_leaky_special_value_table():
    """torch_semantics §3 table (float32): +0.0 with a negative slope gives -0.0, -inf with slope 0
    gives NaN, NaN stays NaN."""
    x = np.array([-2, -0.0, 0.0, 3, np.nan, np.inf, -np.inf], F32)
    got = {s: opsnn.leaky_relu(x, s) for s in (0.01, 0.0, -0.5)}
    f = np.float32
    cases.assert_bits_equal(got[0.01], np.array([f(-2) * f(0.01), -0.0, 0.0, 3, np.nan, np.inf, -np.inf], F32))
    cases.assert_bits_equal(got[0.0], np.array([-0.0, -0.0, 0.0, 3, np.nan, np.inf, np.nan], F32))
    cases.assert_bits_equal(got[-0.5], np.array([1.0, 0.0, -0.0, 3, np.nan, np.inf, np.inf], F32))
    assert opsnn.leaky_relu(np.float32(-3.0)) == np.float32(-3.0) * np.float32(0.01)  # default 0.01


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("xdt,odt", [(F32, F16), (F32, BF16), (F16, F32), (BF16, F16), (BF16, F64),
                                     (F64, F32), (F64, BF16), (F32, C64), (F64, C128), (F16, C128)],
                         ids=lambda d: str(d))
def test_leaky_out_dtype_cast(layer, env, xdt, odt):
    """F1: the result is rounded to self's dtype, then cast to out's (CanCast allows float and complex)."""
    x = cases.self_specials(xdt)
    for slope in (0.1, -0.5):
        cases.assert_bits_equal(run_leaky(layer, env, x, slope, out_dtype=odt), gold_leaky(x, slope, odt))


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("layout", ("transposed", "sliced", "offset"))
@pytest.mark.parametrize("out_layout", ("contig", "transposed", "sliced"))
def test_leaky_strided(layer, env, layout, out_layout):
    x = cases.filled((4, 5), F16, 11, cases.self_specials(F16))
    cases.assert_bits_equal(run_leaky(layer, env, x, -0.25, layout=layout, out_layout=out_layout),
                            gold_leaky(x, -0.25))


@pytest.mark.parametrize("slope_dtype", ("FLOAT", "FLOAT16", "DOUBLE", "BF16", "INT32", "INT64", "INT8",
                                         "UINT8", "INT16", "BOOL", "UINT32", "UINT64", "COMPLEX64"))
def test_leaky_slope_any_dtype(acl_env, slope_dtype, caplog):
    """F2: negativeSlope's dtype is never checked; ToFloat applies (complex -> 0 with a warning)."""
    value = {"BOOL": True, "COMPLEX64": complex(0.5, 1)}.get(slope_dtype, 2)
    x = cases.self_specials(F32)
    expected = gold_leaky(x, 0.0 if slope_dtype == "COMPLEX64" else value)
    with caplog.at_level("WARNING", logger="opsnn"):
        cases.assert_bits_equal(run_leaky("acl", acl_env, x, value, slope_dtype=slope_dtype), expected)
    assert ("cannot be converted" in caplog.text) == (slope_dtype == "COMPLEX64")


def test_leaky_f64_slope():
    """F1: DOUBLE self uses the float32-rounded slope (torch: the double slope)."""
    x = np.array([-1.0, -3.0, 2.0], F64)
    got = opsnn.leaky_relu(x, 0.1)
    assert got[0] == -float(np.float32(0.1)) and got[0] != -0.1
    assert got[1] == -3.0 * float(np.float32(0.1)) and got[2] == 2.0


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0), (4,), (2, 2), (2, 2, 2), (1, 2, 1, 2, 1, 2, 1, 2)], ids=str)
def test_leaky_shapes(layer, env, shape):
    """0-d has one element; empty -> success with workspace 0 and out untouched (spec §5.1 step 6)."""
    x = cases.filled(shape, F32, 3, cases.self_specials(F32))
    cases.assert_bits_equal(run_leaky(layer, env, x, 0.2), gold_leaky(x, 0.2))


@pytest.mark.parametrize("fmt", cases.CARRIED_FORMATS)
def test_leaky_formats_carried(acl_env, fmt):
    x = cases.filled((2, 2, 2, 2, 2), F16, 4)
    cases.assert_bits_equal(run_leaky("acl", acl_env, x, 0.01, fmt=fmt), gold_leaky(x, 0.01))


# ---- LeakyRelu error rows (spec §9.1: 5 x 161001, UINT32 and 9-D in both APIs, the rest succeed) --
def leaky_phase1(env, *, x=((2, 3), F32), out=None, slope=0.1, sdt="FLOAT", null=(), inplace=False):
    xs, xdt = x
    xt = env.put(cases.filled(xs, xdt, 1))
    st = env.scalar(slope, sdt)
    if inplace:
        args = {"self": xt.tensor, "negativeSlope": st}
        for n in null:
            args[n] = None
        before = xt.storage_bytes()
        ret = LEAKY_INPLACE.phase1(args["self"], args["negativeSlope"])[2]
        assert xt.storage_bytes() == before
        return ret
    os_, odt = out or (xs, xdt)
    ot = env.out(os_, odt)
    args = {"self": xt.tensor, "negativeSlope": st, "out": ot.tensor}
    for n in null:
        args[n] = None
    before = (xt.storage_bytes(), ot.storage_bytes())
    ret = LEAKY_FWD.phase1(args["self"], args["negativeSlope"], args["out"])[2]
    assert (xt.storage_bytes(), ot.storage_bytes()) == before, "a failing phase 1 wrote memory"
    return ret


@pytest.mark.parametrize("null", list(cases.subsets(LEAKY_FWD.null_order)), ids="-".join)
def test_leaky_null_order(acl_env, null):
    first = next(n for n in LEAKY_FWD.null_order if n in null)
    expect_acl_failure(leaky_phase1(acl_env, null=null), NULLPTR, names=[first])


@pytest.mark.parametrize("null", list(cases.subsets(LEAKY_INPLACE.null_order)), ids="-".join)
def test_inplace_leaky_null_order(acl_env, null):
    first = next(n for n in LEAKY_INPLACE.null_order if n in null)
    expect_acl_failure(leaky_phase1(acl_env, null=null, inplace=True), NULLPTR, names=[first])


@pytest.mark.parametrize("inplace", (False, True), ids=("out_of_place", "inplace"))
def test_leaky_error_rows(acl_env, inplace):
    # UT case_error_dtype / inplace_case_error_dtype: UINT32 self, INT scalar
    expect_acl_failure(leaky_phase1(acl_env, x=((2, 2, 2), U32), slope=1, sdt="INT32", inplace=inplace),
                       INVALID, names=["self"], dtypes=["UINT32"])
    # UT case_error_shape: 9-D
    expect_acl_failure(leaky_phase1(acl_env, x=((2,) * 9, F32), inplace=inplace), INVALID, names=["self"])
    # BF16 on a 910-list SoC
    with opsnn.use_soc("Ascend910"):
        expect_acl_failure(leaky_phase1(acl_env, x=((2, 2), BF16), inplace=inplace), INVALID,
                           names=["self"], dtypes=["BF16"])


def test_leaky_out_rows(acl_env):
    # CanCast(self, out): integer / bool out refused
    for odt in (I32, BOOL, U8):
        expect_acl_failure(leaky_phase1(acl_env, out=((2, 3), odt)), INVALID, names=["out"],
                           dtypes=[cases.ACL_NAME[odt]])
    # out shape == self shape (no broadcast into out)
    expect_acl_failure(leaky_phase1(acl_env, out=((3, 2), F32)), INVALID, names=["out"], shapes=[(2, 3), (3, 2)])
    expect_acl_failure(leaky_phase1(acl_env, x=((1, 3), F32), out=((2, 3), F32)), INVALID, names=["out"])
    # F3: CanCast runs before the shape checks (ops-nn CheckDtypeValid, then CheckShape)
    expect_acl_failure(leaky_phase1(acl_env, x=((2,) * 9, F32), out=((2, 3), I32)), INVALID,
                       names=["out"], dtypes=["INT32"], words=["cast"])
    # the self dtype list comes before CanCast
    expect_acl_failure(leaky_phase1(acl_env, x=((2, 3), I32), out=((2, 3), I32)), INVALID,
                       names=["self"], dtypes=["INT32"])


def test_leaky_py_error_rows():
    x = cases.filled((2, 3), F32, 2)
    expect_py_failure(opsnn.leaky_relu, None, status=NULLPTR, names=["self"])
    expect_py_failure(opsnn.leaky_relu, x, None, status=NULLPTR, names=["negativeSlope"], untouched=[x])
    expect_py_failure(opsnn.leaky_relu_, None, status=NULLPTR, names=["self"])
    expect_py_failure(opsnn.leaky_relu, np.zeros((2, 3), np.int64), status=INVALID, dtypes=["INT64"])
    expect_py_failure(opsnn.leaky_relu, np.zeros((2,) * 9, F32), status=INVALID, names=["self"])
    out = np.zeros((2, 3), I32)
    expect_py_failure(opsnn.leaky_relu, x, out=out, status=INVALID, names=["out"], untouched=[x, out])
    out = np.zeros((3, 2), F32)
    expect_py_failure(opsnn.leaky_relu, x, out=out, status=INVALID, names=["out"], untouched=[x, out])
    expect_py_failure(opsnn.leaky_relu_, [1.0, -2.0], status=INVALID, names=["self"])
    ro = np.frombuffer(np.float32([-1.0, 2.0, -3.0]).tobytes(), F32)
    expect_py_failure(opsnn.leaky_relu_, ro, status=INVALID, words=["self is a read-only array"], untouched=[ro])
    # a broadcast view is read-only and its elements alias: both opsnn's own refusals, after
    # CANN's checks; the alias one, in phase 1, speaks
    ro = np.broadcast_to(np.float32(-1.0), (3,))
    expect_py_failure(opsnn.leaky_relu_, ro, status=INVALID, words=["two of its elements share memory"])
    with opsnn.use_soc("Ascend910"):
        expect_py_failure(opsnn.leaky_relu_, x.astype(BF16), status=INVALID, dtypes=["BF16"])


# ==== Hardtanh ======================================================================================
FLOAT_BOUNDS = ((-1.0, 1.0), (0.0, 6.0), (-0.0, 6.0), (-0.0, 0.0), (-2.5, -2.5), (0.1, 0.7),
                (-np.inf, np.inf), (-np.inf, -1.0), (np.nan, 1.0), (-1.0, np.nan), (-1e5, 1e5), (0.3, 3e38))


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dtype", (F32, F16, BF16, F64), ids=str)
def test_hardtanh_dtypes_special_values(layer, env, dtype):
    for lo, hi in FLOAT_BOUNDS:
        x = cases.self_specials(dtype, bounds=(lo, hi))
        cases.assert_bits_equal(run_hardtanh(layer, env, x, lo, hi), gold_hardtanh(x, lo, hi),
                                what=f"{dtype} [{lo}, {hi}]")


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_hardtanh_integer_dtypes(layer, env, dtype):
    """Integer self computes natively; float bounds truncate toward zero (F4, F5)."""
    x = int_specials(dtype)
    bounds = [(0, 5), (1, 100), (2.9, 6.5), (0, 0)]
    if dtype.kind == "i":
        bounds += [(-1, 1), (-1.5, 1.5), (-1.9, 2.9), (-100, -3)]
    for lo, hi in bounds:
        for bound_dtype in ("DOUBLE", cases.ACL_NAME[dtype]) if isinstance(lo, int) else ("DOUBLE",):
            got = run_hardtanh(layer, env, x, lo, hi, bound_dtype=bound_dtype)
            cases.assert_bits_equal(got, gold_hardtanh(x, lo, hi), what=f"{dtype} [{lo}, {hi}]")


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("layout", ("transposed", "sliced", "offset"))
@pytest.mark.parametrize("out_layout", ("contig", "transposed"))
@pytest.mark.parametrize("dtype", (F32, I64), ids=str)
def test_hardtanh_strided(layer, env, layout, out_layout, dtype):
    x = cases.filled((4, 5), dtype, 12)
    cases.assert_bits_equal(run_hardtanh(layer, env, x, -2, 2, layout=layout, out_layout=out_layout),
                            gold_hardtanh(x, -2, 2))


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0), (3,), (1, 2, 1, 2, 1, 2, 1, 2)], ids=str)
def test_hardtanh_shapes(layer, env, shape):
    """0-d accepted although the doc says 1-8 dims (F7); empty -> success, workspace 0."""
    x = cases.filled(shape, F32, 5, cases.self_specials(F32))
    cases.assert_bits_equal(run_hardtanh(layer, env, x, -1.0, 1.0), gold_hardtanh(x, -1.0, 1.0))


# ---- Hardtanh error rows (spec §9.1: 4 x 161001, 9 x 161002, [2, 0] INT64 succeeds) ---------------
def hardtanh_phase1(env, *, x=((2, 3), F32), out=None, lo=-1, hi=2, bdt="INT64", null=(), inplace=False,
                    lo_dtype=None, hi_dtype=None):
    xs, xdt = x
    xt = env.put(cases.filled(xs, xdt, 2) if np.dtype(xdt).kind != "c" else np.zeros(xs, xdt))
    lo_s = env.scalar(lo, lo_dtype or bdt)
    hi_s = env.scalar(hi, hi_dtype or bdt)
    if inplace:
        args = {"self": xt.tensor, "clipValueMin": lo_s, "clipValueMax": hi_s}
        for n in null:
            args[n] = None
        before = xt.storage_bytes()
        ret = HARDTANH_INPLACE.phase1(args["self"], args["clipValueMin"], args["clipValueMax"])[2]
        assert xt.storage_bytes() == before
        return ret
    os_, odt = out or (xs, xdt)
    ot = env.out(os_, odt, sentinel=7)
    args = {"self": xt.tensor, "clipValueMin": lo_s, "clipValueMax": hi_s, "out": ot.tensor}
    for n in null:
        args[n] = None
    before = (xt.storage_bytes(), ot.storage_bytes())
    ret = HARDTANH_FWD.phase1(args["self"], args["clipValueMin"], args["clipValueMax"], args["out"])[2]
    assert (xt.storage_bytes(), ot.storage_bytes()) == before, "a failing phase 1 wrote memory"
    return ret


def _null_words(null_order, null):
    return next(n for n in null_order if n in null)


@pytest.mark.parametrize("null", list(cases.subsets(HARDTANH_FWD.null_order)), ids="-".join)
def test_hardtanh_null_order(acl_env, null):
    first = _null_words(HARDTANH_FWD.null_order, null)
    expect_acl_failure(hardtanh_phase1(acl_env, x=((2, 3, 4, 5), I64), null=null), NULLPTR, words=[first])


@pytest.mark.parametrize("null", list(cases.subsets(HARDTANH_INPLACE.null_order)), ids="-".join)
def test_inplace_hardtanh_null_order(acl_env, null):
    first = _null_words(HARDTANH_INPLACE.null_order, null)
    expect_acl_failure(hardtanh_phase1(acl_env, null=null, inplace=True), NULLPTR, words=[first])


def test_hardtanh_error_rows(acl_env):
    """The ops-math UT rows (spec §9.1), with the 910B list where the UT names ascend910B2."""
    shape = (2, 3, 4, 5)
    for cdt in (C64, C128):  # case_ACL_COMPLEX64 / 128
        expect_acl_failure(hardtanh_phase1(acl_env, x=(shape, cdt)), INVALID, names=["self"],
                           dtypes=[cases.ACL_NAME[cdt]])
    expect_acl_failure(hardtanh_phase1(acl_env, x=((2, 3), C128), lo=-1.5, hi=2.5, bdt="FLOAT", inplace=True),
                       INVALID, names=["self"], dtypes=["COMPLEX128"])  # case_inplace_complex128
    assert hardtanh_phase1(acl_env, x=((2, 0), I64)) == 0  # case_empty
    # min > max: fp16 self with int bounds, int32 self, fp32 self with float bounds
    expect_acl_failure(hardtanh_phase1(acl_env, x=(shape, F16), lo=3, hi=2), INVALID,
                       words=["clipValueMin", "3", "2"])
    expect_acl_failure(hardtanh_phase1(acl_env, x=(shape, I32), lo=3, hi=2), INVALID, words=["clipValueMin"])
    expect_acl_failure(hardtanh_phase1(acl_env, x=(shape, F32), lo=3.5, hi=2.5, bdt="FLOAT"), INVALID,
                       words=["clipValueMin", "3.5", "2.5"])
    # case_unsupport_dtype: INT64 self, INT32 out
    expect_acl_failure(hardtanh_phase1(acl_env, x=(shape, I64), out=(shape, I32)), INVALID,
                       names=["out"], dtypes=["INT32", "INT64"])
    # case_unsupport_shape: (5, 4, 3, 2) self, (2, 3, 4, 5) out
    expect_acl_failure(hardtanh_phase1(acl_env, x=((5, 4, 3, 2), I64), out=(shape, I64)), INVALID,
                       names=["out"], shapes=[(5, 4, 3, 2), shape])
    # case_9dim
    expect_acl_failure(hardtanh_phase1(acl_env, x=((2,) * 9, I64)), INVALID, names=["self"])


@pytest.mark.parametrize("which", ("min", "max"))
@pytest.mark.parametrize("bad", ("BOOL", "UINT32", "UINT16", "UINT64", "COMPLEX64"))
def test_hardtanh_scalar_dtype_refused(acl_env, which, bad):
    """F7: min and max are checked against self's list, so BOOL is refused (the doc lists it)."""
    kw = {"lo_dtype": bad} if which == "min" else {"hi_dtype": bad}
    value = {"BOOL": True, "COMPLEX64": 1.0}.get(bad, 1)
    kw.update({"lo": value if which == "min" else -1, "hi": value if which == "max" else 2})
    name = "clipValueMin" if which == "min" else "clipValueMax"
    expect_acl_failure(hardtanh_phase1(acl_env, **kw), INVALID, words=[name], dtypes=[bad])


def test_hardtanh_check_order(acl_env):
    """F7: self list, min list, max list, out == self dtype, rank, out shape, min <= max."""
    expect_acl_failure(hardtanh_phase1(acl_env, x=((2, 3), U32), out=((2, 3), F32), lo_dtype="BOOL", lo=True),
                       INVALID, names=["self"], dtypes=["UINT32"])
    expect_acl_failure(hardtanh_phase1(acl_env, lo=True, lo_dtype="BOOL", hi=True, hi_dtype="UINT32",
                                       out=((2, 3), F16)), INVALID, words=["clipValueMin"], dtypes=["BOOL"])
    expect_acl_failure(hardtanh_phase1(acl_env, hi=1, hi_dtype="UINT32", out=((2, 3), F16)),
                       INVALID, words=["clipValueMax"], dtypes=["UINT32"])
    expect_acl_failure(hardtanh_phase1(acl_env, x=((2,) * 9, F32), out=((2, 3), F16)), INVALID,
                       names=["out"], dtypes=["FLOAT16"])
    expect_acl_failure(hardtanh_phase1(acl_env, x=((2,) * 9, F32), lo=3, hi=2), INVALID, names=["self"])
    expect_acl_failure(hardtanh_phase1(acl_env, out=((3, 2), F32), lo=3, hi=2), INVALID, names=["out"])
    with opsnn.use_soc("Ascend310B"):  # parameter checks come before the missing kernel (561003)
        expect_acl_failure(hardtanh_phase1(acl_env, lo=3, hi=2), INVALID, words=["clipValueMin"])
        expect_acl_failure(hardtanh_phase1(acl_env), FIND_KERNEL, words=["Ascend310B"])
        assert hardtanh_phase1(acl_env, x=((0, 3), F32)) == 0  # the empty fast path comes first


def test_hardtanh_py_error_rows():
    x = cases.filled((2, 3), F32, 2)
    expect_py_failure(opsnn.hardtanh, None, status=NULLPTR, names=["self"])
    expect_py_failure(opsnn.hardtanh, x, None, status=NULLPTR, words=["clipValueMin"], untouched=[x])
    expect_py_failure(opsnn.hardtanh, x, -1.0, None, status=NULLPTR, words=["clipValueMax"], untouched=[x])
    expect_py_failure(opsnn.hardtanh_, x, None, 1.0, status=NULLPTR, words=["clipValueMin"], untouched=[x])
    expect_py_failure(opsnn.hardtanh, x, 1.0, -1.0, status=INVALID, words=["clipValueMin"], untouched=[x])
    expect_py_failure(opsnn.hardtanh_, x, 1.0, -1.0, status=INVALID, words=["clipValueMin"], untouched=[x])
    expect_py_failure(opsnn.hardtanh, x, False, 1.0, status=INVALID, words=["clipValueMin"], dtypes=["BOOL"])
    expect_py_failure(opsnn.hardtanh, x.astype(C64), status=INVALID, dtypes=["COMPLEX64"])
    expect_py_failure(opsnn.hardtanh, np.zeros(3, BOOL), status=INVALID, dtypes=["BOOL"])
    out = np.zeros((2, 3), F64)
    expect_py_failure(opsnn.hardtanh, x, out=out, status=INVALID, names=["out"], untouched=[x, out])
    out = np.zeros((3, 2), F32)
    expect_py_failure(opsnn.hardtanh, x, out=out, status=INVALID, names=["out"], untouched=[x, out])
    u = np.arange(4, dtype=U8)  # F5: the default -1.0 has no uint8 value
    expect_py_failure(opsnn.hardtanh, u, status=INVALID, words=["clipValueMin", "uint8"], untouched=[u])
    expect_py_failure(opsnn.hardtanh_, u, status=INVALID, words=["clipValueMin"], untouched=[u])


# ==== dtype lists x SoC profiles (F2, F7) ==========================================================
@pytest.mark.parametrize("soc", list(SOCS))
def test_soc_dtype_matrix(soc):
    leaky_list, hardtanh_list, leaky_ok, hardtanh_ok = SOCS[soc]
    with opsnn.use_soc(soc):
        for dtype in CANDIDATE_DTYPES:
            x = np.zeros((2,), dtype)
            # LeakyRelu: dtype list first, then (supported dtypes only) the missing kernel
            if dtype not in leaky_list:
                for fn in (opsnn.leaky_relu, opsnn.leaky_relu_):
                    expect_py_failure(fn, x.copy(), status=INVALID, names=["self"], dtypes=[cases.ACL_NAME[dtype]])
            elif not leaky_ok:
                for fn in (opsnn.leaky_relu, opsnn.leaky_relu_):
                    expect_py_failure(fn, x.copy(), status=FIND_KERNEL, words=[soc])
                assert opsnn.leaky_relu(np.zeros((0,), dtype)).shape == (0,)  # empty: success
            else:
                assert opsnn.leaky_relu(np.array([-1.0, 2.0]).astype(dtype), 0.5).dtype == dtype
            # Hardtanh, with bounds of the same dtype where it has a scalar form
            lo, hi = (0, 1) if dtype.kind in "iub" else (-1.0, 1.0)
            if dtype not in hardtanh_list:
                expect_py_failure(opsnn.hardtanh, x.copy(), lo, hi, status=INVALID, names=["self"],
                                  dtypes=[cases.ACL_NAME[dtype]])
            elif not hardtanh_ok:
                expect_py_failure(opsnn.hardtanh, x.copy(), lo, hi, status=FIND_KERNEL, words=[soc])
            else:
                b = np.array([lo, hi]).astype(dtype)
                x3 = np.array([0 if dtype.kind == "u" else -3, 0, 3]).astype(dtype)
                cases.assert_bits_equal(opsnn.hardtanh(x3, b[0], b[1]), np.array([lo, 0, hi]).astype(dtype))
                cases.assert_bits_equal(opsnn.hardtanh_(x3, b[0], b[1]), np.array([lo, 0, hi]).astype(dtype))
            # bounds are checked against the same list (BF16 only on 910B-list SoCs)
            if F32 in hardtanh_list and dtype.kind not in "c" and dtype != BOOL and dtype != F32:
                bound = np.array(0).astype(dtype)[()]
                if dtype in hardtanh_list and hardtanh_ok:
                    assert opsnn.hardtanh(np.ones(2, F32), bound, 2.0).tolist() == [1.0, 1.0]
                elif dtype not in hardtanh_list:
                    expect_py_failure(opsnn.hardtanh, np.ones(2, F32), bound, 2.0, status=INVALID,
                                      words=["clipValueMin"], dtypes=[cases.ACL_NAME[dtype]])


# ==== in place on strided views (F8) ===============================================================
@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("layout", ("contig", "transposed", "sliced", "offset"))
def test_inplace_strided_leaky(layer, env, layout):
    x = cases.filled((3, 5), BF16, 21, cases.self_specials(BF16))
    got = run_inplace(layer, env, LEAKY_INPLACE, x, (-0.125,), layout=layout)
    cases.assert_bits_equal(got, gold_leaky(x, -0.125))


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("layout", ("contig", "transposed", "sliced", "offset"))
@pytest.mark.parametrize("dtype", (F16, I8), ids=str)
def test_inplace_strided_hardtanh(layer, env, layout, dtype):
    x = cases.filled((3, 5), dtype, 22)
    got = run_inplace(layer, env, HARDTANH_INPLACE, x, (-2, 2), layout=layout, scalar_dtype="INT64")
    cases.assert_bits_equal(got, gold_hardtanh(x, -2, 2))


def test_inplace_ut_not_contiguous(acl_env):
    """UT inplace_case_not_contiguous: view (3, 5, 6) strides (30, 1, 5) of a (3, 6, 5) storage."""
    base = cases.filled((3, 6, 5), F32, 8, cases.self_specials(F32))
    view = np.swapaxes(base, 1, 2)
    t = acl_env.put(view, base)
    r = acl_env.launch(LEAKY_INPLACE, t.tensor, acl_env.scalar(0.1, "FLOAT"))
    assert r.ok() and r.workspace_size > 0, str(r)
    cases.assert_bits_equal(t.view(), gold_leaky(view, 0.1))
    cases.assert_bits_equal(t.storage(), np.swapaxes(gold_leaky(view, 0.1), 1, 2))


def test_inplace_stride0_self(acl_env):
    """F8, F9: a broadcast (stride 0) selfRef is an out whose elements alias: refused, untouched."""
    base = np.array([-4.0, 3.0], F32)
    t = acl_env.put(np.lib.stride_tricks.as_strided(base, (3, 2), (0, 4)), base)
    ret = HARDTANH_INPLACE.phase1(t.tensor, acl_env.scalar(-1.0, "FLOAT"), acl_env.scalar(1.0, "FLOAT"))[2]
    expect_acl_failure(ret, INVALID, words=["selfRef", "share memory"])
    assert t.storage().tolist() == [-4.0, 3.0]


def test_inplace_on_dlpack_tensor():
    torch = pytest.importorskip("torch")
    t = torch.tensor([-2.0, 0.5, 3.0])
    assert opsnn.hardtanh_(t) is t and t.tolist() == [-1.0, 0.5, 1.0]
    assert opsnn.leaky_relu_(t, 0.5) is t and t.tolist() == [-0.5, 0.5, 1.0]


def test_executor_is_per_api(acl_env):
    """F8: executors are single use and belong to the API that planned them (DECISION 16); the
    refused launch releases it, as CANN's launch, which would run it, does."""
    x = acl_env.put(np.array([-1.0, 2.0], F32))
    s = acl_env.scalar(0.5, "FLOAT")
    ws, ex, ret = LEAKY_INPLACE.phase1(x.tensor, s)
    assert ret == 0
    expect_acl_failure(LEAKY_FWD.phase2(None, ws, ex, acl_env.stream), INVALID, words=["InplaceLeakyRelu"])
    expect_acl_failure(LEAKY_INPLACE.phase2(None, ws, ex, acl_env.stream), INVALID, words=["already destroyed"])
    ws, ex, ret = LEAKY_INPLACE.phase1(x.tensor, s)
    assert ret == 0 and LEAKY_INPLACE.phase2(None, ws, ex, acl_env.stream) == 0
    assert acl.rt.synchronize_stream(acl_env.stream) == 0
    assert x.view().tolist() == [-0.5, 2.0]
    expect_acl_failure(LEAKY_INPLACE.phase2(None, ws, ex, acl_env.stream), INVALID, words=["already run"])
    o = acl_env.out((2,), F32)
    ws, ex, ret = HARDTANH_FWD.phase1(x.tensor, acl_env.scalar(0.0, "FLOAT"), acl_env.scalar(1.0, "FLOAT"), o.tensor)
    assert ret == 0
    expect_acl_failure(HARDTANH_INPLACE.phase2(None, ws, ex, acl_env.stream), INVALID, words=["aclnnHardtanh"])


# ==== out overlapping self (F9) ====================================================================
def test_partial_overlap_refused(acl_env):
    a = np.arange(-5, 5, dtype=F32)
    before = a.copy()
    expect_py_failure(opsnn.leaky_relu, a[:-1], out=a[1:], status=INVALID, names=["out", "self"],
                      words=["overlap"], untouched=[a])
    expect_py_failure(opsnn.hardtanh, a[1:], out=a[:-1], status=INVALID, words=["overlap"], untouched=[a])
    m = np.arange(16, dtype=F32).reshape(4, 4)
    expect_py_failure(opsnn.hardtanh, m, out=m.T, status=INVALID, words=["overlap"], untouched=[m])
    assert cases.bits(a).tobytes() == cases.bits(before).tobytes()
    # aclnn layer: two tensors over one allocation, out shifted by one element
    base = np.arange(-4, 5, dtype=F32)
    x = acl_env.put(base[:-1], base)
    addr = x.addr
    out = acl.create_tensor([8], acl.ACL_FLOAT, [1], 1, acl.ACL_FORMAT_ND, [9], addr)
    ret = acl.get_recent_err_msg() if out is None else None
    assert out is not None, ret
    try:
        _, _, ret = LEAKY_FWD.phase1(x.tensor, acl_env.scalar(0.5, "FLOAT"), out)
        expect_acl_failure(ret, INVALID, words=["overlap"])
        same = acl.create_tensor([8], acl.ACL_FLOAT, [1], 0, acl.ACL_FORMAT_ND, [9], addr)
        ws, ex, ret = LEAKY_FWD.phase1(x.tensor, acl_env.scalar(0.5, "FLOAT"), same)  # exact alias: in place
        assert ret == 0 and LEAKY_FWD.phase2(None, ws, ex, acl_env.stream) == 0
        assert acl.rt.synchronize_stream(acl_env.stream) == 0
        cases.assert_bits_equal(x.storage(), np.concatenate([gold_leaky(base[:-1], 0.5), base[-1:]]))
        acl.destroy_tensor(same)
    finally:
        acl.destroy_tensor(out)


def test_interleaved_views_accepted():
    a = np.arange(-6, 6, dtype=F32)
    x = a[::2].copy()
    opsnn.leaky_relu(a[::2], 0.5, out=a[1::2])
    cases.assert_bits_equal(a[1::2], gold_leaky(x, 0.5))
    r = np.arange(-6, 6, dtype=F32)
    assert opsnn.hardtanh(r, -2.0, 2.0, out=r) is r  # out is self: in place
    cases.assert_bits_equal(r, gold_hardtanh(np.arange(-6, 6, dtype=F32), -2.0, 2.0))


# ==== torch cross-checks (where torch and the contract agree) =======================================
def _torch():
    return pytest.importorskip("torch")


def to_torch(torch, a):
    a = np.ascontiguousarray(a)
    if a.dtype == BF16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def from_torch(torch, t):
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().view(BF16)
    return t.detach().numpy()


@pytest.mark.parametrize("dtype", (F32, F16, BF16), ids=str)
def test_leaky_matches_torch(dtype):
    torch = _torch()
    x = cases.self_specials(dtype)
    x = np.concatenate([x, cases.filled((997,), dtype, 31)])
    for slope in (0.01, 0.0, -0.5, 2.0, 0.1, 1e5):
        want = from_torch(torch, torch.ops.aten.leaky_relu(to_torch(torch, x), slope))
        cases.assert_bits_equal(opsnn.leaky_relu(x, slope), want, what=f"{dtype} slope {slope}")
    x64 = x.astype(F64)  # float64: equal to torch only for a float32-exact slope (F1)
    for slope in (0.25, -0.5, 0.0):
        want = torch.ops.aten.leaky_relu(torch.from_numpy(x64), slope).numpy()
        cases.assert_bits_equal(opsnn.leaky_relu(x64, slope), want)


@pytest.mark.parametrize("dtype", (F32, F16, BF16, F64) + INT_DTYPES, ids=str)
def test_hardtanh_matches_torch(dtype):
    torch = _torch()
    if dtype.kind in "iu":
        x = np.concatenate([int_specials(dtype), cases.filled((50,), dtype, 7)])
        bounds = [(0, 5), (2.9, 6.5)] + ([(-1, 1), (-1.5, 1.5), (-100, 3)] if dtype.kind == "i" else [])
    else:
        x = np.concatenate([cases.self_specials(dtype, (-1.0, 1.0, 0.1, 0.7)), cases.filled((97,), dtype, 7)])
        # torch refuses a finite bound beyond fp16's range (opsnn rounds it to +-inf, F5)
        bounds = [b for b in FLOAT_BOUNDS if dtype != F16 or not any(7e4 < abs(v) < np.inf for v in b)]
    xt = to_torch(torch, x)
    for lo, hi in bounds:
        want = from_torch(torch, torch.ops.aten.hardtanh(xt, lo, hi))
        cases.assert_bits_equal(opsnn.hardtanh(x, lo, hi), want, what=f"{dtype} [{lo}, {hi}]")
        if dtype.kind == "f" and not (math.isnan(lo) or math.isnan(hi)):
            cl = torch.clamp(xt, convert_bound(lo, dtype).item(), convert_bound(hi, dtype).item())
            cases.assert_bits_equal(opsnn.hardtanh(x, lo, hi), from_torch(torch, cl))


# ==== forward -> backward round trip against torch autograd (F11) ==================================
@pytest.mark.parametrize("dtype", (F32, F16, BF16), ids=str)
@pytest.mark.parametrize("slope", (0.01, 0.0, -0.5, 2.0))
def test_round_trip_leaky(dtype, slope):
    torch = _torch()
    x = cases.filled((6, 7), dtype, 41, cases.self_specials(dtype)[:12])
    x[0, :3] = np.array([0.0, -0.0, 1.0]).astype(dtype)
    g = cases.filled((6, 7), dtype, 42)
    xt = to_torch(torch, x).requires_grad_(True)
    yt = torch.nn.functional.leaky_relu(xt, slope)
    yt.backward(to_torch(torch, g))
    y = opsnn.leaky_relu(x, slope)
    cases.assert_bits_equal(y, from_torch(torch, yt.detach()))
    dx = opsnn.leaky_relu_backward(g, x, slope, False)
    cases.assert_bits_equal(dx, from_torch(torch, xt.grad))
    # in place: the backward sees the result (self_is_result=True)
    xi = to_torch(torch, x).requires_grad_(True)
    r = xi.clone()
    if slope >= 0:
        torch.nn.functional.leaky_relu_(r, slope)
        r.backward(to_torch(torch, g))
        res = opsnn.leaky_relu_(x.copy(), slope)
        cases.assert_bits_equal(res, from_torch(torch, r.detach()))
        cases.assert_bits_equal(opsnn.leaky_relu_backward(g, res, slope, True), from_torch(torch, xi.grad))
    else:
        torch.nn.functional.leaky_relu_(r, slope)
        with pytest.raises(RuntimeError, match="negative slope"):
            r.backward(to_torch(torch, g))
        res = opsnn.leaky_relu_(x.copy(), slope)
        expect_py_failure(opsnn.leaky_relu_backward, g, res, slope, True, status=INVALID, words=["slope"])


def test_round_trip_with_default_slopes():
    """F10: leaky_relu and leaky_relu_backward share the default slope (0.01, torch's), so the
    backward of a default forward call is torch autograd's gradient."""
    torch = _torch()
    x = cases.filled((5, 4), F32, 43, cases.self_specials(F32)[:8])
    g = cases.filled((5, 4), F32, 44)
    xt = to_torch(torch, x).requires_grad_(True)
    torch.nn.functional.leaky_relu(xt).backward(to_torch(torch, g))
    cases.assert_bits_equal(opsnn.leaky_relu(x), from_torch(torch, torch.nn.functional.leaky_relu(to_torch(torch, x))))
    cases.assert_bits_equal(opsnn.leaky_relu_backward(g, x), from_torch(torch, xt.grad))


def test_set_soc_none_restores_the_default(monkeypatch):
    """set_soc(name) selects the process SoC; set_soc(None) goes back to $OPSNN_SOC / the default;
    an unknown name raises ValueError naming the known ones."""
    from opsnn._core import platform

    monkeypatch.delenv(platform.ENV_VAR, raising=False)
    try:
        assert opsnn.set_soc("Ascend310B").name == "Ascend310B"
        expect_py_failure(opsnn.leaky_relu_backward, np.ones(2, F32), np.ones(2, F32), status=561003)
        assert opsnn.set_soc(None).name == platform.DEFAULT_SOC
        cases.assert_bits_equal(opsnn.leaky_relu_backward(np.ones(2, F32), np.ones(2, F32)), np.ones(2, F32))
        with pytest.raises(ValueError, match="Ascend910B"):
            opsnn.set_soc("Ascend999")
        assert platform.current().name == platform.DEFAULT_SOC
    finally:
        opsnn.set_soc(None)


@pytest.mark.parametrize("dtype", (F32, F16, BF16), ids=str)
@pytest.mark.parametrize("bounds", ((-1.0, 1.0), (0.0, 6.0), (-0.5, 0.25), (2.0, 2.0)), ids=str)
def test_round_trip_hardtanh(dtype, bounds):
    torch = _torch()
    lo, hi = bounds
    x = cases.filled((5, 9), dtype, 43)
    x[0, :4] = np.array([lo, hi, 0.0, -0.0]).astype(dtype)
    g = cases.filled((5, 9), dtype, 44)
    xt = to_torch(torch, x).requires_grad_(True)
    yt = torch.nn.functional.hardtanh(xt, lo, hi)
    yt.backward(to_torch(torch, g))
    cases.assert_bits_equal(opsnn.hardtanh(x, lo, hi), from_torch(torch, yt.detach()))
    cases.assert_bits_equal(opsnn.hardtanh_backward(g, x, lo, hi), from_torch(torch, xt.grad))
    # in place: torch differentiates hardtanh_ through its result; so does hardtanh_backward(result)
    xi = to_torch(torch, x).requires_grad_(True)
    r = xi.clone()
    torch.nn.functional.hardtanh_(r, lo, hi)
    r.backward(to_torch(torch, g))
    res = opsnn.hardtanh_(x.copy(), lo, hi)
    cases.assert_bits_equal(res, from_torch(torch, r.detach()))
    cases.assert_bits_equal(opsnn.hardtanh_backward(g, res, lo, hi), from_torch(torch, xi.grad))
