"""Kernel-level op definitions as data (ops-nn ``op_host/*_def.cpp``), infershape, tiling results.

An ``OpDef`` is what ops-nn declares with the ``OpDef`` builder: inputs, outputs, attrs, the
dtype x format rows of its binaries and the SoC config it is built for, plus the op's infershape
and tiling functions. Shapes here are storage shapes of the kernel op's tensors: -1 is a dynamic
dim and ``(-2,)`` an unknown rank (graph-mode conventions, infershape only).
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .._core import checks
from .._core.dtypes import DataType, Format
from .._core.platform import SocProfile
from .._core.status import AclnnError, Status
from .._core.tiling import Launch, Printable, TilingError, index_int

Shape = tuple[int, ...]
UNKNOWN_RANK: Shape = (-2,)
FLOAT_TYPES = (DataType.BF16, DataType.FLOAT16, DataType.FLOAT)  # every kernel op here, in def order


class InferShapeError(AclnnError):
    """Infershape refused the shapes (GRAPH_FAILED; 561103 at the aclnn boundary, spec §3.4)."""

    def __init__(self, op: str, reason: str):
        super().__init__(Status.ERR_INNER_NULLPTR, f"{op} infershape failed: {reason}")


@dataclasses.dataclass(frozen=True)
class AttrDef(Printable):
    """One attr: name, type, whether the graph must set it, the default the tiling falls back to."""

    name: str
    type: str
    required: bool
    default: float


@dataclasses.dataclass(frozen=True)
class TensorDesc(Printable):
    """A kernel op tensor as tiling sees it: storage shape, dtype, and view strides in elements
    (None or empty = contiguous; otherwise one per dim, or a broadcast-template tiling fails).

    Read once here: dims and strides as Python ints from any sequence of index-like ints (NumPy's
    too; -1 and ``(-2,)`` are graph-mode dynamic dims, which tiling refuses), the dtype as a
    ``DataType`` from one or its int value. Anything else (a float or bool dim, a bool or a name
    as dtype) is a ValueError naming the field, so the tiling fields are plain ints.
    """

    shape: Shape
    dtype: DataType
    strides: tuple[int, ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "shape", _ints("shape", self.shape))
        if self.strides is not None:
            object.__setattr__(self, "strides", _ints("strides", self.strides))
        try:  # (a bool, an int to operator.index, would be DT_FLOAT16: no dtype meant)
            dtype = DataType(index_int(self.dtype))
        except (TypeError, ValueError):
            raise ValueError(f"TensorDesc dtype must be a DataType (or its int value), got {self.dtype!r}") from None
        object.__setattr__(self, "dtype", dtype)


def _ints(field: str, values) -> tuple[int, ...]:
    """``values`` as a tuple of Python ints; ValueError naming ``field`` and the first bad item."""
    try:  # (a NumPy 0-d array has __iter__, and raises TypeError once iterated)
        items = None if isinstance(values, (str, bytes)) else list(values)
    except TypeError:
        items = None
    if items is None:
        raise ValueError(f"TensorDesc {field} must be a sequence of ints, got {values!r}")
    out = []
    for i, value in enumerate(items):
        try:
            out.append(index_int(value))
        except TypeError:
            raise ValueError(f"TensorDesc {field}[{i}] must be an int, got {value!r}") from None
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class TilingResult(Printable):
    """What a tiling function hands the launch: the op's tiling struct, key, block dim, workspace.

    Attributes:
        op: kernel op name; soc: the SoC profile name; template: which tiling path ran.
        tiling_data: the op's tiling struct (``to_dict()`` keys are the CANN field names).
        tiling_key: the kernel template key; block_dim: cores launched (None where the sources
            do not settle it).
        workspace_size: bytes the tiling requests (user part).
        notes: where derived numbers come from (anything not asserted by an ops-nn test).
    ``launch()`` gives the device's walk of this tiling (for the simulator).
    """

    op: str
    soc: str
    template: str
    tiling_data: Printable
    tiling_key: int
    block_dim: int | None
    workspace_size: int
    notes: tuple[str, ...] = ()
    walk: Callable[[], Launch] | None = dataclasses.field(default=None, repr=False, compare=False)

    def launch(self) -> Launch:
        """The device walk; raises TilingError when the sources do not settle it."""
        if self.walk is None:
            raise TilingError(self.op, f"the {self.template} schedule's fields are not settled by the sources "
                                       "read, so it cannot be simulated")
        return self.walk()


@dataclasses.dataclass(frozen=True)
class AclnnAlias(Printable):
    """An aclnn API mapped onto its kernel op.

    ``tensors`` are the aclnn tensor arguments in API order; ``kernel_inputs[i]`` is the index in
    ``tensors`` that feeds kernel input i; ``attrs`` maps aclnn scalar names to kernel attrs.
    """

    api: str
    kernel: str
    tensors: tuple[str, ...]
    kernel_inputs: tuple[int, ...]
    attrs: tuple[tuple[str, str], ...]
    source: str


TilingFn = Callable[[SocProfile, Sequence[TensorDesc], Sequence[TensorDesc], Mapping[str, float]], TilingResult]


@dataclasses.dataclass(frozen=True)
class OpDef(Printable):
    """One kernel op definition (one ``*_def.cpp``).

    Attributes:
        name: kernel op name (``HardtanhGrad``); variant: "main" or "experimental".
        inputs / outputs: tensor names in order; attrs: attr definitions in index order.
        dtype_rows: one row per binary: the dtypes of inputs then outputs.
        formats: accepted formats (every tensor).
        soc: the AI Core config the def is built for (``ascend950``); op_file: its kernel file stem.
        source: the ops-nn def file; infer_shape / tiling: the op_host functions.
        aicpu_dtypes: dtypes the op's l0 function hands to its AICPU kernel instead (it picks AI
            Core only for the dtypes of a binary row): no AI Core kernel is tiled for them.
    """

    name: str
    variant: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: tuple[AttrDef, ...]
    dtype_rows: tuple[tuple[DataType, ...], ...]
    formats: tuple[Format, ...]
    soc: str
    op_file: str | None
    source: str
    infer_shape: Callable[[Sequence[Shape]], Shape] = dataclasses.field(repr=False)
    tiling: TilingFn = dataclasses.field(repr=False)
    aicpu_dtypes: tuple[DataType, ...] = ()

    def supports(self, profile: SocProfile) -> bool:
        """True when this def is built for the profile's SoC (config name = lower-case SoC name)."""
        return profile.name.lower() == self.soc

    def match_dtypes(self, dtypes: Sequence[DataType]) -> int | None:
        """Index of the dtype row equal to ``dtypes`` (inputs then outputs), or None."""
        key = tuple(DataType(d) for d in dtypes)
        return next((i for i, row in enumerate(self.dtype_rows) if row == key), None)

    def attr_values(self, given: Mapping[str, float]) -> dict[str, float]:
        """Attr values by name as floats, defaults filled in. ValueError for an unknown name, or a
        value that is no real number within float64's range (a string, None, a bool, 10**400),
        naming the attr, as ``opsnn tiling``'s options refuse such words; a 0-d array is read as
        the number it holds, as ``opsnn.functional``'s scalars are."""
        known = {a.name for a in self.attrs}
        unknown = set(given) - known
        if unknown:
            raise ValueError(f"{self.name} has no attr {sorted(unknown)}; attrs: {sorted(known)}")
        values = {}
        for attr in self.attrs:
            value = given.get(attr.name, attr.default)
            held = checks.held(value)  # a 0-d array's number
            try:
                if isinstance(held, (bool, np.bool_)) or not isinstance(held, numbers.Real):
                    raise TypeError
                values[attr.name] = float(held)
            except (TypeError, OverflowError):
                # (an int's repr can be thousands of digits, or more than str() writes)
                # (a 0-d array's too: its repr is the int's)
                big = isinstance(held, int) and not isinstance(held, bool)
                shown = f"an int of {held.bit_length()} bits" if big else repr(value)
                raise ValueError(f"{self.name} attr {attr.name} must be a real number within float64's range, "
                                 f"got {shown}") from None
        return values


def same_dtype_rows(n_tensors: int) -> tuple[tuple[DataType, ...], ...]:
    """Def rows where every tensor shares one of the float dtypes (the binaries here)."""
    return tuple((dtype,) * n_tensors for dtype in FLOAT_TYPES)


# ---- infershape (BASE:src/op_common/op_host/infershape_*_util.cpp) --------------------------


def _broadcast_dim(op: str, a: int, b: int) -> int:
    """``BroadcastDim``: equal dims stay; 1 yields to the other side; -1 (dynamic) yields to a
    known dim other than 1; anything else conflicts. So 0 with 1 gives 0, -1 with 1 gives -1."""
    if a == b:
        return a
    if a != 1 and b != 1:
        if a == -1 or b == -1:
            return b if a == -1 else a
        raise InferShapeError(op, f"dims {a} and {b} cannot broadcast")
    return b if a == 1 else a


def infer_broadcast(op: str, shapes: Sequence[Shape]) -> Shape:
    """``InferShape4Broadcast``: right-aligned broadcast of all inputs; an unknown rank wins."""
    out: Shape = tuple(shapes[0])
    for shape in shapes[1:]:
        if tuple(shape) == UNKNOWN_RANK or out == UNKNOWN_RANK:
            out = UNKNOWN_RANK
            continue
        rank = max(len(out), len(shape))
        a = (1,) * (rank - len(out)) + out
        b = (1,) * (rank - len(shape)) + tuple(shape)
        try:
            out = tuple(_broadcast_dim(op, x, y) for x, y in zip(a, b))
        except InferShapeError:
            raise InferShapeError(op, f"shapes {list(shapes[0])} and {list(shape)} cannot broadcast") from None
    return out


def infer_elewise(index: int) -> Callable[[Sequence[Shape]], Shape]:
    """``InferShape4Elewise`` on input ``index``: the output copies that input's shape (an unknown
    rank stays unknown). No dtype or shape check between inputs happens here."""

    def infer(shapes: Sequence[Shape]) -> Shape:
        return tuple(shapes[index])

    return infer
