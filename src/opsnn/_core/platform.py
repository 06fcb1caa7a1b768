"""SoC platform profiles: which Ascend part opsnn emulates.

A profile fixes the NpuArch (which selects the dtype lists, spec §2.3), the AI Vector core count
and Unified Buffer size (which drive the NPU tilings, spec §7) and the SocVersion order (which the
experimental HardtanhBackward uses). Core counts and UB sizes are the public ``platform_config``
values of a representative part of each line; they are inputs to tiling, not measurements.

Selection, strongest first: ``use_soc(...)`` (a with-block, per thread or asyncio task), ``set_soc(...)``
(process-wide), the ``OPSNN_SOC`` environment variable, then the default ``Ascend910B``.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os
from collections.abc import Iterator

DEFAULT_SOC = "Ascend910B"
ENV_VAR = "OPSNN_SOC"


@dataclasses.dataclass(frozen=True)
class SocProfile:
    """One emulated SoC.

    Attributes:
        name: SoC name as CANN spells it (``Ascend910B``).
        npu_arch: NpuArch number (1001, 2002, 2201, 3002, 3510).
        vector_core_num: AI Vector cores a kernel may use (``GetCoreNumAiv``).
        ub_size: Unified Buffer bytes per vector core.
        product_line: the product line as the ops-nn docs name it.
    """

    name: str
    npu_arch: int
    vector_core_num: int
    ub_size: int
    product_line: str

    @property
    def is_regbase(self) -> bool:
        """The arch35 'regbase' family ({DAV_3510}; ops-nn ``IsRegbase``)."""
        return self.npu_arch == 3510

    @property
    def uses_910b_dtype_list(self) -> bool:
        """Main ops pick their BF16-capable list on DAV_2201 or regbase (spec §2.3)."""
        return self.npu_arch == 2201 or self.is_regbase


PROFILES: dict[str, SocProfile] = {
    p.name: p
    for p in (
        SocProfile("Ascend910", 1001, 32, 262144, "Atlas training series"),
        SocProfile("Ascend910B", 2201, 48, 196608, "Atlas A2 training series / Atlas 800I A2 inference"),
        SocProfile("Ascend910_93", 2201, 48, 196608, "Atlas A3 training series / Atlas A3 inference series"),
        SocProfile("Ascend950", 3510, 64, 245760, "Ascend 950PR / Ascend 950DT"),
        SocProfile("Ascend310P", 2002, 8, 262144, "Atlas inference series"),
        SocProfile("Ascend310B", 3002, 1, 262144, "Atlas 200I/500 A2 inference products"),
    )
}

_process_soc: str | None = None


# ``use_soc``'s selection: a context variable, so that each thread, and each asyncio task, has its
# own (a breaker: with a thread-local, two coroutines whose use_soc blocks overlapped across an
# await each restored the other's SoC, and the loop's thread kept one after both blocks ended);
# a new thread starts with none, and asyncio.to_thread carries its caller's.
SELECTED: contextvars.ContextVar[str | None] = contextvars.ContextVar("opsnn_soc", default=None)


def get_profile(name: str) -> SocProfile:
    """Profile by name, ignoring case and surrounding whitespace (`` ascend910 ``: a shell
    quoting slip, read as ``$OPSNN_BACKEND``'s backend names are); raises ValueError naming the
    value as given and listing the known names."""
    wanted = str(name).strip().lower()
    for key, profile in PROFILES.items():
        if key.lower() == wanted:
            return profile
    raise ValueError(f"unknown SoC {name!r}; known: {', '.join(PROFILES)}")


def current() -> SocProfile:
    """The ``SocProfile`` in force for the calling thread (or asyncio task), ``opsnn.current_soc()``:
    a ``use_soc`` block's, else ``set_soc``'s, else ``$OPSNN_SOC``'s, else Ascend910B (its
    ``name``, ``vector_core_num``, ``ub_size`` in bytes, ...). ValueError for an unknown
    ``$OPSNN_SOC``, naming the variable (the user typed no SoC)."""
    return profile_of(current_name())


def profile_of(selection: str) -> SocProfile:
    """The profile a selection names (``current_name()``'s value, perhaps read earlier): a
    ``use_soc`` / ``set_soc`` name, already checked, or ``$OPSNN_SOC``'s text as given, of which
    only whitespace is unset (the default, ``env_value``).
    ValueError naming ``$OPSNN_SOC`` for an unknown name (only the environment's can be)."""
    if env_value(selection) is None:
        return get_profile(DEFAULT_SOC)
    try:
        return get_profile(selection)
    except ValueError as exc:
        raise ValueError(f"${ENV_VAR}: {exc}") from None


def current_name() -> str:
    """The SoC selection in force, as given (not resolved; ``current()`` resolves it). Cheap:
    plan caches key on it."""
    return SELECTED.get() or _process_soc or getenv(ENV_VAR) or DEFAULT_SOC


try:  # os.environ.get encodes the key on every call; read CPython's mapping directly when present
    _ENV_DATA = os.environ._data  # type: ignore[attr-defined]
    _encode = os.environ.encodekey  # type: ignore[attr-defined]
    _decode = os.environ.decodevalue  # type: ignore[attr-defined]
except AttributeError:  # pragma: no cover - another Python
    _ENV_DATA = None


def env_value(text: str | None) -> str | None:
    """What an ``OPSNN_SOC``, ``OPSNN_BACKEND`` or ``OPSNN_CACHE_DIR`` text means, the one rule for
    the three: surrounding whitespace dropped, and None (unset: the default) where nothing else is
    left. Whitespace around such a value is a shell-quoting slip (``OPSNN_CACHE_DIR=" /data/k"``),
    never meant: a cache directory had been made under one named " " in the working directory while
    the SoC and backend names ignored it. A path may hold spaces inside; it cannot begin or end with
    one here. Messages still show the variable's text as given."""
    if text is None:
        return None
    return text.strip() or None


def getenv(name: str) -> str | None:
    """``os.environ.get(name)``, faster on CPython (tracks os.environ / putenv changes)."""
    if _ENV_DATA is None:  # pragma: no cover
        return os.environ.get(name)
    key = _ENV_KEYS.get(name)
    if key is None:
        key = _ENV_KEYS[name] = _encode(name)
    value = _ENV_DATA.get(key)
    return None if value is None else _decode(value)


_ENV_KEYS: dict[str, object] = {}


def set_soc(name: str | None) -> SocProfile:
    """Select the emulated SoC for the whole process (None: back to $OPSNN_SOC or the default);
    returns the profile now in force for the calling thread (a ``use_soc`` block around the call
    still wins there). ``name`` is a profile name in any case: Ascend910, Ascend910B,
    Ascend910_93, Ascend950, Ascend310P or Ascend310B. Raises ValueError, listing them, for an
    unknown name."""
    global _process_soc
    _process_soc = None if name is None else get_profile(name).name
    return current()


@contextlib.contextmanager
def use_soc(name: str) -> Iterator[SocProfile]:
    """Select the emulated SoC for the calling thread (or asyncio task) inside a with-block,
    which gets its profile (``with use_soc("Ascend310P") as profile:``).

    ``name`` is taken as ``set_soc`` takes it (an unknown one raises ValueError before the block
    runs). Inside the block it wins over ``set_soc`` and ``$OPSNN_SOC``; blocks nest, the outer
    selection coming back when the inner ends. ``asyncio.to_thread`` carries it; a thread
    started inside the block does not (it sees the process's selection), as the selection is a
    context variable."""
    profile = get_profile(name)
    token = SELECTED.set(profile.name)
    try:
        yield profile
    finally:
        try:
            SELECTED.reset(token)
        except ValueError:  # left in another context than entered (a generator driven elsewhere)
            SELECTED.set(None if token.old_value is contextvars.Token.MISSING else token.old_value)
