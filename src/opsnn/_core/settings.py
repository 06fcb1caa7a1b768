"""The ``OPSNN_*`` byte-count tuning variables (``OPSNN_POOL_BYTES``, ``OPSNN_PARALLEL_MIN_BYTES``,
``OPSNN_STREAM_MIN_BYTES``), read one way.

A value is a count of bytes: a whole number (``16777216``, ``16_777_216``, ``1e9``, ``-0``),
optionally with a unit: ``B``, binary ``KiB``/``MiB``/``GiB``/``TiB`` (powers of 1024) or decimal
``kB``/``MB``/``GB``/``TB`` (powers of 1000), case-insensitive, a space allowed before it
(``16MiB``, ``1.5 GiB``); one above 2**63 - 1 reads as 2**63 - 1 ("set it huge" turns a
threshold off), and so does ``inf`` or ``+inf`` (a breaker: ``1e999`` was taken so and ``inf``
refused); a zero is 0 whatever its sign and exponent (``-0e30``), and an exponent may be negative
(``5e-1KiB`` is 512). A
value that is not one of these (or is negative, or not a whole number of bytes) is ignored with
a ``RuntimeWarning`` naming the variable, the value, what is wrong and the forms accepted, and
the default applies: these variables only tune speed and memory, so a typo
must neither stop ``import opsnn`` nor turn every call into an error.
"""

from __future__ import annotations

import os
import re
from decimal import Decimal, InvalidOperation, localcontext

from . import callsite

_UNITS = {"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
          "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_VALUE = re.compile(r"\s*([-+]?[0-9](?:_?[0-9])*(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?)\s*([a-z]*)\s*", re.IGNORECASE)
LIMIT = 2**63 - 1
ACCEPTED = "a whole number of bytes, optionally with a unit: 16777216, 1e9, 64MiB, 2 GiB, 500MB, or inf for no limit"


def parse_bytes(text: str) -> int:
    """The byte count ``text`` spells (forms above), at most ``LIMIT`` (a larger one, "huge" for
    turning a threshold off, reads as ``LIMIT``: the kernels take int64); raises ValueError
    naming what is wrong."""
    word = text.strip().lower()
    if word.lstrip("+-") in ("inf", "infinity"):
        if word.startswith("-"):
            raise ValueError(f"{text!r} is negative; expected {ACCEPTED}")
        return LIMIT
    match = _VALUE.fullmatch(text)
    unit = _UNITS.get(match.group(2).lower()) if match else None
    if unit is None:
        raise ValueError(f"{text!r} is not {ACCEPTED}")
    mantissa, _, exponent = match.group(1).lower().partition("e")
    if not re.search(r"[1-9]", mantissa):  # a zero, whatever its sign and exponent (0e21 was no limit)
        return 0
    if mantissa.startswith("-"):
        raise ValueError(f"{text!r} is negative; expected {ACCEPTED}")
    try:
        number = Decimal(match.group(1).replace("_", "")).copy_abs()
    except InvalidOperation:  # an exponent beyond what Decimal holds: huge, or a fraction below any byte
        if exponent.startswith("-"):
            raise ValueError(f"{text!r} is no whole number of bytes; expected {ACCEPTED}") from None
        return LIMIT
    if number.adjusted() > 20:  # beyond LIMIT whatever the unit (and never a billion-digit int)
        return LIMIT
    with localcontext() as context:  # (localcontext(prec=...) is Python 3.11's: 3.10 refused it)
        context.prec = 40
        value = number * unit  # exact: at most 21 + 13 digits
    if value != value.to_integral_value():
        raise ValueError(f"{text!r} is no whole number of bytes; expected {ACCEPTED}")
    return min(int(value), LIMIT)


def env_bytes(name: str, default: int | None) -> int | None:
    """``$name`` as a byte count, ``default`` when it is unset, empty or malformed (warned)."""
    text = os.environ.get(name, "")
    if not text.strip():
        return default
    try:
        return parse_bytes(text)
    except ValueError as exc:
        shown = "measured" if default is None else f"{default} bytes"
        # read where opsnn first needs it (an import, a first launch): the warning names the
        # user's line that got there
        callsite.warn(f"opsnn: ignoring {name}={text!r}: {exc}; using the default ({shown})", RuntimeWarning)
        return default

