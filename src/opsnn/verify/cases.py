"""What one verify case is, read from either case file format: ``Case`` and the specs of its
inputs (``TensorSpec``, ``ScalarSpec``, their ``Values``), its ``Tolerance``, the labels its
table row shows, and ``--cases``, the selection of the cases a run takes.

Separate from the readers (``casefiles``) so that everything downstream (input generation,
comparison, the run, ``opsnn compare``) depends on the model alone, never on a file format.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
from collections.abc import Callable, Iterable

import numpy as np

from opsnn._core.words import named
from opsnn.cli_args import (  # (the dash hints' look-alikes of '-')
    AS_HYPHEN,
    TYPOGRAPHIC_DASHES,
)
from opsnn.cli_words import non_ascii

# ---- case model ---------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Values:
    """How a tensor is filled or a scalar picked: one value, or uniform in [low, high] + specials.
    A number the file writes as an integer stays a Python int (an int64 of 2**53 + 1, which a
    float rounds to 2**53, is filled as itself)."""

    low: int | float
    high: int | float
    specials: tuple[int | float, ...] = ()
    fill: bool = False

    @classmethod
    def constant(cls, value: float) -> Values:
        return cls(value, value, (), True)

    @property
    def is_constant(self) -> bool:
        """One fill value: given as one, or a range whose two ends are equal, NaN and NaN counted
        equal (``[nan, nan]`` fills with NaN). A range with one NaN end is no fill, in either
        order: ``fields._checked`` refuses it as not finite (``[nan, 5]`` had filled with NaN
        while ``[5, nan]`` was refused)."""
        return self.fill or self.low == self.high or (math.isnan(self.low) and math.isnan(self.high))


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    """One tensor input: its aclnn argument role, dtype, shape, values and format name."""

    role: str
    dtype: np.dtype
    shape: tuple[int, ...]
    values: Values
    format: str = "ND"


@dataclasses.dataclass(frozen=True)
class ScalarSpec:
    """One aclScalar input: its aclnn argument role, dtype and value spec."""

    role: str
    dtype: np.dtype
    values: Values


# Tolerance sources that ask for every bit: the atk "md5" standard (CANN's check compares the
# files' bytes) and a csv row that gives no tolerance (``casefiles._csv_tolerance``).
BIT_EXACT_SOURCES = ("md5", "exact")
# Every source casefiles gives a tolerance: compare refuses a dump naming another, since the name
# alone decides between bit-exact and threshold (an edited "MD5" would pass -0.0 against 0.0).
TOLERANCE_SOURCES = (*BIT_EXACT_SOURCES, "precision_tolerances", "absolute_precision", "single_bm", "default")


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """Element-wise criterion ``|actual - golden| <= atol + rtol * |golden|``; specials must match.
    A bit-exact ``source`` (``BIT_EXACT_SOURCES``) asks for equal bits instead."""

    rtol: float
    atol: float
    source: str

    @property
    def bit_exact(self) -> bool:
        return self.source in BIT_EXACT_SOURCES


@dataclasses.dataclass(frozen=True)
class Case:
    """One case, already mapped onto an opsnn aclnn operator (``op`` is a key of ``bindings.OPS``)."""

    file: str
    index: int
    name: str
    op: str  # (but for an ``unread`` case whose op_name names no kernel: that name)
    tensors: tuple[TensorSpec, ...]
    scalars: tuple[ScalarSpec, ...]
    flags: tuple[tuple[str, bool], ...]
    out_dtype: np.dtype
    out_shape: tuple[int, ...]
    out_format: str
    tolerance: Tolerance
    unsupported: str | None = None  # why the case is a SKIP as read: no aclnn mapping, disabled, binary data
    note: str = ""  # what the row's kernel would do differently (a dtype mix it refuses)
    soc_series: tuple[str, ...] = ()  # the SoCs a kernel row names

    @classmethod
    def unread(cls, file: str, index: int, name: str, op: str, reason: str) -> Case:
        """A case read for its name and op alone, never run (``reason``, its ``unsupported``: a
        disabled csv row, which CANN's harness does not run either): no tensors, scalars or
        flags, an out of 0 elements (its table row shows no dtype or shape, and 0 elements: none read), the
        tolerance bit-exact; ``fields._checked`` passes it as it is."""
        return cls(file, index, name, op, (), (), (), np.dtype(np.float32), (0,), "ND", Tolerance(0.0, 0.0, "exact"),
                   reason)

    @property
    def numel(self) -> int:
        """Elements of the largest tensor (inputs and output)."""
        return max(math.prod(s) for s in [t.shape for t in self.tensors] + [self.out_shape])

    @property
    def dtype_label(self) -> str:
        return dtype_label(t.dtype for t in self.tensors)

    @property
    def shape_label(self) -> str:
        return shape_label(t.shape for t in self.tensors)


def dtype_label(dtypes: Iterable[np.dtype]) -> str:
    """A row's dtype column (verify's and ``opsnn compare``'s): each input's dtype once."""
    return "/".join(dict.fromkeys(d.name for d in dtypes))


def shape_label(shapes: Iterable[Iterable[int]]) -> str:
    """A row's shape column: each input's shape once, ``2x3``, ``()`` for 0-d."""
    return " & ".join(dict.fromkeys("x".join(map(str, s)) or "()" for s in shapes))


def is_real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_tolerance(value) -> bool:
    """Whether ``value`` may be a relative or absolute tolerance: a finite number >= 0 (a NaN one
    would fail every element, an infinite one pass any, a negative one fail even exact output;
    an int too large for a float is none: it raised OverflowError)."""
    try:
        return is_real(value) and math.isfinite(float(value)) and value >= 0
    except OverflowError:
        return False


# ---- case selection -----------------------------------------------------------------------------

_CASES_EXPECTED = ("indexes '7', ranges '0-9', case names 'LeakyRelu_1' (that case alone) or name substrings "
                   "'fuzz_4' (a word that is no case's name), comma-separated")


class CaseSelection:
    """``--cases``: which cases run. Each item is an index, an inclusive range or a word, any case:
    a case's whole name selects that case alone, another word every name holding it; a case runs
    when any item matches it."""

    def __init__(self, spec: str, items: list[tuple[str, Callable[[Case], bool]]]):
        self.spec, self.items = spec, items

    def __call__(self, case: Case) -> bool:
        return any(test(case) for _, test in self.items)

    def against(self, cases: list[Case]) -> CaseSelection:
        """This selection over ``cases``: a word that is the whole name of one of them matches that
        name only (LeakyRelu_1 had run _10-_19 and _100-_199 too, with no way to say the one); an
        index or a range still selects by index, where a case is named as the number too."""
        names = {case.name.lower() for case in cases}
        items = [(text, _named(text.lower()) if not _numeric(text) and text.lower() in names else test)
                 for text, test in self.items]
        return CaseSelection(self.spec, items)

    def check_matches(self, cases: list[Case]) -> None:
        """Raise ValueError naming the items that match none of ``cases``: a typo must not turn
        into a green run of 0 cases (or of fewer than meant)."""
        missing = [text for text, test in self.items if not any(test(c) for c in cases)]
        if not missing:
            return
        have = (f"indexes 0-{max(c.index for c in cases)} or a substring of a case name such as "
                f"{cases[0].name!r}" if cases else "no case at all: the files hold none")
        raise ValueError(f"--cases {self.spec!r}: {', '.join(map(repr, missing))} "
                         f"{'matches' if len(missing) == 1 else 'match'} no case; expected {have}{_dash_note(missing)}")


def _dash_note(missing: list[str]) -> str:
    """The first of the ``missing`` items that is a range written with a typographic dash (0\u20132,
    pasted from a page), named with the range to write: read as a name substring, it matched
    nothing, and the refusal's "expected indexes 0-4" looks the same by eye (a breaker's)."""
    for text in missing:
        fixed = text.translate(AS_HYPHEN)
        if fixed != text and re.fullmatch(r"\d+\s*-\s*\d+", fixed):
            dash = next(char for char in text if char in TYPOGRAPHIC_DASHES)
            return f" ({text!r} has {named(dash)} for its dash, not '-': write {''.join(fixed.split())} for the range)"
    return ""


def _named(word: str) -> Callable[[Case], bool]:
    return lambda case: case.name.lower() == word


def _numeric(item: str) -> bool:
    """Whether a ``--cases`` item is read as an index or a range (digits, '-' and spaces alone),
    not as a word of a case's name."""
    return re.fullmatch(r"[\d\s-]+", item) is not None


def case_filter(spec: str) -> CaseSelection:
    """The argparse type of ``--cases``: a malformed item (``3-``, ``-1``) or a reversed range
    (``3-1``) is a usage error."""
    items = []
    for item in (part.strip() for part in spec.split(",") if part.strip()):
        if _numeric(item):  # an index or a range, nothing looser
            why = non_ascii("".join(item.split()))  # (its spaces, any, are the grammar's)
            if why:  # (\d and int() read other scripts' digits: one rule for every number, cli_words')
                raise argparse.ArgumentTypeError(f"bad item {item!r} in {spec!r}: {why}")
            match = re.fullmatch(r"(\d+)\s*(?:-\s*(\d+))?", item)
            if not match:
                raise argparse.ArgumentTypeError(f"bad item {item!r} in {spec!r}; expected {_CASES_EXPECTED}")
            lo, hi = int(match[1]), int(match[2] or match[1])
            if lo > hi:
                raise argparse.ArgumentTypeError(f"reversed range {item!r} in {spec!r}; "
                                                 f"expected low-high, e.g. {hi}-{lo}")
            items.append((item, lambda case, lo=lo, hi=hi: lo <= case.index <= hi))
        else:
            items.append((item, lambda case, word=item.lower(): word in case.name.lower()))
    if not items:
        raise argparse.ArgumentTypeError(f"expected {_CASES_EXPECTED}, got {spec!r}")
    return CaseSelection(spec, items)

