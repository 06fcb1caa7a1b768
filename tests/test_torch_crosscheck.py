"""Bit-exact cross-check against torch.ops.aten.leaky_relu_backward / hardtanh_backward where
DECISIONS says the numbers agree. Excluded on purpose: DOUBLE tensors with a slope that is not
float32-exact (DECISION 2), NaN in self for hardtanh (DECISION 8), scalars that overflow float32
(torch raises, opsnn gives inf: DECISION 2), min > max and NaN bounds (torch's scalar path passes
grad for NaN bounds), 0-d mixed-dtype promotion (torch ranks 0-d lower), and a float64 result
cast to a float16/bfloat16 out (one rounding, DECISIONS 3; torch rounds through float32)."""

from __future__ import annotations

import numpy as np
import pytest

import cases
import opsnn
from cases import BF16, F16, F32, F64
from conftest import run_hardtanh, run_leaky

torch = pytest.importorskip("torch")

LAYERS = ("py", "acl")
TORCH_DT = {F32: torch.float32, F16: torch.float16, F64: torch.float64, BF16: torch.bfloat16}


def to_torch(a: np.ndarray):
    a = np.array(a, order="C", copy=True)
    if a.dtype == BF16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def from_torch(t) -> np.ndarray:
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(BF16).copy()
    return t.numpy().copy()


def torch_leaky(g, x, slope, out_dtype=None):
    gt, xt = to_torch(g), to_torch(x)
    if out_dtype is None:
        return from_torch(torch.ops.aten.leaky_relu_backward(gt, xt, slope, False))
    shape = np.broadcast_shapes(g.shape, x.shape)
    out = torch.empty(shape, dtype=TORCH_DT[np.dtype(out_dtype)])
    torch.ops.aten.leaky_relu_backward.grad_input(gt, xt, slope, False, grad_input=out)
    return from_torch(out)


def torch_hardtanh(g, x, lo, hi):
    return from_torch(torch.ops.aten.hardtanh_backward(to_torch(g), to_torch(x), lo, hi))


def no_nan_self(x):
    x = np.array(x)
    x[np.isnan(x.astype(F64))] = np.array(0.25).astype(x.dtype)
    return x


# ---- LeakyReluBackward --------------------------------------------------------------------------
LEAKY_CASES = [
    # grad, self, out dtype (None: promoted), slopes (f64 results: float32-exact slopes only)
    (F32, F32, None, (0.0, 0.2, -0.5, 0.01, 2.0, 1e5, 3.4e38, -np.inf)),
    (F16, F16, None, (0.0, 0.2, -0.5, 0.01, 1 / 3, 5.5, 1e5)),
    (BF16, BF16, None, (0.0, 0.2, -0.5, 0.01, 1 / 3, 5.5, 1e5)),
    (F64, F64, None, (0.0, -0.5, 2.0, 0.25, 1e5, 0.1171875)),
    (F16, F32, None, (0.2, -0.5)),
    (F16, BF16, None, (0.2, -0.5)),
    (BF16, F32, None, (0.01,)),
    (F32, F64, None, (0.5, -2.0)),
    (F32, F32, F16, (0.2, -0.5)),
    (F16, F16, F32, (0.1,)),
    (F32, F32, F64, (0.3,)),
    (BF16, BF16, F32, (0.1,)),
]


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("gdt,xdt,odt,slopes", LEAKY_CASES,
                         ids=[f"{a}-{b}-{c}" for a, b, c, _ in LEAKY_CASES])
def test_leaky_matches_torch(layer, env, gdt, xdt, odt, slopes):
    g, x = cases.grid(gdt, xdt)
    for slope in slopes:
        ours = run_leaky(layer, env, g, x, slope, out_dtype=odt)
        theirs = torch_leaky(g, x, slope, odt)
        cases.assert_bits_equal(ours, theirs, what=f"{layer} slope={slope}")


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("out_dtype, tie, once, twice", [(F16, 2**-11, 0x3C01, 0x3C00), (BF16, 2**-8, 0x3F81, 0x3F80)],
                         ids=["float16", "bfloat16"])
def test_float64_result_into_a_half_out_rounds_once_where_torch_rounds_twice(layer, env, out_dtype, tie, once,
                                                                             twice):
    """DECISIONS 3: the Cast to out's dtype rounds the float64 result once. torch's out= (and
    ``.to()``) converts float64 to float16/bfloat16 through float32, so a double just past a tie
    of the narrow type (1 + half an ulp + 2**-40) rounds up here and to the tie's even side,
    down, in torch (README, Decisions; a new user's finding). Pinned both ways, so the README's
    sentence fails with a torch that rounds once."""
    g = np.array([1 + tie + 2**-40, -(1 + tie + 2**-40)])
    x = np.array([1.0, 1.0])
    ours = run_leaky(layer, env, g, x, 0.5, out_dtype=out_dtype)
    assert ours.view(np.uint16).tolist() == [once, once | 0x8000]
    assert torch_leaky(g, x, 0.5, out_dtype).view(np.uint16).tolist() == [twice, twice | 0x8000]


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("layouts,out_layout", [
    (("transposed", "sliced"), "sliced"), (("offset", "transposed"), "transposed"),
    (("sliced", "sliced"), "offset"), (("contig", "offset"), "sliced"),
], ids=str)
def test_leaky_strided_matches_torch(layer, env, layouts, out_layout):
    for dt in (F32, BF16):
        g, x = cases.grid(dt, dt)
        ours = run_leaky(layer, env, g, x, -0.5, layouts=layouts, out_layout=out_layout)
        cases.assert_bits_equal(ours, torch_leaky(g, x, -0.5), what=str(dt))


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("gs,xs", [((3, 1), (1, 4)), ((2, 3), (3,)), ((3,), (2, 3)), ((), ()),
                                   ((0, 3), (3,)), ((2, 0), (2, 0)), ((1, 2, 1, 2, 1, 2, 1, 2), (2,))], ids=str)
def test_leaky_shapes_match_torch(layer, env, gs, xs):
    g = cases.filled(gs, F32, 1, cases.grad_specials(F32))
    x = cases.filled(xs, F32, 2, cases.self_specials(F32))
    ours = run_leaky(layer, env, g, x, 0.2)
    cases.assert_bits_equal(ours, torch_leaky(g, x, 0.2))


def test_leaky_accepts_dlpack_tensors():
    g, x = cases.grid(F32, F32)
    res = opsnn.leaky_relu_backward(to_torch(g), to_torch(x), 0.2)
    assert isinstance(res, np.ndarray)
    cases.assert_bits_equal(res, torch_leaky(g, x, 0.2))
    g16, x16 = cases.grid(F16, F16)
    res = opsnn.leaky_relu_backward(to_torch(g16), to_torch(x16), -0.5)
    cases.assert_bits_equal(res, torch_leaky(g16, x16, -0.5))




@pytest.mark.parametrize("dt", [F32, BF16], ids=str)
def test_out_dlpack_tensor(dt):
    """out= a torch tensor (a transposed view too): written in place through DLPack, bit for bit
    torch's, and returned as given; one that requires grad is refused, as autograd could not
    record the write (a breaker: the message said it could not be *read*, and its
    advice, .detach(), would have written it behind autograd's back) and keeps its values; so is
    a non-leaf that requires grad, which autograd could not record a write to here."""
    g, x = cases.grid(dt, dt)
    expected = torch_leaky(g, x, 0.2)
    out = torch.zeros(g.shape, dtype=TORCH_DT[dt])
    assert opsnn.leaky_relu_backward(to_torch(g), to_torch(x), 0.2, out=out) is out
    cases.assert_bits_equal(from_torch(out), expected)
    out_t = torch.zeros(g.shape[::-1], dtype=TORCH_DT[dt]).t()
    assert opsnn.leaky_relu_backward(g, x, 0.2, out=out_t) is out_t
    cases.assert_bits_equal(from_torch(out_t), expected)
    leaf = torch.zeros(g.shape, dtype=TORCH_DT[dt], requires_grad=True)
    for target in (leaf, leaf * 1):
        with pytest.raises(opsnn.AclnnError, match="out is a torch tensor that requires grad: the NumPy API "
                                                   "cannot record its write for autograd") as info:
            opsnn.leaky_relu_backward(g, x, 0.2, out=target)
        assert info.value.status == 161002 and not target.detach().any()
    with pytest.raises(opsnn.AclnnError, match="self is a torch tensor that requires grad"):
        opsnn.leaky_relu_(leaf)
    assert not leaf.detach().any()


@pytest.mark.parametrize("write", ["out", "inplace"])
def test_a_written_torch_tensor_has_its_version_bumped(write):
    """A torch tensor written through DLPack (out=, or an in-place self) gets its version counter
    bumped once, as torch's own in-place ops do: a detached alias of a tensor autograd saved
    makes backward refuse, where it had silently given a wrong gradient ([-0.4, 2, 6] for
    [-4, 2, 6]). A refused call bumps nothing."""
    x = torch.tensor([-2.0, 1.0, 3.0], requires_grad=True)
    y = x * 1
    z = (y * y).sum()  # saves y
    alias = y.detach()
    if write == "out":
        assert opsnn.leaky_relu(torch.ones(3), out=alias) is alias
    else:
        assert opsnn.leaky_relu_(alias, 0.1) is alias
    assert y._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()
    with pytest.raises(opsnn.AclnnError):
        opsnn.leaky_relu(torch.ones(4), out=alias)  # shape mismatch: refused, nothing written
    assert y._version == 1


def test_a_torch_inference_tensor_is_written_only_in_inference_mode():
    """torch's rule: an inference tensor is updated in place only inside inference_mode."""
    with torch.inference_mode():
        t = torch.tensor([-2.0, 0.5, 3.0])
    with pytest.raises(opsnn.AclnnError, match="self is a torch inference tensor") as info:
        opsnn.hardtanh_(t)
    with pytest.raises(opsnn.AclnnError, match="out is a torch inference tensor"):
        opsnn.hardtanh(torch.ones(3), out=t)
    assert info.value.status == 161002 and t.tolist() == [-2.0, 0.5, 3.0]
    with torch.inference_mode():
        assert opsnn.hardtanh_(t) is t
    assert t.tolist() == [-1.0, 0.5, 1.0]


def test_a_torch_target_autograd_or_inference_mode_guards_is_refused_after_the_aclnn_checks():
    """opsnn's refusals of a torch out= / in-place self (requires grad; an inference tensor outside
    inference mode) come once every aclnn check has passed, as a read-only array's: an int32
    gradOutput or min > max speaks first (CANN's text); then the refusal, nothing written, no
    version bump, also after a writable twin warmed the plan cache."""
    g, x = np.ones(4, np.float32), np.array([-1.0, 0.5, 2.0, -3.0], np.float32)
    leaf = torch.zeros(4, requires_grad=True)
    with torch.inference_mode():
        frozen = torch.tensor([-2.0, 0.5, 3.0, 0.0])
    with pytest.raises(opsnn.AclnnError, match="tensor gradOutput has dtype DT_INT32") as info:
        opsnn.leaky_relu_backward(g.astype(np.int32), x, 0.2, out=leaf)
    assert info.value.status == 161002 and "requires grad" not in info.value.message
    with pytest.raises(opsnn.AclnnError, match="InplaceHardtanh: clipValueMin") as info:
        opsnn.hardtanh_(frozen, 1.0, -1.0)
    assert info.value.status == 161002 and "inference" not in info.value.message
    opsnn.leaky_relu_backward(g, x, 0.2, out=torch.zeros(4))  # a writable twin: cached
    opsnn.hardtanh_(torch.zeros(4))
    with pytest.raises(opsnn.AclnnError, match="out is a torch tensor that requires grad") as info:
        opsnn.leaky_relu_backward(g, x, 0.2, out=leaf)
    with pytest.raises(opsnn.AclnnError, match="self is a torch tensor that requires grad"):
        opsnn.hardtanh_(leaf)
    with pytest.raises(opsnn.AclnnError, match="self is a torch inference tensor"):
        opsnn.hardtanh_(frozen)
    assert not leaf.detach().any() and leaf._version == 0
    assert frozen.tolist() == [-2.0, 0.5, 3.0, 0.0]


# ---- HardtanhBackward ---------------------------------------------------------------------------
TORCH_BOUNDS = [(-1.0, 1.0), (0.0, 6.0), (-0.5, 0.8), (0.1, 0.7), (-np.inf, np.inf), (-2.0, -2.0),
                (-1e5, 1e5), (0.0, 0.0)]


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dt", cases.HARDTANH_DTYPES, ids=str)
def test_hardtanh_matches_torch(layer, env, dt):
    for lo, hi in TORCH_BOUNDS:
        g, x = cases.grid(dt, dt, bounds=(lo, hi))
        x = no_nan_self(x)
        ours = run_hardtanh(layer, env, g, x, lo, hi)
        cases.assert_bits_equal(ours, torch_hardtanh(g, x, lo, hi), what=f"{layer} {dt} [{lo}, {hi}]")


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("layouts,out_layout", [
    (("transposed", "sliced"), "sliced"), (("offset", "transposed"), "transposed"),
    (("sliced", "offset"), "offset"),
], ids=str)
def test_hardtanh_strided_matches_torch(layer, env, layouts, out_layout):
    for dt in cases.HARDTANH_DTYPES:
        g, x = cases.grid(dt, dt, bounds=(-1.0, 1.0))
        x = no_nan_self(x)
        ours = run_hardtanh(layer, env, g, x, -1.0, 1.0, layouts=layouts, out_layout=out_layout)
        cases.assert_bits_equal(ours, torch_hardtanh(g, x, -1.0, 1.0), what=str(dt))


def test_hardtanh_accepts_dlpack_tensors():
    g, x = cases.grid(F32, F32, bounds=(-1.0, 1.0))
    x = no_nan_self(x)
    res = opsnn.hardtanh_backward(to_torch(g), to_torch(x), -1.0, 1.0)
    assert isinstance(res, np.ndarray)
    cases.assert_bits_equal(res, torch_hardtanh(g, x, -1.0, 1.0))
