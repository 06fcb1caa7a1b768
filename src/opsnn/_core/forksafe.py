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
