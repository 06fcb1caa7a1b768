"""``torch.nn`` activation modules that run opsnn's kernels, and ``swap_activations``.

Each module subclasses its torch.nn counterpart, so constructor arguments, defaults, checks
(``Hardtanh`` asserts max_val > min_val), ``__constants__``, ``extra_repr`` and ``isinstance``
tests are torch's; only ``forward`` differs (``torch.ops.opsnn.*``, autograd included).

``torch.nn.ReLU`` is deliberately **not** swapped: it is ``clamp_min(x, 0)`` and its backward is
``threshold_backward`` on the result, while ``LeakyReLU(0)`` multiplies by 0 (``-2 -> -0.0``
instead of ``+0.0``, ``-inf -> NaN`` instead of ``0``) and ``Hardtanh(0, inf)`` differs at
``inf`` and NaN, so neither is bit-identical to it.
"""

from __future__ import annotations

import torch
from torch import Tensor

from . import hardtanh, leaky_relu


class LeakyReLU(torch.nn.LeakyReLU):
    """``torch.nn.LeakyReLU(negative_slope=0.01, inplace=False)`` on aclnnLeakyRelu /
    aclnnLeakyReluBackward."""

    def forward(self, input: Tensor) -> Tensor:
        return leaky_relu(input, self.negative_slope, self.inplace)


class Hardtanh(torch.nn.Hardtanh):
    """``torch.nn.Hardtanh(min_val=-1.0, max_val=1.0, inplace=False)`` on aclnnHardtanh /
    aclnnHardtanhBackward."""

    def forward(self, input: Tensor) -> Tensor:
        return hardtanh(input, self.min_val, self.max_val, self.inplace)


class ReLU6(torch.nn.ReLU6):
    """``torch.nn.ReLU6(inplace=False)``: Hardtanh(0, 6) on opsnn's kernels."""

    def forward(self, input: Tensor) -> Tensor:
        return hardtanh(input, self.min_val, self.max_val, self.inplace)


def _replacement(module: torch.nn.Module) -> torch.nn.Module | None:
    kind = type(module)  # exact types: subclasses (ours included) may have their own forward
    if kind is torch.nn.LeakyReLU:
        new: torch.nn.Module = LeakyReLU(module.negative_slope, module.inplace)
    elif kind is torch.nn.ReLU6:
        new = ReLU6(module.inplace)
    elif kind is torch.nn.Hardtanh:
        new = Hardtanh(module.min_val, module.max_val, module.inplace)
    else:
        return None
    new.train(module.training)
    return new


def swap_activations(model: torch.nn.Module) -> torch.nn.Module:
    """Replace every ``torch.nn.LeakyReLU``, ``Hardtanh`` and ``ReLU6`` inside ``model`` (any
    depth, exact types only) by the opsnn module with the same arguments, in place.

    Returns ``model``; when ``model`` itself is one of those activations, returns its
    replacement (a module cannot replace itself). ``torch.nn.ReLU`` is left alone (see the module
    docstring: no opsnn op is bit-identical to it).
    """
    root = _replacement(model)
    if root is not None:
        return root
    for parent in model.modules():
        for name, child in list(parent.named_children()):
            new = _replacement(child)
            if new is not None:
                setattr(parent, name, new)
    return model


__all__ = ["Hardtanh", "LeakyReLU", "ReLU6", "swap_activations"]
