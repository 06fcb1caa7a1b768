"""opsnn.torch operators: registration, bit-exactness against torch.nn.functional / aten, autograd
(gradcheck, gradgradcheck, which backward runs), fake/meta kernels, zero-copy passage, errors.

Bit-exactness is asserted on the raw bits (so -0.0 vs +0.0 counts), with two documented
exclusions: NaN in ``self`` for hardtanh_backward (DECISION 8: opsnn passes the gradient, torch's
SIMD path zeroes it in some positions), and NaN *payloads* (NaN positions are compared exactly).
torch's CPU conversions invent payloads: its AVX512 float->bf16 path writes every NaN as 0xFFFF
(the scalar path 0x7FC0) and half->float gives 0x7FFFFFFF, while opsnn converts with NumPy /
ml_dtypes (the quiet NaN with the sign kept, 0x7FC00000 / 0xFFC0). float32 and float16 results
from same-dtype inputs happen to agree on payloads too.
"""

from __future__ import annotations

import fractions
import math
import random
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import opsnn  # noqa: E402
import opsnn.torch as ot  # noqa: E402
from opsnn.torch import AclnnRuntimeError  # noqa: E402

F = torch.nn.functional
aten = torch.ops.aten
ops = torch.ops.opsnn

LOW = (torch.float32, torch.float16, torch.bfloat16)
INT_VIEW = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16,
            torch.float64: torch.int64}
SPECIALS = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1.0, -1.0, 0.5, -0.5, 0.3,
            -0.7, 6.0, 1e-45, -1e-45, 3e38, -3e38, 65504.0, 1e5, -2.5, 7.0]


def assert_same_bits(actual, expected):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    a = actual.contiguous().view(INT_VIEW[actual.dtype])
    e = expected.contiguous().view(INT_VIEW[expected.dtype])
    nan = expected.isnan()
    assert torch.equal(actual.isnan(), nan), "NaN positions differ"
    bad = (a != e) & ~nan
    assert not bad.any(), (f"{int(bad.sum())} elements differ, e.g. at {bad.nonzero()[0].tolist()}: "
                           f"{actual[bad][:4].tolist()} vs {expected[bad][:4].tolist()}")


def values(dtype, shape=(6, 10), seed=0, nan=True):
    """Specials first, then random values, as a tensor of ``shape``."""
    n = 1
    for d in shape:
        n *= d
    gen = torch.Generator().manual_seed(seed)
    special = torch.tensor([v for v in SPECIALS if nan or v == v], dtype=torch.float32)
    rand = torch.randn(n, generator=gen) * 3
    flat = torch.cat([special, rand])[:n] if n > special.numel() else special[:n]
    return flat.reshape(shape).to(dtype)


def layouts(dtype, nan=True, seed=0):
    """(name, tensor) pairs: contiguous, transposed, sliced with steps, expanded (stride 0)."""
    base = values(dtype, (6, 10), seed, nan)
    big = values(dtype, (12, 20), seed + 1, nan)
    row = values(dtype, (1, 10), seed + 2, nan)
    return [("contiguous", base), ("transposed", base.t()), ("sliced", big[::2, 1::2]),
            ("expanded", row.expand(6, 10)), ("0-d", base[0, 3].clone())]


LAYOUT_IDS = ["contiguous", "transposed", "sliced", "expanded", "0-d"]


# ---- registration ---------------------------------------------------------------------------

def test_schemas_follow_aten():
    expected = {
        "leaky_relu": "opsnn::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
        "leaky_relu_": "opsnn::leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)",
        "leaky_relu_backward": "opsnn::leaky_relu_backward(Tensor grad_output, Tensor self, "
                               "Scalar negative_slope, bool self_is_result) -> Tensor",
        "hardtanh": "opsnn::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
        "hardtanh_": "opsnn::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)",
        "hardtanh_backward": "opsnn::hardtanh_backward(Tensor grad_output, Tensor self, "
                             "Scalar min_val, Scalar max_val) -> Tensor",
    }
    for name, schema in expected.items():
        assert str(getattr(ops, name).default._schema) == schema
    assert torch.Tag.inplace in ops.leaky_relu_.default.tags


def test_import_opsnn_does_not_import_torch():
    code = "import sys, opsnn; opsnn.leaky_relu_backward; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_float32_through_opsnn_torch_does_not_import_ml_dtypes():
    """ml_dtypes (~0.7 s to import, 0.7.0) waits for a bfloat16 or float8 tensor; a bfloat16 one
    then crosses and comes back as torch's."""
    code = ("import sys, torch, opsnn.torch\n"
            "x = torch.tensor([-2.0, 0.0, 3.0])\n"
            "assert opsnn.torch.leaky_relu(x, 0.5).tolist() == [-1.0, 0.0, 3.0]\n"
            "assert 'ml_dtypes' not in sys.modules\n"
            "y = opsnn.torch.leaky_relu(x.bfloat16(), 0.5)\n"
            "assert y.dtype == torch.bfloat16 and y.tolist() == [-1.0, 0.0, 3.0]\n"
            "assert 'ml_dtypes' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("op, args", [
    ("leaky_relu", lambda: (torch.randn(3, 4), 0.2)),
    ("leaky_relu", lambda: (torch.randn(3, 4, requires_grad=True), -0.3)),
    ("leaky_relu_", lambda: (torch.randn(3, 4), 0.2)),
    ("hardtanh", lambda: (torch.randn(3, 4, dtype=torch.float16), -0.5, 0.5)),
    ("hardtanh", lambda: (torch.randn(3, 4, requires_grad=True), -0.5, 0.5)),
    ("hardtanh_", lambda: (torch.randn(3, 4), -0.5, 0.5)),
    ("leaky_relu_backward", lambda: (torch.randn(3, 1), torch.randn(1, 4).half(), 0.2, False)),
    ("leaky_relu_backward", lambda: (torch.randn(3, 4, requires_grad=True),
                                     torch.randn(3, 4, requires_grad=True), 0.2, False)),
    ("hardtanh_backward", lambda: (torch.randn(3, 4), torch.randn(3, 4), -0.5, 0.5)),
])
def test_opcheck(op, args):
    """torch.library.opcheck: schema, autograd registration, fake tensor, AOT dispatch."""
    result = torch.library.opcheck(getattr(ops, op), args())
    assert set(result.values()) == {"SUCCESS"}, result


# ---- bit-exactness against torch ------------------------------------------------------------

@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("layout", range(5), ids=LAYOUT_IDS)
def test_forward_bits_match_torch(dtype, layout):
    _, x = layouts(dtype)[layout]
    for slope in (0.01, 0.2, 0.0, -0.5, 1.7):
        assert_same_bits(ot.leaky_relu(x, slope), F.leaky_relu(x, slope))
    for lo, hi in ((-1.0, 1.0), (-0.7, 0.3), (0.0, 6.0), (-0.1, 0.1), (2.0, 2.0)):
        assert_same_bits(ot.hardtanh(x, lo, hi), F.hardtanh(x, lo, hi))
    assert_same_bits(ot.relu6(x), F.relu6(x))


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("layout", [0, 1, 2, 4], ids=["contiguous", "transposed", "sliced", "0-d"])
def test_inplace_forward_bits_match_torch(dtype, layout):
    _, x = layouts(dtype)[layout]
    for ours, theirs, args in ((ot.leaky_relu_, F.leaky_relu_, (0.2,)),
                               (ot.hardtanh_, F.hardtanh_, (-0.7, 0.3))):
        a, b = x.clone(), x.clone()
        if layout in (1, 2):  # write through a strided view of a bigger buffer
            a_base, b_base = x.new_zeros((20, 24)), x.new_zeros((20, 24))
            a = a_base[1:1 + 2 * x.shape[0]:2, 2:2 + 2 * x.shape[1]:2]
            b = b_base[1:1 + 2 * x.shape[0]:2, 2:2 + 2 * x.shape[1]:2]
            a.copy_(x)
            b.copy_(x)
        assert ours(a, *args) is a
        theirs(b, *args)
        assert_same_bits(a, b)
        if layout in (1, 2):
            assert_same_bits(a_base, b_base)  # untouched elements stay untouched


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_scalars_as_torch_nn_functional_takes_them(dtype):
    """A 0-d tensor that does not require grad, of any dtype, or a NumPy scalar is read with
    .item(), as F's argument parser reads a Scalar; the result and the gradient are torch's."""
    x = values(dtype)
    slopes = (torch.tensor(0.1), torch.tensor(-0.3, dtype=torch.float16), torch.tensor(0.1, dtype=torch.bfloat16),
              torch.tensor(0.2, dtype=torch.float64), torch.tensor(2), torch.tensor(True), np.float32(0.1),
              np.float16(-0.3), np.int8(3))
    bounds = ((torch.tensor(-0.7), torch.tensor(0.3, dtype=torch.float16)), (torch.tensor(-1), torch.tensor(2)),
              (np.float32(-0.7), 0.3), (-0.1, torch.tensor(0.1, dtype=torch.bfloat16)))
    for ours, theirs, scalar_sets in ((ot.leaky_relu, F.leaky_relu, [(s,) for s in slopes]),
                                      (ot.hardtanh, F.hardtanh, bounds)):
        for scalars in scalar_sets:
            assert_same_bits(ours(x, *scalars), theirs(x, *scalars))
            a, b = x.clone(), x.clone()
            ours(a, *scalars, inplace=True)
            theirs(b, *scalars, inplace=True)
            assert_same_bits(a, b)
    for ours, theirs, scalars in ((ot.leaky_relu_, F.leaky_relu_, slopes[:1]), (ot.hardtanh_, F.hardtanh_, bounds[0])):
        a, b = x.clone(), x.clone()
        ours(a, *scalars)
        theirs(b, *scalars)
        assert_same_bits(a, b)
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    ot.leaky_relu(xa, slopes[0]).backward(torch.ones_like(x))
    F.leaky_relu(xb, slopes[0]).backward(torch.ones_like(x))
    assert_same_bits(xa.grad, xb.grad)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")  # torch's own, for np.complex64
def test_numpy_scalars_as_torch_takes_them():
    """NumPy scalars as torch.nn.functional reads them: integers within int64 (uint64 beyond is a
    TypeError), floats incl. float16 and long double, complex and long-double complex (the real
    part when the imaginary one is 0), bools; timedelta64 / datetime64 are TypeErrors."""
    x = torch.tensor([-1.0, 2.0, -0.5])
    for value in (np.uint64(5), np.int64(-3), np.float16(0.5), np.longdouble(0.25), np.complex64(0.5 + 0j),
                  np.clongdouble(0.1), np.bool_(True)):
        assert_same_bits(ot.leaky_relu(x, value), F.leaky_relu(x, value))
    for value in (np.uint64(2**63), np.timedelta64(3), np.datetime64("2026-01-01")):
        with pytest.raises(TypeError):
            F.leaky_relu(x, value)
        with pytest.raises(TypeError, match="negative_slope"):
            ot.leaky_relu(x, value)


def test_scalars_torch_refuses_are_refused():
    """Only a 0-d tensor that does not require grad stands for a Scalar in F; the backward ops take
    numbers only, as aten's do."""
    x = torch.randn(4)
    for bad, shape in ((torch.tensor([0.5]), "[1]"),
                       (torch.tensor(0.5, requires_grad=True), "[] that requires grad")):
        with pytest.raises(TypeError, match="must be Number, not Tensor"):
            F.leaky_relu(x, bad)
        for call, where in ((lambda: ot.leaky_relu(x, bad), "leaky_relu: negative_slope"),
                            (lambda: ot.leaky_relu_(x.clone(), bad), "leaky_relu_: negative_slope"),
                            (lambda: ot.hardtanh(x, -1.0, bad), "hardtanh: max_val"),
                            (lambda: ot.hardtanh_(x.clone(), bad, 1.0), "hardtanh_: min_val")):
            with pytest.raises(TypeError) as info:
                call()
            assert str(info.value) == (f"opsnn.torch.{where} must be a number or a 0-d tensor that does not "
                                       f"require grad, got a tensor of shape {shape}")
    for bad in (None, "0.1", fractions.Fraction(1, 5)):  # no number: a TypeError, as in F
        with pytest.raises(TypeError, match="must be Number"):
            F.leaky_relu(x, bad)
        for call, where in ((lambda v=bad: ot.leaky_relu(x, v), "leaky_relu: negative_slope"),
                            (lambda v=bad: ot.leaky_relu_(x.clone(), v), "leaky_relu_: negative_slope"),
                            (lambda v=bad: ot.hardtanh_(x.clone(), -1.0, v), "hardtanh_: max_val")):
            with pytest.raises(TypeError) as info:
                call()
            assert str(info.value) == f"opsnn.torch.{where} must be a number, got {type(bad).__name__}"
        with pytest.raises(TypeError):  # F.hardtanh compares the bounds first: Python's TypeError
            ot.hardtanh(x, bad, 1.0)
    slope = torch.tensor(0.5)
    for call, name in ((lambda: ot.leaky_relu_backward(x, x, slope), "negative_slope"),
                       (lambda: aten.leaky_relu_backward(x, x, slope, False), "negative_slope"),
                       (lambda: ot.hardtanh_backward(x, x, -1.0, slope), "max_val"),
                       (lambda: aten.hardtanh_backward(x, x, -1.0, slope), "max_val")):
        with pytest.raises(RuntimeError, match=f"Expected a value of type 'number' for argument '{name}'"):
            call()


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("layout", range(5), ids=LAYOUT_IDS)
def test_backward_bits_match_aten(dtype, layout):
    _, x = layouts(dtype, seed=1)[layout]
    _, g = layouts(dtype, seed=7)[layout]
    for slope in (0.01, 0.2, 0.0, -0.5):
        assert_same_bits(ot.leaky_relu_backward(g, x, slope), aten.leaky_relu_backward(g, x, slope, False))
    assert_same_bits(ot.leaky_relu_backward(g, x, 0.3, True), aten.leaky_relu_backward(g, x, 0.3, True))
    _, x_clean = layouts(dtype, nan=False, seed=1)[layout]  # DECISION 8: no NaN in self
    for lo, hi in ((-1.0, 1.0), (-0.7, 0.3), (0.0, 6.0), (0.5, -0.5)):
        assert_same_bits(ot.hardtanh_backward(g, x_clean, lo, hi), aten.hardtanh_backward(g, x_clean, lo, hi))


def test_leaky_relu_backward_broadcasts_and_promotes_like_aten():
    g = values(torch.float32, (3, 1), seed=3)
    x = values(torch.float16, (1, 4), seed=4)
    assert_same_bits(ot.leaky_relu_backward(g, x, 0.5), aten.leaky_relu_backward(g, x, 0.5, False))
    g16, xb = values(torch.float16, (2, 3)), values(torch.bfloat16, (2, 3), seed=2)
    result = ot.leaky_relu_backward(g16, xb, 0.25)
    assert result.dtype == torch.float32
    assert_same_bits(result, aten.leaky_relu_backward(g16, xb, 0.25, False))


def test_hardtanh_backward_nan_self_passes_gradient():
    """DECISION 8 (the documented difference): NaN in self passes grad, at every position."""
    x = torch.full((37,), float("nan"))
    g = torch.arange(37, dtype=torch.float32)
    assert torch.equal(ot.hardtanh_backward(g, x, -1.0, 1.0), g)


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_autograd_gradients_match_torch(dtype):
    x = values(dtype, (6, 10), seed=5, nan=False)
    g = values(dtype, (6, 10), seed=6, nan=False)
    cases = [
        (lambda t: ot.leaky_relu(t, 0.2), lambda t: F.leaky_relu(t, 0.2)),
        (lambda t: ot.leaky_relu(t * 1, 0.2, inplace=True), lambda t: F.leaky_relu(t * 1, 0.2, inplace=True)),
        (lambda t: ot.hardtanh(t, -0.7, 0.3), lambda t: F.hardtanh(t, -0.7, 0.3)),
        (lambda t: ot.hardtanh(t * 1, -0.7, 0.7, inplace=True), lambda t: F.hardtanh(t * 1, -0.7, 0.7, inplace=True)),
        (lambda t: ot.relu6(t * 1, inplace=True), lambda t: F.relu6(t * 1, inplace=True)),
    ]
    for ours, theirs in cases:
        a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
        ya, yb = ours(a), theirs(b)
        assert_same_bits(ya.detach(), yb.detach())
        ya.backward(g)
        yb.backward(g)
        assert_same_bits(a.grad, b.grad)


# ---- autograd wiring ------------------------------------------------------------------------

def nonkink(shape, dtype, bound=1.0, margin=0.05, seed=0):
    """Values away from 0 and +-bound by more than ``margin`` (finite differences stay exact)."""
    gen = torch.Generator().manual_seed(seed)
    x = (torch.rand(shape, generator=gen, dtype=torch.float64) * 2.8 - 1.4) * bound
    for kink in (0.0, bound, -bound):
        close = (x - kink).abs() < margin
        x = torch.where(close, x + 3 * margin, x)
    return x.to(dtype).requires_grad_()


def test_gradcheck_leaky_relu_family_float64():
    x = nonkink((4, 5), torch.float64)
    g = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    for fn in (lambda t: ops.leaky_relu(t, 0.2), lambda t: ops.leaky_relu(t, -0.3),
               lambda t: ops.leaky_relu_(t.clone(), 0.2)):
        assert torch.autograd.gradcheck(fn, (x,))
        assert torch.autograd.gradgradcheck(fn, (x,))
    for flag in (False, True):
        fn = lambda a, b: ops.leaky_relu_backward(a, b, 0.2, flag)  # noqa: E731
        assert torch.autograd.gradcheck(fn, (g, x))
        assert torch.autograd.gradgradcheck(fn, (g, x))
    broadcast = lambda a, b: ops.leaky_relu_backward(a, b, 0.5, False)  # noqa: E731
    assert torch.autograd.gradcheck(broadcast, (g[:, :1].detach().requires_grad_(), x[:1].detach().requires_grad_()))


@pytest.mark.filterwarnings("ignore:Input #.* is not a double precision")
def test_gradcheck_hardtanh_family_float32():
    """aclnnHardtanhBackward has no DOUBLE (DECISION 11), so hardtanh's gradients are checked in
    float32: the function is piecewise linear and the points are away from its kinks, so the
    finite differences are exact to float32 rounding."""
    x = nonkink((4, 5), torch.float32, bound=0.8, margin=0.05)
    g = torch.randn(4, 5, requires_grad=True)
    tol = dict(eps=1e-2, atol=1e-3, rtol=1e-3)
    for fn in (lambda t: ops.hardtanh(t, -0.8, 0.8), lambda t: ops.hardtanh_(t.clone(), -0.8, 0.8)):
        assert torch.autograd.gradcheck(fn, (x,), **tol)
        assert torch.autograd.gradgradcheck(fn, (x,), **tol)
    fn = lambda a, b: ops.hardtanh_backward(a, b, -0.8, 0.8)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (g, x), **tol)
    assert torch.autograd.gradgradcheck(fn, (g, x), **tol)


def test_gradients_of_self_have_torchs_layout():
    """The backward ops' gradient of self is zeros_like(grad) as in derivatives.yaml (it was
    zeros_like(self): the same zeros with self's strides, a breaker), so first derivatives of the
    backward ops and second derivatives of the forward ops have torch's strides, shape and dtype
    (LeakyReluBackward's broadcast, float64 self: summed down and cast by the engine)."""
    g = torch.randn(4, 3)
    transposed = torch.randn(3, 4).t().requires_grad_()
    broadcast = torch.randn(1, 3, dtype=torch.float64, requires_grad=True)
    for mine, theirs, scalars, selves in (
            (ops.hardtanh_backward, torch.ops.aten.hardtanh_backward, (-0.5, 0.5), (transposed,)),
            (ops.leaky_relu_backward, torch.ops.aten.leaky_relu_backward, (0.1, False), (transposed, broadcast))):
        for self in selves:
            got, want = (torch.autograd.grad(out, self, torch.ones_like(out))[0]
                         for out in (mine(g, self, *scalars), theirs(g, self, *scalars)))
            assert (got.shape, got.dtype, got.stride()) == (want.shape, want.dtype, want.stride())
            assert not got.any()
    b = torch.randn(3, 4, requires_grad=True)
    weights = torch.randn(4, 3)
    functional = torch.nn.functional
    for mine, theirs in ((lambda t: ops.leaky_relu(t, 0.3), lambda t: functional.leaky_relu(t, 0.3)),
                         (lambda t: ops.hardtanh(t, -0.3, 0.3), lambda t: functional.hardtanh(t, -0.3, 0.3))):
        strides = []
        for fn in (mine, theirs):
            first, = torch.autograd.grad((fn(b.t()) * weights).sum(), b, create_graph=True)
            strides.append(torch.autograd.grad(first.sum(), b)[0].stride())
        assert strides[0] == strides[1] == (1, 3)


def test_hardtanh_float64_runs_forward_but_backward_refuses():
    x = torch.linspace(-2, 2, 9, dtype=torch.float64, requires_grad=True)
    y = ot.hardtanh(x)
    assert torch.equal(y, F.hardtanh(x))
    with pytest.raises(AclnnRuntimeError) as info:
        y.sum().backward()
    assert info.value.status == 161002 and "DT_DOUBLE" in info.value.message


@pytest.mark.filterwarnings("ignore:Error detected in:UserWarning")  # anomaly mode's note on the traced backward
def test_hardtanh_float64_under_compile_fails_at_the_forward_call():
    """docs/torch.md item 4: compiled, with autograd recording, a float64 Hardtanh fails when the
    graph compiles, at the forward call (AOTAutograd traces the backward, and the fake kernel of
    hardtanh_backward refuses DOUBLE as the CPU kernel does): BackendCompilerFailed, the
    AclnnRuntimeError its inner_exception (not its __cause__). Without grad it compiles and runs."""
    x = torch.linspace(-2, 2, 9, dtype=torch.float64, requires_grad=True)
    torch._dynamo.reset()
    f = torch.compile(lambda t: ot.hardtanh(t, -0.5, 0.5) * 2, backend="aot_eager")
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed) as info:
        f(x)
    inner = info.value.inner_exception
    assert info.value.__cause__ is None
    assert type(inner) is AclnnRuntimeError and inner.status == 161002
    assert inner.message == ("HardtanhBackward: tensor gradOutput has dtype DT_DOUBLE, which Ascend910B does not "
                             "support; it must be one of [DT_FLOAT, DT_FLOAT16, DT_BF16]; no SoC does "
                             "(HardtanhBackward has no DT_DOUBLE kernel)")
    for no_grad in (torch.no_grad, torch.inference_mode):
        torch._dynamo.reset()
        with no_grad():
            assert torch.equal(torch.compile(lambda t: ot.hardtanh(t, -0.5, 0.5) * 2, backend="aot_eager")(x),
                               F.hardtanh(x.detach(), -0.5, 0.5) * 2)
    torch._dynamo.reset()


class OpLog(torch.utils._python_dispatch.TorchDispatchMode):
    """Records every operator call (name and non-tensor arguments) below autograd."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = f"{func.namespace}::{func.overloadpacket.__name__}"
        self.calls.append((name, [a for a in args if not isinstance(a, torch.Tensor)]))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("forward, expected", [
    (lambda t: ot.leaky_relu(t, 0.2), ("opsnn::leaky_relu_backward", [0.2, False])),
    (lambda t: ot.leaky_relu_(t * 1, 0.2), ("opsnn::leaky_relu_backward", [0.2, True])),
    (lambda t: ot.hardtanh(t, -0.5, 0.5), ("opsnn::hardtanh_backward", [-0.5, 0.5])),
    (lambda t: ot.hardtanh_(t * 1, -0.5, 0.5), ("opsnn::hardtanh_backward", [-0.5, 0.5])),
])
def test_backward_runs_opsnn_backward_op(forward, expected):
    x = torch.randn(8, requires_grad=True)
    y = forward(x)
    with OpLog() as log:
        y.backward(torch.ones(8))
    assert expected in log.calls
    aten_grads = ("aten::leaky_relu_backward", "aten::hardtanh_backward", "aten::threshold_backward",
                  "aten::where")
    assert not [name for name, _ in log.calls if name in aten_grads]


def test_double_backward_wrt_grad_output_is_the_same_op():
    x = torch.tensor([-2.0, -0.5, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    y = ot.leaky_relu(x, 0.25)
    (dx,) = torch.autograd.grad(y, x, torch.ones_like(y), create_graph=True)
    v = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    with OpLog() as log:
        (ddx,) = torch.autograd.grad(dx, x, v, allow_unused=True, materialize_grads=True)
    assert torch.equal(ddx, torch.zeros_like(x))  # d/dself of a piecewise-linear gradient
    g = torch.ones(4, dtype=torch.float64, requires_grad=True)
    dx = ot.leaky_relu_backward(g, x, 0.25)
    (dg,) = torch.autograd.grad(dx, g, v)
    assert torch.equal(dg, aten.leaky_relu_backward(v, x.detach(), 0.25, False))
    assert log.calls  # the second-order graph ran through the dispatcher


@pytest.mark.parametrize("inplace, reference", [
    (lambda t: ot.hardtanh_(t * 1, -0.5, 0.7), lambda t: torch.nn.functional.hardtanh(t * 1, -0.5, 0.7, inplace=True)),
    (lambda t: ops.hardtanh_(t * 1, -0.5, 0.7), lambda t: torch.nn.functional.hardtanh(t * 1, -0.5, 0.7, inplace=True)),
    (lambda t: ot.leaky_relu_(t * 1, 0.25), lambda t: torch.nn.functional.leaky_relu(t * 1, 0.25, inplace=True)),
])
def test_inplace_ops_have_gradients_of_every_order_like_torch(inplace, reference):
    """Found by a breaker: hardtanh_ cloned its input inside the autograd.Function, where
    autograd is off, so the gradient it gave had no graph back to the input and a second
    derivative (gradient penalty code) failed. As torch, the gradient requires grad and the
    second derivative is zeros; first-order values bit for bit."""
    x = torch.tensor([0.1, -0.9, 0.8, -0.5, 0.7, -0.0], requires_grad=True)
    seed = torch.tensor([1.0, 2.0, -3.0, 0.5, 4.0, -1.0])
    got, want = [], []
    for fn, into in ((inplace, got), (reference, want)):
        (g1,) = torch.autograd.grad(fn(x), x, seed, create_graph=True)
        assert g1.requires_grad
        (g2,) = torch.autograd.grad((g1 * g1).sum(), x)
        into += [g1.detach(), g2]
    for a, b in zip(got, want):
        assert_same_bits(a, b)


@pytest.mark.parametrize("call", [lambda t: ot.leaky_relu(t), lambda t: ops.hardtanh(t),
                                  lambda t: ot.hardtanh_(t), lambda t: ot.leaky_relu_backward(t, t, 0.1, False)])
def test_an_empty_tensor_numpy_cannot_view_is_refused_with_a_status(call):
    """Found by a breaker: torch holds an empty tensor whose nonzero dims multiply past 2**63
    bytes, NumPy does not, and NumPy's ValueError escaped the bridge. Now 161002 naming the
    argument and the shape (opsnn computes on NumPy views; README, torch integration)."""
    t = torch.empty(2**40, 0, 2**30)
    with pytest.raises(opsnn.AclnnError) as info:
        call(t)
    assert info.value.status == 161002 and isinstance(info.value, RuntimeError)
    assert "NumPy" in info.value.message and str((2**40, 0, 2**30)) in info.value.message


def test_inplace_negative_slope_refuses_at_backward_like_torch():
    x = torch.tensor([-1.0, 1.0], requires_grad=True)
    y = ot.leaky_relu_(x * 1, -2.0)  # the forward is fine
    assert y.tolist() == [2.0, 1.0]
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert isinstance(info.value, opsnn.AclnnError) and info.value.status == 161002
    assert "negativeSlope" in str(info.value)
    x.grad = None
    ot.leaky_relu(x, -2.0).sum().backward()  # out of place: fine, as in torch
    assert x.grad.tolist() == [-2.0, 1.0]


def test_inplace_autograd_edge_cases():
    leaf = torch.randn(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ot.leaky_relu_(leaf, 0.1)
    base = torch.randn(3, 4, requires_grad=True)
    expected = base.detach().clone()
    view = (base * 1)[:, 1:3]
    out = ot.leaky_relu_(view, 0.1)
    out.sum().backward()
    want = torch.zeros(3, 4)
    want[:, 1:3] = torch.where(expected[:, 1:3] > 0, 1.0, 0.1)
    assert torch.equal(base.grad, want)
    with torch.no_grad():
        t = base.clone()
        ot.hardtanh_(t, -0.1, 0.1)
        assert t.abs().max() <= 0.1
    with pytest.raises(AclnnRuntimeError) as info:  # (a breaker: the message named no argument)
        ot.leaky_relu_(torch.zeros(3, 1).expand(3, 4), 0.1)
    assert str(info.value) == ("[161002 ACLNN_ERR_PARAM_INVALID] opsnn.torch: leaky_relu_: self [3, 4] strides "
                               "[1, 0] has elements that share a single memory location (an expanded view), which "
                               "cannot be written in place; torch refuses it too; clone() the tensor before the "
                               "in-place operation")



def _leaf():
    return torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)


def _no_grad_view():
    x = _leaf() * 1
    with torch.no_grad():
        return x[0:2]


@pytest.mark.parametrize("make", [_leaf, lambda: _leaf()[0:3:2], lambda: (_leaf()[None] * 1).unbind(0)[0],
                                  _no_grad_view], ids=["leaf", "view of leaf", "one of several outputs", "no-grad view"])
@pytest.mark.parametrize("op", ["leaky_relu_", "hardtanh_"])
def test_inplace_refused_like_torch_before_anything_is_written(make, op):
    """Where torch refuses an in-place update under autograd, opsnn raises torch's own error and
    leaves the tensor as it was (an autograd.Function checks only after its forward wrote)."""
    ours, theirs = make(), make()
    before = ours.detach().clone()
    call = {"leaky_relu_": lambda x, f: f.leaky_relu_(x, 0.1), "hardtanh_": lambda x, f: f.hardtanh_(x)}[op]
    with pytest.raises(RuntimeError) as torch_error:
        call(theirs, torch.nn.functional)
    with pytest.raises(RuntimeError) as opsnn_error:
        call(ours, ot)
    assert str(opsnn_error.value) == str(torch_error.value)
    assert torch.equal(ours.detach(), before)


@pytest.mark.parametrize("shapes", [((5,), ()), ((), (5,)), ((), ())], ids=["self 0-d", "grad 0-d", "both 0-d"])
@pytest.mark.parametrize("dtypes", [(torch.float16, torch.float32), (torch.bfloat16, torch.float64),
                                    (torch.float32, torch.float16), (torch.float64, torch.bfloat16)],
                         ids=lambda d: f"{str(d[0])[6:]}-{str(d[1])[6:]}")
def test_leaky_relu_backward_promotes_zero_dim_operands_like_torch(shapes, dtypes):
    """A 0-d operand defers to a dimensioned one in torch's promotion (torch.result_type); the
    binding follows it (CANN's PromoteType would not), values, dtype and fake kernel alike. A
    float32 self of 1e-8 cast to float16 is 0, so it takes the slope branch, as in torch."""
    (g_shape, s_shape), (g_dtype, s_dtype) = shapes, dtypes
    g = (torch.randn(g_shape) * 3).to(g_dtype)
    for value in (1e-8, -1e-9, 2.5):
        s = torch.full(s_shape, value).to(s_dtype) if s_shape == () else (torch.randn(s_shape) * 3).to(s_dtype)
        want = torch.ops.aten.leaky_relu_backward(g, s, -0.375, False)
        got = ot.leaky_relu_backward(g, s, -0.375, False)
        assert_same_bits(got, want)
        assert ops.leaky_relu_backward(g.to("meta"), s.to("meta"), -0.375, False).dtype == want.dtype


@pytest.mark.parametrize("grad_mode", [False, True], ids=["no autograd", "autograd"])
def test_inplace_bumps_the_version_counter_once_like_torch(grad_mode):
    """An in-place op bumps the tensor's (and its base's) version counter once, as ATen's do, so
    torch's "modified by an inplace operation" checks see the same versions."""
    for ours, theirs in ((lambda t: ot.leaky_relu_(t, 0.1), lambda t: torch.nn.functional.leaky_relu_(t, 0.1)),
                         (ot.hardtanh_, torch.nn.functional.hardtanh_)):
        versions = []
        for op in (ours, theirs):
            base = torch.randn(6, requires_grad=grad_mode)
            x = (base * 1)[1:5] if grad_mode else base[1:5]
            before = (x._version, x._base._version)
            op(x)
            versions.append((x._version - before[0], x._base._version - before[1]))
        assert versions[0] == versions[1] == (1, 1)


@pytest.mark.parametrize("no_grad", [False, True], ids=["grad mode", "no_grad"])
@pytest.mark.parametrize("make", [lambda: torch.ones(4, dtype=torch.bool), lambda: torch.randn(1).expand(4)],
                         ids=["bool", "expanded"])
def test_a_refused_inplace_call_leaves_the_version_counter(no_grad, make):
    """An in-place call the kernel refuses (a dtype opsnn does not take, an expanded self) raises
    and leaves the version counter where it was, as torch's own in-place ops do (they bump after
    the kernel); a call that runs bumps it once."""
    for ours, theirs in ((lambda t: ot.leaky_relu_(t, 0.1), lambda t: torch.nn.functional.leaky_relu_(t, 0.1)),
                         (ot.hardtanh_, torch.nn.functional.hardtanh_)):
        with torch.no_grad() if no_grad else torch.enable_grad():
            for op, error in ((ours, AclnnRuntimeError), (theirs, (RuntimeError, NotImplementedError))):
                x = make()
                with pytest.raises(error):
                    op(x)
                assert x._version == 0
            x = torch.randn(4)
            ours(x)
            assert x._version == 1


def test_inplace_on_an_inference_tensor_outside_inference_mode_is_refused_like_torch():
    """torch refuses it (there is no version counter to bump); opsnn too, before writing."""
    with torch.inference_mode():
        x = torch.randn(4)
        ot.leaky_relu_(x, 0.5)  # inside: allowed, as in torch
    before = x.clone()
    for ours, theirs in ((lambda t: ot.leaky_relu_(t, 0.1), lambda t: torch.nn.functional.leaky_relu_(t, 0.1)),
                         (ot.hardtanh_, torch.nn.functional.hardtanh_)):
        with pytest.raises(AclnnRuntimeError, match="inference tensor"):
            ours(x)
        assert torch.equal(x, before)  # refused before writing (torch writes, then raises)
        with torch.inference_mode():
            y = x.clone()
        with pytest.raises(RuntimeError, match="inference"):
            theirs(y)


def _channels_last(seed):
    return torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(seed)).to(memory_format=torch.channels_last)


def _transposed(seed):
    return torch.randn(6, 7, generator=torch.Generator().manual_seed(seed)).T


@pytest.mark.parametrize("make", [_channels_last, _transposed], ids=["channels_last", "transposed"])
def test_results_keep_a_shared_dense_layout_like_torch(make):
    """Operands sharing one dense layout give a result in that layout, as torch's TensorIterator
    does (values bit-identical; the fake kernels agree, opcheck passes)."""
    x, g = make(0) * 2, make(1)
    cases = [(ops.leaky_relu.default, (x, 0.1), torch.nn.functional.leaky_relu),
             (ops.hardtanh.default, (x, -0.5, 0.5), torch.nn.functional.hardtanh),
             (ops.leaky_relu_backward.default, (g, x, 0.125, False), torch.ops.aten.leaky_relu_backward),
             (ops.hardtanh_backward.default, (g, x, -0.5, 0.5), torch.ops.aten.hardtanh_backward)]
    for op, args, reference in cases:
        got, want = op(*args), reference(*args)
        assert got.stride() == want.stride() == x.stride(), op
        assert_same_bits(got, want)
        assert op(*(a.to("meta") if isinstance(a, torch.Tensor) else a for a in args)).stride() == x.stride()
        torch.library.opcheck(op, args)
    mixed = ops.leaky_relu_backward(g.half(), x, 0.125, False)  # one layout, two dtypes: promoted, kept
    assert mixed.stride() == torch.ops.aten.leaky_relu_backward(g.half(), x, 0.125, False).stride() == x.stride()
    torch.library.opcheck(ops.leaky_relu_backward.default, (g.half(), x, 0.125, False))


def _random_layout(rng, shape, seed):
    """A tensor of ``shape`` in one of six layouts: C-contiguous, dims permuted, every dim stepped
    by 2 (in C order or permuted: gaps in another dim order), some dims expanded, or
    channels_last (4-D)."""
    gen = torch.Generator().manual_seed(seed)
    kind = rng.choice(["c", "permuted", "stepped", "stepped permuted", "expanded", "channels_last"])
    order = list(range(len(shape)))
    rng.shuffle(order)
    back = [order.index(d) for d in range(len(shape))]
    if kind == "permuted":
        return torch.randn([shape[d] for d in order], generator=gen).permute(back)
    if kind == "stepped":
        return torch.randn([2 * n for n in shape], generator=gen)[tuple(slice(None, None, 2) for _ in shape)]
    if kind == "stepped permuted":
        stepped = torch.randn([2 * shape[d] for d in order], generator=gen)[tuple(slice(None, None, 2) for _ in shape)]
        return stepped.permute(back)
    if kind == "expanded":
        return torch.randn([1 if rng.random() < 0.5 else n for n in shape], generator=gen).expand(shape)
    if kind == "channels_last" and len(shape) == 4:
        return torch.randn(shape, generator=gen).to(memory_format=torch.channels_last)
    return torch.randn(shape, generator=gen)


def test_result_strides_are_torchs_for_any_layout():
    """Mixed, broadcast, expanded, stepped and permuted operands, some of another dtype: the
    result's strides are the ones torch gives (TensorIterator's dim order for leaky_relu,
    leaky_relu_backward, hardtanh_backward -- the first operand that tells two dims apart
    decides, self first for leaky_relu_backward, an operand of another dtype as torch converts
    it first; empty_like(self) for hardtanh), size-1 and size-0 dims included, for the CPU and
    the fake kernels; values equal torch's."""
    rng = random.Random(7)
    for trial in range(400):
        ndim = rng.randint(0, 5)
        shape = [rng.choice([0, 1, 2, 3, 4]) if rng.random() < 0.05 else rng.choice([1, 2, 3, 4]) for _ in range(ndim)]
        g_shape = [1 if rng.random() < 0.15 else n for n in shape][rng.randint(0, ndim) if rng.random() < 0.2 else 0:]
        s_shape = [1 if rng.random() < 0.15 else n for n in shape]
        g, s = _random_layout(rng, g_shape, trial), _random_layout(rng, s_shape, trial + 1)
        if rng.random() < 0.2:
            g = g.half()
        cases = [(ops.leaky_relu, (s, 0.1), torch.nn.functional.leaky_relu),
                 (ops.hardtanh, (s, -0.5, 0.5), torch.nn.functional.hardtanh),
                 (ops.leaky_relu_backward, (g, s, 0.1, False), torch.ops.aten.leaky_relu_backward)]
        if g.shape == s.shape:  # HardtanhBackward does not broadcast (CANN's shape check)
            cases.append((ops.hardtanh_backward, (g, s.to(g.dtype), -0.5, 0.5), torch.ops.aten.hardtanh_backward))
        for op, args, reference in cases:
            got, want = op(*args), reference(*args)
            label = (op, [(a.shape, a.stride()) for a in args if isinstance(a, torch.Tensor)])
            assert got.stride() == want.stride(), label
            assert torch.equal(got, want), label
            meta = op(*(torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device="meta")
                        if isinstance(a, torch.Tensor) else a for a in args))
            assert meta.stride() == want.stride(), label


def test_tensors_on_two_devices_are_refused_like_torch():
    """A CPU tensor with a meta one picks the fake kernel; it refuses the mix as torch does
    (it had returned uninitialised CPU memory). A 0-d CPU tensor joins any device, as in torch."""
    meta = torch.empty(4, device="meta")
    with pytest.raises(RuntimeError, match="device"):
        torch.ops.aten.hardtanh_backward(torch.ones(4), meta, -1.0, 1.0)
    for call in (lambda: ops.hardtanh_backward(torch.ones(4), meta, -1.0, 1.0),
                 lambda: ops.leaky_relu_backward(meta, torch.ones(4), 0.1, False)):
        with pytest.raises(AclnnRuntimeError, match="different devices"):
            call()
    for args in ((torch.tensor(2.0), meta), (meta, torch.tensor(2.0))):
        got = ops.leaky_relu_backward(*args, 0.1, False)
        want = torch.ops.aten.leaky_relu_backward(*args, 0.1, False)
        assert (got.device, got.shape, got.dtype) == (want.device, want.shape, want.dtype)


def test_lazy_negative_and_conjugate_views_are_not_viewed_silently():
    """``to_numpy`` gives a view or refuses, as ``Tensor.numpy()`` does for a lazy negative or
    conjugate view (a materialised copy would lose writes); the ops themselves get such views
    resolved by torch's dispatcher and match torch."""
    base = torch.tensor([-2.0, 3.0])
    with pytest.raises(AclnnRuntimeError, match="lazy negative view"):
        ot.to_numpy(torch._neg_view(base))
    with pytest.raises(AclnnRuntimeError, match="lazy conjugate view"):
        ot.to_numpy(torch.tensor([1 + 2j]).conj())
    mine, theirs = torch._neg_view(base.clone()), torch._neg_view(base.clone())
    ot.leaky_relu_(mine, 0.1)
    torch.nn.functional.leaky_relu_(theirs, 0.1)
    assert torch.equal(mine, theirs) and mine.tolist() == [2.0, -0.30000001192092896]


@pytest.mark.parametrize("dtype, acl_name", [(torch.float8_e5m2, "DT_FLOAT8_E5M2"),
                                             (torch.float8_e4m3fn, "DT_FLOAT8_E4M3FN"),
                                             (torch.float8_e8m0fnu, "DT_FLOAT8_E8M0")])
def test_float8_tensors_reach_the_dtype_check(dtype, acl_name):
    """A breaker: a float8 tensor was refused as having "no NumPy view" (opsnn.torch) or as
    unreadable "through DLPack" (the Pythonic API), naming neither its dtype nor the ones
    expected; it crosses as its uint8 view now, and the dtype check refuses it, untouched."""
    x = torch.tensor([1.0, -2.0, 0.5, 0.0]).to(dtype)
    before = x.view(torch.uint8).clone()
    calls = [lambda: ops.leaky_relu(x, 0.5), lambda: ops.leaky_relu_(x, 0.5), lambda: ops.hardtanh(x.to("meta"), 0, 1),
             lambda: opsnn.leaky_relu(x, 0.5), lambda: opsnn.hardtanh_backward(x, x, -1.0, 1.0)]
    f32 = torch.ones(4)  # with another dtype, which torch cannot promote a float8 with (a breaker:
    calls += [lambda: ot.leaky_relu_backward(x, f32, 0.1, False),  # a plain RuntimeError of torch's)
              lambda: ot.leaky_relu_backward(f32, x, 0.1, False),
              lambda: ops.leaky_relu_backward(x.to("meta"), f32.to("meta"), 0.1, False)]
    for call in calls:
        with pytest.raises(opsnn.AclnnError) as info:
            call()
        assert info.value.status == 161002 and acl_name in info.value.message
        assert "which Ascend910B does not support; it must be one of [" in info.value.message
        assert "DT_FLOAT16" in info.value.message.split("must be one of")[1], info.value.message
        assert info.value.message.endswith(" kernel)") and "; no SoC does (" in info.value.message
    assert torch.equal(x.view(torch.uint8), before)


@pytest.mark.parametrize("dtype", [torch.int1, torch.int4, torch.uint1, torch.uint4, torch.float8_e4m3fnuz],
                         ids=str)
def test_torch_dtypes_without_acl_data_type_are_refused_not_read_as_bytes(dtype):
    """A breaker: torch's DLPack export labels int1..int7 / uint1..uint7 as 8-bit integers, and
    the NumPy API computed them as such, in place too; every torch dtype with no aclDataType is
    refused now (161002 naming it), nothing written, on every surface: by the dtype checks, with
    the dtypes expected (a DataLessTensor reaches them). torch's int4 and uint1 store one
    element a byte, so ACL_INT4 / ACL_UINT1 (packed) do not describe them, as the refusal says."""
    x = torch.arange(1, 17, dtype=torch.uint8).view(dtype)  # torch fills none of them
    before = x.view(torch.uint8).clone()
    i8 = torch.ones(x.shape, dtype=torch.int8)
    listed = [lambda: opsnn.hardtanh(x, 0, 1), lambda: opsnn.hardtanh_(x, 0, 1), lambda: opsnn.leaky_relu(x, 0.5),
              lambda: opsnn.leaky_relu_(x, 0.5), lambda: opsnn.leaky_relu_backward(x, x, 0.5, False),
              lambda: opsnn.leaky_relu_backward(1.0, x, 0.5, False), lambda: ops.hardtanh(x.to("meta"), 0, 1),
              lambda: ops.hardtanh(x, 0, 1), lambda: ops.hardtanh_(x, 0, 1), lambda: ot.leaky_relu(x),
              lambda: ot.leaky_relu_backward(x, x, 0.1, False)]
    calls = listed + [lambda: opsnn.hardtanh(i8, 0, 1, out=x)]
    for call in calls:
        with pytest.raises(opsnn.AclnnError) as info:
            call()
        assert info.value.status == 161002 and str(dtype) in info.value.message, info.value.message
        if call in listed:
            assert "which no aclDataType describes; it must be one of [" in info.value.message, info.value.message
        if dtype in (torch.int4, torch.uint1):
            packs = "ACL_INT4 packs 2 a byte" if dtype == torch.int4 else "ACL_UINT1 packs 8 a byte"
            assert f"{dtype} (one element a byte, where {packs}), which no aclDataType" in info.value.message
    assert torch.equal(x.view(torch.uint8), before)
    with pytest.raises(opsnn.AclnnError) as info:  # CANN's null checks first
        opsnn.leaky_relu_backward(None, x, 0.5, False)
    assert info.value.status == 161001 and "gradOutput" in info.value.message


def test_torch_float4_e2m1fn_x2_is_told_apart_from_acl_float4_e2m1():
    """(A breaker) torch.float4_e2m1fn_x2 was refused as a dtype 'no aclDataType describes' with
    no word of ACL_FLOAT4_E2M1, which packs its values the same, two a byte, as if that type
    did not exist: the refusals say why it does not describe them (torch's element is the byte
    of two values, ACL_FLOAT4_E2M1's each value), as they do for torch's int4 and uint1. The values
    are named by their aclDataType's name (float4_e2m1), not a word written for this one entry
    ("float4 values") of a table meant for more."""
    x = torch.zeros(3, dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    shown = ("torch.float4_e2m1fn_x2 (an element a byte holding 2 float4_e2m1 values, where ACL_FLOAT4_E2M1 packs "
             "2 a byte, each an element)")
    with pytest.raises(AclnnRuntimeError) as info:
        ot.to_numpy(x, "self")
    assert (info.value.status, info.value.message.partition("; ")[0]) == (
        161002, f"opsnn.torch: self has dtype {shown}, which no aclDataType describes")
    for call in (lambda: opsnn.leaky_relu(x), lambda: ot.leaky_relu(x)):
        with pytest.raises(opsnn.AclnnError) as info:
            call()
        assert info.value.message == (f"LeakyRelu: self has dtype {shown}, which no aclDataType describes; it must be "
                                      "one of [DT_FLOAT, DT_FLOAT16, DT_DOUBLE, DT_BF16] on Ascend910B")


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_to_numpy_refuses_complex32_as_a_type_opsnn_holds_no_data_of():
    """``to_numpy`` of a torch.complex32 tensor said it "has no NumPy view" (torch's "Got
    unsupported ScalarType ComplexHalf" after it), untrue beside ml_dtypes 0.6 on, whose
    complex32 holds its memory (a breaker's): the reason is opsnn's, true under every ml_dtypes
    it takes (0.5 has no complex32): it holds no data of ACL_COMPLEX32."""
    with pytest.raises(AclnnRuntimeError) as info:
        ot.to_numpy(torch.zeros(2, dtype=torch.complex32), "self")
    assert (info.value.status, info.value.message) == (161002, (
        "opsnn.torch: self has dtype torch.complex32 (ACL_COMPLEX32), which opsnn holds no data of under any "
        "ml_dtypes it takes (0.5 has no complex32), so to_numpy gives no view of it; self.to(torch.complex64) "
        "has its values"))


@pytest.mark.parametrize("dtype, shown", [
    (torch.float8_e4m3fnuz, "torch.float8_e4m3fnuz"), (torch.int2, "torch.int2"),
    (torch.int4, "torch.int4 (one element a byte, where ACL_INT4 packs 2 a byte)")], ids=str)
def test_to_numpy_refuses_a_dtype_without_acl_data_type_for_that_reason(dtype, shown):
    """``to_numpy`` of a dtype no aclDataType describes said it "has no NumPy view" (torch's
    "Got unsupported ScalarType" after it), untrue for float8_e4m3fnuz, int2 and int4, which
    ml_dtypes has (a breaker's): it says the reason opsnn refuses them, as the dtype checks do,
    and the dtypes it views."""
    x = torch.zeros(3, dtype=torch.uint8).view(dtype)
    with pytest.raises(AclnnRuntimeError) as info:
        ot.to_numpy(x, "self")
    assert info.value.status == 161002
    assert info.value.message == (
        f"opsnn.torch: self has dtype {shown}, which no aclDataType describes; it must be one of "
        "torch.float16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32, torch.int64, "
        "torch.uint8, torch.uint16, torch.uint32, torch.uint64, torch.bool, torch.complex64, "
        "torch.complex128, torch.bfloat16, torch.float8_e5m2, torch.float8_e4m3fn, torch.float8_e8m0fnu")


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_torch_complex32_is_acl_complex32():
    """torch.complex32 is ACL_COMPLEX32 (a breaker: it was refused as a dtype "no aclDataType
    describes", where the aclnn API answers an ACL_COMPLEX32 out with 561103): an out of it gets
    the aclnn API's answers (an empty one succeeds), its memory compared for overlap but never
    read; an input of it
    fails the dtype list, on every surface (the fake kernel too), nothing written."""
    from opsnn._core.dtypes import DataType
    from opsnn.torch import _bridge

    assert _bridge.acl_dtype(torch.complex32) == DataType.COMPLEX32
    assert _bridge.acl_dtype(torch.int4) == _bridge.acl_dtype(torch.uint1) == DataType.DT_UNDEFINED
    x = torch.tensor([-1.0, 0.5, 2.0, -3.0])
    out = torch.arange(1, 17, dtype=torch.uint8).view(torch.complex32)
    before = out.view(torch.uint8).clone()
    for call, status, text in (
            (lambda: opsnn.leaky_relu(x, out=out), 561103, "LeakyRelu: no Cast kernel from DT_FLOAT to DT_COMPLEX32"),
            (lambda: opsnn.leaky_relu_backward(x, x, out=out), 561103,
             "LeakyReluBackward: no Cast kernel from DT_FLOAT to DT_COMPLEX32"),
            (lambda: opsnn.hardtanh(x, out=out), 161002, "Hardtanh: out must have the dtype of self (DT_FLOAT), got DT_COMPLEX32")):
        with pytest.raises(opsnn.AclnnError) as info:
            call()
        assert (info.value.status, info.value.message) == (status, text)
    assert torch.equal(out.view(torch.uint8), before)
    empty = torch.zeros(0, 3, dtype=torch.complex32)  # the empty fast path: success, as through aclnn
    assert opsnn.leaky_relu(torch.zeros(0, 3), out=empty) is empty
    buf = torch.zeros(8)
    with pytest.raises(opsnn.AclnnError) as info:  # over self's last two floats: the overlap check
        opsnn.leaky_relu(buf[:4], out=buf[2:6].view(torch.complex32))
    assert info.value.status == 161002 and info.value.message.startswith(
        "LeakyRelu: out and self overlap in memory without being the same view (out DT_COMPLEX32 [4] strides [1] "
        "ND, self DT_FLOAT [4] strides [1] ND with its first element 8 bytes before out's first)")
    c = torch.zeros(4, dtype=torch.complex32)
    for call in (lambda: opsnn.leaky_relu(c), lambda: ot.leaky_relu(c), lambda: ot.leaky_relu(c.to("meta")),
                 lambda: opsnn.hardtanh_(c), lambda: ops.hardtanh_(c, 0, 1)):
        with pytest.raises(opsnn.AclnnError) as info:
            call()
        assert info.value.status == 161002
        assert "self has dtype DT_COMPLEX32, which Ascend910B does not support" in info.value.message, info.value.message
    assert not c.view(torch.uint8).any()


def test_sub_byte_dtypes_are_refused_cleanly():
    for dtype in (torch.uint4, torch.int4, torch.bits8):
        x = torch.empty(4, dtype=dtype)
        for call in (lambda: ops.hardtanh(x, 0, 1), lambda: ops.hardtanh(x.to("meta"), 0, 1), lambda: ops.hardtanh_(x, 0, 1)):
            with pytest.raises(AclnnRuntimeError):
                call()


@pytest.mark.parametrize("dtype, bounds", [(torch.uint8, (-1, 300)), (torch.uint8, (0, 300)), (torch.int8, (-129, 5)),
                                           (torch.int32, (0, 2**40)), (torch.uint8, (0, float("nan"))),
                                           (torch.int16, (float("-inf"), 0)), (torch.int8, (0, 128.0))])
def test_integer_bounds_outside_the_dtype_are_refused_like_torch(dtype, bounds):
    """torch refuses a bound an integer self cannot hold; the binding does too (the aclnn layer
    would wrap it modulo 2^bits, DECISION F5), for the op, its in-place form and its fake kernel,
    before anything is written or the version counter moves."""
    x = torch.tensor([0, 5, 100], dtype=dtype)
    with pytest.raises(RuntimeError):
        torch.nn.functional.hardtanh(x, *bounds)
    for call in (lambda: ops.hardtanh(x, *bounds), lambda: ops.hardtanh_(x, *bounds),
                 lambda: ops.hardtanh(x.to("meta"), *bounds)):
        with pytest.raises(AclnnRuntimeError, match="does not fit self's dtype"):
            call()
    assert x.tolist() == [0, 5, 100] and x._version == 0


@pytest.mark.parametrize("dtype, bounds", [(torch.uint8, (-0.5, 50)), (torch.uint8, (0, 255.5)), (torch.int8, (-128.5, 127.9)),
                                           (torch.int32, (1, 50)), (torch.int16, (-3.7, 2.2))])
def test_integer_bounds_torch_accepts_give_torchs_result(dtype, bounds):
    """A float bound counts truncated toward zero, as torch converts it (-0.5 on uint8 is 0)."""
    x = torch.tensor([0, 5, 100], dtype=dtype)
    assert torch.equal(ops.hardtanh(x, *bounds), torch.nn.functional.hardtanh(x, *bounds))
    y = x.clone()
    ops.hardtanh_(y, *bounds)
    assert torch.equal(y, torch.nn.functional.hardtanh(x, *bounds))

@pytest.mark.parametrize("self_dtype, bounds", [(torch.uint8, (-1.5, 2.5)), (torch.int32, (0.5, float("nan"))),
                                                (torch.int8, (-1000, 1000))])
def test_hardtanh_backward_of_an_integer_self_names_self_not_the_bounds(self_dtype, bounds):
    """torch's hardtanh_backward takes the bounds in the tensors' promoted dtype (float32 with a
    float grad), so they fit; the binding refuses the integer self for its own reason (DECISION
    10, the aclnn dtype check) in the op and its fake kernel, where it blamed the bound and said
    torch refuses it too (a breaker)."""
    grad, x = torch.ones(3), torch.tensor([0, 1, 5], dtype=self_dtype)
    assert torch.ops.aten.hardtanh_backward(grad, x, *bounds).shape == (3,)  # torch takes it
    for call in (lambda: ops.hardtanh_backward(grad, x, *bounds),
                 lambda: ops.hardtanh_backward(grad.to("meta"), x.to("meta"), *bounds)):
        with pytest.raises(AclnnRuntimeError, match=f"tensor self has dtype DT_{str(self_dtype)[6:].upper()}, "
                                                    "which Ascend910B does not support") as info:
            call()
        assert "does not fit" not in str(info.value)


_ATEN = torch.ops.aten
# (what to call on ops / aten, its args after the tensors, the dtype of the tensors)
_OUT_OF_RANGE = [
    ("hardtanh", (-1.0, 1e5), torch.float16), ("hardtanh", (-70000, 1), torch.float16),
    ("hardtanh", (-1.0, 3.4e38), torch.bfloat16), ("hardtanh", (-1e39, 1.0), torch.float32),
    ("leaky_relu", (1e39,), torch.float16), ("leaky_relu", (-3.5e38,), torch.float32),
    ("hardtanh_backward", (-1.0, 1e39), torch.bfloat16), ("leaky_relu_backward", (1e39, False), torch.float16),
    ("leaky_relu", (0.1 + 0.5j,), torch.float32), ("hardtanh", (-1 + 1j, 1.0), torch.float32),
    ("hardtanh_backward", (-1.0, 1 - 2j), torch.float16), ("leaky_relu_backward", (0.5j, False), torch.bfloat16),
    ("leaky_relu_backward", (float("nan"), True), torch.float32)]


@pytest.mark.parametrize("name, scalars, dtype", _OUT_OF_RANGE, ids=lambda v: str(v))
def test_scalars_torch_cannot_convert_are_refused_like_torch(name, scalars, dtype):
    """A scalar torch's kernel cannot convert to the dtype it computes with (self's for
    hardtanh, float32 for the half types elsewhere) -- out of range, complex with an imaginary
    part -- and a NaN slope with self_is_result=True: torch refuses them; so do the op, its
    in-place form and its fake kernel (the aclnn layer would make inf, 0 or pass NaN), with
    nothing written and the version counter unmoved."""
    x = torch.tensor([0.5, -3.0, 2.0], dtype=dtype)
    tensors = (x, x) if name.endswith("backward") else (x,)
    with pytest.raises(RuntimeError):
        getattr(_ATEN, name)(*tensors, *scalars)
    calls = [lambda: getattr(ops, name)(*tensors, *scalars),
             lambda: getattr(ops, name)(*(t.to("meta") for t in tensors), *scalars)]
    if not name.endswith("backward"):
        calls.append(lambda: getattr(ops, name + "_")(x, *scalars))
    for call in calls:
        with pytest.raises(AclnnRuntimeError, match="torch refuses it too|which torch refuses too") as info:
            call()
        assert info.value.status == 161002
    assert x.tolist() == [0.5, -3.0, 2.0] and x._version == 0


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_a_nan_bound_beside_an_out_of_range_one_is_all_nan_as_in_torch(dtype):
    """(A breaker) torch's clamp fills a floating result with NaN when either bound is NaN,
    without converting the other: hardtanh(x, nan, 1e5) of a float16 x is all NaN, where opsnn
    refused the 1e5 "which torch refuses too". The op, its in-place form and its fake kernel
    give what torch.ops.aten gives, bit for bit; an integer x still refuses, as torch does."""
    nan = float("nan")
    for bounds in ((nan, 1e5), (-1e39, nan), (nan, -1e300), (1e300, nan), (nan, nan)):
        x = torch.tensor([0.5, -3.0, 2.0, float("inf"), -0.0], dtype=dtype)
        want = _ATEN.hardtanh(x, *bounds)
        assert want.isnan().all()
        got = ops.hardtanh(x, *bounds)
        assert got.dtype == dtype and got.view(torch.int8).equal(want.view(torch.int8)), bounds
        assert ops.hardtanh(x.to("meta"), *bounds).shape == x.shape
        y = x.clone()
        assert ops.hardtanh_(y, *bounds) is y and y.view(torch.int8).equal(want.view(torch.int8))
    with pytest.raises(RuntimeError):
        _ATEN.hardtanh(torch.ones(2, dtype=torch.int32), nan, 1e5)
    with pytest.raises(AclnnRuntimeError) as info:
        ops.hardtanh(torch.ones(2, dtype=torch.int32), nan, 1e5)
    assert info.value.status == 161002


def test_an_int64_bound_of_float_2_63_is_refused_saying_torch_wraps_it():
    """(A breaker, session 42) A float bound of 2**63 on int64: torch's range check compares in
    double, where it equals int64's max, so torch takes it and wraps it to -2**63 (docs/torch.md);
    opsnn refuses it, and the message said torch refused it too. An int 2**63 or a float beyond
    it torch does refuse."""
    x = torch.tensor([1, -3], dtype=torch.int64)
    assert _ATEN.hardtanh(x, -1.0, 2.0**63).tolist() == [-2**63, -2**63]
    for bound, says in ((2.0**63, "torch takes it, comparing in double, and wraps it; opsnn refuses it"),
                        (2**63, "torch refuses it too"), (1e19, "torch refuses it too")):
        with pytest.raises(AclnnRuntimeError, match=re.escape(says)):
            ops.hardtanh(x, -1.0, bound)
    assert x.tolist() == [1, -3]


@pytest.mark.parametrize("name, scalars", [("leaky_relu", (1e39,)), ("leaky_relu", (-3.5e38,)),
                                           ("leaky_relu_backward", (1e39, False))], ids=str)
def test_a_float64_slope_beyond_float32_is_refused(name, scalars):
    """float64 leaky_relu: torch takes a slope of 1e39, but opsnn's kernel takes the slope as a
    float32 attr (DECISION 2), where it would be inf and make finite inputs inf and NaN (0 * inf):
    refused (161002) by the op, its in-place form and its fake kernel, nothing written. A slope
    within float32's range computes (below; its rounding is DECISION 2's)."""
    x = torch.tensor([-1e-300, -0.0, 0.0, -2.0], dtype=torch.float64)
    tensors = (x, x) if name.endswith("backward") else (x,)
    calls = [lambda: getattr(ops, name)(*tensors, *scalars),
             lambda: getattr(ops, name)(*(t.to("meta") for t in tensors), *scalars)]
    if not name.endswith("backward"):
        calls.append(lambda: getattr(ops, name + "_")(x, *scalars))
    for call in calls:
        with pytest.raises(AclnnRuntimeError, match="outside float32's range .* float32 attr") as info:
            call()
        assert info.value.status == 161002
    assert x.tolist() == [-1e-300, -0.0, 0.0, -2.0] and x._version == 0
    within = getattr(ops, name)(*tensors, 3.4e38, *scalars[1:])
    assert not within.isnan().any() and within[3] == -2.0 * float(np.float32(3.4e38))


def test_a_float64_slope_that_rounds_to_float32s_max_runs():
    """A double past float32's max by less than half its ulp (2**103) is float32's max as the
    kernel's attr, finite: it runs, as in the Pythonic API (a new user's finding: refused as
    "would make it inf"); from half an ulp past (a tie, rounded to even: inf) it is refused."""
    top = float(np.finfo(np.float32).max)
    x = torch.tensor([-2.0, 3.0], dtype=torch.float64)
    for slope in (math.nextafter(top, math.inf), top + 2.0**103 - 2.0**75):
        for result in (ops.leaky_relu(x, slope), ops.leaky_relu_backward(x, x, slope, False)):
            assert result.tolist() == [-2.0 * top, 3.0]
        assert opsnn.leaky_relu(x.numpy(), slope).tolist() == [-2.0 * top, 3.0]
    for slope in (top + 2.0**103, -(top + 2.0**103)):
        with pytest.raises(AclnnRuntimeError, match="outside float32's range"):
            ops.leaky_relu(x, slope)


def test_a_0d_tensor_as_a_pythonic_scalar_is_told_to_pass_its_number():
    """(A new user's) `opsnn.leaky_relu(t, torch.tensor(0.1))`, which `opsnn.torch.leaky_relu` and
    torch take, was refused "must be a number (a Python or NumPy scalar, or a 0-d array), got
    Tensor", naming neither its shape nor what to pass: the refusal (161002, as before) gives
    the shape and, for a 0-d tensor, the way to pass its number."""
    x = torch.tensor([-2.0, 3.0])
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.leaky_relu(x, torch.tensor(0.5))
    assert (info.value.status, info.value.message) == (161002, (
        "LeakyRelu: negativeSlope must be a number (a Python or NumPy scalar, or a 0-d array), got Tensor of "
        "shape [] (a tensor: pass its number, t.item(), or call opsnn.torch's function, which takes a 0-d tensor)"))
    bound = torch.tensor([-1.0, 0.0])
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.hardtanh(x, bound)
    assert info.value.message == ("Hardtanh: clipValueMin must be a number (a Python or NumPy scalar, or a 0-d "
                                  f"array), got Tensor of shape [2] (Python arguments: clipValueMin is min_val = {bound!r})")
    assert ot.leaky_relu(x, torch.tensor(0.5)).tolist() == opsnn.leaky_relu(x, 0.5).tolist() == [-1.0, 3.0]


def test_a_0d_tensor_as_a_backward_scalar_is_not_sent_to_opsnn_torch():
    """The hint for a 0-d tensor given as a Pythonic scalar named opsnn.torch's function as one
    that takes it, for every operator; opsnn.torch's leaky_relu_backward and hardtanh_backward
    take numbers only (docs/torch.md, as torch.ops.aten's), so the hint sent the caller to a
    second refusal. The backward functions' hint now names t.item() alone; the forward ones',
    in place too, still name opsnn.torch's function, which reads the tensor."""
    x = torch.tensor([-2.0, 3.0])
    for call, prefix in ((lambda: opsnn.leaky_relu_backward(x, x, torch.tensor(0.5)), "LeakyReluBackward: negativeSlope"),
                         (lambda: opsnn.hardtanh_backward(x, x, torch.tensor(-1.0), 1.0), "HardtanhBackward: min")):
        with pytest.raises(opsnn.AclnnError) as info:
            call()
        assert (info.value.status, info.value.message.split(" (Python arguments")[0]) == (161002, (
            f"{prefix} must be a number (a Python or NumPy scalar, or a 0-d array), got Tensor of shape [] "
            "(a tensor: pass its number, t.item())"))
    with pytest.raises(RuntimeError, match="Expected a value of type 'number' for argument 'negative_slope'"):
        ot.leaky_relu_backward(x, x, torch.tensor(0.5), False)
    with pytest.raises(opsnn.AclnnError) as info:
        opsnn.leaky_relu_(x.numpy(), torch.tensor(0.5))
    assert info.value.message.endswith(
        "got Tensor of shape [] (a tensor: pass its number, t.item(), or call opsnn.torch's function, which takes a "
        "0-d tensor)")
    assert ot.leaky_relu_(x.clone(), torch.tensor(0.5)).tolist() == [-1.0, 3.0]


def test_a_float64_hardtanh_backward_is_refused_for_its_dtype_whatever_its_bounds():
    """hardtanh_backward takes no float32 attr: a float64 call is refused for its dtype (DECISION
    11), with bounds beyond float32's range too, not for a slope it does not have."""
    x = torch.randn(4, dtype=torch.float64)
    for bounds in ((-1e300, 1.0), (-1.0, 1.0)):
        with pytest.raises(AclnnRuntimeError, match="gradOutput has dtype DT_DOUBLE") as info:
            ot.hardtanh_backward(x, x, *bounds)
        assert info.value.status == 161002 and "slope" not in str(info.value)


@pytest.mark.parametrize("name, scalars, dtype", [
    ("hardtanh", (-65504.0, 65504.0), torch.float16), ("hardtanh", (float("-inf"), 1e5), torch.float32),
    ("leaky_relu", (1e5,), torch.float16), ("hardtanh_backward", (-1e5, 1e5), torch.bfloat16),
    ("leaky_relu", (0.25 + 0j,), torch.float16), ("hardtanh", (-1 + 0j, 0.5 + 0j), torch.bfloat16),
    ("leaky_relu_backward", (-0.5 + 0j, False), torch.float32), ("hardtanh", (-1e300, 1e300), torch.float64)],
    ids=lambda v: str(v))
def test_scalars_torch_converts_give_torchs_result(name, scalars, dtype):
    """At the edge of the range (float16's max, inf, a float16 slope beyond float16 but within
    float32, which torch computes in) and complex numbers without an imaginary part (their real
    part): the result is torch's, bit for bit."""
    x = torch.tensor([0.5, -3.0, 2.0, -0.0, 70.0], dtype=dtype)
    tensors = (x, x) if name.endswith("backward") else (x,)
    assert_same_bits(getattr(ops, name)(*tensors, *scalars), getattr(_ATEN, name)(*tensors, *scalars))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=str)
def test_int_bounds_of_a_floating_tensor_as_torch_takes_them(dtype):
    """hardtanh's int bounds on a floating tensor are the values torch clamps with (a breaker:
    (1, nan) was refused as min 1 > max 0, the aclnn layer's int64 comparison of NaN, F6; a
    reviewer: an int rounded to float32 first made (16777219, 16777219.5) min > max). Eager, in
    place, compiled."""
    x = torch.tensor([-300.0, -2.0, 0.5, 2.0, -0.0, 200.0, 2.0**24, -2.0**60], dtype=dtype)
    for bounds in ((1, float("nan")), (-128, 100), (-2**24 - 1, 2**24 + 1), (0, 6), (16777219, 16777219.5),
                   (16777216.5, 16777217), (-2**60 - 1, 2**60 + 1)):
        if dtype == torch.float16 and max(map(abs, bounds)) > 65504:
            continue  # beyond float16: refused, as torch refuses it
        assert_same_bits(ops.hardtanh(x, *bounds), _ATEN.hardtanh(x, *bounds))
        assert_same_bits(ops.hardtanh_(x.clone(), *bounds), _ATEN.hardtanh(x, *bounds))
    compiled = torch.compile(lambda t: ops.hardtanh(t, 1, float("nan")), backend="eager", fullgraph=True)
    assert_same_bits(compiled(x), _ATEN.hardtanh(x, 1, float("nan")))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_ints_beyond_int64_round_once_as_torch_takes_them(dtype):
    """torch.Scalar holds an int in [2**63, 2**64) as a uint64 and converts it to float32 in one
    rounding; the aclnn layer takes it as a double (as torch_npu sends it), a second rounding:
    2**63 + 2**39 + 1 is 2**63 + 2**40 in torch and was 2**63 in the binding (a new user's
    finding). The binding hands over torch's value; every op, bit for bit."""
    v = 2**63 + 2**39 + 1
    x = torch.tensor([-3.0, 2.0**63, 1e19, 0.5], dtype=dtype)
    for name, scalars in (("leaky_relu", (v,)), ("leaky_relu_backward", (v, False)), ("hardtanh", (-1, v)),
                          ("hardtanh_backward", (-1, v)), ("hardtanh", (-1, 1e30)), ("hardtanh", (-1e30, float("inf"))),
                          ("leaky_relu", (float(v),))):
        tensors = (x, x) if name.endswith("backward") else (x,)
        assert_same_bits(getattr(ops, name)(*tensors, *scalars), getattr(_ATEN, name)(*tensors, *scalars))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.func.jvp uses torch.jit.script inside
def test_forward_mode_ad_is_refused_not_silently_zero():
    """torch 2.13 custom ops have no forward-mode formula: through the functions and modules,
    torch.autograd.forward_ad, torch.func.jvp and jacfwd raise NotImplementedError (the op itself
    would return zero tangents); reverse mode and vmap (torch's per-sample fallback) are exact."""
    import torch.autograd.forward_ad as fwAD

    x = torch.tensor([-2.0, -0.5, 1.0, 3.0])
    calls = [lambda t: ot.leaky_relu(t, 0.1), lambda t: ot.hardtanh(t, -1.0, 1.0), lambda t: ot.relu6(t),
             lambda t: ot.nn.LeakyReLU(0.1)(t), lambda t: ot.leaky_relu_backward(t, x, 0.1),
             lambda t: ot.hardtanh_backward(x, t, -1.0, 1.0), lambda t: ot.leaky_relu_(t.clone(), 0.1)]
    for call in calls:
        with fwAD.dual_level():
            with pytest.raises(NotImplementedError, match="forward-mode AD"):
                call(fwAD.make_dual(x, torch.ones_like(x)))
            assert torch.equal(call(x), call(x.clone()))  # no tangent: runs
        with pytest.raises(NotImplementedError, match="forward-mode AD"):
            torch.func.jvp(call, (x,), (torch.ones_like(x),))
    with pytest.raises(NotImplementedError, match="forward-mode AD"):
        torch.func.jacfwd(lambda t: ot.hardtanh(t))(x)
    batch = torch.randn(3, 4)
    assert_same_bits(torch.func.vmap(lambda t: ot.leaky_relu(t, 0.1))(batch), F.leaky_relu(batch, 0.1))
    # forward over reverse: a tangent on the gradient given to the backward formulas
    for forward in (lambda t: ot.leaky_relu(t, 0.1), lambda t: ot.hardtanh(t), lambda t: ot.leaky_relu_(t * 1, 0.1),
                    lambda t: ot.hardtanh_(t * 1)):
        with fwAD.dual_level():
            leaf = x.clone().requires_grad_()
            with pytest.raises(NotImplementedError, match="forward-mode AD"):
                torch.autograd.grad(forward(leaf), leaf, fwAD.make_dual(torch.ones(4), torch.ones(4)))
            (plain,) = torch.autograd.grad(forward(leaf), leaf, torch.ones(4))  # no tangent: runs
            assert plain.shape == (4,)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit itself is deprecated
def test_swap_activations_refuses_torchscript():
    """A scripted or traced module runs its compiled graph: swapping its submodules' classes would
    change nothing, so it is refused (swap first, then script)."""
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.LeakyReLU(0.1))
    for compiled in (torch.jit.script(model), torch.jit.trace(model, torch.randn(1, 2))):
        with pytest.raises(TypeError, match="TorchScript"):
            ot.swap_activations(compiled)
        # one held inside a plain module too, naming where (a breaker: skipped without a word)
        outer = torch.nn.Sequential(torch.nn.Linear(2, 2), compiled)
        with pytest.raises(TypeError, match="swap_activations: submodule '1' is a TorchScript module"):
            ot.swap_activations(outer)
    assert type(model[1]) is torch.nn.LeakyReLU
    with pytest.raises(TypeError, match="model must be a torch.nn.Module, got function"):
        ot.swap_activations(lambda x: x)


def test_inputs_that_are_no_tensor_are_refused_as_torch_nn_functional_refuses_them():
    """(A breaker) None was torch's 'no fallback function is registered' (hardtanh_: an internal
    AttributeError), a list or an int the schema's cast error; each is the TypeError
    torch.nn.functional raises, naming the argument and its position."""
    x = torch.ones(3)
    for call, words in ((lambda: ot.leaky_relu(None), "leaky_relu(): argument 'input' (position 1) must be Tensor, "
                                                      "not NoneType"),
                        (lambda: ot.hardtanh_(None), "hardtanh_(): argument 'input' (position 1) must be Tensor"),
                        (lambda: ot.relu6([1.0]), "relu6(): argument 'input' (position 1) must be Tensor, not list"),
                        (lambda: ot.leaky_relu_(3), "not int"),
                        (lambda: ot.hardtanh(np.ones(3)), "not ndarray"),
                        (lambda: ot.nn.LeakyReLU()([1.0]), "leaky_relu(): argument 'input'"),
                        (lambda: ot.leaky_relu_backward(None, x, 0.1), "argument 'grad_output' (position 1)"),
                        (lambda: ot.hardtanh_backward(x, [1.0], -1, 1), "argument 'self' (position 2) must be "
                                                                         "Tensor, not list")):
        with pytest.raises(TypeError) as info:
            call()
        assert words in str(info.value), info.value
    with pytest.raises(TypeError, match="must be Tensor, not NoneType"):
        F.leaky_relu(None)


def test_swap_activations_keeps_shared_modules_shared():
    """One activation held twice (two slots, and two parents): every slot runs opsnn's op, and
    it stays one object, with its forward hook and the user's reference."""
    act = torch.nn.LeakyReLU(0.2)
    calls = []
    act.register_forward_hook(lambda module, args, out: calls.append(type(module)))
    inner = torch.nn.Sequential(torch.nn.Linear(2, 2), act)
    model = torch.nn.Sequential(act, torch.nn.Linear(2, 2), act, inner)
    assert ot.swap_activations(model) is model
    assert model[0] is act and model[2] is act and inner[1] is act and type(act) is ot.nn.LeakyReLU
    x = torch.randn(3, 2)
    assert_same_bits(model(x), torch.nn.functional.leaky_relu(
        inner[0](torch.nn.functional.leaky_relu(model[1](torch.nn.functional.leaky_relu(x, 0.2)), 0.2)), 0.2))
    assert calls == [ot.nn.LeakyReLU] * 3


# ---- fake / meta ----------------------------------------------------------------------------

def test_meta_shapes_and_dtypes_come_from_the_specs():
    meta = dict(device="meta")
    out = ops.leaky_relu_backward(torch.empty(3, 1, **meta), torch.empty(1, 4, dtype=torch.float16, **meta), 0.2, False)
    assert (out.shape, out.dtype, out.device.type) == ((3, 4), torch.float32, "meta")
    out = ops.leaky_relu_backward(torch.empty(2, 3, dtype=torch.float16, **meta),
                                  torch.empty(2, 3, dtype=torch.bfloat16, **meta), 0.2, False)
    assert out.dtype == torch.float32
    assert ops.hardtanh_backward(torch.empty(5, dtype=torch.bfloat16, **meta),
                                 torch.empty(5, dtype=torch.bfloat16, **meta), -1, 1).dtype == torch.bfloat16
    out = ops.leaky_relu(torch.empty(2, 0, 3, dtype=torch.float64, **meta), 0.1)
    assert (out.shape, out.dtype) == ((2, 0, 3), torch.float64)
    out = ops.hardtanh(torch.empty(7, dtype=torch.int32, **meta), -1, 1)
    assert (out.shape, out.dtype) == ((7,), torch.int32)


def test_meta_refuses_what_the_kernel_refuses():
    meta = dict(device="meta")
    with pytest.raises(AclnnRuntimeError) as info:  # HardtanhBackward: shapes must be equal
        ops.hardtanh_backward(torch.empty(3, 1, **meta), torch.empty(1, 4, **meta), -1, 1)
    assert info.value.status == 161002
    with pytest.raises(AclnnRuntimeError):  # the in-place negative-slope rule
        ops.leaky_relu_backward(torch.empty(3, **meta), torch.empty(3, **meta), -0.1, True)
    with pytest.raises(AclnnRuntimeError):  # LeakyRelu has no integer dtypes
        ops.leaky_relu(torch.empty(3, dtype=torch.int64, **meta), 0.1)


@pytest.mark.parametrize("inference", [False, True])
def test_meta_in_place_ops_refuse_what_the_kernel_refuses(inference):
    """Found by a breaker: the in-place ops' meta / fake kernels (torch's generated ones for an
    inplace-tagged op) returned self unchecked: an int64 or 9-d self and min > max were taken on
    meta, refused on CPU; in inference mode a bound beyond uint8 too. They check as the CPU
    kernel does now, and pass self through."""
    meta = {"device": "meta"}
    calls = [(lambda: ops.leaky_relu_(torch.empty(3, dtype=torch.int64, **meta), 0.1), "DT_INT64"),
             (lambda: ot.leaky_relu_(torch.empty([1] * 9, **meta)), "9 dimensions"),
             (lambda: ops.hardtanh_(torch.empty(3, **meta), 1.0, -1.0), "clipValueMin must be <= clipValueMax"),
             (lambda: ops.hardtanh_(torch.empty(3, dtype=torch.uint8, **meta), 0, 300), "does not fit self's dtype"),
             (lambda: ops.leaky_relu_(torch.empty(3, **meta).expand(2, 3), 0.1), "single memory location")]
    with torch.inference_mode(inference):
        for call, words in calls:
            with pytest.raises(AclnnRuntimeError) as info:
                call()
            assert info.value.status == 161002 and words in str(info.value), str(info.value)
        x = torch.empty(2, 3, **meta)
        assert ops.leaky_relu_(x, 0.2) is x and ot.hardtanh_(x, -1.0, 2.0) is x


def _empty(shape, dtype=torch.float32):
    return lambda device: torch.zeros(shape, dtype=dtype, device=device)


_FLOAT, _NINE_D = _empty(3), _empty([1] * 9)
# (op, its tensors made on a device, its other arguments): each a refusal of another kind (dtype,
# rank, shapes, min > max, a scalar the dtype cannot hold, a negative slope of an in-place result)
_REFUSED = [
    ("leaky_relu", [_empty(3, torch.int64)], [0.1]), ("leaky_relu", [_NINE_D], [0.1]),
    ("leaky_relu", [_FLOAT], [1e39]),
    ("leaky_relu_", [_empty(3, torch.int64)], [0.1]), ("leaky_relu_", [_NINE_D], [0.1]),
    ("leaky_relu_", [_FLOAT], [1e39]),
    ("hardtanh", [_empty(3, torch.bool)], [0, 1]), ("hardtanh", [_NINE_D], [-1.0, 1.0]),
    ("hardtanh", [_FLOAT], [1.0, -1.0]), ("hardtanh", [_empty(3, torch.uint8)], [-1.0, 1.0]),
    ("hardtanh_", [_empty(3, torch.bool)], [0, 1]), ("hardtanh_", [_NINE_D], [-1.0, 1.0]),
    ("hardtanh_", [_FLOAT], [1.0, -1.0]), ("hardtanh_", [_empty(3, torch.uint8)], [-1.0, 1.0]),
    ("leaky_relu_backward", [_empty(3, torch.int32), _FLOAT], [0.1, False]),
    ("leaky_relu_backward", [_empty(2), _FLOAT], [0.1, False]),
    ("leaky_relu_backward", [_NINE_D, _NINE_D], [0.1, False]),
    ("leaky_relu_backward", [_FLOAT, _FLOAT], [-0.1, True]),
    ("hardtanh_backward", [_empty(3, torch.float64)] * 2, [-1.0, 1.0]),
    ("hardtanh_backward", [_empty(2), _FLOAT], [-1.0, 1.0]),
    ("hardtanh_backward", [_empty(3, torch.float16), _FLOAT], [-1.0, 1.0]),
    ("hardtanh_backward", [_NINE_D, _NINE_D], [-1.0, 1.0]),
]


@pytest.mark.parametrize("name, tensors, scalars", _REFUSED,
                         ids=[f"{name}-{i}" for i, (name, _, _) in enumerate(_REFUSED)])
def test_meta_refusals_read_as_the_cpu_kernels(name, tensors, scalars):
    """(a breaker) A meta / fake refusal says what the CPU kernel's says, word for word: the
    in-place ops' named LeakyRelu / Hardtanh where the CPU kernel names InplaceLeakyRelu /
    InplaceHardtanh, and the fake kernels left out the "(Python arguments: clipValueMin is
    min_val = 1.0; ...)" note. Through torch.ops.opsnn and, for the forward ops, the functions."""
    calls = [getattr(ops, name)]
    if not name.endswith("backward") and scalars[0] <= scalars[-1]:  # (the function's min > max: ValueError)
        calls.append(getattr(ot, name))
    for call in calls:
        said = []
        for device in ("cpu", "meta"):
            with pytest.raises(AclnnRuntimeError) as info:
                call(*[make(device) for make in tensors], *scalars)
            said.append((info.value.status, str(info.value)))
        assert said[0][0] == 161002 and said[1] == said[0]
    if (name, scalars) in (("hardtanh", [1.0, -1.0]), ("hardtanh_", [1.0, -1.0])):
        assert said[1][1] == (f"[161002 ACLNN_ERR_PARAM_INVALID] {'Inplace' if name.endswith('_') else ''}Hardtanh: "
                              "clipValueMin must be <= clipValueMax, got min 1.0 > max -1.0 (compared as double, "
                              "following clipValueMin's dtype); swap the bounds (Python arguments: clipValueMin is "
                              "min_val = 1.0; clipValueMax is max_val = -1.0)")


# ---- zero-copy passage and errors -----------------------------------------------------------

@pytest.mark.parametrize("dtype", (*LOW, torch.float64), ids=str)
def test_to_numpy_is_a_view(dtype):
    base = torch.randn(8, 10).to(dtype)
    view = base[1::2, 3:9].t()
    arr = ot.to_numpy(view)
    assert arr.shape == tuple(view.shape)
    assert arr.__array_interface__["data"][0] == view.data_ptr()
    assert [s // arr.itemsize for s in arr.strides] == list(view.stride())
    arr[0, 0] = 42
    assert view[0, 0].item() == 42 and base[1, 3].item() == 42
    back = ot.from_numpy(arr)
    assert back.dtype == dtype and back.data_ptr() == view.data_ptr()


def test_to_numpy_reads_a_tensor_that_requires_grad_detached_and_says_so():
    """Where ``Tensor.numpy()`` refuses a tensor that requires grad, ``to_numpy`` views it as
    ``t.detach().numpy()`` (what the ops read with; the bridge's documented crossing), outside
    autograd: a write through the view bumps no version counter, so autograd cannot see it. That
    had been silent (a breaker's): the docstring says it now."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    arr = ot.to_numpy(x)
    arr[0] = 5.0
    assert x.tolist() == [5.0, 2.0] and x.requires_grad and x._version == 0
    doc = " ".join(ot.to_numpy.__doc__.split())
    assert ("A tensor that requires grad is read detached, as ``t.detach().numpy()`` (where "
            "``Tensor.numpy()`` refuses it)") in doc
    assert "a write through the view is not recorded by autograd" in doc


def test_bridge_refuses_other_types_as_torch_does():
    """from_numpy / to_numpy are public: a wrong type is a TypeError naming the argument, the
    type expected and the one given (a breaker: AttributeError from inside), as torch.from_numpy's."""
    with pytest.raises(TypeError, match="from_numpy: a must be a numpy.ndarray, got list"):
        ot.from_numpy([1.0, 2.0])
    with pytest.raises(TypeError, match="to_numpy: tensor must be a torch.Tensor, got int"):
        ot.to_numpy(5)
    with pytest.raises(TypeError, match="to_numpy: tensor must be a torch.Tensor, got ndarray"):
        ot.to_numpy(np.ones(2))


def test_results_are_fresh_tensors_in_torchs_layout():
    x = torch.randn(4, 6).t()
    y = ot.leaky_relu(x, 0.1)
    assert y.stride() == torch.nn.functional.leaky_relu(x, 0.1).stride() == (1, 6)
    assert y.data_ptr() != x.data_ptr()
    stepped = ot.leaky_relu(x[::2], 0.1)  # not dense: ordered by its strides, as TensorIterator does
    assert stepped.stride() == torch.nn.functional.leaky_relu(x[::2], 0.1).stride() == (1, 3)
    y2 = ot.leaky_relu(x.requires_grad_(), 0.1)
    assert y2.requires_grad


def test_errors_are_runtime_errors_with_the_aclnn_status():
    with pytest.raises(RuntimeError) as info:
        ot.leaky_relu(torch.arange(4), 0.1)  # LeakyRelu: no integer dtypes
    err = info.value
    assert isinstance(err, AclnnRuntimeError) and isinstance(err, opsnn.AclnnError)
    assert err.status == opsnn.Status.ERR_PARAM_INVALID and "LeakyRelu" in err.message
    with pytest.raises(AclnnRuntimeError) as info:  # aclnnHardtanh: min > max
        ops.hardtanh(torch.randn(3), 1.0, -1.0)
    assert info.value.status == 161002
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):  # as F.hardtanh
        ot.hardtanh(torch.randn(3), 1.0, -1.0)
    with pytest.raises(AclnnRuntimeError) as info:  # HardtanhBackward: one dtype for both
        ot.hardtanh_backward(torch.randn(3), torch.randn(3).half(), -1.0, 1.0)
    assert "HardtanhBackward" in info.value.message


@pytest.mark.parametrize("grad", [torch.tensor([2, 3]), torch.tensor([True, False])], ids=["int64", "bool"])
def test_backward_ops_keep_aclnns_dtype_lists(grad):
    """docs/torch.md decision 4: an integer or bool grad_output is refused (aclnn's dtype list),
    where aten.leaky_relu_backward promotes an int64 one with a float32 self."""
    self = torch.tensor([1.0, -1.0])
    if grad.dtype == torch.int64:
        assert torch.ops.aten.leaky_relu_backward(grad, self, 0.5, False).tolist() == [2.0, 1.5]
    for call in (lambda: ops.leaky_relu_backward(grad, self, 0.5, False),
                 lambda: ops.hardtanh_backward(grad, self, -1.0, 1.0)):
        with pytest.raises(AclnnRuntimeError, match="tensor gradOutput has dtype DT_") as info:
            call()
        assert info.value.status == 161002


def test_compiled_float_scalars_are_graph_constants():
    """docs/torch.md: a Python float slope is specialized (one graph per value, the results
    exact), and a refusal that depends on it is made while compiling: dynamo's TorchRuntimeError
    whose message holds the AclnnRuntimeError's (the float twin's fake kernel meets it in
    dynamo's own pass; through the Scalar op it was the backend's trace: BackendCompilerFailed)."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    f = torch.compile(lambda x, s: ot.leaky_relu(x, s), backend="aot_eager", fullgraph=True)
    x = torch.tensor([-1.0, 2.0, -0.0])
    for slope in (0.5, 0.25, 0.5):
        assert_same_bits(f(x, slope), torch.nn.functional.leaky_relu(x, slope))
    assert counters["stats"]["unique_graphs"] == 2
    with pytest.raises(torch._dynamo.exc.TorchRuntimeError,
                       match=r"AclnnRuntimeError\(\"\[161002 ACLNN_ERR_PARAM_INVALID\] opsnn.torch: leaky_relu: "
                             r"negative_slope 1e\+39 is outside float32's range"):
        f(x.double(), 1e39)
    torch._dynamo.reset()


@pytest.fixture
def direct_calls(monkeypatch):
    """The names of the CPU kernels the functional API called without the dispatcher."""
    from opsnn.torch import _ops as kernels

    seen = []
    for name, fn in list(kernels._CPU_KERNELS.items()):
        monkeypatch.setitem(kernels._CPU_KERNELS, name, lambda *a, _fn=fn, _name=name: seen.append(_name) or _fn(*a))
    return seen


def test_plain_calls_run_the_kernel_without_the_dispatcher(direct_calls):
    """Plain CPU tensors, Python numbers, no autograd to record: the functional API calls the CPU
    kernel itself (what the dispatcher would reach), and the result is the op's, bit for bit."""
    x = torch.tensor([[-2.0, -0.0, 0.0], [3.0, float("nan"), -float("inf")]]).t()  # strided
    g = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).t()
    calls = [(lambda: ot.leaky_relu(x, 0.1), lambda: ops.leaky_relu(x, 0.1)),
             (lambda: ot.hardtanh(x, -0.5, 2), lambda: ops.hardtanh(x, -0.5, 2)),
             (lambda: ot.leaky_relu_backward(g, x, 0.1, False), lambda: ops.leaky_relu_backward(g, x, 0.1, False)),
             (lambda: ot.hardtanh_backward(g, x, -1.0, 1.0), lambda: ops.hardtanh_backward(g, x, -1.0, 1.0))]
    for functional, op in calls:
        direct = functional()
        expected = op()
        assert_same_bits(direct, expected)
        assert direct.stride() == expected.stride()
    assert direct_calls == ["leaky_relu", "hardtanh", "leaky_relu_backward", "hardtanh_backward"]
    x.requires_grad_()
    with torch.no_grad():  # nothing to record
        ot.leaky_relu(x, 0.1)
    assert direct_calls[-1] == "leaky_relu" and len(direct_calls) == 5
    with torch.inference_mode():  # its tensors lack the autograd keys, and are plain all the same
        made = torch.tensor([-2.0, 3.0])
        assert_same_bits(ot.hardtanh(made, -1.0, 1.0), torch.tensor([-1.0, 1.0]))
    assert direct_calls[-1] == "hardtanh" and len(direct_calls) == 6


def test_a_torch_without_dispatch_key_sets_takes_the_dispatcher(monkeypatch, direct_calls):
    """Where torch cannot tell a tensor's dispatch keys (no torch._C._dispatch_keys), no tensor
    counts as plain: every call goes through the dispatcher, with the same result."""
    from opsnn._core import torchplain
    from opsnn.torch import _bridge

    monkeypatch.setattr(torchplain, "PLAIN_KEYS", frozenset())
    monkeypatch.delattr(torch._C, "_dispatch_keys")
    x = torch.tensor([-2.0, 0.5, 3.0])
    assert not _bridge.is_plain(x)
    assert_same_bits(ot.leaky_relu(x, 0.1), F.leaky_relu(x, 0.1))
    assert direct_calls == []


def test_only_plain_cpu_tensors_count_as_plain():
    """``is_plain`` (one read of the dispatch keys) says no to each kind of tensor the attribute
    checks it stands for said no to, and yes to a plain one that requires grad or was made in
    inference mode, of any dtype and layout of strides."""
    from opsnn.torch import _bridge

    x = torch.tensor([[-2.0, 0.5], [3.0, 1.0]])
    plain = [x, x.t(), x[:, :1], x.expand(3, 2, 2), x.to(torch.bfloat16), x.double().requires_grad_(),
             torch.from_numpy(np.ones(3, np.float16))]
    with torch.inference_mode():
        plain.append(torch.ones(3))
    assert all(_bridge.is_plain(t) for t in plain)
    complex_view = torch.tensor([1 + 2j, -3 - 1j]).conj()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # quantized and nested tensors: deprecated / beta
        others = [x.to("meta"), x.to_sparse(), x.to_mkldnn(), x.as_subclass(_Sub), torch.nn.Parameter(x),
                  complex_view, complex_view.imag, torch._efficientzerotensor(3),
                  torch.quantize_per_tensor(x, 0.1, 0, torch.qint8),
                  torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])]
    assert not any(_bridge.is_plain(t) for t in others)
    inside = []  # functorch's wrappers, while the transform runs
    torch.func.vmap(lambda t: inside.append(_bridge.is_plain(t)) or t)(x)
    torch.func.grad(lambda t: inside.append(_bridge.is_plain(t)) or t.sum())(x)
    assert inside == [False, False]


class _Sub(torch.Tensor):
    pass


def test_calls_something_could_intercept_or_record_go_through_the_dispatcher(direct_calls):
    """Where the dispatcher does more than reach the kernel (a dispatch or function mode,
    FakeTensorMode, jit.trace, the profiler, vmap, a subclass, a meta tensor, a value the schema
    converts), the functional API calls torch.ops.opsnn.*, and whatever intercepts sees it."""
    x = torch.tensor([-2.0, 0.5, 3.0])
    with OpLog() as log:
        ot.leaky_relu(x, 0.1)
        ot.hardtanh_backward(x, x, -1.0, 1.0)
    assert [name for name, _ in log.calls] == ["opsnn::leaky_relu", "opsnn::hardtanh_backward"]

    names = []

    class Seen(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            names.append(str(func))
            return func(*args, **(kwargs or {}))

    with Seen():
        ot.hardtanh(x)
    assert any("hardtanh" in name for name in names)

    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode() as mode:
        assert ot.leaky_relu(mode.from_tensor(x), 0.1).shape == (3,)
    with torch.profiler.profile() as prof:
        ot.leaky_relu(x, 0.1)
    assert any(e.name == "opsnn::leaky_relu" for e in prof.events())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit itself is deprecated
        traced = torch.jit.trace(lambda t: ot.leaky_relu(t, 0.1), (x,), check_trace=False)
    assert "opsnn::leaky_relu" in str(traced.graph)
    batch = x.reshape(3, 1)
    assert_same_bits(torch.func.vmap(lambda t: ot.leaky_relu(t, 0.1))(batch), F.leaky_relu(batch, 0.1))
    assert type(ot.leaky_relu(x.as_subclass(_Sub), 0.1)) is _Sub
    assert ot.leaky_relu(x.to("meta"), 0.1).device.type == "meta"
    # an int flag and a bool slope: the schema converts them (False, 1.0)
    assert_same_bits(ot.leaky_relu_backward(x, x, 0.1, 0), aten.leaky_relu_backward(x, x, 0.1, False))
    assert_same_bits(ot.leaky_relu(x, True), x)
    assert direct_calls == []


def test_recorded_direct_calls_give_the_ops_gradients(direct_calls):
    """A tensor that requires grad: the kernel runs inside an autograd.Function with the op's own
    backward formula, and the backward pass (grad mode off) calls the backward kernel directly;
    with create_graph the backward call is recorded the same way. Gradients of first and second
    order are the op's (torch.ops.opsnn.*, through the dispatcher), bit for bit."""
    x = torch.tensor([-2.0, -0.0, 0.5, 3.0, -1.5], requires_grad=True)
    seed = torch.tensor([1.0, 2.0, -3.0, 0.5, 4.0])
    pairs = [(lambda t: ot.leaky_relu(t, 0.1), lambda t: ops.leaky_relu(t, 0.1)),
             (lambda t: ot.hardtanh(t, -1.0, 1.0), lambda t: ops.hardtanh(t, -1.0, 1.0)),
             (lambda t: ot.leaky_relu_backward(seed, t * t, 0.2, False),
              lambda t: ops.leaky_relu_backward(seed, t * t, 0.2, False)),
             (lambda t: ot.hardtanh_backward(t * 3, t * 0.5, -1.0, 1.0),
              lambda t: ops.hardtanh_backward(t * 3, t * 0.5, -1.0, 1.0))]
    for functional, op in pairs:
        grads = []
        for fn in (functional, op):
            y = fn(x)
            (g1,) = torch.autograd.grad(y, x, seed, create_graph=True)
            (g2,) = torch.autograd.grad(g1, x, seed, allow_unused=True, materialize_grads=True)
            grads.append((y.detach(), g1.detach(), g2))
        for got, want in zip(*grads):
            assert_same_bits(got, want)
    assert direct_calls[:3] == ["leaky_relu", "leaky_relu_backward", "leaky_relu_backward"]
    y = ot.leaky_relu(x, 0.1)
    assert type(y.grad_fn).__name__ == "_LeakyReluBackward"
    before = len(direct_calls)
    y.backward(seed)
    assert direct_calls[before:] == ["leaky_relu_backward"]
    assert_same_bits(x.grad, torch.tensor([0.1, 0.2, -3.0, 0.5, 0.4]))


def test_a_plain_tensor_used_inside_a_functorch_transform_goes_through_the_dispatcher(direct_calls):
    """A plain tensor that requires grad, captured by a function torch.func.vmap / grad runs:
    the functorch layer must see the op (the direct call's autograd.Function, which functorch
    takes only with a setup_context, raised "In order to use an autograd.Function with functorch
    transforms ..."); the result is the op's, through the dispatcher."""
    x = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    batch = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    for functional, op in ((lambda: ot.leaky_relu(x, 0.1), lambda: ops.leaky_relu(x, 0.1)),
                           (lambda: ot.hardtanh(x, -1.0, 1.0), lambda: ops.hardtanh(x, -1.0, 1.0)),
                           (lambda: ot.leaky_relu_backward(x, x, 0.1, False),
                            lambda: ops.leaky_relu_backward(x, x, 0.1, False)),
                           (lambda: ot.hardtanh_backward(x, x, -1.0, 1.0),
                            lambda: ops.hardtanh_backward(x, x, -1.0, 1.0))):
        got = torch.func.vmap(lambda t, f=functional: f() + t)(batch)
        assert_same_bits(got.detach(), torch.func.vmap(lambda t, f=op: f() + t)(batch).detach())
    assert direct_calls == []


def test_what_the_dispatcher_would_resolve_or_convert_goes_through_it(direct_calls):
    """Found by a breaker: a lazy negative view (a gradient taken through a conjugate) is
    resolved by the dispatcher's fallback, autocast converts per its registrations, and the
    schema refuses an int beyond int64 and tensors of other layouts with torch's own error
    types; the direct call must not get there first with different results or errors."""
    x = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    w = torch.tensor([1 + 2j, 3 - 1j, -2 + 1j])
    for pair in ((lambda t: ot.leaky_relu(t, 0.1), lambda t: F.leaky_relu(t, 0.1)), (ot.hardtanh, F.hardtanh)):
        grads = []
        for fn in pair:
            x.grad = None
            (torch.complex(torch.zeros(3), fn(x)).conj() * w).real.sum().backward()
            grads.append(x.grad.clone())
        assert_same_bits(grads[0], grads[1])
    direct_calls.clear()  # (the forwards above ran directly, recorded)
    neg = torch.tensor([1 + 2j, -3 - 1j]).conj().imag
    assert neg.is_neg()
    assert_same_bits(ot.leaky_relu(neg, 0.1), ops.leaky_relu(neg.resolve_neg(), 0.1))
    plain = x.detach()
    with pytest.raises(OverflowError):
        ot.leaky_relu(plain, 2**70)
    with pytest.raises(NotImplementedError):
        ot.leaky_relu(plain.to_sparse(), 0.1)
    assert_same_bits(ot.leaky_relu(torch._efficientzerotensor(3), 0.1), torch.zeros(3))
    assert direct_calls == []


def test_autocast_and_kernel_overrides_are_honoured():
    """An autocast registration for an opsnn op, and a CPU kernel registered over opsnn's (an
    in-place op's too), apply to the functional API as to torch.ops.opsnn.*, the kernel inside torch.compile too
    (where the float twins must then stand aside; a reviewer) (run apart: both change the process)."""
    script = """
import torch, opsnn.torch as ot, opsnn.torch._ops as K
x = torch.tensor([-2.0, 0.5, 3.0])
torch.library.register_autocast("opsnn::leaky_relu", "cpu", torch.bfloat16)
with torch.autocast("cpu", dtype=torch.bfloat16):
    assert ot.leaky_relu(x, 0.1).dtype == torch.bfloat16
    assert ot.nn.LeakyReLU(0.1)(x).dtype == torch.bfloat16
K.hardtanh.register_kernel("cpu")(lambda self, min_val=-1, max_val=1: self * 0 + 42)
assert ot.hardtanh(x).tolist() == [42.0, 42.0, 42.0]
compiled = torch.compile(lambda t, s: ot.hardtanh(t, -s, s), backend="aot_eager")
assert compiled(x, 0.5).tolist() == [42.0, 42.0, 42.0]
K.leaky_relu_.register_kernel("cpu")(lambda self, negative_slope=0.01: self.fill_(7.0))
y = x.clone()
assert ot.leaky_relu(y, 0.1, inplace=True) is y and y.tolist() == [7.0, 7.0, 7.0] and y._version == 1
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_the_numpy_style_api_inside_torch_compile_says_what_compiles():
    """torch.compile reaching the NumPy-style functions with torch tensors compiled opsnn's own
    host code frame by frame after its graph break and failed inside (a frozen dataclass, numba's
    typing): a 561000 "internal error" that named an opsnn line. It is still refused, but says
    what does compile; the same call kept out of the graph with torch.compiler.disable runs, and
    so does opsnn.torch's function (run apart: Dynamo keeps what it compiled of opsnn's frames)."""
    script = """
import torch, opsnn, opsnn.acl as acl, opsnn.torch as ot
g, x = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([-1.0, 0.0, 2.0])
want = torch.ops.aten.leaky_relu_backward(g, x, 0.1, False)
try:
    torch.compile(lambda a, b: opsnn.leaky_relu_backward(a, b, 0.1, False), backend="eager")(g, x)
except opsnn.AclnnError as exc:
    print(exc.status, "call opsnn.torch's" in exc.message, "internal error" in exc.message)
    print(acl.get_recent_err_msg() == exc.message)
kept_out = torch.compiler.disable(opsnn.leaky_relu_backward)
got = torch.compile(lambda a, b: kept_out(a, b, 0.1, False), backend="eager")(g, x)
print(got.tolist() == want.tolist())
got = torch.compile(lambda a, b: ot.leaky_relu_backward(a, b, 0.1, False), backend="eager")(g, x)
print(got.tolist() == want.tolist())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["561000", "True", "False", "True", "True", "True"], (done.stdout, done.stderr)


def test_opsnn_leaves_torchs_thread_count_alone():
    """Found by a breaker: numba's OpenMP pool starts with omp_set_num_threads, which resolves to
    torch's libgomp where torch came first, so the first opsnn kernel set torch's intra-op
    threads from 1 to numba's count (torch's own conv gradients changed with it). Run apart: the
    pool starts once per process. opsnn's parallel launches still use numba's threads."""
    script = """
import numpy as np, torch
torch.set_num_threads(1)
assert torch.get_num_threads() == 1  # torch's pool is set up (lazily, on its first use)
import numba, opsnn, opsnn.torch as ot
opsnn.leaky_relu(np.ones(3, np.float32))
ot.hardtanh(torch.ones(3))
after = torch.get_num_threads()
from numba import njit, prange
@njit(parallel=True)
def ids(out):
    for i in prange(out.size):
        out[i] = numba.get_thread_id()
seen = np.zeros(64, np.int64)
ids(seen)
print(after, len(set(seen.tolist())) == min(2, numba.config.NUMBA_NUM_THREADS))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0 and done.stdout.split() == ["1", "True"], (done.stdout, done.stderr)


def test_float16_bounds_round_as_torchs_half_does():
    """Found by a breaker: torch makes a float16 bound from a float (double -> float32 ->
    float16, two roundings); the aclnn layer rounds a double once (opbase's fp16_t), so a bound
    near a float16 tie clamped to the next float16 (1 + 2**-11 + 2**-40: torch 1.0, opsnn 1.001).
    The binding rounds to float32 first, for the function, the in-place form and the module."""
    x = torch.linspace(-4, 4, 4001, dtype=torch.float16)
    rng = random.Random(7)
    bounds = [1 + 2**-11 + 2**-40, 3.848632883177258] + [rng.uniform(0.5, 4) for _ in range(200)]
    for b in bounds:
        expected = F.hardtanh(x, -b, b)
        assert_same_bits(ot.hardtanh(x, -b, b), expected)
        assert_same_bits(ot.nn.Hardtanh(-b, b)(x), expected)
        y = x.clone()
        ot.hardtanh_(y, -b, b)
        assert_same_bits(y, expected)


@pytest.mark.parametrize("call, says", [
    (lambda: ot.leaky_relu(torch.arange(4), float("nan")), "LeakyRelu: tensor self has dtype DT_INT64"),
    (lambda: ot.hardtanh(torch.zeros(3, dtype=torch.uint16)), "Hardtanh: tensor self has dtype DT_UINT16"),
    (lambda: ot.hardtanh_backward(torch.arange(4), torch.arange(4), float("nan"), 1.0),
     "HardtanhBackward: tensor gradOutput has dtype DT_INT64"),
    (lambda: ot.leaky_relu_backward(torch.ones(2, dtype=torch.uint8), torch.ones(2, dtype=torch.uint8), -1.0, False),
     "LeakyReluBackward: tensor gradOutput has dtype DT_UINT8"),
    (lambda: ops.leaky_relu(torch.arange(4).to("meta"), float("nan")), "LeakyRelu: tensor self has dtype DT_INT64"),
])
def test_a_dtype_no_soc_takes_is_refused_for_its_dtype_not_a_scalar(call, says):
    """(a breaker) where no SoC's list has the tensors' dtype, a scalar that would not fit it was
    refused first, saying torch refuses it too, where torch refuses the dtype: the dtype check
    speaks, naming it and that no SoC has the kernel (the fake kernel too)."""
    with pytest.raises(AclnnRuntimeError) as info:
        call()
    assert says in str(info.value) and "no SoC does" in str(info.value) and "does not fit" not in str(info.value)


# ---- the CPU kernels' memo (_memo._known): a call that hits gives what an uncached one gives ----

def _outcome(fn):
    """What a call gives, as far as a caller can tell: the result's dtype, shape, strides, bits,
    grad_fn type and requires_grad, or the error's type, status and message."""
    try:
        y = fn()
    except Exception as exc:  # noqa: BLE001 - the outcome compared
        return "raised", type(exc), getattr(exc, "status", None), str(exc)
    bits = y.detach().contiguous().view(torch.uint8).tolist() if y.dtype != torch.bool else y.tolist()
    return ("gave", y.dtype, tuple(y.shape), y.stride(), bits, type(y.grad_fn).__name__ if y.grad_fn else None,
            y.requires_grad)


def _under_soc(soc, fn):
    with opsnn.use_soc(soc):
        return fn()


def _gradient(fn, x, order=1):
    """x's gradient of order 1 or 2 through fn (seeded by a sum's broadcast gradient)."""
    leaf = x.detach().clone().requires_grad_()
    (g1,) = torch.autograd.grad(fn(leaf).sum(), leaf, create_graph=order > 1)
    return g1 if order == 1 else torch.autograd.grad(g1.sum(), leaf, allow_unused=True, materialize_grads=True)[0]


def _in_grad_mode(mode, fn):
    with mode():
        return fn()


def _memo_steps():
    x = torch.tensor([[-2.0, -0.0, 0.5, 7.0], [3.0, float("nan"), -float("inf"), -0.25], [1.5, -1.0, 0.0, 2.0]])
    g = torch.tensor([[1.0, -2.0, 3.0, 0.5], [4.0, 5.0, -6.0, 1.0], [0.25, 2.0, 3.0, -1.0]])
    xb, gb = x.bfloat16(), g.bfloat16()
    wide = torch.zeros(3, 8)
    wide[:, ::2] = x
    return [
        lambda: ot.leaky_relu(x, 0.1),
        # a strided tensor, then a contiguous one of the same shape, then a gapped one
        lambda: ot.leaky_relu(x.t(), 0.1), lambda: ot.leaky_relu(x.t().contiguous(), 0.1),
        lambda: ot.leaky_relu(wide[:, ::2], 0.1), lambda: ot.hardtanh(x.t(), -1.0, 1.0),
        lambda: ot.hardtanh(wide[:, ::2], -1.0, 1.0), lambda: ot.hardtanh(x.t().contiguous(), -1.0, 1.0),
        # scalars: the sign of a zero, an int, a bool, NaN, one beyond float32 or float16
        lambda: ot.leaky_relu(x, -0.0), lambda: ot.leaky_relu(x, 0.0), lambda: ot.leaky_relu(x, 1),
        lambda: ot.leaky_relu_backward(g, x, True, False), lambda: ot.leaky_relu(x, float("nan")),
        lambda: ot.leaky_relu(x.double(), 1e38), lambda: ot.leaky_relu(x.double(), 1e39),
        lambda: ot.hardtanh(x.half(), -1.0, 1.0), lambda: ot.hardtanh(x.half(), -1e5, 1.0),
        lambda: ot.hardtanh(x, 0, 1), lambda: ot.hardtanh(x, 0.0, 1.0), lambda: ot.hardtanh(x, 1, 2),
        lambda: ot.hardtanh(x, True, 2), lambda: ot.hardtanh(x.long(), -1, 1),
        lambda: ot.hardtanh(x.long(), -1.5, 1), lambda: ot.hardtanh_backward(g, x, -0.0, 0.5),
        lambda: ot.hardtanh_backward(g, x, 0.0, 0.5),
        # the SoC in force: bfloat16 taken, refused on Ascend910, taken again; LeakyRelu on Ascend310P
        lambda: ot.leaky_relu(xb, 0.1), lambda: _under_soc("Ascend910", lambda: ot.leaky_relu(xb, 0.1)),
        lambda: ot.leaky_relu(xb, 0.1), lambda: ot.hardtanh_backward(gb, xb, -1.0, 1.0),
        lambda: _under_soc("Ascend910", lambda: ot.hardtanh_backward(gb, xb, -1.0, 1.0)),
        lambda: _under_soc("Ascend310P", lambda: ot.leaky_relu(x, 0.1)),
        lambda: _under_soc("Ascend310P", lambda: ot.leaky_relu_backward(g, x, 0.1, False)),
        # the backward ops: the in-place rule, broadcast and promoted operands, 0-d ones torch casts
        lambda: ot.leaky_relu_backward(g, x, 0.1, True), lambda: ot.leaky_relu_backward(g, x, -0.1, True),
        lambda: ot.leaky_relu_backward(g, x, -0.1, False), lambda: ot.leaky_relu_backward(g, x, float("nan"), True),
        lambda: ot.leaky_relu_backward(g[:1], x, 0.1, False), lambda: ot.leaky_relu_backward(g.t(), x.t(), 0.1, False),
        lambda: ot.leaky_relu_backward(g.t().contiguous(), x.t(), 0.1, False),
        lambda: ot.leaky_relu_backward(g.t().contiguous(), x.t().contiguous(), 0.1, False),
        lambda: ot.hardtanh_backward(g.t(), x.t().contiguous(), -1.0, 1.0),
        lambda: ot.hardtanh_backward(g.t().contiguous(), x.t().contiguous(), -1.0, 1.0),
        lambda: ot.leaky_relu_backward(g.half(), x, 0.1, False),
        lambda: ot.leaky_relu_backward(torch.tensor(2.0, dtype=torch.float64), x.half(), 0.1, False),
        lambda: ot.leaky_relu_backward(torch.tensor(2.0), x, 0.1, False),
        lambda: ot.hardtanh_backward(g, x.half(), -1.0, 1.0), lambda: ot.hardtanh_backward(g[:1], x, -1.0, 1.0),
        # in place: a tensor of the same metadata, then an overlapping (expanded) view, refused
        lambda: ot.leaky_relu(x.clone(), 0.1, inplace=True), lambda: ot.leaky_relu(x[:1].expand(3, 4), 0.1),
        lambda: ot.leaky_relu(x[:1].clone().expand(3, 4), 0.1, inplace=True),
        lambda: ot.hardtanh(x[:1].clone().expand(3, 4), -1.0, 1.0, inplace=True),
        # in place, the scalars as torch takes them (_checks._taken): a zero's sign, an int, NaN, refusals
        lambda: ot.leaky_relu(x.clone(), -0.0, inplace=True), lambda: ot.leaky_relu(x.clone(), 0.0, inplace=True),
        lambda: ot.leaky_relu(x.clone(), float("nan"), inplace=True),
        lambda: ot.leaky_relu(x.double(), 1e39, inplace=True), lambda: ot.leaky_relu(x.double(), 1e38, inplace=True),
        lambda: ot.hardtanh(x.clone(), -1e5, 1.0, inplace=True),  # then the same scalars, another dtype
        lambda: ot.hardtanh(x.half(), -1e5, 1.0, inplace=True), lambda: ot.hardtanh(x.half(), -1.0, 1.0, inplace=True),
        lambda: ot.hardtanh(x.half(), -1.0, 1 + 2**-11 + 2**-40, inplace=True),
        lambda: ot.hardtanh(x.clone(), -1.5, 1, inplace=True), lambda: ot.hardtanh(x.long(), -1.5, 1, inplace=True), lambda: ot.hardtanh(x.long(), -1, 1, inplace=True),
        lambda: ot.hardtanh(x.long(), -1.0, 1.0, inplace=True), lambda: ot.hardtanh(x.clone(), 0, 1, inplace=True),
        lambda: ot.hardtanh(x.to(torch.uint8), 0, 300, inplace=True),
        lambda: ot.hardtanh(x.to(torch.uint8), 0, 255, inplace=True),
        # grad mode and requires_grad: the same metadata recorded or not
        lambda: ot.leaky_relu(x.clone().requires_grad_(), 0.1),
        lambda: _in_grad_mode(torch.no_grad, lambda: ot.leaky_relu(x.clone().requires_grad_(), 0.1)),
        lambda: _in_grad_mode(torch.inference_mode, lambda: ot.leaky_relu(x, 0.1)),
        lambda: _in_grad_mode(torch.inference_mode, lambda: ot.hardtanh(x.clone(), -1.0, 1.0, inplace=True)),
        lambda: ot.leaky_relu(x.clone().requires_grad_(), 0.1, inplace=True),
        lambda: ot.hardtanh(x.clone().requires_grad_(), -1.0, 1.0),
        lambda: _gradient(lambda t: ot.leaky_relu(t, 0.1), x), lambda: _gradient(lambda t: ot.leaky_relu(t, 0.1), x, 2),
        lambda: _gradient(lambda t: ot.hardtanh(t, -1.0, 1.0), x), lambda: _gradient(lambda t: ot.relu6(t * 4), x),
        lambda: _gradient(lambda t: ot.leaky_relu(t * 1, 0.2, inplace=True), x),
        lambda: _gradient(lambda t: ot.leaky_relu(t * 1, -0.2, inplace=True), x),
        lambda: _gradient(lambda t: ot.leaky_relu_backward(t, t * t, 0.1, False), x, 2),
        lambda: ot.leaky_relu(x, 0.1),
    ]


def test_kernel_memo_hits_give_what_an_uncached_call_gives():
    """The kernels keep what they derive from metadata (``_memo._known``); a sequence of calls
    that vary one key field at a time (strides of the same shape, the sign of a zero slope, an int
    or a NaN scalar, one out of range, the SoC in force, a broadcast or 0-d operand, grad mode,
    a tensor that now requires grad, in place on an expanded view) gives, cached and repeated, each
    outcome (bits, strides, grad_fn, error and message) that the call gives with every cache
    cleared first."""
    from opsnn import _fastpath
    from opsnn.torch import _memo

    steps = _memo_steps()
    uncached = []
    for step in steps:
        _memo._MEMO.clear()
        _fastpath.clear()
        uncached.append(_outcome(step))
    cached = [_outcome(step) for step in steps]
    again = [_outcome(step) for step in steps]
    assert len(_memo._MEMO) > 20  # the memo was used
    for number, (want, got, hit) in enumerate(zip(uncached, cached, again)):
        assert got == want, f"step {number}"
        assert hit == want, f"step {number}, repeated"
    assert sum(o[0] == "raised" for o in uncached) >= 12  # the refusals are still made


def test_kernel_memo_keeps_no_refused_plan_and_stays_bounded(monkeypatch):
    """A refused call is not kept (it is refused again, the same way); NaN scalars are never kept;
    the memo keeps at most MEMO_ENTRIES plans, dropping its older half when full."""
    from opsnn.torch import _memo

    _memo._MEMO.clear()
    x = torch.tensor([-2.0, 0.5, 3.0], dtype=torch.float64)
    for _ in range(2):
        with pytest.raises(AclnnRuntimeError, match="negative_slope 1e\\+39 is outside float32's range"):
            ot.leaky_relu(x, 1e39)
        ot.leaky_relu(x, float("nan"))
    assert not _memo._MEMO
    monkeypatch.setattr(_memo, "MEMO_ENTRIES", 8)
    slopes = [0.5 + k / 64 for k in range(20)]
    for slope in slopes:
        assert_same_bits(ot.leaky_relu(x, slope), F.leaky_relu(x, slope))
        assert len(_memo._MEMO) <= 8
    assert [key[-2] for key in _memo._MEMO] == slopes[-len(_memo._MEMO):]  # the newest kept
    _memo._MEMO.clear()


# ---- direct in-place calls (_inplace_autograd.call_inplace): what the dispatcher's path gives ----

def _inplace_steps():
    """Each step makes fresh tensors and returns (the tensors to watch, the in-place call on them):
    leaves and non-leaves, views of tensors requiring grad, grad modes, inference tensors, refused
    scalars, dtypes and SoCs, overlapping views."""
    data = [[-2.0, -0.0, 0.5, 7.0], [3.0, float("nan"), -float("inf"), -0.25], [1.5, -1.0, 0.0, 2.0]]

    def x(**kw):
        return torch.tensor(data, **kw)

    def leaf():
        return x().requires_grad_()

    def of_leaf(made):  # a leaf requiring grad, and the tensor ``made`` from it
        def make():
            base = leaf()
            return base, made(base)
        return make

    nonleaf = of_leaf(lambda b: b * 1)

    def inference():
        with torch.inference_mode():
            return x()

    def lr(t, *s):
        return lambda: ot.leaky_relu(t, *s, inplace=True)

    def ht(t, *s):
        return lambda: ot.hardtanh(t, *s, inplace=True)

    def plain(make, call):
        t = make()
        return (t,), call(t)

    def grad_of(make, call):
        base, t = make()
        return (base, t), call(t)

    def under(ctx, step):  # the tensors made and the call made in ctx
        def run():
            with ctx():
                watched, call = step()
            return watched, _mode_call(ctx, call)
        return run

    steps = []
    for call in (lambda t: lr(t, 0.1), lambda t: lr(t, -0.2), lambda t: lr(t, 0), lambda t: lr(t, float("nan")),
                 lambda t: lr(t, -0.0), lambda t: ht(t, -1.0, 1.0), lambda t: ht(t, 0, 6),
                 lambda t: ht(t, -0.5, float("nan"))):
        steps += [lambda call=call: plain(x, call), lambda call=call: plain(lambda: x().t(), call),
                  lambda call=call: plain(lambda: x(dtype=torch.bfloat16), call),
                  lambda call=call: plain(leaf, call),  # a leaf requiring grad: refused
                  lambda call=call: grad_of(nonleaf, call),  # recorded
                  lambda call=call: grad_of(of_leaf(lambda b: (b * 1)[1:]), call),  # a view
                  lambda call=call: grad_of(of_leaf(lambda b: b[1:]), call),  # a view of a leaf
                  lambda call=call: grad_of(of_leaf(lambda b: (b * 1).unbind()[0]), call),
                  under(torch.no_grad, lambda call=call: plain(leaf, call)),
                  under(torch.no_grad, lambda call=call: grad_of(nonleaf, call)),
                  lambda call=call: plain(inference, call),  # refused outside inference mode
                  lambda call=call: plain(x, lambda t: _mode_call(torch.inference_mode, call(t))),
                  under(torch.inference_mode, lambda call=call: plain(x, call)),
                  under(torch.inference_mode, lambda call=call: plain(inference, call)),
                  lambda call=call: plain(lambda: x()[:1].expand(3, 4), call),  # overlapping: refused
                  lambda call=call: plain(lambda: x().as_strided((2, 2), (1, 1)), call),
                  lambda call=call: plain(lambda: torch.empty(0, 4), call)]
    steps += [
        # a view made in no_grad of a tensor requiring grad: refused when modified with grad on
        lambda: grad_of(of_leaf(lambda b: _in_grad_mode(torch.no_grad, lambda: (b * 1)[1:])), lambda t: lr(t, 0.1)),
        # scalars torch refuses, dtypes no SoC takes, a SoC without the dtype or the operator
        lambda: plain(lambda: x(dtype=torch.float64), lambda t: lr(t, 1e39)),
        # where the dispatcher skips the Autograd kernel: in inference mode (ADInplaceOrView bumps the
        # version before the kernel refuses), an inference tensor (the kernel's refusal comes first)
        lambda: plain(lambda: x(dtype=torch.float64), lambda t: _mode_call(torch.inference_mode, lr(t, 1e39))),
        lambda: plain(inference, lambda t: lr(t, 1e39)), lambda: plain(inference, lambda t: ht(t, 1, -1)),
        lambda: plain(lambda: x(dtype=torch.float16), lambda t: ht(t, -1e5, 1.0)),
        lambda: plain(lambda: x().long(), lambda t: ht(t, -1, 1)),
        lambda: plain(lambda: x().long(), lambda t: ht(t, -1.5, 1)),
        lambda: plain(lambda: x().long(), lambda t: lr(t, 0.1)),
        lambda: plain(lambda: x().to(torch.uint8), lambda t: ht(t, 0, 300)),
        lambda: plain(lambda: x(dtype=torch.bfloat16), lambda t: _soc_call("Ascend910", lr(t, 0.1))),
        lambda: plain(x, lambda t: _soc_call("Ascend310P", lr(t, 0.1))),
        lambda: plain(x, lambda t: lambda: ot.leaky_relu_(t, True)),  # a bool scalar (the dispatcher's)
        lambda: plain(x, lambda t: lambda: ot.hardtanh_(t, 1, 1)),
    ]
    return steps


def _soc_call(soc, call):
    return lambda: _under_soc(soc, call)


def _mode_call(mode, call):
    return lambda: _in_grad_mode(mode, call)


def _inplace_outcome(step):
    """Of a fresh step: the call's result (bits, grad_fn, whether it is the tensor given) or
    error; then each watched tensor's bits and version; and where the result is recorded, the
    first watched tensor's gradient through it (or that backward's error)."""
    watched, call = step()
    try:
        y = call()
        got = ("gave", y is watched[-1], _outcome(lambda: y))
    except Exception as exc:  # noqa: BLE001 - the outcome compared
        got = ("raised", type(exc), getattr(exc, "status", None), str(exc))
    seen = [(t.dtype, tuple(t.shape), None if t.is_inference() else t._version, t.detach().contiguous().view(torch.uint8).tolist(),
             type(t.grad_fn).__name__ if t.grad_fn else None) for t in watched]
    grad = None
    if got[0] == "gave" and y.requires_grad:
        grad = _outcome(lambda: torch.autograd.grad(y.sum(), watched[0], allow_unused=True,
                                                    materialize_grads=True)[0])
    return got, seen, grad


def test_inplace_direct_calls_give_what_the_dispatcher_gives(monkeypatch):
    """opsnn.torch's in-place calls run the ops' Autograd kernel themselves where ``direct``
    allows (``_inplace_autograd.call_inplace``); each step, with fresh tensors, gives through it
    what it gives through torch.ops.opsnn.*_ and the dispatcher: the result's bits, the tensor itself, its version
    (one bump, none where refused), grad_fn names, gradients, errors (type, status, message, and
    nothing written): leaves refused, views of tensors requiring grad, no_grad, inference tensors
    and mode, overlapping views, refused scalars, dtypes and SoCs. The direct path is taken."""
    from opsnn.torch import _autograd, _inplace_autograd

    taken = []
    for name, kernel in list(_inplace_autograd._INPLACE_AUTOGRAD.items()):
        def counted(keyset, *args, kernel=kernel):
            taken.append(keyset is None)
            return kernel(keyset, *args)
        monkeypatch.setitem(_inplace_autograd._INPLACE_AUTOGRAD, name, counted)
    steps = _inplace_steps()
    directly = [_inplace_outcome(step) for step in steps]
    assert taken.count(True) >= 100  # the direct path ran
    taken.clear()
    with monkeypatch.context() as patch:
        patch.setattr(_inplace_autograd, "direct", lambda *args: False)
        # and the gradient formulas' ``call`` (``_autograd`` looks direct up on its own since the split)
        patch.setattr(_autograd, "direct", lambda *args: False)
        dispatched = [_inplace_outcome(step) for step in steps]
    assert not taken  # the dispatcher's Autograd kernel is the registered one
    for number, (got, want) in enumerate(zip(directly, dispatched)):
        assert got == want, f"step {number}"
    assert sum(o[0][0] == "raised" for o in directly) >= 40  # the refusals are still made
    assert sum(o[2] is not None for o in directly) >= 10  # and gradients compared


def test_calls_below_autograd_go_as_the_dispatcher_takes_them():
    """(a regression breaker) A thread running below autograd or ADInplaceOrView (torch's own
    kernels, and Python kernels registered over aten ops, run so) has the dispatcher skip those
    layers, as torch's F.leaky_relu_ / F.hardtanh_ skip them. The direct calls ran them anyway: a
    leaf requiring grad was refused, a graph was recorded, a version bumped twice."""
    x = torch.tensor([-1.0, 2.0], requires_grad=True)
    a = torch.tensor([-1.0, 2.0], requires_grad=True)
    z = a * 1
    with torch._C._AutoDispatchBelowAutograd():
        ot.leaky_relu_(x, 0.1)
        assert torch.equal(x.detach(), torch.tensor([-0.1, 2.0])) and x._version == 1 and x.grad_fn is None
        ot.hardtanh_(z, -0.5, 0.5)
        assert type(z.grad_fn).__name__ == "MulBackward0"
        y = ot.leaky_relu(a, 0.1)  # the functional call records nothing either, as F.leaky_relu there
        assert y.grad_fn is None and torch.equal(y, torch.tensor([-0.1, 2.0]))
    w = torch.tensor([-1.0, 2.0])
    with torch._C._AutoDispatchBelowADInplaceOrView():
        ot.hardtanh_(w, -0.5, 0.5)
    assert w._version == 0 and torch.equal(w, torch.tensor([-0.5, 0.5]))
    # the same calls as a thread normally runs them: direct, recorded as before
    v = torch.tensor([-1.0, 2.0], requires_grad=True) * 1
    ot.leaky_relu_(v, 0.1)
    assert type(v.grad_fn).__name__ == "_LeakyReluInplaceBackward" and v._version == 1
