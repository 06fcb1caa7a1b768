"""``torch.nn`` activation modules that run opsnn's kernels, and ``swap_activations``.

Each module subclasses its torch.nn counterpart, so constructor arguments, defaults, checks
(``Hardtanh`` asserts max_val > min_val), ``__constants__``, ``extra_repr`` and ``isinstance``
tests are torch's; ``forward`` differs (``torch.ops.opsnn.*``, autograd included), and so does
the name a printed model shows, ``opsnn.LeakyReLU(negative_slope=0.1)``, so that ``print(model)``
tells which activations run on opsnn (after ``swap_activations`` too).

``torch.nn.ReLU`` is deliberately **not** swapped: it is ``clamp_min(x, 0)`` and its backward is
``threshold_backward`` on the result, while ``LeakyReLU(0)`` multiplies by 0 (``-2 -> -0.0``
instead of ``+0.0``, ``-inf -> NaN`` instead of ``0``) and ``Hardtanh(0, inf)`` differs at
``inf`` and NaN, so neither is bit-identical to it.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from . import _not_scriptable, hardtanh, leaky_relu, relu6


class _OnOpsnn:
    """The printed name: torch's with an ``opsnn.`` prefix (``Module.__repr__`` asks ``_get_name``);
    a clear refusal from ``torch.jit.script``, which asks each module to prepare itself (it
    failed on a private helper's keyword arguments)."""

    def _get_name(self) -> str:
        return "opsnn." + type(self).__name__

    def __prepare_scriptable__(self):
        # the importable name (the printed one, opsnn.LeakyReLU, is no module path)
        raise _not_scriptable(f"{__name__}.{type(self).__name__}")


class LeakyReLU(_OnOpsnn, torch.nn.LeakyReLU):
    """``torch.nn.LeakyReLU(negative_slope=0.01, inplace=False)`` on aclnnLeakyRelu /
    aclnnLeakyReluBackward."""

    def forward(self, input: Tensor) -> Tensor:
        return leaky_relu(input, self.negative_slope, self.inplace)


class Hardtanh(_OnOpsnn, torch.nn.Hardtanh):
    """``torch.nn.Hardtanh(min_val=-1.0, max_val=1.0, inplace=False)`` on aclnnHardtanh /
    aclnnHardtanhBackward."""

    def forward(self, input: Tensor) -> Tensor:
        return hardtanh(input, self.min_val, self.max_val, self.inplace)


class ReLU6(_OnOpsnn, torch.nn.ReLU6):
    """``torch.nn.ReLU6(inplace=False)``: Hardtanh(0, 6) on opsnn's kernels. As torch's, which
    runs ``Hardtanh.forward``, it clamps to its ``min_val`` / ``max_val`` attributes: code that
    adjusts every ``torch.nn.Hardtanh`` (``isinstance`` holds for ReLU6) changes them."""

    def forward(self, input: Tensor) -> Tensor:
        if _relu6_bounds(self.min_val, self.max_val):  # (relu6 names itself in refusals and fx graphs)
            return relu6(input, self.inplace)
        return hardtanh(input, self.min_val, self.max_val, self.inplace)


def _relu6_bounds(min_val, max_val) -> bool:
    """Whether the bounds are ReLU6's own 0.0 and 6.0 (a -0.0 lower bound is not: the clamp
    then gives -0.0)."""
    return (type(min_val) is float and type(max_val) is float and (min_val, max_val) == (0.0, 6.0)
            and math.copysign(1.0, min_val) > 0)


# torch's activation -> opsnn's subclass of it (exact types: a user subclass may have its own forward)
_OPSNN_CLASS = {torch.nn.LeakyReLU: LeakyReLU, torch.nn.Hardtanh: Hardtanh, torch.nn.ReLU6: ReLU6}


def swap_activations(model: torch.nn.Module) -> torch.nn.Module:
    """Make every ``torch.nn.LeakyReLU``, ``Hardtanh`` and ``ReLU6`` inside ``model`` (any depth,
    ``model`` itself included, exact types only) run on opsnn's kernels, in place; returns
    ``model``.

    Each such module's class becomes opsnn's subclass of it: the module stays the same object
    (opsnn's classes add no state), so every place that holds it -- one activation used twice
    or shared by two parents, a user's own reference -- and its hooks, train/eval flag and
    attributes all carry over. ``torch.nn.ReLU`` is left alone (see the module docstring: no
    opsnn op is bit-identical to it). Raises TypeError for a model that is no Module, and for one
    that is or holds a TorchScript module (``torch.jit.script`` / ``trace``): that runs its
    compiled graph, whatever its submodules' classes; swap before scripting or tracing.

    What changes for the model (the aclnn operators' contracts, docs/torch.md): inputs of more
    than 8 dims are refused (AclnnRuntimeError 161002, where torch takes any rank); a float64
    Hardtanh / ReLU6 runs forward but raises 161002 in backward (aclnnHardtanhBackward has no
    DOUBLE, DECISION 11); under ``torch.compile`` with autograd recording, where AOTAutograd
    traces the backward as the graph compiles, the forward call already raises torch's
    ``BackendCompilerFailed``, its ``inner_exception`` that AclnnRuntimeError (compile under
    ``torch.no_grad()`` / ``torch.inference_mode()``, or train in float32); a float64 LeakyReLU
    uses its slope rounded to float32 (DECISION 2), so its outputs and gradients differ from torch's in the last bits.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"swap_activations: model must be a torch.nn.Module, got {type(model).__name__}")
    scripted = next((name for name, m in model.named_modules() if isinstance(m, torch.jit.ScriptModule)), None)
    if scripted is not None:  # its activations would stay torch's, silently (a breaker)
        where = "model" if scripted == "" else f"submodule {scripted!r}"
        raise TypeError(f"swap_activations: {where} is a TorchScript module (torch.jit.script / trace), which runs "
                        "its compiled graph, not its submodules' forward; swap the activations before scripting "
                        "or tracing")
    for module in model.modules():
        opsnn_class = _OPSNN_CLASS.get(type(module))
        if opsnn_class is not None:
            module.__class__ = opsnn_class
    return model


__all__ = ["Hardtanh", "LeakyReLU", "ReLU6", "swap_activations"]
