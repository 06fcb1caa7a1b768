"""The two-phase engine: ``plan`` (phase 1: every check, promotion, geometry, steps, workspace)
and ``run`` (phase 2: walk the steps). One pipeline for every OpSpec, in CANN's check order:

    null -> dtype lists -> dtype equalities -> rank / shape / broadcast / out shape ->
    op-specific checks -> PromoteType / CanCast -> out overlap -> empty fast path ->
    kernel lookup -> steps

(Without promotion, ``Promotion.SAME``, the result dtype is self's, and CanCast(self, out) runs
with the dtype equalities, where ops-nn's LeakyRelu checks it.)
"""

from __future__ import annotations

import math
import operator

import numpy as np

from . import _fastpath, kernels
from ._core import checks, dtypes, memory, overlap, platform
from ._core.dtypes import DataType
from ._core.executor import Plan, Ref, SlotAllocator, Step, aclOpExecutor
from ._core.shape import broadcast_shape, fmt
from ._core.status import AclnnError, Status
from ._core.tensor import TensorBase, aclScalar, aclTensor
from .registry import OpSpec, Promotion, ScalarConversion

# ``out`` value meaning "allocate the result" (Pythonic calls without out=): out checks are
# satisfied by construction and the engine calls ``allocate(shape, dtype)`` once it knows both.
ALLOCATE = object()

# Cast has kernels to these out dtypes only; CanCast may allow others (fp8, complex32), which then
# fail where CANN's l0 Cast returns null: 561103 (spec §2.5, §2.9).
_CAST_TARGETS = frozenset({DataType.FLOAT16, DataType.FLOAT, DataType.DOUBLE, DataType.BF16,
                           DataType.COMPLEX64, DataType.COMPLEX128})


# Phase-1 plan cache, keyed like CANN's aclnn executor cache: op, SoC, and per argument its kind,
# dtype, shape, strides and format, scalar dtypes and exact values, and flags. Every check in
# _plan_uncached is a function of these -- except the ones that read memory addresses (out
# overlapping an input) or that an operator adds (spec.extra_checks), which a hit runs again.
# A hit therefore raises or passes exactly as a full plan would, and returns the same Plan.
_PLAN_CACHE: dict[tuple, Plan] = {}
PLAN_CACHE_SIZE = 1024
# Per operator, the argument objects of its last cached plan that passed every check on device
# tensors: (SoC selection, the objects in parameter order, the Plan, memory.RELEASE_COUNT read
# before those checks). A call passing the very same objects (aclTensor and aclScalar handles,
# whose metadata never changes but for a tensor's move, a release; the CANN samples' loop) under
# the same selection gets that Plan after the operator's own checks, without the key or the
# out-overlap check, whose outcomes could not differ -- while no release (a free, a destroy, a
# move) has happened since the checks began (a handle or the memory they looked at may be gone:
# a destroy racing the checks on another thread had left a destroyed handle here). Dropped at
# any release (memory.RELEASE_HOOKS), so it keeps nothing freed alive; host arrays are never
# kept, as the memo would keep them alive.
_LAST_CHECKED: dict[str, tuple] = {}
memory.RELEASE_HOOKS.append(_LAST_CHECKED.clear)
_DEVICE_ONLY = {aclTensor}


def plan(spec: OpSpec, args: dict, selection: str | None = None, allocate=None) -> aclOpExecutor:
    """Phase 1. ``args`` maps every param name to a tensor handle, aclScalar, bool or None;
    ``selection`` names the SoC to plan for (a profile's name, or ``platform.current_name()``'s
    value read earlier), else the one in force now.

    Returns a bound executor; raises AclnnError (161001, 161002, 361001, 561003, 561103). Repeated
    calls with the same metadata reuse the cached Plan (see ``plan_key``); a call passing the very
    handle objects of its operator's last checked one also skips the key and the out-overlap
    check (``_LAST_CHECKED``).
    """
    # the SoC selection is read once: the key and an uncached plan both follow it, though another
    # thread's set_soc may land in between (a plan checked for one SoC under another's key)
    if selection is None:
        selection = platform.current_name()
    objects = tuple(map(args.get, spec.param_names))
    count = memory.RELEASE_COUNT  # read first: a release during the checks moves it
    last = _LAST_CHECKED.get(spec.name)
    if last is not None and last[3] == count and last[0] == selection and all(map(operator.is_, last[1], objects)):
        executor = _bind_cached(spec, args, last[2], allocate, overlap_checked=True)
    else:
        executor, cached = _plan_checked(spec, args, allocate, selection)
        # device handles only: host arrays (the Pythonic path's) would be kept alive
        if cached and set(map(type, executor.tensors.values())) == _DEVICE_ONLY:
            _LAST_CHECKED[spec.name] = (selection, objects, executor.plan, count)
    if executor.plan.steps:
        # a kernel is found now, as CANN finds it in GetWorkspaceSize: a $OPSNN_BACKEND naming no
        # usable backend is 561003 here, after the argument checks (0.15 us: a dict lookup)
        _backend(spec)
    return executor


def _backend(spec: OpSpec, name: str | None = None):
    """``kernels.get(name)``; its 561003 (a $OPSNN_BACKEND naming no usable backend, at phase 1
    or, changed since, at a launch) names the operator, as every other refusal does."""
    try:
        return kernels.get(name)
    except AclnnError as exc:
        raise checks.fail(spec.name, exc.message, exc.status) from None


def _plan_checked(spec: OpSpec, args: dict, allocate, selection: str) -> tuple[aclOpExecutor, bool]:
    """Every check, or a plan-cache hit's (``_bind_cached``): the bound executor, and whether
    its Plan is in the plan cache."""
    key = plan_key(spec, args, selection)
    try:
        cached = _PLAN_CACHE.get(key) if key is not None else None
    except TypeError:  # an unhashable dim (a torch SymInt from a fake tensor): not cached
        key = cached = None
    if cached is not None:
        return _bind_cached(spec, args, cached, allocate), True
    executor = _plan_uncached(spec, args, selection, allocate)
    if key is not None:
        if len(_PLAN_CACHE) >= PLAN_CACHE_SIZE:
            _PLAN_CACHE.clear()
        _PLAN_CACHE[key] = executor.plan
    return executor, key is not None


def plan_key(spec: OpSpec, args: dict, selection: str) -> tuple | None:
    """The plan-cache key of a phase-1 call under the SoC ``selection`` (a profile's name or
    ``platform.current_name()``), or None when it is not cached (a missing, destroyed or foreign
    argument, a complex or NaN scalar: those take the full path every time)."""
    parts: list = [spec.name, selection]
    for p in spec.params:
        value = args.get(p.name)
        if p.kind == "tensor":
            if value is ALLOCATE:
                parts.append(None)
            elif isinstance(value, TensorBase) and not getattr(value, "destroyed", False):
                parts.append((type(value), value.dtype, value.shape, value.strides, value.format))
            else:
                return None
        elif p.kind == "scalar":
            if type(value) is not aclScalar or value.destroyed or value.dtype in dtypes.COMPLEX:
                return None
            number = value.value
            as_float = float(number)
            if as_float != as_float:
                return None
            parts.append((value.dtype, type(number), number, math.copysign(1.0, as_float)))
        elif type(value) in (bool, np.bool_):
            parts.append((type(value), bool(value)))
        else:
            return None
    return tuple(parts)


def _bind_cached(spec: OpSpec, args: dict, cached: Plan, allocate, overlap_checked: bool = False) -> aclOpExecutor:
    """A plan-cache hit: rerun the checks that can differ for equal keys, in _plan_uncached's
    order (operator checks, then allocation or the out-overlap check, unless ``overlap_checked``:
    the very handles of ``_LAST_CHECKED``), and bind the Plan."""
    for check in spec.extra_checks:
        check(spec.name, args)
    if args["out"] is ALLOCATE:
        args["out"] = _wrap_allocated(allocate(cached.out_shape, cached.promoted))
    elif not overlap_checked:
        check_out_overlap(spec, args)
    return aclOpExecutor(cached, {p.name: args[p.name] for p in spec.params if p.kind == "tensor"})


def clear_plan_cache() -> None:
    _PLAN_CACHE.clear()
    _LAST_CHECKED.clear()


def _dtype_in(op: str, spec: OpSpec, table, dtype, api_name: str, profile: platform.SocProfile,
              what: str = "tensor") -> None:
    """The SoC's dtype-list check of one argument; its refusal names the SoCs whose list has the
    dtype and that have a kernel for the operator, or says none does."""
    allowed = table.for_profile(profile)
    if dtype in allowed:
        return
    elsewhere = tuple(p.name for p in platform.PROFILES.values()
                      if dtype in table.for_profile(p) and p.name not in spec.unsupported_socs)
    checks.dtype_in(op, dtype, allowed, api_name, profile.name, what, elsewhere)


def current_profile(op: str, selection: str | None = None) -> platform.SocProfile:
    """The SoC in force, or the one a selection read earlier names (``platform.current_name()``'s
    value). An unknown name can only come from $OPSNN_SOC (set_soc and use_soc check theirs): the
    runtime cannot say which SoC it runs on, ACLNN_ERR_RUNTIME_ERROR (361001), as a failed
    runtime query is in CANN; not an opsnn bug (561000)."""
    try:  # (the message names $OPSNN_SOC)
        return platform.profile_of(selection) if selection else platform.current()
    except ValueError as exc:
        raise AclnnError(Status.ERR_RUNTIME_ERROR, f"{op}: {exc}") from None


def _plan_uncached(spec: OpSpec, args: dict, selection: str, allocate=None) -> aclOpExecutor:
    """Phase 1 without the cache: every check, in CANN's order, then the steps."""
    op = spec.name
    _check_presence(spec, args)
    # the SoC is read after the null checks, as ops-nn reads it first inside its dtype checks:
    # an unknown $OPSNN_SOC (361001) does not hide a null argument (161001)
    profile = current_profile(op, selection)
    out = args["out"]
    inputs = {p.name: args[p.name] for p in spec.inputs}
    self_t = inputs["self"]

    # dtype lists, then equalities; a host array's dtype that no aclDataType describes fails
    # its list here, where CANN's check would refuse it (after every null check)
    for p in spec.inputs:
        _defined_dtype(op, p, inputs[p.name], profile)
        _dtype_in(op, spec, p.dtypes, inputs[p.name].dtype, p.api_name, profile)
    if out is not ALLOCATE:
        _defined_dtype(op, spec.output, out, profile, _out_dtypes_text(spec, inputs))
        if spec.output.dtypes is not None:
            _dtype_in(op, spec, spec.output.dtypes, out.dtype, "out", profile)
    for p in spec.scalars:
        if p.dtypes is not None:
            _dtype_in(op, spec, p.dtypes, args[p.name].dtype, p.api_name, profile, what="scalar")
    if spec.promotion is Promotion.SAME:
        for p in spec.inputs:
            checks.same_dtype(op, inputs[p.name].dtype, self_t.dtype, p.api_name, "self")
    if spec.out_equals_self and not spec.out_dtype_after_shapes and out is not ALLOCATE:
        checks.same_dtype(op, out.dtype, self_t.dtype, "out", "self")
    if spec.promotion is Promotion.SAME and out is not ALLOCATE:
        _check_cast(op, self_t.dtype, out.dtype)  # result dtype known: ops-nn checks CanCast here

    # ranks and shapes
    for p in spec.inputs:
        checks.max_rank(op, inputs[p.name].shape, p.api_name)
    out_shape = _out_shape(spec, inputs)
    if out is not ALLOCATE:
        ref = "the broadcast result" if spec.broadcast else "self"
        checks.same_shape(op, out.shape, out_shape, "out", ref)
        if spec.out_equals_self and spec.out_dtype_after_shapes:
            checks.same_dtype(op, out.dtype, self_t.dtype, "out", "self")

    for check in spec.extra_checks:
        check(op, args)

    promoted = _promote(spec, inputs)
    if out is ALLOCATE:
        out = args["out"] = _wrap_allocated(allocate(out_shape, promoted))
    else:
        if spec.promotion is Promotion.PROMOTE:
            _check_cast(op, promoted, out.dtype)
        check_out_overlap(spec, args)  # opsnn's own check, after all of CANN's

    tensors = {p.name: args[p.name] for p in spec.params if p.kind == "tensor"}
    # Empty fast path: success, workspace 0, nothing launched. An empty input of any operator
    # makes its (broadcast) output empty, so this covers DECISIONS 6 and 11 for every op.
    if 0 in out_shape:
        return aclOpExecutor(Plan(op, (), (), out_shape, promoted, step_names(spec)), tensors)
    if profile.name in spec.unsupported_socs:
        supported = "; ".join(p.product_line for p in platform.PROFILES.values()
                              if p.name not in spec.unsupported_socs)
        raise checks.fail(op, f"no {spec.kernel_name} kernel for {profile.name} "
                              f"({profile.product_line}); the operator is not supported on this "
                              f"product line. Supported: {supported}", Status.ERR_INNER_FIND_KERNEL_ERROR)
    if out.dtype != promoted and out.dtype not in _CAST_TARGETS:
        raise checks.fail(op, f"no Cast kernel from {dtypes.name(promoted)} to "
                              f"{dtypes.name(out.dtype)}", Status.ERR_INNER_NULLPTR)
    return aclOpExecutor(_build_steps(spec, args, out_shape, promoted), tensors)


def run(executor: aclOpExecutor, workspace, backend: str | None = None, fused: bool = False) -> None:
    """Phase 2: execute the recorded steps; ``workspace`` is a uint8 buffer of at least
    ``executor.workspace_size`` bytes (or None when that is 0), or a function returning one.

    ``fused``: the caller does not look at the workspace (the Pythonic API owns it), so a
    backend that can (numba) may run the whole chain as one pass reading the inputs in place;
    the results are the same bits, and a workspace given as a function is never allocated. The
    aclnn API runs the steps, temporaries in the workspace.
    """
    if not executor.plan.steps:
        return
    impl = kernels.get(backend)
    arrays = {name: t.array() for name, t in executor.tensors.items()}
    if fused and hasattr(impl, "program"):
        bound = impl.program(executor.plan, {name: a.dtype for name, a in arrays.items()})
        if bound is not None:
            try:
                impl.run_fused(bound, arrays)
                return
            except impl.Fallback:
                pass  # a layout the compiled walkers cannot address: run the steps below
    if callable(workspace):
        workspace = workspace()
    _exec_steps(_prepare_steps(executor.plan, arrays, workspace), impl)


def bind(spec: OpSpec, executor: aclOpExecutor, workspace: np.ndarray | None,
         backend: str | None = None, repeated: bool = False):
    """Phase 2 prepared now, run later (an aclnn launch): a no-argument function that runs the
    steps on the arrays the tensors view *now*, so destroying an aclTensor after the launch
    does not reach the queued work (the kernel got addresses, as on a device).

    A plan that is a single Kernel step writing ``out`` in place (no temporaries: nothing in the
    workspace to observe) binds the compiled call of that step once; the rest walk the steps,
    each prepared once on its fixed operands when the call will be ``repeated`` (a repeatable
    executor; preparing costs more than one run), else through the compiled calls of the steps
    for such a layout (``_fastpath.step_call``; a 4-element float32 LeakyReluBackward with a
    transposed self ran its Contiguous and Kernel steps in ~7 us so, ~44 through the backend's
    ``launch`` and ``copy``, which plan each call anew).
    """
    plan = executor.plan
    if not plan.steps:
        return _nothing
    arrays = {name: t.array() for name, t in executor.tensors.items()}
    impl = _backend(spec, backend)
    if not plan.slots and hasattr(impl, "program"):
        args = [arrays[p.name] for p in spec.params if p.kind == "tensor"]
        call = _bound_calls(plan, impl, args,
                            lambda: _fastpath.compiled(impl, spec, plan, arrays, check_overlap=False))
        if call is not None:
            def run_compiled() -> None:
                if call(*args) is None:  # a replanned walker did not compile: the steps, on NumPy
                    _exec_steps(_prepare_steps(plan, arrays, None), impl)
            return run_compiled
    prepared = _prepare_steps(plan, arrays, workspace)
    if repeated and hasattr(impl, "bind_step"):
        calls = [impl.bind_step(step, srcs, dst) for step, srcs, dst in prepared]

        def run_bound() -> None:
            for call in calls:
                call()
        return run_bound
    operands = [a for _, srcs, dst in prepared for a in (*srcs, dst)]
    calls = _bound_calls(plan, impl, operands,
                         lambda: [_fastpath.step_call(impl, *step) for step in prepared])
    return lambda: _exec_steps(prepared, impl, calls)


# bind()'s compiled calls by plan and array layout: a fresh executor of a cached plan (the
# common two-phase pattern) reuses the calls its predecessors built
_BOUND_CALLS: dict[tuple, tuple] = {}


def _bound_calls(plan: Plan, impl, operands: list, build):
    """``build()``'s result, cached for ``plan`` on ``impl`` and operands laid out like these."""
    # everything that fixes a compiled call's argument types (see numba_backend.entry_point)
    key = (id(plan), impl.NAME, tuple((a.dtype, a.shape, a.strides, a.flags.aligned) for a in operands))
    hit = _BOUND_CALLS.get(key)
    if hit is None or hit[0] is not plan:
        hit = (plan, build())
        if len(_BOUND_CALLS) >= PLAN_CACHE_SIZE:
            _BOUND_CALLS.clear()
        _BOUND_CALLS[key] = hit  # holds the plan: its id is not reused while cached
    return hit[1]


def _nothing() -> None:
    pass


def _prepare_steps(plan: Plan, arrays: dict, workspace: np.ndarray | None) -> list:
    """Each step with its operands resolved: the bound tensors' views, or views of the workspace
    at the slots' byte offsets (one view per slot)."""
    slots = []
    for slot in plan.slots:
        np_dtype = dtypes.to_numpy(slot.dtype)
        end = slot.offset + math.prod(slot.shape) * np_dtype.itemsize
        slots.append(workspace[slot.offset:end].view(np_dtype).reshape(slot.shape))

    def resolve(ref: Ref) -> np.ndarray:
        return arrays[ref.tensor] if ref.tensor is not None else slots[ref.slot]

    return [(step, [resolve(s) for s in step.srcs], resolve(step.dst)) for step in plan.steps]


def _exec_steps(prepared: list, impl, calls: list | None = None) -> None:
    """Run the prepared steps in order: each through its compiled call in ``calls`` where it has
    one that ran, else through the backend's ``launch`` (Kernel) or ``copy``."""
    for k, (step, srcs, dst) in enumerate(prepared):
        if calls is not None and calls[k] is not None and calls[k](*srcs, dst) is not None:
            continue
        with np.errstate(all="ignore"):
            if step.kind == "Kernel":
                impl.launch(step, srcs, dst)
            else:  # Contiguous / Cast / ViewCopy: a copy; a Cast rounds once to nearest even
                getattr(impl, "copy", dtypes.cast_into)(dst, srcs[0])


class _OutputKnown(Exception):
    """Internal: stops ``infer_output``'s planning once the output geometry is decided."""


def infer_output(spec: OpSpec, args: dict) -> tuple[tuple[int, ...], DataType]:
    """Phase 1 without data: ``(shape, dtype)`` of the output ``plan`` allocates for ``args``.

    Runs ``plan`` with ``out`` = ALLOCATE and stops when it allocates, so every check before
    that point raises the same AclnnError, and shape/dtype come from the spec (broadcast or self,
    PROMOTE or SAME) through the one pipeline. Tensor handles need metadata only (their data is
    never read). Used by opsnn.torch's fake/meta kernels.
    """
    found: list[tuple[tuple[int, ...], DataType]] = []

    def allocate(shape, dtype):
        found.append((tuple(shape), DataType(dtype)))
        raise _OutputKnown

    try:
        executor = plan(spec, {**args, "out": ALLOCATE}, allocate=allocate)
    except _OutputKnown:
        return found[0]
    return executor.plan.out_shape, executor.plan.promoted  # a plan that never allocated


# ---- helpers -----------------------------------------------------------------------------

_NUMPY_KINDS = {"U": "string", "S": "bytes", "V": "structured or raw (void)"}


def shown_dtype(given) -> str:
    """A dtype no aclDataType describes, as a refusal names it: NumPy's name, and for a string,
    bytes or structured dtype its layout too (a breaker: "str64", "void32" and "record32" hid
    that the array held text or records); for torch's int4, uint1 and float4_e2m1fn_x2 and
    ml_dtypes' int4, uint1 and float4_e2m1fn, why ACL_INT4 / ACL_UINT1 / ACL_FLOAT4_E2M1 do not
    describe them (a breaker: the refusal read as if no such aclDataType existed); another
    ml_dtypes type as ml_dtypes'."""
    name = getattr(given, "name", given)
    kind = _NUMPY_KINDS.get(given.kind) if isinstance(given, np.dtype) else None
    if isinstance(given, np.dtype) and dtypes.is_ml_dtypes(given):
        # kind "V" as a record's, but ml_dtypes' (a breaker: its int4 was worded as a record's, as
        # if ACL_INT4 did not exist); its complex32 is kind "c", named as NumPy's own had been
        packed = dtypes.ML_UNPACKED.get(name)
        if packed is None:
            return f"{name} (an ml_dtypes type)"
        return f"{name} (ml_dtypes' {name}: one element a byte, where {packed.acl_name} packs {dtypes.packing(packed)})"
    if kind:
        return f"{name} ({given}, a NumPy {kind} dtype)"
    packed = dtypes.TORCH_UNPACKED.get(str(name).removeprefix("torch."))
    if packed is not None:
        return f"{name} (one element a byte, where {packed.acl_name} packs {dtypes.packing(packed)})"
    paired = dtypes.TORCH_PAIRED.get(str(name).removeprefix("torch."))
    if paired is not None:
        # (its values by their aclDataType's name: the table is for any such packed dtype, not fp4's alone)
        return (f"{name} (an element a byte holding {8 // dtypes.BITS[paired]} {paired.name.lower()} values, "
                f"where {paired.acl_name} packs {dtypes.packing(paired)}, each an element)")
    return str(name)


def _defined_dtype(op: str, param, tensor, profile: platform.SocProfile, expected: str = "") -> None:
    """Refuses (161002) a host array (or torch tensor) whose dtype no aclDataType describes (an
    object, string or byte-swapped array): that dtype, the list the parameter takes on this SoC
    (or ``expected``, what the later checks of a parameter without a list ask), and how to make a
    byte-swapped one native."""
    if tensor.dtype != DataType.DT_UNDEFINED:
        return
    given = tensor.given_dtype
    allowed = param.dtypes.for_profile(profile) if param.dtypes is not None else ()
    swapped = isinstance(given, np.dtype) and given.byteorder not in "=|" and given.itemsize > 1  # (one byte: none)
    text = (f"{param.api_name} has dtype {shown_dtype(given)}"
            f"{' in non-native byte order' if swapped else ''}, which no aclDataType describes")
    if allowed:
        text += f"; it must be one of [{', '.join(dtypes.name(d) for d in allowed)}] on {profile.name}"
    elif expected:
        text += f"; it must be {expected}"
    native = given.newbyteorder("=") if swapped else None  # (complex32's is ACL_COMPLEX32: BYTES_ONLY)
    if swapped and (dtypes.from_numpy(native) != DataType.DT_UNDEFINED or dtypes.ml_bytes(native)):
        text += "; a.astype(a.dtype.newbyteorder('=')) makes it native"
    raise checks.fail(op, text)


def _out_dtypes_text(spec: OpSpec, inputs: dict) -> str:
    """What out's dtype must be, in words, for an out whose dtype no aclDataType describes: the
    checks that would judge it (same dtype as self, or CanCast from the result) come later."""
    if spec.out_equals_self:
        return f"self's dtype ({dtypes.name(inputs['self'].dtype)})"
    try:
        result = f"the result ({dtypes.name(_promote(spec, inputs))})"
    except AclnnError:  # no common dtype: refused in its turn, after the shape checks
        result = "the result"
    return f"a floating or complex dtype {result} can be cast to"


HANDLE_TYPES = {"tensor": "aclTensor", "scalar": "aclScalar"}  # by parameter kind


def _check_presence(spec: OpSpec, args: dict) -> None:
    """Null checks in CANN's order (161001); a wrong handle type is 161002 at the same point,
    and so is a flag that is no C bool (``checks.c_bool``: a C caller cannot pass one, so no
    CANN check is pre-empted by it; an int 0 or 1, which C converts, becomes the bool here)."""
    for name in spec.null_order:
        param = spec.param(name)
        value = args[name]
        expected = HANDLE_TYPES[param.kind]
        checks.not_null(spec.name, value, param.api_name, expected)
        if value is ALLOCATE:
            continue
        wanted = TensorBase if param.kind == "tensor" else aclScalar
        if not isinstance(value, wanted):
            raise checks.fail(spec.name, f"{param.api_name} must be an {expected} "
                                         f"(from acl.create_{param.kind}), got {type(value).__name__}")
        if getattr(value, "destroyed", False):
            raise checks.fail(spec.name, f"{param.api_name} was already destroyed")
    for param in spec.params:
        if param.kind == "flag":
            value = args[param.name]
            flag = checks.c_bool(value)
            if flag is None:
                raise checks.fail(spec.name, f"{param.api_name} must be a bool (True or False; the int 0 or 1, "
                                             f"as C converts them), got {checks.brief(value)} "
                                             f"({type(value).__name__})")
            args[param.name] = flag


def _out_shape(spec: OpSpec, inputs: dict) -> tuple[int, ...]:
    op = spec.name
    if spec.broadcast:
        shape: tuple[int, ...] = ()
        for p in spec.inputs:
            t = inputs[p.name]
            result = broadcast_shape(shape, t.shape)
            if result is None:
                first = spec.inputs[0]
                raise checks.fail(op, f"the shape of {first.api_name} {fmt(inputs[first.name].shape)} "
                                      f"and the shape of {p.api_name} {fmt(t.shape)} cannot broadcast "
                                      "(each aligned dim must be equal or 1)")
            shape = result
        return shape
    self_shape = inputs["self"].shape
    for p in spec.inputs:
        checks.same_shape(op, inputs[p.name].shape, self_shape, p.api_name, "self")
    return self_shape


def _promote(spec: OpSpec, inputs: dict) -> DataType:
    if spec.promotion is Promotion.SAME:
        return inputs["self"].dtype
    first, *rest = spec.inputs
    promoted = inputs[first.name].dtype
    for p in rest:
        result = dtypes.promote_type(promoted, inputs[p.name].dtype)
        if result == DataType.DT_UNDEFINED:
            raise checks.fail(spec.name, f"{first.api_name} dtype {dtypes.name(promoted)} and "
                                         f"{p.api_name} dtype {dtypes.name(inputs[p.name].dtype)} "
                                         "cannot be promoted to a common dtype")
        promoted = result
    return promoted


def _check_cast(op: str, result: DataType, out: DataType) -> None:
    if not dtypes.can_cast(result, out):
        raise checks.fail(op, f"the result dtype {dtypes.name(result)} cannot be cast to the out "
                              f"dtype {dtypes.name(out)} (integer and bool outputs are not "
                              "supported; use a floating or complex out)")


def _kernel_scalar(spec: OpSpec, param, scalar: aclScalar, self_dtype: DataType) -> float | int:
    """A scalar as the kernel receives it (spec.scalar_conversion), as an exact Python number:
    float32(ToFloat), or ConvertToTensor(scalar, self's dtype) (161002 if C++ has no result)."""
    if spec.scalar_conversion is ScalarConversion.TO_FLOAT:
        return float(scalar.to_float())
    try:
        value = scalar.to_dtype(self_dtype)
    except (OverflowError, ValueError) as exc:
        raise checks.fail(spec.name, f"{param.api_name} cannot be converted to self's dtype "
                                     f"{dtypes.name(self_dtype)}: {exc}") from None
    return int(value) if self_dtype in dtypes.INTEGRAL else float(value)


def _wrap_allocated(arr: np.ndarray) -> TensorBase:
    from ._core.tensor import ArrayTensor

    return ArrayTensor(arr)


def _build_steps(spec: OpSpec, args: dict, out_shape, promoted: DataType) -> Plan:
    """The l2 chain: Contiguous/Cast per input, the kernel, Cast to out, ViewCopy into out."""
    alloc = SlotAllocator()
    steps: list[Step] = []
    kernel_src: dict[str, Ref] = {}
    for p in spec.inputs:
        t = args[p.name]
        ref = Ref(tensor=p.name)
        if not t.is_contiguous:
            dst = alloc.new(t.shape, t.dtype)
            steps.append(Step("Contiguous", (ref,), dst, t.dtype))
            ref = dst
        if t.dtype != promoted:
            dst = alloc.new(t.shape, promoted)
            steps.append(Step("Cast", (ref,), dst, promoted))
            ref = dst
        kernel_src[p.name] = ref

    out = args["out"]
    out_ref = Ref(tensor="out")
    if spec.contiguous_out:  # ops-nn makes out contiguous first; a strided out is copied in
        kernel_dst = out_ref
        if not out.is_contiguous:
            kernel_dst = alloc.new(out_shape, out.dtype)
            steps.append(Step("Contiguous", (out_ref,), kernel_dst, out.dtype))
    elif out.dtype == promoted and out.is_contiguous:
        kernel_dst = out_ref  # ViewCopy redirect: the kernel writes straight into out
    else:
        kernel_dst = alloc.new(out_shape, promoted)

    compute = spec.compute.dtype_for(promoted)
    scalars = tuple((p.name, _kernel_scalar(spec, p, args[p.name], args["self"].dtype))
                    for p in spec.scalars)
    steps.append(Step(
        "Kernel", tuple(kernel_src[name] for name in spec.kernel_inputs), kernel_dst, promoted,
        name=spec.kernel_name, kernel=spec.kernel,
        native=tuple(name in spec.native_inputs for name in spec.kernel_inputs),
        scalars=scalars, compute=compute))

    result = kernel_dst
    if out.dtype != promoted:
        cast_dst = out_ref if out.is_contiguous else alloc.new(out_shape, out.dtype)
        steps.append(Step("Cast", (result,), cast_dst, out.dtype))
        result = cast_dst
    if result != out_ref:
        steps.append(Step("ViewCopy", (result,), out_ref, out.dtype))
    return Plan(spec.name, tuple(steps), tuple(alloc.slots), out_shape, promoted, step_names(spec))


def step_names(spec: OpSpec) -> tuple[tuple[str, str], ...]:
    """``Plan.names``: the steps name each tensor as the aclnn call does, ``gradOutput`` for the
    ``grad_output`` it is bound as, and an in-place call's one tensor selfRef in both roles (a
    breaker: 'Contiguous(self)', 'ViewCopy(ws[1]) -> out' for a call with no self or out;
    another: 'LeakyReluGrad(grad_output, ...' under a line that says gradOutput). A kernel's
    attributes keep the op definition's names (``negative_slope``)."""
    return tuple((p.name, spec.call_name(p)) for p in spec.params
                 if p.kind == "tensor" and spec.call_name(p) != p.name)


def check_out_overlap(spec: OpSpec, args: dict) -> None:
    """Phase-1 check for every operator (docs/reliability.md, "aliasing"): ``out`` must be
    exactly the view of an input (in place: same address, shape, strides and dtype) or share no
    memory with it, and its own elements must be distinct. Anything else is refused (161002):
    a tiled or multi-core kernel would read elements it already wrote, and a write through an
    out whose elements alias would be decided by write order. Device tensors compare their
    address ranges; NumPy arrays their memory (NumPy's exact, bounded ``shares_memory``; a
    device dtype NumPy cannot hold, its bytes). Where that cannot decide, the out is refused
    too, and the message says so."""
    out = args["out"]
    if not isinstance(out, TensorBase) or out.is_empty:
        return
    op = spec.name
    out_layout = overlap.layout(out)
    inner = overlap.internal_overlap(out_layout)
    if inner is not False:
        reason = ("two of its elements share memory (e.g. a 0 stride on a dim > 1, as in a "
                  "broadcast view)") if inner else ("opsnn cannot prove its elements distinct "
                                                     f"(more than {overlap.MAX_ENUMERATE} elements)")
        name = spec.call_name(spec.output)  # in place the caller passed self (selfRef), not an out
        raise checks.fail(op, f"{name} {out.describe()} is not a valid output: {reason}; pass a "
                              f"dense or sliced {name} whose elements are distinct")
    if getattr(out, "unbacked", False):
        return  # no memory yet to overlap: a launch checks again once it has an address (it moved)
    for p in spec.inputs:
        tensor = args[p.name]
        if tensor is out or tensor.is_empty or getattr(tensor, "unbacked", False):
            continue
        lay = overlap.layout(tensor)
        if overlap.same_view(out_layout, lay) or overlap.disjoint_ranges(out_layout, lay):
            continue
        try:
            shared = overlap.shares_memory(out, tensor)
        except AclnnError as exc:  # e.g. the storage was freed after aclCreateTensor
            raise checks.fail(op, f"cannot check out against {p.api_name}: {exc.message}") from None
        if shared is not False:  # undecided counts as overlapping: refused, never computed wrong
            # where the two start, which is all that tells apart two views of one shape and strides
            apart = lay.start - out_layout.start  # in bits
            where = "at out's first" if apart == 0 else \
                f"{checks.bit_size(abs(apart))} {'after' if apart > 0 else 'before'} out's first"
            verdict = "overlap in memory" if shared else \
                "share an address range, and opsnn cannot prove their elements apart,"
            raise checks.fail(op, f"out and {p.api_name} {verdict} without being the same "
                                  f"view (out {out.describe()}, {p.api_name} {tensor.describe()} with its "
                                  f"first element {where}); "
                                  f"pass {p.api_name} itself as out for an in-place update, or an "
                                  "out that shares no memory with it")


def live_executor(executor, who: str, null: Status = Status.ERR_PARAM_NULLPTR) -> aclOpExecutor:
    """``executor`` if it is a live aclOpExecutor; else AclnnError naming ``who`` (the op or the
    aclnn call): ``null`` for a null pointer, 161002 for another type or a destroyed one. The one
    rule for phase 2 (161001 for NULL: CommonOpExecutorRun) and, with their own null code,
    aclSetAclOpExecutorRepeatable and aclDestroyAclOpExecutor (561103: opbase's CHECK_RET on a
    null executor; its magic-number check's 561000 for memory that is no executor stays 161002
    here, as opsnn keeps 561000 for its own bugs)."""
    if checks.is_null(executor):
        raise checks.fail(who, f"executor must be an aclOpExecutor, got a null pointer ({executor!r})", null)
    if not isinstance(executor, aclOpExecutor):
        raise checks.fail(who, f"executor must be an aclOpExecutor, got {type(executor).__name__}")
    if executor.destroyed:
        raise checks.fail(who, f"the executor was already destroyed ({executor.destroyed})")
    return executor


def check_launch(executor, workspace_size, workspace_present: bool, spec: OpSpec) -> None:
    """Phase-2 preconditions (DECISIONS 16, 17): a live executor of this op, enough workspace.
    A null workspace with a size > 0 is 161001 and deletes the executor, as CommonOpExecutorRun
    does, so a C retry with it, undefined on a device, is refused here too."""
    op = spec.name
    live_executor(executor, op)
    # right after the executor's own null check, as CommonOpExecutorRun, which deletes it here
    if checks.is_c_int(workspace_size) and 0 < workspace_size < 2**64 and not workspace_present:
        ran = executor.consumed and not executor.repeatable
        executor.destroy(f"{spec.api_name} deleted it when launched with a null workspace")
        raise checks.fail(op, f"workspace is null but workspaceSize is {checks.counted(workspace_size, 'byte')} "
                              f"(GetWorkspaceSize asked for {executor.workspace_size}); the failed "
                              "launch deleted the executor, as CANN's does"
                              + ("; it had also run already, and single-use executors are released by their "
                                 "launch" if ran else ""), Status.ERR_PARAM_NULLPTR)
    if executor.plan.op != op:  # first: an executor of another operator is wrong whatever its state
        raise checks.fail(op, f"the executor belongs to aclnn{executor.plan.op}, not {spec.api_name}")
    if executor.consumed and not executor.repeatable:
        raise checks.fail(op, "the executor was already run; executors are single use unless "
                              "aclSetAclOpExecutorRepeatable was called")
    if not checks.is_c_int(workspace_size) or not 0 <= workspace_size < 2**64:  # a uint64_t in C
        raise checks.fail(op, f"workspaceSize must be an integer in [0, 2**64) (bytes), got {workspace_size!r}")
    if workspace_size < executor.workspace_size:
        raise checks.fail(op, f"workspaceSize {workspace_size} is smaller than the "
                              f"{executor.workspace_size} bytes GetWorkspaceSize asked for")


__all__ = ["ALLOCATE", "plan", "run", "bind", "infer_output", "check_out_overlap", "check_launch",
           "live_executor", "AclnnError"]
