"""opsnn's kernels as torch operators (``torch.ops.opsnn.*``), defined with ``torch.library``.

Schemas follow ATen's ``native_functions.yaml`` (names, argument names, Scalar types, defaults):

    opsnn::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor
    opsnn::leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)
    opsnn::leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope,
                               bool self_is_result) -> Tensor
    opsnn::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor
    opsnn::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)
    opsnn::hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor

and, for the four functional ops, twins taking ``float`` (``opsnn::leaky_relu_float`` ...) that the
Python functions use inside torch.compile when every scalar is a float (``_FLOAT_OPS``).

This module defines the ops with their CPU kernels and registers their fake kernels; importing
``_autograd`` and ``_inplace_autograd`` (the package does) registers their autograd after that, so torch
learns of each op in one order: definition, fake kernel, autograd. Per operator:

* CPU kernel (``_kernels``): the tensors cross to NumPy as zero-copy views (``_bridge``), the
  Pythonic opsnn function runs both aclnn phases (CANN checks, PromoteType, the l2 chain, the
  kernel), and the result crosses back without a copy. In-place ops write through the view into
  the tensor. What a functional op's kernel derives from metadata alone (its scalars as torch
  takes them, ``_checks``; the result's layout, ``_layout``) is kept per dtypes, shapes, strides
  and scalar values (``_memo._known``), and an in-place op's scalars per dtype and scalar values
  (``_checks._taken``); the crossings and the Pythonic call run every time.
* Fake/meta kernel (``_fake``; functional ops): ``_bridge.infer_output`` runs the same phase-1
  pipeline on metadata (``engine.infer_output``), so shape (broadcast or self's, per
  ``spec.broadcast``), dtype (``spec.promotion``) and the refusals come from the OpSpec. In-place
  ops make the CPU kernel's checks on metadata, with their own spec (``InplaceLeakyRelu``,
  ``InplaceHardtanh``, so a refusal names the operator the CPU kernel's names), and return
  ``self`` (torch's generated fake kernel for ``Tag.inplace`` checked nothing).
* Autograd, as ``tools/autograd/derivatives.yaml`` wires ATen's ops (``_autograd`` for the
  functional ops, ``_inplace_autograd`` for the in-place ones):
  leaky_relu -> leaky_relu_backward(grad, self, slope, False) (the input is saved);
  leaky_relu_ -> leaky_relu_backward(grad, result, slope, True) (only the result is saved, so a
  negative slope is refused when backward runs, as in torch); hardtanh and hardtanh_ ->
  hardtanh_backward(grad, self, min, max) with the forward *input* (hardtanh_ saves a clone of
  it first, made under autograd as torch's generated in-place formula makes it, so gradients of
  every order reach the input). Both backward ops are linear in
  grad_output: their own backward applies the same op to the incoming gradient
  (self_is_result=False, as in derivatives.yaml) and gives zeros for ``self``.
* Direct calls: the functional API runs the kernels without the dispatcher where that is all it
  would reach (``_direct.direct``; ``_autograd.call``, ``_inplace_autograd.call_inplace``).
* Errors: an AclnnError from opsnn becomes ``AclnnRuntimeError`` (a RuntimeError that is also
  an ``opsnn.AclnnError`` with ``.status``).
"""

from __future__ import annotations

import warnings

import torch

from ._fake import (
    _checked_hardtanh_,
    _checked_leaky_relu_,
    _hardtanh_backward_fake,
    _hardtanh_fake,
    _leaky_relu_backward_fake,
    _leaky_relu_fake,
)
from ._kernels import (
    _hardtanh,
    _hardtanh_,
    _hardtanh_backward,
    _leaky_relu,
    _leaky_relu_,
    _leaky_relu_backward,
)

NAMESPACE = "opsnn"


def _define(name: str, schema: str, fn, *, inplace: bool = False):
    return torch.library.custom_op(
        f"{NAMESPACE}::{name}", fn, mutates_args=("self",) if inplace else (), device_types="cpu",
        schema=schema, tags=(torch.Tag.inplace,) if inplace else ())


# the functional ops' schemas, ATen's (their float twins below are made from them)
_SCHEMAS = {
    "leaky_relu": "(Tensor self, Scalar negative_slope=0.01) -> Tensor",
    "leaky_relu_backward": "(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) -> Tensor",
    "hardtanh": "(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
    "hardtanh_backward": "(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor"}
leaky_relu = _define("leaky_relu", _SCHEMAS["leaky_relu"], _leaky_relu)
leaky_relu_ = _define("leaky_relu_", "(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)",
                      _leaky_relu_, inplace=True)
leaky_relu_backward = _define("leaky_relu_backward", _SCHEMAS["leaky_relu_backward"], _leaky_relu_backward)
hardtanh = _define("hardtanh", _SCHEMAS["hardtanh"], _hardtanh)
hardtanh_ = _define("hardtanh_", "(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)",
                    _hardtanh_, inplace=True)
hardtanh_backward = _define("hardtanh_backward", _SCHEMAS["hardtanh_backward"], _hardtanh_backward)


# the functional ops and their CPU kernels by name (``_autograd.call``, the float twins, the
# fake and autograd registrations)
_CPU_KERNELS = {"leaky_relu": _leaky_relu, "hardtanh": _hardtanh, "leaky_relu_backward": _leaky_relu_backward,
                "hardtanh_backward": _hardtanh_backward}
_OPS = {"leaky_relu": leaky_relu, "hardtanh": hardtanh, "leaky_relu_backward": leaky_relu_backward,
        "hardtanh_backward": hardtanh_backward}


# Each functional op's twin with ``float`` for ``Scalar`` (``opsnn::leaky_relu_float`` ...), which
# ``call`` takes inside torch.compile where every scalar is a float: torch 2.13's inductor keeps
# the first call's value of a symbolic float (a compiled function's float argument under
# dynamic=True, or once a value changed) given to a custom op's ``Scalar`` argument, so a slope
# passed in and varied gave the first slope's numbers (a breaker); with a ``float`` argument it
# does not. The Scalar ops stay the public ones: an int keeps its exact value there.
_FLOAT_OPS = {name: _define(f"{name}_float", _SCHEMAS[name].replace("Scalar ", "float "), _CPU_KERNELS[name])
              for name in _OPS}

# the CPU kernels the ops registered: a torch.library.register_kernel over one makes the
# functional API take the op (the override) again
_REGISTERED = {name: getattr(op, "_backend_fns", {}).get("cpu") for name, op in _OPS.items()}


# ---- fake / meta kernels (_fake) ----------------------------------------------------------
for _name, _fake_fn in (("leaky_relu", _leaky_relu_fake), ("leaky_relu_backward", _leaky_relu_backward_fake),
                        ("hardtanh", _hardtanh_fake), ("hardtanh_backward", _hardtanh_backward_fake)):
    _OPS[_name].register_fake(_fake_fn)
    _FLOAT_OPS[_name].register_fake(_fake_fn)


# The in-place ops' own fakes: torch's generated one for an inplace-tagged op returns self
# unchecked, so a meta / fake int64 or 9-d self, refused on CPU, was taken (a breaker). torch
# calls this registration "unnecessary" in a UserWarning; it is what makes them check.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="The fake registration for .* is unnecessary", category=UserWarning)
    leaky_relu_.register_fake(_checked_leaky_relu_)
    hardtanh_.register_fake(_checked_hardtanh_)
