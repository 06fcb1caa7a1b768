"""opsnn.torch.nn modules, swap_activations, and torch.compile of a model that uses them."""

from __future__ import annotations

import copy
import shutil

import pytest

torch = pytest.importorskip("torch")

import opsnn.torch as ot  # noqa: E402
from opsnn.torch import nn as onn  # noqa: E402

INT_VIEW = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}


def same_bits(a, b) -> bool:
    return a.dtype == b.dtype and torch.equal(a.contiguous().view(INT_VIEW[a.dtype]),
                                              b.contiguous().view(INT_VIEW[b.dtype]))


def assert_same_values_and_gradients(ours, theirs, x) -> None:
    """The two modules' outputs on ``x`` and the gradients they give it, bit for bit (each on a
    non-leaf copy, so an in-place module may write it)."""
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    ya, yb = ours(xa * 1), theirs(xb * 1)
    assert same_bits(ya.detach(), yb.detach())
    ya.backward(torch.ones_like(ya))
    yb.backward(torch.ones_like(yb))
    assert same_bits(xa.grad, xb.grad)


@pytest.mark.parametrize("ours, theirs", [
    (lambda: onn.LeakyReLU(), lambda: torch.nn.LeakyReLU()),
    (lambda: onn.LeakyReLU(0.2, inplace=True), lambda: torch.nn.LeakyReLU(0.2, inplace=True)),
    (lambda: onn.LeakyReLU(negative_slope=-1.5), lambda: torch.nn.LeakyReLU(negative_slope=-1.5)),
    (lambda: onn.Hardtanh(), lambda: torch.nn.Hardtanh()),
    (lambda: onn.Hardtanh(-2, 3, True), lambda: torch.nn.Hardtanh(-2, 3, True)),
    (lambda: onn.Hardtanh(min_val=0.0, max_val=0.5), lambda: torch.nn.Hardtanh(min_val=0.0, max_val=0.5)),
    (lambda: onn.ReLU6(), lambda: torch.nn.ReLU6()),
    (lambda: onn.ReLU6(inplace=True), lambda: torch.nn.ReLU6(inplace=True)),
    # 0-d tensors as the scalars, as torch.nn.functional takes them
    (lambda: onn.LeakyReLU(torch.tensor(0.3, dtype=torch.float16)),
     lambda: torch.nn.LeakyReLU(torch.tensor(0.3, dtype=torch.float16))),
    (lambda: onn.Hardtanh(torch.tensor(-0.7), torch.tensor(2), True),
     lambda: torch.nn.Hardtanh(torch.tensor(-0.7), torch.tensor(2), True)),
])
def test_modules_match_torch_nn(ours, theirs):
    a, b = ours(), theirs()
    assert repr(a) == "opsnn." + repr(b) and a.extra_repr() == b.extra_repr()
    assert isinstance(a, type(b)) and type(a) is not type(b)
    assert_same_values_and_gradients(a, b, torch.randn(5, 7) * 4)


def test_module_argument_checks_are_torchs():
    with pytest.raises(AssertionError, match="must be greater than min_val"):
        onn.Hardtanh(1.0, -1.0)
    with pytest.raises(AssertionError):
        onn.Hardtanh(0.5, 0.5)


def test_leaky_relu_module_inplace_negative_slope_refuses_at_backward():
    m = onn.LeakyReLU(-0.5, inplace=True)
    x = torch.randn(4, requires_grad=True)
    y = m(x * 1)
    with pytest.raises(ot.AclnnRuntimeError):
        y.sum().backward()


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Hardtanh(-0.5, 0.5, inplace=True))
        self.act = torch.nn.ReLU6()

    def forward(self, x):
        return self.act(self.body(x))


class Custom(torch.nn.LeakyReLU):  # a user subclass: its forward may differ, so it is kept
    pass


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.LeakyReLU(0.2, inplace=True),
        Block(), torch.nn.ModuleList([torch.nn.LeakyReLU(), torch.nn.ReLU()]),
        Custom(0.3), torch.nn.Linear(8, 2))


def test_swap_activations_replaces_in_place_and_keeps_the_numbers():
    original = make_model()
    model = copy.deepcopy(original)
    model.eval()
    assert ot.swap_activations(model) is model
    assert type(model[1]) is onn.LeakyReLU and (model[1].negative_slope, model[1].inplace) == (0.2, True)
    assert type(model[2].body[1]) is onn.Hardtanh
    assert (model[2].body[1].min_val, model[2].body[1].max_val, model[2].body[1].inplace) == (-0.5, 0.5, True)
    assert type(model[2].act) is onn.ReLU6
    assert type(model[3][0]) is onn.LeakyReLU
    assert type(model[3][1]) is torch.nn.ReLU  # not bit-identical to any opsnn op: left alone
    assert type(model[4]) is Custom
    assert not model[1].training  # the train/eval flag carries over
    printed = repr(model)  # which activations run on opsnn shows when the model is printed
    assert printed == repr(original).replace("(1): LeakyReLU(", "(1): opsnn.LeakyReLU(").replace(
        "(1): Hardtanh(", "(1): opsnn.Hardtanh(").replace("(act): ReLU6(", "(act): opsnn.ReLU6(").replace(
        "(0): LeakyReLU(", "(0): opsnn.LeakyReLU(")
    assert printed.count("opsnn.") == 4 and "(1): ReLU()" in printed
    x = torch.randn(16, 4)
    seq = lambda m, t: m[2](m[1](m[0](t)))  # noqa: E731 - the part with swapped modules
    assert same_bits(seq(model, x), seq(original, x))
    assert ot.swap_activations(model) is model  # idempotent: opsnn modules are not swapped again


def test_swap_activations_on_a_bare_activation_swaps_it():
    act = torch.nn.ReLU6(inplace=True)
    assert ot.swap_activations(act) is act
    assert type(act) is onn.ReLU6 and act.inplace


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = torch.nn.Linear(8, 16), torch.nn.Linear(16, 16), torch.nn.Linear(16, 4)
        self.a1, self.a2 = onn.LeakyReLU(0.1), onn.Hardtanh(-0.75, 0.75)
        self.a3 = onn.LeakyReLU(0.05, inplace=True)

    def forward(self, x):
        return self.fc3(self.a3(self.a2(self.fc2(self.a1(self.fc1(x))))))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit, imported by inductor
def test_torch_compile_fullgraph():
    """The opsnn ops are opaque custom ops with fake kernels, so dynamo captures one graph and
    inductor compiles the rest around them; forward and backward equal eager to the bit."""
    if shutil.which("g++") is None and shutil.which("gcc") is None and shutil.which("clang++") is None:
        pytest.skip("torch.compile (inductor) needs a C++ compiler and none is on PATH")
    torch.manual_seed(0)
    eager = Net()
    compiled_model = copy.deepcopy(eager)
    compiled = torch.compile(compiled_model, fullgraph=True)
    x = torch.randn(32, 8)
    try:
        out = compiled(x)
    except Exception as exc:  # noqa: BLE001
        text = f"{type(exc).__name__}: {exc}"
        if any(word in text for word in ("CppCompileError", "InvalidCxxCompiler", "compiler")):
            pytest.skip(f"inductor could not use a C++ compiler here: {text[:300]}")
        raise
    ref = eager(x)
    assert torch.allclose(out, ref, rtol=1e-5, atol=1e-6)  # matmuls may fuse differently
    out.square().sum().backward()
    ref.square().sum().backward()
    for (name, p), q in zip(compiled_model.named_parameters(), eager.parameters()):
        assert torch.allclose(p.grad, q.grad, rtol=1e-4, atol=1e-6), name
    # the activations themselves are exact: compare them on identical inputs through a graph
    h = torch.randn(64, 16) * 2
    f = torch.compile(lambda t: ot.hardtanh(ot.leaky_relu(t, 0.1), -0.75, 0.75), fullgraph=True)
    assert same_bits(f(h), torch.nn.functional.hardtanh(torch.nn.functional.leaky_relu(h, 0.1), -0.75, 0.75))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit, imported by inductor
def test_torch_compile_in_place_activations_between_layers():
    """Found by a breaker: inductor (torch 2.13) miscompiles a torch.library op tagged in place,
    handing the updated buffer to the next layer as its output while the activation's result is
    still to be read (off by 0.13-0.5). Inside torch.compile the in-place forms run as the
    functional op and a copy_; forward and gradients equal eager torch."""
    if shutil.which("g++") is None and shutil.which("gcc") is None and shutil.which("clang++") is None:
        pytest.skip("torch.compile (inductor) needs a C++ compiler and none is on PATH")
    torch.manual_seed(0)
    L = torch.nn.Linear
    original = torch.nn.Sequential(L(4, 8), torch.nn.LeakyReLU(0.1, inplace=True), L(8, 8),
                                   torch.nn.ReLU6(inplace=True), L(8, 8), torch.nn.Hardtanh(-0.5, 0.5, inplace=True),
                                   L(8, 8), L(8, 1))
    swapped = ot.swap_activations(copy.deepcopy(original))
    x = torch.randn(16, 4) * 4
    torch._dynamo.reset()
    out = torch.compile(swapped, fullgraph=True)(x)
    ref = original(x)
    assert torch.allclose(out, ref, rtol=1e-5, atol=1e-6), (out - ref).abs().max()
    out.sum().backward()
    ref.sum().backward()
    for (name, p), q in zip(swapped.named_parameters(), original.parameters()):
        assert torch.allclose(p.grad, q.grad, rtol=1e-4, atol=1e-6), name
    h = torch.randn(64) * 8  # the activation alone, on identical inputs: exact
    f = torch.compile(lambda t: ot.leaky_relu(ot.hardtanh(t * 1, -2, 3, inplace=True), 0.25, inplace=True) + 0,
                      fullgraph=True)
    assert same_bits(f(h), torch.nn.functional.leaky_relu(torch.nn.functional.hardtanh(h, -2, 3), 0.25))


def test_compile_dynamic_shapes_with_autograd_does_not_recompile():
    """Fake kernels keep symbolic sizes symbolic (AOT autograd, no C++ compiler needed)."""
    from torch._dynamo.testing import CompileCounterWithBackend

    counter = CompileCounterWithBackend("aot_eager")

    def f(x):
        return ot.hardtanh(ot.leaky_relu(x, 0.1), -0.5, 0.5).sum()

    compiled = torch.compile(f, backend=counter, dynamic=True, fullgraph=True)
    for n in (3, 5, 9):
        x = torch.randn(n, 4, requires_grad=True)
        y = x.detach().clone().requires_grad_()
        compiled(x).backward()
        f(y).backward()
        assert same_bits(x.grad, y.grad)
    assert counter.frame_count == 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit, imported by inductor
@pytest.mark.parametrize("dynamic", [None, True])
def test_inductor_with_scalars_that_vary_between_calls(dynamic):
    """Found by a breaker: inductor (torch 2.13) kept the first call's value of a float argument
    given to a custom op's ``Scalar``: a slope passed to the compiled function and changed gave
    the first slope's numbers, forward and backward, under ``dynamic=True`` and, once a value
    changed, under the default too. The functions take the ops' float twins inside
    torch.compile (``_ops._FLOAT_OPS``), an int bound beside a varying float too (a reviewer:
    ``hardtanh(x, -1, s)`` still met the bug): every call equals eager to the bit."""
    if shutil.which("g++") is None and shutil.which("gcc") is None and shutil.which("clang++") is None:
        pytest.skip("torch.compile (inductor) needs a C++ compiler and none is on PATH")
    F = torch.nn.functional

    def model(x, s, fn):
        return (fn.hardtanh(fn.leaky_relu(x, s) + s, -s, 2 * s) * s + fn.hardtanh(x, -1, s)).sum()

    compiled = torch.compile(lambda x, s: model(x, s, ot), dynamic=dynamic)
    x0 = torch.linspace(-2, 2, 9)
    for s in (0.1, 0.2, 0.5):
        x, y = x0.clone().requires_grad_(), x0.clone().requires_grad_()
        out, want = compiled(x, s), model(y, s, F)
        out.backward()
        want.backward()
        assert same_bits(out, want) and same_bits(x.grad, y.grad), (s, out, want)


def test_compile_with_scalars_that_vary_between_calls():
    """A slope or bound that changes between calls reaches the fake kernels as a SymFloat
    (torch.compile makes it dynamic after the first change, and ``dynamic=True`` from the start):
    they check metadata with its example value, and every call equals eager to the bit."""
    f = torch.compile(lambda t, s, lo: ot.hardtanh(ot.leaky_relu(t, s), lo, 0.5), backend="aot_eager", fullgraph=True)
    x = torch.randn(6, 5) * 2
    for s, lo in ((0.1, -0.5), (0.2, -0.25), (0.3, -0.125), (-0.5, -1.0)):
        want = torch.nn.functional.hardtanh(torch.nn.functional.leaky_relu(x, s), lo, 0.5)
        assert same_bits(f(x, s, lo), want)
    x.requires_grad_(True)
    y = x.detach().clone().requires_grad_()
    module = torch.compile(ot.nn.LeakyReLU(0.2), backend="aot_eager", dynamic=True, fullgraph=True)
    module(x).sum().backward()
    torch.nn.functional.leaky_relu(y, 0.2).sum().backward()
    assert same_bits(x.grad, y.grad)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_fx_traces_a_swapped_model_and_script_refuses_it_clearly():
    """(a breaker) torch.fx.symbolic_trace of a swapped model, or of the functions, failed
    ("must be Tensor, not Proxy"): the functions take the __torch_function__ protocol as
    torch.nn.functional does, and the traced graph computes the same bits; torch.jit.script
    failed on a private helper's keyword arguments, now a TypeError naming the module; the
    forward-AD refusal of relu6 / ReLU6 names relu6."""
    model = ot.swap_activations(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.LeakyReLU(0.1),
                                                    torch.nn.Hardtanh(), torch.nn.ReLU6()))
    traced = torch.fx.symbolic_trace(model)
    assert "opsnn_torch_leaky_relu" in traced.code and "opsnn_torch_relu6" in traced.code
    x = torch.randn(3, 4) * 5
    assert same_bits(traced(x), model(x))
    backward = torch.fx.symbolic_trace(lambda g, s: ot.leaky_relu_backward(g, s, 0.2) + ot.hardtanh_backward(g, s, -1.0, 1.0))
    assert same_bits(backward(x, -x), ot.leaky_relu_backward(x, -x, 0.2) + ot.hardtanh_backward(x, -x, -1.0, 1.0))
    with pytest.raises(TypeError, match="torch.jit.script cannot compile opsnn.torch.nn.LeakyReLU: .* use torch.compile "
                                        "or torch.jit.trace"):
        torch.jit.script(model)
    with pytest.raises(NotImplementedError, match=r"^opsnn.torch.relu6: forward-mode AD"):
        torch.func.jvp(onn.ReLU6(), (x,), (x,))


@pytest.mark.parametrize("bounds", [(0.0, 2.0), (-1.0, 6.0), (-0.0, 6.0), (0, 6), (torch.tensor(0.5), 6.0)])
@pytest.mark.parametrize("inplace", [False, True])
def test_relu6_clamps_to_its_bounds_as_torchs_does(bounds, inplace):
    """(A new-user breaker) torch's ReLU6 runs Hardtanh.forward with its min_val / max_val, which
    code adjusting every Hardtanh (isinstance holds for ReLU6) sets; opsnn's ReLU6 clamped to
    0 and 6 whatever they held (max_val 2: 5.0 stayed 5.0 where torch gives 2.0)."""
    ours, theirs = onn.ReLU6(inplace), torch.nn.ReLU6(inplace)
    for m in (ours, theirs):
        m.min_val, m.max_val = bounds
    assert_same_values_and_gradients(ours, theirs, torch.tensor([-7.0, -1.0, -0.5, 0.0, 1.5, 5.0, 9.0]))


class _CallsOpsnn(torch.nn.Module):
    def forward(self, x):
        return ot.hardtanh(x, -0.5, 0.5)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("name", ["leaky_relu", "leaky_relu_", "hardtanh", "hardtanh_", "relu6",
                                  "leaky_relu_backward", "hardtanh_backward"])
def test_script_refuses_the_functions_clearly(name):
    """(a breaker) torch.jit.script of an opsnn.torch function failed with "'tuple' object is not
    iterable" at a private helper; now the modules' TypeError, naming the function, also where
    a scripted module's forward calls it."""
    with pytest.raises(TypeError) as info:
        torch.jit.script(getattr(ot, name))
    assert str(info.value) == (f"torch.jit.script cannot compile opsnn.torch.{name}: opsnn's operators are Python "
                               "custom ops, which TorchScript does not take; use torch.compile or torch.jit.trace")
    if name == "hardtanh":
        with pytest.raises(TypeError, match=r"^torch.jit.script cannot compile opsnn.torch.hardtanh: "):
            torch.jit.script(_CallsOpsnn())
