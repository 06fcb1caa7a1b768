"""argparse types the ``opsnn`` subcommands share: one shape grammar, counts with a floor.

Each raises ``argparse.ArgumentTypeError``, so argparse names the option in its usage error
(exit 2) and the message adds what was expected and what was given.
"""

from __future__ import annotations

import argparse
import re


def parse_shape(text: str) -> tuple[int, ...]:
    """``1,64,2,64``, ``[1, 64]``, ``(1, 64)``, ``1x64``, ``1 64`` or ``[]``/empty for a 0-d shape
    (negative dims pass: ``opsnn tiling`` lets phase 1 report them). Anything else, a stray
    separator or bracket included, is a usage error."""
    body = text.strip()
    if body[:1] + body[-1:] in ("[]", "()"):  # one matching pair at most: "[[2,3))" is a typo
        body = body[1:-1].strip()
    if body and not re.fullmatch(r"-?\d+(?:(?:\s*[,x]\s*|\s+)-?\d+)*", body):
        raise argparse.ArgumentTypeError(f"bad shape {text!r}; write e.g. 1,64,2,64 or [] for 0-d")
    return tuple(int(p) for p in re.findall(r"-?\d+", body))


def dims_word(text: str) -> tuple[int, ...]:
    """One word of a ``--shape`` taking several (``nargs="*"``: ``2 3``, ``2,3``, ``2x3``, ``[]``),
    in ``parse_shape``'s grammar; a negative dim is a usage error (the command allocates arrays).
    ``join_words`` makes the shape."""
    dims = parse_shape(text)
    if any(d < 0 for d in dims):
        raise argparse.ArgumentTypeError(f"dims must be >= 0, got {text!r}")
    return dims


def join_words(words: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The shape given by a ``--shape`` of ``dims_word`` words."""
    return tuple(d for word in words for d in word)


def int_at_least(low: int):
    """The type of an integer option that must be >= ``low`` (a seed, a repeat count)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}")
        return value

    return parse
