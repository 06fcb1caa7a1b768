"""Shared pieces of the tiling templates: errors, helpers, printable dataclasses, the device walk.

Units: element counts unless a name ends in ``_bytes`` or ``_bits``.
"""

from __future__ import annotations

import dataclasses
import enum
import operator
from collections.abc import Iterator, Sequence

import numpy as np

from ..shape import INT64_MAX
from ..status import AclnnError, Status

# ---- errors and small helpers ---------------------------------------------------------------


class TilingError(AclnnError):
    """A tiling function refused its inputs (GRAPH_FAILED in ops-nn).

    At the aclnn boundary such a failure surfaces as 561103 (ACLNN_ERR_INNER_NULLPTR, spec §10:
    the l0 op fails to join the launch list).
    """

    def __init__(self, op: str, reason: str):
        super().__init__(Status.ERR_INNER_NULLPTR, f"{op} tiling failed: {reason}")
        self.op = op
        self.reason = reason


def require_int64(op: str, value: int, subject: str, expression: str, function: str) -> None:
    """The one policy for the C++ tilings' int64 arithmetic: where the exact ``value`` of
    ``expression`` (as ``function`` computes it in int64) exceeds INT64_MAX, the C code wraps and
    goes on with a garbage count (or divides by zero), so opsnn raises TilingError naming
    ``subject`` and the expression instead of reporting a tiling the C code never computes."""
    if value > INT64_MAX:
        raise TilingError(op, f"{subject}: {expression} = {value} overflows {function}'s int64")


def index_int(value) -> int:
    """``operator.index(value)``, but a bool is a TypeError, Python's or NumPy's (NumPy 2.0, the
    minimum, still indexes np.True_ as 1): an int to index(), but no count, dim or dtype code
    anyone means. What the tiling inputs (plan_host's counts, TensorDesc's dims and dtype) read
    ints with."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"a bool, {value!r}, is no int here")
    return operator.index(value)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    return ceil_div(a, b) * b


def ensure_not_scalar(shape: Sequence[int]) -> tuple[int, ...]:
    """opbase ``EnsureNotScalar``: a 0-d shape is treated as ``[1]``."""
    return tuple(shape) if len(shape) else (1,)


def to_float32(value: float) -> float:
    """The float attr as the tiling stores it: rounded to float32, +-inf when out of range."""
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def pack_scalars(*values: float, size: int) -> bytes:
    """``SetScalar<float>`` calls in order: float32 values packed from offset 0, zero padded."""
    with np.errstate(over="ignore"):
        data = np.array(values, dtype="<f4").tobytes()
    return data + bytes(size - len(data))


# ---- tiling keys: AscendC's template-argument encoding -----------------------------------------
#
# Facts from the AscendC source (cannmirror/asc-devkit impl/utils/tiling/template_argument.cpp,
# EncodeParam / EncodeTilingKey) and the template-argument docs ("Tiling Template Programming",
# ASCENDC_TPL_ARGS_DECL): each declared argument takes its bit width, packed from the low bits up in
# declaration order. A DTYPE, FORMAT or BOOL argument is encoded by its VALUE; a UINT argument by
# its INDEX in the declared list (UI_LIST as written; UI_RANGE / UI_MIX with every range expanded
# in order, then MIX's listed values). ops-math's AddV2 tiling UT pins the UINT rule (schMode 202
# -> 8, 999 -> 14 in BRC_TEMP_SCH_MODE_KEY_DECL's list), ops-nn's HardtanhGrad UT the DTYPE rule
# (dType HardtanhGrad_TPL = 1, the only value of its list, encodes as 1, not as index 0: key 3).

TPL_KINDS = ("UINT", "DTYPE", "FORMAT", "BOOL")
TPL_MAX_KEY_BITS = 64


@dataclasses.dataclass(frozen=True)
class TplArg:
    """One ``ASCENDC_TPL_*_DECL`` template argument: its name, kind (``TPL_KINDS``), bit width and
    declared values (a UINT's ranges already expanded). Raises ValueError for a declaration with a
    value its width cannot hold (AscendC's CheckParamStructValid refuses it: INVALID_TILING_KEY);
    distinct values that fit also keep a UINT's indices within the width."""

    name: str
    kind: str
    bits: int
    values: tuple[int, ...]

    def __post_init__(self):
        if self.kind not in TPL_KINDS:
            raise ValueError(f"template argument {self.name}: kind must be one of {TPL_KINDS}, got {self.kind!r}")
        if not self.values or len(set(self.values)) != len(self.values):
            raise ValueError(f"template argument {self.name}: declared values must be distinct and non-empty, "
                             f"got {list(self.values)}")
        if min(self.values) < 0 or max(self.values) >= 1 << self.bits:
            raise ValueError(f"template argument {self.name}: values must fit {self.bits} bits, "
                             f"got {list(self.values)}")

    def code(self, op: str, value: int) -> int:
        """The bits ``value`` contributes before shifting: its index for UINT, itself otherwise.
        A value the declaration lacks is TilingError (GET_TPL_TILING_KEY gives INVALID_TILING_KEY,
        which no kernel matches)."""
        if value not in self.values:
            raise TilingError(op, f"tiling key: {self.name} {value} is not among the declared "
                                  f"{list(self.values)}")
        return self.values.index(value) if self.kind == "UINT" else value


def tpl_uint(name: str, bits: int, values: Sequence[int] = (), ranges: Sequence[tuple[int, int]] = ()) -> TplArg:
    """``ASCENDC_TPL_UINT_DECL(name, bits, ...)``: ``values`` alone is UI_LIST, ``ranges`` alone
    (inclusive ``(lo, hi)`` pairs) UI_RANGE, both UI_MIX (the ranges' values first)."""
    expanded = [v for lo, hi in ranges for v in range(lo, hi + 1)]
    return TplArg(name, "UINT", bits, tuple(expanded) + tuple(values))


def tpl_dtype(name: str, *values: int) -> TplArg:
    """``ASCENDC_TPL_DTYPE_DECL(name, ...)``: 8 bits, encoded by value."""
    return TplArg(name, "DTYPE", 8, values)


def tpl_format(name: str, *values: int) -> TplArg:
    """``ASCENDC_TPL_FORMAT_DECL(name, ...)``: 8 bits, encoded by value."""
    return TplArg(name, "FORMAT", 8, values)


def tpl_bool(name: str, *values: int) -> TplArg:
    """``ASCENDC_TPL_BOOL_DECL(name, ...)``: 1 bit, encoded by value."""
    return TplArg(name, "BOOL", 1, values)


@dataclasses.dataclass(frozen=True)
class TilingKeyDecl:
    """An op's ``ASCENDC_TPL_ARGS_DECL``: its template arguments in order, and where they are
    declared (``source``). ``key(*values)`` is ``GET_TPL_TILING_KEY(*values)``."""

    op: str
    args: tuple[TplArg, ...]
    source: str

    def __post_init__(self):
        if sum(a.bits for a in self.args) > TPL_MAX_KEY_BITS:
            raise ValueError(f"{self.op}: the template arguments take {sum(a.bits for a in self.args)} bits, "
                             f"more than a {TPL_MAX_KEY_BITS}-bit tiling key")

    def key(self, *values: int) -> int:
        """Each argument's code (``TplArg.code``) shifted past the widths declared before it."""
        if len(values) != len(self.args):
            raise TilingError(self.op, f"tiling key: {len(self.args)} template arguments declared "
                                       f"({', '.join(a.name for a in self.args)}), got {len(values)} values")
        key, shift = 0, 0
        for arg, value in zip(self.args, values):
            key |= arg.code(self.op, value) << shift
            shift += arg.bits
        return key


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _plain(value):
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


class Printable:
    """Mixin for frozen dataclasses: ``to_dict()`` with CANN (camelCase) keys, JSON-ready values.

    Fields declared with ``repr=False`` are internal and left out.
    """

    def to_dict(self) -> dict:
        return {_camel(f.name): _plain(getattr(self, f.name))
                for f in dataclasses.fields(self) if f.repr}  # type: ignore[arg-type]


def flatten(mapping: dict, prefix: str = "") -> Iterator[tuple[str, object]]:
    """Depth-first (dotted key, leaf value) pairs of a nested dict."""
    for key, value in mapping.items():
        if isinstance(value, dict):
            yield from flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


REPEAT_BYTES = 256  # ubFormer granularity: one vector repeat (256 bytes) of the smallest dtype
DEFAULT_TILING_WORKSPACE_SIZE = 16 * 1024 * 1024  # bytes, every arch35 tiling here


def max_elem_num(ub_size: int, buffer_num: int, max_dtype_bits: int, min_dtype_bits: int) -> int:
    """Elements per UB buffer: the UB bits shared by ``buffer_num`` buffers of the largest dtype,
    rounded down to one vector repeat of the smallest (``GetMaxElemNum`` /
    ``BroadcastGetMaxElemNum``; the ops here reserve no extra UB size or buffers)."""
    elems = ub_size * 8 // (buffer_num * max_dtype_bits)
    align = REPEAT_BYTES * 8 // min_dtype_bits
    return elems // align * align


def ub_elements(op: str, ub_size: int, buffer_num: int, dag) -> int:
    """``max_elem_num`` for ``dag``'s dtype widths (a DagParams or BroadcastDagParams), or a
    TilingError where the UB cannot hold one repeat for ``buffer_num`` buffers: the one refusal
    of the elementwise and broadcast tilings, whose tiles would hold no element."""
    elems = max_elem_num(ub_size, buffer_num, dag.max_dtype_bits, dag.min_dtype_bits)
    if elems == 0:
        raise TilingError(op, f"UB of {ub_size} B cannot hold one repeat for {buffer_num} buffers")
    return elems


# ---- DAG numbers and the device walk ---------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DagParams(Printable):
    """What a kernel DAG tells the templates (atvoss ``DAGSch``, computed at compile time).

    Attributes:
        min_dtype_bits: smallest node dtype in bits (``MinDtypeBytes * 8``): sets the alignment.
        max_dtype_bits: largest node dtype in bits (``MaxDtypeBytes * 8``): sets the buffer size.
        buffer_num: live UB buffers, ping-pong copies included (``BufferNum`` /
            ``GetBufferNum<nddma, cacheBrc>``): the UB is divided among them.
        source: where the numbers come from ("UT-anchored", "spec", "derived ...").
    """

    min_dtype_bits: int
    max_dtype_bits: int
    buffer_num: int
    source: str

    @property
    def max_dtype_bytes(self) -> int:
        return self.max_dtype_bits // 8


Box = tuple[tuple[int, int], ...]  # per output dim of a Launch: [start, stop) in elements


@dataclasses.dataclass(frozen=True)
class Launch(Printable):
    """How the device kernel walks a tiling: per block (core), its tiles in processing order.

    Attributes:
        out_dims: the (collapsed) output dims the tile boxes index, in elements.
        in_strides: per kernel input, its element strides over ``out_dims`` (0 on a broadcast dim).
        in_numel / out_numel: elements the tensors really hold; a box may reach past them (a
            finding the simulator reports, e.g. the 910B kernel's padded length).
        blocks: per block, its tiles; a tile is a box of [start, stop) per output dim.
        buffer_elems: elements one UB buffer holds; every tile must fit.
        buffer_num: pipeline depth: 1 = single-buffered, 2 = ping-pong (double-buffered).
        ub_alloc_bytes: UB bytes the kernel allocates per core; ub_size: UB bytes per core.
    """

    out_dims: tuple[int, ...]
    in_strides: tuple[tuple[int, ...], ...]
    in_numel: tuple[int, ...]
    out_numel: int
    blocks: tuple[tuple[Box, ...], ...] = dataclasses.field(repr=False)
    buffer_elems: int
    buffer_num: int
    ub_alloc_bytes: int
    ub_size: int

    @property
    def tile_count(self) -> int:
        return sum(len(tiles) for tiles in self.blocks)


def tile_runs(start: int, former: int, count: int, tail: int) -> tuple[Box, ...]:
    """``count`` 1-D tiles from ``start``: ``former`` elements each, the last one ``tail``."""
    last = start + (count - 1) * former
    full = tuple(((start + i * former, start + (i + 1) * former),) for i in range(count - 1))
    return full + (((last, last + tail),),)
