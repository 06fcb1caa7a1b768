"""The in-place ops' autograd (leaky_relu_, hardtanh_), and ``call_inplace``, which runs it.

leaky_relu_ -> leaky_relu_backward(grad, result, slope, True) (only the result is saved, so a
negative slope is refused when backward runs, as in torch); hardtanh_ -> hardtanh_backward(grad,
self, min, max) with the forward *input* (a clone saved first, made under autograd as torch's
generated in-place formula makes it, so gradients of every order reach the input). Apart from
the functional ops' autograd (``_autograd``) because torch.library registers no autograd for an
in-place op: these are an Autograd-key kernel of their own, with torch's in-place refusals and
version bumps, registered last.
"""

from __future__ import annotations

import torch

from .._core import torchplain as _plain
from ._autograd import call, no_forward_ad
from ._checks import _taken
from ._direct import _inference_mode, direct
from ._kernels import _hardtanh_, _leaky_relu_
from ._ops import NAMESPACE, hardtanh_, leaky_relu_

# torch.library's register_autograd takes functional ops only, so the in-place ops get an
# Autograd-key kernel of their own: an autograd.Function that runs the op below autograd and
# marks ``self`` dirty (its history is rebased onto the new node, as for ATen's in-place ops).
# (``_ops`` here is torch's namespace of the ops, as the dispatcher reaches them, not the module.)
_ops = torch.ops.opsnn


def _kernel_only(op, keyset, *args):
    """The op below autograd and ADInplaceOrView: the caller bumps the version counter once, as
    an ATen in-place op does (``mark_dirty`` in an autograd.Function, or ``_untracked_inplace``);
    ADInplaceOrView would bump it again, and before the kernel. With no ``keyset`` (a direct
    call, ``call_inplace``) the CPU kernel itself, under the same guard, so the tensor methods
    it calls see what they see when the dispatcher redispatches."""
    with torch._C._AutoDispatchBelowADInplaceOrView():
        if keyset is None:
            return _INPLACE_KERNELS[op](*args)
        return op.redispatch(keyset & torch._C._after_ADInplaceOrView_keyset, *args)


class _LeakyReluInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, self, negative_slope, keyset):
        _kernel_only(_ops.leaky_relu_.default, keyset, self, negative_slope)
        ctx.mark_dirty(self)
        ctx.save_for_backward(self)  # the result: the input is gone
        ctx.negative_slope = negative_slope
        return self

    @staticmethod
    def backward(ctx, grad):
        no_forward_ad("leaky_relu_ (backward)", grad)
        (result,) = ctx.saved_tensors
        return call("leaky_relu_backward", grad, result, ctx.negative_slope, True), None, None


class _HardtanhInplace(torch.autograd.Function):
    """``original``: a clone of ``self`` made before the op (``_hardtanh_autograd``), which
    hardtanh_backward needs and the op overwrites. Cloned outside this Function, under
    autograd, as torch's generated in-place formula clones it: the gradient it gives then has a
    graph back to the input (a second derivative, zeros; cloned inside ``forward``, where
    autograd is off, the gradient did not require grad)."""

    @staticmethod
    def forward(ctx, self, original, min_val, max_val, keyset):
        _kernel_only(_ops.hardtanh_.default, keyset, self, min_val, max_val)
        ctx.mark_dirty(self)
        ctx.save_for_backward(original)
        ctx.bounds = (min_val, max_val)
        return self

    @staticmethod
    def backward(ctx, grad):
        no_forward_ad("hardtanh_ (backward)", grad)
        (original,) = ctx.saved_tensors
        return call("hardtanh_backward", grad, original, *ctx.bounds), None, None, None, None


def _check_inplace(self: torch.Tensor) -> None:
    """torch's refusals of an in-place update of ``self`` (which requires grad, in grad mode),
    made before the kernel writes: an autograd.Function's own checks run after its forward, when
    ``self`` would already be overwritten. Where torch refuses (a leaf, a view of a leaf, a view
    of a kind that may not be modified: one of several outputs, made in no-grad or inference
    mode), an ATen in-place op that would not change a bit, ``copy_`` from itself, raises
    torch's own error before writing."""
    if self.is_leaf or (self._is_view() and (
            self._base.is_leaf
            or torch._C._autograd._get_creation_meta(self) != torch._C._autograd.CreationMeta.DEFAULT)):
        self.copy_(self)


def _untracked_inplace(op, keyset, self, *args):
    """An in-place op where no graph is recorded: the kernel, then one version bump, in ATen's
    order, so a call the kernel refuses leaves the version as it was (ADInplaceOrView, which
    bumps first, is skipped). Inference tensors never get here: they carry no autograd keys."""
    _kernel_only(op, keyset, self, *args)
    torch.autograd.graph.increment_version(self)
    return self


def _leaky_relu_autograd(keyset, self, negative_slope=0.01):
    # before mark_dirty's version bump, as torch refuses
    (negative_slope,) = _taken("leaky_relu_", self.dtype, negative_slope=negative_slope)
    if torch.is_grad_enabled() and self.requires_grad:
        _check_inplace(self)
        return _LeakyReluInplace.apply(self, negative_slope, keyset)
    return _untracked_inplace(_ops.leaky_relu_.default, keyset, self, negative_slope)


def _hardtanh_autograd(keyset, self, min_val=-1, max_val=1):
    # before mark_dirty's version bump, as torch refuses
    min_val, max_val = _taken("hardtanh_", self.dtype, min_val=min_val, max_val=max_val)
    if torch.is_grad_enabled() and self.requires_grad:
        _check_inplace(self)
        return _HardtanhInplace.apply(self, self.clone(), min_val, max_val, keyset)
    return _untracked_inplace(_ops.hardtanh_.default, keyset, self, min_val, max_val)


# Kept alive for the life of the process: dropping a Library removes its registrations.
_AUTOGRAD_LIB = torch.library.Library(NAMESPACE, "FRAGMENT")
_AUTOGRAD_LIB.impl("leaky_relu_", _leaky_relu_autograd, "Autograd", with_keyset=True)
_AUTOGRAD_LIB.impl("hardtanh_", _hardtanh_autograd, "Autograd", with_keyset=True)


# ---- direct in-place calls: the Autograd kernel above, without the dispatcher ----------------
_INPLACE_KERNELS = {_ops.leaky_relu_.default: _leaky_relu_, _ops.hardtanh_.default: _hardtanh_}
_INPLACE_AUTOGRAD = {"leaky_relu_": _leaky_relu_autograd, "hardtanh_": _hardtanh_autograd}
_INPLACE_OPS = {"leaky_relu_": leaky_relu_, "hardtanh_": hardtanh_}
_INPLACE_REGISTERED = {name: getattr(op, "_backend_fns", {}).get("cpu") for name, op in _INPLACE_OPS.items()}


def call_inplace(name: str, self: torch.Tensor, *numbers) -> torch.Tensor:
    """``torch.ops.opsnn.<name>(self, *numbers)`` for the in-place ops (``leaky_relu_``,
    ``hardtanh_``). Where ``direct`` allows, for a tensor made outside inference mode and called
    outside it, with opsnn's own CPU kernel registered, the Autograd kernel the dispatcher would
    reach runs itself (``_leaky_relu_autograd`` / ``_hardtanh_autograd`` with no keyset): the
    same scalar conversion, refusals and their order, ``_check_inplace``, autograd.Function
    (grad_fn) or one version bump after the kernel, with the CPU kernel called where the
    dispatcher would redispatch to it (``_kernel_only``). Inference mode and inference tensors
    (no autograd keys: the dispatcher goes to ADInplaceOrView or the kernel, in its own order)
    stay on the dispatcher, as does everything ``direct`` refuses."""
    if (not _inference_mode() and direct((self,), numbers)
            and torch._C._dispatch_keys(self).raw_repr() in _plain.NORMAL_KEYS  # (made outside inference mode)
            and getattr(_INPLACE_OPS[name], "_backend_fns", {}).get("cpu") is _INPLACE_REGISTERED[name]):
        return _INPLACE_AUTOGRAD[name](None, self, *numbers)
    return getattr(_ops, name)(self, *numbers)
