"""``opsnn.aclnn``: the operators under their C names, two-phase, status codes, never raises.

    workspace_size, executor, ret = aclnnLeakyReluBackwardGetWorkspaceSize(
        grad_output, self, negative_slope, self_is_result, out)
    ret = aclnnLeakyReluBackward(workspace, workspace_size, executor, stream)

Phase 1 does every check and plans the steps (statuses 161001, 161002, 561003, 561103; 361001
where $OPSNN_SOC names no emulated SoC); phase 2 checks the executor, workspace and stream
(161001, 161002, 361001, 561003; a failed launch releases a single-use executor, as CANN's
does), then queues the work on ``stream`` (run by
``acl.rt.synchronize_stream``). An executor made repeatable (aclSetAclOpExecutorRepeatable) runs
until aclDestroyAclOpExecutor; aclSetInputTensorAddr / aclSetOutputTensorAddr move its tensors
to other device memory between launches. ``None``, or the int 0 of a pyACL-style handle variable, stands
for a C null pointer. On failure the text is in
``acl.get_recent_err_msg()``. The SoC in force at phase 1 selects the dtype lists.
"""

from __future__ import annotations

import operator

from . import engine, kernels, registry
from ._core import checks, forksafe, memory, overlap
from ._core.status import AclnnError, Status, boundary
from ._core.executor import aclOpExecutor
from ._core.tensor import aclTensor
from .acl import rt

# a port of C code passes the out-parameters too: pyACL returns them instead
_phase1_failure = boundary(lambda code: (0, None, code), unbound_hint=(
    " (pyACL form: the call returns (workspace_size, executor, ret); C's workspaceSize and"
    " executor out-parameters are not passed)"))
_ret = boundary(lambda code: code)


def _phase1(op: str, **args):
    executor = engine.plan(registry.get(op), args)
    return executor.workspace_size, executor, 0


# Phase 2 checks and claims an executor under this lock, so a single-use executor launched from
# two threads at once runs once (the other call gets 161002), and a destroy cannot interleave.
_LAUNCH_LOCK = forksafe.lock()


def _phase2(op: str, workspace, workspace_size, executor, stream) -> int:
    with _LAUNCH_LOCK:
        last = executor.last_launch if type(executor) is aclOpExecutor else None
        try:
            if last is not None and last.repeats(op, workspace, workspace_size, stream):
                task, target = last, last.called[4]
            else:
                task, target = _checked_launch(op, workspace, workspace_size, executor, stream)
            try:
                target.enqueue(task.label, task)
            except AclnnError as exc:  # the stream was destroyed meanwhile
                raise AclnnError(Status.ERR_RUNTIME_ERROR, f"{op}: launch failed: {exc.message}") from None
        except AclnnError as exc:
            raise _released_by_failure(op, executor, exc, (workspace, workspace_size, stream)) from None
        executor.consumed = True
    return 0


def _released_by_failure(op: str, executor, exc: AclnnError, arguments: tuple) -> AclnnError:
    """The error a failed launch returns, releasing a live single-use executor first where a C
    caller could have passed ``arguments`` (workspace, workspaceSize, stream): opbase's
    CommonOpExecutorRun, once past its null checks, deletes an executor not made repeatable
    whatever its run returns, a failed kernel launch on a bad stream included, so a retry with
    it is a use of freed memory on a device (a breaker's relaunched here). opsnn's own refusals
    of what C's launch would run anyway (a workspace smaller than asked, a destroyed tensor)
    release it too; one for a Python type no C argument has (a float workspaceSize) does not:
    pyACL would have called nothing. A repeatable executor is kept (FinalizeCache there)."""
    workspace, workspace_size, stream = arguments
    c_arguments = (checks.is_c_int(workspace_size) and 0 <= workspace_size < 2**64
                   and all(checks.is_null(a) or checks.is_c_int(a) for a in (workspace, stream)))
    if (type(executor) is not aclOpExecutor or executor.destroyed or executor.repeatable or executor.consumed
            or not c_arguments):
        return exc
    api = registry.get(op).api_name
    executor.destroy(f"{api} released it at a failed launch")
    return AclnnError(exc.status, f"{exc.message}; the failed launch released the executor, as CANN's launch "
                                  "releases one not made repeatable whatever it returns: run GetWorkspaceSize again")


def _checked_launch(op: str, workspace, workspace_size, executor, stream) -> tuple:
    """Every phase-2 check, in order; the launch to queue and the stream to queue it on."""
    spec = registry.get(op)
    address = checks.is_c_int(workspace)
    present = workspace is not None and not (address and workspace == 0)
    engine.check_launch(executor, workspace_size, present, spec)
    if present and not address:
        raise AclnnError(Status.ERR_PARAM_INVALID, f"{op}: workspace must be a device address (int from "
                                                   f"acl.rt.malloc), got {type(workspace).__name__}")
    # the runtime before the tensors: CANN's launch reads no tensor and fails at its first runtime
    # call (361001), so a launch with no runtime says that first, whatever its tensors are
    target = _launch_stream(op, stream)
    size = executor.workspace_size
    task = _Launch.of(spec, executor, int(workspace) if size else None, size)
    task.called = (op, workspace, workspace_size, stream, target)
    return task, target


# How many times a launch checks and binds its tensors again when another thread moved one
# meanwhile (``_Launch``), before refusing: a bound, so a thread moving a tensor on and on cannot
# hold a launch in the loop.
_BIND_TRIES = 100


class _Launch:
    """What a launch captured, queued as the stream task: the views of the executor's tensors
    and workspace, taken at the launch (a later aclDestroyTensor does not reach the queued
    work), and the allocations they live in, checked again when the task runs (memory freed
    before then fails the task, where a device would fault).

    A repeatable executor keeps its last _Launch and reuses it for the next launch with the
    same workspace and backend while it is intact: the launch checks then reduce to flag reads
    (and a failed one reruns the full checks, which say what is wrong)."""

    def __init__(self, spec, executor: aclOpExecutor, workspace: int | None, size: int):
        self.label = spec.api_name
        self.called = None  # (op, workspace, workspace_size, stream, target) of its last checked launch
        self.workspace = workspace
        self.backend = kernels.default_name()
        self.plan = executor.plan
        self.tensors = tuple(executor.tensors.values())
        self.handles = tuple(t for t in self.tensors if isinstance(t, aclTensor))
        for _ in range(_BIND_TRIES):
            # the tensors' move counts, read first, which the checks and the views must both see
            # unchanged: a move on another thread (acl.set_raw_tensor_addr takes no launch lock)
            # landing after the checks had bound an unchecked address, which intact() then took
            # for checked (a breaker: out moved onto self's partly, written without the overlap
            # refusal); counts, so one there and back (A -> B -> A) is seen as well
            self.moves = tuple(t.moved for t in self.handles)
            self.verified = memory.RELEASE_COUNT  # read first: a release during the checks moves it
            self.memory = _check_bound_tensors(spec, executor, workspace, size)
            buffer = None
            if size:
                alloc = self.memory[-1][1]
                start = workspace - alloc.addr
                buffer = alloc.buffer[start:start + size]
            self.run = engine.bind(spec, executor, buffer, repeated=executor.repeatable)
            if tuple(t.moved for t in self.handles) == self.moves:
                return  # (a move after this is seen by intact(): the next launch checks again)
        raise AclnnError(Status.ERR_PARAM_INVALID, f"{spec.name}: the tensors' addresses changed during each of "
                                                   f"{_BIND_TRIES} tries to check and bind them (moved on another "
                                                   "thread by acl.set_raw_tensor_addr / aclSetInputTensorAddr as "
                                                   "the launch ran); move a tensor before or after a launch, not "
                                                   "during it")

    @classmethod
    def of(cls, spec, executor: aclOpExecutor, workspace: int | None, size: int) -> "_Launch":
        """The launch to queue: the executor's last one (repeatable), or the operator's last
        launch of a fresh executor that bound what this one would (``binds``: the CANN samples'
        loop of GetWorkspaceSize, launch, synchronize on the same tensors), while the workspace
        is the same and ``current()``; else a new one, after the full checks."""
        last = executor.last_launch
        if last is None and not executor.repeatable:
            last = _RECENT.get(spec.name)
            if last is not None and not last.binds(executor):
                last = None
        if last is not None and last.workspace == workspace and last.current():
            return last
        launch = cls(spec, executor, workspace, size)  # the full checks: their 161002 messages
        if executor.repeatable:
            executor.last_launch = launch
        else:
            _RECENT[spec.name] = launch
        return launch

    def binds(self, executor: aclOpExecutor) -> bool:
        """Whether this launch bound what ``executor`` would bind: the same Plan object (a plan
        cache hit: phase 1's checks passed on the same metadata) and the very tensor objects,
        whose metadata never changes but for a move (aclSetInputTensorAddr), which ``current()``
        sees; the launch checks are functions of these, of the workspace and of what
        ``current()`` tells."""
        tensors = executor.tensors
        return (self.plan is executor.plan and len(self.tensors) == len(tensors)
                and all(map(operator.is_, self.tensors, tensors.values())))

    def repeats(self, op: str, workspace, workspace_size, stream) -> bool:
        """Whether a relaunch passes the very argument objects of this launch's last checked one,
        and nothing they were checked against has changed since: then every phase-2 check has the
        outcome it had (they are functions of those arguments, of the executor -- repeatable,
        not destroyed while it holds this launch -- and of what intact(), the stream (acl.finalize
        and destroy_stream close it) and the backend selection below tell), and the launch skips
        them (~1 us of ~4 us for a 4-element relaunch + synchronize). Identity, not equality:
        512.0 == 512, and a float workspaceSize is refused."""
        called = self.called
        return (called is not None and called[1] is workspace and called[2] is workspace_size
                and called[3] is stream and called[0] == op and not called[4].closed
                and self.current())

    def current(self) -> bool:
        """Still what a launch would bind now: the backend it bound is the one selected, and
        intact()."""
        return self.backend == kernels.default_name() and self.intact()

    def intact(self) -> bool:
        """What _check_bound_tensors verified still holds: same tensors and workspace range (so
        the overlap verdicts stand); only a destroy, a free or a move of a tensor
        (aclSetInputTensorAddr, set_raw_tensor_addr: its ``moved`` count) can have happened since,
        and none has while memory.RELEASE_COUNT is where it was when this was last verified."""
        count = memory.RELEASE_COUNT
        if count == self.verified:
            return True
        for tensor, moves in zip(self.handles, self.moves):
            if tensor.destroyed or tensor.moved != moves:
                return False
        for _, alloc in self.memory:
            if not alloc.live:
                return False
        self.verified = count
        return True

    def __call__(self) -> None:
        if self.verified != memory.RELEASE_COUNT:
            for what, alloc in self.memory:
                if not alloc.live:
                    raise AclnnError(Status.ERR_PARAM_INVALID, f"{what}: the device memory at {alloc.addr:#x} was "
                                                               "already freed when the task ran")
        self.run()


# Per operator, the last launch of a fresh (single-use) executor (``_Launch.of``); dropped at any
# free or destroy, so it never keeps freed device memory alive.
_RECENT: dict[str, _Launch] = {}
memory.RELEASE_HOOKS.append(_RECENT.clear)


def _check_bound_tensors(spec, executor: aclOpExecutor, workspace: int | None, size: int) -> list:
    """At launch: the executor's tensors are alive (not destroyed, memory not freed since phase
    1), ``out`` still passes phase 1's overlap check where a tensor was given a new address
    since its creation (aclSetInputTensorAddr: that check read the addresses), and the workspace
    is ``size`` bytes of live device memory that no tensor uses (161002).
    Returns ``(what, allocation)`` for each tensor's data, then for the workspace (when ``size``):
    what the queued task checks again when it runs."""
    op = spec.name
    names = {p.name: spec.call_name(p) for p in spec.params}  # as the caller wrote it: selfRef in place
    found = []  # (api name, allocation, tensor)
    for key, tensor in executor.tensors.items():
        name = names.get(key, key)
        if getattr(tensor, "destroyed", False):
            advice = ("a repeatable executor's tensors live until its last launch is done; destroy them "
                      "after aclDestroyAclOpExecutor" if executor.repeatable else
                      "destroy tensors only after the launch")
            raise AclnnError(Status.ERR_PARAM_INVALID, f"{op}: {name} was destroyed (aclDestroyTensor or "
                                                       f"aclDestroyTensorList) after GetWorkspaceSize; {advice}")
        if isinstance(tensor, aclTensor) and tensor.unbacked:
            setter = "aclSetOutputTensorAddr" if key == spec.output.name else "aclSetInputTensorAddr"
            raise AclnnError(Status.ERR_PARAM_INVALID, f"{op}: {name} has no device memory: its tensorData is a "
                                                       f"null pointer; give it its storage's address with {setter} "
                                                       "(a repeatable executor) or acl.set_raw_tensor_addr before "
                                                       "the launch")
        # at the null address now, only a view of no elements is left (create_tensor takes it, as C
        # callers pass nullptr there): nothing to bind, its storage never read, no memory looked up
        if isinstance(tensor, aclTensor) and tensor.storage_nbytes and tensor.addr:
            try:  # the tensor's cached view answers while its allocation is live
                alloc = tensor.allocation or memory.DEVICE.locate(tensor.addr, tensor.storage_nbytes,
                                                                  f"{name} data")[0]
            except AclnnError as exc:
                what = (f"{name}'s address, given by aclSetInputTensorAddr / aclSetOutputTensorAddr / "
                        "aclSetRawTensorAddr, is not live device memory holding its storage" if tensor.moved else
                        f"{name}'s device memory is gone")
                raise AclnnError(Status.ERR_PARAM_INVALID, f"{op}: {what}: {exc.message}") from None
            found.append((name, alloc, tensor))
    if any(tensor.moved for _, _, tensor in found):
        engine.check_out_overlap(spec, executor.tensors)
    allocations = [(f"{name}'s data", alloc) for name, alloc, _ in found]
    if not size:
        return allocations
    try:
        ws_alloc, _ = memory.DEVICE.locate(workspace, size, "workspace")
    except AclnnError as exc:
        raise AclnnError(Status.ERR_PARAM_INVALID, f"{op}: workspace must be {size} bytes of live device memory "
                                                   f"(from acl.rt.malloc): {exc.message}") from None
    lo, hi = workspace * 8, (workspace + size) * 8
    for name, alloc, tensor in found:
        if alloc is not ws_alloc or tensor.is_empty:
            continue  # another allocation: no overlap possible
        lay = overlap.layout(tensor)
        if lay.lo < hi and lo < lay.hi:
            raise AclnnError(Status.ERR_PARAM_INVALID, f"{op}: the workspace [{workspace:#x}, {workspace + size:#x}) "
                                                       f"overlaps {name}'s data; the temporaries would overwrite it. "
                                                       "Allocate the workspace separately")
    return allocations + [("the workspace", ws_alloc)]


def _launch_stream(op: str, stream):
    """The live stream to launch on; a runtime that is not initialised, no device set, or a
    stream that does not exist, is a failed runtime call: ACLNN_ERR_RUNTIME_ERROR (361001)."""
    try:
        rt.STATE.require_device("kernel launch")
        return rt.STATE.streams.get(stream)
    except AclnnError as exc:
        raise AclnnError(Status.ERR_RUNTIME_ERROR, f"{op}: launch failed: {exc.message}") from None


@_phase1_failure
def aclnnLeakyReluBackwardGetWorkspaceSize(grad_output, self, negative_slope, self_is_result, out):
    """Phase 1 of LeakyReluBackward: ``out = gradOutput if self > 0 else gradOutput * slope``.

    Args:
        grad_output: aclTensor, FLOAT/FLOAT16/DOUBLE (+BF16 on Ascend910B/910_93/950), 0-8 dims,
            broadcastable with ``self``.
        self: aclTensor, same dtype list; promoted with grad_output (PromoteType).
        negative_slope: aclScalar (FLOAT, FLOAT16, DOUBLE, INT8/16/32/64, UINT8, BOOL, +BF16),
            used as float32 (ToFloat).
        self_is_result: bool (the int 0 or 1 too, as C converts them); True with a negative
            slope is refused (161002), and so is any other value (opsnn's; C has no such value).
        out: aclTensor with the broadcast shape and a dtype the promoted dtype can cast to.

    Returns:
        ``(workspace_size_bytes, executor, ret)``; ret 0, 161001 (a null argument), 161002
        (dtype, rank > 8, shape, out, in-place rule), 561003 (Ascend310B, or $OPSNN_BACKEND
        naming no usable kernel backend) or 561103 (an out dtype no Cast reaches, e.g. FLOAT8).
        Source: ops-nn aclnnLeakyReluBackward; numbers as torch.ops.aten.leaky_relu_backward.
    """
    return _phase1("LeakyReluBackward", grad_output=grad_output, self=self,
                   negative_slope=negative_slope, self_is_result=self_is_result, out=out)


@_ret
def aclnnLeakyReluBackward(workspace, workspace_size, executor, stream) -> int:
    """Phase 2 of LeakyReluBackward: queue the executor on ``stream``.

    Args: workspace (device address or None when the size is 0), workspace_size (bytes),
    executor (from phase 1), stream (int from acl.rt.create_stream; None/0 = default stream).
    Returns ret: 0, 161001 (no executor; a null workspace with workspaceSize > 0, which deletes
    the executor as CANN does), 161002 (executor already run, destroyed or
    of another op; workspace too small, freed or overlapping a tensor; a tensor destroyed or its
    memory freed since phase 1, or still without memory: a null tensorData), 361001 (no such stream, or the runtime is not initialised),
    561003 ($OPSNN_BACKEND changed since phase 1 to name no usable kernel backend).
    A failed launch of a single-use executor (not made repeatable) that a C caller could have
    made (every argument of a C type: not a float workspaceSize) releases it, as opbase's
    CommonOpExecutorRun deletes such an executor whatever its run returns: a later launch or
    aclDestroyAclOpExecutor with it is 161002 (on a device, a use of freed memory); run
    GetWorkspaceSize again. A repeatable one is kept.
    """
    return _phase2("LeakyReluBackward", workspace, workspace_size, executor, stream)


@_phase1_failure
def aclnnHardtanhBackwardGetWorkspaceSize(grad_output, self, min, max, out):  # noqa: A002 - CANN names
    """Phase 1 of HardtanhBackward: ``out = gradOutput if min < self < max or isnan(self) else 0``.

    Args:
        grad_output: aclTensor FLOAT/FLOAT16 (+BF16 on Ascend910B/910_93/950), 0-8 dims.
        self: aclTensor, same dtype and shape as grad_output (no promotion, no broadcast).
        min, max: aclScalar of any dtype, used as float32 (ToFloat); min > max is allowed.
        out: aclTensor with self's dtype and shape.

    Returns:
        ``(workspace_size_bytes, executor, ret)``; ret 0, 161001 (null, checked in the order self,
        gradOutput, out, min, max), 161002 (dtype, rank > 8, shape, out, partial overlap) or
        561003 ($OPSNN_BACKEND naming no usable kernel backend; every SoC has the operator).
        Source: ops-nn aclnnHardtanhBackward (arch35
        kernel: strict bounds); numbers as torch.ops.aten.hardtanh_backward.
    """
    return _phase1("HardtanhBackward", grad_output=grad_output, self=self, min_val=min,
                   max_val=max, out=out)


@_ret
def aclnnHardtanhBackward(workspace, workspace_size, executor, stream) -> int:
    """Phase 2 of HardtanhBackward (see aclnnLeakyReluBackward for arguments and statuses)."""
    return _phase2("HardtanhBackward", workspace, workspace_size, executor, stream)


@_phase1_failure
def aclnnLeakyReluGetWorkspaceSize(self, negative_slope, out):
    """Phase 1 of LeakyRelu: ``out = self if self > 0 else self * float32(negativeSlope)``.

    Args:
        self: aclTensor FLOAT/FLOAT16/DOUBLE (+BF16 on Ascend910B/910_93/950), 0-8 dims.
        negative_slope: aclScalar of any dtype, used as float32 (ToFloat; a complex value gives 0),
            also for DOUBLE self. fp16/bf16 compute in float32 and round once.
        out: aclTensor with self's shape and a dtype self's can cast to (floating or complex);
            self itself (in place) or disjoint from it, not partially overlapping.

    Returns:
        ``(workspace_size_bytes, executor, ret)``; ret 0, 161001 (null, in the order self,
        negativeSlope, out), 161002 (dtype, CanCast, rank > 8, shape, partial overlap), 561003
        (Ascend310P / Ascend310B: not supported there; or $OPSNN_BACKEND naming no usable kernel
        backend) or 561103 (an out dtype no Cast reaches, e.g. FLOAT8). Source: ops-nn aclnnLeakyRelu;
        numbers as torch.ops.aten.leaky_relu.
    """
    return _phase1("LeakyRelu", self=self, negative_slope=negative_slope, out=out)


@_ret
def aclnnLeakyRelu(workspace, workspace_size, executor, stream) -> int:
    """Phase 2 of LeakyRelu (see aclnnLeakyReluBackward for arguments and statuses)."""
    return _phase2("LeakyRelu", workspace, workspace_size, executor, stream)


@_phase1_failure
def aclnnInplaceLeakyReluGetWorkspaceSize(self_ref, negative_slope):
    """Phase 1 of InplaceLeakyRelu: aclnnLeakyRelu with ``out = selfRef`` (same checks and
    numbers). ``self_ref`` may be a strided view; it is made contiguous, computed, copied back.

    Returns ``(workspace_size_bytes, executor, ret)``; ret 0, 161001 (selfRef or negativeSlope
    null), 161002, 561003 or 561103 as for aclnnLeakyReluGetWorkspaceSize.
    """
    return _phase1("InplaceLeakyRelu", self=self_ref, negative_slope=negative_slope, out=self_ref)


@_ret
def aclnnInplaceLeakyRelu(workspace, workspace_size, executor, stream) -> int:
    """Phase 2 of InplaceLeakyRelu (see aclnnLeakyReluBackward for arguments and statuses)."""
    return _phase2("InplaceLeakyRelu", workspace, workspace_size, executor, stream)


@_phase1_failure
def aclnnHardtanhGetWorkspaceSize(self, min, max, out):  # noqa: A002 - CANN names
    """Phase 1 of Hardtanh: ``out = min(max(self, clipValueMin), clipValueMax)`` (ClipByValueV2).

    Args:
        self: aclTensor FLOAT16/FLOAT/INT32/INT64/INT16/INT8/UINT8/DOUBLE (+BF16 on
            Ascend910B/910_93/950), 0-8 dims.
        min, max: aclScalar (clipValueMin, clipValueMax) from the same dtype list (BOOL refused);
            converted to self's dtype (floats round to nearest; for integer self a float bound is
            truncated toward zero and must fit, an integer bound wraps like a C cast).
            min > max is refused (compared as int64 if min's dtype is integral, a float max
            truncated and NaN read as 0, so an int min of 1 with a NaN max is refused; else as
            double, where a NaN bound passes and with floating self makes every element NaN:
            docs/decisions-forward.md F6).
        out: aclTensor with self's dtype and shape; self itself (in place) or disjoint from it.

    Returns:
        ``(workspace_size_bytes, executor, ret)``; ret 0, 161001 (null, in the order self,
        clipValueMin, clipValueMax, out), 161002 (dtype, rank > 8, shape, min > max, a bound with
        no value in self's dtype, partial overlap), 561003 (Ascend310B, or $OPSNN_BACKEND
        naming no usable kernel backend) or 561103. Source:
        ops-math aclnnHardtanh; numbers as torch.clamp / torch.ops.aten.hardtanh.
    """
    return _phase1("Hardtanh", self=self, min_val=min, max_val=max, out=out)


@_ret
def aclnnHardtanh(workspace, workspace_size, executor, stream) -> int:
    """Phase 2 of Hardtanh (see aclnnLeakyReluBackward for arguments and statuses)."""
    return _phase2("Hardtanh", workspace, workspace_size, executor, stream)


@_phase1_failure
def aclnnInplaceHardtanhGetWorkspaceSize(self_ref, min, max):  # noqa: A002 - CANN names
    """Phase 1 of InplaceHardtanh: aclnnHardtanh with ``out = selfRef`` (same checks and
    numbers). ``self_ref`` may be a strided view.

    Returns ``(workspace_size_bytes, executor, ret)``; ret 0, 161001 (null, in the order selfRef,
    clipValueMin, clipValueMax), 161002, 561003 or 561103 as for aclnnHardtanhGetWorkspaceSize.
    """
    return _phase1("InplaceHardtanh", self=self_ref, min_val=min, max_val=max, out=self_ref)


@_ret
def aclnnInplaceHardtanh(workspace, workspace_size, executor, stream) -> int:
    """Phase 2 of InplaceHardtanh (see aclnnLeakyReluBackward for arguments and statuses)."""
    return _phase2("InplaceHardtanh", workspace, workspace_size, executor, stream)


# opbase's executor calls answer NULL with 561103 (phase 2: 161001). Memory without an
# executor's magic number is 561000 there; opsnn keeps 561000 for its own bugs (README), so a
# non-executor stays 161002, as at phase 2.
_EXECUTOR_CALL_NULL = Status.ERR_INNER_NULLPTR


def _unreleased_executor(executor, call: str, consequence: str) -> aclOpExecutor:
    """``executor`` if it is live and not a single-use executor that already ran: CANN's launch
    releases one (its documentation), so any later call with it uses freed memory on a device
    (161002; ``consequence`` says what that would do for ``call``). A null one is 561103."""
    executor = engine.live_executor(executor, call, _EXECUTOR_CALL_NULL)
    if executor.consumed and not executor.repeatable:
        raise checks.fail(call, "the executor already ran; a single-use executor is released by its "
                                "launch" + consequence)
    return executor


@_ret
def aclSetAclOpExecutorRepeatable(executor) -> int:
    """Make an executor reusable by phase 2 until ``aclDestroyAclOpExecutor``. Call it between
    phase 1 and the first launch. Returns ret: 0, 561103 (NULL), 161002 (not an executor,
    destroyed, or a single-use executor that already ran). Source: opbase's
    aclSetAclOpExecutorRepeatable and its documentation (561103 for a null executor)."""
    with _LAUNCH_LOCK:
        executor = _unreleased_executor(executor, "aclSetAclOpExecutorRepeatable",
                                        ". Make it repeatable before the first launch")
        executor.repeatable = True
    return 0


@_ret
def aclDestroyAclOpExecutor(executor) -> int:
    """Destroy an executor; later phase-2 calls with it return 161002. Returns ret: 0, 561103
    (NULL), 161002 (not an executor, already destroyed, or a single-use executor that already
    ran: its launch released it, and on a device this call would free it twice). Sources:
    opbase's aclDestroyAclOpExecutor; its documentation (the phase-2 call releases an executor
    not made repeatable, and this call pairs with aclSetAclOpExecutorRepeatable)."""
    with _LAUNCH_LOCK:
        executor = _unreleased_executor(
            executor, "aclDestroyAclOpExecutor",
            ", so destroying it would free it twice. Only an executor made repeatable "
            "(aclSetAclOpExecutorRepeatable) is destroyed by this call")
        executor.destroy("aclDestroyAclOpExecutor")
    return 0


@_ret
def aclSetInputTensorAddr(executor, index, tensor, addr) -> int:
    """Give the executor's input ``index`` a new device address: ``tensor`` (that input's
    aclTensor) now views the storage at ``addr`` (an int from acl.rt.malloc; None or 0 is the
    null pointer), and the executor's next launch reads it there. Meant for a repeatable
    executor (aclSetAclOpExecutorRepeatable) whose buffers move between launches.

    ``index`` counts the operator's input tensors from 0 in argument order (LeakyReluBackward,
    HardtanhBackward: 0 gradOutput, 1 self; LeakyRelu, Hardtanh: 0 self; the in-place
    operators: 0 selfRef, which is output 0 as well: one aclTensor, moved by either call).

    The address lives in the aclTensor, as in opbase, so every executor bound to ``tensor`` (and
    any later phase 1) sees it; launches already queued keep the address they were queued with.
    Whether ``addr`` holds the tensor's storage is checked at the next launch, as for every
    tensor (161002 there); out's overlap with the inputs (phase 1's check) is checked again then.
    CANN asks for a 32-byte aligned ``addr`` (undefined behaviour otherwise); opsnn, which reads
    memory at any address, does not check it, as ``acl.create_tensor`` does not.

    Returns ret: 0; 561103 (tensor, then executor, null); 161002 (executor not an executor,
    destroyed, or single use and already run; index not an integer in range; tensor not the
    aclTensor bound at that index, or destroyed; addr not an integer in [0, 2**64)). A refused
    call changes nothing. Sources: the aclSetInputTensorAddr documentation (561103 for a null
    executor or tensor, 161002 for an index out of range) and opbase's implementation (null
    checks in this order; the address set on the aclTensor). opbase's 161002 for a tensor given
    as null at phase 1 cannot arise: every opsnn operator's tensors are required (161001 there).
    Where opbase is silent or lax, for the op_api executors ops-nn's operators make: it moves
    the tensor before its executor null check and never reads ``index`` or the executor's state
    (a wrong tensor or index, a destroyed or released executor pass, or touch freed memory);
    opsnn refuses those (161002) and moves nothing. A single-use executor not launched yet is
    accepted, as there: its one launch reads the new address.
    """
    return _set_tensor_addr("aclSetInputTensorAddr", "input", executor, index, tensor, addr)


@_ret
def aclSetOutputTensorAddr(executor, index, tensor, addr) -> int:
    """aclSetInputTensorAddr for the executor's output ``index``: 0 is ``out`` (the in-place
    operators: selfRef, also input 0). Same arguments, checks and statuses. Source: the
    aclSetOutputTensorAddr documentation and opbase's implementation."""
    return _set_tensor_addr("aclSetOutputTensorAddr", "output", executor, index, tensor, addr)


def _set_tensor_addr(call: str, role: str, executor, index, tensor, addr) -> int:
    """The checks of aclSetInputTensorAddr / aclSetOutputTensorAddr in opbase's order (tensor
    null, executor null: 561103), then opsnn's (161002: a C caller's mistakes that opbase
    passes silently: it ignores ``index`` for op_api executors and moves whatever tensor it is
    given), then the move, under the launch lock, so a launch on another thread binds the
    tensors wholly before or wholly after it."""
    if checks.is_null(tensor):
        raise checks.fail(call, f"tensor must be an aclTensor, got a null pointer ({tensor!r})",
                          _EXECUTOR_CALL_NULL)
    with _LAUNCH_LOCK:
        executor = _unreleased_executor(
            executor, call, ", so its tensors can no longer be given addresses. Make it repeatable "
                            "(aclSetAclOpExecutorRepeatable) before its first launch")
        spec = registry.get(executor.plan.op)
        params = spec.inputs if role == "input" else (spec.output,)
        names = [spec.call_name(p) for p in params]
        if not checks.is_c_int(index) or not 0 <= index < len(params):
            listed = ", ".join(f"{k} {name}" for k, name in enumerate(names))
            raise checks.fail(call, f"index must be an integer in [0, {len(params)}) ({spec.api_name}'s "
                                    f"{role}s: {listed}), got {index!r}")
        bound = executor.tensors[params[index].name]
        if tensor is not bound:
            raise checks.fail(call, f"tensor must be the aclTensor the executor's {role} {index} "
                                    f"({names[index]}) was given at GetWorkspaceSize, {bound!r}; got "
                                    f"{_bound_as(spec, executor, tensor)}")
        if tensor.destroyed:
            raise checks.fail(call, f"tensor ({names[index]}) was already destroyed (aclDestroyTensor or "
                                    "aclDestroyTensorList)")
        tensor.set_storage_addr(checks.device_addr(call, addr))
    return 0


def _bound_as(spec, executor: aclOpExecutor, tensor) -> str:
    """``tensor`` as a refusal names it: with the roles it has in ``executor``, if any."""
    roles = [f"{role} {k} ({spec.call_name(p)})"
             for role, params in (("input", spec.inputs), ("output", (spec.output,)))
             for k, p in enumerate(params) if executor.tensors[p.name] is tensor]
    return f"{tensor!r}, its {' and '.join(roles)}" if roles else repr(tensor)


__all__ = ["aclnnLeakyReluBackwardGetWorkspaceSize", "aclnnLeakyReluBackward",
           "aclnnHardtanhBackwardGetWorkspaceSize", "aclnnHardtanhBackward",
           "aclnnLeakyReluGetWorkspaceSize", "aclnnLeakyRelu",
           "aclnnInplaceLeakyReluGetWorkspaceSize", "aclnnInplaceLeakyRelu",
           "aclnnHardtanhGetWorkspaceSize", "aclnnHardtanh",
           "aclnnInplaceHardtanhGetWorkspaceSize", "aclnnInplaceHardtanh",
           "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor",
           "aclSetInputTensorAddr", "aclSetOutputTensorAddr"]
