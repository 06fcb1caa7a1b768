"""The Pythonic surface: NumPy in, NumPy out, ``AclnnError`` on failure.

Each function runs the same two phases as the aclnn API (same checks, codes and messages) and
executes at once; opsnn's own refusals of an ``out`` or in-place ``self`` (read-only, a torch
tensor that requires grad or an inference tensor, partial overlap) come after all of those.
Inputs may be NumPy arrays of any strides (bf16 is ``ml_dtypes.bfloat16``), objects with
``__dlpack__``, or Python scalars (a Python scalar tensor argument takes the other
input's dtype, like NumPy's weak scalars, though a float beside an integer array too, where
NumPy would make it float64; a NumPy scalar is a 0-d array of its own dtype). A plain torch CPU
tensor is read as its NumPy view (through DLPack, the same memory: ``_torch_views``), so a
repeated call with torch tensors hits the plan cache as a NumPy call does; any other DLPack
object, and a torch tensor the full path treats otherwise, crosses through DLPack.
Scalar attributes given as Python floats travel as ACL_DOUBLE scalars (as torch_npu sends them),
ints as ACL_INT64 (ints in [2**63, 2**64) as ACL_DOUBLE; others outside int64 refused, as
torch.Scalar refuses them), bools as ACL_BOOL.
Every function also raises ``AclnnError`` 361001 where ``$OPSNN_SOC`` names no emulated SoC (the
runtime cannot say which it runs on), as phase 1 of the aclnn API returns it.
"""

from __future__ import annotations

import functools
import math
import re
import sys

import numpy as np

from . import _fastpath, engine, registry
from ._core import checks, dtypes, memory, outpool
from ._core import torchplain as _plain
from ._core.dtypes import DataType
from ._core.status import AclError, AclnnError, Status, set_recent_error, warning_refused
from ._core.tensor import ArrayTensor, DataLessTensor, aclScalar


# The plan cache's positional front door (``_fastpath.caller``), tried before anything else: a
# repeated call of a small tensor costs about what torch's own dispatch does.
_HIT = {name: _fastpath.caller(registry.get(name))
        for name in ("LeakyReluBackward", "HardtanhBackward", "LeakyRelu", "Hardtanh")}


def leaky_relu_backward(grad_output, self, negative_slope=0.01, self_is_result=False, *, out=None):
    """Gradient of LeakyReLU: ``grad_output if self > 0 else grad_output * float32(negative_slope)``.

    Args:
        grad_output: array, float16/bfloat16/float32/float64 (bfloat16 only on the SoCs of the
            910B list: Ascend910B, Ascend910_93, Ascend950), 0-8 dims, broadcastable with self.
        self: array, same dtypes (promoted with grad_output by CANN's PromoteType); the forward
            input, or the forward result when ``self_is_result``.
        negative_slope: number, NumPy scalar or 0-d array (used as float32, DECISION 2); default
            0.01, leaky_relu's (F10).
        self_is_result: True when ``self`` is the in-place forward's result; then a negative
            slope is refused. A bool, or the int 0 or 1 (as the aclnn API's C bool takes them).
        out: optional NumPy array or DLPack tensor (any strides; written in place) of the
            broadcast shape and a float or complex dtype.

    Returns:
        ``out``, or a new C-contiguous array of the broadcast shape and the promoted dtype.

    Raises:
        AclnnError: 161001 (None argument), 161002 (dtype, rank > 8, shape, out, in-place rule),
        200000 (a result larger than the emulated device memory, before anything is allocated),
        561003 (Ascend310B, which lacks the operator, or an ``OPSNN_BACKEND`` that names no
        usable backend), 561103 (an out dtype no Cast reaches, e.g. float8). Source:
        aclnnLeakyReluBackward (ops-nn); torch.ops.aten.leaky_relu_backward numerics.
    """
    done = _HIT["LeakyReluBackward"](grad_output, self, negative_slope, self_is_result, out)
    if done is not None:
        return done
    return _call(registry.get("LeakyReluBackward"), out, grad_output=grad_output, self=self,
                 negative_slope=negative_slope, self_is_result=self_is_result)


def hardtanh_backward(grad_output, self, min_val=-1.0, max_val=1.0, *, out=None):
    """Gradient of Hardtanh: ``grad_output if min < self < max (float32 bounds) or isnan(self)
    else +0.0``; grad bits are copied unchanged.

    Args:
        grad_output: array, float16/bfloat16/float32 (bfloat16 only on the SoCs of the 910B
            list; float64 on none: DECISION 11), 0-8 dims.
        self: the forward input, same dtype and shape as grad_output (no broadcasting).
        min_val, max_val: numbers, NumPy scalars or 0-d arrays (used as float32); min_val >
            max_val, or a NaN bound, gives zeros but where self is NaN (DECISION 8: a NaN self
            passes the gradient whatever the bounds).
        out: optional NumPy array or DLPack tensor (any strides; written in place) with self's
            dtype and shape.

    Returns:
        ``out``, or a new C-contiguous array like self.

    Raises:
        AclnnError: 161001 (None argument), 161002 (dtype, shape, rank > 8, out), 200000 (a
        result larger than the emulated device memory), 561003 (an ``OPSNN_BACKEND`` that names
        no usable backend; every SoC has the operator). Source: aclnnHardtanhBackward (ops-nn,
        arch35 kernel); torch.ops.aten.hardtanh_backward.
    """
    done = _HIT["HardtanhBackward"](grad_output, self, min_val, max_val, out)
    if done is not None:
        return done
    return _call(registry.get("HardtanhBackward"), out, grad_output=grad_output, self=self,
                 min_val=min_val, max_val=max_val)


def leaky_relu(self, negative_slope=0.01, *, out=None):
    """LeakyReLU: ``self if self > 0 else self * float32(negative_slope)``.

    Args:
        self: array, float16/bfloat16/float32/float64 (bfloat16 only on the SoCs of the 910B
            list), 0-8 dims.
        negative_slope: number, NumPy scalar or 0-d array (used as float32, also for float64
            input: DECISION 2). The default 0.01 is torch's; the aclnn API has no default.
        out: optional NumPy array or DLPack tensor (any strides; written in place) of self's
            shape and a float or complex dtype; it may be ``self`` itself but must not partially
            overlap it.

    Returns:
        ``out``, or a new C-contiguous array like self. fp16/bf16 are computed in float32 and
        rounded once; +0.0 with a negative slope gives -0.0, -inf with slope 0 gives NaN.

    Raises:
        AclnnError: 161001 (None argument), 161002 (dtype, rank > 8, out shape/dtype, partial
        overlap), 200000 (a result larger than the emulated device memory), 561003 (Ascend310P /
        Ascend310B, or an ``OPSNN_BACKEND`` that names no usable backend), 561103 (an out dtype
        no Cast reaches, e.g. float8). Source: aclnnLeakyRelu (ops-nn); torch.ops.aten.leaky_relu
        numerics.
    """
    done = _HIT["LeakyRelu"](self, negative_slope, out)
    if done is not None:
        return done
    return _call(registry.get("LeakyRelu"), out, self=self, negative_slope=negative_slope)


def leaky_relu_(self, negative_slope=0.01):
    """In-place LeakyReLU (aclnnInplaceLeakyRelu): writes ``leaky_relu(self)`` into ``self``.

    Args:
        self: writable NumPy array (any strides) or DLPack tensor sharing its memory, float16/
            bfloat16/float32/float64, 0-8 dims.
        negative_slope: number, used as float32; default 0.01 (torch's).

    Returns:
        ``self``, modified in place. (Its autograd partner is ``leaky_relu_backward(...,
        self_is_result=True)``, which refuses a negative slope.)

    Raises:
        AclnnError: 161001 (None), 161002 (dtype, rank > 8, not a writable array, elements
        sharing memory as in a broadcast view), 561003 (Ascend310P / Ascend310B, or an
        ``OPSNN_BACKEND`` that names no usable backend). Source: aclnnInplaceLeakyRelu (ops-nn).
    """
    return _call_inplace(registry.get("InplaceLeakyRelu"), self, negative_slope=negative_slope)


def hardtanh(self, min_val=-1.0, max_val=1.0, *, out=None):
    """Hardtanh: ``min(max(self, min_val), max_val)`` in self's dtype (ClipByValueV2).

    Args:
        self: array, float16/bfloat16/float32/float64 or int8/int16/int32/int64/uint8
            (bfloat16 only on the SoCs of the 910B list), 0-8 dims.
        min_val, max_val: numbers, NumPy scalars or 0-d arrays (Python floats travel as DOUBLE scalars, ints as INT64; bools
            are refused), converted to self's dtype: rounded for floats; for integer self a float
            is truncated toward zero and must fit (so the default -1.0 is refused for uint8),
            an int wraps like a C cast. min_val > max_val is refused, compared before that
            conversion, as int64 where min_val is an int (a float max_val truncated, NaN read as
            0: ``hardtanh(x, 1, nan)`` is refused), else as double; a NaN bound that passes
            (floating self) makes every element NaN (F6).
        out: optional NumPy array or DLPack tensor (any strides; written in place) with self's
            dtype and shape; it may be ``self`` itself but must not partially overlap it.

    Returns:
        ``out``, or a new C-contiguous array like self. NaN propagates; a zero keeps its sign
        (hardtanh(-0.0, 0, 6) is -0.0), as torch.clamp.

    Raises:
        AclnnError: 161001 (None argument), 161002 (dtype, rank > 8, out, min > max, a bound
        with no value in self's dtype, partial overlap), 200000 (a result larger than the
        emulated device memory), 561003 (Ascend310B, or an ``OPSNN_BACKEND`` that names no
        usable backend). Source: aclnnHardtanh (ops-math); torch.clamp /
        torch.ops.aten.hardtanh numerics.
    """
    done = _HIT["Hardtanh"](self, min_val, max_val, out)
    if done is not None:
        return done
    return _call(registry.get("Hardtanh"), out, self=self, min_val=min_val, max_val=max_val)


def hardtanh_(self, min_val=-1.0, max_val=1.0):
    """In-place Hardtanh (aclnnInplaceHardtanh): writes ``hardtanh(self, min_val, max_val)``
    into ``self``.

    Args:
        self: writable NumPy array (any strides) or DLPack tensor sharing its memory; dtypes as
            ``hardtanh``.
        min_val, max_val: numbers, as ``hardtanh``.

    Returns:
        ``self``, modified in place.

    Raises:
        AclnnError: 161001 (None), 161002 (dtype, rank > 8, min > max, bound conversion, not a
        writable array, elements sharing memory as in a broadcast view), 561003 (Ascend310B, or
        an ``OPSNN_BACKEND`` that names no usable backend). Source: aclnnInplaceHardtanh
        (ops-math).
    """
    return _call_inplace(registry.get("InplaceHardtanh"), self, min_val=min_val, max_val=max_val)


def _call_inplace(spec: registry.OpSpec, self, **scalars):
    """Run an in-place spec on ``self``'s own memory (out = self) and return ``self``."""
    if self is None:  # the engine reports the null self (161001)
        return _call(spec, None, self=None, **scalars)
    target = self  # a plain torch tensor: its NumPy view, which the plan cache takes (_torch_views)
    if type(self) is not np.ndarray and (torch := _torch_for_views()) is not None:
        target = _torch_view(torch, self, written=True)
        if target is None:
            target = self
    try:
        try:
            arr, unwritable = _writable(spec, target, "self")
        except AclnnError:
            _nulls_first(spec, scalars)  # a None scalar beside a self that is no array: 161001 first
            raise
    except AclnnError as exc:
        set_recent_error(exc.message)  # as the boundary of _call does
        raise
    _call(spec, arr, self=arr, unwritable=unwritable, **scalars)
    _mark_written(self)
    return self


def _writable(spec: registry.OpSpec, value, name: str) -> tuple[np.ndarray | DataLessTensor, AclnnError | None]:
    """``_write_target``; an exception that reading ``value`` raises (a hostile ``__getattr__``,
    a torch subclass whose ``__torch_function__`` raises) is 161002 naming the argument (a
    breaker: it escaped an in-place call, and was 561000 as ``out``)."""
    try:
        return _write_target(spec, value, name)
    except AclnnError:
        raise
    except Exception as exc:  # noqa: BLE001 - the caller's object, not opsnn, raised it
        raise AclnnError(Status.ERR_PARAM_INVALID, f"{spec.name}: {name} cannot be read as an array to write "
                                                   f"into: {type(exc).__name__}: {exc}") from exc


def _write_target(spec: registry.OpSpec, value, name: str) -> tuple[np.ndarray | DataLessTensor, AclnnError | None]:
    """The plain NumPy array over ``value``'s memory for a result to be written into (in-place
    ``self``, or ``out``), and opsnn's refusal to write there, or None: a read-only array, a torch
    tensor that requires grad, a torch inference tensor outside inference mode (161002). CANN
    has no such check, so the caller raises the refusal only once phase 1's checks have passed,
    before anything is written (a breaker: an int32 gradOutput with a read-only out was told
    "out is a read-only array", where the aclnn API refuses the dtype); the array is then a
    read-only view, which nothing writes (the plan cache's fast path, too, takes writable ones
    only). A value that is no array (NumPy or DLPack) at all is 161002 at once, a wrong type as
    a wrong handle type is at the null checks; a DataLessTensor passes (the dtype checks refuse it)."""
    if type(value) is DataLessTensor:
        return value, None
    if not (isinstance(value, np.ndarray) or hasattr(value, "__dlpack__")):
        raise AclnnError(Status.ERR_PARAM_INVALID,
                         f"{spec.name}: {name} must be an array (NumPy or DLPack) to be written, "
                         f"got {type(value).__name__}")
    torch = _torch_of(value)
    refusal = None
    if torch is not None and value.requires_grad:
        refusal = AclnnError(Status.ERR_PARAM_INVALID,
                             f"{spec.name}: {name} is a torch tensor that requires grad: the NumPy API cannot "
                             "record its write for autograd, which would then compute from stale values; write "
                             "into a tensor that does not require grad, or call opsnn.torch's functions, which "
                             "autograd records")
        value = value.detach()  # the same memory, which DLPack exports (it refuses a tensor requiring grad)
    elif torch is not None and value.is_inference() and not torch.is_inference_mode_enabled():
        refusal = AclnnError(Status.ERR_PARAM_INVALID,
                             f"{spec.name}: {name} is a torch inference tensor, which only code inside "
                             "torch.inference_mode() may update (torch's own rule for in-place writes)")
    try:
        arr = _as_array(value, name, written=True)
    except AclnnError as exc:  # name the operator, as phase 1's own messages do
        raise AclnnError(exc.status, f"{spec.name}: {exc.message}") from None
    if type(arr) is DataLessTensor:  # the dtype checks refuse it first
        return arr, refusal
    if refusal is None and not arr.flags.writeable:
        refusal = AclnnError(Status.ERR_PARAM_INVALID, f"{spec.name}: {name} is a read-only array; "
                                                       "the result needs a writable one")
    elif refusal is not None:
        arr = arr.view()
        arr.flags.writeable = False
    return arr, refusal


def _pythonic_boundary(call):
    """The Pythonic layer's counterpart of the aclnn boundary: only AclnnError leaves it, and its
    text is also what ``acl.get_recent_err_msg()`` returns next on this thread. A host
    MemoryError becomes 200000 (ACL_ERROR_BAD_ALLOC); a warning the caller's filter raises as an
    error 161002, as the aclnn boundary returns it; anything else becomes 561000
    (ACLNN_ERR_INNER: an opsnn bug, or torch.compile reaching opsnn's host code, see
    ``_internal_error``); the original exception chained (``__cause__``)."""

    @functools.wraps(call)
    def inner(spec, out, **kwargs):
        try:
            done = _fastpath.hit(spec, kwargs, out)  # the plan cache (see _fastpath): a hit skips phase 1
            if done is not None:
                return done
            viewed = _torch_views(spec, kwargs, out)  # after a miss: a NumPy call's hit pays nothing
            if viewed is None:
                return call(spec, out, **kwargs)
            kwargs, out, written = viewed
            done = _fastpath.hit(spec, kwargs, out)
            if done is None:
                done = call(spec, out, **kwargs)
            if written is None:
                return done
            _mark_written(written)  # as the full path marks a torch out it wrote, and returns it
            return written
        except AclnnError as exc:
            named = _python_names(spec, exc, kwargs)
            set_recent_error(named.message)
            if named is exc:
                raise
            raise named from None
        except MemoryError as exc:
            raise _recorded(AclnnError(AclError.BAD_ALLOC, f"{spec.name}: out of host memory: {exc}")) from exc
        except Warning as exc:
            raise _recorded(AclnnError(Status.ERR_PARAM_INVALID, warning_refused(spec.name, exc))) from exc
        except Exception as exc:  # noqa: BLE001 - nothing but AclnnError may escape
            raise _recorded(AclnnError(Status.ERR_INNER, _internal_error(spec, exc))) from exc

    return inner


def _internal_error(spec: registry.OpSpec, exc: Exception) -> str:
    """The 561000 message of an exception that is no refusal. One raised by torch.compile's
    frame compiler (``torch._dynamo``) is the caller's compiled function reaching opsnn's host
    code: after a graph break at the call, Dynamo compiles each frame inside it in turn and fails
    on one (the plan's frozen dataclasses, numba's typing); the message says what does compile."""
    text = f"{type(exc).__name__}: {exc}"
    if type(exc).__module__.startswith("torch._dynamo"):
        return (f"{spec.name}: torch.compile cannot compile opsnn's NumPy-style functions; inside a "
                f"compiled function call opsnn.torch's (torch.ops.opsnn.*, which it compiles), or "
                f"leave the call outside (torch.compiler.disable): {text.splitlines()[0]}")
    return f"{spec.name}: internal error: {text}"


def _python_names(spec: registry.OpSpec, exc: AclnnError, kwargs: dict) -> AclnnError:
    """``exc`` with, where its message uses a CANN argument name that does not read as the Python
    keyword (``clipValueMin``, ``min`` for ``min_val``; ``gradOutput`` reads as ``grad_output``),
    the keyword and the value the call used, so that a NumPy user meets the names of the
    signature (a breaker: ``hardtanh`` of a uint8 array refused ``clipValueMin``, the default
    ``min_val`` of -1.0, in names the call never used)."""
    # (the names of the aclnn call: an in-place call's tensor is selfRef, which a breaker met unexplained)
    names = {p: spec.call_name(p) for p in spec.call_params}
    notes = {api: f"{api} is {p.name}" + (f" = {checks.brief(kwargs[p.name])}"
                                          if p.kind == "scalar" and p.name in kwargs else "")
             for p, api in names.items() if registry.snake_case(api) != p.name}
    return _noted(exc, notes, "Python arguments: ")


def _noted(exc: AclnnError, notes: dict[str, str], lead: str = "") -> AclnnError:
    """``exc`` with the notes (CANN argument name -> text) of the arguments its message names,
    added in parentheses after ``lead``; ``exc`` itself where it names none of them."""
    said = [note for api_name, note in notes.items() if re.search(rf"\b{api_name}\b", exc.message)]
    if not said:
        return exc
    return AclnnError(exc.status, f"{exc.message} ({lead}{'; '.join(said)})")


def _recorded(exc: AclnnError) -> AclnnError:
    """``exc``, its text left for ``acl.get_recent_err_msg()`` as the aclnn boundary leaves it."""
    set_recent_error(exc.message)
    return exc


# ``_call``'s ``unwritable`` when its caller has not looked at ``out``
_UNSEEN = object()


@_pythonic_boundary
def _call(spec: registry.OpSpec, out, unwritable=_UNSEEN, **kwargs):
    """The two phases on host arrays. ``unwritable``: the refusal to write into ``out`` (or
    None) where the caller has made ``out`` already (``_call_inplace``: its self's array)."""
    key = _fastpath.key(spec, kwargs, out)  # a miss of the plan cache: remembered after the full path
    try:
        # every argument becomes an array or an aclScalar before phase 1, as a C caller creates
        # its aclScalar before the call (a non-number has no C form) and torch_npu converts each
        # argument before GetWorkspaceSize: so a slope that is no number is refused before an
        # int32 gradOutput's dtype is looked at; a None argument is still 161001 first
        args, weak = _handles(spec, kwargs)
    except AclnnError as exc:  # name the operator, as phase 1's own messages do
        _nulls_first(spec, kwargs)
        raise AclnnError(exc.status, f"{spec.name}: {exc.message}") from None
    if out is None:
        args["out"] = engine.ALLOCATE
        result: list[np.ndarray] = []

        def allocate(shape, dtype):
            result.append(_host_empty(shape, dtypes.to_numpy(dtype), f"{spec.name}: out", pooled=True))
            return result[0]
    else:
        written = out
        if unwritable is _UNSEEN:
            try:
                written, unwritable = _writable(spec, out, "out")
            except AclnnError:
                _nulls_first(spec, kwargs)  # a None argument beside an out that is no array: 161001 first
                raise
        args["out"] = written if type(written) is DataLessTensor else ArrayTensor(written)
        allocate = None
    # the SoC and the kernel backend as the key names them, each read once (see _fastpath)
    try:
        executor = engine.plan(spec, args, _fastpath.soc_of(key), allocate=allocate)
    except AclnnError as exc:  # (a refusal of leaky_relu_backward(1.0, int32_array) names gradOutput's
        raise _noted(exc, weak) from None  # DT_INT32, a dtype the caller gave self: a breaker)
    if isinstance(unwritable, AclnnError):  # opsnn's rule: after every phase-1 check, before any write
        raise unwritable
    backend = _fastpath.backend_of(key)
    size = executor.workspace_size
    # allocated only if the steps run: the fused pass reads strided inputs in place (a 1e6
    # float32 transposed input's 4 MB Contiguous slot, never touched, was allocated every call)
    workspace = (lambda: _host_empty((size,), np.dtype(np.uint8), f"{spec.name}: workspace")) if size else None
    engine.run(executor, workspace, backend, fused=True)
    if key is not None:
        _fastpath.remember(key, spec, executor, backend)
    if out is None:
        return result[0]
    _mark_written(out)
    return out


# Whether a call reads each plain torch CPU tensor argument as its NumPy view (``_torch_views``);
# off, every torch tensor takes the full path (DLPack) as before (the parity tests compare both)
TORCH_VIEWS = True
# per operator, its tensor inputs' names (``spec.inputs`` builds its tuple anew on each read)
_INPUT_NAMES: dict[str, tuple[str, ...]] = {}


def _torch_views(spec: registry.OpSpec, kwargs: dict, out):
    """The call's arguments with each plain torch tensor among its tensor inputs and ``out``
    replaced by its NumPy view (``_torch_view``), as ``(kwargs, out, the torch out or None)``;
    None where none is replaced (no torch loaded, no such tensor, a torch function or dispatch
    mode active). The views make the call the one it would make on NumPy arrays over the same
    memory -- the same checks, results, errors and messages, as the full path reads those
    tensors through DLPack as just those arrays -- so the plan cache (``_fastpath``, which takes
    plain NumPy arrays only) keeps and hits it: a repeated 4-element call with torch tensors
    took 40-59 us, 5.5-11 now (Zen 5 VM of BENCHMARKS.md). The caller bumps a torch ``out``'s
    version and returns it, as the full path does. Scalar and flag arguments are never replaced:
    a 0-d torch tensor as a slope is refused as it was, where its NumPy view would be read as a
    0-d array's number."""
    torch = _torch_for_views()
    if torch is None:
        return None
    names = _INPUT_NAMES.get(spec.name)
    if names is None:
        names = _INPUT_NAMES[spec.name] = tuple(p.name for p in spec.inputs)
    viewed = None
    for name in names:
        view = _torch_view(torch, kwargs.get(name), written=False)
        if view is not None:
            if viewed is None:
                viewed = dict(kwargs)
            viewed[name] = view
    written = None
    view = _torch_view(torch, out, written=True)
    if view is not None:
        written, out = out, view
    if viewed is None and written is None:
        return None
    return viewed or kwargs, out, written


def _torch_for_views():
    """The torch module where ``_torch_view`` may replace tensors now, else None: torch loaded,
    ``TORCH_VIEWS`` on, the plain-tensor tables bound (``_core.torchplain``), and no torch
    function or dispatch mode active (one sees the full path's own torch calls, as before)."""
    torch = sys.modules.get("torch")
    if torch is None or not TORCH_VIEWS:
        return None
    try:
        C = torch._C
        if C._is_torch_function_mode_enabled() or C._len_torch_dispatch_stack():
            return None
        if _plain.TENSOR is None and not _plain.bind(torch):
            return None
    except Exception:  # noqa: BLE001 - a torch without these: the full path, as before
        return None
    return torch if _plain.PLAIN_KEYS else None


def _torch_view(torch, value, written: bool) -> np.ndarray | None:
    """``value``'s NumPy view (the same memory, shape, strides and storage offset) where ``value``
    is a plain torch CPU tensor (``torchplain.is_plain``) that the full path reads (or, ``written``,
    writes) as exactly that array, else None: it takes no view of a tensor the full path treats
    otherwise -- a subclass (FakeTensor, Parameter, a wrapper), a tensor off the CPU or not
    strided, a lazy negative or conjugate view, a ZeroTensor (each with other dispatch keys), one
    that requires grad (an input: DLPack refuses it; written: opsnn refuses it), an inference
    tensor written outside inference mode (refused), a dtype NumPy has no view of (bfloat16,
    float8: integer views; complex32, int1-int7 ...: data-less handles; ``dtypes.TORCH_VIEWS``)
    or a tensor of elements whose data pointer is null (its storage resized away: refused) --
    nor where DLPack refuses (a shape NumPy cannot hold: the full path's message names it)."""
    try:
        keys = _plain.plain_keys(value)
        if keys is None:
            return None
        if keys in _plain.INFERENCE_KEYS:
            if written and not torch.is_inference_mode_enabled():
                return None
        elif value.requires_grad:
            return None
        if value.dtype not in _plain.NUMPY_DTYPES or (not value.data_ptr() and value.numel()):
            return None
        # DLPack, as the full path reads it: Tensor.numpy() (~1.3 us less) marks the tensor's
        # storage not resizable for good, so the caller's later resize_() failed (a breaker)
        return np.from_dlpack(value)
    except Exception:  # noqa: BLE001 - the full path reads it, and says why it cannot
        return None


def _torch_of(value):
    """The torch module when ``value`` is a torch tensor, else None (torch is not imported here:
    a torch tensor exists only once its module is loaded)."""
    torch = sys.modules.get("torch")
    return torch if torch is not None and isinstance(value, torch.Tensor) else None


def _mark_written(value) -> None:
    """A torch tensor whose memory a call wrote (``out``, in-place ``self``): bump its version
    counter, as torch's own in-place ops do, so that autograd refuses a backward whose saved
    tensor (a tensor this one was detached from, sharing the counter) has changed, instead of
    computing a wrong gradient from the new values."""
    torch = _torch_of(value)
    if torch is not None:
        torch.autograd.graph.increment_version(value)


def _handles(spec: registry.OpSpec, kwargs: dict) -> tuple[dict, dict[str, str]]:
    """The engine's arguments for a Pythonic call: tensor handles over the arrays, aclScalars,
    flags (``out`` is added by the caller); and for each input given as a Python number that
    took another input's dtype, its CANN name -> a note saying so, for refusals that name it."""
    arrays = {p.name: _as_array(kwargs[p.name], p.api_name) for p in spec.inputs}
    weak = {}
    for p in spec.inputs:  # Python scalars are weak: they take another input's dtype
        if _is_python_scalar(kwargs[p.name]):
            partner = next((q for q in spec.inputs
                            if q.name != p.name and not _is_python_scalar(kwargs[q.name])
                            and isinstance(arrays[q.name], np.ndarray)), None)
            if partner is not None:
                dtype = arrays[partner.name].dtype
                arrays[p.name] = _weak_scalar(kwargs[p.name], dtype, p.api_name)
                # a refusal of its dtype or of its shape names it: the note gives both
                # (not "as NumPy does": NumPy makes a float beside an integer array float64)
                weak[p.api_name] = (f"{p.api_name} is the Python number {checks.brief(kwargs[p.name])}, made a "
                                    f"0-d tensor of {partner.api_name}'s dtype "
                                    f"{dtypes.name(dtypes.from_numpy(dtype))}: a Python number takes the "
                                    "other input's dtype")
            elif isinstance(arrays[p.name], np.ndarray):  # every input a Python number: NumPy's dtype
                # (a breaker: leaky_relu_backward(1, -2) was refused for a DT_INT64 the call never named)
                weak[p.api_name] = (f"{p.api_name} is the Python number {checks.brief(kwargs[p.name])}, a 0-d "
                                    f"tensor of {dtypes.name(dtypes.from_numpy(arrays[p.name].dtype))} as NumPy "
                                    "makes it: no input is an array whose dtype it could take")
    args = {name: (arr if arr is None or type(arr) is DataLessTensor else ArrayTensor(arr))
            for name, arr in arrays.items()}
    for p in spec.params:
        if p.kind == "scalar":
            args[p.name] = _as_scalar(kwargs[p.name], p.api_name, spec.name in _TORCH_READS_0D)
        elif p.kind == "flag":
            args[p.name] = checks.held(kwargs[p.name])
    return args, weak


def _nulls_first(spec: registry.OpSpec, kwargs: dict) -> None:
    """CANN's null checks come before every other: a None argument beside one that cannot be
    made an array or an aclScalar is 161001 (the engine, which would find it, is not reached)."""
    for name in spec.null_order:
        if name in kwargs and kwargs[name] is None:
            param = spec.param(name)
            checks.not_null(spec.name, None, param.api_name, engine.HANDLE_TYPES[param.kind])


def _is_python_scalar(value) -> bool:
    """A Python number, which is weak; a NumPy scalar is strong (NumPy 2 / NEP 50), although
    np.float64 and np.complex128 subclass float and complex."""
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


def _host_empty(shape: tuple[int, ...], dtype: np.dtype, what: str, pooled: bool = False) -> np.ndarray:
    """A new host array for out or the workspace; ACL_ERROR_BAD_ALLOC (200000) when it exceeds
    the emulated device memory (checked before trying) or the host cannot provide it, 161002 for
    an empty shape NumPy cannot hold (a broadcast of (2**40, 0, 1) with (2**30,)).
    ``pooled``: may recycle a large buffer nobody references any more (``_core.outpool``)."""
    nbytes = math.prod(shape) * dtype.itemsize
    refusal = memory.beyond_device(nbytes, what)
    if refusal:
        raise AclnnError(AclError.BAD_ALLOC, refusal)
    try:
        return outpool.empty(shape, dtype) if pooled else np.empty(shape, dtype=dtype)
    except (MemoryError, ValueError) as exc:
        if nbytes == 0:  # no elements, yet NumPy caps the product of the nonzero dims (2**63 bytes)
            raise AclnnError(Status.ERR_PARAM_INVALID,
                             f"{what}: shape {shape} has no elements, but NumPy cannot hold it as {dtype.name} "
                             f"({exc}): the product of its nonzero dims times the itemsize must stay below "
                             "2**63 bytes") from None
        raise AclnnError(AclError.BAD_ALLOC, f"{what}: cannot allocate {nbytes} bytes: {exc}") from None


def _weak_scalar(value, dtype: np.dtype, api_name: str) -> np.ndarray:
    """A Python number passed as a tensor, in its partner's dtype (161002 if it has no value there)."""
    if isinstance(value, complex) and dtype.kind != "c":  # (else Python's float() text, ml_dtypes' ...)
        raise AclnnError(Status.ERR_PARAM_INVALID, f"{api_name} {checks.brief(value)} cannot be made a {dtype} "
                                                   "tensor (the other input's dtype): it must be a real number "
                                                   "(bool, int or float), got complex")
    try:
        with np.errstate(all="ignore"):  # overflow gives +-inf, as before (C conversion)
            return np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:  # e.g. a complex for a float tensor
        raise AclnnError(Status.ERR_PARAM_INVALID, f"{api_name} {checks.brief(value)} cannot be made a "
                                                   f"{dtype} tensor: {exc}") from None


# NPY_ARRAY_WARN_ON_WRITE: np.broadcast_arrays' results, whose writeable flag warns when read
# (FutureWarning), as numba's typeof reads it for every array it is given
_WARN_ON_WRITE = 1 << 31


def _as_array(value, api_name: str, written: bool = False) -> np.ndarray | DataLessTensor | None:
    """``value`` as an array, or a Python number's; ``written``: it is to receive the result
    (``out``, an in-place ``self``), which a refusal's text says."""
    if type(value) is np.ndarray:
        if value.flags.num & _WARN_ON_WRITE:  # a view whose flag is set is quiet (it stays writeable,
            value = value.view()              # as the warning's own advice says)
            value.flags.writeable = True
        return _data_less(value)
    if value is None or type(value) is DataLessTensor:
        return value
    if isinstance(value, np.ndarray):  # a subclass (np.matrix, a masked array): its data as a plain
        # array over the same memory (no mask); ndarray's own view, not the subclass's (a breaker's
        # subclass whose view raised was 561000, one whose view copied was "updated" in place unchanged)
        return _as_array(np.ndarray.view(value, np.ndarray), api_name)
    try:
        has_dlpack = hasattr(value, "__dlpack__")
    except Exception:  # noqa: BLE001 - a hostile __getattr__ must not escape
        has_dlpack = False
    if has_dlpack:
        if _pending_negation(value):
            raise AclnnError(Status.ERR_PARAM_INVALID,
                             f"{api_name} is a torch view with a pending negation (is_neg(), e.g. "
                             f"z.conj().imag), which DLPack exports without applying it; pass "
                             f"{api_name}.resolve_neg() (a copy: an in-place update of it does not "
                             "reach the original)")
        refusal = _without_memory(value, api_name, written)
        if refusal is not None:
            raise AclnnError(Status.ERR_PARAM_INVALID, refusal)
        try:
            return _from_dlpack(value)
        except Exception as exc:  # noqa: BLE001 - BufferError, TypeError, RuntimeError, ...
            raise AclnnError(Status.ERR_PARAM_INVALID,
                             f"{api_name} cannot be read through DLPack: {exc}") from None
    if type(value) is int and not checks.int_held(value):  # NumPy would make it an object array
        raise AclnnError(Status.ERR_PARAM_INVALID, f"{api_name} {checks.brief(value)} is an int beyond int64 and "
                                                   "uint64, which no aclDataType holds")
    if isinstance(value, (bool, int, float, complex, np.generic, list, tuple)):
        try:
            return _data_less(np.asarray(value))
        except (TypeError, ValueError, OverflowError, MemoryError) as exc:  # e.g. a ragged list
            raise AclnnError(Status.ERR_PARAM_INVALID,
                             f"{api_name} cannot be made an array: {exc}") from None
    raise AclnnError(Status.ERR_PARAM_INVALID,
                     f"{api_name} must be an array (NumPy, DLPack) or a number, got {type(value).__name__}")


def _data_less(arr: np.ndarray) -> np.ndarray | DataLessTensor:
    """``arr``, or where it is of an ml_dtypes type with an aclDataType NumPy holds no data of
    (complex32: ``dtypes.BYTES_ONLY``), a DataLessTensor over its memory, as torch.complex32's."""
    found = dtypes.ml_bytes(arr.dtype)
    if found is None:
        return arr
    crossing, acl = found
    return DataLessTensor(tuple(arr.shape), acl, arr.dtype, arr.view(crossing))


def _from_dlpack(value) -> np.ndarray | DataLessTensor:
    """``np.from_dlpack(value)``; a torch bfloat16 or float8 tensor, which NumPy's DLPack import
    refuses (no code for them), crosses as its integer view reinterpreted as the ml_dtypes type
    (``dtypes.TORCH_VIEWS``; same memory and strides, so in-place updates reach it). A torch
    dtype with no aclDataType (int1..int7, uint1..uint7: torch's export labels them as 8-bit
    integers, which NumPy would take at their word) becomes a DataLessTensor, and so does
    complex32 (ACL_COMPLEX32, no NumPy type), its memory kept (``dtypes.BYTES_ONLY``)."""
    torch = _torch_of(value)
    if torch is None:
        return np.from_dlpack(value)
    name = str(value.dtype).removeprefix("torch.")
    if value.is_conj():  # DLPack's own refusal, as for complex64 (a complex32 view's was torch's internals)
        return np.from_dlpack(value)
    if name in dtypes.BYTES_ONLY:
        crossing, acl = dtypes.BYTES_ONLY[name]
        memory = np.from_dlpack(value.detach().view(getattr(torch, crossing)))
        return DataLessTensor(tuple(value.shape), acl, value.dtype, memory)
    view = dtypes.TORCH_VIEWS.get(name)
    if view is None and name not in dtypes.TORCH_NAMES:  # for the dtype checks to refuse
        return DataLessTensor(tuple(value.shape), DataType.DT_UNDEFINED, value.dtype)
    if view is not None and not value.requires_grad:  # torch refuses to export those: its message below
        return np.from_dlpack(value.view(getattr(torch, view[0]))).view(dtypes.to_numpy(view[1]))
    return np.from_dlpack(value)


def _pending_negation(value) -> bool:
    """A torch tensor whose negation is lazy (a bit torch applies on read): DLPack hands over
    the memory without it, so the values read would have the wrong sign."""
    try:
        return bool(value.is_neg())
    except Exception:  # noqa: BLE001 - not a torch tensor: nothing is pending
        return False


def _without_memory(value, api_name: str, written: bool) -> str | None:
    """The refusal of a torch tensor that holds no memory of its values, or None. DLPack exports
    such a tensor without complaint, over memory that is not its values (a ZeroTensor's null data
    pointer, a FakeTensor's stand-in): NumPy read garbage from it, and a result written there was
    lost, or landed in memory the tensor does not own (a breaker). Such tensors: a ZeroTensor
    (torch._efficientzerotensor, as autograd makes a gradient known to be zero: reads as zeros,
    immutable); a FakeTensor or a meta tensor, whose storage is on the meta device (shape and
    dtype only); a wrapper subclass holding no storage (a null data pointer)."""
    if _torch_of(value) is None:
        return None
    try:
        if value._is_zerotensor():
            if written:
                return (f"{api_name} is a torch ZeroTensor (_is_zerotensor()), which is immutable: it holds no "
                        "memory, and torch refuses every write to it, so the result would be lost; expected a "
                        f"tensor with memory to write into: pass {api_name}.clone() (its zeros, materialised)")
            return (f"{api_name} is a torch ZeroTensor (_is_zerotensor(), e.g. torch._efficientzerotensor, as "
                    "autograd makes a gradient known to be zero), which reads as zeros but holds no memory, "
                    "and DLPack would hand over memory that is not its values; expected a tensor with memory: "
                    f"pass {api_name}.clone() (its zeros, materialised)")
        # the storage's device before data_ptr(): a FakeTensor's data_ptr() warns (deprecated)
        if value.untyped_storage().device.type == "meta":
            actual = (f"a torch {type(value).__name__} on device {value.device} whose storage is on the meta "
                      "device (a FakeTensor or a meta tensor: shape and dtype only, no data)")
        elif value.numel() and not value.data_ptr():  # (an empty tensor's may be null)
            actual = (f"a torch {type(value).__name__} of {value.numel()} elements whose data pointer is null "
                      "(a tensor subclass holding no memory of its own, as a wrapper subclass does)")
        else:
            return None
    except Exception:  # noqa: BLE001 - a tensor torch cannot tell this of: DLPack's own export reports it
        return None
    missing = "no memory to write the result into" if written else "no values to read"
    return f"{api_name} is {actual}: it has {missing}; expected a tensor holding its data in CPU memory"


_SCALAR_TYPES = ((bool, DataType.BOOL), (int, DataType.INT64), (float, DataType.DOUBLE),
                 (complex, DataType.COMPLEX128))


def _scalar_of(dtype: np.dtype) -> str:
    """A scalar's dtype no aclDataType describes, in words: NumPy's, or an ml_dtypes type as the
    tensor refusal words it (a regression breaker: 'a NumPy int4 scalar', as if ACL_INT4 did not
    exist and the type were NumPy's)."""
    if dtypes.is_ml_dtypes(dtype):
        return f"a scalar of {engine.shown_dtype(dtype)}"
    return f"a NumPy {dtype} scalar"


# the operators whose opsnn.torch function reads a 0-d tensor as its scalar (torch.nn.functional's
# forward signatures): the backward functions take numbers only, as torch.ops.aten's
_TORCH_READS_0D = frozenset({"LeakyRelu", "InplaceLeakyRelu", "Hardtanh", "InplaceHardtanh"})


def _as_scalar(value, api_name: str, torch_reads_0d: bool = False) -> aclScalar | None:
    if value is None or isinstance(value, aclScalar):
        return value
    value = checks.held(value)
    if isinstance(value, int) and not checks.int_held(value):  # torch.Scalar: int64 or uint64
        raise AclnnError(Status.ERR_PARAM_INVALID, f"{api_name} must be an int in [-2**63, 2**64) "
                                                   f"(int64 or uint64, as torch takes), got {checks.brief(value)}")
    try:
        if isinstance(value, np.generic):
            acl_dtype = dtypes.from_numpy(value.dtype)
            if acl_dtype == DataType.DT_UNDEFINED and (found := dtypes.ml_bytes(value.dtype)):  # (refused below)
                acl_dtype = found[1]
            if acl_dtype == DataType.DT_UNDEFINED:  # np.longdouble, np.str_, datetime64 ...
                raise AclnnError(Status.ERR_PARAM_INVALID,
                                 f"{api_name} {checks.brief(value)} is {_scalar_of(value.dtype)}, a dtype no "
                                 "aclDataType describes; pass a Python number or a NumPy scalar of an "
                                 "aclDataType (np.float64, np.float32, ...)")
            kind = value.dtype.kind
            return aclScalar(float(value) if kind == "V" else value.item(), acl_dtype)
        for python_type, dtype in _SCALAR_TYPES:
            if isinstance(value, python_type):
                if python_type is int and not -2**63 <= value < 2**63:
                    return aclScalar(float(value), DataType.DOUBLE)  # uint64 range: a double
                return aclScalar(value, dtype)
    except AclnnError as exc:
        if exc.status == Status.ERR_PARAM_INVALID:
            raise
        raise AclnnError(Status.ERR_PARAM_INVALID,
                         f"{api_name} {checks.brief(value)} cannot be made an aclScalar: {exc.message}") from None
    except (OverflowError, TypeError, ValueError) as exc:
        raise AclnnError(Status.ERR_PARAM_INVALID,
                         f"{api_name} {checks.brief(value)} cannot be made an aclScalar: {exc}") from None
    raise AclnnError(Status.ERR_PARAM_INVALID, f"{api_name} must be a number (a Python or NumPy scalar, or a "
                                               f"0-d array), got {type(value).__name__}{_shape_of(value, torch_reads_0d)}")


def _shape_of(value, torch_reads_0d: bool) -> str:
    """A refused scalar's shape, where it has one, and for a 0-d DLPack tensor (a torch scalar
    tensor) the way to pass its number: the refusal had said "got Tensor" alone. opsnn.torch's
    function is named only where it takes such a tensor (``torch_reads_0d``: the forward
    operators; its backward functions refuse one, a breaker)."""
    if isinstance(value, np.ndarray):
        return f" of shape {value.shape}"
    if not hasattr(type(value), "__dlpack__"):
        return ""
    try:
        shape = [int(d) for d in value.shape]
    except Exception:  # noqa: BLE001 - a tensor whose shape cannot be read: named by its type alone
        return ""
    other = ", or call opsnn.torch's function, which takes a 0-d tensor" if torch_reads_0d else ""
    hint = f" (a tensor: pass its number, t.item(){other})" if not shape else ""
    return f" of shape {shape}{hint}"
