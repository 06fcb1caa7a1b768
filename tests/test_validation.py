"""Error tables of seeds 001 (LeakyReluBackward) and 003 (HardtanhBackward), the check order of
spec §3.1 / §4.1 with DECISIONS 5, 10, 14, 15, through both layers; and garbage arguments, which
must come back as a status, never as a Python exception."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cases
import opsnn
import opsnn.acl as acl
from opsnn import aclnn
from cases import BF16, F16, F32, F64, RANK8, RANK9
from conftest import (HARDTANH, LEAKY, assert_untouched, expect_acl_failure,
                      expect_py_failure, snapshot)

NULLPTR, INVALID = 161001, 161002


def ml_dtype(name: str):
    """ml_dtypes' type ``name``, or a skip where the ml_dtypes installed has none: 0.5, the oldest
    pyproject takes, has no complex32, bcomplex32 or uint1 (these tests had failed under it with
    an AttributeError, not for anything opsnn does)."""
    import ml_dtypes

    kind = getattr(ml_dtypes, name, None)
    if kind is None:
        pytest.skip(f"ml_dtypes {ml_dtypes.__version__} has no {name}")
    return kind


# ---- argument builders --------------------------------------------------------------------------
def leaky_acl(env, *, g=((2, 3), F32), x=((2, 3), F32), out=None, slope=0.1, sdt="DOUBLE",
              sir=False, null=()):
    """Build LeakyReluBackward arguments on the device, run phase 1, check the tensors are
    untouched, and return the status."""
    (gs, gdt), (xs, xdt) = g, x
    if out is None:
        out = (np.broadcast_shapes(gs, xs), cases.promote(gdt, xdt))
    gt = env.put(cases.filled(gs, gdt, 1))
    xt = env.put(cases.filled(xs, xdt, 2))
    ot = env.out(out[0], out[1])
    st_ = env.scalar(slope, sdt)
    args = {"gradOutput": gt.tensor, "self": xt.tensor, "negativeSlope": st_, "out": ot.tensor}
    for n in null:
        args[n] = None
    before = snapshot(gt, xt, ot)
    ws, ex, ret = LEAKY.phase1(args["gradOutput"], args["self"], args["negativeSlope"], sir, args["out"])
    assert_untouched(before, gt, xt, ot)
    return ret


def hardtanh_acl(env, *, g=((2, 3), F32), x=((2, 3), F32), out=None, lo=-1.0, hi=1.0, null=()):
    (gs, gdt), (xs, xdt) = g, x
    out = out or (xs, xdt)
    gt = env.put(cases.filled(gs, gdt, 3))
    xt = env.put(cases.filled(xs, xdt, 4))
    ot = env.out(out[0], out[1])
    args = {"gradOutput": gt.tensor, "self": xt.tensor, "out": ot.tensor,
            "min": env.scalar(lo, "DOUBLE"), "max": env.scalar(hi, "DOUBLE")}
    for n in null:
        args[n] = None
    before = snapshot(gt, xt, ot)
    ws, ex, ret = HARDTANH.phase1(args["gradOutput"], args["self"], args["min"], args["max"], args["out"])
    assert_untouched(before, gt, xt, ot)
    return ret


def arrays(g=((2, 3), F32), x=((2, 3), F32), out=None):
    (gs, gdt), (xs, xdt) = g, x
    ga = cases.filled(gs, gdt, 5)
    xa = cases.filled(xs, xdt, 6)
    oa = None if out is None else np.full(out[0], 3, out[1])
    return ga, xa, oa


def py_leaky_fail(*, g=((2, 3), F32), x=((2, 3), F32), out=None, slope=0.1, sir=False, status=INVALID,
                  null=(), **checks):
    ga, xa, oa = arrays(g, x, out)
    vals = {"gradOutput": ga, "self": xa, "negativeSlope": slope}
    for n in null:
        vals[n] = None
    kw = {} if oa is None else {"out": oa}
    untouched = [a for a in (ga, xa, oa) if a is not None]
    return expect_py_failure(opsnn.leaky_relu_backward, vals["gradOutput"], vals["self"],
                             negative_slope=vals["negativeSlope"], self_is_result=sir, status=status,
                             untouched=untouched, **kw, **checks)


def py_hardtanh_fail(*, g=((2, 3), F32), x=((2, 3), F32), out=None, status=INVALID, null=(), **checks):
    ga, xa, oa = arrays(g, x, out)
    vals = {"gradOutput": ga, "self": xa, "min": -1.0, "max": 1.0}
    for n in null:
        vals[n] = None
    kw = {} if oa is None else {"out": oa}
    untouched = [a for a in (ga, xa, oa) if a is not None]
    return expect_py_failure(opsnn.hardtanh_backward, vals["gradOutput"], vals["self"],
                             min_val=vals["min"], max_val=vals["max"], status=status,
                             untouched=untouched, **kw, **checks)


def _ids(subset):
    return "+".join(subset)


# ---- 161001: null arguments, first in documented order wins (DECISION 15) -----------------------
@pytest.mark.parametrize("null", list(cases.subsets(LEAKY.null_order)), ids=_ids)
def test_leaky_null_acl(acl_env, null):
    first = next(n for n in LEAKY.null_order if n in null)
    ret = leaky_acl(acl_env, null=null)
    expect_acl_failure(ret, NULLPTR, names=[first])


@pytest.mark.parametrize("null", list(cases.subsets(("gradOutput", "self", "negativeSlope"))), ids=_ids)
def test_leaky_null_py(null):
    first = next(n for n in LEAKY.null_order if n in null)
    py_leaky_fail(null=null, status=NULLPTR, names=[first])


@pytest.mark.parametrize("null", list(cases.subsets(HARDTANH.null_order)), ids=_ids)
def test_hardtanh_null_acl(acl_env, null):
    first = next(n for n in HARDTANH.null_order if n in null)
    ret = hardtanh_acl(acl_env, null=null)
    expect_acl_failure(ret, NULLPTR, names=[first])


@pytest.mark.parametrize("null", list(cases.subsets(("self", "gradOutput", "min", "max"))), ids=_ids)
def test_hardtanh_null_py(null):
    first = next(n for n in HARDTANH.null_order if n in null)
    py_hardtanh_fail(null=null, status=NULLPTR, names=[first])


def test_null_wins_over_invalid(acl_env):
    """Null checks run before every dtype/shape check (spec §3.1, §4.1)."""
    i32 = np.dtype(np.int32)
    ret = leaky_acl(acl_env, g=((2, 3), i32), null=("negativeSlope",))
    expect_acl_failure(ret, NULLPTR, names=["negativeSlope"])
    ret = leaky_acl(acl_env, g=(RANK9, F32), x=(RANK9, F32), null=("out",))
    expect_acl_failure(ret, NULLPTR, names=["out"])
    ret = hardtanh_acl(acl_env, g=((2, 3), F64), x=((3,), i32), null=("max",))
    expect_acl_failure(ret, NULLPTR, names=["max"])
    py_leaky_fail(g=((2, 3), i32), null=("self",), status=NULLPTR, names=["self"])
    py_hardtanh_fail(g=((2, 3), F64), null=("min",), status=NULLPTR, names=["min"])


def test_a_destroyed_handle_is_invalid_not_null(acl_env):
    """A destroyed tensor or scalar is no null pointer: 161002 'was already destroyed', not 161001."""
    gt, xt, ot = acl_env.put(np.ones(3, F32)), acl_env.put(np.ones(3, F32)), acl_env.out((3,), F32)
    gone = acl.create_scalar(0.5, acl.ACL_FLOAT)
    assert acl.destroy_scalar(gone) == 0
    expect_acl_failure(LEAKY.phase1(gt.tensor, xt.tensor, gone, False, ot.tensor)[2], INVALID,
                       names=["negativeSlope"], words=["was already destroyed"])


# ---- 161002: dtype not supported ----------------------------------------------------------------
def test_a_dtype_without_acl_data_type_fails_in_the_dtype_checks():
    """A host array whose dtype no aclDataType describes (object, byte-swapped, an ml_dtypes type
    opsnn has no name for) fails where DT_UNDEFINED would in CANN: after every null check and in
    the dtype checks' order, gradOutput before self for both operators (a breaker: HardtanhBackward
    blamed self, its null checks' first, where both were bad, and a null gradOutput beside an
    object self was 161002 for self instead of 161001)."""
    import ml_dtypes

    for bad in (np.zeros(3, object), np.zeros(3, ">f4"), np.zeros(3, ml_dtypes.float8_e4m3fnuz)):
        for fn, extra in ((opsnn.hardtanh_backward, (-1.0, 1.0)), (opsnn.leaky_relu_backward, (0.1, False))):
            err = expect_py_failure(fn, bad, bad, *extra, status=INVALID, names=["gradOutput"], untouched=[bad])
            assert "which no aclDataType describes" in err.message and "self" not in err.message, err.message
            g = np.ones(3, F32)
            expect_py_failure(fn, g, bad, *extra, status=INVALID, names=["self"], words=["no aclDataType"],
                              untouched=[g, bad])
            expect_py_failure(fn, None, bad, *extra, status=NULLPTR, names=["gradOutput"], untouched=[bad])
        out = np.full(3, 7, ">f4")
        expect_py_failure(opsnn.hardtanh_backward, np.ones(3, F32), np.ones(3, F32), out=out, status=INVALID,
                          names=["out"], words=["non-native byte order", "newbyteorder"], untouched=[out])
    # a scalar that cannot be an aclScalar, or an argument that cannot be an array, beside a
    # null one: the null checks come first (a breaker: 161002 for the scalar)
    g = np.ones(3, F32)
    expect_py_failure(opsnn.leaky_relu_backward, None, g, np.void(b"ab"), False, status=NULLPTR, names=["gradOutput"])
    expect_py_failure(opsnn.hardtanh_backward, None, g, np.datetime64(1, "s"), 1.0, status=NULLPTR, names=["gradOutput"])
    expect_py_failure(opsnn.hardtanh, g, np.datetime64(1, "s"), None, status=NULLPTR, words=["clipValueMax"])
    expect_py_failure(opsnn.leaky_relu_backward, [[1], [2, 3]], None, 0.1, False, status=NULLPTR, names=["self"])
    expect_py_failure(opsnn.leaky_relu_backward, g, g, np.void(b"ab"), False, status=INVALID, names=["negativeSlope"])


def test_an_ml_dtypes_type_is_named_as_such_not_as_a_record():
    """An ml_dtypes array of a type opsnn has no aclDataType for (NumPy kind "V", as a record's)
    was "a NumPy structured or raw (void) dtype"; its int4 and float4_e2m1fn so too, as if
    ACL_INT4 and ACL_FLOAT4_E2M1 did not exist (a breaker; torch's int4 was worded already).
    Now the ml_dtypes type, and for those two that it stores one element a byte where the
    aclDataType packs two; records and raw bytes are still named as NumPy's."""
    import ml_dtypes

    for name, said in (("int4", "int4 (ml_dtypes' int4: one element a byte, where ACL_INT4 packs 2 a byte)"),
                       ("float4_e2m1fn", ("float4_e2m1fn (ml_dtypes' float4_e2m1fn: one element a byte, where "
                                          "ACL_FLOAT4_E2M1 packs 2 a byte)")),
                       ("float8_e4m3fnuz", "float8_e4m3fnuz (an ml_dtypes type)")):
        x = np.zeros(3, getattr(ml_dtypes, name))
        err = expect_py_failure(opsnn.leaky_relu, x, status=INVALID, untouched=[x])
        assert err.message.startswith(f"LeakyRelu: self has dtype {said}, which no aclDataType describes; "
                                      "it must be one of [DT_FLOAT, DT_FLOAT16, DT_DOUBLE, DT_BF16]"), err.message
    for array, said in ((np.zeros(2, [("a", "<f4")]), "void32 ([('a', '<f4')], a NumPy structured or raw (void) dtype)"),
                        (np.zeros(2, "V4"), "void32 (|V4, a NumPy structured or raw (void) dtype)")):
        err = expect_py_failure(opsnn.leaky_relu, array, status=INVALID, untouched=[array])
        assert err.message.startswith(f"LeakyRelu: self has dtype {said}, which no aclDataType"), err.message


def test_ml_dtypes_float6_is_not_acl_float6_which_packs_four_elements_in_three_bytes():
    """ml_dtypes' float6_e2m3fn / float6_e3m2fn store one element a byte; ACL_FLOAT6_E2M3 /
    E3M2 pack 6 bits an element (metadef's GetSizeByDataType), so a breaker's mapping of the
    one onto the other (as the same memory) was undone: such an array is refused as no
    aclDataType's, saying how the aclDataType packs, and an out of it is left untouched."""
    import ml_dtypes

    from opsnn._core import dtypes

    x = np.array([-1.0, 0.5, 2.0], np.float32)
    for name, acl_name in (("float6_e2m3fn", "ACL_FLOAT6_E2M3"), ("float6_e3m2fn", "ACL_FLOAT6_E3M2")):
        six = np.zeros(3, getattr(ml_dtypes, name))
        assert dtypes.from_numpy(six.dtype) == dtypes.DataType.DT_UNDEFINED
        said = f"{name} (ml_dtypes' {name}: one element a byte, where {acl_name} packs 4 in 3 bytes)"
        err = expect_py_failure(opsnn.leaky_relu, six, status=INVALID, untouched=[six])
        assert err.message.startswith(f"LeakyRelu: self has dtype {said}, which no aclDataType describes"), err.message
        err = expect_py_failure(opsnn.leaky_relu, x, out=six, status=INVALID, untouched=[x, six])
        assert f"out has dtype {said}, which no aclDataType describes" in err.message, err.message


def test_ml_dtypes_uint1_is_told_apart_from_acl_uint1():
    """ml_dtypes' uint1 was refused as "uint1 (an ml_dtypes type)", as if ACL_UINT1 did not
    exist (torch's uint1 was told apart): ml_dtypes stores one element a byte, where ACL_UINT1
    packs 8, as the refusal now says."""
    x = np.zeros(3, ml_dtype("uint1"))
    err = expect_py_failure(opsnn.leaky_relu, x, status=INVALID, untouched=[x])
    assert err.message.startswith("LeakyRelu: self has dtype uint1 (ml_dtypes' uint1: one element a byte, "
                                  "where ACL_UINT1 packs 8 a byte), which no aclDataType describes; "
                                  "it must be one of [DT_FLOAT, DT_FLOAT16, DT_DOUBLE, DT_BF16]"), err.message


def test_an_ml_dtypes_complex32_array_is_acl_complex32():
    """(A regression breaker) ml_dtypes' complex32 (two float16: ACL_COMPLEX32's memory) was
    refused as 'complex32, which no aclDataType describes', where torch.complex32 is
    ACL_COMPLEX32: the array gets torch's answers now, an out 561103 (no Cast kernel) or
    Hardtanh's dtype rule, an input its dtype list, the overlap check its memory; nothing
    written, an empty out a success."""
    complex32 = ml_dtype("complex32")
    x = np.array([-1.0, 0.5, 2.0, -3.0], np.float32)
    out = np.arange(1, 17, dtype=np.uint8).view(complex32)
    for fn, args, status, text in (
            (opsnn.leaky_relu, (x,), 561103, "LeakyRelu: no Cast kernel from DT_FLOAT to DT_COMPLEX32"),
            (opsnn.leaky_relu_backward, (x, x), 561103, "LeakyReluBackward: no Cast kernel from DT_FLOAT to DT_COMPLEX32"),
            (opsnn.hardtanh, (x,), INVALID, "Hardtanh: out must have the dtype of self (DT_FLOAT), got DT_COMPLEX32")):
        err = expect_py_failure(fn, *args, out=out, status=status, untouched=[out, x])
        assert err.message == text
    empty = np.zeros((0, 3), complex32)
    assert opsnn.leaky_relu(np.zeros((0, 3), np.float32), out=empty) is empty
    buf = np.zeros(8, np.float32)
    err = expect_py_failure(opsnn.leaky_relu, buf[:4], out=buf[2:6].view(complex32), status=INVALID)
    assert err.message.startswith("LeakyRelu: out and self overlap in memory without being the same view (out "
                                  "DT_COMPLEX32 [4] strides [1] ND, self DT_FLOAT [4] strides [1] ND"), err.message
    c = np.zeros(4, complex32)
    for call in (lambda: opsnn.leaky_relu(c), lambda: opsnn.hardtanh_(c)):
        err = expect_py_failure(call, status=INVALID, untouched=[c])
        assert "self has dtype DT_COMPLEX32, which Ascend910B does not support" in err.message, err.message


def test_a_byte_swapped_ml_dtypes_complex32_array_is_named_as_ml_dtypes_and_told_how_to_make_it_native():
    """(A regression breaker) ml_dtypes' complex32 marked '>' was refused as 'complex32 in
    non-native byte order', as if NumPy had a complex32 (NumPy kind 'c', where its other types
    are kind 'V'), and without the astype hint a byte-swapped bfloat16 gets, though the native
    array is ACL_COMPLEX32 (``dtypes.BYTES_ONLY``)."""
    swapped = np.zeros(2, np.dtype(ml_dtype("complex32")).newbyteorder(">"))
    x = np.ones(2, np.float32)
    for call, said in (
            (lambda: opsnn.leaky_relu(x, out=swapped), "out has dtype complex32 (an ml_dtypes type) in non-native "
             "byte order, which no aclDataType describes; it must be a floating or complex dtype the result "
             "(DT_FLOAT) can be cast to"),
            (lambda: opsnn.leaky_relu(swapped), "self has dtype complex32 (an ml_dtypes type) in non-native byte "
             "order, which no aclDataType describes; it must be one of [DT_FLOAT, DT_FLOAT16, DT_DOUBLE, DT_BF16] "
             "on Ascend910B")):
        err = expect_py_failure(call, status=INVALID, untouched=[swapped, x])
        assert err.message == f"LeakyRelu: {said}; a.astype(a.dtype.newbyteorder('=')) makes it native"


def test_a_one_byte_ml_dtypes_type_marked_big_endian_is_taken_as_native():
    """(A breaker) a one-byte ml_dtypes type marked '>' (np.dtype(float8_e5m2).newbyteorder('>'))
    was refused 'in non-native byte order', which means nothing for one byte: NumPy drops the
    mark from its own one-byte types, so an int8 array marked so ran. It is its aclDataType now,
    answered as the native array is, and one with none (int4) is refused without the mark."""
    import ml_dtypes

    from opsnn._core import dtypes

    x = np.array([-1.0, 0.5, 2.0], np.float32)
    for name in ("float8_e5m2", "float8_e4m3fn", "float8_e8m0fnu"):
        marked = np.dtype(getattr(ml_dtypes, name)).newbyteorder(">")
        acl = dtypes.from_numpy(getattr(ml_dtypes, name))
        assert (marked.byteorder, dtypes.from_numpy(marked)) == (">", acl)
        arr = np.zeros(3, marked)
        err = expect_py_failure(opsnn.leaky_relu, arr, status=INVALID, untouched=[arr])
        assert err.message.startswith(f"LeakyRelu: tensor self has dtype {dtypes.name(acl)}, which Ascend910B does "
                                      "not support"), err.message
        err = expect_py_failure(opsnn.leaky_relu, x, out=arr, status=561103, untouched=[x, arr])
        assert err.message == f"LeakyRelu: no Cast kernel from DT_FLOAT to {dtypes.name(acl)}"
    four = np.zeros(3, np.dtype(ml_dtypes.int4).newbyteorder(">"))
    err = expect_py_failure(opsnn.leaky_relu, four, status=INVALID, untouched=[four])
    assert err.message.startswith("LeakyRelu: self has dtype int4 (ml_dtypes' int4: one element a byte, where ACL_INT4 "
                                  "packs 2 a byte), which no aclDataType describes; it must be one of [DT_FLOAT, "
                                  "DT_FLOAT16, DT_DOUBLE, DT_BF16] on Ascend910B"), err.message


def test_an_ml_dtypes_scalar_is_named_as_such_not_as_numpys():
    """(A regression breaker) the scalar twin of the ml_dtypes tensor refusals: an ml_dtypes int4
    scalar as negativeSlope was 'a NumPy int4 scalar, a dtype no aclDataType describes', as if
    ACL_INT4 did not exist, and a complex32 one so too, where ACL_COMPLEX32 is its dtype and
    aclCreateScalar refuses it (as a float8 scalar's). Each is worded as the tensor refusal
    words its dtype, a complex32 scalar as the aclDataType that holds no aclScalar; NumPy's
    own (np.longdouble) as before."""
    import ml_dtypes

    x = np.ones(2, np.float32)
    rows = [(ml_dtypes.int4(1), ("negativeSlope 1 is a scalar of int4 (ml_dtypes' int4: one element a byte, where "
                                 "ACL_INT4 packs 2 a byte), a dtype no aclDataType describes; pass a Python number")),
            (ml_dtypes.float8_e4m3fnuz(1), ("negativeSlope 1 is a scalar of float8_e4m3fnuz (an ml_dtypes type), a "
                                            "dtype no aclDataType describes; pass a Python number")),
            (np.longdouble(0.5), "negativeSlope np.longdouble('0.5') is a NumPy float128 scalar, a dtype no aclDataType describes")]
    if hasattr(ml_dtypes, "complex32"):  # (0.6 on; 0.5, the oldest taken, has none)
        rows.append((ml_dtypes.complex32(1), ("negativeSlope (1+0j) cannot be made an aclScalar: dataType ACL_COMPLEX32 "
                                              "cannot hold an aclScalar")))
    for value, said in rows:
        err = expect_py_failure(opsnn.leaky_relu, x, value, status=INVALID, untouched=[x])
        assert err.message.startswith(f"LeakyRelu: {said}"), err.message


def test_an_ml_dtypes_bcomplex32_scalar_is_refused_without_a_complex_warning():
    """(A regression breaker) ml_dtypes' bcomplex32 (NumPy kind V, as bfloat16's) reached the
    plan cache's key, whose float() warned 'Casting complex values to real discards the imaginary
    part' (a ComplexWarning; under a warnings filter that makes it an error, the refusal was
    that warning's): the argument's own refusal comes alone now, cold and warm."""
    import warnings

    bcomplex32 = ml_dtype("bcomplex32")
    x = np.ones(2, np.float32)
    for _ in range(3):  # (warm: the plan cache's key reads the scalars)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            err = expect_py_failure(opsnn.leaky_relu, x, bcomplex32(1), status=INVALID, untouched=[x])
        assert err.message.startswith("LeakyRelu: negativeSlope (1+0j) is a scalar of bcomplex32 (an ml_dtypes "
                                      "type), a dtype no aclDataType describes"), err.message
        opsnn.leaky_relu(x, 0.5)


def test_an_out_without_acl_data_type_is_told_the_dtype_it_needs():
    """An out whose dtype no aclDataType describes, for an operator whose out has no dtype list
    of its own, is told what its later checks ask: self's dtype (Hardtanh), or a floating or
    complex dtype the result can be cast to, naming the result's (was: no expected dtype)."""
    import ml_dtypes

    f16, bf16 = np.ones(3, np.float16), np.ones(3, ml_dtypes.bfloat16)
    for bad in (np.zeros(3, np.longdouble), np.zeros(3, ">f4")):
        expect_py_failure(opsnn.hardtanh, np.ones(3, F64), out=bad, status=INVALID, names=["out"],
                          words=["no aclDataType", "it must be self's dtype (DT_DOUBLE)"], untouched=[bad])
        expect_py_failure(opsnn.leaky_relu_backward, f16, bf16, out=bad, status=INVALID, names=["out"],
                          words=["it must be a floating or complex dtype the result (DT_FLOAT) can be cast to"],
                          untouched=[bad, f16, bf16])
        expect_py_failure(opsnn.leaky_relu, bf16, out=bad, status=INVALID, names=["out"],
                          words=["the result (DT_BF16) can be cast to"], untouched=[bad, bf16])


@pytest.mark.parametrize("bad", cases.BAD_TENSOR_DTYPES, ids=str)
@pytest.mark.parametrize("arg", ["gradOutput", "self"])
def test_leaky_tensor_dtype_unsupported(acl_env, arg, bad):
    spec = {"g": ((2, 3), F32), "x": ((2, 3), F32), "out": ((2, 3), F32)}
    spec["g" if arg == "gradOutput" else "x"] = ((2, 3), bad)
    name = cases.ACL_NAME[bad]
    expect_acl_failure(leaky_acl(acl_env, **spec), INVALID, names=[arg], dtypes=[name])
    py_leaky_fail(**spec, names=[arg], dtypes=[name])


@pytest.mark.parametrize("sdt", ["UINT16", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128"])
def test_leaky_slope_dtype_unsupported(acl_env, sdt):
    """A slope dtype no SoC's list has: 161002 naming it, worded for a scalar (a scalar's dtype
    selects no kernel; a breaker read "LeakyReluBackward has no DT_UINT16 kernel")."""
    said = "; no SoC's list takes a scalar of that dtype"
    msg = expect_acl_failure(leaky_acl(acl_env, slope=1, sdt=sdt), INVALID, names=["negativeSlope"],
                             dtypes=[sdt], words=[said])
    assert msg.endswith(said) and "kernel" not in msg
    np_value = {"UINT16": np.uint16(1), "UINT32": np.uint32(1), "UINT64": np.uint64(1),
                "COMPLEX64": np.complex64(1), "COMPLEX128": np.complex128(1)}[sdt]
    exc = py_leaky_fail(slope=np_value, names=["negativeSlope"], dtypes=[sdt], words=[said])
    assert "kernel" not in exc.message


def test_a_scalar_dtype_no_soc_takes_is_worded_for_a_scalar(acl_env):
    """aclnnHardtanh's BOOL clipValueMin (no SoC's list has BOOL for its scalars): the scalar
    wording; a tensor dtype no SoC takes still says no kernel has it; a scalar dtype other SoCs
    take names them (Ascend910 has no BF16)."""
    x = acl_env.put(cases.filled((4,), F32, 1))
    out = acl_env.out((4,), F32)
    ret = aclnn.aclnnHardtanhGetWorkspaceSize(x.tensor, acl_env.scalar(True, "BOOL"),
                                              acl_env.scalar(1.0, "DOUBLE"), out.tensor)[2]
    msg = expect_acl_failure(ret, INVALID, words=["scalar clipValueMin has dtype DT_BOOL"])
    assert msg.endswith("; no SoC's list takes a scalar of that dtype") and "kernel" not in msg
    msg = expect_acl_failure(leaky_acl(acl_env, g=((2, 3), I32), out=((2, 3), F32)), INVALID,
                             names=["gradOutput"], dtypes=["INT32"])
    assert msg.endswith("; no SoC does (LeakyReluBackward has no DT_INT32 kernel)")
    with opsnn.use_soc("Ascend910"):
        msg = expect_acl_failure(leaky_acl(acl_env, slope=1.0, sdt="BF16"), INVALID,
                                 names=["negativeSlope"], dtypes=["BF16"])
    assert "Ascend910B, Ascend910_93, Ascend950 take it" in msg


@pytest.mark.parametrize("bad", (F64,) + cases.BAD_TENSOR_DTYPES, ids=str)
@pytest.mark.parametrize("arg", ["gradOutput", "self", "out"])
def test_hardtanh_tensor_dtype_unsupported(acl_env, arg, bad):
    """gradOutput / self / out dtype outside {FLOAT, FLOAT16, BF16}: 161002 (DOUBLE too,
    DECISION 11). Only the named argument is bad."""
    spec = {"g": ((2, 3), F32), "x": ((2, 3), F32), "out": ((2, 3), F32)}
    spec[{"gradOutput": "g", "self": "x", "out": "out"}[arg]] = ((2, 3), bad)
    if arg == "self":  # grad must stay in the list and the out check must not fire first
        spec["out"] = ((2, 3), F32)
    name = cases.ACL_NAME[bad]
    expect_acl_failure(hardtanh_acl(acl_env, **spec), INVALID, names=[arg], dtypes=[name])
    py_hardtanh_fail(**spec, names=[arg], dtypes=[name])


@pytest.mark.parametrize("gdt,xdt", [(F16, F32), (F32, BF16), (BF16, F16), (F32, F16)], ids=str)
def test_hardtanh_grad_self_dtype_mismatch(acl_env, gdt, xdt):
    spec = {"g": ((2, 3), gdt), "x": ((2, 3), xdt), "out": ((2, 3), xdt)}
    expect_acl_failure(hardtanh_acl(acl_env, **spec), INVALID, names=["gradOutput"],
                       dtypes=[cases.ACL_NAME[gdt], cases.ACL_NAME[xdt]])
    py_hardtanh_fail(**spec, names=["gradOutput"], dtypes=[cases.ACL_NAME[gdt], cases.ACL_NAME[xdt]])


# ---- 161002: ranks, broadcast, out shape --------------------------------------------------------
@pytest.mark.parametrize("which", ["gradOutput", "self", "both"])
def test_leaky_rank9(acl_env, which):
    g = (RANK9 if which in ("gradOutput", "both") else RANK8, F32)
    x = (RANK9 if which in ("self", "both") else (2,), F32)
    first = "self" if which == "self" else "gradOutput"
    out = (np.broadcast_shapes(g[0], x[0]), F32)
    expect_acl_failure(leaky_acl(acl_env, g=g, x=x, out=out), INVALID, names=[first])
    py_leaky_fail(g=g, x=x, names=[first])


def test_leaky_out_rank9(acl_env):
    """out 9-D with 8-D inputs: out shape != broadcast shape -> 161002."""
    expect_acl_failure(leaky_acl(acl_env, g=(RANK8, F32), x=(RANK8, F32), out=(RANK9, F32)),
                       INVALID, names=["out"])
    py_leaky_fail(g=(RANK8, F32), x=(RANK8, F32), out=(RANK9, F32), names=["out"])


@pytest.mark.parametrize("gs,xs", [((2,), (3,)), ((2, 3), (2, 4)), ((2, 3), (3, 2)), ((0,), (3,)),
                                   ((4, 2, 3), (3, 3))], ids=str)
def test_leaky_broadcast_failure(acl_env, gs, xs):
    ret = leaky_acl(acl_env, g=(gs, F32), x=(xs, F32), out=(gs, F32))
    expect_acl_failure(ret, INVALID, names=["gradOutput", "self"], shapes=[gs, xs])
    py_leaky_fail(g=(gs, F32), x=(xs, F32), names=["gradOutput", "self"], shapes=[gs, xs])


@pytest.mark.parametrize("gs,xs,os", [
    ((2, 3), (2, 3), (3, 2)), ((2, 1), (1, 3), (1, 3)), ((2, 3), (3,), (3,)), ((2, 3), (2, 3), (2, 3, 1)),
    ((2, 3), (2, 3), (6,)), ((1,), (1,), ()), ((), (), (1,)), ((3,), (), ()),
], ids=str)
def test_leaky_out_shape_not_broadcast(acl_env, gs, xs, os):
    bc = np.broadcast_shapes(gs, xs)
    ret = leaky_acl(acl_env, g=(gs, F32), x=(xs, F32), out=(os, F32))
    expect_acl_failure(ret, INVALID, names=["out"], shapes=[bc, os])
    py_leaky_fail(g=(gs, F32), x=(xs, F32), out=(os, F32), names=["out"], shapes=[bc, os])


@pytest.mark.parametrize("which", ["gradOutput", "self", "both"])
def test_hardtanh_rank9(acl_env, which):
    g = (RANK9 if which in ("gradOutput", "both") else RANK8, F32)
    x = (RANK9 if which in ("self", "both") else RANK8, F32)
    first = "self" if which == "self" else "gradOutput"
    expect_acl_failure(hardtanh_acl(acl_env, g=g, x=x, out=x), INVALID, names=[first])
    py_hardtanh_fail(g=g, x=x, names=[first])


@pytest.mark.parametrize("gs,xs", [((2, 3), (3,)), ((1, 3), (2, 3)), ((2, 3), (3, 2)), ((), (1,)),
                                   ((0, 3), (0, 2))], ids=str)
def test_hardtanh_grad_self_shape_differs(acl_env, gs, xs):
    """No broadcasting (DECISION 10)."""
    ret = hardtanh_acl(acl_env, g=(gs, F32), x=(xs, F32))
    expect_acl_failure(ret, INVALID, names=["gradOutput", "self"], shapes=[gs, xs])
    py_hardtanh_fail(g=(gs, F32), x=(xs, F32), names=["gradOutput", "self"], shapes=[gs, xs])


@pytest.mark.parametrize("xs,os", [((2, 3), (3, 2)), ((2, 3), (6,)), ((2, 3), (1, 2, 3)), ((1,), ()),
                                   ((), (1,)), ((0, 3), (3, 0)), ((2, 3), RANK9)], ids=str)
def test_hardtanh_out_shape_differs(acl_env, xs, os):
    """out shape must equal self's (DECISION 10)."""
    ret = hardtanh_acl(acl_env, g=(xs, F32), x=(xs, F32), out=(os, F32))
    expect_acl_failure(ret, INVALID, names=["out"], shapes=[xs, os])
    py_hardtanh_fail(g=(xs, F32), x=(xs, F32), out=(os, F32), names=["out"], shapes=[xs, os])


@pytest.mark.parametrize("xdt,odt", [(F32, F16), (F16, F32), (BF16, F32), (F32, BF16), (F16, BF16)], ids=str)
def test_hardtanh_out_dtype_differs(acl_env, xdt, odt):
    """out dtype in the list but not self's -> 161002 (DECISION 10)."""
    spec = {"g": ((2, 3), xdt), "x": ((2, 3), xdt), "out": ((2, 3), odt)}
    expect_acl_failure(hardtanh_acl(acl_env, **spec), INVALID, names=["out"],
                       dtypes=[cases.ACL_NAME[xdt], cases.ACL_NAME[odt]])
    py_hardtanh_fail(**spec, names=["out"], dtypes=[cases.ACL_NAME[xdt], cases.ACL_NAME[odt]])


# ---- 161002: selfIsResult with a negative slope (seed 001, DECISION 4) --------------------------
@pytest.mark.parametrize("slope,sdt", [(-0.5, "DOUBLE"), (-1e-46, "DOUBLE"), (-np.inf, "DOUBLE"),
                                       (-1, "INT32"), (-0.25, "FLOAT"), (-1, "INT8")], ids=str)
def test_leaky_self_is_result_negative_slope(acl_env, slope, sdt):
    ret = leaky_acl(acl_env, slope=slope, sdt=sdt, sir=True)
    expect_acl_failure(ret, INVALID, words=["slope"])
    if sdt == "DOUBLE":
        py_leaky_fail(slope=slope, sir=True, words=["slope"])


# ---- check order among 161002 checks (spec §3.1, §4.1) -----------------------------------------
I32, U32 = np.dtype(np.int32), np.dtype(np.uint32)


def test_leaky_check_order(acl_env):
    # grad dtype before self dtype
    expect_acl_failure(leaky_acl(acl_env, g=((2, 3), I32), x=((2, 3), U32), out=((2, 3), F32)),
                       INVALID, names=["gradOutput"], dtypes=["INT32"])
    # self dtype before slope dtype
    expect_acl_failure(leaky_acl(acl_env, x=((2, 3), U32), out=((2, 3), F32), slope=1, sdt="UINT32"),
                       INVALID, names=["self"], dtypes=["UINT32"])
    # dtypes (slope included) before ranks
    expect_acl_failure(leaky_acl(acl_env, g=(RANK9, F32), slope=1, sdt="COMPLEX64", out=(RANK9, F32)),
                       INVALID, names=["negativeSlope"], dtypes=["COMPLEX64"])
    # grad rank before self rank
    expect_acl_failure(leaky_acl(acl_env, g=(RANK9, F32), x=(RANK9 + (1,), F32), out=(RANK9, F32)),
                       INVALID, names=["gradOutput"])
    # out shape before selfIsResult
    expect_acl_failure(leaky_acl(acl_env, out=((3, 2), F32), slope=-0.5, sir=True),
                       INVALID, names=["out"], shapes=[(2, 3), (3, 2)])
    # selfIsResult before CanCast(promoted, out)
    expect_acl_failure(leaky_acl(acl_env, out=((2, 3), I32), slope=-0.5, sir=True), INVALID, words=["slope"])
    py_leaky_fail(g=((2, 3), I32), x=((2, 3), U32), names=["gradOutput"], dtypes=["INT32"])
    py_leaky_fail(out=((3, 2), F32), slope=-0.5, sir=True, names=["out"])
    py_leaky_fail(out=((2, 3), I32), slope=-0.5, sir=True, words=["slope"])


def test_hardtanh_check_order(acl_env):
    # grad dtype before self dtype before out dtype
    expect_acl_failure(hardtanh_acl(acl_env, g=((2, 3), I32), x=((2, 3), F64), out=((2, 3), U32)),
                       INVALID, names=["gradOutput"], dtypes=["INT32"])
    expect_acl_failure(hardtanh_acl(acl_env, x=((2, 3), F64), out=((2, 3), U32)),
                       INVALID, names=["self"], dtypes=["DOUBLE"])
    # out in the list before grad == self
    expect_acl_failure(hardtanh_acl(acl_env, g=((2, 3), F16), x=((2, 3), F32), out=((2, 3), U32)),
                       INVALID, names=["out"], dtypes=["UINT32"])
    # dtypes before shapes
    expect_acl_failure(hardtanh_acl(acl_env, g=(RANK9, F16), x=((2, 3), F32)),
                       INVALID, names=["gradOutput"], dtypes=["FLOAT16"])
    # grad rank before self rank; grad/self shapes before out shape
    expect_acl_failure(hardtanh_acl(acl_env, g=(RANK9, F32), x=(RANK9 + (1,), F32)),
                       INVALID, names=["gradOutput"])
    expect_acl_failure(hardtanh_acl(acl_env, g=((3,), F32), x=((2, 3), F32), out=((5,), F32)),
                       INVALID, names=["gradOutput"], shapes=[(3,), (2, 3)])
    # DECISION 10's out dtype == self's, a check CANN's code lacks, after CANN's shape checks and
    # after its own out shape check (a breaker: out's dtype had been told before a grad shape)
    expect_acl_failure(hardtanh_acl(acl_env, g=((3,), F32), x=((2,), F32), out=((2,), F16)),
                       INVALID, names=["gradOutput"], shapes=[(3,), (2,)])
    expect_acl_failure(hardtanh_acl(acl_env, g=((2,), F32), x=((2,), F32), out=((3,), F16)), INVALID,
                       names=["out"], shapes=[(2,), (3,)])
    py_hardtanh_fail(g=((2, 3), I32), x=((2, 3), F64), names=["gradOutput"], dtypes=["INT32"])
    py_hardtanh_fail(g=(RANK9, F16), x=((2, 3), F32), names=["gradOutput"], dtypes=["FLOAT16"])


# ---- garbage arguments: a status, never an exception --------------------------------------------
GARBAGE = st.one_of(
    st.text(max_size=4), st.floats(allow_nan=True), st.integers(-2**70, 2**70),
    st.lists(st.integers(-3, 3), max_size=3), st.binary(max_size=4), st.complex_numbers(),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2), st.just(object()), st.just(()),
)
HYP = settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def valid(acl_runtime):
    """Valid LeakyReluBackward / HardtanhBackward arguments kept for the whole module."""
    from conftest import AclEnv
    env = AclEnv()
    x = np.array([1.0, -1.0], F32)
    yield {"env": env, "g": env.put(x).tensor, "x": env.put(x).tensor, "out": env.out((2,), F32).tensor,
           "s": env.scalar(0.5, "DOUBLE")}
    env.close()


def _is_status_tuple(r, n):
    return isinstance(r, tuple) and len(r) == n and isinstance(r[-1], int) and not isinstance(r[-1], bool)


@HYP
@given(garbage=GARBAGE, pos=st.integers(0, 4))
def test_leaky_phase1_garbage(valid, garbage, pos):
    args = [valid["g"], valid["x"], valid["s"], False, valid["out"]]
    args[pos] = garbage
    r = LEAKY.phase1(*args)
    assert _is_status_tuple(r, 3), r
    if pos != 3:  # a wrong type where a tensor / scalar is required
        assert r[-1] != 0
        assert isinstance(acl.get_recent_err_msg(), str)
    acl.get_recent_err_msg()


@HYP
@given(garbage=GARBAGE, pos=st.integers(0, 4))
def test_hardtanh_phase1_garbage(valid, garbage, pos):
    args = [valid["g"], valid["x"], valid["s"], valid["s"], valid["out"]]
    args[pos] = garbage
    r = HARDTANH.phase1(*args)
    assert _is_status_tuple(r, 3), r
    assert r[-1] != 0
    assert isinstance(acl.get_recent_err_msg(), str)


@HYP
@given(garbage=GARBAGE, pos=st.integers(0, 3))
def test_phase2_garbage(valid, garbage, pos):
    ws, ex, ret = LEAKY.phase1(valid["g"], valid["x"], valid["s"], False, valid["out"])
    assert ret == 0
    env = valid["env"]
    workspace = env.malloc(ws) if ws else None
    args = [workspace, ws, ex, env.stream]
    args[pos] = garbage
    for fn in (LEAKY.phase2, HARDTANH.phase2):
        r = fn(*args)
        assert isinstance(r, int) and not isinstance(r, bool)
        if pos == 2:
            assert r != 0, "a garbage executor must be refused"
    acl.rt.synchronize_stream(env.stream)
    acl.get_recent_err_msg()


@HYP
@given(garbage=GARBAGE, pos=st.integers(0, 6))
def test_create_tensor_garbage(valid, garbage, pos):
    addr = valid["env"].malloc(64)
    args = [[2, 2], acl.ACL_FLOAT, [2, 1], 0, acl.ACL_FORMAT_ND, [2, 2], addr]
    args[pos] = garbage
    t = acl.create_tensor(*args)  # None or a tensor; never an exception
    if t is not None:
        r = LEAKY.phase1(t, valid["x"], valid["s"], False, valid["out"])
        assert _is_status_tuple(r, 3)
        acl.destroy_tensor(t)
    acl.get_recent_err_msg()


@pytest.mark.parametrize("args", [
    ("shape", acl.ACL_FLOAT, [1], 0, 2, [1], 0),
    ([2, 2], "float", [2, 1], 0, 2, [4], 0),
    ([2, 2], acl.ACL_FLOAT, [2, 1], 0, 2, [4], "addr"),
    ([-1, 2], acl.ACL_FLOAT, [2, 1], 0, 2, [4], 0),
    ([2, 2], acl.ACL_FLOAT, [-2, 1], 0, 2, [4], 0),
    ([2, 2], acl.ACL_FLOAT, [2, 1], -1, 2, [4], 0),
    ([2.5, 2], acl.ACL_FLOAT, [2, 1], 0, 2, [4], 0),
    ([2, 2], 9999, [2, 1], 0, 2, [4], 0),
    ([2, 2], acl.ACL_FLOAT, [2], 0, 2, [4], 0),
    ([2, 2], acl.ACL_FLOAT, [2, 1], 1, 2, [4], 0),  # its last element one past the storage's
], ids=["str-shape", "str-dtype", "str-addr", "neg-dim", "neg-stride", "neg-offset", "float-dim",
        "bad-dtype", "stride-rank", "one-past-storage"])
def test_create_tensor_rejects(valid, args):
    args = list(args)
    if args[-1] == 0:
        args[-1] = valid["env"].malloc(64)
    assert acl.create_tensor(*args) is None
    msg = acl.get_recent_err_msg()  # named by its call, as every runtime refusal is
    assert isinstance(msg, str) and msg.startswith("create_tensor: ") and msg.count("create_tensor") == 1


def test_create_scalar_rejects():
    for value, dtype in (("abc", acl.ACL_FLOAT), (1.0, 9999), (None, acl.ACL_FLOAT), (1e400j, acl.ACL_FLOAT)):
        assert acl.create_scalar(value, dtype) is None
        assert acl.get_recent_err_msg().startswith("create_scalar: value" if dtype != 9999 else "create_scalar: ")


def test_create_scalar_refuses_an_address_for_the_value(acl_env):
    """Found by a breaker porting ``aclCreateScalar(&negativeSlopeValue, ACL_FLOAT)`` line by
    line: the pointer numpy_to_ptr gave was taken as the value (a slope of 9.5e13, no error).
    An int that is a live host or device address is refused, for any dtype, saying that
    create_scalar takes the number itself and how to pass it (the value the host bytes hold)."""
    slope = np.array([0.01], np.float32)
    ptr = acl.util.numpy_to_ptr(slope)
    take = ", not a number: create_scalar takes the value itself, not its address as aclCreateScalar does; "
    for dtype in (acl.ACL_FLOAT, acl.ACL_INT64, acl.ACL_INT8, acl.ACL_DOUBLE):
        assert acl.create_scalar(ptr, dtype) is None
        assert acl.create_scalar(np.uint64(ptr + 2), dtype) is None  # inside it, as a NumPy int
    assert acl.create_scalar(ptr, acl.ACL_FLOAT) is None
    assert acl.get_recent_err_msg() == (
        f"create_scalar: value {ptr:#x} is an address of host memory (acl.util.numpy_to_ptr / bytes_to_ptr)"
        f"{take}pass the number: acl.create_scalar(0.01, acl.ACL_FLOAT) (0.01 is what the 4 bytes there "
        "hold as ACL_FLOAT)")
    data = np.array([-3], np.int64).tobytes()
    bptr = acl.util.bytes_to_ptr(data)
    assert acl.create_scalar(bptr, acl.ACL_INT64) is None
    assert acl.get_recent_err_msg() == (
        f"create_scalar: value {bptr:#x} is an address of host memory (acl.util.numpy_to_ptr / bytes_to_ptr)"
        f"{take}pass the number: acl.create_scalar(-3, acl.ACL_INT64) (-3 is what the 8 bytes there hold "
        "as ACL_INT64)")
    host, ret = acl.rt.malloc_host(8)
    assert ret == 0
    dev = acl_env.malloc(8)
    try:
        assert acl.create_scalar(host, acl.ACL_INT8) is None
        assert acl.get_recent_err_msg() == (
            f"create_scalar: value {host:#x} is an address of pinned host memory (acl.rt.malloc_host){take}"
            "pass the number: acl.create_scalar(0, acl.ACL_INT8) (0 is what the 1 byte there holds as ACL_INT8)")
        assert acl.create_scalar(dev, acl.ACL_FLOAT) is None
        assert acl.get_recent_err_msg() == (
            f"create_scalar: value {dev:#x} is an address of device memory (acl.rt.malloc){take}"
            "pass the number, as in acl.create_scalar(0.01, acl.ACL_FLOAT)")
    finally:
        assert acl.rt.free_host(host) == 0
    # a plain int that is no live address is a value as before
    s = acl.create_scalar(2**40, acl.ACL_INT64)
    assert s is not None and s.value == 2**40 and acl.destroy_scalar(s) == 0
    assert slope[0] == np.float32(0.01) and data == np.array([-3], np.int64).tobytes()


def test_create_scalar_address_refusal_gaps(acl_env):
    """(A regression breaker) a 0-d array holding a live address was stored, where the same
    number as np.int64 was refused: it is unwrapped first, as aclScalar unwraps it. The call
    suggested where the bytes cannot be read (device memory, a short buffer) names the caller's
    dtype, not always ACL_FLOAT; a NaN or inf held is written as Python reads it."""
    take = ", not a number: create_scalar takes the value itself, not its address as aclCreateScalar does; "
    dev = acl_env.malloc(8)
    assert acl.create_scalar(np.array(dev), acl.ACL_INT64) is None
    assert acl.get_recent_err_msg() == (
        f"create_scalar: value {dev:#x} is an address of device memory (acl.rt.malloc){take}"
        "pass the number, as in acl.create_scalar(1, acl.ACL_INT64)")
    for dtype, call in ((acl.ACL_BOOL, "True, acl.ACL_BOOL"), (acl.ACL_DOUBLE, "0.01, acl.ACL_DOUBLE"),
                        (acl.ACL_COMPLEX64, "0.01, acl.ACL_COMPLEX64"), (acl.ACL_INT4, "0.01, acl.ACL_FLOAT")):
        assert acl.create_scalar(dev, dtype) is None
        assert acl.get_recent_err_msg().endswith(f"pass the number, as in acl.create_scalar({call})")
    short = np.zeros(2, np.uint8)
    ptr = acl.util.numpy_to_ptr(short)
    assert acl.create_scalar(ptr, acl.ACL_INT32) is None
    assert acl.get_recent_err_msg().endswith("pass the number, as in acl.create_scalar(1, acl.ACL_INT32)")
    special = np.array([np.nan, np.inf, -np.inf], np.float32)
    ptr = acl.util.numpy_to_ptr(special)
    for i, literal in enumerate(("float('nan')", "float('inf')", "-float('inf')")):
        assert acl.create_scalar(np.array(ptr + 4 * i), acl.ACL_FLOAT) is None
        assert acl.get_recent_err_msg().endswith(
            f"pass the number: acl.create_scalar({literal}, acl.ACL_FLOAT) ({literal} is what the 4 bytes there "
            "hold as ACL_FLOAT)")


def test_create_scalar_address_check_does_not_walk_the_registry(monkeypatch):
    """(A regression breaker) every int >= 64 KiB passed to create_scalar ran the host
    registry's prune, which reads every held registration (bytes_to_ptr's): 20 000 live ones
    made a create_scalar 15.7 ms. The membership test bisects to the registrations that can
    hold the int, and prunes only where a held one covers it (its liveness is what the prune
    tells): a freed one is then no address, a live one still is."""
    from opsnn.acl import _host
    datas = [i.to_bytes(8, "little") for i in range(300)]
    ptrs = [acl.util.bytes_to_ptr(d) for d in datas]
    calls = []
    prune = _host._prune
    monkeypatch.setattr(_host, "_prune", lambda: (calls.append(1), prune())[1])
    for value in (100000, 2**40, max(ptrs) + 2**30):
        s = acl.create_scalar(value, acl.ACL_INT64)
        assert s is not None and s.value == value and acl.destroy_scalar(s) == 0
    assert calls == []
    assert acl.create_scalar(ptrs[5] + 3, acl.ACL_INT64) is None  # a live one is found, prune or not
    assert acl.get_recent_err_msg().startswith(f"create_scalar: value {ptrs[5] + 3:#x} is an address of host memory")
    freed = ptrs[7]
    del datas[7]
    s = acl.create_scalar(freed, acl.ACL_INT64)  # its bytes object is gone: a number again
    assert s is not None and s.value == freed and acl.destroy_scalar(s) == 0


def test_create_scalar_takes_a_0d_array_and_lists_the_types_it_takes():
    """A 0-d NumPy array is taken as its item, as a NumPy scalar is (it was "cannot be stored as
    ACL_FLOAT"); a value of another type is refused naming the types taken."""
    s = acl.create_scalar(np.array(0.01, np.float32), acl.ACL_FLOAT)
    assert s is not None and s.value == np.float32(0.01) and s.value.dtype == np.float32
    assert acl.destroy_scalar(s) == 0
    s = acl.create_scalar(np.array(7), acl.ACL_INT32)
    assert s is not None and s.value == 7 and acl.destroy_scalar(s) == 0
    assert acl.create_scalar(np.array([0.01]), acl.ACL_FLOAT) is None
    assert acl.get_recent_err_msg() == (
        "create_scalar: value array([0.01]) cannot be stored as ACL_FLOAT: it takes a bool, int or float "
        "(Python's or NumPy's, ml_dtypes' bfloat16, or a 0-d NumPy array of one), got an ndarray of shape (1,)")
    assert acl.create_scalar("0.01", acl.ACL_FLOAT) is None
    assert acl.get_recent_err_msg() == (
        "create_scalar: value '0.01' cannot be stored as ACL_FLOAT: it takes a bool, int or float "
        "(Python's or NumPy's, ml_dtypes' bfloat16, or a 0-d NumPy array of one), got str")
    assert acl.create_scalar("1", acl.ACL_COMPLEX64) is None
    assert acl.get_recent_err_msg() == (
        "create_scalar: value '1' cannot be stored as ACL_COMPLEX64: it takes an int, float or complex "
        "(Python's or NumPy's, ml_dtypes' bfloat16, or a 0-d NumPy array of one), got str")


def test_runtime_garbage_returns_status(acl_env):
    for r in (acl.rt.malloc("x", 0), acl.rt.malloc(-5, 0), acl.rt.malloc(16, "policy"),
              acl.rt.malloc_host("x")):
        assert _is_status_tuple(r, 2) and r[-1] != 0, r
    for r in (acl.rt.free("x"), acl.rt.free(123456789), acl.rt.free_host("x"),
              acl.rt.memcpy("x", 4, b"abcd", 4, acl.ACL_MEMCPY_HOST_TO_DEVICE),
              acl.rt.memcpy(acl_env.malloc(4), 4, b"abcd", 8, acl.ACL_MEMCPY_HOST_TO_DEVICE),
              acl.rt.memcpy(acl_env.malloc(4), 4, b"abcd", 4, 99),
              acl.rt.synchronize_stream("x"), acl.rt.destroy_stream(987654321),
              acl.rt.set_device(-1), acl.destroy_tensor("x"), acl.destroy_scalar(3.5),
              opsnn.aclnn.aclDestroyAclOpExecutor("x"), opsnn.aclnn.aclSetAclOpExecutorRepeatable(None)):
        assert isinstance(r, int) and not isinstance(r, bool) and r != 0, r
    acl.get_recent_err_msg()


def test_memcpy_overflowing_dest_refused(acl_env):
    """count > dest_max is refused and nothing is written."""
    dev = acl_env.malloc(8)
    acl_env.write(dev, np.arange(2, dtype=F32))
    host = np.zeros(1, F32)
    ret = acl.rt.memcpy(host, 4, dev, 8, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    assert ret != 0
    assert host[0] == 0
    acl.get_recent_err_msg()


def test_inputs_untouched_on_py_failure():
    """A failing Pythonic call leaves inputs and a strided out untouched (bytes compared)."""
    g = cases.filled((3, 4), F32, 9)
    x = cases.filled((3, 4), F32, 10)
    ov, ob = cases.out_layout((3, 4), np.dtype(np.int32), "sliced", 5)
    before = ob.copy()
    expect_py_failure(opsnn.leaky_relu_backward, g, x, 0.2, out=ov, status=INVALID,
                      untouched=[g, x, ob], names=["out"])
    assert ob.tobytes() == before.tobytes()


def test_pythonic_scalar_that_is_no_number_is_refused_before_phase_1():
    """A slope that is no number (a string) is refused before the tensors' dtype checks: C makes
    its aclScalar before calling aclnn, where a non-number cannot exist, as torch_npu converts
    its arguments before GetWorkspaceSize; a None argument beside it is still 161001 first."""
    i32 = np.ones(4, np.int32)
    x = np.ones(4, np.float32)
    exc = expect_py_failure(opsnn.leaky_relu_backward, i32, x, "a", status=INVALID, untouched=[i32, x],
                            words=["LeakyReluBackward: negativeSlope must be a number (a Python or NumPy "
                                   "scalar, or a 0-d array), got str"])
    assert "DT_INT32" not in exc.message
    expect_py_failure(opsnn.leaky_relu_backward, i32, None, "a", status=NULLPTR, names=["self"])


def test_pythonic_refusal_naming_a_python_number_says_whose_dtype_it_took():
    """A Python number given as a tensor takes the other input's dtype (a weak scalar); a refusal
    naming it (its dtype or its shape) says what it became, same status (a breaker: leaky_relu_backward(1.0, int32 array) blamed
    gradOutput for DT_INT32, a dtype the caller gave self); a refusal of the array itself gets
    no note, nor does a NumPy scalar (strong: its own dtype)."""
    i32 = np.ones(4, np.int32)
    exc = expect_py_failure(opsnn.leaky_relu_backward, 1.0, i32, status=INVALID, untouched=[i32],
                            names=["gradOutput"], dtypes=["INT32"])
    assert exc.message.endswith("(gradOutput is the Python number 1.0, made a 0-d tensor of self's dtype "
                                "DT_INT32: a Python number takes the other input's dtype)")
    exc = expect_py_failure(opsnn.leaky_relu_backward, 2.5, i32, status=INVALID, names=["gradOutput"])
    assert "(gradOutput is the Python number 2.5, made a 0-d tensor of self's dtype DT_INT32" in exc.message
    assert acl.get_recent_err_msg() == exc.message
    exc = expect_py_failure(opsnn.hardtanh_backward, 2, np.ones(4, F32), status=INVALID,
                            words=["gradOutput shape must equal self shape [4], got []",
                                   "(gradOutput is the Python number 2, made a 0-d tensor of self's dtype DT_FLOAT"])
    exc = expect_py_failure(opsnn.leaky_relu_backward, i32, 1.0, status=INVALID, names=["gradOutput"],
                            dtypes=["INT32"])
    assert "Python number" not in exc.message
    exc = expect_py_failure(opsnn.leaky_relu_backward, np.int32(1), i32, status=INVALID, dtypes=["INT32"])
    assert "Python number" not in exc.message


def test_python_complex_given_as_a_tensor_beside_a_real_one_is_refused_in_opsnns_words():
    """A Python complex given as a tensor beside a real array (it takes that array's dtype) was
    refused with Python's own float() text ("float() argument must be a string or a real number,
    not 'complex'"; ml_dtypes' "expected number, got complex" for bfloat16), a breaker's: the
    refusal names the argument, the dtype it was to take, what it must be and what it is."""
    for dt, shown in ((F32, "float32"), (F16, "float16"), (BF16, "bfloat16")):
        x = np.ones(4, dt)
        for function, args, name, value in (
                (opsnn.leaky_relu_backward, (1 + 2j, x, 0.1), "LeakyReluBackward: gradOutput", "(1+2j)"),
                (opsnn.hardtanh_backward, (x, 1j, -1.0, 1.0), "HardtanhBackward: self", "1j")):
            with pytest.raises(opsnn.AclnnError) as info:
                function(*args)
            assert info.value.status == 161002
            assert info.value.message == (f"{name} {value} cannot be made a {shown} tensor (the other input's "
                                          "dtype): it must be a real number (bool, int or float), got complex")
    c64 = np.ones(2, np.complex64)  # beside a complex array it is one: the dtype check refuses that
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.leaky_relu_backward(1j, c64, 0.1)
    assert "DT_COMPLEX64, which Ascend910B does not support" in info.value.message


def test_python_int_beyond_uint64_given_as_a_tensor_is_shown_briefly():
    """An int beyond int64 and uint64 given as a tensor is refused (161002) showing its value as
    other refusals do (``checks.brief``): it was printed in full, and one of more than 4300 digits,
    which Python will not print in decimal, became an internal error (561000, "Exceeds the limit
    (4300 digits)"), a breaker's."""
    x = np.ones(4, F32)
    for value, shown in ((10**50, "100000000000...000000 (51 characters)"), (10**5000, "<an int of 16610 bits>"),
                         (-2**63 - 1, "-9223372036854775809")):
        with pytest.raises(opsnn.AclnnError) as info:
            opsnn.leaky_relu_backward(value, x, 0.1)
        assert info.value.status == 161002
        assert info.value.message == (f"LeakyReluBackward: gradOutput {shown} is an int beyond int64 and uint64, "
                                      "which no aclDataType holds")


def test_an_int_is_held_from_int64s_low_to_uint64s_high_as_a_tensor_a_scalar_and_a_cli_scalar():
    """One limit (``checks.int_held``) for an int given as a tensor, as a scalar attribute and as
    ``opsnn run --scalar``: -2**63 and 2**64 - 1 are taken, one step beyond either is refused."""
    from opsnn import cli_words

    x = np.ones(2, F32)
    for value in (-2**63, 2**64 - 1):
        assert opsnn.leaky_relu_backward(value, x, 0.1).dtype == F32
        assert opsnn.leaky_relu(x, value).dtype == F32
        assert cli_words.scalar_word(str(value)) == value
    for value in (-2**63 - 1, 2**64):
        with pytest.raises(opsnn.AclnnError) as tensor:
            opsnn.leaky_relu_backward(value, x, 0.1)
        assert tensor.value.message == (f"LeakyReluBackward: gradOutput {value} is an int beyond int64 and uint64, "
                                        "which no aclDataType holds")
        with pytest.raises(opsnn.AclnnError) as scalar:
            opsnn.leaky_relu(x, value)
        assert scalar.value.message.startswith(f"LeakyRelu: negativeSlope must be an int in [-2**63, 2**64) "
                                               f"(int64 or uint64, as torch takes), got {value}")
        with pytest.raises(ValueError) as word:
            cli_words.scalar_word(str(value))
        assert str(word.value) == f"scalar '{value}' is an int beyond int64 and uint64 (what an aclScalar holds)"


def test_a_python_int_past_int64_travels_as_a_double_since_no_scalar_list_takes_uint64():
    """README: a Python int in [2**63, 2**64) is sent as ACL_DOUBLE (rounded twice for a float32
    kernel), because the scalar dtype lists take no ACL_UINT64: the same value as a NumPy uint64
    scalar, which keeps its own dtype, is refused 161002 by the list, while the int runs and gets
    2**63 (int -> double -> float), where torch's once-rounded 2**63 + 2**40 differs."""
    value = 2**63 + 2**39 + 1
    grad, self = np.ones(2, F32), -np.ones(2, F32)
    np.testing.assert_array_equal(opsnn.leaky_relu_backward(grad, self, value), np.full(2, 2.0**63, F32))
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.leaky_relu_backward(grad, self, np.uint64(value))
    assert info.value.status == 161002
    assert info.value.message.startswith("LeakyReluBackward: scalar negativeSlope has dtype DT_UINT64, which "
                                         "Ascend910B does not support; it must be one of [DT_FLOAT, ")


def test_pythonic_refusals_name_the_python_keyword_of_a_cann_argument():
    """A refusal naming a CANN argument that does not read as its Python keyword (Hardtanh's
    clipValueMin, HardtanhBackward's min) says which keyword it is and the value the call used
    (hardtanh of a uint8 array refused clipValueMin, the default min_val of -1.0, in names the
    call never used: a breaker); names that read as their keyword (gradOutput) get no note."""
    u8 = np.ones(3, np.uint8)
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.hardtanh(u8)
    assert info.value.status == 161002 and info.value.message.endswith(
        "(Python arguments: clipValueMin is min_val = -1.0)")
    assert acl.get_recent_err_msg() == info.value.message
    x = np.ones(3, np.float32)
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.hardtanh_backward(x, x, None, 1.0)
    assert info.value.status == 161001 and info.value.message.endswith("(Python arguments: min is min_val = None)")
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.leaky_relu_backward(x, x[:2], 0.1)
    assert "gradOutput" in info.value.message and "Python arguments" not in info.value.message
