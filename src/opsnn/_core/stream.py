"""Emulated streams: in-order task queues, run when the stream is synchronized.

Phase 2 of an aclnn call only enqueues (like an NPU launch). ``synchronize`` runs the queued
tasks in order, on the calling thread (a run is a generator that ``drive`` runs, with the runs of
other streams its event waits ask for), and reports the first failure, as
``aclrtSynchronizeStream`` does; tasks after a failure are dropped, and a thread whose task
failed or was dropped in a run it did not ask for (another thread's synchronize or event wait,
or another stream's wait for an event recorded here) hears of it at its next synchronize of the
stream. A host program that reads results without synchronizing sees the old data, as it could
on a device.
"""

from __future__ import annotations

import collections
import functools
import itertools
import math
import os
import re
import threading
import weakref
from collections.abc import Callable, Generator
from types import GeneratorType

from . import forksafe
from .checks import is_c_int, shown
from .status import AclError, AclnnError


def _claims_of(run: threading.RLock) -> Callable[[], int]:
    """How many times the calling thread holds ``run`` (0: not its owner)."""
    if hasattr(run, "_recursion_count"):  # CPython >= 3.11: the lock's own C method
        return run._recursion_count

    def claims() -> int:  # CPython 3.10's C RLock tells its owner and count only in its repr
        owner, count = map(int, re.search(r"owner=(\d+) count=(\d+)", repr(run)).groups())
        return count if owner == threading.get_ident() else 0
    return claims


class Stream:
    """One in-order queue. Thread-safe: any thread may enqueue or synchronize; tasks run one at a
    time in enqueue order (a second synchronizer waits for the tasks the first one is running);
    a destroyed (closed) stream accepts no more work, so nothing is queued where it never runs."""

    def __init__(self, handle: int):
        self.handle = handle
        # appended under _lock, popped only by the synchronizer holding _run; a deque's append
        # and popleft are atomic, so the two never need a common lock (a relaunch + synchronize
        # of a 4-element call was ~4 us, of which a second lock and a fresh queue took ~0.3 us)
        # entries: (label, task, the thread that queued it, its place in the queue's order)
        self._tasks: collections.deque[tuple[str, Callable[[], None], int, int]] = collections.deque()
        self._places = itertools.count(1)
        self._lock = forksafe.lock()       # guards enqueue against close: nothing queued after
        self._run = forksafe.rlock()       # held while tasks run: keeps task order across threads
        # an event wait's claim of the run: taken unless another thread runs it (a deadlock of two
        # threads whose streams wait on each other's events otherwise), given back, and how many
        # this thread holds; the lock's own C methods, so no Ctrl-C lands between a Python call's
        # entry and the acquire or release it makes (breakers: a run left held); on CPython 3.10
        # the count is read in Python (_claims_of), where only the claim and its give-back are C
        self.claim = functools.partial(self._run.acquire, False)
        self.unclaim, self.claims = self._run.release, _claims_of(self._run)
        # by thread ident, tasks that thread queued and a run of the stream it did not ask for
        # (module docstring) failed or dropped: (the thread, weakly: an ident is reused once its
        # thread ends; [(each one's place, why)]), reported at its own next synchronize (under
        # _lock). A plain dict: the launch path tests it each time
        self._dropped: dict[int, tuple[weakref.ref, list[tuple[int, str]]]] = {}
        self.closed = False
        self._running: tuple | None = None  # the queue entry being run, for a forked child
        _STREAMS.add(self)

    def enqueue(self, label: str, task: Callable[[], None]) -> int:
        """Queue ``task``; returns its place in the queue's order (from 1)."""
        with self._lock:
            if self.closed:
                raise AclnnError(AclError.INVALID_RESOURCE_HANDLE,
                                 f"stream {self.handle:#x} was destroyed; its queue takes no more tasks")
            place = next(self._places)
            self._tasks.append((label, task, threading.get_ident(), place))  # (its thread: cheaper than the object)
        return place

    @property
    def pending(self) -> int:
        return len(self._tasks)

    @property
    def busy(self) -> bool:
        """Whether a synchronize would wait: tasks are queued, or one is running on a thread."""
        return bool(self._tasks) or self._running is not None

    def close(self) -> None:
        """Refuse further tasks (what is queued still runs at the next synchronize)."""
        with self._lock:
            self.closed = True

    def synchronize(self) -> None:
        """Run the tasks queued when it is called, in order; raise the first failure (the rest
        of those are dropped). Tasks queued meanwhile wait for the next synchronize. Then, if an
        earlier synchronize by another thread dropped tasks this thread had queued, raise that
        (once), so a caller whose work never ran is not told it succeeded."""
        with self._run:
            # as many tasks as are queued now (a nested run of this stream, an event wait's, may
            # empty the queue first)
            drive(self._run_tasks(len(self._tasks)))
            if self._dropped:  # (tested inline: the launch path's synchronize meets it every call)
                self.report_dropped()

    def report_dropped(self, before: float = math.inf) -> None:
        """If a run of this stream this thread did not ask for failed a task this thread queued,
        or dropped some after a failure, raise that (once; 500003), so a caller whose work never
        ran is not told it succeeded. A synchronize calls it; so does synchronize_event, with
        ``before`` its record's place: only a task queued before the record is its concern (one
        after it is left for the stream's synchronize)."""
        if not self._dropped:
            return
        ident = threading.get_ident()
        with self._lock:
            note = self._dropped.get(ident)
            if note is None:
                return
            ref, failures = note
            told = [f for f in failures if f[0] < before]  # (each failure kept apart: a breaker's
            if not told:                                    # event told one queued after its record)
                return
            rest = [f for f in failures if f[0] >= before]
            if rest:
                self._dropped[ident] = (ref, rest)
            else:
                del self._dropped[ident]
        if ref() is threading.current_thread():
            raise AclnnError(AclError.RT_FAILURE,
                             f"{len(told)} task(s) this thread queued on stream {self.handle:#x} failed or were "
                             f"dropped, not run: the failure was met by another thread (its synchronize or event "
                             f"wait) or by another stream's stream_wait_event ({told[-1][1]})")

    def run_until(self, done: Callable[[], bool], tell_caller: bool = False) -> Generator:
        """A run (a generator, for ``drive``; the caller holds this stream's ``claim``) of queued
        tasks in order until ``done()`` holds or the queue is empty. A failure raises as in
        ``synchronize``, dropping the tasks queued up to where ``done()`` holds (``_run_tasks``);
        with ``tell_caller`` (a stream_wait_event's run) the caller's failed or dropped tasks are
        told again at its next synchronize of this stream, which would otherwise return 0 over a
        launch that failed (a breaker: the waiting stream's synchronize told it, the failed
        stream's said 0)."""
        return self._run_tasks(math.inf, done, tell_caller)

    def _run_tasks(self, left: float, done: Callable[[], bool] = lambda: False,
                   tell_caller: bool = False) -> Generator:
        """A run (a generator, for ``drive``; the caller holds ``_run``) of queued tasks in order:
        at most ``left`` of them (``math.inf``: no limit), until ``done()`` holds (asked before
        each task) or the queue is empty. A task that returns a generator (an event wait: its
        run of the recorded stream; other tasks' results are ignored) has it run by yielding it
        to ``drive``, which resumes this run once it has ended or throws in what it raised (so
        this run's frame is not below it on Python's stack). A task's failure raises 500003
        after dropping the tasks queued up to that same end, no further: later tasks wait for
        the stream's next synchronize, as tasks queued after a synchronize's start do. The
        threads whose tasks failed or were dropped hear of it at their next synchronize
        (``_tell``): the caller too where ``tell_caller``. A Ctrl-C (or SystemExit) inside a
        task goes on to the caller (``_interrupted``). (A count, not a predicate built per
        call, for synchronize: that had cost the launch path ~0.4 us a synchronize.)"""
        tasks = self._tasks
        outer = self._running  # (a nested run's: the task that runs this one is still running)
        while left and tasks and not done():
            left -= 1
            entry = started = None
            try:
                # marked as running before it leaves the queue: a fork at any point finds it
                # either still queued or marked (_lost_in_child)
                self._running = entry = tasks[0]
                tasks.popleft()
                label, task, owner, place = entry
                started = True
                nested = task()
                if type(nested) is GeneratorType:  # an event wait's run of another stream
                    yield nested
            except Exception as exc:  # a task bug must not escape the runtime: a status instead
                if not started:  # the queue emptied under this run: a signal handler's synchronize of
                    return       # this stream, on this thread, ran what was left (IndexError here)
                raise self._failed(label, exc, (owner, place), left, done, tell_caller) from exc
            except BaseException:  # Ctrl-C (KeyboardInterrupt), SystemExit, or a close() of this run
                self._interrupted(entry, started)
                raise
            finally:
                self._running = outer

    def _interrupted(self, entry: tuple | None, started: bool | None) -> None:
        """A Ctrl-C (the KeyboardInterrupt goes on to the caller) came as queue entry ``entry``
        was taken. Taken but not ``started``, it goes back to the head of the queue as it was (a
        Ctrl-C between the two had lost it unreported: random Ctrl-C trials); once started, it
        comes back there as a task that fails, so the next synchronize reports it (500003) and
        drops what was queued after it, as after any failure, where it had returned 0 over a
        launch that never wrote its output (a breaker)."""
        tasks = self._tasks
        if entry is None or (tasks and tasks[0] is entry):  # (not taken yet)
            return
        if not started:
            tasks.appendleft(entry)
            return
        label, _, owner, place = entry
        tasks.appendleft((label, _unfinished(label, "was interrupted (KeyboardInterrupt) as it ran; "
                                                    "it may have run in part or not at all"), owner, place))

    def _failed(self, label: str, exc: Exception, queued: tuple[int, int], left: float,
                done: Callable[[], bool], tell_caller: bool) -> AclnnError:
        """The 500003 for task ``label``'s failure (``queued``: the thread that queued it and its
        place), after dropping queued tasks, at most ``left``, until ``done()`` holds."""
        if exc.__suppress_context__:  # a nested run's 500003, raised from the failure it met:
            exc.__context__ = None       # each raise walks the context chain (quadratic in a chain's depth)
        why, levels = _failure_text(label, exc)
        live = {t.ident: t for t in threading.enumerate()}
        self._tell(*queued, live, why, tell_caller)
        self._drop(left, done, why, live, tell_caller)
        error = AclnnError(AclError.RT_FAILURE, why)
        error.stream_levels = levels
        return error

    def _drop(self, left: float, done: Callable[[], bool], why: str, live: dict, tell_caller: bool) -> None:
        """Drops queued tasks after a failure, at most ``left``, until ``done()`` holds (asked
        before each): each task's ``dropped`` hook runs (an event's record then never
        completes), and the thread that queued it hears of it (``_tell``)."""
        while left and self._tasks and not done():
            left -= 1
            _, task, owner, place = self._tasks.popleft()
            hook = getattr(task, "dropped", None)
            if hook is not None:
                hook(why)
            self._tell(owner, place, live, why, tell_caller)

    def _tell(self, owner: int, place: int, live: dict, why: str, tell_caller: bool) -> None:
        """Note for thread ``owner``, unless it has ended or is the calling thread told by the
        raise alone (not ``tell_caller``), that its task at ``place`` failed or was dropped."""
        if (tell_caller or owner != threading.get_ident()) and owner in live:
            with self._lock:
                ref, failures = self._dropped.get(owner, (weakref.ref(live[owner]), []))
                self._dropped[owner] = (ref, [*failures, (place, why)])


_LEVELS_SHOWN = 4  # a failure met through a chain of event waits names this many deepest runs in full


def _failure_text(label: str, exc: Exception) -> tuple[str, tuple[int, str]]:
    """What task ``label``'s failure ``exc`` says (``stream task <label> failed: <why>``) and its
    ``stream_levels``: how many stream runs it failed, one inside the next (an event wait's run
    of the recorded stream fails with the task it ran), and the text of the deepest
    ``_LEVELS_SHOWN`` of them. Past those, the levels between the outermost and them are counted,
    not written out: each level's text had held the whole text of the one inside it, so a
    failure at the far end of a chain of 1000 streams held 53 kB of text and the chain took
    55 MB (quadratic) to report it."""
    why = exc.message if isinstance(exc, AclnnError) else f"internal error: {type(exc).__name__}: {exc}"
    levels, deepest = getattr(exc, "stream_levels", (0, why))
    levels += 1
    if levels <= _LEVELS_SHOWN:
        deepest = text = f"stream task {label} failed: {why}"
    else:
        skipped = levels - _LEVELS_SHOWN - 1
        between = f"[{skipped} more stream_wait_event task(s), each failed by the one after it] " if skipped else ""
        text = f"stream task {label} failed: {between}{deepest}"
    return text, (levels, deepest)


def _unfinished(label: str, why: str) -> Callable[[], None]:
    """A queue task that fails, saying that task ``label`` ``why`` (it stands for one that began
    and may not have finished: a Ctrl-C inside it, a fork while another thread ran it)."""
    def unfinished() -> None:
        raise AclnnError(AclError.RT_FAILURE, f"{label} {why}")
    return unfinished


def drive(steps: Generator) -> None:
    """Runs ``steps``, a stream's run (``Stream._run_tasks``) or an event wait, to its end, with
    the nested runs it yields: a task that waits for an event runs the recorded stream's queue,
    whose tasks may wait for other events in turn. Those nested runs go on an explicit stack, not
    Python's, so a chain of any length of streams each waiting for an event of the one before
    runs (nested calls had failed 500003 with a RecursionError at ~250 streams); each run is
    resumed once the run it yielded has ended, or has what that raised thrown in where it
    yielded, so order, failures and their messages are those of nested calls. A run that yields
    nothing (no event waits) costs one generator."""
    for nested in steps:  # (a plain for: no StopIteration raised for the run that yields nothing)
        stack = [steps, nested]
        try:
            _drive_stack(stack)
        finally:
            # a Ctrl-C between two steps leaves runs here: each ends now, innermost first, through
            # its own except and finally clauses (the interrupted wait put back, its claim given
            # back), not when the traceback is freed (a breaker: a retry in the handler ran the
            # tasks after a wait before the ones it waited for, and another thread's synchronize
            # found the recorded stream's run still held). A second Ctrl-C meanwhile (inside a
            # run's cleanup, or between two) does not stop it: the runs below still end, then it
            # is raised (closing an ended run again does nothing). Inline, not a function: a
            # Ctrl-C at a call's entry would have skipped it all (a breaker)
            second = None
            while stack:
                try:
                    while stack:
                        stack[-1].close()
                        stack.pop()
                except BaseException as exc:  # noqa: BLE001 - raised once every run has ended
                    second = exc
            if second is not None:
                raise second
        return


_DONE = object()  # next()'s answer for a run that has ended


def _drive_stack(stack: list[Generator]) -> None:
    """``drive``'s stack machine: it resumes the run on top, pushes the run it yields, pops it
    once it has ended, and throws what a run raised into the run below, where it yielded. (Runs
    return nothing: a value would cost a StopIteration.)"""
    thrown = None
    while stack:
        top = stack[-1]
        try:
            nested = next(top, _DONE) if thrown is None else top.throw(thrown)
        except StopIteration:  # it caught what was thrown in, and ended
            nested = _DONE
        except BaseException as exc:
            if top.gi_frame is not None:  # not the run's: a Ctrl-C as next() returned (drive ends the runs)
                raise
            stack.pop()  # the run on top raised it, and has ended
            if not stack:
                thrown = None  # (no reference cycle through this frame: a breaker's 47 objects a failure)
                raise
            thrown = exc
            continue
        thrown = None
        if nested is _DONE:
            stack.pop()
        else:
            stack.append(nested)


_STREAMS: weakref.WeakSet = weakref.WeakSet()  # every stream, for the at-fork handler below


def _lost_in_child() -> None:
    """In a forked child: a task another thread of the parent was running at the fork ran there
    in part or not at all, and the thread running it is gone. It comes back to the head of its
    stream as a task that fails, so the child's next synchronize reports it (500003) and drops
    what was queued after it, as after any failure, instead of running those as if it had run (a
    breaker: the child's synchronize returned 0 and a later event record showed it complete).
    A task that had just returned when the fork came is reported too: the child cannot tell."""
    for stream in list(_STREAMS):
        entry, stream._running = stream._running, None
        if entry is None or stream._run._is_owned():  # (the forking thread's own run goes on here)
            continue
        if stream._tasks and stream._tasks[0] is entry:  # marked, not yet taken off the queue
            continue
        label = entry[0]
        stream._tasks.appendleft((label, _unfinished(label, "was running on another thread of the parent when "
                                                            "this process forked; the child cannot tell whether "
                                                            "it finished"), threading.get_ident(), entry[3]))


os.register_at_fork(after_in_child=_lost_in_child)  # (after forksafe's: the locks are free by then)


class StreamTable:
    """Live streams by handle; handle 0 (or None) is the default stream."""

    def __init__(self) -> None:
        self._streams: dict[int, Stream] = {0: Stream(0)}
        # never reused; 2**38 creates before the event handles' range (event.py), below memory's
        self._ids = itertools.count(0x5000_0000_0001, 0x40)
        self._lock = forksafe.lock()

    def create(self) -> int:
        with self._lock:
            handle = next(self._ids)
            self._streams[handle] = Stream(handle)
        return handle

    def get(self, handle) -> Stream:
        """The live stream ``handle`` names: None is the default stream, as is 0; any other
        handle is what ``is_c_int`` takes (an int subclass too, never a bool nor a
        np.timedelta64, a duration NumPy makes an np.integer: a breaker's was 561000, or named a
        live stream), else 200005 as for a handle that is no live stream."""
        # no lock: a dict read is atomic, and a stream destroyed right after is closed (its
        # enqueue refuses), so a stale read cannot lose work
        key = handle if type(handle) is int else 0 if handle is None else int(handle) if is_c_int(handle) else None
        stream = self._streams.get(key) if key is not None else None
        if stream is None:
            raise AclnnError(AclError.INVALID_RESOURCE_HANDLE,
                             f"stream {shown(handle)} is not a live stream (create it with acl.rt.create_stream)")
        return stream

    def live(self) -> list[Stream]:
        """The live streams, the default one first."""
        return list(self._streams.values())

    def destroy(self, handle) -> None:
        """Runs what is queued, then forgets the stream (like aclrtDestroyStream's wait). The
        stream is closed first, so a task another thread tries to queue is refused, never lost.
        A queued task's failure is 500003 saying the stream was destroyed all the same, as
        reset_device and finalize say of theirs (it had named the task only, as if the stream
        were still there); a Ctrl-C leaves it in place, closed, for the rest to run."""
        stream = self.get(handle)
        if stream.handle == 0:
            raise AclnnError(AclError.INVALID_PARAM, "destroy_stream: the default stream cannot be destroyed")
        with self._lock:
            if self._streams.get(stream.handle) is not stream:  # another thread destroyed it
                raise AclnnError(AclError.INVALID_RESOURCE_HANDLE,
                                 f"stream {shown(handle)} is not a live stream (already destroyed)")
            del self._streams[stream.handle]
            stream.close()
        try:
            stream.synchronize()
        except AclnnError as exc:
            raise AclnnError(exc.status, f"the stream was destroyed, but queued work failed: {exc.message}") from None
        except BaseException as exc:
            if not isinstance(exc, Exception) and stream.pending:  # a Ctrl-C: what is left is not lost
                with self._lock:  # (closed, back in the table: a destroy or synchronize runs the rest)
                    self._streams.setdefault(stream.handle, stream)
            raise

    def reset(self) -> list[Stream]:
        """Forget every stream and start over with a fresh default stream. Returns the old
        streams, closed (they take no more tasks) but with their queues intact, so the caller
        (acl.finalize) can run what is still queued."""
        with self._lock:
            old, self._streams = self._streams, {0: Stream(0)}
            for stream in old.values():
                stream.close()
        return list(old.values())
