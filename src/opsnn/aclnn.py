"""``opsnn.aclnn``: the operators under their C names, two-phase, status codes, never raises.

    workspace_size, executor, ret = aclnnLeakyReluBackwardGetWorkspaceSize(
        grad_output, self, negative_slope, self_is_result, out)
    ret = aclnnLeakyReluBackward(workspace, workspace_size, executor, stream)

Phase 1 does every check and plans the steps (statuses 161001, 161002, 561003, 561103); phase 2
checks the executor and workspace, then queues the work on ``stream`` (run by
``acl.rt.synchronize_stream``). ``None`` stands for a C null pointer. On failure the text is in
``acl.get_recent_err_msg()``. The SoC in force at phase 1 selects the dtype lists.
"""

from __future__ import annotations

from . import engine, registry
from ._core import memory
from ._core.status import AclnnError, boundary
from ._core.executor import aclOpExecutor
from .acl import rt

_phase1_failure = boundary(lambda code: (0, None, code))
_ret = boundary(lambda code: code)


def _phase1(op: str, **args):
    executor = engine.plan(registry.get(op), args)
    return executor.workspace_size, executor, 0


def _phase2(op: str, workspace, workspace_size, executor, stream) -> int:
    spec = registry.get(op)
    present = workspace is not None and not (isinstance(workspace, int) and workspace == 0)
    engine.check_launch(executor, workspace_size, present, spec)
    if present and (isinstance(workspace, bool) or not isinstance(workspace, int)):
        raise AclnnError(161002, f"{op}: workspace must be a device address (int from acl.rt.malloc), "
                                 f"got {type(workspace).__name__}")
    size = executor.workspace_size
    if size:
        memory.DEVICE.region(workspace, size, f"{op} workspace")  # checked now, resolved at run
    target = rt.STATE.streams.get(stream)

    def task() -> None:
        buffer = memory.DEVICE.region(workspace, size, f"{op} workspace") if size else None
        engine.run(executor, buffer)

    target.enqueue(spec.api_name, task)
    executor.consumed = True
    return 0


@_phase1_failure
def aclnnLeakyReluBackwardGetWorkspaceSize(grad_output, self, negative_slope, self_is_result, out):
    """Phase 1 of LeakyReluBackward: ``out = gradOutput if self > 0 else gradOutput * slope``.

    Args:
        grad_output: aclTensor, FLOAT/FLOAT16/DOUBLE (+BF16 on Ascend910B/910_93/950), 0-8 dims,
            broadcastable with ``self``.
        self: aclTensor, same dtype list; promoted with grad_output (PromoteType).
        negative_slope: aclScalar (FLOAT, FLOAT16, DOUBLE, INT8/16/32/64, UINT8, BOOL, +BF16),
            used as float32 (ToFloat).
        self_is_result: bool; True with a negative slope is refused (161002).
        out: aclTensor with the broadcast shape and a dtype the promoted dtype can cast to.

    Returns:
        ``(workspace_size_bytes, executor, ret)``; ret 0, 161001 (a null argument), 161002
        (dtype, rank > 8, shape, out, in-place rule), 561003 (Ascend310B) or 561103.
        Source: ops-nn aclnnLeakyReluBackward; numbers as torch.ops.aten.leaky_relu_backward.
    """
    return _phase1("LeakyReluBackward", grad_output=grad_output, self=self,
                   negative_slope=negative_slope, self_is_result=self_is_result, out=out)


@_ret
def aclnnLeakyReluBackward(workspace, workspace_size, executor, stream) -> int:
    """Phase 2 of LeakyReluBackward: queue the executor on ``stream``.

    Args: workspace (device address or None when the size is 0), workspace_size (bytes),
    executor (from phase 1), stream (int from acl.rt.create_stream; None/0 = default stream).
    Returns ret: 0, 161001 (no workspace / executor), 161002 (executor already run, destroyed or
    of another op; workspace too small).
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
        gradOutput, out, min, max) or 161002. Source: ops-nn aclnnHardtanhBackward (arch35
        kernel: strict bounds); numbers as torch.ops.aten.hardtanh_backward.
    """
    return _phase1("HardtanhBackward", grad_output=grad_output, self=self, min_val=min,
                   max_val=max, out=out)


@_ret
def aclnnHardtanhBackward(workspace, workspace_size, executor, stream) -> int:
    """Phase 2 of HardtanhBackward (see aclnnLeakyReluBackward for arguments and statuses)."""
    return _phase2("HardtanhBackward", workspace, workspace_size, executor, stream)


@_ret
def aclSetAclOpExecutorRepeatable(executor) -> int:
    """Make an executor reusable by phase 2 until ``aclDestroyAclOpExecutor``. Returns ret."""
    _live_executor(executor, "aclSetAclOpExecutorRepeatable").repeatable = True
    return 0


@_ret
def aclDestroyAclOpExecutor(executor) -> int:
    """Destroy an executor; later phase-2 calls with it return 161002. Returns ret."""
    _live_executor(executor, "aclDestroyAclOpExecutor").destroyed = True
    return 0


def _live_executor(executor, call: str) -> aclOpExecutor:
    if executor is None:
        raise AclnnError(161001, f"{call}: executor is a null pointer (None)")
    if not isinstance(executor, aclOpExecutor):
        raise AclnnError(161002, f"{call}: expected an aclOpExecutor, got {type(executor).__name__}")
    if executor.destroyed:
        raise AclnnError(161002, f"{call}: the executor was already destroyed")
    return executor


__all__ = ["aclnnLeakyReluBackwardGetWorkspaceSize", "aclnnLeakyReluBackward",
           "aclnnHardtanhBackwardGetWorkspaceSize", "aclnnHardtanhBackward",
           "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor"]
