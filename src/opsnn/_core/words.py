"""What the command line and case files read as words: names (dtypes, operators) and numbers."""

from __future__ import annotations


def non_ascii(text: str) -> str | None:
    """Why ``text``, a name or number a user wrote, holds no such name or number, or None: its
    first character past ASCII, named with its code point (a full-width "１" looks like "1", a
    Cyrillic "а" like "a"). Every name and number opsnn reads is ASCII, and Python reads some
    others as ASCII ones: int() and float() other scripts' digits ("\u0663" as 3), upper() and
    lower() some letters ("\ufb02" as "FL", the Kelvin sign as "k"), so a look-alike would be read
    as a word never typed."""
    bad = next((c for c in text if not c.isascii()), None)
    return None if bad is None else f"{named(bad)} is not ASCII"


def named(char: str) -> str:
    """A character as a message names it: itself and its code point, "'\u2212' (U+2212)", as a
    look-alike (a minus sign for '-') cannot be told apart by eye."""
    return f"{char!r} (U+{ord(char):04X})"
