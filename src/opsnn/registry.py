"""OpSpec: one declarative record per aclnn operator; everything else is derived from it.

Validation order, promotion, broadcast, output geometry, executor steps, docs (``opsnn describe``)
and the registry-driven tests all read these records.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import functools
import re
from collections.abc import Callable

from ._core.dtypes import INTEGRAL, DataType, in_listing_order
from ._core.platform import SocProfile
from ._core.words import non_ascii


class Promotion(enum.Enum):
    PROMOTE = "promote"  # compute dtype = PromoteType(inputs); out needs CanCast(promoted, out)
    SAME = "same"        # inputs must share one dtype; no promotion


class ScalarConversion(enum.Enum):
    """How the aclScalar arguments reach the kernel (spec §2.8)."""

    TO_FLOAT = "to_float"            # aclScalar::ToFloat: a float32 attr (LeakyRelu*, HardtanhBackward)
    TO_SELF_DTYPE = "to_self_dtype"  # ConvertToTensor(scalar, self.dtype): a value of self's dtype
                                     # (Hardtanh: ints truncate toward zero; aclScalar.to_dtype)


class Compute(enum.Enum):
    """The dtype a Kernel step computes in, given the result (promoted) dtype."""

    FLOAT = "float"                      # float32 for f16/bf16/f32, float64 for f64 (round once)
    NATIVE_INTEGERS = "native_integers"  # as FLOAT for floating dtypes; integer dtypes compute in
                                         # their own dtype, never widened to a float

    def dtype_for(self, promoted: DataType) -> DataType:
        if self is Compute.NATIVE_INTEGERS and promoted in INTEGRAL:
            return promoted
        return DataType.DOUBLE if promoted == DataType.DOUBLE else DataType.FLOAT


@dataclasses.dataclass(frozen=True)
class DtypeTable:
    """A per-SoC dtype list: ``base`` everywhere, plus ``on_910b_list`` where the op's
    "910B list" applies (NpuArch DAV_2201 or regbase; spec §2.3)."""

    base: tuple[DataType, ...]
    on_910b_list: tuple[DataType, ...] = ()

    def for_profile(self, profile: SocProfile) -> tuple[DataType, ...]:
        """The SoC's list, in ``dtypes.in_listing_order`` (every listing of it shows that order)."""
        return self._listed[profile.uses_910b_dtype_list]

    @functools.cached_property
    def _listed(self) -> tuple[tuple[DataType, ...], tuple[DataType, ...]]:
        return in_listing_order(self.base), in_listing_order(self.base + self.on_910b_list)


@dataclasses.dataclass(frozen=True)
class Param:
    """One aclnn argument: snake_case ``name`` inside, CANN ``api_name`` in messages."""

    name: str
    api_name: str
    kind: str  # "tensor", "scalar" or "flag"
    dtypes: DtypeTable | None = None  # None: the dtype is not checked


def tensor(name: str, api_name: str | None = None, dtypes: DtypeTable | None = None) -> Param:
    return Param(name, api_name or name, "tensor", dtypes)


def scalar(name: str, api_name: str | None = None, dtypes: DtypeTable | None = None) -> Param:
    return Param(name, api_name or name, "scalar", dtypes)


def flag(name: str, api_name: str | None = None) -> Param:
    return Param(name, api_name or name, "flag")


@dataclasses.dataclass(frozen=True)
class OpSpec:
    """An aclnn operator.

    Attributes:
        name: aclnn name without prefix (``LeakyReluBackward`` -> ``aclnnLeakyReluBackward``).
        kernel_name: the l0/kernel op ops-nn launches (``LeakyReluGrad``).
        params: aclnn arguments in C order, output last (``out``).
        null_order: argument names in the order CANN's null checks visit them.
        promotion: PROMOTE or SAME (see Promotion).
        broadcast: inputs broadcast to the output shape (else shapes must be equal).
        out_equals_self: out dtype and shape must equal self's (aclnnHardtanh's own check; for
            HardtanhBackward opsnn's DECISION 10).
        out_dtype_after_shapes: out's dtype is compared with self's after the shape checks, not
            with the dtype checks: DECISION 10's check, which CANN's code does not make, lets
            CANN's own shape checks speak first.
        extra_checks: op-specific checks ``check(args, profile)``, run after the shape checks.
        unsupported_socs: SoCs whose product line has no kernel for the op (561003).
        kernel: the elementwise expression ``kernel(ops, *kernel_inputs, **scalars)``.
        kernel_inputs: tensor names in the kernel's input order.
        native_inputs: kernel inputs passed in their own dtype (bits copied), not widened.
        contiguous_out: the l2 chain makes ``out`` contiguous before the kernel (HardtanhBackward).
        scalar_conversion: how scalars become kernel attributes (ScalarConversion; default ToFloat).
        compute: the kernel's compute dtype policy (Compute; default float32/float64).
        inplace: an ``aclnnInplace<Op>(selfRef, ...)`` variant: ops-nn calls the out-of-place body
            with ``out = selfRef``; built with ``inplace_variant`` (no ``out`` null check of its own).
        formula: one-line statement of the maths, for docs.
        source: where the behaviour comes from (ops-nn file / torch op).
    """

    name: str
    kernel_name: str
    params: tuple[Param, ...]
    null_order: tuple[str, ...]
    promotion: Promotion
    broadcast: bool
    kernel: Callable
    kernel_inputs: tuple[str, ...]
    formula: str
    source: str
    out_equals_self: bool = False
    out_dtype_after_shapes: bool = False
    extra_checks: tuple[Callable, ...] = ()
    unsupported_socs: frozenset[str] = frozenset()
    native_inputs: tuple[str, ...] = ()
    contiguous_out: bool = False
    scalar_conversion: ScalarConversion = ScalarConversion.TO_FLOAT
    compute: Compute = Compute.FLOAT
    inplace: bool = False

    @property
    def api_name(self) -> str:
        return "aclnn" + self.name

    @property
    def python_name(self) -> str:
        """The Pythonic API's name (``opsnn.functional``): the name in snake_case, an in-place
        variant as its operator's with a trailing ``_`` (torch's spelling: ``hardtanh_``)."""
        return snake_case(self.name.removeprefix("Inplace")) + ("_" if self.inplace else "")

    @functools.cached_property
    def param_names(self) -> tuple[str, ...]:
        """The params' names in C order (``out`` last)."""
        return tuple(p.name for p in self.params)

    @property
    def inputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.kind == "tensor" and p.name != "out")

    @property
    def scalars(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.kind == "scalar")

    @property
    def output(self) -> Param:
        return next(p for p in self.params if p.name == "out")

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    @property
    def call_params(self) -> tuple[Param, ...]:
        """The aclnn call's parameters in C order: an in-place variant passes its one tensor once,
        as selfRef, so its ``out`` is left out."""
        return tuple(p for p in self.params if not (self.inplace and p.name == "out"))

    def call_name(self, param: Param) -> str:
        """``param``'s name in the aclnn call: selfRef for an in-place variant's tensor, in either
        role; else its CANN name."""
        return "selfRef" if self.inplace and param.kind == "tensor" else param.api_name


def inplace_variant(spec: OpSpec) -> OpSpec:
    """``aclnnInplace<Op>``: ``spec`` called with ``out = selfRef`` (ops-nn's in-place entry points
    call the out-of-place body that way, so checks, codes and numbers are the same)."""
    return dataclasses.replace(spec, name="Inplace" + spec.name, inplace=True,
                               null_order=tuple(n for n in spec.null_order if n != "out"))


_REGISTRY: dict[str, OpSpec] = {}


def register(spec: OpSpec) -> OpSpec:
    if spec.name in _REGISTRY:
        raise ValueError(f"operator {spec.name} registered twice")
    _REGISTRY[spec.name] = spec
    return spec


def _load() -> None:
    from . import ops  # noqa: F401 - importing ops registers the specs


def get(name: str) -> OpSpec:
    """Spec by aclnn name, with or without the ``aclnn`` prefix, or by kernel name."""
    spec = _REGISTRY.get(name)  # the common case first: every Pythonic call looks its spec up
    if spec is not None:
        return spec
    _load()
    key = name.removeprefix("aclnn")
    if key in _REGISTRY:
        return _REGISTRY[key]
    for spec in _REGISTRY.values():
        if spec.kernel_name == name:
            return spec
    raise KeyError(_unknown(name))


def snake_case(name: str) -> str:
    """A CANN name in Python's spelling: ``gradOutput`` -> ``grad_output``, ``HardtanhBackward``
    -> ``hardtanh_backward``."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _unknown(name: str, why: str = "", among=None) -> str:
    """An unknown operator name's message: why, where said, the closest name (``closest``), and
    every operator by its aclnn and its Pythonic name; with ``among`` (the spec names a caller
    takes), only those, as what is expected."""
    suggestion = closest(name, among)
    hint = f" (did you mean {suggestion}?)" if suggestion else ""
    known = ", ".join(f"{spec.name} ({spec.python_name})" for spec in _REGISTRY.values()
                      if among is None or spec.name in among)
    listed = "known" if among is None else "expected one of"
    return f"unknown operator {name!r}{': ' + why if why else ''}{hint}; {listed}: {known}"


def closest(name: str, among=None) -> str | None:
    """The operator name closest to a misspelt ``name`` (difflib's, at its default cutoff), of
    the names ``resolve`` takes (aclnn, kernel or Pythonic), compared in lower case as
    ``resolve`` reads them, then without ``name``'s underscores; None where none is close.
    ``among``: the spec names to suggest from (all where None)."""
    spellings = {}  # lower case -> the spelling suggested
    for spec in all_specs():
        if among is not None and spec.name not in among:
            continue
        for word in (spec.name, spec.python_name, spec.kernel_name):
            spellings.setdefault(word.lower(), word)
    key = name.strip().lower().removeprefix("aclnn")
    # then without its underscores: a name with them put elsewhere (h_a_r_d_t_a_n_h) is no near miss
    # of the whole, but is of a name its letters spell
    close = (difflib.get_close_matches(key, spellings, n=1)
             or difflib.get_close_matches(key.replace("_", ""), spellings, n=1))
    return spellings[close[0]] if close else None


def resolve(name: str, among=None) -> OpSpec:
    """The spec a user's name for an operator gives (the command line's OP, ``opsnn bench
    --ops``), in any case and with surrounding whitespace: a name ``get`` takes (its aclnn name,
    ``aclnn`` prefix optional, or kernel op name), resolved as ``get`` resolves its exact spelling
    (``clipbyvaluev2``: Hardtanh, as ``ClipByValueV2`` is; it was unknown, the kernel of two
    specs), either one in snake_case (``hardtanh_grad``, ``aclnn_leaky_relu_backward``), or the
    Pythonic name (``leaky_relu_backward``; ``hardtanh_`` is InplaceHardtanh). Only these
    spellings: an underscore elsewhere is no name (``h_a_r_d_t_a_n_h`` had been Hardtanh, every
    underscore dropped), nor is a word with a character past ASCII (``words.non_ascii``).
    KeyError for an unknown name (with ``closest``'s hint), and for one whose spellings in other
    cases name different operators (saying "ambiguous" and naming them). ``among``: the spec
    names the caller takes (``opsnn bench --ops``' four), which alone an unknown name's message
    suggests and lists (a breaker: bench suggested hardtanh_, which it then refused)."""
    try:
        return get(name)
    except KeyError as exc:
        unknown = exc if among is None else KeyError(_unknown(name, among=among))
    why = non_ascii(name)
    if why:  # (a breaker: lower() made the Kelvin sign k, so LeaKyRelu with it ran aclnnLeakyRelu)
        raise KeyError(_unknown(name, f"{why}, as no operator name is", among))
    typed = name.strip().lower()
    found: dict[str, list[str]] = {}  # spec name -> the exact spellings that name it
    for spec in all_specs():
        for exact in (spec.name, spec.kernel_name):
            # each form bare or after its own spelling of the prefix: aclnnLeakyRelu, aclnn_leaky_relu
            if typed in (form for base, prefix in ((exact.lower(), "aclnn"), (snake_case(exact), "aclnn_"))
                         for form in (base, prefix + base)):
                words = found.setdefault(get(exact).name, [])  # (a kernel name: its spec as get reads it)
                words += [] if exact in words else [exact]
        if typed == spec.python_name and spec.name not in found:  # (an in-place one's: hardtanh_)
            found[spec.name] = [spec.python_name]
    if len(found) > 1:
        named = "; ".join(f"{' / '.join(words)}: aclnn{spec}" for spec, words in found.items())
        raise KeyError(f"ambiguous operator name {name!r}: in other cases it names {named}; "
                       "give one of these spellings exactly")
    if not found:
        raise unknown
    return _REGISTRY[next(iter(found))]


def all_specs() -> tuple[OpSpec, ...]:
    _load()
    return tuple(_REGISTRY.values())
