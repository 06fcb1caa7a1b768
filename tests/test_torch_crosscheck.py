"""Bit-exact cross-check against torch.ops.aten.leaky_relu_backward / hardtanh_backward where
DECISIONS says the numbers agree. Excluded on purpose: DOUBLE tensors with a slope that is not
float32-exact (DECISION 2), NaN in self for hardtanh (DECISION 8), scalars that overflow float32
(torch raises, opsnn gives inf: DECISION 2), min > max and NaN bounds (torch's scalar path passes
grad for NaN bounds), 0-d mixed-dtype promotion (torch ranks 0-d lower), and a float64 result
cast to a float16/bfloat16 out (one rounding, DECISIONS 3; torch rounds through float32).
Then the Pythonic API with torch tensors: its writes and refusals, and (the last section) the plan
cache path plain torch tensors take, against the full path they took before, call for call."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import cases
import opsnn
from cases import BF16, F16, F32, F64
from opsnn import _fastpath, acl, engine, functional, kernels
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


# ---- torch tensors on the plan cache: parity with the full path ---------------------------------
# The Pythonic layer reads a plain torch CPU tensor argument as its NumPy view
# (``functional._torch_views``), so a repeated call hits the plan cache as a NumPy call does; with
# ``functional.TORCH_VIEWS`` off, every torch tensor takes the full path (DLPack), as before. Each
# scenario below makes fresh tensors and calls an operator four times (the first two run the full
# path, the second builds the cache entry, the last two hit it), changing the inputs' data between
# calls; it runs once with the views and once without, and every observable must agree: the
# result (its identity: a given out / self, or a new array's type, dtype, shape, strides and bits),
# the exception (type, status, text), acl.get_recent_err_msg(), the warnings, and for every tensor
# and array involved its bytes (the whole storage: NaN payloads, -0.0, what lies around a view),
# shape, strides, offset and version counter.

_NP_OF = {torch.float32: F32, torch.float16: F16, torch.float64: F64, torch.bfloat16: BF16}


def _fresh(shape, dtype=torch.float32, seed=0, grad=False):
    """A new contiguous CPU tensor of deterministic values; for float dtypes with specials (NaN
    with a payload, -0.0, infinities, subnormals) first."""
    shape = tuple(shape)
    if dtype in _NP_OF:
        specials = (cases.grad_specials if grad else cases.self_specials)(_NP_OF[dtype])
        return to_torch(cases.filled(shape, _NP_OF[dtype], seed, specials))
    values = np.random.default_rng(seed).integers(-5, 6, shape)
    if dtype == torch.bool:
        return torch.from_numpy(values > 0)
    if dtype in (torch.uint8, torch.uint16, torch.uint32, torch.uint64):
        values = np.abs(values)
    return torch.from_numpy(values).to(dtype)


def _laid(layout, shape, dtype=torch.float32, seed=0, grad=False):
    """(a tensor of logical ``shape`` laid out as ``layout``, the contiguous tensor it views)."""
    shape = tuple(shape)
    if layout == "contig":
        base = _fresh(shape, dtype, seed, grad)
        return base, base
    if layout == "transposed":
        base = _fresh(shape[::-1], dtype, seed, grad)
        return base.permute(*reversed(range(len(shape)))), base
    if layout == "strided":
        base = _fresh(shape[:-1] + (2 * shape[-1],), dtype, seed, grad)
        return base[..., 1::2], base
    if layout == "offset":
        base = _fresh((math.prod(shape) + 3,), dtype, seed, grad)
        return base[3:].view(shape), base
    if layout == "expanded":
        base = _fresh((1,) + shape[1:], dtype, seed, grad)
        return base.expand(shape), base
    raise ValueError(layout)


def _storage_bytes(t):
    try:
        storage = t.untyped_storage()
        return bytes(storage) if storage.device.type == "cpu" else str(storage.device)
    except Exception as exc:  # noqa: BLE001 - a ZeroTensor, a wrapper: what it says, recorded
        return type(exc).__name__


def _state(value):
    """What a call may have changed of a tensor or array it was given."""
    if isinstance(value, torch.Tensor):
        try:
            version = value._version
        except Exception as exc:  # noqa: BLE001 - an inference tensor has no version counter
            version = type(exc).__name__
        return ("tensor", type(value).__name__, str(value.dtype), tuple(value.shape), value.stride(),
                value.storage_offset(), value.requires_grad, version, _storage_bytes(value))
    root = value
    while isinstance(root.base, np.ndarray):
        root = root.base
    return ("ndarray", str(value.dtype), value.shape, value.strides, root.tobytes())


_PLANS: list = []  # one entry per phase 1 run (``count_plans``)


class _Recorder:
    """Runs calls and records what each one did; ``phase1``: how many of them ran phase 1 (the full
    path: ``engine.plan``), per call, recorded but not compared between the two runs."""

    def __init__(self):
        self.records, self.phase1, self.watched, self.refill = [], [], [], []
        self.log = []  # what a torch function / dispatch mode of the scenario saw

    def watch(self, *values):
        for v in values:
            if isinstance(v, (torch.Tensor, np.ndarray)) and all(v is not w for w in self.watched):
                self.watched.append(v)

    def call(self, fn, *args, **kwargs):
        self.watch(*args, *kwargs.values())
        before = [_state(v) for v in self.watched]
        planned = len(_PLANS)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                result, error = fn(*args, **kwargs), None
            except Exception as exc:  # noqa: BLE001 - recorded, compared
                result, error = None, (type(exc).__name__, getattr(exc, "status", None), str(exc))
        self.phase1.append(len(_PLANS) - planned)
        after = [_state(v) for v in self.watched]
        if error is not None:
            assert after == before, f"a refused call changed its arguments: {error}"
        given = [i for i, v in enumerate(self.watched) if v is result]
        if given:
            returned = ("given", given[0])
        elif isinstance(result, np.ndarray):  # a new array: its own bytes (a pooled buffer's rest is no part)
            returned = ("ndarray", str(result.dtype), result.shape, result.strides, result.flags.writeable,
                        np.ascontiguousarray(result).tobytes(),
                        any(np.shares_memory(result, v) for v in self.watched if isinstance(v, np.ndarray)))
        else:
            returned = ("other", type(result).__name__)
        self.records.append({"call": len(self.records), "returned": returned, "error": error,
                             "recent": acl.get_recent_err_msg(),
                             "warnings": [(w.category.__name__, str(w.message)) for w in seen],
                             "after": after, "log": list(self.log)})

    def repeat(self, fn, *args, times=4, **kwargs):
        """``fn(*args, **kwargs)`` ``times`` times, new values written into ``self.refill``'s
        tensors and arrays (the bases of the arguments) between calls."""
        for k in range(times):
            self.call(fn, *args, **kwargs)
            for base in self.refill:
                _refill(base, 100 + k)


def _blank(*shape, dtype=torch.float32):
    """A tensor to be written (out): known values, not torch.empty's leftovers."""
    return torch.full(shape, 7, dtype=dtype)


def _refill(base, seed):
    """New values into a contiguous tensor or array (its version bumps, as any write's)."""
    if not math.prod(base.shape):
        return
    if isinstance(base, np.ndarray):
        base[...] = _fresh(base.shape, torch.float32, seed).numpy().astype(base.dtype)
        return
    with torch.no_grad(), torch.inference_mode(base.is_inference()):
        base.detach().copy_(_fresh(base.shape, base.dtype, seed))


OPS = {  # name -> (function, scalars after the tensors, tensors: "gs" grad and self, "s" self)
    "lrb": (opsnn.leaky_relu_backward, (0.25, False), "gs"),
    "htb": (opsnn.hardtanh_backward, (-0.5, 0.75), "gs"),
    "lr": (opsnn.leaky_relu, (-0.125,), "s"),
    "ht": (opsnn.hardtanh, (-0.5, 0.75), "s"),
    "lr_": (opsnn.leaky_relu_, (0.125,), "s"),
    "ht_": (opsnn.hardtanh_, (-0.5, 0.75), "s"),
}
OUT_OF_PLACE = ("lrb", "htb", "lr", "ht")


def _plain_call(rec, op, *, dtype=torch.float32, shape=(3, 4), layout="contig", out="out", out_layout=None,
                maker=_laid):
    """The op on fresh tensors laid out as ``layout`` (out as ``out_layout``, default the same),
    four times: ``out`` "out" (a torch out), "alloc" (none), "numpy" (a NumPy out)."""
    fn, scalars, kinds = OPS[op]
    tensors = []
    for i, kind in enumerate(kinds):
        view, base = maker(layout, shape, dtype, seed=i, grad=kind == "g")
        tensors.append(view)
        rec.refill.append(base)
    kwargs = {}
    if op in OUT_OF_PLACE and out != "alloc":
        o, _ = _laid(out_layout or (layout if layout != "expanded" else "contig"), shape, dtype, seed=7)
        kwargs["out"] = o.numpy() if out == "numpy" else o
    rec.repeat(fn, *tensors, *scalars, **kwargs)


def _scenarios():
    s = {}
    dtypes_ = {"f32": torch.float32, "f16": torch.float16, "f64": torch.float64, "bf16": torch.bfloat16,
               "i32": torch.int32}
    for op in OPS:  # every op and dtype, with and without out
        for name, dt in dtypes_.items():
            for out in (("out", "alloc") if op in OUT_OF_PLACE else ("out",)):
                expect = "full" if dt == torch.bfloat16 else None
                s[f"{op}-{name}-{out}"] = (expect, lambda r, op=op, dt=dt, out=out: _plain_call(r, op, dtype=dt, out=out))
    for op in OPS:  # layouts of inputs and out
        for layout in ("transposed", "strided", "offset", "expanded"):
            s[f"{op}-{layout}"] = (None, lambda r, op=op, layout=layout: _plain_call(r, op, layout=layout))
        for out_layout in ("transposed", "strided", "offset", "expanded"):
            if op in OUT_OF_PLACE:
                s[f"{op}-out-{out_layout}"] = (None, lambda r, op=op, ol=out_layout: _plain_call(r, op, out_layout=ol))
    for op in ("lrb", "ht", "lr_", "htb"):  # ranks: 0-d, empty, 8-D, 9-D (refused)
        for shape in ((), (0, 3), (1, 2, 1, 2, 1, 1, 2, 1), (1,) * 8 + (2,)):
            s[f"{op}-shape{shape}"] = (None, lambda r, op=op, shape=shape: _plain_call(r, op, shape=shape))
        s[f"{op}-huge-empty"] = (None, lambda r, op=op: _plain_call(
            r, op, maker=lambda _l, _s, dt, seed, grad: (torch.empty(2**40, 0, 2**30, dtype=dt),) * 2,
            out="alloc"))
    s["lr-f32-plain-hits"] = ("hit", lambda r: _plain_call(r, "lr"))
    s["lrb-f32-plain-hits"] = ("hit", lambda r: _plain_call(r, "lrb"))
    s["lrb-f32-alloc-hits"] = ("hit", lambda r: _plain_call(r, "lrb", out="alloc"))
    s["htb-f16-plain-hits"] = ("hit", lambda r: _plain_call(r, "htb", dtype=torch.float16))
    s["ht_-f64-plain-hits"] = ("hit", lambda r: _plain_call(r, "ht_", dtype=torch.float64))
    s["lr_-f32-plain-hits"] = ("hit", lambda r: _plain_call(r, "lr_", layout="transposed"))
    s["ht-i32-numpy-out-hits"] = ("hit", lambda r: _plain_call(r, "ht", dtype=torch.int32, out="numpy"))
    for name, dt in (("u8", torch.uint8), ("i64", torch.int64), ("i8", torch.int8), ("u16", torch.uint16),
                     ("bool", torch.bool), ("c64", torch.complex64), ("c32", torch.complex32),
                     ("f8", torch.float8_e4m3fn), ("int3", torch.int3), ("uint1", torch.uint1)):
        def other_dtype(r, dt=dt):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # complex32: "experimental"
                x = torch.zeros(3, 4, dtype=dt) if dt not in (torch.uint8, torch.int64, torch.int8, torch.uint16,
                                                            torch.bool) else _fresh((3, 4), dt)
            r.call(opsnn.hardtanh, x, 0, 6)
            r.call(opsnn.hardtanh, x, 0, 6)
            r.call(opsnn.hardtanh, x)  # -1.0: no value in an unsigned dtype
            r.call(opsnn.leaky_relu, x, 0.5)
            r.call(opsnn.leaky_relu, torch.ones(3, 4), out=x)
            r.call(opsnn.hardtanh_, x, 0, 6)
            r.call(opsnn.hardtanh_, x, 0, 6)
        s[f"dtype-{name}"] = (None, other_dtype)
    s.update(_special_scenarios())
    return s


def _special_scenarios():
    s = {}

    def broadcast(r):
        g, x, o = _fresh((3, 1), seed=1, grad=True), _fresh((1, 4), seed=2), _blank(3, 4)
        r.refill += [g, x]
        r.repeat(opsnn.leaky_relu_backward, g, x, 0.5, False, out=o)
        r.repeat(opsnn.leaky_relu_backward, g, x, 0.5, False)
        r.call(opsnn.hardtanh_backward, g, x, -1.0, 1.0)  # same shapes only: refused
        r.call(opsnn.leaky_relu_backward, g, x, 0.5, False, out=_blank(4, 3))
    s["broadcast"] = ("hit", broadcast)

    def overlap(r):
        base = _fresh((9,), seed=3)
        r.refill.append(base)
        for _ in range(3):
            r.call(opsnn.leaky_relu, base[1:], 0.5, out=base[:-1])  # partial overlap: refused
            r.call(opsnn.hardtanh, base[:-1], -1.0, 1.0, out=base[1:])
            r.call(opsnn.leaky_relu, base[:8], 0.5, out=base[:8])  # exact alias: in place
            r.call(opsnn.hardtanh, base, -1.0, 1.0, out=base)
            m = base[:9].view(3, 3)
            r.call(opsnn.hardtanh, m, -1.0, 1.0, out=m.t())  # the same memory transposed: refused
            r.call(opsnn.leaky_relu_backward, base[:4], base[4:8], 0.5, False, out=base[:4])  # out is grad
            r.call(opsnn.leaky_relu_backward, base[:4], base[4:8], 0.5, False, out=base[2:6])  # partial
            r.call(opsnn.hardtanh_backward, base[:4], base[4:8], -1.0, 1.0, out=base[4:8])  # out is self
            _refill(base, 5)
    s["overlap"] = (None, overlap)

    def numpy_torch_overlap(r):
        base = _fresh((8,), seed=4)
        a = base.numpy()
        for _ in range(3):
            r.call(opsnn.leaky_relu, a[1:], 0.5, out=base[:-1])
            r.call(opsnn.leaky_relu, base[:7], 0.5, out=a[:7])
            r.call(opsnn.leaky_relu, a[:7], 0.5, out=base[:7])
            _refill(base, 6)
    s["numpy-torch-overlap"] = (None, numpy_torch_overlap)

    def wrong_out(r):
        g, x = _fresh((3, 4), seed=1, grad=True), _fresh((3, 4), seed=2)
        for out in (_blank(3, 4, dtype=torch.int32), _blank(3, 4, dtype=torch.float16),
                    _blank(3, 4, dtype=torch.float64), _blank(3, 4, dtype=torch.bfloat16),
                    _blank(4, 3), _blank(2, 3, 4), _blank(12)[::2].view(6)[:0], _blank(1, 4)):
            r.call(opsnn.leaky_relu_backward, g, x, 0.5, False, out=out)
            r.call(opsnn.leaky_relu_backward, g, x, 0.5, False, out=out)
            r.call(opsnn.hardtanh_backward, g, x, -1.0, 1.0, out=out)
            r.call(opsnn.leaky_relu, x, 0.5, out=out)
            r.call(opsnn.hardtanh, x, -1.0, 1.0, out=out)
    s["wrong-out"] = (None, wrong_out)

    def requires_grad(r):
        leaf = _fresh((3, 4), seed=1).requires_grad_()
        nonleaf = leaf * 1
        x = _fresh((3, 4), seed=2)
        for _ in range(2):
            r.call(opsnn.leaky_relu_backward, leaf, x, 0.5, False)  # input: DLPack refuses it
            r.call(opsnn.leaky_relu_backward, x, leaf, 0.5, False, out=_blank(3, 4))
            r.call(opsnn.hardtanh, nonleaf, out=_blank(3, 4))
            r.call(opsnn.leaky_relu, x, out=leaf)  # written: opsnn refuses it
            r.call(opsnn.leaky_relu, x, out=nonleaf)
            r.call(opsnn.hardtanh_, leaf)
            r.call(opsnn.leaky_relu_, nonleaf)
            r.call(opsnn.leaky_relu, x, out=leaf.detach())  # its detached alias: written, version bumped
            r.call(opsnn.leaky_relu_backward, x.int(), x, 0.5, False, out=leaf)  # the dtype first
            with torch.no_grad():
                r.call(opsnn.leaky_relu, x, out=leaf)
                r.call(opsnn.leaky_relu, leaf)
    s["requires-grad"] = ("full", requires_grad)

    def inference(r):
        with torch.inference_mode():
            frozen, frozen_out = _fresh((3, 4), seed=1), _blank(3, 4)
        x, o = _fresh((3, 4), seed=2), _blank(3, 4)
        r.refill += [x]
        for _ in range(4):
            r.call(opsnn.leaky_relu, frozen, 0.5)  # read: fine
            r.call(opsnn.leaky_relu, frozen, 0.5, out=o)
            r.call(opsnn.leaky_relu, x, 0.5, out=frozen_out)  # written outside inference mode: refused
            r.call(opsnn.hardtanh_, frozen)
            r.call(opsnn.hardtanh_, frozen, 1.0, -1.0)  # min > max: CANN's refusal first
            with torch.inference_mode():
                r.call(opsnn.leaky_relu, x, 0.5, out=frozen_out)
                r.call(opsnn.hardtanh_, frozen, -0.5, 0.5)
                r.call(opsnn.leaky_relu, frozen, 0.5, out=o)  # a normal tensor written inside
                r.call(opsnn.leaky_relu_backward, x, frozen, 0.5, False, out=o)
                r.call(opsnn.leaky_relu_, x, 0.5)
    s["inference"] = (None, inference)

    def neg_and_conj(r):
        neg = torch._neg_view(_fresh((3, 4), seed=1))
        z = torch.tensor([1 + 2j, -3 - 1j, 0.5j], dtype=torch.complex64)
        x = _fresh((3, 4), seed=2)
        for _ in range(2):
            r.call(opsnn.leaky_relu, neg, 0.5)
            r.call(opsnn.leaky_relu, x, 0.5, out=neg)
            r.call(opsnn.leaky_relu_, neg)
            r.call(opsnn.leaky_relu_backward, x, neg, 0.5, False)
            r.call(opsnn.leaky_relu, z.conj().imag, 0.5)
            r.call(opsnn.leaky_relu, z.conj(), 0.5)
            r.call(opsnn.leaky_relu, torch.ones(3), out=z.conj())
            r.call(opsnn.hardtanh, x, -1.0, 1.0, out=neg.resolve_neg())
    s["neg-conj"] = (None, neg_and_conj)

    def memoryless(r):
        from torch._subclasses.fake_tensor import FakeTensorMode

        with FakeTensorMode():
            fake = torch.ones(3, 4)
        zero = torch._efficientzerotensor(3, 4)
        hollow = torch.ones(3, 4)
        hollow.untyped_storage().resize_(0)  # a plain tensor whose data pointer is null
        x = _fresh((3, 4), seed=2)
        for bad in (fake, zero, hollow, torch.ones(3, 4, device="meta")):
            r.call(opsnn.leaky_relu, bad, 0.5)
            r.call(opsnn.leaky_relu_backward, x, bad, 0.5, False)
            r.call(opsnn.leaky_relu, x, 0.5, out=bad)
            r.call(opsnn.hardtanh_, bad)
            r.call(opsnn.leaky_relu, x, 0.5, out=bad)
    s["memoryless"] = ("full", memoryless)

    class Sub(torch.Tensor):
        pass

    def subclasses(r):
        x = _fresh((3, 4), seed=2)
        param = torch.nn.Parameter(_fresh((3, 4), seed=3), requires_grad=False)
        param_grad = torch.nn.Parameter(_fresh((3, 4), seed=4))
        sub = _fresh((3, 4), seed=5).as_subclass(Sub)
        for _ in range(4):
            for t in (param, param_grad, sub):
                r.call(opsnn.leaky_relu, t, 0.5)
                r.call(opsnn.leaky_relu_backward, t, x, 0.5, False)
                r.call(opsnn.leaky_relu, x, 0.5, out=t)
                r.call(opsnn.hardtanh_, t, -0.5, 0.5)
            _refill(x, 9)
    s["subclasses"] = ("full", subclasses)

    def mixed(r):
        g_np, x_np = cases.filled((3, 4), F32, 1, cases.grad_specials(F32)), cases.filled((3, 4), F32, 2)
        g, x, o = _fresh((3, 4), seed=3, grad=True), _fresh((3, 4), seed=4), _blank(3, 4)
        o_np = np.empty((3, 4), F32)
        r.refill += [g_np, x_np, g, x]
        r.repeat(opsnn.leaky_relu_backward, g_np, x, 0.5, False, out=o)
        r.repeat(opsnn.leaky_relu_backward, g, x_np, 0.5, False, out=o_np)
        r.repeat(opsnn.leaky_relu_backward, g_np, x_np, 0.5, False, out=o)
        r.repeat(opsnn.hardtanh_backward, g, x_np, -0.5, 0.5)
        r.repeat(opsnn.hardtanh, x_np, -0.5, 0.5, out=o)
        r.repeat(opsnn.leaky_relu_backward, g.half(), x_np, 0.5, False)  # promoted
    s["mixed-numpy-torch"] = ("hit", mixed)

    def python_numbers(r):
        x, x16, xi = _fresh((3, 4), seed=1), _fresh((3, 4), torch.float16, 2), _fresh((3, 4), torch.int32, 3)
        o = _blank(3, 4)
        r.refill += [x, x16, xi]
        r.repeat(opsnn.leaky_relu_backward, 1.5, x, 0.5, False)  # weak: x's dtype
        r.repeat(opsnn.leaky_relu_backward, x16, -2, 0.5, False, out=o)
        r.repeat(opsnn.leaky_relu_backward, 1e5, x16, 0.5, False)  # inf in float16
        r.repeat(opsnn.leaky_relu_backward, 1.0, xi, 0.5, False)  # refused, its note
        r.repeat(opsnn.hardtanh_backward, x, 0.25, -1.0, 1.0)
        r.repeat(opsnn.hardtanh_backward, 1.0, 2.0, -1.0, 1.0)
        r.repeat(opsnn.leaky_relu, x, torch.tensor(0.5))  # a 0-d tensor slope: refused as before
        r.repeat(opsnn.hardtanh, x, torch.tensor(-1.0), 1.0, out=o)
        r.repeat(opsnn.leaky_relu_backward, x, x, 0.5, torch.tensor(True))
        r.repeat(opsnn.leaky_relu_backward, x, x, -0.5, True)  # a negative slope with self_is_result
        r.repeat(opsnn.leaky_relu_backward, x, x, np.float32(0.5), np.True_, out=o)
        r.repeat(opsnn.hardtanh, xi, np.int64(-2), 3.7, out=xi.clone())
        r.repeat(opsnn.leaky_relu_backward, x, None, 0.5, False, out=o)
        r.repeat(opsnn.leaky_relu_backward, x, x, None, False, out=o)
        r.repeat(opsnn.leaky_relu, x, float("nan"), out=o)
        r.repeat(opsnn.leaky_relu, x, -0.0, out=o)
        r.repeat(opsnn.leaky_relu, x, "0.5", out=o)
        r.repeat(opsnn.leaky_relu, x, 0.5, out=np.empty((3, 4), F32).view(np.uint8)[:, :4])  # wrong dtype
    s["python-numbers"] = (None, python_numbers)

    def out_changes(r):
        g, x = _fresh((3, 4), seed=1, grad=True), _fresh((3, 4), seed=2)
        o = _blank(3, 4)
        r.refill += [g, x]
        r.repeat(opsnn.leaky_relu_backward, g, x, 0.5, False, out=o)
        o.resize_(4, 3)  # another shape: refused
        r.repeat(opsnn.leaky_relu_backward, g, x, 0.5, False, out=o)
        o.resize_(3, 4)
        r.repeat(opsnn.leaky_relu_backward, g, x, 0.5, False, out=o)
        o.set_(torch.full((3, 4), 2.0).untyped_storage())  # new storage, one dim of 12: refused
        r.repeat(opsnn.leaky_relu_backward, g, x, 0.5, False, out=o)
        o.set_(torch.full((3, 4), 2.5).untyped_storage(), 0, (3, 4), (4, 1))  # new storage: written there
        r.repeat(opsnn.leaky_relu_backward, g, x, 0.5, False, out=o)
        o.set_(torch.full((20,), 3.0).untyped_storage(), 5, (3, 4), (1, 3))  # offset, transposed strides
        r.repeat(opsnn.leaky_relu_backward, g, x, 0.5, False, out=o)
        o.t_()  # (4, 3): refused
        r.repeat(opsnn.leaky_relu_backward, g, x, 0.5, False, out=o)
        o.t_()
        r.repeat(opsnn.leaky_relu_backward, g, x, 0.5, False, out=o)
        x.resize_(2, 6)
        r.repeat(opsnn.leaky_relu_backward, g, x, 0.5, False, out=o)
        r.repeat(opsnn.hardtanh_, x, -0.5, 0.5)
        x.resize_(3, 4)
        r.repeat(opsnn.hardtanh_, x, -0.5, 0.5)
        r.repeat(opsnn.leaky_relu_backward, g, x, 0.5, False, out=o)
    s["out-resized"] = ("hit", out_changes)

    def soc(r):
        x, xb = _fresh((3, 4), seed=1), _fresh((3, 4), torch.bfloat16, 2)
        for name in ("Ascend310P", "Ascend910", "Ascend910B"):
            with opsnn.use_soc(name):
                r.repeat(opsnn.leaky_relu, x, 0.5, out=_blank(3, 4))
                r.repeat(opsnn.leaky_relu_backward, x, x, 0.5, False)
                r.repeat(opsnn.hardtanh_backward, xb, xb, -1.0, 1.0)
                r.repeat(opsnn.hardtanh_, x, -1.0, 1.0)
    s["soc"] = (None, soc)

    def modes(r):
        from torch.overrides import TorchFunctionMode
        from torch.utils._python_dispatch import TorchDispatchMode

        class Functions(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                r.log.append(getattr(func, "__name__", str(func)))
                return func(*args, **(kwargs or {}))

        class Dispatches(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                r.log.append(str(func))
                return func(*args, **(kwargs or {}))

        x, o = _fresh((3, 4), seed=1), _blank(3, 4)
        for mode in (Functions, Dispatches):
            with mode():
                r.repeat(opsnn.leaky_relu, x, 0.5, out=o)
                r.repeat(opsnn.hardtanh_, x, -0.5, 0.5)
                r.repeat(opsnn.leaky_relu_backward, x, x, 0.5, False)
    s["modes"] = ("full", modes)
    return s


SCENARIOS = _scenarios()


def _run(scenario, views: bool, monkeypatch):
    """The scenario's records, run on fresh caches with the torch views on or off."""
    monkeypatch.setattr(functional, "TORCH_VIEWS", views)
    _fastpath.clear()
    engine.clear_plan_cache()
    acl.get_recent_err_msg()
    rec = _Recorder()
    try:
        scenario(rec)
    finally:
        monkeypatch.setattr(functional, "TORCH_VIEWS", True)
        _fastpath.clear()
    return rec


@pytest.fixture
def count_plans(monkeypatch):
    plan = engine.plan
    _PLANS.clear()

    def counted(*args, **kwargs):
        _PLANS.append(None)
        return plan(*args, **kwargs)

    monkeypatch.setattr(engine, "plan", counted)
    yield _PLANS
    _PLANS.clear()


def _assert_same(viewed, full, what):
    assert len(viewed.records) == len(full.records), what
    for a, b in zip(viewed.records, full.records):
        for field in a:
            assert a[field] == b[field], f"{what}, call {a['call']}: {field} differs:\n views: {a[field]}\n full:  {b[field]}"


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_torch_views_change_nothing_but_the_speed(name, monkeypatch, count_plans):
    """Every scenario gives the same records with the torch views as without them (see above);
    where marked "hit", the views' run served its last two repeated calls from the plan cache
    (no phase 1), where marked "full" (tensors that keep today's path), it ran phase 1 on the
    very calls the full path ran it on."""
    expect, scenario = SCENARIOS[name]
    viewed = _run(scenario, True, monkeypatch)
    full = _run(scenario, False, monkeypatch)
    _assert_same(viewed, full, name)
    if kernels.default_name() != "numba":  # only the compiled backend keeps plans
        return
    if expect == "hit":
        repeats = [viewed.phase1[k:k + 4] for k in range(0, len(viewed.phase1) - 3, 4)]
        assert any(p[2:] == [0, 0] for p in repeats), viewed.phase1
        assert all(p[2:] == [0, 0] for p, rec in zip(repeats, viewed.records[::4]) if rec["error"] is None
                   and p[:2] == [1, 1]), viewed.phase1
    elif expect == "full":  # today's path: phase 1 wherever it ran it (a torch in-place self: cached)
        assert viewed.phase1 == full.phase1


def test_the_parity_check_sees_a_missing_version_bump_or_a_numpy_result(monkeypatch, count_plans):
    """The comparison above fails where the views' path differs: a torch out written without its
    version bump, or the NumPy view returned in place of the torch out."""
    _, scenario = SCENARIOS["lrb-f32-plain-hits"]
    full = _run(scenario, False, monkeypatch)
    monkeypatch.setattr(functional, "_mark_written", lambda value: None)
    with pytest.raises(AssertionError, match="after differs"):
        _assert_same(_run(scenario, True, monkeypatch), full, "no version bump")
    monkeypatch.undo()
    views = functional._torch_views

    def forgetful(spec, kwargs, out):  # returns the view, not the torch out it stands for
        viewed = views(spec, kwargs, out)
        return viewed and (viewed[0], viewed[1], None)

    monkeypatch.setattr(functional, "_torch_views", forgetful)
    with pytest.raises(AssertionError, match="returned differs"):
        _assert_same(_run(scenario, True, monkeypatch), full, "a NumPy result")


def test_which_torch_tensors_are_read_as_numpy_views():
    """``_torch_view`` views a plain CPU tensor of a dtype NumPy holds (an inference tensor too, but
    written only inside inference mode) and nothing the full path treats otherwise."""
    assert functional._torch_for_views() is torch
    x = _fresh((3, 4))
    with torch.inference_mode():
        frozen = torch.ones(3)
    for t in (x, x.t(), x[:, 1::2], x[1:], x.expand(2, 3, 4), torch.ones(()), torch.ones(0, 3),
              frozen, x.double(), x.half(), x.int(), x.bool(), torch.ones(2, dtype=torch.uint64)):
        view = functional._torch_view(torch, t, written=False)
        assert type(view) is np.ndarray and view.shape == tuple(t.shape)
        assert view.strides == tuple(s * t.element_size() for s in t.stride()) or not t.numel()
        assert view.__array_interface__["data"][0] == t.data_ptr() or not t.numel()
    assert functional._torch_view(torch, x.t(), written=True) is not None
    assert functional._torch_view(torch, frozen, written=True) is None
    with torch.inference_mode():
        assert functional._torch_view(torch, frozen, written=True) is not None
    hollow = torch.ones(2)
    hollow.untyped_storage().resize_(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # complex32: "experimental"
        half_complex = torch.zeros(2, dtype=torch.complex32)
    others = [x.clone().requires_grad_(), x.bfloat16(), x.to(torch.float8_e5m2),
              half_complex, torch.zeros(2, dtype=torch.int3), torch._neg_view(x),
              torch.ones(2, dtype=torch.complex64).conj(), torch._efficientzerotensor(2), torch.nn.Parameter(x),
              torch.nn.Parameter(x, requires_grad=False), x.as_subclass(_Subclass), torch.ones(2, device="meta"),
              hollow, torch.empty(2**40, 0, 2**30), x.numpy(), 1.0, None]
    for t in others:
        for written in (False, True):
            assert functional._torch_view(torch, t, written=written) is None, t


def test_torch_views_leave_the_tensors_resizable():
    """A call that read (or wrote) torch tensors as their NumPy views leaves them resizable: the
    views are DLPack's, where ``Tensor.numpy()`` had marked each storage not resizable for good,
    so the caller's ``resize_()``, a storage freed by ``resize_(0)`` and a torch op resizing an
    ``out=`` failed afterwards (a breaker)."""
    x, g, o = torch.tensor([-1.0, 2.0, 3.0]), torch.ones(3), torch.empty(3)
    for _ in range(3):  # the full path, then plan-cache hits
        opsnn.leaky_relu_backward(g, x, 0.1, False, out=o)
        opsnn.hardtanh(x, -1.0, 1.0)
        opsnn.leaky_relu_(g, 0.1)
    assert functional._torch_view(torch, x, written=False) is not None  # (these are viewed)
    x.resize_(8)
    o.untyped_storage().resize_(0)
    torch.cat([torch.ones(2), torch.ones(4)], out=g.resize_(0))
    assert x.shape == (8,) and o.untyped_storage().nbytes() == 0 and g.shape == (6,)


class _Subclass(torch.Tensor):
    pass


def test_torch_views_need_no_opsnn_torch():
    """The Pythonic layer binds the plain-tensor tables itself (``_core.torchplain``): in a process
    that never imports opsnn.torch (no torch ops registered), a repeated call with torch tensors
    hits the plan cache and bumps its out's version."""
    from conftest import run_python

    out = run_python(
        "import sys, torch, opsnn\n"
        "from opsnn import engine\n"
        "plans = []\n"
        "plan = engine.plan\n"
        "engine.plan = lambda *a, **k: plans.append(1) or plan(*a, **k)\n"
        "g, x, o = torch.ones(4), torch.tensor([-2.0, 0.5, 3.0, -0.0]), torch.empty(4)\n"
        "for _ in range(4):\n"
        "    assert opsnn.leaky_relu_backward(g, x, 0.5, False, out=o) is o\n"
        "assert o.tolist() == [0.5, 1.0, 1.0, 0.5] and o._version == 4, (o, o._version)\n"
        "print(len(plans), 'opsnn.torch' in sys.modules, hasattr(torch.ops.opsnn, 'leaky_relu'))\n")
    from opsnn import kernels as k
    assert out.split() == ["2" if k.default_name() == "numba" else "4", "False", "False"]
