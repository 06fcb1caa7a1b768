"""The functional ops' autograd, and ``call``, the functional API's way to run an op.

Autograd as ``tools/autograd/derivatives.yaml`` wires ATen's ops: leaky_relu ->
leaky_relu_backward(grad, self, slope, False), hardtanh -> hardtanh_backward(grad, self, min,
max); both backward ops are linear in grad_output, so their own backward applies the same op to
the incoming gradient and gives zeros for ``self``. The formulas are registered with the ops
(and their float twins) and run by ``call``'s recorded direct calls (``_FUNCTIONS``). ``call``
lives here, not with ``direct``, because the formulas call it and it runs their Functions.
"""

from __future__ import annotations

import torch
import torch.autograd.forward_ad as _forward_ad

from ._direct import _grad_mode, direct
from ._ops import _CPU_KERNELS, _FLOAT_OPS, _OPS, _REGISTERED


def no_forward_ad(function: str, *tensors: torch.Tensor) -> None:
    """Refuse forward-mode AD (torch.autograd.forward_ad, torch.func.jvp / jacfwd, a tangent on
    the gradient of a backward pass): torch 2.13's custom ops have no forward-mode formula and
    would drop the tangent without a word. One int compare when no dual level is active."""
    if _forward_ad._current_level >= 0 and any(_forward_ad.unpack_dual(t).tangent is not None for t in tensors):
        raise NotImplementedError(
            f"opsnn.torch.{function}: forward-mode AD (torch.func.jvp / jacfwd, torch.autograd.forward_ad) is not "
            "supported: torch's custom ops have no forward-mode derivative and would drop the tangent; use "
            "reverse mode (backward(), torch.autograd.grad) or torch.nn.functional's op for this part")


def _save_self(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.scalars = inputs[1:]


def _leaky_relu_grad(ctx, grad):
    no_forward_ad("leaky_relu (backward)", grad)
    (self,) = ctx.saved_tensors
    (slope,) = ctx.scalars
    return call("leaky_relu_backward", grad, self, slope, False), None


def _hardtanh_grad(ctx, grad):
    no_forward_ad("hardtanh (backward)", grad)
    (self,) = ctx.saved_tensors
    return call("hardtanh_backward", grad, self, *ctx.scalars), None, None


def _save_backward_self(ctx, inputs, output):
    ctx.save_for_backward(inputs[1])
    ctx.scalars = inputs[2:]


def _leaky_relu_backward_grad(ctx, grad):
    # linear in grad_output; self_is_result is False here, as in derivatives.yaml. The zero
    # gradient of self is zeros_like(grad), as there: its strides are grad's (the engine sums a
    # broadcast one down to self's shape), so second derivatives keep torch's layout
    no_forward_ad("leaky_relu_backward (backward)", grad)
    (self,) = ctx.saved_tensors
    slope = ctx.scalars[0]
    grad_grad = call("leaky_relu_backward", grad, self, slope, False) if ctx.needs_input_grad[0] else None
    grad_self = torch.zeros_like(grad) if ctx.needs_input_grad[1] else None
    return grad_grad, grad_self, None, None


def _hardtanh_backward_grad(ctx, grad):
    no_forward_ad("hardtanh_backward (backward)", grad)
    (self,) = ctx.saved_tensors
    grad_grad = call("hardtanh_backward", grad, self, *ctx.scalars) if ctx.needs_input_grad[0] else None
    grad_self = torch.zeros_like(grad) if ctx.needs_input_grad[1] else None
    return grad_grad, grad_self, None, None


# (setup_context, backward) per functional op: registered with the op, and run by its direct
# calls' autograd.Function (``_function``)
_AUTOGRAD = {"leaky_relu": (_save_self, _leaky_relu_grad), "hardtanh": (_save_self, _hardtanh_grad),
             "leaky_relu_backward": (_save_backward_self, _leaky_relu_backward_grad),
             "hardtanh_backward": (_save_backward_self, _hardtanh_backward_grad)}
for _name, (_setup, _backward) in _AUTOGRAD.items():
    _OPS[_name].register_autograd(_backward, setup_context=_setup)
    _FLOAT_OPS[_name].register_autograd(_backward, setup_context=_setup)


def _function(name: str, setup_context, backward) -> type:
    """An autograd.Function running op ``name``'s CPU kernel, with the backward and
    setup_context registered for the op (``call``'s recorded direct calls). Its forward takes
    ``ctx`` and runs ``setup_context`` itself: a Function that defines ``setup_context`` binds
    its arguments with ``inspect.signature`` on every apply (~15 us)."""
    def forward(ctx, *args):
        output = _CPU_KERNELS[name](*args)
        setup_context(ctx, args, output)
        return output

    title = "".join(part.title() for part in name.split("_"))
    return type(f"_{title}", (torch.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)})


_FUNCTIONS = {name: _function(name, setup, backward) for name, (setup, backward) in _AUTOGRAD.items()}
# Their ``apply`` as ``Function.apply`` reaches it for a direct call: the C one. The Python layer
# before it binds arguments for a ``setup_context`` (these define none), hands a functorch
# transform's call to functorch (``direct`` sends those through the dispatcher) and unwraps dead
# functorch wrappers (no plain tensor is one); ~1 us a recorded call.
_RECORDED = {name: torch._C._FunctionBase.__dict__["apply"].__get__(None, function)
             for name, function in _FUNCTIONS.items()}


# ---- calls: the functional API's way in ----------------------------------------------------
# each op's arguments in schema order: T a Tensor, N a Scalar, B a bool
_SIGNATURES = {"leaky_relu": "TN", "hardtanh": "TNN", "leaky_relu_backward": "TTNB", "hardtanh_backward": "TTNN"}
# per op, the positions of its tensors, scalars and flags among the arguments
_POSITIONS = {name: tuple(tuple(i for i, k in enumerate(kinds) if k == kind) for kind in "TNB")
              for name, kinds in _SIGNATURES.items()}
# the same as slices (each signature lists its tensors, then its scalars, then its flags): where the
# tensors end and where the scalars end
_SPLITS = {name: (kinds.count("T"), kinds.count("T") + kinds.count("N")) for name, kinds in _SIGNATURES.items()}


def call(name: str, *args) -> torch.Tensor:
    """``torch.ops.opsnn.<name>(*args)``. Where ``direct`` allows (for the tensor, scalar and bool
    arguments, ``_SIGNATURES``), the CPU kernel runs itself, and where autograd must record the
    call, inside an autograd.Function with the op's own backward formula and saved tensors
    (``_FUNCTIONS``): the same result and gradients as through the op."""
    tensors_end, numbers_end = _SPLITS[name]
    tensors, numbers = args[:tensors_end], args[tensors_end:numbers_end]
    own = getattr(_OPS[name], "_backend_fns", {}).get("cpu") is _REGISTERED[name]  # no kernel registered over it
    if own and direct(tensors, numbers, args[numbers_end:]):
        if _grad_mode():
            for t in tensors:
                if t.requires_grad:
                    return _RECORDED[name](*args)
        return _CPU_KERNELS[name](*args)
    floats = _as_floats(tensors, numbers) if own and torch.compiler.is_compiling() else None
    if floats is not None:  # (inductor and Scalar arguments: _FLOAT_OPS)
        args = list(args)
        for position, value in zip(_POSITIONS[name][1], floats):
            args[position] = value
        return _FLOAT_OPS[name](*args)
    return _OPS[name](*args)


def _as_floats(tensors: list, numbers: list) -> list | None:
    """The scalars as the float twin takes them, where one of them is a float (which torch.compile
    may make symbolic) and the twin computes what the Scalar op does: the others floats too, or
    ints a double holds exactly beside floating-point tensors, which take every bound and slope
    as a float anyway (an integer tensor reads an int bound otherwise: the Scalar op then)."""
    if not any(isinstance(n, (float, torch.SymFloat)) for n in numbers):
        return None
    floating = all(t.is_floating_point() for t in tensors)
    floats = []
    for n in numbers:
        if isinstance(n, (float, torch.SymFloat)):
            floats.append(n)
        elif type(n) is int and floating and -2**53 <= n <= 2**53:
            floats.append(float(n))
        else:
            return None
    return floats
