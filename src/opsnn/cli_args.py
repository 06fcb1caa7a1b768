"""Pieces the ``opsnn`` subcommands share: the argparse parser, one shape grammar, counts with a
floor, the dtype words (``dtypes.parse_name`` as a usage error), and the rich console they print with.

Each bad value is a usage error (exit 2) naming the option, with what was expected and what was
given: the types raise ``argparse.ArgumentTypeError``, the ``--shape`` action (which reads all its
words together) calls ``parser.error``.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import itertools
import json
import math
import os
import re
import shutil
import sys
import unicodedata
from decimal import Decimal, InvalidOperation
from pathlib import Path

import numpy as np
from rich.console import Console

from ._core import words
from ._core.shape import MAX_DIM


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


# the dashes that look like '-' (hyphen to horizontal bar, the minus sign, small and full-width
# hyphen-minus), and a word they begin as an option or a negative number begins (-inf, -1, -.5)
_TYPOGRAPHIC_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
_TYPOGRAPHIC_DASHED = re.compile(f"[{_TYPOGRAPHIC_DASHES}]{{1,2}}[A-Za-z0-9.]")


def _dashed(word: str) -> str | None:
    """The part of a command-line word that begins with a typographic dash: the word, or the value
    an option is given after '=' (``--scalar=\u2212inf``: a breaker's, said nothing of the dash)."""
    option, equals, value = word.partition("=")
    return next((part for part in (word, value if equals and option.startswith("-") else "")
                 if _TYPOGRAPHIC_DASHED.match(part)), None)


class Parser(argparse.ArgumentParser):
    """argparse's parser, reading any negative float literal as a value (``NEGATIVE_NUMBER``);
    its subcommand parsers are of this class too (``add_subparsers`` makes them so)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER  # the attribute argparse consults
        self.register("action", "parsers", _Commands)  # (add_subparsers' action)

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, the words kept for ``error`` (a command's parser is handed its own)."""
        self._words = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        """argparse's, but where a word of this parse, or an option's value after '=', begins
        with a typographic dash (an option pasted from a page or a document that changed
        ``--shape`` into ``–shape``, a number's minus sign into U+2212), the message says so: the
        dash looks like '-', and argparse read the word as a value or an unknown argument (a
        breaker); it says what to write, ``-inf`` or ``-1`` for a number's minus sign."""
        dashed = next(filter(None, map(_dashed, getattr(self, "_words", ()))), None)
        if dashed:
            name = dashed.lstrip(_TYPOGRAPHIC_DASHES)
            # a negative number's minus sign (--scalar -inf written with U+2212) is one '-', an option's
            # dashes two but for a one-letter option's (-h): '--inf' had been suggested
            dashes = "-" if NEGATIVE_NUMBER.match("-" + name) or len(name) == 1 else "--"
            message += (f" ({dashed!r} begins with {dashed[0]!r} (U+{ord(dashed[0]):04X}), not '-': an editor or a web "
                        f"page changed the dashes; write {dashes}{name})")
        super().error(message)

    def _get_values(self, action, arg_strings):
        """argparse's, but ``--option=--`` is a usage error: argparse drops the ``--`` as its
        end-of-options marker and hands the command an empty list, calling no type function
        (``tiling --negative-slope=--`` was a TypeError traceback; ``run --shape=--``, an option
        of several words, ran a 0-d call). Only ``=--`` hands an option ``["--"]``: a ``--`` word
        of its own ends the options before it. An option taking the rest of the line whole
        (``demo --train``) keeps it."""
        if (action.option_strings and action.nargs not in (argparse.PARSER, argparse.REMAINDER)
                and arg_strings == ["--"]):
            self.error(f"argument {'/'.join(action.option_strings)}: expected a value, got '--'")
        return super()._get_values(action, arg_strings)

    def _print_message(self, message, file=None):
        """argparse's, but help and usage written to a stdout whose reader went away (``opsnn
        --help | head -0``) raise BrokenPipeError, for ``cli.main`` to end with 141 as any
        command's output does: argparse drops every write error, and the help ended with exit 0
        (a breaker). Any other write error (``opsnn --help > /dev/full``) raises StdoutError, one
        line and exit 1 (``unwritable_stdout``), as a command's own output failing there. Its
        messages to stderr keep argparse's handling."""
        if message and file is sys.stdout:  # (checked_stdout's, under every entry using this parser)
            file.write(message)
            file.flush()  # (the error is the write's, not the interpreter's flush at exit)
            return
        super()._print_message(message, file)


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


def _shape_error(parser, option: str, words: list, exc: argparse.ArgumentTypeError) -> str:
    """A --shape option's refusal; where its last word reads as a name (an OP after ``--shape 2
    3`` taken as a dim: the option reads every word up to the next option), it says where OP
    goes, and where it was given with "=" and the words after it complete a shape (the shell
    splits an unquoted ``--shape=[2, 3]``), that "=" took one word (``equals_hint``)."""
    last = words[-1] if words else ""
    hint = (f"; {last!r} is no dim: give the operator before the options ({parser.prog} {last} {option} "
            f"{' '.join(words[:-1]) or '2 3'})") if re.fullmatch(r"[A-Za-z_]\w{2,}", last) else ""
    given = getattr(parser, "_words", [])
    for i, word in enumerate(given if len(words) == 1 else ()):
        typed, equals, value = word.partition("=")
        if equals and value == words[0] and len(typed) > 2 and option.startswith(typed):
            rest = list(itertools.takewhile(lambda w: not w.startswith("-"), given[i + 1:]))
            # the most words that make a shape with it, as the option would have read them all
            complete = next((k for k in range(len(rest), 0, -1) if _is_shape(" ".join([value, *rest[:k]]))), 0)
            if complete:
                hint += f"; {equals_hint(word, option, [value, *rest[:complete]], reads_commas=True)}"
            break
    return f"argument {option}: {exc}{hint}"


def _is_shape(text: str) -> bool:
    """Whether ``parse_shape`` reads ``text``."""
    try:
        parse_shape(text)
    except argparse.ArgumentTypeError:
        return False
    return True


def equals_hint(word: str, option: str, words: list[str], reads_commas: bool) -> str:
    """What an option given as ``word`` (``--shape=2``, ``option`` its full name) is told where the
    words after it were meant for it too (``words``, its value first): "=" hands it that one word.
    The "=" form is offered only where the option reads a comma list (``reads_commas``: bench's
    --ops=a,b is one unknown name), the words joined by one comma (``[2,`` ``3]``: ``[2,3]``), but
    none beside a shape's ``x`` or inside its bracket (``2x`` ``3``: ``2x3``, ``[`` ``2`` ``]``:
    ``[2]``), where ``parse_shape`` takes none (a breaker: ``--shape=2,x,3`` had been offered)."""
    joined = ""
    for part in filter(None, (w.strip().strip(",") for w in words)):
        joined += "," if joined and joined[-1] not in "x[(" and part[0] not in "x])" else ""
        joined += part
    return (f"{word} takes the one word after '=': write {option} {' '.join(words)}"
            f"{f' or {option}={joined}' if reads_commas else ''}")


class ShapeWords(argparse.Action):
    """``--shape`` taking one or several words (``nargs="*"``), read together in
    ``parse_shape``'s grammar: ``2 3``, ``2,3``, ``2x3``, ``[]`` or nothing for 0-d, and an
    unquoted ``[2, 3]``, which the shell splits into ``[2,`` and ``3]``. Stores the shape as a
    tuple; a bad shape, a negative dim or more dims than NumPy holds (``NUMPY_MAX_DIMS``; 9 to 64
    reach phase 1's rank check) is a usage error naming the option (the commands that use it
    allocate arrays), and so is the option given twice: these commands take one shape per
    option, and argparse would keep the last one silently (``opsnn tiling``, which takes one
    ``--shape`` per input, uses ``ShapeList``)."""

    reads_commas = True  # its words may be one, by commas: --shape=2,3 (cli's "=" hint offers that form)

    def __call__(self, parser, namespace, values, option_string=None):
        text = " ".join(values)
        other = "; gradOutput's is --grad-shape" if "--grad-shape" in parser._option_string_actions else ""
        refuse_twice(parser, namespace, self.dest, option_string, text, f"give one shape{other}")
        try:
            dims = parse_shape(text)
        except argparse.ArgumentTypeError as exc:
            parser.error(_shape_error(parser, option_string, values, exc))
        if any(d < 0 for d in dims):  # the commands that use it allocate arrays of the shape
            parser.error(f"argument {option_string}: dims must be >= 0 and < 2**63, got {text!r}")
        if len(dims) > NUMPY_MAX_DIMS:  # (NumPy's own refusal, at the allocation, named no option)
            parser.error(f"argument {option_string}: {len(dims)} dims, more than the {NUMPY_MAX_DIMS} a NumPy array "
                         f"holds (the inputs are allocated); an aclnn tensor takes at most {MAX_DIM}")
        setattr(namespace, self.dest, dims)


NUMPY_MAX_DIMS = 64  # NPY_MAXDIMS, the most dims a NumPy array has, since NumPy 2.0 (opsnn needs >= 2.0)


def refuse_twice(parser, namespace, dest: str, option: str, words: str, hint: str) -> None:
    """A usage error where the option storing ``dest`` was given before in this parse (``option``
    and its ``words`` as given now), else note it: argparse keeps the last one silently,
    where a user may have meant both (``--dtype f16 --dtype f32`` for gradOutput and self ran both
    as float32, ``--scalar -1 --scalar 1`` one bound: a breaker's). ``hint`` says what to write."""
    this = f"{option} {words}".rstrip()
    before = given_as(namespace, dest)
    if before:
        parser.error(f"argument {option}: given twice ({before} and {this}); {hint}")
    setattr(namespace, _GIVEN.format(dest), this)


_GIVEN = "_{}_given"  # the namespace attribute refuse_twice notes an option in (per parse: a new namespace each)


def _is_given_note(key: str) -> bool:
    """Whether ``key`` is a namespace attribute ``refuse_twice`` notes an option in."""
    before, after = _GIVEN.split("{}")
    return key.startswith(before) and key.endswith(after)


def given_as(namespace, dest: str) -> str | None:
    """How the option storing ``dest`` was given in this parse (``--seed 3``), where
    ``refuse_twice`` noted it; None where it was not given (its default stands)."""
    return getattr(namespace, _GIVEN.format(dest), None)


class _Commands(argparse._SubParsersAction):
    """argparse's subcommands, but an option given both before the command and after it (``opsnn
    --soc A run --soc B``: each parser defines one) is a usage error, as one given twice in one
    parser is (``refuse_twice``): the command's parser reads into a namespace of its own, which
    argparse then copies over the one before, so the second had won silently (a breaker)."""

    def __call__(self, parser, namespace, values, option_string=None):
        # the options noted before the command, set aside: what the command's parser notes is then
        # seen (its notes are copied onto ``namespace``)
        noted = {key: vars(namespace).pop(key) for key in list(vars(namespace)) if _is_given_note(key)}
        super().__call__(parser, namespace, values, option_string)
        for key, before in noted.items():
            after = getattr(namespace, key, None)
            if after is not None:
                option = after.split()[0]
                hint = getattr(parser._option_string_actions.get(option), "hint", "give it once")
                parser.error(f"argument {option}: given twice ({before} and {after}); {hint}, before the command "
                             "or after it")
            setattr(namespace, key, before)


class Once(argparse.Action):
    """argparse's store, but the option given twice is a usage error (``refuse_twice``); the
    words as given are named, read by ``type`` here (its refusal the usage error argparse makes of
    it). ``hint``: what to write instead."""

    def __init__(self, *args, hint: str = "give it once", type=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.hint, self.read = hint, type

    def __call__(self, parser, namespace, values, option_string=None):
        refuse_twice(parser, namespace, self.dest, option_string, values, self.hint)
        try:
            setattr(namespace, self.dest, values if self.read is None else self.read(values))
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument {option_string}: {exc}")


class ShapeList(argparse.Action):
    """``opsnn tiling``'s ``--shape`` and ``--shape2``: one or several words read together in
    ``parse_shape``'s grammar, as ``opsnn run``'s ``--shape`` reads them (a new user's ``tiling
    --shape 2 3`` was "unrecognized arguments: 3"); appended to a list where the option's default
    is a list (``--shape``, one per input, in argument order), else stored. Negative dims pass
    (GE's dynamic dims: the tiling refuses the others)."""

    reads_commas = True  # (as ShapeWords)

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            dims = parse_shape(" ".join(values))
        except argparse.ArgumentTypeError as exc:
            parser.error(_shape_error(parser, option_string, values, exc))
        if isinstance(self.default, list):
            dims = [*(getattr(namespace, self.dest, None) or []), dims]
        setattr(namespace, self.dest, dims)


class ScalarWords(argparse.Action):
    """``--scalar`` taking one or several words (``nargs="+"``), the values separated by spaces,
    commas or both: ``-1 1``, ``-1,1``, ``-1, 1`` (a trailing comma is allowed). Stores a list
    of Python numbers, typed as the Pythonic API types them (which then makes them ACL_INT64,
    ACL_DOUBLE or ACL_BOOL scalars): an integer literal is an int (exact, any of [-2**63,
    2**64); ``-0`` is the double -0.0, keeping its sign), ``true`` / ``false`` a bool, anything
    else a float. A word that is none of these,
    an int beyond that range or a finite float literal float64 cannot hold (``1e400``,
    ``1e-400``: ``float_word``) is a usage error naming the option."""

    reads_commas = True  # (as ShapeWords: --scalar=-1,1)

    def __call__(self, parser, namespace, values, option_string=None):
        text = " ".join(values)
        refuse_twice(parser, namespace, self.dest, option_string, text,
                     f"give every scalar in one, in the API's order ({option_string} -1 1)")
        body = text.strip().removesuffix(",")
        scalars = []
        for word in re.split(r"\s*,\s*|\s+", body):
            try:
                scalars.append(_scalar(word))
            except ValueError as exc:
                parser.error(f"argument {option_string} {text!r}: {exc}")
        setattr(namespace, self.dest, scalars)


def non_ascii(text: str) -> str | None:
    """Why ``text``, a number as the command line reads it (a dim, a scalar, a count, a float
    option), is refused, or None: a character past ASCII (``words.non_ascii``), which the shape
    grammar refuses: one rule for every number (a breaker: ``--scalar \u0663`` ran a slope of 3,
    ``--seed \u0663`` seed 3). Surrounding whitespace is the caller's to drop."""
    why = words.non_ascii(text)
    return None if why is None else f"{why}, in which numbers are read"


def _scalar(word: str) -> bool | int | float:
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
        if value is None or not -2**63 <= value < 2**64:
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


def int_at_least(low: int, high: int | None = None, bound: str | None = None):
    """The type of an integer option that must be >= ``low`` (a seed, a repeat count, an element
    count), and <= ``high`` where given: ``100000``, ``100_000`` or, for counts written as the
    benchmarks write them, ``1e5`` (a whole number in exponent notation, read exactly, up to 1e18:
    a larger exponent would build as many digits; the digits themselves are read whatever their
    count). A usage error (argparse.ArgumentTypeError) names the range expected and the word.
    ``bound``: what caps the value where ``high`` is not known when it is read (a thread count,
    checked against the CPUs or numba's pool later), said of a number past 1e18 in place of the
    hint to write its digits, which would be refused too (a breaker's ``--threads 1e19``)."""
    expected = f"expected an integer >= {low}" if high is None else f"expected an integer from {low} to {high}"

    def parse(text: str) -> int:
        why = non_ascii(text.strip())
        if why:
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r}: {why}")
        huge = False
        try:
            value = int(text)
        except ValueError:
            try:
                # (also digits past int()'s 4300: Decimal reads them, int() takes them from it)
                exact = Decimal(text.strip())
                whole = exact.is_finite() and exact == exact.to_integral_value()
                huge = whole and exact.adjusted() > 18 and exact > 0 and "e" in text.lower()
                value = int(exact) if whole and not huge else None  # 1e999999999 would build a billion digits
            except InvalidOperation:  # not a number, or an exponent Decimal cannot hold (past 10**18)
                # such a literal is 0 (of any sign) or a whole number past 1e18, as 1e19 is, for
                # a mantissa not 0 and an exponent not negative (else a fraction: no integer)
                literal = re.fullmatch(rf"\s*([-+]?)((?:{_DIGITS})?\.?(?:{_DIGITS})?)[eE]([-+]?){_DIGITS}\s*", text)
                digits = literal[2] if literal and re.search("[0-9]", literal[2]) else None
                zero = digits is not None and not re.search("[1-9]", digits)
                huge = digits is not None and not zero and literal[1] != "-" and literal[3] != "-"
                value = 0 if zero else None
        beyond = high is not None and (huge or (value is not None and value > high))
        if value is None or value < low or beyond:
            # (the 1e18 hint only where digits would be taken: past a range's top, or a bound's, nothing is)
            digits = f" ({bound})" if bound else " (written with an exponent, at most 1e18: write the digits for more)"
            limit = digits if huge and not beyond else ""
            raise argparse.ArgumentTypeError(f"{expected}, got {text!r}{limit}")
        return value

    return parse


class OutputError(Exception):
    """An output a command was asked to write (``--json PATH``, ``--dump DIR``'s index) that the
    system would not take: a missing folder, a refused or full disk. An I/O failure, exit 1 in
    ``cli.main``, where a usage error is 2; the message names the option, the path and the
    system's reason (``strerror``: "No space left on device"), on one line."""

    def __init__(self, option: str, path, reason: OSError | str, what: str = ""):
        if isinstance(reason, OSError):
            reason = reason.strerror or str(reason)
        super().__init__(f"{option}: cannot write {what + ' ' if what else ''}{str(path)!r}: {reason}")


def add_soc_option(parser, checked: bool = True, **overrides) -> None:
    """``--soc``: one of the SoC profiles, named in any case (``soc_name``); help and default as
    ``opsnn --soc`` has them unless ``overrides`` says otherwise. For opsnn, its subcommands and
    ``python -m opsnn.samples`` alike. ``checked`` False takes any word as given, a second too, for
    the caller to refuse with its own reason (``opsnn --soc X list``), usage and help unchanged."""
    from ._core import platform

    names = _SocNames(platform.PROFILES)
    options = {"help": f"emulated SoC (default: ${platform.ENV_VAR} or {platform.DEFAULT_SOC})", **overrides}
    # Once: given twice, a usage error as every other option (argparse kept the last); unchecked, a
    # plain store: "give one SoC" would ask for the one refused then (--soc A --soc B list)
    read = ({"choices": names, "type": soc_name, "action": Once, "hint": SOC_ONCE} if checked
            else {"metavar": "{" + ",".join(names) + "}"})
    parser.add_argument("--soc", **read, **options)


SOC_ONCE = "give one SoC"  # what --soc given twice is told, wherever a command defines the option


class _SocNames(tuple):
    """``--soc``'s choices: the profiles' names as listed (usage, help, the refusal), a word
    matching one in any case and with surrounding whitespace (DECISION 12), as ``get_profile``
    reads it: ``Once`` hands argparse's check the word as given, ``soc_name`` reads it after."""

    def __contains__(self, text) -> bool:
        from ._core import platform

        try:
            platform.get_profile(text)
        except ValueError:
            return False
        return True


def soc_name(text: str) -> str:
    """A ``--soc`` word (one of ``_SocNames``) as its profile's name (tiling and verify look
    names up so too)."""
    from ._core import platform

    return platform.get_profile(text).name


def strict_json(document, indent: int | None) -> str:
    """``document`` as strict JSON, which has no NaN or Infinity (strict readers, ``jq`` among them,
    refuse or rewrite them): a non-finite float, at any depth, is written as the string "nan",
    "inf" or "-inf", which ``float()`` reads back. One place for the results file (verify,
    compare), the --dump files, ``opsnn tiling --json`` and bench.json."""
    return json.dumps(_finite(document), indent=indent, allow_nan=False)


# How deep the JSON opsnn reads may nest: its own files nest a few levels, and Python's reader
# recurses per level, failing near the interpreter's recursion limit (~1000), while a document
# that loads just short of it left too little stack for the next step (a message quoting it)
JSON_MAX_DEPTH = 100


def read_json(text: str):
    """``json.loads(text)``, where a document nested more than ``JSON_MAX_DEPTH`` levels deep is
    a ValueError saying so, as any other malformed JSON is (``[[[...]]]`` 100 000 deep was a
    RecursionError, a traceback of verify, compare and ``golden_files.load``). One reader for
    every JSON file opsnn reads: case files, case.json, the dump's index, an earlier --json
    results file. An object naming a key twice is a ValueError too: the reader would keep the
    last silently (a case's aclnn_name written twice ran the second operator)."""
    deep = ValueError(f"its arrays and objects nest more than {JSON_MAX_DEPTH} levels deep (opsnn's JSON files "
                      "nest a few; Python's JSON reader gives up near 1000)")
    try:
        document = json.loads(text, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise deep from None
    # (iterative: a walk by recursion would meet the limit the reader met); only arrays and
    # objects are pushed: a regression breaker's million-number array had pushed each number
    stack = [(document, 1)] if isinstance(document, (list, dict)) else []
    while stack:
        value, depth = stack.pop()
        if depth > JSON_MAX_DEPTH:
            raise deep
        stack.extend((item, depth + 1) for item in (value.values() if isinstance(value, dict) else value)
                     if isinstance(item, (list, dict)))
    return document


def _unique_keys(pairs: list) -> dict:
    """``read_json``'s objects: a dict of ``pairs``, refused where a key comes twice."""
    document = dict(pairs)
    if len(document) < len(pairs):
        seen = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise ValueError(f"an object names the key {twice!r} twice; a JSON reader would keep one of them silently")
    return document


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def make_writable_folder(folder: Path) -> None:
    """Make ``folder`` (with its parents) and check a file can be written there, before a run
    writes into it (OSError, the system's reason, if not). For bench's --out-dir and verify's
    --dump alike."""
    folder.mkdir(parents=True, exist_ok=True)
    test = folder / ".opsnn-write-test"
    test.write_bytes(b"")
    test.unlink()


def output_folder_refusal(option: str, text: str) -> str | None:
    """Why ``text`` cannot be the folder ``option`` writes into, seen before the system is asked
    to make it: a file of that name, or a symbolic link to nothing (a breaker: "cannot write
    into the folder 'dl': File exists", where nothing was); usage errors (exit 2). None where
    the system's answer decides (``OutputError``, exit 1, where it will not make it)."""
    if not text:  # (a breaker: Path("") is the current folder, written into without a word)
        return f"{option} is an empty path; name a folder ('.' for the current one)"
    path = Path(text)
    if path.is_symlink() and not path.exists():
        try:
            path.stat()
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # (a breaker: it named the next link as missing)
                return f"{option} {text!r} is a symbolic link in a loop of links; name a folder"
        return (f"{option} {text!r} is a symbolic link to {os.path.realpath(path)!r}, which does not exist; make "
                "that folder or name another")
    if path.exists() and not path.is_dir():
        return f"{option} {text!r} is a file, not a folder"
    return None


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


class Distinct(argparse.Action):
    """A list option (``nargs``) keeping each value once, in the order first given, after its
    ``type`` has read it: ``opsnn bench --ops X X`` (or X by two names, which ``bench_op`` reads
    as one) had measured X twice, and ``--sizes 1e5 100000`` one size twice. An option given
    again adds its values (``--ops A --ops B`` had measured B alone: a breaker)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = getattr(namespace, self.dest, None) or []
        setattr(namespace, self.dest, list(dict.fromkeys([*given, *values])))


# The whole numbers an integer input of `opsnn run` / `opsnn demo` holds, in the order a small
# input takes them: two elements already lie beyond the default bounds (-1, 1) on both sides
# (uint8: above 1, and 0), three add one inside them, five the bounds themselves.
_SIGNED_VALUES = (-3, 3, 0, -1, 1, -2, 2)
_UNSIGNED_VALUES = (3, 0, 1, 2)


def random_input(rng, shape: tuple[int, ...], dtype, spread: float = 2.0):
    """A random input of ``dtype`` and ``shape`` for ``opsnn run`` and ``opsnn demo``, from
    ``rng`` (the seed's generator, so the same seed gives the same input): a floating dtype's
    values uniform in [-spread, spread); an integer's (or bool's) the whole numbers of
    ``_SIGNED_VALUES`` / ``_UNSIGNED_VALUES`` repeated to its size and shuffled, so that an input
    of two elements or more holds values beyond the default bounds (a float draw truncated to
    -1, 0 and 1, which Hardtanh's -1 and 1 never clip)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "biu":
        return rng.uniform(-spread, spread, shape).astype(dtype)
    values = (0, 1) if dtype.kind == "b" else _UNSIGNED_VALUES if dtype.kind == "u" else _SIGNED_VALUES
    return rng.permutation(np.resize(np.array(values), math.prod(shape))).reshape(shape).astype(dtype)


def stdout_or_devnull() -> None:
    """Make ``sys.stdout`` /dev/null where the process started without one (descriptor 1 closed:
    ``opsnn list >&-``, a service's shut stdout; Python then sets it to None). print() writes
    nothing there, but the flush after a command raised AttributeError, a traceback and exit 1
    though the command had run (a breaker's); /dev/null takes descriptor 1, so the command runs
    as if its output were discarded. (The lowest free descriptor is 0 where stdin is closed too:
    /dev/null is moved onto 1, or the next file opened would become the process's stdout.)"""
    if sys.stdout is None:
        fd = os.open(os.devnull, os.O_WRONLY)
        if fd != 1 and not _is_open(1):  # (one a library opened since start is left alone)
            os.dup2(fd, 1)
            os.close(fd)
            fd = 1
        sys.stdout = open(fd, "w")  # noqa: SIM115 - the process's stdout, open to its end


class StdoutError(Exception):
    """stdout would not take a command's output: a full disk (``opsnn list > /dev/full``), an I/O
    error. Not an OSError, so no handler of input files' errors (a usage error, exit 2) takes it;
    ``unwritable_stdout`` ends the command. A closed pipe is not one (BrokenPipeError, 141)."""

    def __init__(self, reason: OSError, stream):
        target = _target_of(stream)
        super().__init__(f"cannot write the output to stdout{f' ({target})' if target else ''}: "
                         f"{reason.strerror or reason}")


def _target_of(stream) -> str | None:
    """What ``stream``'s descriptor leads to (a file's path, /dev/full, pipe:[...]), where Linux's
    /proc says; None elsewhere, or for a stream with no descriptor (a test's capture)."""
    try:
        return os.readlink(f"/proc/self/fd/{stream.fileno()}")
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None


class _CheckedStdout:
    """``sys.stdout`` while ``checked_stdout`` holds: the stream itself, but a write or flush that
    fails for another reason than a closed pipe raises StdoutError, as every print of every
    command reaches it here."""

    def __init__(self, stream):
        self._stream = stream

    def _checked(self, method: str, *args):
        try:
            return getattr(self._stream, method)(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutError(exc, self._stream) from None

    def write(self, text: str) -> int:
        return self._checked("write", text)

    def flush(self) -> None:
        self._checked("flush")

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextlib.contextmanager
def checked_stdout():
    """Run a command (``cli.main``, the script entries) with its output's write errors said as
    StdoutError (``unwritable_stdout``): an OSError from a print was taken for an unreadable
    input file, a usage error (exit 2), or escaped as a traceback (a breaker's). A process
    started without a stdout gets /dev/null first (``stdout_or_devnull``)."""
    stdout_or_devnull()
    stream = sys.stdout
    checked = sys.stdout = _CheckedStdout(stream)
    try:
        yield
    finally:
        if sys.stdout is checked:  # (unless the command set its own)
            sys.stdout = stream


def unwritable_stdout(prog: str, exc: StdoutError) -> int:
    """The exit status of a command whose output stdout would not take (``StdoutError``): 1, an
    output that could not be written, as an output file's (``OutputError``), where 2 is a usage
    error's; one line on stderr naming stdout, where it leads and why. stdout becomes /dev/null,
    as in ``closed_stdout``: the interpreter's own flush at exit would fail again."""
    print(f"{prog}: {exc}", file=sys.stderr)
    with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1


def run_writing_stdout(prog: str, command) -> int:
    """``command()``, a command's whole run returning its exit status, under ``checked_stdout``,
    its output flushed here: a reader of stdout that went away (``| head``) ends it with 141
    (``closed_stdout``), a stdout that would not take it (a full disk) with 1 and one line naming
    ``prog`` (``unwritable_stdout``), help and ``--version`` alike. One rule for ``cli.main`` and
    the script entries (the samples', the training's, ``bench.main``), where each had written it."""
    try:
        with checked_stdout():
            code = command()
            sys.stdout.flush()  # here: a closed pipe or a full disk is seen below, not at the interpreter's exit
        return code
    except BrokenPipeError:
        return closed_stdout()
    except StdoutError as exc:
        return unwritable_stdout(prog, exc)


def closed_stdout() -> int:
    """The exit status of a process whose stdout's reader went away (``| head``), raised as
    BrokenPipeError in its output or its help: 141 (128 + SIGPIPE, a shell's status for a
    command that pipe ended), nothing on stderr. stdout becomes /dev/null first: the
    interpreter's own flush at exit would fail again, a traceback. Used by ``cli.main`` and the
    script entries (the samples', the training's, ``bench.main``), one rule for all."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 141


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


class PipeConsole(Console):
    """rich's console, but a closed stdout (``opsnn ... | head``) raises BrokenPipeError for
    ``cli.main`` to end the command with status 141, where rich's own handling exits with 1,
    the status of a failed operator call."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.width < 1:
            # COLUMNS=0 (a script's `tput cols` of no terminal) made it 0 wide: `opsnn run` and
            # `opsnn demo` printed nothing at all; read as unset, as shutil reads it (the
            # terminal's width, else 80)
            self.width = shutil.get_terminal_size().columns

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError
