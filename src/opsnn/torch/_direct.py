"""Whether a call may skip torch's dispatcher: ``direct``, and the torch state it reads.

The functional API (``_autograd.call``) and the in-place one
(``_inplace_autograd.call_inplace``) run the CPU kernel, or the Autograd kernel, themselves
where the dispatcher would reach nothing else for these arguments. Apart because it is one policy, that both ask on every call.
"""

from __future__ import annotations

import torch
from torch.overrides import has_torch_function

from .._core import torchplain as _plain

_INT_RANGE = (-2**63, 2**63)  # a Python int beyond it: the schema raises OverflowError


# what ``direct`` asks torch on every call, looked up once (~0.15 us a call): torch.jit.is_tracing()
# is _is_tracing() outside TorchScript, which never runs these functions (they refuse scripting)
_is_tracing, _dispatch_modes = torch._C._is_tracing, torch._C._len_torch_dispatch_stack
_profiling, _autocasting = torch._C._autograd._profiler_enabled, torch._C._is_any_autocast_enabled
_functorch_running, _grad_mode = torch._C._are_functorch_transforms_active, torch._C.is_grad_enabled
_excluded, _inference_mode = torch._C._dispatch_tls_local_exclude_set, torch.is_inference_mode_enabled
# The dispatch keys a thread excludes as it normally runs, and in inference mode (autograd's: the
# same set as under torch._C._AutoDispatchBelowAutograd). Any other set (a kernel running below
# autograd or ADInplaceOrView, as torch's own and Python kernels registered over aten ops do) goes
# through the dispatcher, which skips those layers there: run directly, the call had recorded a
# graph, refused a leaf or bumped a version the dispatcher skips (a regression breaker).
_NORMAL_EXCLUDED = _excluded().raw_repr()
with torch.inference_mode():
    _INFERENCE_EXCLUDED = _excluded().raw_repr()


def direct(tensors: tuple, numbers: tuple, flags: tuple = ()) -> bool:
    """Whether an op may run its CPU kernel (the function registered for CPU) without torch's
    dispatcher, which for these arguments would reach nothing but that kernel and, where a
    tensor requires grad, autograd: plain dense CPU tensors (``_bridge.is_plain``: strided
    layout, not quantized, nested, a zero tensor or a lazy negative / conjugate view, which
    torch's fallbacks resolve first), Python floats and int64-range ints for the scalars and
    bools for the flags (the schema converts or refuses anything else), and nothing that
    intercepts, converts or records ops (torch.compile, torch.jit.trace, the profiler, autocast,
    a torch function or dispatch mode such as FakeTensorMode or make_fx, functorch's vmap / grad
    wrappers or a functorch transform running at all, a tensor subclass, a thread that runs below
    autograd or ADInplaceOrView: ``_NORMAL_EXCLUDED``). (A plain tensor that
    requires grad, captured by a function vmap runs, reached the autograd.Function, which functorch
    refuses without a setup_context.)
    The dispatcher and torch.library's Python layers cost ~20-35 us a call (a 4-element
    forward: 24-44 -> 9-15 us on the Xeon VM of BENCHMARKS.md). Not seen from here: other
    RecordFunction observers than the profiler (``ExecutionTraceObserver``) and a CPU kernel
    registered over opsnn's with ``Library.impl``; ``torch.ops.opsnn.*`` reaches both."""
    if (torch.compiler.is_compiling() or _is_tracing() or _dispatch_modes() or _profiling() or _autocasting()
            or has_torch_function(tensors) or _functorch_running()):
        return False
    excluded = _excluded().raw_repr()
    if excluded != _NORMAL_EXCLUDED and not (excluded == _INFERENCE_EXCLUDED and _inference_mode()):
        return False
    # loops, not any() / all() over generators: this runs on every call (~0.5 us less)
    for v in numbers:
        if not (type(v) is float or (type(v) is int and _INT_RANGE[0] <= v < _INT_RANGE[1])):
            return False
    for f in flags:
        if type(f) is not bool:
            return False
    plain = _plain.PLAIN_KEYS  # B.is_plain, inline: one call less a tensor
    if not plain:
        return False
    for t in tensors:
        if type(t) is not torch.Tensor or torch._C._dispatch_keys(t).raw_repr() not in plain:
            return False
    return True
