"""The parser the ``opsnn`` subcommands share, and its actions: one shape grammar for the shape
options, scalars, options refused when given twice, ``--soc``, list options and the random inputs
of ``run`` and ``demo``. The words they read are ``cli_words``'; the files and stdout they write,
``cli_files``' and ``cli_stdout``'s.

Each bad value is a usage error (exit 2) naming the option, with what was expected and what was
given: the types raise ``argparse.ArgumentTypeError``, the ``--shape`` action (which reads all its
words together) calls ``parser.error``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import sys

import numpy as np

from ._core.shape import MAX_DIM
from ._core.words import named
from .cli_words import (
    NEGATIVE_NUMBER,
    dynamic_shape_refusal,
    parse_shape,
    scalar_word,
    soc_name,
)

__all__ = [
    "AS_HYPHEN", "NUMPY_MAX_DIMS", "SOC_ONCE", "TYPOGRAPHIC_DASHES", "Distinct", "Once", "Parser", "ScalarWords",
    "ShapeList", "ShapeWords", "add_soc_option", "equals_hint", "given_as", "random_input", "refuse_twice", "soc_metavar",
]


# the dashes that look like '-' (hyphen to horizontal bar, the minus sign, small and full-width
# hyphen-minus; verify's --cases names them in a range too), and a word they begin as an option
# or a negative number begins (-inf, -1, -.5), one of them beside a '-' too (a reviewer's:
# '\u2212-shape' had been told nothing)
TYPOGRAPHIC_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
AS_HYPHEN = str.maketrans(dict.fromkeys(TYPOGRAPHIC_DASHES, "-"))
_TYPOGRAPHIC_DASHED = re.compile(f"(?=-?[{TYPOGRAPHIC_DASHES}])[-{TYPOGRAPHIC_DASHES}]{{1,2}}[A-Za-z0-9.]")


def _dashed(word: str) -> str | None:
    """The part of a command-line word that begins with a typographic dash: the word, or the value
    an option is given after '=' (``--scalar=\u2212inf``: a breaker's, said nothing of the dash)."""
    option, equals, value = word.partition("=")
    return next((part for part in (word, value if equals and option.startswith("-") else "")
                 if _TYPOGRAPHIC_DASHED.match(part)), None)


def _is_option(word: str) -> bool:
    """Whether ``word`` is an option's name to ``Parser``, not a value: it begins with '-' and is
    no negative number (``NEGATIVE_NUMBER``)."""
    return word.startswith("-") and not NEGATIVE_NUMBER.match(word)


def _past_values(action, option: str, given: str | None, between: list[str]) -> str | None:
    """Why a word after ``option`` (its ``action``, None where unknown; ``given`` the word
    ``--seed=3`` where its value came after '=') and the words ``between`` them is none of its
    values, or None where it may be: a flag takes none, an option of one value its first word
    (a reviewer's: `bench --quick \u22121` and `run --seed 3 \u22121` were told to write -1, which
    neither takes); an option of several words given one after '=' takes no other (``--scalar=1
    \u22122``: -2 would be an unrecognized argument)."""
    if action is None or action.nargs in (argparse.REMAINDER, argparse.PARSER):
        return None
    if action.nargs in ("*", "+"):
        return f"{option} takes one word after '=', given in {given!r}" if given else None
    count = 1 if action.nargs in (None, argparse.OPTIONAL) else action.nargs
    if given is None and len(between) < count:
        return None
    if count == 0:
        return f"{option} takes no value"
    takes = f"{option} takes {'one value' if count == 1 else f'{count} values'}"
    return f"{takes}, given in {given!r}" if given else f"{takes}, given {' '.join(between[:count])}"


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
        breaker); it says what to write, ``-inf`` or ``-1`` for a number's minus sign, or, where
        the option refuses that number too (``--seed -1``), or it is no value of the option before
        it (``--transpose -1``, ``--seed 3 -1``), why (``_refusal_with_hyphen``)."""
        words = getattr(self, "_words", [])
        at, dashed = next(((i, part) for i, part in enumerate(map(_dashed, words)) if part), (None, None))
        if dashed:
            # every dash of the rest written as '-' too, a later item's or an exponent's (a regression
            # breaker: --scalar \u22121,\u22122 was told to write --1,\u22122, an option, its second dash kept)
            name = dashed.lstrip(TYPOGRAPHIC_DASHES + "-").translate(AS_HYPHEN)
            # a negative number's minus sign (--scalar -inf written with U+2212) is one '-', an option's
            # dashes two but for a one-letter option's (-h): '--inf' had been suggested; a shape's
            # closing bracket after it is the shape's (an unquoted [2, \u22121] is '[2,' '\u22121]': a
            # regression breaker's, told to write --1])
            number = NEGATIVE_NUMBER.match("-" + name.rstrip(")]"))
            dashes = "-" if number or len(name) == 1 else "--"
            # a number its option refuses with '-' too is not suggested (a breaker: --seed=\u22121 was told
            # to write -1, an integer >= 0): the option's own reader says why
            refusal = self._refusal_with_hyphen(words, at, dashed, dashes + name) if dashes == "-" else None
            advice = f"write {dashes}{name}" if refusal is None else f"{dashes}{name} is refused too: {refusal}"
            where = (f"begins with {named(dashed[0])}" if dashed[0] != "-"
                     else f"has {named(dashed[1])} for its second dash")
            message += f" ({dashed!r} {where}, not '-': an editor or a web page changed the dashes; {advice})"
        super().error(message)

    def _refusal_with_hyphen(self, words: list[str], at: int, dashed: str, fixed: str) -> str | None:
        """Why the option given ``words[at]``, whose ``dashed`` part (its value after '=', or the
        word) is ``fixed`` written with '-', refuses it so, by the option's own reader (its
        ``type`` and ``choices``, or an action's ``read``: ``ShapeWords``, ``ShapeList``); None
        where it takes it, or where no option is known to take the word (a positional, an
        option of no reader)."""
        action, values = self._given_with(words, at, dashed, fixed)
        if isinstance(action, str):  # (no option's value where it stands)
            return action
        # (an option the command looks up once parsed has its check apart: verify's --soc)
        read = getattr(action, "read", None) or getattr(action, "check", None)
        try:  # (a reader of all the option's words, as given, or argparse's type of each)
            if read is not None:
                read(" ".join(values))
            elif action is not None:
                # and its choices, which argparse checks apart from the type (a regression breaker:
                # bench --layouts \u22121 was told to write -1, no layout)
                self._check_value(action, action.type(fixed) if callable(action.type) else fixed)
        except argparse.ArgumentError as exc:
            return exc.message
        except (argparse.ArgumentTypeError, ValueError) as exc:
            return str(exc)
        return None

    def _given_with(self, words: list[str], at: int, dashed: str, fixed: str) -> tuple:
        """The option action given ``words[at]`` (None where none is known: a positional) and the
        words it reads with it, ``fixed`` in place of the ``dashed`` part: the value after '='
        alone, or its value words up to this one and, for an option of several words (nargs * or
        +), those after it up to the next option or dashed word. Where the word lies past the
        values of the option before it, the action is why it is none of them (``_past_values``)."""
        option, equals, _ = words[at].partition("=")
        if equals and dashed != words[at]:
            return self._action_of(option), [fixed]
        start = at  # the value words after an option (a negative number is one), up to this one
        while start > 0 and not _is_option(words[start - 1]):
            start -= 1
        before, equals, _ = words[start - 1].partition("=") if start else ("", "", "")
        action = self._action_of(before) if start else None
        values = [*words[start:at], fixed]
        past = _past_values(action, before, words[start - 1] if equals else None, words[start:at])
        if past:
            return past, values
        if action is None or action.nargs not in ("*", "+"):
            return action, values
        # and its words after this one, as the option reads them (a regression breaker: tiling
        # --shape \u22122 3 was told to write -2, read alone; [-2, 3] is refused)
        return action, values + list(itertools.takewhile(lambda word: not _dashed(word) and not _is_option(word),
                                                         words[at + 1:]))

    def _action_of(self, option: str):
        """The option action ``option`` names as typed (argparse takes a unique prefix of a long
        option's name), or None."""
        actions = self._option_string_actions
        if option in actions:
            return actions[option]
        matches = {actions[known] for known in actions if option.startswith("--") and known.startswith(option)}
        return matches.pop() if len(matches) == 1 else None

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
            parse_shape(text)
        except argparse.ArgumentTypeError as exc:  # (with its hints: where OP goes, what "=" took)
            parser.error(_shape_error(parser, option_string, values, exc))
        try:
            setattr(namespace, self.dest, self.read(text))
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument {option_string}: {exc}")

    @staticmethod
    def read(text: str) -> tuple[int, ...]:
        """The shape the option's words (``text``, joined by spaces) give, or ArgumentTypeError:
        ``parse_shape``'s, no dim negative (the commands that use it allocate arrays of the
        shape), at most ``NUMPY_MAX_DIMS`` dims. (``Parser.error`` reads a number with it too.)"""
        dims = parse_shape(text)
        if any(d < 0 for d in dims):
            raise argparse.ArgumentTypeError(f"dims must be >= 0 and < 2**63, got {text!r}")
        if len(dims) > NUMPY_MAX_DIMS:  # (NumPy's own refusal, at the allocation, named no option)
            raise argparse.ArgumentTypeError(f"{len(dims)} dims, more than the {NUMPY_MAX_DIMS} a NumPy array holds "
                                             f"(the inputs are allocated); an aclnn tensor takes at most {MAX_DIM}")
        return dims


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

    def __init__(self, *args, hint: str = "give it once", type=None, check=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.hint, self.read = hint, type
        # what the command reads the value with once parsed (verify's and tiling's --soc, looked up
        # as they run): Parser.error's dash hint asks it whether '-' would be taken
        self.check = check

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

    @staticmethod
    def read(text: str) -> tuple[int, ...]:
        """The shape the option's words (``text``) give, or ArgumentTypeError where the tiling then
        refuses it (``dynamic_shape_refusal``): what ``Parser.error`` reads a typographic-dash dim
        with (a breaker: ``--shape 2 \u22123`` was told to write -3, which the tiling refuses). The
        tiling says so itself after the parse, beside its other checks of the shapes given."""
        dims = parse_shape(text)
        why = dynamic_shape_refusal(dims)
        if why:
            raise argparse.ArgumentTypeError(why)
        return dims


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
                scalars.append(scalar_word(word))
            except ValueError as exc:
                parser.error(f"argument {option_string} {text!r}: {exc}")
        setattr(namespace, self.dest, scalars)


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
            else {"metavar": soc_metavar()})
    action = parser.add_argument("--soc", **read, **options)
    if not checked:  # (still looked up or refused as the command runs: the dash hint asks it, Once.check)
        action.check = soc_name


SOC_ONCE = "give one SoC"  # what --soc given twice is told, wherever a command defines the option


def soc_metavar() -> str:
    """``{Ascend910,...}``: the known SoCs as usage and help name ``--soc``'s value, where a command
    reads the word itself (verify's and tiling's said only SOC: a new user's)."""
    from ._core import platform

    return "{" + ",".join(platform.PROFILES) + "}"


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
