"""PyTorch integration: opsnn's LeakyReLU/Hardtanh kernels as torch operators, autograd and modules.

This is the only part of opsnn that imports torch (install the ``torch`` extra). Importing it
registers, with ``torch.library``::

    torch.ops.opsnn.leaky_relu / leaky_relu_ / leaky_relu_backward
    torch.ops.opsnn.hardtanh / hardtanh_ / hardtanh_backward

with ATen's schemas, fake (meta) kernels derived from the OpSpecs (so ``torch.compile`` and
meta tensors work), and autograd that runs opsnn's backward operators (double backward too).
Tensors cross to the kernels without copies (NumPy views; bfloat16 through an int16 view), with any
strides, in float16, bfloat16, float32 and float64 (and whatever else the operator's dtype list
admits); results get the strides torch's own ops would give them (docs/torch.md, decision 7).
CPU tensors only: opsnn computes on the host. The SoC profile in force (``opsnn.use_soc`` /
``OPSNN_SOC``) decides the dtype lists, as for every opsnn call.

Functions here follow ``torch.nn.functional``'s signatures::

    y = opsnn.torch.leaky_relu(x, negative_slope=0.01, inplace=False)
    y = opsnn.torch.hardtanh(x, min_val=-1.0, max_val=1.0, inplace=False)
    y = opsnn.torch.relu6(x, inplace=False)
    dx = opsnn.torch.leaky_relu_backward(dy, x, negative_slope, self_is_result=False)
    dx = opsnn.torch.hardtanh_backward(dy, x, min_val, max_val)

and take the scalars it takes: a number, a NumPy scalar or a 0-d tensor that does not require grad
(read with ``.item()``); the backward functions take numbers only, as ``torch.ops.aten``'s do.

Modules: ``opsnn.torch.nn.LeakyReLU``, ``Hardtanh``, ``ReLU6``; ``swap_activations(model)``
replaces torch's in an existing model.

Errors: a refusal by the operator (CANN's checks: dtype lists, shapes, the in-place
negative-slope rule ...) raises ``AclnnRuntimeError``, which is both a ``RuntimeError`` (like
torch's own operator errors) and an ``opsnn.AclnnError`` carrying ``.status`` (e.g. 161002) and
``.message``. Argument errors that ``torch.nn.functional`` raises before reaching an operator
(``hardtanh`` with min_val > max_val: ValueError) are raised the same way here.

Numerics differ from torch's CPU kernels only in the cases docs/torch.md lists (Decisions, item
5): NaN in ``self`` for hardtanh_backward passes the gradient (DECISION 8; torch's SIMD path
zeroes some); a NaN bound of hardtanh_backward passes no gradient (opsnn's strict ``min < self <
max``; torch's ``self <= min or self >= max`` passes it on the other bound's side); float64
leaky_relu uses float32(negative_slope) (DECISION 2); and the sign and payload bits of a NaN can
differ (opsnn keeps them where torch's conversions write a default NaN), its position never.
aclnnHardtanhBackward has no float64 (DECISION 11), so a float64 Hardtanh can run forward but
its backward raises 161002 (under torch.compile with autograd recording, already the forward
call: docs/torch.md, Decisions 4).
"""

from __future__ import annotations

import numpy as np

from .._core.extras import install_hint

try:
    import torch
except ImportError as exc:  # an explicitly requested optional part: fail loudly, with the fix
    raise ImportError("opsnn.torch needs PyTorch; install the torch extra (torch==2.13.0 CPU): "
                      f"`{install_hint('torch')}`") from exc

from torch.overrides import handle_torch_function  # noqa: E402 - after the guarded torch import

# importing these registers torch.ops.opsnn.*: _ops (which they import) defines the ops and their
# fake kernels, then _autograd and _inplace_autograd register the ops' autograd
from . import _autograd, _inplace_autograd  # noqa: E402
from ._autograd import no_forward_ad as _no_forward_ad  # noqa: E402
from ._bridge import AclnnRuntimeError, from_numpy, to_numpy  # noqa: E402


def _number(value, name: str, function: str):
    """``value`` as torch.nn.functional's argument parser reads a Scalar: a NumPy scalar or a 0-d
    tensor that does not require grad becomes the number it holds; torch refuses any other tensor
    (the torch.ops schemas would refuse a NumPy scalar too) and anything that is no number (None,
    a str, a Fraction) with a TypeError, as torch.nn.functional does (the schema would raise a
    RuntimeError); a number, or a symbolic one under torch.compile, goes on to the schema."""
    if isinstance(value, torch.Tensor):
        if value.dim() != 0 or value.requires_grad:
            raise TypeError(f"opsnn.torch.{function}: {name} must be a number or a 0-d tensor that does not "
                            f"require grad, got a tensor of shape {list(value.shape)}"
                            + (" that requires grad" if value.requires_grad else ""))
        return value.item()
    if isinstance(value, (np.timedelta64, np.datetime64)):  # NumPy integers, not numbers, for torch
        raise TypeError(f"opsnn.torch.{function}: {name} must be a number, got {type(value).__name__}")
    if isinstance(value, np.integer):
        if not -2**63 <= int(value) < 2**63:
            raise TypeError(f"opsnn.torch.{function}: {name} {value} does not fit int64, which torch refuses too")
        return int(value)
    # Python's own types, not .item(): a long double's item() stays a NumPy scalar
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.complexfloating):
        return complex(value)
    if isinstance(value, np.floating):
        return float(value)
    if not isinstance(value, (int, float, complex, torch.SymInt, torch.SymFloat, torch.SymBool)):
        raise TypeError(f"opsnn.torch.{function}: {name} must be a number, got {type(value).__name__}")
    return value


def _not_scriptable(name: str) -> TypeError:
    """torch.jit.script's refusal of ``name`` (an opsnn.torch function or module): opsnn's
    operators are Python custom ops, and the wrappers around them are no TorchScript (it failed
    on a private helper's keyword arguments for a module, and with "'tuple' object is not
    iterable" at ``_proxied`` for a function). torch.jit.script asks what it compiles, and a
    function it meets in a scripted forward, for ``__prepare_scriptable__`` first: the modules
    (nn._OnOpsnn) and the functions (below) raise this there."""
    return TypeError(f"torch.jit.script cannot compile {name}: opsnn's operators are Python custom ops, which "
                     "TorchScript does not take; use torch.compile or torch.jit.trace")


def _proxied(arguments: tuple) -> bool:
    """Whether an argument stands for a tensor without being one but takes torch functions
    (``__torch_function__``): an FX Proxy, which ``torch.fx.symbolic_trace`` passes, so the call
    is recorded as torch.nn.functional's are (a breaker: a swapped model did not trace). Tensors,
    subclasses included, go on to the dispatcher, where modes and subclasses see the op."""
    return any(not isinstance(a, torch.Tensor) and hasattr(type(a), "__torch_function__") for a in arguments)


def _tensors(function: str, **named) -> None:
    """Refuse an argument that is no tensor with the TypeError torch.nn.functional raises (the
    schema's own refusal names no argument, and None met 'no fallback function is registered')."""
    for position, (name, value) in enumerate(named.items(), 1):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"opsnn.torch.{function}(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")


def _inplace(name: str, input: torch.Tensor, *scalars) -> torch.Tensor:
    """The in-place op ``name`` + "_" on ``input``. Inside torch.compile: the functional op on a
    clone (autograd keeps the input it saves) and a ``copy_`` into ``input``, much as torch's
    functionalization rewrites an ATen in-place op.
    Inductor (torch 2.13) miscompiles a torch.library op tagged in place: it hands the updated
    buffer to a later op as its output while the result is still to be read (a swapped model
    with ``LeakyReLU(inplace=True)`` between Linears was off by 0.17; a toy in-place op
    defined with ``torch.library.custom_op`` alone is off the same way). ``torch.ops.opsnn.*_``
    called directly inside a compiled function still meets that bug (docs/torch.md)."""
    if torch.compiler.is_compiling():
        return input.copy_(_autograd.call(name, input.clone(), *scalars))
    return _inplace_autograd.call_inplace(name + "_", input, *scalars)


def leaky_relu(input: torch.Tensor, negative_slope: float = 0.01, inplace: bool = False) -> torch.Tensor:
    """``torch.nn.functional.leaky_relu`` on opsnn's aclnnLeakyRelu (``inplace=True``: as
    ``leaky_relu_``): ``input if input > 0 else input * float32(negative_slope)``.

    Args:
        input: CPU tensor, float16/bfloat16/float32/float64 (bfloat16 only on the SoCs of the
            910B list), 0-8 dims, any strides.
        negative_slope: a number, NumPy scalar or 0-d tensor that does not require grad (read
            with ``.item()``, as torch.nn.functional reads it); used as float32, for float64
            input too (DECISION 2).

    Returns:
        A new tensor of ``input``'s dtype and shape, strided as torch's own result
        (docs/torch.md, Decisions 7); with ``inplace``, ``input`` itself.

    Raises:
        TypeError: ``input`` is no tensor, or the slope no number (None, a str, a tensor of
            other shape or one that requires grad), as torch.nn.functional.
        NotImplementedError: forward-mode AD (dual tensors).
        AclnnRuntimeError: a RuntimeError and an ``opsnn.AclnnError``: 161002 (a dtype the SoC
            lacks, more than 8 dims, a slope outside float32's range or with an imaginary part,
            which torch refuses too), 561003 (Ascend310P / Ascend310B, which lack the operator).
    Source: aclnnLeakyRelu (ops-nn); numbers as torch's CPU kernel (docs/torch.md)."""
    # (the checks a tensor of type Tensor and a float pass, behind a type test: ~1 us less a call)
    if type(input) is not torch.Tensor:
        if _proxied((input,)):
            return handle_torch_function(leaky_relu, (input,), input, negative_slope, inplace)
        _tensors("leaky_relu", input=input)
    _no_forward_ad("leaky_relu", input)
    if type(negative_slope) is not float:
        negative_slope = _number(negative_slope, "negative_slope", "leaky_relu")
    if inplace:
        return _inplace("leaky_relu", input, negative_slope)
    return _autograd.call("leaky_relu", input, negative_slope)


def leaky_relu_(input: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    """In-place ``leaky_relu`` (aclnnInplaceLeakyRelu): writes the result into ``input`` and
    returns it, its version counter bumped after the write, as ATen's in-place ops do.

    Dtypes, dims and the slope as ``leaky_relu``. Autograd keeps only the result, so the backward
    of a negative slope raises AclnnRuntimeError 161002 (as torch raises there). Refused before
    anything is written: an expanded or self-overlapping ``input`` (161002, as torch refuses
    it), an inference tensor outside ``torch.inference_mode`` (161002), and with torch's own
    RuntimeError what autograd refuses in place (a leaf that requires grad, a view of one, an
    output of ``unbind``, a view made in no-grad mode); other errors as ``leaky_relu``'s."""
    if _proxied((input,)):
        return handle_torch_function(leaky_relu_, (input,), input, negative_slope)
    _tensors("leaky_relu_", input=input)
    _no_forward_ad("leaky_relu_", input)
    return _inplace("leaky_relu", input, _number(negative_slope, "negative_slope", "leaky_relu_"))


def hardtanh(input: torch.Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> torch.Tensor:
    """``torch.nn.functional.hardtanh`` on opsnn's aclnnHardtanh (``inplace=True``: as
    ``hardtanh_``): ``min(max(input, min_val), max_val)`` in ``input``'s dtype.

    Args:
        input: CPU tensor, float16/bfloat16/float32/float64 or int8/int16/int32/int64/uint8
            (bfloat16 only on the SoCs of the 910B list), 0-8 dims, any strides.
        min_val, max_val: numbers, NumPy scalars or 0-d tensors that do not require grad,
            converted to ``input``'s dtype as torch converts them (a float bound of an integer
            ``input`` truncated toward zero).

    Returns:
        A new tensor of ``input``'s dtype and shape (allocated as ``torch.empty_like(input)``);
        with ``inplace``, ``input`` itself. NaN propagates; a NaN bound (floating ``input``)
        makes every element NaN.

    Raises:
        ValueError: min_val > max_val, as torch.nn.functional, before any other check.
        TypeError: ``input`` is no tensor, or a bound no number, as torch.nn.functional.
        NotImplementedError: forward-mode AD (dual tensors).
        AclnnRuntimeError: 161002 (a dtype the SoC lacks, more than 8 dims, a bool bound, a
            bound outside ``input``'s dtype: float16 with 1e5, uint8 with -1, an integer
            ``input`` with NaN or inf, which torch refuses too), 561003 (Ascend310B).
    Source: aclnnHardtanh (ops-math ClipByValueV2); numbers as torch.clamp."""
    # first, as torch.nn.functional.hardtanh: a bound may be a Proxy too
    if type(input) is not torch.Tensor and _proxied((input,)):
        return handle_torch_function(hardtanh, (input,), input, min_val, max_val, inplace)
    if min_val > max_val:  # before reading tensors: torch compares in the tensor's dtype
        raise ValueError("min_val cannot be greater than max_val")
    if type(input) is not torch.Tensor:
        _tensors("hardtanh", input=input)
    _no_forward_ad("hardtanh", input)
    if type(min_val) is not float or type(max_val) is not float:
        min_val, max_val = _number(min_val, "min_val", "hardtanh"), _number(max_val, "max_val", "hardtanh")
    if inplace:
        return _inplace("hardtanh", input, min_val, max_val)
    return _autograd.call("hardtanh", input, min_val, max_val)


def hardtanh_(input: torch.Tensor, min_val: float = -1.0, max_val: float = 1.0) -> torch.Tensor:
    """In-place ``hardtanh`` (aclnnInplaceHardtanh): writes the result into ``input`` and
    returns it, its version counter bumped after the write.

    Dtypes and bounds as ``hardtanh``, but min_val > max_val is aclnnHardtanh's refusal,
    AclnnRuntimeError 161002 (torch.nn.functional's ``hardtanh_`` does not check it). Refused
    before anything is written, as ``leaky_relu_``: an expanded or self-overlapping ``input``
    and an inference tensor outside ``torch.inference_mode`` (161002), what autograd refuses in
    place (torch's RuntimeError); other errors as ``hardtanh``'s."""
    if _proxied((input,)):
        return handle_torch_function(hardtanh_, (input,), input, min_val, max_val)
    _tensors("hardtanh_", input=input)
    _no_forward_ad("hardtanh_", input)
    return _inplace("hardtanh", input, _number(min_val, "min_val", "hardtanh_"),
                    _number(max_val, "max_val", "hardtanh_"))


def relu6(input: torch.Tensor, inplace: bool = False) -> torch.Tensor:
    """``torch.nn.functional.relu6``: ``hardtanh(input, 0.0, 6.0, inplace)``, with its dtypes,
    result and errors (an integer ``input`` takes the bounds 0 and 6, uint8 included)."""
    if _proxied((input,)):
        return handle_torch_function(relu6, (input,), input, inplace)
    _tensors("relu6", input=input)
    _no_forward_ad("relu6", input)  # (named as called, not as the hardtanh it runs)
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu_backward(grad_output: torch.Tensor, self: torch.Tensor, negative_slope: float,
                        self_is_result: bool = False) -> torch.Tensor:
    """aclnnLeakyReluBackward as ``torch.ops.aten.leaky_relu_backward``: ``grad_output if self
    > 0 else grad_output * float32(negative_slope)``.

    Args:
        grad_output, self: CPU tensors, float16/bfloat16/float32/float64 (bfloat16 only on the
            SoCs of the 910B list), 0-8 dims, broadcastable; ``self`` is the forward's input,
            or its result when ``self_is_result``.
        negative_slope: a number (a Python int, float or bool), as ``torch.ops.aten``'s
            schema takes it; used as float32 (DECISION 2).
        self_is_result: True for the backward of an in-place forward.

    Returns:
        A new tensor of the broadcast shape and torch's result dtype (a 0-d operand defers to
        a dimensioned one, as ``torch.result_type``).

    Raises:
        RuntimeError: torch's schema refusal of a slope that is no number (a NumPy float32, a
            tensor).
        NotImplementedError: forward-mode AD (dual tensors).
        AclnnRuntimeError: 161002 (a dtype the SoC lacks, integer ``grad_output`` included;
            shapes that do not broadcast; more than 8 dims; ``self_is_result`` with a negative
            or NaN slope), 561003 (Ascend310B).
    Source: aclnnLeakyReluBackward (ops-nn); numbers as torch's CPU kernel."""
    if type(grad_output) is not torch.Tensor or type(self) is not torch.Tensor:
        if _proxied((grad_output, self)):
            return handle_torch_function(leaky_relu_backward, (grad_output, self), grad_output, self,
                                         negative_slope, self_is_result)
        _tensors("leaky_relu_backward", grad_output=grad_output, self=self)
    _no_forward_ad("leaky_relu_backward", grad_output, self)
    return _autograd.call("leaky_relu_backward", grad_output, self, negative_slope, self_is_result)


def hardtanh_backward(grad_output: torch.Tensor, self: torch.Tensor, min_val: float,
                      max_val: float) -> torch.Tensor:
    """aclnnHardtanhBackward as ``torch.ops.aten.hardtanh_backward``: ``grad_output`` where
    ``min_val < self < max_val`` (bounds as float32) or ``self`` is NaN (DECISION 8), else +0.0.

    Args:
        grad_output, self: CPU tensors of one dtype, float16/bfloat16/float32 (no float64 on
            any SoC: DECISION 11; bfloat16 only on the SoCs of the 910B list), and one shape
            (no broadcasting, where aten broadcasts), 0-8 dims.
        min_val, max_val: numbers, as ``torch.ops.aten``'s schema takes them.

    Returns:
        A new tensor of ``self``'s dtype and shape.

    Raises:
        RuntimeError: torch's schema refusal of a bound that is no number.
        NotImplementedError: forward-mode AD (dual tensors).
        AclnnRuntimeError: 161002 (float64, an integer dtype or another the SoC lacks; dtypes
            or shapes that differ; more than 8 dims). Every SoC has the operator.
    Source: aclnnHardtanhBackward (ops-nn arch35 kernel); torch.ops.aten.hardtanh_backward."""
    if type(grad_output) is not torch.Tensor or type(self) is not torch.Tensor:
        if _proxied((grad_output, self)):
            return handle_torch_function(hardtanh_backward, (grad_output, self), grad_output, self, min_val,
                                         max_val)
        _tensors("hardtanh_backward", grad_output=grad_output, self=self)
    _no_forward_ad("hardtanh_backward", grad_output, self)
    return _autograd.call("hardtanh_backward", grad_output, self, min_val, max_val)


def _refuse_script(function) -> None:
    """Give ``function`` the ``__prepare_scriptable__`` torch.jit.script calls: ``_not_scriptable``."""
    def prepare_scriptable():
        raise _not_scriptable(f"opsnn.torch.{function.__name__}")

    function.__prepare_scriptable__ = prepare_scriptable


for _function in (leaky_relu, leaky_relu_, hardtanh, hardtanh_, relu6, leaky_relu_backward, hardtanh_backward):
    _refuse_script(_function)
del _function

from . import nn  # noqa: E402 - the modules use the functions above
from .nn import swap_activations  # noqa: E402

__all__ = ["AclnnRuntimeError", "from_numpy", "hardtanh", "hardtanh_", "hardtanh_backward",
           "leaky_relu", "leaky_relu_", "leaky_relu_backward", "nn", "relu6", "swap_activations",
           "to_numpy"]
