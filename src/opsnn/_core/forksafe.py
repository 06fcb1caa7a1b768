"""Locks that a forked child gets back free.

``os.fork`` copies each lock as it is. One that another thread of the parent held at that moment
stays held in the child, where that thread does not exist, and the child's first call that needs
it waits for good (a breaker: a few forks in a few hundred, beside a thread making opsnn calls,
hung in the output pool or in an aclnn launch). The child's only thread is the one that forked,
so every lock made here that another thread held is made free again there, as the standard
library's logging and threading modules do with their own (``_at_fork_reinit``); one the forking
thread holds stays its own. What a lock guarded is as the gone thread left it: a change it had
half made (a pooled buffer taken but not yet put back) is lost to the child, which is not one of
its callers. An owner whose state a fork must reset does that in its own at-fork handler,
registered after this module's (its module imports this one), so run after it (``_core.stream``
reports a task another thread was running; ``kernels.numba_backend`` drops pool launches).
"""

from __future__ import annotations

import os
import threading
import weakref

_MADE: weakref.WeakSet = weakref.WeakSet()


def lock() -> threading.Lock:
    """A ``threading.Lock`` that a forked child finds free."""
    made = threading.Lock()
    _MADE.add(made)
    return made


def rlock() -> threading.RLock:
    """A ``threading.RLock`` that a forked child finds free."""
    made = threading.RLock()
    _MADE.add(made)
    return made


def condition() -> threading.Condition:
    """A ``threading.Condition`` (over its own RLock) that a forked child finds free, no waiter in it."""
    made = threading.Condition()
    _MADE.add(made)
    return made


def _free_in_child() -> None:
    for made in list(_MADE):
        # one the forking thread holds stays held: that thread goes on in the child and releases
        # it (a reentrant lock knows its owner; opsnn never forks under a plain one)
        if not (hasattr(made, "_is_owned") and made._is_owned()):
            made._at_fork_reinit()


os.register_at_fork(after_in_child=_free_in_child)


# Other locks a fork waits for (``waited_at_fork``), in the order registered: os.fork takes each
# first, so that no other thread is inside what one guards when the child is made (numba's
# compile, an LLVM call, the import of a kernel backend: a child forked in the middle of one
# waited for good at its first kernel call, the holder gone; breakers), and both sides give it
# back. Where a Ctrl-C ended the wait (CPython prints it as ignored and forks all the same), the
# child makes afresh each one it did not get.
_WAITED: list[tuple[object, str]] = []
_HELD: list[tuple[object, str]] = []


def waited_at_fork(owner: object, name: str) -> None:
    """Register ``getattr(owner, name)``, a ``threading.RLock``, as one os.fork waits for
    (above): another library's (numba keeps its compiler lock as an attribute) or opsnn's own.
    Register in the order the threads that hold them take them (a deadlock otherwise)."""
    _WAITED.append((owner, name))


def _take_before_fork() -> None:
    _HELD.clear()
    for owner, name in _WAITED:
        getattr(owner, name).acquire()
        _HELD.append((owner, name))


def _give_back_in_parent() -> None:
    for owner, name in reversed(_HELD):
        getattr(owner, name).release()


def _give_back_in_child() -> None:
    for owner, name in _WAITED:
        if (owner, name) in _HELD:
            getattr(owner, name).release()  # the forking thread took it, and is this thread here
        else:
            setattr(owner, name, threading.RLock())


os.register_at_fork(before=_take_before_fork, after_in_parent=_give_back_in_parent,
                    after_in_child=_give_back_in_child)

