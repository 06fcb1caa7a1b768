"""Run an NPU tiling the way the device walks it, on NumPy, and check the walk.

``simulate(launch, arrays, tile_fn, out_dtype)`` goes block by block (core by core) and tile by
tile through a ``Launch`` (from ``TilingResult.launch()``): each tile is copied from "global memory"
into a UB buffer slot (ping-pong slots when double-buffered: tile i+1 is loaded before tile i is
stored), computed by ``tile_fn`` and copied out. It records, without stopping:

* over-read / over-write: an access past the end of a tensor (the experimental 910B HardtanhGrad
  kernel processes the length padded to 512 bytes; spec §7.4), or before its start;
* unwritten / double-write: output elements written zero times or more than once;
* ub-overflow / tile-too-big: the kernel's UB allocation exceeds the core's UB, or a tile does not
  fit its buffer.

``check_op`` adds the op's formula and its float64-derived reference. ``tile_fn`` is any vectorised
callable ``f(*input_tiles) -> output_tile`` over 1-D NumPy arrays (inputs in kernel order, output in
``out_dtype``), so the package's kernel expressions can be plugged in; the formulas here model
the device arithmetic (float32 compute for fp16/bf16, one rounding, grad bits copied).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ._core import dtypes, memory
from ._core.shape import contiguous_strides, numel
from ._core.status import AclError, AclnnError, Status
from ._core.tiling import Box, Launch, Printable
from .opdef import OpDef, TensorDesc, TilingResult

TileFn = Callable[..., np.ndarray]

# Findings that break correctness of the produced output (the bounds findings are memory-safety
# issues the 910B kernel really has; its in-range results are still right).
COVERAGE_KINDS = ("unwritten", "double-write")
UB_KINDS = ("ub-overflow", "tile-too-big")
BOUNDS_KINDS = ("over-read", "over-write")
# what the refusal of a simulation this host cannot hold begins with (200000: ``host_array``,
# ``_fits_the_host``); opsnn tiling, whose line already names the simulation, drops it
REFUSAL_PREFIX = "simulate: "


@dataclasses.dataclass(frozen=True)
class Finding(Printable):
    """One kind of problem, aggregated: how many elements / bytes, and the first place seen."""

    kind: str
    elements: int
    bytes: int
    detail: str


@dataclasses.dataclass(frozen=True)
class SimReport(Printable):
    """What one simulated launch did.

    Attributes:
        blocks / tiles: cores run and tiles processed; buffer_num: 1 single, 2 double-buffered.
        max_tile_elems / buffer_elems: the largest tile and the UB buffer capacity (elements).
        ub_alloc_bytes / ub_size: UB the kernel allocates per core, and the core's UB.
        elements: output elements; findings: aggregated problems (empty = clean).
        output: the output tensor (flat, ``out_numel`` elements).
    """

    blocks: int
    tiles: int
    buffer_num: int
    max_tile_elems: int
    buffer_elems: int
    ub_alloc_bytes: int
    ub_size: int
    elements: int
    findings: tuple[Finding, ...]
    output: np.ndarray = dataclasses.field(repr=False, compare=False)

    def has(self, *kinds: str) -> bool:
        return any(f.kind in kinds for f in self.findings)

    @property
    def covered_once(self) -> bool:
        """Every output element written exactly once."""
        return not self.has(*COVERAGE_KINDS)

    @property
    def within_ub(self) -> bool:
        return not self.has(*UB_KINDS)

    @property
    def in_bounds(self) -> bool:
        return not self.has(*BOUNDS_KINDS)


class _Tally:
    """Accumulates findings per kind, keeping the first example."""

    def __init__(self):
        self.counts: dict[str, list] = {}

    def add(self, kind: str, elements: int, nbytes: int, where: str) -> None:
        entry = self.counts.setdefault(kind, [0, 0, where])
        entry[0] += elements
        entry[1] += nbytes

    def findings(self, details: Mapping[str, str]) -> tuple[Finding, ...]:
        return tuple(Finding(kind, e, b, f"{details[kind]}; first at {where}")
                     for kind, (e, b, where) in self.counts.items())


_DETAILS = {
    "over-read": "input elements read outside their tensor (before its start or past its end)",
    "over-write": "output elements written outside the tensor (before its start or past its end)",
    "unwritten": "output elements no tile wrote",
    "double-write": "output elements written more than once",
    "ub-overflow": "the kernel allocates more UB than the core has",
    "tile-too-big": "tiles larger than their UB buffer (skipped)",
}


def _box_index(box: Box, strides: Sequence[int]) -> np.ndarray:
    """Linear element offsets of a box (C order) through element strides."""
    idx = np.zeros((), dtype=np.int64)
    for (start, stop), stride in zip(box, strides):
        idx = idx[..., None] + np.arange(start, stop, dtype=np.int64) * stride
    return idx.reshape(-1)


def _wraps(box: Box, dims: Sequence[int]) -> bool:
    """Whether ``box`` may name one output offset twice: a range past its dim, other than the
    outermost one, runs into the next row of the flat output (over ``dims``, C order), and one
    starting below 0 back into the row before."""
    return len(box) > 1 and any(start < 0 or stop > dim for (start, stop), dim in zip(box[1:], dims[1:]))


def _outside(idx: np.ndarray, size: int) -> np.ndarray:
    """Which offsets lie outside a tensor of ``size`` elements: past its end, or before its start
    (a negative offset, which NumPy's indexing would take from the end)."""
    return (idx < 0) | (idx >= size)


class _Core:
    """One simulated vector core's view of global memory and its UB buffer slots."""

    def __init__(self, launch: Launch, flat: list[np.ndarray], out: np.ndarray, writes: np.ndarray, tally: _Tally):
        self.launch, self.flat, self.out, self.writes, self.tally = launch, flat, out, writes, tally
        self.out_strides = contiguous_strides(launch.out_dims)
        # per pipeline stage: one buffer per input and one for the output
        self.slots = [([np.empty(launch.buffer_elems, dtype=f.dtype) for f in flat],
                       np.empty(launch.buffer_elems, dtype=out.dtype)) for _ in range(launch.buffer_num)]
        # tile -> (element count, output offsets, whether an offset may repeat: _wraps)
        self.loaded: dict[int, tuple[int, np.ndarray, bool]] = {}

    def copy_in(self, where: str, i: int, box: Box) -> None:
        """GM -> UB slot ``i % buffer_num``; reads outside a tensor are tallied (stand-in value 0)."""
        count = int(np.prod([stop - start for start, stop in box]))
        if count > self.launch.buffer_elems:
            self.tally.add("tile-too-big", count, 0, where)
            return
        ins, _ = self.slots[i % self.launch.buffer_num]
        for k, (src, strides) in enumerate(zip(self.flat, self.launch.in_strides)):
            idx = _box_index(box, strides)
            outside = _outside(idx, src.size)
            if outside.any():
                past = int(outside.sum())
                self.tally.add("over-read", past, past * src.itemsize, f"{where}, input {k}")
            ins[k][:count] = src[np.where(outside, 0, idx)]
        self.loaded[i] = (count, _box_index(box, self.out_strides), _wraps(box, self.launch.out_dims))

    def compute_and_copy_out(self, where: str, i: int, tile_fn: TileFn) -> None:
        """Run ``tile_fn`` on slot ``i % buffer_num``, then UB -> GM; writes outside the output are tallied."""
        if i not in self.loaded:
            return
        count, idx, wraps = self.loaded.pop(i)
        ins, res = self.slots[i % self.launch.buffer_num]
        value = tile_fn(*(buf[:count] for buf in ins))
        if not isinstance(value, np.ndarray) or value.dtype != self.out.dtype or value.shape != (count,):
            raise TypeError(f"tile_fn must return a ({count},) {self.out.dtype} array, got "
                            f"{getattr(value, 'shape', None)} {getattr(value, 'dtype', type(value))}")
        res[:count] = value
        outside = _outside(idx, self.out.size)
        if outside.any():
            past = int(outside.sum())
            self.tally.add("over-write", past, past * self.out.itemsize, where)
        self.out[idx[~outside]] = res[:count][~outside]
        if wraps:  # ``writes[idx] += 1`` counts an offset the box repeats once, hiding the tile's
            np.add.at(self.writes, idx[~outside], 1)  # own double write: add.at counts each
        else:
            self.writes[idx[~outside]] += 1

    def run(self, b: int, tiles: Sequence[Box], tile_fn: TileFn) -> None:
        """The block's tiles in order; with n slots the next n-1 tiles are loaded ahead."""
        ahead = self.launch.buffer_num - 1
        for i in range(min(ahead, len(tiles))):
            self.copy_in(f"block {b} tile {i} {list(tiles[i])}", i, tiles[i])
        for i in range(len(tiles)):
            if i + ahead < len(tiles):
                self.copy_in(f"block {b} tile {i + ahead} {list(tiles[i + ahead])}", i + ahead, tiles[i + ahead])
            self.compute_and_copy_out(f"block {b} tile {i}", i, tile_fn)


def simulate(launch: Launch, arrays: Sequence[np.ndarray], tile_fn: TileFn, out_dtype) -> SimReport:
    """Execute ``launch`` over ``arrays`` (the kernel inputs, any shape holding ``launch.in_numel``
    elements, read in C order) with ``tile_fn``; returns the report with the flat output."""
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrays]
    if [f.size for f in flat] != list(launch.in_numel):
        raise ValueError(f"inputs hold {[f.size for f in flat]} elements, the launch expects {list(launch.in_numel)}")
    out = host_array(lambda: np.zeros(launch.out_numel, dtype=np.dtype(out_dtype)), "the output")
    writes = host_array(lambda: np.zeros(launch.out_numel, dtype=np.int32), "the output's write counts")
    tally = _Tally()
    if launch.ub_alloc_bytes > launch.ub_size:
        tally.add("ub-overflow", 0, launch.ub_alloc_bytes - launch.ub_size,
                  f"{launch.ub_alloc_bytes} B allocated, {launch.ub_size} B available")
    for b, tiles in enumerate(launch.blocks):
        _Core(launch, flat, out, writes, tally).run(b, tiles, tile_fn)
    for kind, count, first in (("unwritten", int((writes == 0).sum()), np.argmin(writes)),
                               ("double-write", int((writes > 1).sum()), np.argmax(writes))):
        if count:
            tally.add(kind, count, count * out.itemsize, f"element {int(first)}")
    max_tile = max((int(np.prod([e - s for s, e in box])) for tiles in launch.blocks for box in tiles), default=0)
    return SimReport(len(launch.blocks), launch.tile_count, launch.buffer_num, max_tile, launch.buffer_elems,
                     launch.ub_alloc_bytes, launch.ub_size, launch.out_numel, tally.findings(_DETAILS), out)


# ---- the ops' formulas: device-like tiles and float64-derived references ----------------------


def _f32(value: float) -> np.float32:
    with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as the device converts it
        return np.float32(value)


def hardtanh_grad_tile(min_val: float, max_val: float, inclusive: bool) -> TileFn:
    """HardtanhGrad on a tile (result, grad): result widened to float32, bounds float32; grad's
    bits pass where the bound test holds or result is NaN, +0.0 elsewhere. Strict bounds for the
    arch35 DAG, inclusive for the experimental 910B kernel (spec §8)."""
    lo, hi = _f32(min_val), _f32(max_val)

    def tile(result: np.ndarray, grad: np.ndarray) -> np.ndarray:
        x = result.astype(np.float32)
        inside = (x >= lo) & (x <= hi) if inclusive else (x > lo) & (x < hi)
        return np.where(inside | np.isnan(x), grad, np.zeros((), dtype=grad.dtype))

    return tile


def leaky_relu_grad_tile(negative_slope: float) -> TileFn:
    """LeakyReluGrad on a tile (gradients, features): float32 grad * float32 slope where features
    is not > 0, grad itself elsewhere, rounded once (RINT) to the dtype."""
    s = _f32(negative_slope)

    def tile(gradients: np.ndarray, features: np.ndarray) -> np.ndarray:
        g = gradients.astype(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):  # inf * 0 = NaN and overflow are the semantics
            return np.where(features.astype(np.float32) > 0, g, g * s).astype(gradients.dtype)

    return tile


def leaky_relu_tile(negative_slope: float) -> TileFn:
    """LeakyRelu on a tile: x > 0 ? x : x * slope in float32, rounded once to the dtype."""
    s = _f32(negative_slope)

    def tile(x: np.ndarray) -> np.ndarray:
        xf = x.astype(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(xf > 0, xf, xf * s).astype(x.dtype)

    return tile


def _hardtanh_reference(min_val: float, max_val: float, inclusive: bool):
    lo, hi = np.float64(_f32(min_val)), np.float64(_f32(max_val))

    def ref(result: np.ndarray, grad: np.ndarray) -> np.ndarray:
        x = result.astype(np.float64)
        inside = (x >= lo) & (x <= hi) if inclusive else (x > lo) & (x < hi)
        return np.where(inside | np.isnan(x), grad, np.zeros((), dtype=grad.dtype))

    return ref


def _torch_hardtanh_reference(min_val: float, max_val: float):
    """PyTorch's hardtanh_backward as its scalar CPU path, CUDA and torch._decomp write it: +0.0
    where result <= min or result >= max, grad elsewhere (bounds float32, as the kernel's). Equal to
    the strict test with NaN passing, except against a NaN bound, which zeroes nothing."""
    lo, hi = np.float64(_f32(min_val)), np.float64(_f32(max_val))

    def ref(result: np.ndarray, grad: np.ndarray) -> np.ndarray:
        x = result.astype(np.float64)
        return np.where((x <= lo) | (x >= hi), np.zeros((), dtype=grad.dtype), grad)

    return ref


def _leaky_relu_grad_reference(negative_slope: float):
    s = np.float64(_f32(negative_slope))

    def ref(gradients: np.ndarray, features: np.ndarray) -> np.ndarray:
        g, x = np.broadcast_arrays(gradients.astype(np.float64), features.astype(np.float64))
        # float32 * float32 is exact in float64; rounding to float32 then to the dtype is what
        # the device does (multiply in float32, one RINT cast)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(x > 0, g, g * s).astype(np.float32).astype(gradients.dtype)

    return ref


def _leaky_relu_reference(negative_slope: float):
    s = np.float64(_f32(negative_slope))

    def ref(x: np.ndarray) -> np.ndarray:
        xd = x.astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(xd > 0, xd, xd * s).astype(np.float32).astype(x.dtype)

    return ref


@dataclasses.dataclass(frozen=True)
class Formula:
    """An op variant's elementwise formula: the device-like tile function, its float64-derived
    reference (same semantics, whole tensors), and, where the kernel departs from PyTorch, the
    PyTorch-semantics reference with the reason."""

    semantics: str
    tile: TileFn
    reference: Callable[..., np.ndarray]
    torch_reference: Callable[..., np.ndarray] | None = None
    torch_note: str = ""


def formula_for(opdef: OpDef, attrs: Mapping[str, float]) -> Formula:
    """The formula of ``opdef`` (kernel name + variant) with its attrs (kernel names, defaults filled)."""
    values = opdef.attr_values(attrs)
    if opdef.name == "HardtanhGrad":
        lo, hi = values["min_val"], values["max_val"]
        # A NaN bound fails every kernel's bound test, so only NaN results pass; PyTorch's
        # "result <= min or result >= max" is false against it and passes grad on that side.
        nan_note = ("expected: with a NaN bound the kernel passes grad only where result is NaN; PyTorch "
                    "zeroes only where result <= min or result >= max, never true against NaN (DECISIONS 8)"
                    if np.isnan(_f32(lo)) or np.isnan(_f32(hi)) else "")
        torch_reference = _torch_hardtanh_reference(lo, hi)
        if opdef.variant == "experimental":
            # no result equals a NaN bound, so then the NaN note is the whole story
            note = nan_note or ("expected: the 910B experimental kernel keeps grad where result == min or == max; "
                                "the arch35 kernel, the ops-nn golden and PyTorch use strict bounds (spec §4.3)")
            return Formula("inclusive bounds: grad passes where min <= result <= max or result is NaN "
                           "(experimental 910B kernel, hardtanh_grad.h)",
                           hardtanh_grad_tile(lo, hi, inclusive=True), _hardtanh_reference(lo, hi, inclusive=True),
                           torch_reference, note)
        return Formula("strict bounds: grad passes where min < result < max or result is NaN "
                       + ("(arch35 DAG)" if nan_note else "(arch35 DAG, PyTorch)"),
                       hardtanh_grad_tile(lo, hi, inclusive=False), _hardtanh_reference(lo, hi, inclusive=False),
                       torch_reference if nan_note else None, nan_note)
    slope = values["negative_slope"]
    if opdef.name == "LeakyReluGrad":
        return Formula("grad where features > 0, else grad * float32(slope) rounded once (arch35 DAG, PyTorch)",
                       leaky_relu_grad_tile(slope), _leaky_relu_grad_reference(slope))
    return Formula("x where x > 0, else x * float32(slope) rounded once (arch35 DAG, PyTorch)",
                   leaky_relu_tile(slope), _leaky_relu_reference(slope))


# host bytes a simulation holds per output element beyond the tensors themselves: its write
# counts (int32), a sample's float64 draw, and the float64 reference with its intermediates
# (measured peaks at 2e7 elements: 19-44 bytes an element in all, this estimate 42-48)
_SIMULATION_BYTES_PER_ELEMENT = 4 + 8 + 24


def _fits_the_host(inputs: Sequence[TensorDesc], output: TensorDesc) -> None:
    """ACL_ERROR_BAD_ALLOC (200000) where a simulation of these tensors would need more host
    memory than is available now (``memory.host_available``): Linux overcommits, so the arrays
    were made and the out-of-memory killer ended the process as they filled (a breaker: `opsnn
    tiling --shape 3000000000 --simulate` exit 137, no output), where the CLI reports a
    simulation this host cannot hold as not run."""
    out_numel = numel(output.shape)
    need = (sum(numel(d.shape) * dtypes.to_numpy(d.dtype).itemsize for d in inputs)
            + out_numel * (dtypes.to_numpy(output.dtype).itemsize + _SIMULATION_BYTES_PER_ELEMENT))
    refusal = memory.beyond_available(need, f"{REFUSAL_PREFIX}the simulation of {out_numel} output elements "
                                            "(inputs, output, write counts, a float64 reference)")
    if refusal:
        raise AclnnError(AclError.BAD_ALLOC, refusal)


def host_array(make: Callable[[], np.ndarray], what: str) -> np.ndarray:
    """``make()``: an array the simulation holds on the host. ACL_ERROR_BAD_ALLOC (200000) naming
    ``what`` where the host has no memory for it or NumPy cannot hold its shape (ValueError:
    more than 2**63 bytes, or dims whose product does even with a 0 among them), so a shape
    that can be tiled but not simulated here is reported as the simulation's failure."""
    try:
        return make()
    except (MemoryError, ValueError) as exc:
        raise AclnnError(AclError.BAD_ALLOC, f"{REFUSAL_PREFIX}cannot hold {what} on this host ({exc})") from None


def sample_inputs(opdef: OpDef, inputs: Sequence[TensorDesc], attrs: Mapping[str, float],
                  seed: int = 0) -> list[np.ndarray]:
    """Random kernel inputs like the ops-nn gen_data scripts (uniform(-2, 2)), with NaN, +-0.0,
    +-inf and, for HardtanhGrad, the exact bounds mixed in so boundary semantics show."""
    rng = np.random.default_rng(seed)
    values = opdef.attr_values(attrs)
    specials = [np.nan, 0.0, -0.0, np.inf, -np.inf] + [values[k] for k in ("min_val", "max_val") if k in values]
    with np.errstate(over="ignore"):  # a bound beyond float32's range is +-inf there
        specials = np.array(specials, dtype=np.float32)

    def sample(desc: TensorDesc) -> np.ndarray:
        data = rng.uniform(-2.0, 2.0, size=desc.shape).astype(np.float32)
        flat = data.reshape(-1)
        picks = rng.random(flat.size) < 0.1
        flat[picks] = rng.choice(specials, size=int(picks.sum()))
        return data.astype(dtypes.to_numpy(desc.dtype))

    return [host_array(functools.partial(sample, desc), f"input {k} {list(desc.shape)}")
            for k, desc in enumerate(inputs)]


def bitwise_mismatches(a: np.ndarray, b: np.ndarray) -> int:
    """Elements whose bits differ (NaN payloads and signed zeros included)."""
    view = np.dtype(f"u{a.dtype.itemsize}")
    return int((np.ascontiguousarray(a).view(view) != np.ascontiguousarray(b).view(view)).sum())


@dataclasses.dataclass(frozen=True)
class OpCheck(Printable):
    """A simulated op launch checked against its formula's float64-derived reference.

    ``reference_mismatches``: elements whose bits differ from the reference of the kernel's own
    semantics (must be 0). ``torch_differences``: elements where the kernel's semantics differ
    from PyTorch's (None when they agree by design), explained by ``torch_note``.
    """

    semantics: str
    sim: SimReport
    reference_mismatches: int
    torch_differences: int | None
    torch_note: str

    @property
    def ok(self) -> bool:
        return self.sim.covered_once and self.sim.within_ub and self.reference_mismatches == 0


def _reach(launch: Launch, strides: Sequence[int]) -> int:
    """How many elements of a tensor read through ``strides`` the launch's tiles span: one past
    the largest offset any box touches."""
    return max((1 + sum((stop - 1) * stride for (_, stop), stride in zip(box, strides))
                for tiles in launch.blocks for box in tiles), default=0)


def _listing(what: str, names: Sequence[str], after: str = "") -> str:
    return f"{what} {' and '.join(names)}{after}" if names else ""


def check_op(result: TilingResult, opdef: OpDef, inputs: Sequence[TensorDesc], outputs: Sequence[TensorDesc],
             attrs: Mapping[str, float], arrays: Sequence[np.ndarray] | None = None, seed: int = 0,
             tile_fn: TileFn | None = None) -> OpCheck:
    """Simulate ``result``'s launch on ``arrays`` (random ``sample_inputs`` when None) with
    ``tile_fn`` (the op's own formula when None) and compare the output bit for bit with the
    float64-derived reference, broadcast to the output's shape as the kernel reads its inputs
    (an input dim of 1 with stride 0); elements a launch never writes count as mismatches.
    Raises AclnnError 561003 for dtypes no binary row of ``opdef`` has (no kernel is built for
    them), 161002 where the launch walks other element counts than the tensors hold
    (the experimental 910B tiling sizes its walk from result alone), naming the tensors it would
    overrun or leave short, and 200000 where this host cannot hold the simulation."""
    tensors = [d.dtype for d in (*inputs, *outputs)]
    if opdef.match_dtypes(tensors) is None:  # (the 910B tiling checks none; the formulas are the rows')
        raise AclnnError(Status.ERR_INNER_FIND_KERNEL_ERROR,
                         f"{opdef.name}: no binary row of the def matches {', '.join(d.name for d in tensors)}: "
                         "ops-nn builds no kernel for these dtypes, so there is no launch to simulate")
    formula = formula_for(opdef, attrs)
    if arrays is None:
        _fits_the_host(inputs, outputs[0])
        arrays = sample_inputs(opdef, inputs, attrs, seed)
    arrays = list(arrays)
    out_dtype = dtypes.to_numpy(outputs[0].dtype)
    launch = result.launch()
    held = [numel(d.shape) for d in (*inputs, outputs[0])]
    walked = [*launch.in_numel, launch.out_numel]
    if held != walked:
        # each tensor against how far the tiles reach into it (the 910B walk: the padded length),
        # not the count the launch assumes: past the end of a smaller one, short of a larger one's
        reach = [_reach(launch, s) for s in (*launch.in_strides, contiguous_strides(launch.out_dims))]
        ins = list(zip(opdef.inputs, held, reach))
        out = (opdef.outputs[0], held[-1], reach[-1])
        effects = " and ".join(part for part in (
            _listing("read past the end of", [n for n, h, r in ins if h < r]),
            _listing("write past the end of", [out[0]] if out[1] < out[2] else []),
            _listing("leave the end of", [n for n, h, r in ins if h > r], " unread"),
            _listing("leave the end of", [out[0]] if out[1] > out[2] else [], " unwritten")) if part)
        raise AclnnError(Status.ERR_PARAM_INVALID,
                         f"{opdef.name}: the launch walks {list(launch.in_numel)} input and {launch.out_numel} "
                         f"output elements but the tensors hold {held[:-1]} and {held[-1]}: on a device the "
                         f"kernel would {effects} (op_host does not check that the shapes agree); the "
                         "simulator runs launches within their tensors only")
    sim = simulate(launch, arrays, tile_fn or formula.tile, out_dtype)
    out_shape = tuple(outputs[0].shape)
    out = sim.output.reshape(out_shape)
    if len(set(held)) == 1:  # no broadcasting: the kernel pairs elements by position, whatever the shapes
        arrays = [a.reshape(-1) for a in arrays]

    def as_output(values: np.ndarray) -> np.ndarray:
        # an output larger than broadcast(inputs) (LeakyReluGrad (1,), (1,) -> (8,)) is what
        # DimensionCollapse accepts: an input's dim of 1 is read with stride 0 across the output's
        # dim, so the reference broadcasts the same way
        return values.reshape(out_shape) if values.size == out.size else np.broadcast_to(values, out_shape)

    expected = as_output(formula.reference(*arrays))
    differences = None
    if formula.torch_reference is not None:
        differences = bitwise_mismatches(expected, as_output(formula.torch_reference(*arrays)))
    return OpCheck(formula.semantics, sim, bitwise_mismatches(out, expected), differences, formula.torch_note)
