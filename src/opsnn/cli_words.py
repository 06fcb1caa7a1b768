"""The words the ``opsnn`` commands read, each as argparse reads an option's value: dtypes
(``dtypes.parse_name`` as a usage error), shapes, scalars, floats and counts, SoC names, and the
values of list options given by commas. A bad word raises ``argparse.ArgumentTypeError``, a
usage error (exit 2) argparse words as one naming the option, with what was expected and what
was given. ``cli_args`` holds the parser and the actions that read with them.
"""

from __future__ import annotations

import argparse
import math
import re
import unicodedata
from decimal import Decimal, InvalidOperation

from ._core import checks, words


def data_type(text: str):
    """The aclDataType a ``--dtype`` word of ``opsnn run`` / ``opsnn tiling`` / ``opsnn bench``
    names (``dtypes.parse_name``'s grammar: CANN's names in any case, opsnn's short names,
    NumPy's). Usage error (argparse.ArgumentTypeError) for anything else."""
    from ._core.dtypes import parse_name

    try:
        return parse_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def numpy_dtype(text: str):
    """The NumPy dtype of the aclDataType a ``--dtype`` word names (``data_type``'s grammar).
    Usage error (argparse.ArgumentTypeError) for a word that names none, or a type that holds no
    data here (STRING, HIFLOAT8 ...)."""
    from ._core import dtypes

    acl = data_type(text)
    if not dtypes.holds_data(acl):
        raise argparse.ArgumentTypeError(f"dtype {text!r} ({acl.acl_name}) holds no data here (no NumPy dtype)")
    return dtypes.to_numpy(acl)


def dtype_list(read):
    """The type of a ``--dtype`` option taking one dtype or several in one word by commas
    (``f16,f32``), each read by ``read`` (``data_type``, ``numpy_dtype``): a tuple of them. An
    empty item is a usage error saying how to write the list: the shell splits ``--dtype f16,
    f32`` in two words, and the refusal had been "unknown dtype ''", naming no item."""

    def parse(text: str) -> tuple:
        parts = text.split(",")
        if len(parts) > 1 and not all(part.strip() for part in parts):
            raise argparse.ArgumentTypeError(f"{text!r} has an empty item; give the dtypes in one word, by commas "
                                             "without spaces: --dtype f16,f32")
        return tuple(read(part) for part in parts)

    return parse


# A word starting with "-" is an option to argparse unless its negative-number pattern matches,
# and that pattern only knows -5, -.5 and -2.5 (Python 3.11): -1e3, -5., -inf and -nan, scalars
# CANN's own test cases use, were read as unknown options ("unrecognized arguments: -inf"), and
# so were a shape with a negative first dim (-1,3 or -1x3), whose own check names it, and
# scalars written with commas (--scalar -1,1 or -1, 1), or with digit separators (-1_000).
_DIGITS = r"\d(?:_?\d)*"  # with Python's digit separators (-1_000), as int() and float() read them
_FLOAT = rf"(?:(?:{_DIGITS}\.?(?:{_DIGITS})?|\.{_DIGITS})(?:[eE][-+]?{_DIGITS})?|inf|infinity|nan)"
NEGATIVE_NUMBER = re.compile(rf"^-(?:{_FLOAT}(?:,-?{_FLOAT})*,?|\d+(?:[,x]-?\d+)+)$", re.IGNORECASE)


def parse_shape(text: str) -> tuple[int, ...]:
    """``1,64,2,64``, ``[1, 64]``, ``(1, 64)``, ``1x64``, ``1 64`` (a trailing comma too, as in
    Python's ``(2,)``) or ``[]``/empty for a 0-d shape
    (negative dims pass: ``opsnn tiling`` takes GE's dynamic dims, -1 and [-2], and refuses the
    others itself; dims beyond int64 do not).
    Anything else, a stray separator or bracket included, is a usage error."""
    body = text.strip()
    if body[:1] + body[-1:] in ("[]", "()"):  # one matching pair at most: "[[2,3))" is a typo
        body = body[1:-1].strip()
    # ASCII digits only: \d and int() read other scripts' digits too ("\u0663,\uff12" was [3, 2]);
    # one trailing comma, as Python writes a 1-d shape, (2,)
    if body and not re.fullmatch(r"-?[0-9]+(?:(?:\s*[,x]\s*|\s+)-?[0-9]+)*(?:\s*,)?", body):
        why = non_ascii(body)
        raise argparse.ArgumentTypeError(f"bad shape {text!r}; {why + '; ' if why else ''}write e.g. 1,64,2,64 "
                                         "or [] for 0-d")
    dims = []
    for sign, digits in re.findall(r"(-?)0*([0-9]+)", body):
        # (int() refuses more than 4300 digits, leading zeros counted, with a ValueError of its own:
        # a traceback; more than 19 are beyond int64 whatever they are)
        if len(digits) > 19 or not -2**63 <= int(sign + digits) < 2**63:  # (aclTensor's dims are int64_t)
            raise argparse.ArgumentTypeError(f"bad shape {text!r}; dims are int64 (< 2**63)")
        dims.append(int(sign + digits))
    return tuple(dims)


def dynamic_shape_refusal(shape: tuple[int, ...]) -> str | None:
    """Why ``shape``, an ``opsnn tiling`` input's, is refused for a negative dim, or None: GE's
    dynamic shapes take -1 for an unknown dim and the whole shape [-2] for an unknown rank, no
    other negative dim."""
    if any(d < -1 for d in shape) and tuple(shape) != (-2,):
        return f"shape {list(shape)}: a dim is >= 0 or -1 (unknown), or the whole shape is [-2] (unknown rank)"
    return None


def non_ascii(text: str) -> str | None:
    """Why ``text``, a number as the command line reads it (a dim, a scalar, a count, a float
    option), is refused, or None: a character past ASCII (``words.non_ascii``), which the shape
    grammar refuses: one rule for every number (a breaker: ``--scalar \u0663`` ran a slope of 3,
    ``--seed \u0663`` seed 3). Surrounding whitespace is the caller's to drop."""
    why = words.non_ascii(text)
    return None if why is None else f"{why}, in which numbers are read"


def misplaced_underscore(text: str) -> str | None:
    """Why ``text``, a whole number as the command line reads it (a count, a seed), is refused for
    an underscore, or None: Python's digit separator goes between two digits only (``1_000``,
    ``1_0e1_0``), as int() and float() read it. Decimal, which reads what they do not (an
    exponent, thousands of digits), takes one anywhere: ``--seed _5`` had run seed 5, and ``5_``,
    ``1__0`` and ``1e_3`` had been numbers too (a breaker)."""
    if re.search(r"(?<![0-9])_|_(?![0-9])", text.strip()):
        return "an underscore goes only between two digits (1_000)"
    return None


def scalar_word(word: str) -> bool | int | float:
    """A ``--scalar`` value (``ScalarWords``' grammar), or a ValueError saying why it is none."""
    why = non_ascii(word)
    if why:
        raise ValueError(f"bad scalar {word!r}: {why}")
    if word.lower() in ("true", "false"):
        return word.lower() == "true"
    literal = re.fullmatch(r"\s*([-+]?)([0-9](?:_?[0-9])*)\s*", word)  # an int literal, as int() reads one
    if literal:
        digits = literal[2].replace("_", "").lstrip("0") or "0"
        # (more than 20 digits are beyond uint64 whatever they are, and int() refuses more than 4300,
        # leading zeros counted: such an int had gone on to be "beyond float64")
        value = int(literal[1] + digits) if len(digits) <= 20 else None
        if value == 0 and literal[1] == "-":
            return -0.0  # an int has no -0: the sign of zero is kept as a double's
        if value is None or not checks.int_held(value):
            raise ValueError(f"scalar {word!r} is an int beyond int64 and uint64 (what an aclScalar holds)")
        return value
    try:
        return float_word(word)
    except BeyondFloat64 as exc:
        raise ValueError(f"scalar {exc} (a float travels as ACL_DOUBLE)") from None
    except ValueError:
        raise ValueError(f"bad scalar {word!r}; write e.g. -1 1 or -1,1 (ints, floats, true, false)") from None


class BeyondFloat64(ArithmeticError):
    """A finite float literal float64 cannot hold (``float_word``); its message names the word."""


def float_word(word: str) -> float:
    """``float(word)``, but a finite literal float64 cannot hold is a BeyondFloat64 saying so:
    one beyond its range (``1e400``: strtod's ERANGE, not a value), which ``float`` makes an
    infinity, and a nonzero one that rounds to 0 (``1e-400``), which ``float`` makes zero without
    a word. One rule for ``opsnn run --scalar`` and ``opsnn tiling``'s attrs (breakers: tiling
    took 1e400 as inf, run 1e-400 as a slope of 0). ``inf``, ``-inf`` and ``nan`` are values."""
    value = float(word)
    if math.isinf(value) and "inf" not in word.lower():
        raise BeyondFloat64(f"{word!r} is beyond float64's range; write inf or -inf for an infinity")
    # a literal float read as 0 is zero exactly where its digits before the exponent are all 0
    # (not Decimal(word) != 0: Decimal refuses an exponent past its own range, 1e-99999999999999999999),
    # a digit of any script float() reads ('\u0661' is 1) counted by its value, not as ASCII 1-9
    if value == 0 and any(unicodedata.decimal(ch, 0) for ch in re.split("[eE]", word)[0]):
        raise BeyondFloat64(f"{word!r} rounds to 0 in float64 (its smallest nonzero is 5e-324); write 0 for zero")
    return value


def float_argument(text: str) -> float:
    """The argparse type of a float option (``float_word``'s rule): a usage error naming the
    option for a word that is no float (``non_ascii``'s too) or one float64 cannot hold."""
    why = non_ascii(text.strip())
    if why:
        raise argparse.ArgumentTypeError(f"invalid float value {text!r}: {why}")
    try:
        return float_word(text)
    except BeyondFloat64 as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None


# a literal whose exponent Decimal cannot hold (past 10**18 either way): its sign, mantissa and exponent's sign
_HUGE_LITERAL = re.compile(rf"\s*([-+]?)((?:{_DIGITS})?\.?(?:{_DIGITS})?)[eE]([-+]?){_DIGITS}\s*")


def decimal_word(text: str) -> Decimal | None:
    """``text``, a number as the command line reads it, as a Decimal (exactly: through a float,
    2**53 + 1 was 2**53), or None where it is no number. A literal whose exponent Decimal cannot
    hold (1e99999999999999999999) is read as a number of its kind: 0 for a mantissa of zeros, a
    fraction (0.5) for a negative exponent, else one of its sign past float64's range and 1e18
    (1e309), so that each count option refuses it as it refuses a smaller one of that kind. One
    rule for ``int_at_least`` and verify's ``--max-elements``."""
    try:
        return Decimal(text.strip())
    except InvalidOperation:
        literal = _HUGE_LITERAL.fullmatch(text)
        if not literal or not re.search("[0-9]", literal[2]):
            return None
        if not re.search("[1-9]", literal[2]):
            return Decimal(0)
        return Decimal(f"{literal[1]}0.5" if literal[3] == "-" else f"{literal[1]}1e309")


def expected_integer(low: int, high: int | None = None) -> str:
    """What a whole-number option takes, as its refusals say it (verify's ``--max-elements`` too)."""
    return f"expected an integer >= {low}" if high is None else f"expected an integer from {low} to {high}"


def int_at_least(low: int, high: int | None = None, bound: str | None = None):
    """The type of an integer option that must be >= ``low`` (a seed, a repeat count, an element
    count), and <= ``high`` where given: ``100000``, ``100_000`` or, for counts written as the
    benchmarks write them, ``1e5`` (a whole number in exponent notation, read exactly, up to 1e18:
    a larger exponent would build as many digits; the digits themselves are read whatever their
    count), a digit separator only between two digits (``misplaced_underscore``). A usage error
    (argparse.ArgumentTypeError) names the range expected and the word.
    ``low`` is 0 or more (every option's), so a negative number is refused before its digits are
    built. ``bound``: what caps the value (a thread count: the CPUs, numba's pool), said of a number past
    ``high``, and where ``high`` is not known when it is read, of one past 1e18 in place of the
    hint to write its digits, which would be refused too (a breaker's ``--threads 1e19``)."""
    expected = expected_integer(low, high)

    def parse(text: str) -> int:
        why = non_ascii(text.strip()) or misplaced_underscore(text)
        if why:
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r}: {why}")
        huge = False
        try:
            value = int(text)
        except ValueError:
            # (also digits past int()'s 4300: Decimal reads them, int() takes them from it)
            exact = decimal_word(text)
            whole = exact is not None and exact.is_finite() and exact == exact.to_integral_value()
            # past 1e18 by its exponent, of either sign: int() would build a billion digits of
            # 1e999999999 (or -1e999999999, below any low: a reviewer's, it hung)
            far = whole and exact.adjusted() > 18 and "e" in text.lower()
            huge = far and exact > 0
            value = int(exact) if whole and not far else None
        beyond = high is not None and (huge or (value is not None and value > high))
        if value is None or value < low or beyond:
            # what caps it, said of a number past the top (a bound's, or a range's that has one), the
            # same for 3 and for 1e19; the 1e18 hint only where the digits would be taken
            digits = " (written with an exponent, at most 1e18: write the digits for more)"
            limit = f" ({bound})" if bound and (huge or beyond) else digits if huge and not beyond else ""
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r}{limit}")
        return value

    return parse


def soc_name(text: str) -> str:
    """A ``--soc`` word (one of ``_SocNames``) as its profile's name (tiling and verify look
    names up so too)."""
    from ._core import platform

    return platform.get_profile(text).name


def by_spaces(read, choices=None):
    """``read`` (a list option's reader of one value: ``opsnn bench --ops``, ``--dtypes`` ...),
    first refusing a word with a comma: such an option takes its values as separate words, where
    ``opsnn run --dtype`` reads a comma list, so ``--dtypes f32,f16`` had been told only that no
    dtype name holds a comma (a breaker). The refusal says to write the values by spaces where
    each is taken, else names the first that is not, with why (a breaker: ``--layouts
    contiguous,bogus`` was told to write ``contiguous bogus``, an invalid choice). ``read`` None:
    the word as given (an option of ``choices``)."""
    def refusal(value: str) -> str | None:
        if read is None:
            return None if choices is None or value in choices else f" (choose from {', '.join(choices)})"
        try:
            read(value)
        except (argparse.ArgumentTypeError, ValueError) as exc:
            return f": {exc}"
        return None

    def reader(word: str):
        values = [v.strip() for v in word.split(",") if v.strip()]  # ('f32, f16' quoted: no blank is a value's)
        if "," in word and values:
            said = f"{word!r}: this option takes its values as separate words, not by commas"
            bad = next(((value, why) for value in values if (why := refusal(value))), None)
            if bad:
                raise argparse.ArgumentTypeError(f"{said}, and {bad[0]!r} is no value of it{bad[1]}")
            raise argparse.ArgumentTypeError(f"{said}: write {' '.join(values)}")
        return word if read is None else read(word)

    return reader
