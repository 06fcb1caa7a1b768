"""Op definitions as data, lookup by kernel or aclnn name per SoC, and the infershape UT outcomes
(spec §7.1, §7.2, §9.2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from opsnn import opdef
from opsnn._core.dtypes import DataType as D
from opsnn._core.dtypes import Format
from opsnn._core.platform import get_profile
from opsnn._core.status import AclnnError, Status
from opsnn.opdef import InferShapeError, TensorDesc

A950, A910B, A910_93 = get_profile("Ascend950"), get_profile("Ascend910B"), get_profile("Ascend910_93")
ROWS3 = ((D.BF16,) * 3, (D.FLOAT16,) * 3, (D.FLOAT,) * 3)


def test_leaky_relu_grad_def():
    op, alias = opdef.find("LeakyReluGrad")
    assert alias is None and (op.name, op.variant) == ("LeakyReluGrad", "main")
    assert (op.inputs, op.outputs) == (("gradients", "features"), ("backprops",))
    assert op.attrs == (opdef.AttrDef("negative_slope", "float", False, 0.0),)
    assert op.dtype_rows == ROWS3 and op.formats == (Format.ND,)
    assert (op.soc, op.op_file) == ("ascend950", "leaky_relu_grad_apt")


def test_hardtanh_grad_defs_main_and_experimental():
    main, _ = opdef.find("HardtanhGrad", A950)
    exp, _ = opdef.find("HardtanhGrad", A910B)
    for op in (main, exp):
        assert (op.inputs, op.outputs) == (("result", "grad"), ("y",))
        assert op.attrs == (opdef.AttrDef("min_val", "float", True, -1.0), opdef.AttrDef("max_val", "float", True, 1.0))
        assert op.dtype_rows == ROWS3
    assert (main.variant, main.soc, main.op_file) == ("main", "ascend950", "hardtanh_grad_apt")
    assert (exp.variant, exp.soc) == ("experimental", "ascend910b")
    assert exp.source.startswith("NN:experimental/")


def test_leaky_relu_def():
    op, _ = opdef.find("LeakyRelu", A950)
    assert (op.inputs, op.outputs, op.soc, op.op_file) == (("x",), ("y",), "ascend950", "leaky_relu_apt")
    assert op.dtype_rows == ((D.BF16,) * 2, (D.FLOAT16,) * 2, (D.FLOAT,) * 2)


@pytest.mark.parametrize(("name", "kernel", "inputs"), [
    ("HardtanhBackward", "HardtanhGrad", (1, 0)), ("aclnnHardtanhBackward", "HardtanhGrad", (1, 0)),
    ("leakyrelubackward", "LeakyReluGrad", (0, 1)), ("aclnnLeakyRelu", "LeakyRelu", (0,)),
])
def test_aclnn_names_map_onto_kernel_ops(name, kernel, inputs):
    op, alias = opdef.find(name, A950)
    assert op.name == kernel and alias.kernel == kernel and alias.kernel_inputs == inputs


def test_a_name_that_is_both_is_the_kernel_op_unless_prefixed():
    assert opdef.find("LeakyRelu")[1] is None
    assert opdef.find("aclnnLeakyRelu")[1].api == "LeakyRelu"


def test_hardtanh_backward_feeds_self_as_result():
    _, alias = opdef.find("HardtanhBackward")
    feeds = {kernel_input: alias.tensors[i] for kernel_input, i in zip(("result", "grad"), alias.kernel_inputs)}
    assert feeds == {"result": "self", "grad": "gradOutput"}
    assert dict(alias.attrs) == {"min": "min_val", "max": "max_val"}


def test_a_name_past_ascii_names_no_op():
    """lower() read the Kelvin sign (U+212A) as k, so opdef.find('Lea\u212aYReluGrad') found
    LeakyReluGrad, a name never typed (the CLI refused it; the Python API did not). Worded as
    find's other refusals: 'no op definition for', the reason in brackets, the names it takes
    (it had been "no op named ...", naming none)."""
    with pytest.raises(ValueError) as exc:
        opdef.find("Lea\u212aYReluGrad")
    assert str(exc.value) == ("no op definition for 'Lea\u212aYReluGrad' ('\u212a' (U+212A) is not ASCII, as no op "
                              "name is): opsnn has the tilings of HardtanhBackward, HardtanhGrad, InplaceLeakyRelu, "
                              "LeakyRelu, LeakyReluBackward, LeakyReluGrad")


@pytest.mark.parametrize("name, kernel, api", [("aclnnHardtanhGrad", "HardtanhGrad", "aclnnHardtanhBackward"),
                                                (" ACLNNLEAKYRELUGRAD", "LEAKYRELUGRAD", "aclnnLeakyReluBackward")])
def test_a_kernel_op_named_as_an_aclnn_api_is_told_the_api_of_its_kernel(name, kernel, api):
    """(A regression breaker) aclnnHardtanhGrad was told the four APIs opsnn tiles, where the CLI
    tells aclnn_hardtanh_grad, the same mistake, the one API of that kernel: both say that one."""
    with pytest.raises(ValueError) as exc:
        opdef.find(name)
    assert str(exc.value) == (f"no aclnn API named {name!r}: {kernel} is a kernel op (name it without "
                              f"{name.strip()[:5]!r}); the aclnn API of its kernel is {api}")


def test_lookup_failures():
    with pytest.raises(ValueError, match=r"no op definition for 'Relu' \(did you mean LeakyRelu\?\): opsnn has the tilings of HardtanhBackward, HardtanhGrad"):
        opdef.find("Relu")
    with pytest.raises(AclnnError) as err:
        opdef.find("LeakyReluGrad", A910B)
    assert err.value.status == Status.ERR_INNER_FIND_KERNEL_ERROR
    assert "LeakyReluGrad has no op_host config for Ascend910B (configs: ascend950)" in err.value.message
    with pytest.raises(AclnnError, match="configs: ascend950, ascend910b"):
        opdef.find("HardtanhGrad", A910_93)  # the experimental config names ascend910b only


def test_tile_checks_the_soc_and_the_tensor_count():
    main, _ = opdef.find("HardtanhGrad", A950)
    desc = TensorDesc((4,), D.FLOAT)
    with pytest.raises(AclnnError) as err:
        opdef.tile(main, A910B, [desc, desc], [desc])
    assert err.value.status == Status.ERR_INNER_FIND_KERNEL_ERROR
    assert "built for ascend950, not Ascend910B" in err.value.message
    with pytest.raises(ValueError, match="takes inputs"):
        opdef.tile(main, A950, [desc], [desc])


def test_match_dtypes_and_attr_values():
    op, _ = opdef.find("LeakyReluGrad")
    assert op.match_dtypes([D.FLOAT16] * 3) == 1
    assert op.match_dtypes([D.FLOAT, D.FLOAT16, D.FLOAT]) is None
    assert op.attr_values({}) == {"negative_slope": 0.0}
    with pytest.raises(ValueError, match=r"no attr \['alpha'\]"):
        op.attr_values({"alpha": 0.1})  # the UTs set "alpha", but attrs are read by index in ops-nn


# ---- infershape (test_leaky_relu_grad_infershape.cpp, test_hardtanh_grad_infershape.cpp, ...) ----


@pytest.mark.parametrize(("a", "b", "out"), [
    ((-1, -1), (-1, -1), (-1, -1)),
    ((1, 16), (16, 16), (16, 16)),
    ((2, 3, 4), (2, 3, 4), (2, 3, 4)),
    ((1, 3, 8, 8), (2, 3, 8, 8), (2, 3, 8, 8)),
    ((2, 3, 4, 5, 6), (2, 3, 4, 5, 6), (2, 3, 4, 5, 6)),
    ((0, 0), (0, 0), (0, 0)),
    ((), (), ()),
    ((1024, 1024), (1024, 1024), (1024, 1024)),
    ((-1, 1), (1, 5), (-1, 5)),
    ((-1,), (0,), (0,)),
    ((0, 1), (1, 3), (0, 3)),
    ((3,), (2, 1), (2, 3)),
    ((-2,), (4, 4), (-2,)),
])
def test_leaky_relu_grad_infershape_broadcasts(a, b, out):
    op, _ = opdef.find("LeakyReluGrad")
    assert op.infer_shape([a, b]) == out


@pytest.mark.parametrize(("a", "b"), [((0,), (3,)), ((2, 3), (3, 2))])
def test_leaky_relu_grad_infershape_failures(a, b):
    op, _ = opdef.find("LeakyReluGrad")
    with pytest.raises(InferShapeError) as err:
        op.infer_shape([a, b])
    assert err.value.status == Status.ERR_INNER_NULLPTR
    assert f"shapes {list(a)} and {list(b)} cannot broadcast" in err.value.message


def test_hardtanh_grad_infershape_main_uses_input_0_experimental_input_1():
    main, _ = opdef.find("HardtanhGrad", A950)
    exp, _ = opdef.find("HardtanhGrad", A910B)
    assert main.infer_shape([(-1, 8, 375), (-1, 8, 375)]) == (-1, 8, 375)
    assert main.infer_shape([(2, 3), (6,)]) == (2, 3)
    assert exp.infer_shape([(2, 3), (6,)]) == (6,)
    assert main.infer_shape([(-2,), (3,)]) == (-2,)
    # mixed dtypes: infershape never looks at dtypes, so the UT's f16/f32 mix succeeds
    assert main.match_dtypes([D.FLOAT16, D.FLOAT, D.FLOAT16]) is None


@pytest.mark.parametrize("shape", [(2, 3), (0,), (), (1, 0, 4), (-1, 4)])
def test_leaky_relu_infershape_copies_the_input(shape):
    op, _ = opdef.find("LeakyRelu")
    assert op.infer_shape([shape]) == shape


def test_tensor_desc_reads_ints_and_data_types_and_refuses_the_rest():
    """(A breaker) TensorDesc took anything: (4.0, 4) tiled with block_dim 1.0, NumPy int dims made
    NumPy ints of the tiling fields (json.dumps of to_dict() failed), 'float16' as dtype was a
    TilingError naming '<unknown aclDataType float16>' on the main def and a bare ValueError on
    the experimental one, and ('4', '4') a TypeError. Dims, strides and dtype are now read once:
    Python ints (any index-like int, dynamic -1/-2 kept), a DataType or its value; else ValueError."""
    desc = TensorDesc([np.int64(4), np.int32(4)], 1, np.array([4, 1]))
    assert desc == TensorDesc((4, 4), D.FLOAT16, (4, 1))
    assert all(type(v) is int for v in (*desc.shape, *desc.strides)) and type(desc.dtype) is D
    assert TensorDesc((-1, 8), D.FLOAT).shape == (-1, 8) and TensorDesc((), D.FLOAT, ()).strides == ()
    op, _ = opdef.find("HardtanhGrad", A950)
    t = TensorDesc([np.int64(4), np.int64(4)], D.FLOAT16)
    result = opdef.tile(op, A950, [t, t], [t], {})
    assert type(result.block_dim) is int and json.loads(json.dumps(result.tiling_data.to_dict()))["baseTiling"]["dim0"] == 16
    for shape, what in (((4.0, 4), "shape[0] must be an int, got 4.0"), (("4", "4"), "shape[0] must be an int, got '4'"),
                        ((True, 4), "shape[0] must be an int, got True"), (None, "shape must be a sequence of ints, got None"),
                        (4, "shape must be a sequence of ints, got 4")):
        with pytest.raises(ValueError) as err:
            TensorDesc(shape, D.FLOAT16)
        assert str(err.value) == f"TensorDesc {what}"
    with pytest.raises(ValueError) as err:
        TensorDesc((4,), D.FLOAT16, (1.5,))
    assert str(err.value) == "TensorDesc strides[0] must be an int, got 1.5"
    for dtype, shown in (("float16", "'float16'"), (np.float16, "<class 'numpy.float16'>"), (999, "999"), (1.0, "1.0")):
        with pytest.raises(ValueError) as err:
            TensorDesc((4,), dtype)
        assert str(err.value) == f"TensorDesc dtype must be a DataType (or its int value), got {shown}"


def test_tensor_desc_refuses_a_bool_dtype_as_it_refuses_a_bool_dim():
    """(A breaker) TensorDesc refused True as a dim, 'no dim anyone means', but took True as a
    dtype: bool is an int to operator.index, so TensorDesc((4,), True) was DT_FLOAT16 and False
    DT_FLOAT (and np.True_ was refused), where plan_host and attr_values refuse bools too. A
    bool dtype is now the ValueError any other non-DataType is; 0 and 1 stay their DataTypes."""
    for dtype in (True, False, np.True_):
        with pytest.raises(ValueError) as err:
            TensorDesc((4,), dtype)
        assert str(err.value) == f"TensorDesc dtype must be a DataType (or its int value), got {dtype!r}"
    assert TensorDesc((4,), 0).dtype is D.FLOAT and TensorDesc((4,), np.int32(1)).dtype is D.FLOAT16


def test_tensor_desc_refuses_a_0d_array_as_shape_naming_the_field():
    """(A breaker) a NumPy 0-d array has __iter__, so TensorDesc took it for a sequence and raised
    NumPy's bare TypeError 'iteration over a 0-d array', where 4 is refused as 'shape must be a
    sequence of ints'. It is now that ValueError, for strides too; a 1-d array stays a shape."""
    for field, desc in (("shape", lambda v: TensorDesc(v, D.FLOAT16)), ("strides", lambda v: TensorDesc((4,), D.FLOAT16, v))):
        with pytest.raises(ValueError) as err:
            desc(np.array(4))
        assert str(err.value) == f"TensorDesc {field} must be a sequence of ints, got array(4)"
    assert TensorDesc(np.array([4, 2]), D.FLOAT16).shape == (4, 2)


def test_attr_values_refuse_what_is_no_real_number_naming_the_attr():
    """(A breaker) opdef.tile's attrs raised what float() raised: ValueError "could not convert
    string to float: 'abc'" (and read '-2' as -2.0), TypeError for None, OverflowError for
    10**400, none naming the attr, where `opsnn tiling --min-val abc` is a usage error. A real
    number (int, float, NumPy's) is read as float; anything else is a ValueError naming it."""
    op, _ = opdef.find("HardtanhGrad", A950)
    assert op.attr_values({"min_val": np.float32(-2), "max_val": 3}) == {"min_val": -2.0, "max_val": 3.0}
    assert np.isnan(op.attr_values({"min_val": float("nan")})["min_val"])
    # a 0-d array is its number, as opsnn.functional's scalars take it (a regression breaker: refused)
    assert op.attr_values({"min_val": np.array(-2.5), "max_val": np.array(3, np.int8)}) == {"min_val": -2.5,
                                                                                             "max_val": 3.0}
    for value, shown in (("abc", "'abc'"), ("-2", "'-2'"), (None, "None"), (True, "True"), (10**400, "an int of 1329 bits"),
                         (np.array([1.0]), "array([1.])"), (np.array(True), "array(True)"),
                         # a 0-d array's int is shown as a bare one is: its repr, thousands of digits,
                         # past 4300 raised int's own ValueError naming no attr
                         (np.array(10**400, dtype=object), "an int of 1329 bits"),
                         (np.array(10**5000, dtype=object), "an int of 16610 bits")):
        with pytest.raises(ValueError) as err:
            op.attr_values({"min_val": value})
        assert str(err.value) == f"HardtanhGrad attr min_val must be a real number within float64's range, got {shown}"
    t = TensorDesc((4,), D.FLOAT16)
    with pytest.raises(ValueError, match="attr max_val must be a real number"):
        opdef.tile(op, A950, [t, t], [t], {"max_val": "1"})


def test_find_reads_a_name_with_surrounding_whitespace_as_run_and_describe_do():
    """(A breaker) `opsnn tiling ' LeakyRelu'` (a quoting slip) was 'no op definition ... (did you
    mean LeakyRelu?)' where `opsnn run` and `opsnn describe` take the name, and --soc reads
    ' ascend950 ': find strips the name before reading it, the error still shows it as given."""
    assert opdef.find(" HardtanhGrad\t", A950)[0] is opdef.find("HardtanhGrad", A950)[0]
    assert opdef.find(" aclnnLeakyRelu ")[1].api == "LeakyRelu" and opdef.find(" LeakyRelu ")[1] is None
    with pytest.raises(ValueError, match=r"no op definition for ' Nope '"):
        opdef.find(" Nope ")
