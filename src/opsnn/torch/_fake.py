"""The ops' fake (meta) kernels: shape and dtype from the OpSpec, layout as the CPU kernel's.

A functional op's fake runs ``_bridge.infer_output`` (opsnn's phase-1 pipeline on metadata), so
shape, dtype and the refusals come from the OpSpec, after the same scalar checks as its CPU
kernel (``_checks``), and lays the result out as the CPU kernel does (``_layout``). An in-place
op's fake (``_checked_*``) makes its CPU kernel's checks and returns ``self``. Apart from the
CPU kernels because nothing here computes; ``_ops`` registers these, right after defining the ops.
"""

from __future__ import annotations

import torch

from . import _bridge as B
from ._checks import (
    SPECS,
    _as_torch_promotes,
    _backward_bounds,
    _backward_slope,
    _inplace_scalars,
    _torch_scalars,
)
from ._layout import _like_layout, _torch_layout


def _leaky_relu_fake(self, negative_slope=0.01):
    (negative_slope,) = _torch_scalars("leaky_relu", self.dtype, negative_slope=negative_slope)
    return _fake(B.infer_output(SPECS["leaky_relu"], self, negative_slope), _torch_layout, self)


def _leaky_relu_backward_fake(grad_output, self, negative_slope, self_is_result):
    grad_output, self = _as_torch_promotes(grad_output, self)
    negative_slope = _backward_slope(grad_output, self, negative_slope, self_is_result)
    return _fake(B.infer_output(SPECS["leaky_relu_backward"], grad_output, self, negative_slope, self_is_result),
                 _torch_layout, self, grad_output)


def _hardtanh_fake(self, min_val=-1, max_val=1):
    min_val, max_val = _torch_scalars("hardtanh", self.dtype, min_val=min_val, max_val=max_val)
    return _fake(B.infer_output(SPECS["hardtanh"], self, min_val, max_val), _like_layout, self)


def _hardtanh_backward_fake(grad_output, self, min_val, max_val):
    min_val, max_val = _backward_bounds(grad_output, self, min_val, max_val)
    return _fake(B.infer_output(SPECS["hardtanh_backward"], grad_output, self, min_val, max_val),
                 _torch_layout, grad_output, self)


def _checked_leaky_relu_(self, negative_slope=0.01):
    (negative_slope,) = _inplace_scalars("leaky_relu_", self, negative_slope=negative_slope)
    B.infer_output(SPECS["leaky_relu_"], self, negative_slope)
    return self


def _checked_hardtanh_(self, min_val=-1, max_val=1):
    min_val, max_val = _inplace_scalars("hardtanh_", self, min_val=min_val, max_val=max_val)
    B.infer_output(SPECS["hardtanh_"], self, min_val, max_val)
    return self


def _fake(inferred: torch.Tensor, layout, *tensors: torch.Tensor) -> torch.Tensor:
    """The fake result: the checked shape and dtype, in the layout the CPU kernel gives it
    (``layout``: ``_torch_layout`` or ``_like_layout``, given the same operands)."""
    laid_out = layout(inferred.dtype, *tensors)
    return inferred if laid_out is None else laid_out
