"""Judging a result against its golden: ``compare`` (element-wise, at a case's ``Tolerance``,
NaN equal to NaN, integers exactly) and ``verdict`` (PASS, FAIL or DOC from that comparison).

Separate because it is the one place of that policy: ``opsnn verify`` judges opsnn's own
result by it, and ``opsnn compare`` a board's result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from opsnn.results import DOC, FAIL, PASS
from opsnn.verify.cases import Tolerance


@dataclasses.dataclass(frozen=True)
class Comparison:
    """Element-wise comparison of a result with its golden."""

    max_abs: float
    max_rel: float
    bit_exact: bool
    mismatches: int  # elements outside the tolerance
    differs: np.ndarray  # bool mask: bits differ (NaN equals NaN)
    outside: np.ndarray  # bool mask: outside the tolerance (``mismatches`` of them)


def _bits(a: np.ndarray) -> np.ndarray:
    # (np.ascontiguousarray would make a 0-d array 1-d, and the masks with it)
    return np.asarray(a, order="C").view(f"u{a.dtype.itemsize}")


def compare(actual: np.ndarray, golden: np.ndarray, tolerance: Tolerance) -> Comparison:
    """Compare two arrays of the same shape and dtype; NaN matches NaN, infinities must match.

    Under a bit-exact tolerance (``Tolerance.bit_exact``) an element is outside it where its bits
    differ: -0.0 against 0.0 too, which ``|a - g| <= 0`` had let pass under "md5". A NaN still
    equals any NaN, its sign and payload aside: the backends and goldens may write either NaN's
    payload where two meet (docs/torch.md section 5). Integers are compared as integers
    (``_integer_error``): through float64, an int64 off by one at 2**53 had passed "md5"."""
    a = actual.astype(np.float64)
    g = golden.astype(np.float64)
    differs = (_bits(actual) != _bits(golden)) & ~(np.isnan(a) & np.isnan(g))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if actual.dtype.kind in "iu":
            exact_error = _integer_error(actual, golden)
            error = np.where(differs, exact_error.astype(np.float64), 0.0)
        else:
            error = np.where(differs, np.abs(a - g), 0.0)
            error = np.where(np.isnan(error), np.inf, error)  # NaN against a number, inf against -inf
        relative = np.where(error > 0, error / np.abs(g), 0.0)
        relative = np.where(np.isnan(relative), np.inf, relative)
        bound = tolerance.atol + tolerance.rtol * np.abs(g)
        if tolerance.bit_exact:
            within = np.zeros(differs.shape, bool)
        elif actual.dtype.kind in "iu":
            within = _integer_within(exact_error, bound)
        else:
            within = np.isfinite(a) & np.isfinite(g) & (error <= bound)
        outside = differs & ~within
    return Comparison(float(error.max(initial=0.0)), float(relative.max(initial=0.0)),
                      not differs.any(), int(outside.sum()), differs, outside)


def _integer_error(actual: np.ndarray, golden: np.ndarray) -> np.ndarray:
    """``|actual - golden|`` of two integer arrays, exactly, as uint64 (every such difference
    fits: the subtraction wraps modulo 2**64 and the larger operand comes first)."""
    wide = np.int64 if actual.dtype.kind == "i" else np.uint64
    aw, gw = actual.astype(wide), golden.astype(wide)
    a, g = aw.astype(np.uint64), gw.astype(np.uint64)
    return np.where(aw >= gw, a - g, g - a)


def _integer_within(error: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Whether each exact integer ``error`` is inside its float ``bound``: compared with the
    bound rounded down to an integer, in uint64 (a bound of 2**64 or more holds any error)."""
    whole = np.floor(bound)
    huge = whole >= 2.0**64
    return huge | (error <= np.where(huge, 0.0, whole).astype(np.uint64))


def verdict(comparison: Comparison, tolerance: Tolerance, explain: Callable[[], str | None]) -> tuple[str, str]:
    """``(status, reason)`` of a compared result: DOC where it is not bit-exact and ``explain()``
    names the documented decision behind the difference (even one inside the tolerance: it is
    labelled), else PASS, or FAIL with the count outside the tolerance. ``verify`` and
    ``opsnn compare`` judge by it."""
    explanation = None if comparison.bit_exact else explain()
    if explanation:
        return DOC, explanation
    if comparison.mismatches and tolerance.bit_exact:
        return FAIL, (f"{comparison.mismatches:,} of {comparison.outside.size:,} elements differ from the golden's "
                      f"bits ({tolerance.source}: bit-exact, a NaN equal to any NaN)")
    if comparison.mismatches:
        return FAIL, (f"{comparison.mismatches:,} of {comparison.outside.size:,} elements outside "
                      f"rtol {tolerance.rtol:g} / atol {tolerance.atol:g}")
    return PASS, ""

