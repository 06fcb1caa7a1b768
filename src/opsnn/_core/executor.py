"""Executor steps, the plan phase 1 builds, and the aclOpExecutor handle.

A plan is metadata only: the ordered steps (Contiguous -> Cast -> Kernel -> Cast -> ViewCopy, the
ops-nn l2 chain) with operands named symbolically, and the workspace slots the temporaries live
in. Binding the plan to the caller's tensors gives an ``aclOpExecutor``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

from . import dtypes
from .dtypes import DataType

WORKSPACE_ALIGN = 512  # bytes; every temporary starts on a 512-byte boundary (GM alignment)


@dataclasses.dataclass(frozen=True)
class Slot:
    """A temporary in the workspace: ``nbytes`` at byte ``offset``, dense row-major."""

    index: int
    shape: tuple[int, ...]
    dtype: DataType
    offset: int
    nbytes: int


@dataclasses.dataclass(frozen=True)
class Ref:
    """An operand: a bound tensor by name (``grad_output``, ``out``) or a workspace slot."""

    tensor: str | None = None
    slot: int | None = None

    def __str__(self) -> str:
        return self.tensor if self.tensor is not None else f"ws[{self.slot}]"

    def shown(self, names: dict[str, str]) -> str:
        """The operand as a step prints it: a bound tensor under ``names``' name for it, if any."""
        return names.get(self.tensor, self.tensor) if self.tensor is not None else str(self)


@dataclasses.dataclass(frozen=True)
class Step:
    """One recorded l0 step.

    kind: ``Contiguous``, ``Cast``, ``Kernel`` or ``ViewCopy``.
    srcs/dst: operands. dtype: the target dtype (Cast) or the kernel's result dtype.
    kernel/native/scalars/compute: for Kernel steps only.
    """

    kind: str
    srcs: tuple[Ref, ...]
    dst: Ref
    dtype: DataType
    name: str = ""
    kernel: Callable | None = None
    native: tuple[bool, ...] = ()
    scalars: tuple[tuple[str, float | int], ...] = ()  # exact in ``compute`` (Python numbers)
    compute: DataType | None = None

    def describe(self, names: dict[str, str] | None = None) -> str:
        """One line; ``names`` maps a bound tensor's name to the one printed (``Plan.names``)."""
        names = names or {}
        srcs = ", ".join(s.shown(names) for s in self.srcs)
        dst = self.dst.shown(names)
        if self.kind == "Kernel":
            attrs = ", ".join(f"{k}={dtypes.value_text(v, self.compute)}" for k, v in self.scalars)
            return (f"{self.name}({srcs}; {attrs}) -> {dst} "
                    f"[{dtypes.name(self.dtype)}, computed in {dtypes.name(self.compute)}]")
        if self.kind == "Cast":
            return f"Cast({srcs} -> {dtypes.name(self.dtype)}) -> {dst}"
        return f"{self.kind}({srcs}) -> {dst}"


@dataclasses.dataclass(frozen=True)
class Plan:
    """Everything phase 1 decided; phase 2 only walks ``steps``."""

    op: str
    steps: tuple[Step, ...]
    slots: tuple[Slot, ...]
    out_shape: tuple[int, ...]
    promoted: DataType | None
    # bound tensor name -> the name the steps print, where the aclnn call names it otherwise: an
    # in-place call's one tensor, selfRef, is bound as both self and out (engine.step_names)
    names: tuple[tuple[str, str], ...] = ()

    @functools.cached_property
    def workspace_size(self) -> int:
        """Bytes: the sum of the temporaries, each 512-byte aligned (0 when nothing is copied)."""
        return sum(s.nbytes for s in self.slots)

    def describe(self) -> str:
        """The steps in launch order, then the workspace slots, one per line (printable, as
        ``Step.describe`` and ``HostLaunch.describe`` are)."""
        names = dict(self.names)
        lines = [step.describe(names) for step in self.steps] or ["(no steps: empty tensor fast path)"]
        for slot in self.slots:
            lines.append(f"ws[{slot.index}]: {dtypes.name(slot.dtype)} {list(slot.shape)} "
                         f"at byte {slot.offset}, {slot.nbytes} bytes")
        return "\n".join(lines)


class SlotAllocator:
    """Lays temporaries out back to back in the workspace."""

    def __init__(self) -> None:
        self.slots: list[Slot] = []
        self._end = 0

    def new(self, shape: tuple[int, ...], dtype: DataType) -> Ref:
        from .shape import numel

        size = dtypes.nbytes(dtype, numel(shape))
        aligned = -(-size // WORKSPACE_ALIGN) * WORKSPACE_ALIGN
        slot = Slot(len(self.slots), tuple(shape), dtype, self._end, aligned)
        self.slots.append(slot)
        self._end += aligned
        return Ref(slot=slot.index)


class aclOpExecutor:  # noqa: N801 - the CANN type name
    """A plan bound to the caller's tensors. Single use unless made repeatable."""

    def __init__(self, plan: Plan, tensors: dict):
        self.plan = plan
        self.tensors = tensors
        self.repeatable = False
        self.consumed = False
        self.destroyed: str | None = None  # what destroyed it: aclDestroyAclOpExecutor, a failed launch
        self.last_launch = None  # a repeatable executor's previous launch (opsnn.aclnn._Launch)

    @property
    def workspace_size(self) -> int:
        return self.plan.workspace_size

    def destroy(self, by: str) -> None:
        """Delete it (aclDestroyAclOpExecutor, or a launch CANN deletes it at): later uses are
        refused naming ``by``, and its last launch, whose relaunch skips the checks, goes."""
        self.destroyed = by
        self.last_launch = None  # its views of device memory go with it (queued tasks keep theirs)

    def __repr__(self) -> str:
        state = "destroyed" if self.destroyed else "consumed" if self.consumed else "ready"
        return (f"<aclOpExecutor {self.plan.op} {state} workspace {self.workspace_size} B, "
                f"{len(self.plan.steps)} steps>")
