"""The CPU kernels that torch.library registers for the ops (``_ops``), one per operator.

Each kernel takes its scalars as torch takes them (``_checks``) and its result's layout
(``_layout``) from the memo (``_memo``) where the same metadata met it before, crosses the
tensors to NumPy as zero-copy views (``_bridge``), runs the Pythonic opsnn function (both aclnn
phases: CANN checks, PromoteType, the l2 chain, the kernel) and crosses the result back without
a copy; an in-place kernel writes through the view. Apart because this is all that runs below
the dispatcher; the direct calls (``_autograd.call``, ``_inplace_autograd.call_inplace``) run
these too.
"""

from __future__ import annotations

import numpy as np
import torch

from .. import functional as F
from . import _bridge as B
from ._checks import (
    _as_torch_promotes,
    _backward_bounds,
    _backward_slope,
    _inplace_scalars,
    _torch_cast,
    _torch_scalars,
)
from ._layout import _laid_out, _like_strides_of, _torch_strides
from ._memo import _known


def _opsnn(name: str):
    """The Pythonic opsnn function (looked up at call time; the forwards may arrive later)."""
    import opsnn

    return getattr(opsnn, name)


def _target(out: torch.Tensor | None):
    """The ``out`` an opsnn Pythonic call gets: a NumPy view of ``out``, the result laid out as
    torch lays it out (``_laid_out``), or None where that is C-contiguous (opsnn allocates one).
    Made before the inputs' views, as a refusal of it would come first."""
    return None if out is None else B.operand(out, "out")


def _result(result: np.ndarray, out: torch.Tensor | None) -> torch.Tensor:
    """The Pythonic call's result as a torch tensor: ``out`` where it was given one, else the
    array opsnn allocated, without a copy."""
    if out is not None:
        return out
    if not result.size:  # NumPy's strides of an empty array are not torch's
        result = B.from_numpy(result)
        return torch.empty(result.shape, dtype=result.dtype)
    return B.from_numpy(result)


def _plan_leaky_relu(self, negative_slope):
    return (tuple(_torch_scalars("leaky_relu", self.dtype, negative_slope=negative_slope)),
            _torch_strides(self.dtype, self))


def _leaky_relu(self, negative_slope=0.01):
    (negative_slope,), layout = _known("leaky_relu", _plan_leaky_relu, (self,), (negative_slope,))
    out = _laid_out(layout, self)
    target = _target(out)
    with B.raising():
        result = _opsnn("leaky_relu")(B.operand(self, "self"), negative_slope, out=target)
    return _result(result, out)


def _leaky_relu_(self, negative_slope=0.01):
    (negative_slope,) = _inplace_scalars("leaky_relu_", self, negative_slope=negative_slope)
    with B.raising():
        _opsnn("leaky_relu_")(B.operand(self, "self"), negative_slope)
    return self


def _plan_leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    """The slope and layout of operands ``_as_torch_promotes`` has cast."""
    return ((_backward_slope(grad_output, self, negative_slope, self_is_result),),
            _torch_strides(torch.promote_types(grad_output.dtype, self.dtype), self, grad_output))


def _plan_uncast_leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    """The memo's plan: None (not kept; the kernel casts, then plans) where torch casts the
    operands, and where one is 0-d: ``torch.result_type`` tells a 0-d tensor that wraps a number
    (made in C++ from a Python scalar) from another, and the key does not."""
    if not grad_output.dim() or not self.dim() or _torch_cast(grad_output, self) is not None:
        return None
    return _plan_leaky_relu_backward(grad_output, self, negative_slope, self_is_result)


def _leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    known = _known("leaky_relu_backward", _plan_uncast_leaky_relu_backward, (grad_output, self),
                   (negative_slope, self_is_result))
    if known is None:
        grad_output, self = _as_torch_promotes(grad_output, self)
        known = _plan_leaky_relu_backward(grad_output, self, negative_slope, self_is_result)
    (negative_slope,), layout = known
    out = _laid_out(layout, self)
    target = _target(out)
    with B.raising():
        result = F.leaky_relu_backward(B.operand(grad_output, "grad_output"), B.operand(self, "self"),
                                       negative_slope, self_is_result, out=target)
    return _result(result, out)


def _plan_hardtanh(self, min_val, max_val):
    return (tuple(_torch_scalars("hardtanh", self.dtype, min_val=min_val, max_val=max_val)),
            _like_strides_of(self.dtype, self))


def _hardtanh(self, min_val=-1, max_val=1):
    (min_val, max_val), layout = _known("hardtanh", _plan_hardtanh, (self,), (min_val, max_val))
    out = _laid_out(layout, self)
    target = _target(out)
    with B.raising():
        result = _opsnn("hardtanh")(B.operand(self, "self"), min_val, max_val, out=target)
    return _result(result, out)


def _hardtanh_(self, min_val=-1, max_val=1):
    min_val, max_val = _inplace_scalars("hardtanh_", self, min_val=min_val, max_val=max_val)
    with B.raising():
        _opsnn("hardtanh_")(B.operand(self, "self"), min_val, max_val)
    return self


def _plan_hardtanh_backward(grad_output, self, min_val, max_val):
    return (tuple(_backward_bounds(grad_output, self, min_val, max_val)),
            _torch_strides(self.dtype, grad_output, self))


def _hardtanh_backward(grad_output, self, min_val, max_val):
    (min_val, max_val), layout = _known("hardtanh_backward", _plan_hardtanh_backward, (grad_output, self),
                                        (min_val, max_val))
    out = _laid_out(layout, grad_output)
    target = _target(out)
    with B.raising():
        result = F.hardtanh_backward(B.operand(grad_output, "grad_output"), B.operand(self, "self"), min_val,
                                     max_val, out=target)
    return _result(result, out)
