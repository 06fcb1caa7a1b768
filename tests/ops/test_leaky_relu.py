"""LeakyRelu quirks (docs/decisions-forward.md F1-F3, F10): the float32 slope, the CanCast check
at the dtype stage, product lines, the Pythonic default, and the plan of an in-place call."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import cases
import opsnn
from cases import BF16, F16, F32, F64
from conftest import expect_py_failure
from opsnn import engine, registry
from opsnn._core.dtypes import DataType
from opsnn._core.tensor import ArrayTensor, aclScalar

INVALID, FIND_KERNEL = 161002, 561003


def test_default_slope_is_torchs():
    x = np.array([-3.0, 2.0], F32)
    cases.assert_bits_equal(opsnn.leaky_relu(x), np.array([np.float32(-3.0) * np.float32(0.01), 2.0], F32))
    y = x.copy()
    assert opsnn.leaky_relu_(y) is y
    cases.assert_bits_equal(y, opsnn.leaky_relu(x, 0.01))


@pytest.mark.parametrize("dtype", (F16, BF16), ids=str)
def test_half_types_round_once(dtype):
    """F1: fp16/bf16 multiply in float32 and round once (no double rounding through the dtype)."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-8, 0, 4096).astype(dtype)
    for slope in (0.1, 0.3, -1.7, 1e-3):
        want = (x.astype(F32) * np.float32(slope)).astype(dtype)
        cases.assert_bits_equal(opsnn.leaky_relu(x, slope), want)


def test_slope_overflow_and_precision():
    """F1: ToFloat rounds the slope to float32 (overflow -> inf); DOUBLE self keeps that slope."""
    x = np.array([-1.0, -0.0, 2.0], F32)
    cases.assert_bits_equal(opsnn.leaky_relu(x, 1e39), np.array([-np.inf, np.nan, 2.0], F32))
    h = np.array([-1.0], F16)
    assert opsnn.leaky_relu(h, 1e5)[0] == -np.inf  # float32 product -1e5 rounds to fp16 -inf
    d = np.array([-1.0], F64)
    assert opsnn.leaky_relu(d, 1 / 3)[0] == -float(np.float32(1 / 3))


def test_complex_slope_is_zero(caplog):
    x = np.array([-1.0, 1.0], F32)
    with caplog.at_level(logging.WARNING, logger="opsnn"):
        cases.assert_bits_equal(opsnn.leaky_relu(x, 0.5 + 2j), np.array([-0.0, 1.0], F32))
    assert "cannot be converted" in caplog.text


def test_cancast_is_a_dtype_check():
    """F3: ops-nn checks CanCast(self, out) with the dtypes, before the rank and shape checks."""
    x = np.zeros((2,) * 9, F32)
    out = np.zeros((2, 3), np.int32)
    expect_py_failure(opsnn.leaky_relu, x, out=out, status=INVALID, names=["out"], dtypes=["INT32"],
                      words=["cast"], untouched=[x, out])
    x = np.zeros((2, 3), np.int32)
    expect_py_failure(opsnn.leaky_relu, x, out=out, status=INVALID, names=["self"], dtypes=["INT32"])


@pytest.mark.parametrize("soc", ("Ascend310P", "Ascend310B"))
def test_unsupported_product_lines(soc):
    """F2: the doc's product matrix excludes Atlas inference and Atlas 200I/500 A2: 561003 after
    every parameter check and the empty fast path."""
    with opsnn.use_soc(soc):
        x = np.array([-1.0], F32)
        expect_py_failure(opsnn.leaky_relu, x, status=FIND_KERNEL, words=[soc, "not supported"])
        expect_py_failure(opsnn.leaky_relu, x.astype(BF16), status=INVALID, dtypes=["BF16"])
        expect_py_failure(opsnn.leaky_relu_, x, status=FIND_KERNEL, words=[soc])
        assert opsnn.leaky_relu(np.zeros((2, 0), F64)).shape == (2, 0)
        if soc == "Ascend310P":  # Hardtanh is supported on Atlas inference
            assert opsnn.hardtanh(np.array([-2.0], F32)).tolist() == [-1.0]


def test_double_accepted_everywhere_it_is_listed():
    """F2: DOUBLE self for the out-of-place API too (the doc's table omits it)."""
    for soc in ("Ascend910", "Ascend910B", "Ascend950"):
        with opsnn.use_soc(soc):
            assert opsnn.leaky_relu(np.array([-2.0], F64), 0.5).tolist() == [-1.0]


def test_inplace_plan_and_spec():
    """F8: the in-place spec is the out-of-place one with out = self and no null check of out."""
    spec = registry.get("aclnnInplaceLeakyRelu")
    base = registry.get("LeakyRelu")
    assert spec.inplace and not base.inplace
    assert spec.null_order == ("self", "negative_slope") and base.null_order == ("self", "negative_slope", "out")
    assert (spec.kernel, spec.params, spec.unsupported_socs) == (base.kernel, base.params, base.unsupported_socs)
    x = np.arange(12, dtype=F16).reshape(3, 4)[:, ::2]  # strided self
    t = ArrayTensor(x)
    ex = engine.plan(spec, {"self": t, "negative_slope": aclScalar(0.5, DataType.DOUBLE), "out": t})
    assert [s.kind for s in ex.plan.steps] == ["Contiguous", "Kernel", "ViewCopy"]
    kernel = ex.plan.steps[1]
    assert kernel.compute == DataType.FLOAT and kernel.scalars == (("negative_slope", 0.5),)
    assert ex.workspace_size == 2 * 512
