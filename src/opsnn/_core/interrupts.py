"""Holding Ctrl-C (SIGINT) over work that must not stop halfway: a numba compile (raised inside
numba's first compile of a process, a KeyboardInterrupt left its typing registries part-loaded,
and every later compile failed onto the NumPy backend), and ``opsnn verify``'s and ``opsnn
compare``'s report once their cases have run (one pressed as the dump's index was written lost
the report and the index).

``held`` is the one place that does it, and its rules are the same for both: only where Python's
own handler is in force (``signal.default_int_handler``: a program's own, asyncio's or one that
sets a flag, runs when the signal comes), only on the main thread (the one Python delivers SIGINT
to), one hold at a time (a hold inside another holds nothing more, so a second press is raised at
once however deep the nesting), and a second press during a hold is raised at once (work that
hangs can still be stopped).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

# While a hold is in force: [its handler].
_HOLDING: list = []


@contextlib.contextmanager
def held(reraise: bool) -> Iterator[list[int]]:
    """Hold SIGINT over the block (see the module docstring): yields the list of the presses
    held. With ``reraise`` a held press is raised when the block ends (as a KeyboardInterrupt,
    through Python's handler, or through one the block set); without, the caller reads the list
    and acts on it (``opsnn verify`` and ``compare`` end with 130, their report whole). Where no hold is taken the
    list stays empty and the signal works as it would."""
    if (_HOLDING or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield []
        return
    presses: list[int] = []

    def hold(signum, frame):
        presses.append(signum)
        if len(presses) > 1:  # the second: raised at once (with the first)
            _release(hold)
            raise KeyboardInterrupt

    try:  # (a Ctrl-C before the handler is in: raised here, the hold ended below)
        _HOLDING.append(hold)  # first: a fork from here on gives the child Python's handler back
        signal.signal(signal.SIGINT, hold)
        yield presses
    finally:
        if _HOLDING:  # (a second Ctrl-C ended it)
            _release(hold)
            if presses and reraise:  # to Python's handler, or to one set meanwhile
                signal.raise_signal(signal.SIGINT)


def _release(hold) -> None:
    """End the hold: Python's handler back where ``hold`` is still in force (not one set during
    the hold; forgotten after: a fork in between puts it back once more in the child, and a
    Ctrl-C that Python's handler raises in between still ends it)."""
    try:
        if signal.getsignal(signal.SIGINT) is hold:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    finally:
        _HOLDING.pop()


def _release_in_child() -> None:
    """A fork (from another thread) while the main thread held SIGINT: the child, which never
    ends that hold, gets Python's handler back (it swallowed its first Ctrl-C)."""
    if _HOLDING:
        try:
            _release(_HOLDING[-1])
        except ValueError:  # (the child's one thread is its main thread: not expected)
            _HOLDING.clear()


os.register_at_fork(after_in_child=_release_in_child)
