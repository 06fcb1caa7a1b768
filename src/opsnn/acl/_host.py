"""Host-side memory the runtime may touch: malloc_host memory, pointers handed out by
``acl.util`` (valid while the caller keeps their object alive, as pyACL asks), and buffer
objects."""

from __future__ import annotations

import bisect
import collections
import sys
import weakref

import numpy as np

from .._core import forksafe, memory
from .._core.checks import is_c_int
from .._core.status import AclError, AclnnError

_lock = forksafe.lock()
# address -> the host bytes acl.util handed out pointers to, valid while the caller keeps the
# object it passed alive (as pyACL asks: "keep the bytes object alive"). Entries go with their
# object, so a loop of numpy_to_ptr / bytes_to_ptr calls neither leaks nor slows lookups down.
# Several entries may share an address (an array and a view of it, a bytearray and a
# memoryview of it): each lives as long as its own object.
_registered: dict[int, list[_Entry]] = {}
_starts: list[int] = []  # _registered's addresses, sorted: a lookup reads only those that can hold it
_longest = 0  # the most bytes a live entry holds (how far below an address a holder may start)
_sizes: collections.Counter = collections.Counter()  # live entries by their bytes: _longest's source
# a non-contiguous view's private copy, by (the array it views, the view's address, shape,
# strides, dtype): registered again, the same view refreshes its copy rather than add one, so a
# loop over the rows of a Fortran-ordered array keeps one copy per row (a breaker: one more per
# epoch, and every lookup slower)
_copies: dict[tuple, tuple[int, _Entry]] = {}
# the entries of objects without weak references, by address: what _prune reads (a lookup
# prunes, and scanned every entry while one was registered: quadratic in a loop over rows)
_held: dict[tuple[int, int], _Entry] = {}
# (addr, entry, key) of arrays that died, removed by the next holder of _lock (_drain): their
# finalizer may run on a thread inside _lock, which a plain lock taken again never gives (the
# cyclic GC runs at any allocation there; a breaker: numpy_to_ptr hung for good)
_dead: list[tuple] = []
# held entries (below) are scanned for dead objects at every lookup, each time the registry
# doubles from _PRUNE_MIN, and at each registration of at least _PRUNE_BYTES
_PRUNE_MIN = 16
_PRUNE_BYTES = 1 << 20
_prune_at = _PRUNE_MIN


class _Entry:
    """Host bytes registered at an address, and how to tell that their object is gone.

    * an array (``weak``): held by a weak reference; the bytes are all of its memory, or a
      private copy (``copy``) of a non-contiguous view, tied to the array the view is of; the
      entry is removed when that array dies;
    * an object that cannot be weakly referenced (bytes, bytearray, a list made an array,
      ``held``): kept here with its bytes (``copy``), and dead once nothing outside this
      registry refers to it; ``refs`` counts the references the entry itself holds to it (the
      entry, and the bytes' base when that leads to it).

    ``writable``: whether the object registered may be written through the pointer (a read-only
    view of a writable array stays read-only, though its entry holds the whole array)."""

    __slots__ = ("copy", "held", "nbytes", "refs", "weak", "writable")

    def __init__(self, weak=None, copy=None, held=None, refs=0, writable=True):
        self.weak, self.copy, self.held, self.refs, self.writable = weak, copy, held, refs, writable
        self.nbytes = 0  # the bytes it holds (set by _add)

    def bytes(self) -> np.ndarray | None:
        if self.held is not None:
            return self.copy
        owner = self.weak()
        if owner is None:
            return None
        buffer = self.copy if self.copy is not None else owner.ravel(order="K").view(np.uint8)
        if not self.writable and buffer.flags.writeable:
            buffer = buffer.view()
            buffer.flags.writeable = False
        return buffer


def register_array(array: np.ndarray, copy: np.ndarray | None = None) -> int:
    """The address of a C-contiguous ``array``'s bytes, known while the memory it views lives:
    the whole array it is a view of is registered (``batch[i]``'s pointer stays valid while
    ``batch`` does, as in C, though the view object itself is gone at once), unless that array's
    memory is not one block (then ``array`` itself, while it lives); writable where ``array`` is.
    Or the address of ``copy`` (uint8, a private copy of a non-contiguous ``array``), known while
    the array that ``array`` is a view of lives (``m.T`` is a view of ``m``); the same view
    registered again refreshes its copy and gets the same address (one memory, as a C pointer's
    would be: a copy queued from the earlier pointer reads the newer bytes)."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    if copy is not None:
        return _register_copy(root, array, copy)
    owner = root if root.flags.c_contiguous or root.flags.f_contiguous else array
    buffer = owner.ravel(order="K").view(np.uint8)
    start, writable = _address(buffer), bool(array.flags.writeable)
    with _lock:
        _drain()
        if not any(e.weak is not None and e.copy is None and e.weak() is owner and e.writable == writable
                   for e in _registered.get(start, ())):  # (else registered already: a loop's)
            entry = _Entry(weak=weakref.ref(owner), writable=writable)
            weakref.finalize(owner, _forget, start, entry)
            _add(start, entry, buffer.size)
    return _address(array)


def _register_copy(root: np.ndarray, view: np.ndarray, copy: np.ndarray) -> int:
    key = (id(root), _address(view), view.shape, view.strides, view.dtype.str)
    with _lock:
        _drain()
        known = _copies.get(key)
        if known is not None and known[1].weak() is root and known[1].copy.size == copy.size:
            known[1].copy[:] = copy  # the snapshot this call makes, where the last one was
            return known[0]
        start, entry = _address(copy), _Entry(weak=weakref.ref(root), copy=copy)
        weakref.finalize(root, _forget, start, entry, key)
        _add(start, entry, copy.size)
        _copies[key] = (start, entry)
    return start


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def _add(start: int, entry: _Entry, nbytes: int) -> None:
    """Register ``entry`` at ``start`` (under ``_lock``)."""
    global _longest
    entries = _registered.get(start)
    if entries is None:
        entries = _registered[start] = []
        bisect.insort(_starts, start)
    entries.append(entry)
    entry.nbytes = nbytes
    _sizes[nbytes] += 1
    _longest = max(_longest, nbytes)
    if entry.held is not None:
        _held[start, id(entry)] = entry


def register_object(obj, buffer: np.ndarray) -> int:
    """The address of ``buffer`` (uint8: ``obj``'s own bytes, or an array made of it), known
    while anything outside this registry refers to ``obj``."""
    global _prune_at
    addr = _address(buffer)
    with _lock:
        _drain()
        if any(e.held is obj for e in _registered.get(addr, ())):
            return addr  # registered already (the same bytes object every iteration)
        _add(addr, _Entry(held=obj, copy=buffer, refs=1 + _leads_to(buffer, obj),
                          writable=bool(buffer.flags.writeable)), buffer.size)
        if len(_registered) >= _prune_at or buffer.nbytes >= _PRUNE_BYTES:
            _prune()
            _prune_at = max(_PRUNE_MIN, 2 * len(_registered))
    return addr


def _leads_to(buffer: np.ndarray, obj) -> bool:
    """Whether ``buffer``'s chain of bases holds a reference to ``obj`` (np.frombuffer of bytes
    has the bytes as its base; of a bytearray, a memoryview of it)."""
    base = buffer.base
    while isinstance(base, np.ndarray):
        base = base.base
    return base is obj or (isinstance(base, memoryview) and base.obj is obj)


# an object only this entry holds: what getrefcount reads beyond the entries' own references
# is measured on it, not assumed (interpreters count a call's argument differently)
_PROBE = _Entry(held=object(), refs=1)


def _prune() -> None:
    """Drop the held entries whose object nothing outside the registry refers to (under
    ``_lock``): its reference count, less what getrefcount adds (``_PROBE``'s), is all the
    entries'."""
    if not _held:
        return
    groups: dict[int, list[tuple[int, _Entry]]] = {}
    for (addr, _), entry in _held.items():
        groups.setdefault(id(entry.held), []).append((addr, entry))
    added = sys.getrefcount(_PROBE.held) - _PROBE.refs
    for group in groups.values():
        if sys.getrefcount(group[0][1].held) - added <= sum(entry.refs for _, entry in group):
            for addr, entry in group:
                _remove(addr, entry)


def _remove(addr: int, entry: _Entry) -> None:
    global _longest
    entries = _registered.get(addr, [])
    if entry in entries:
        entries.remove(entry)
        _held.pop((addr, id(entry)), None)
        if not entries:
            del _registered[addr]
            del _starts[bisect.bisect_left(_starts, addr)]
        _sizes[entry.nbytes] -= 1
        if not _sizes[entry.nbytes]:
            del _sizes[entry.nbytes]
            if entry.nbytes == _longest:  # the last of the largest went: the window shrinks to the next
                _longest = max(_sizes, default=0)


def _forget(addr: int, entry: _Entry, key: tuple | None = None) -> None:
    """A weakly referenced array died: its entry goes (and its copy's key, ``key``), now if
    ``_lock`` is free, else at the lock holder's next ``_drain`` (the holder may be this very
    thread, the finalizer having run inside its locked section)."""
    _dead.append((addr, entry, key))
    if _lock.acquire(blocking=False):
        try:
            _drain()
        finally:
            _lock.release()


def _drain() -> None:
    """Remove the entries of arrays that died (under ``_lock``)."""
    while _dead:
        addr, entry, key = _dead.pop()
        _remove(addr, entry)
        if key is not None and _copies.get(key, (None, None))[1] is entry:
            del _copies[key]


def lookup(addr: int, nbytes: int, what: str) -> np.ndarray:
    alloc = memory.HOST.find(addr)
    if alloc is not None:
        return memory.HOST.region(addr, nbytes, what)
    with _lock:
        _drain()
        _prune()
        entries = _near(addr)
    past = None  # the largest buffer holding addr but not all nbytes after it
    read_only = None  # one that holds them read-only, if no writable one does
    for start, entry in entries:  # buffers may overlap (an array and a view): any one that holds it
        buf = entry.bytes()
        if buf is not None and start <= addr < start + max(buf.size, 1):
            offset = addr - start
            if 0 <= nbytes and offset + nbytes <= buf.size:
                if buf.flags.writeable:
                    return buf[offset:offset + nbytes]
                read_only = read_only if read_only is not None else buf[offset:offset + nbytes]
            elif past is None or buf.size > past[1]:
                past = (start, buf.size)
    if read_only is not None:  # (region refuses a write to it)
        return read_only
    if past is not None:
        raise AclnnError(AclError.INVALID_PARAM, f"{what}: {nbytes} bytes at {hex(addr)} reach past the "
                                                 f"{past[1]}-byte host buffer at {hex(past[0])}")
    if memory.HOST.spans(addr):  # malloc_host's range: its memory was freed (addresses are never reused)
        raise AclnnError(AclError.INVALID_PARAM, f"{what}: the host memory at {hex(addr)} (acl.rt.malloc_host) "
                                                 "was already freed (acl.rt.free_host)")
    if memory.DEVICE.spans(addr):
        copy = ": copy it to the host with acl.rt.memcpy first" if memory.DEVICE.find(addr) is not None else ""
        raise AclnnError(AclError.INVALID_PARAM,
                         f"{what}: {hex(addr)}{memory.elsewhere(addr, memory.HOST, 'host memory')}{copy}")
    raise AclnnError(AclError.INVALID_PARAM,
                     f"{what}: {hex(addr)} is not host memory opsnn knows (use acl.rt.malloc_host, "
                     "acl.util.numpy_to_ptr / bytes_to_ptr and keep the object alive while the "
                     "pointer is used, or pass the NumPy array itself)")


def known(addr: int) -> bool:
    """Whether ``addr`` lies in host memory opsnn knows (malloc_host, or a live registered
    object). A bisect to the entries that can hold it, not ``lookup``'s prune, which reads every
    held entry (a regression breaker: create_scalar, which asks this of every int >= 64 KiB, took
    15.7 ms beside 20 000 bytes_to_ptr registrations); only where a held entry covers ``addr``
    does the prune run, its object's liveness being what the prune tells."""
    if memory.HOST.find(addr) is not None:
        return True
    with _lock:
        _drain()
        entries = _covering(addr)
        if any(entry.held is None and entry.weak() is not None for entry in entries):
            return True
        if all(entry.held is None for entry in entries):
            return False
        _prune()
        return any(entry.held is not None for entry in _covering(addr))


def _near(addr: int) -> list[tuple[int, _Entry]]:
    """``(start, entry)`` of the entries that may hold ``addr`` (under ``_lock``): those starting
    at most ``_longest`` bytes below it, found by bisection."""
    low, high = bisect.bisect_left(_starts, addr - _longest), bisect.bisect_right(_starts, addr)
    return [(start, entry) for start in _starts[low:high] for entry in _registered[start]]


def _covering(addr: int) -> list[_Entry]:
    """The entries whose bytes hold ``addr`` (under ``_lock``)."""
    return [entry for start, entry in _near(addr) if start <= addr < start + max(entry.nbytes, 1)]


def refuse_object_array(array: np.ndarray, what: str) -> None:
    """100000 for an array of Python objects: it has no raw bytes to point at or copy."""
    if array.dtype.hasobject:
        raise AclnnError(AclError.INVALID_PARAM, f"{what}: an object array holds Python references, not raw data")


def as_bytes(obj, what: str, writable: bool, expected: str = "a NumPy array, bytes, bytearray or memoryview") -> np.ndarray:
    """uint8 view of a buffer object (NumPy array, bytes, bytearray, memoryview); 100000 naming
    ``expected`` (what the call takes) for anything else."""
    if isinstance(obj, np.ndarray):
        refuse_object_array(obj, what)
        if writable:
            if not (obj.flags.c_contiguous and obj.flags.writeable):
                raise AclnnError(AclError.INVALID_PARAM, f"{what}: {_not_writable_in_place(obj)}")
            return obj.reshape(-1).view(np.uint8)
        return np.ascontiguousarray(obj).reshape(-1).view(np.uint8)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        try:
            view = np.frombuffer(obj, dtype=np.uint8)
        except (BufferError, ValueError) as exc:  # a strided memoryview has no flat bytes to point at
            raise AclnnError(AclError.INVALID_PARAM, f"{what}: the buffer must be C-contiguous ({exc}); "
                                                     "pass bytes(view) or a contiguous array") from None
        if writable and not view.flags.writeable:
            raise AclnnError(AclError.INVALID_PARAM, f"{what}: bytes objects are read-only")
        return view
    raise AclnnError(AclError.INVALID_PARAM, f"{what}: expected {expected}, got {type(obj).__name__}")


def _not_writable_in_place(array: np.ndarray) -> str:
    """Why a host array given as a destination (memcpy's, memset's) cannot be written in place:
    which of the two conditions fails, with the array's own shape and strides, and what to pass
    (as the pointer form's "is read-only host memory" and numpy_to_ptr's warning tell theirs)."""
    problems = []
    if not array.flags.c_contiguous:
        problems.append(f"not C-contiguous (shape {array.shape}, strides {array.strides} in bytes)")
    if not array.flags.writeable:
        problems.append("read-only (flags.writeable is False)")
    if array.flags.c_contiguous:
        how = "pass a writable array"
    else:
        how = ("copy into a C-contiguous array (np.empty(shape, dtype)) and assign that into "
               + ("it" if array.flags.writeable else "a writable one"))
    return f"the host array must be C-contiguous and writable, but it is {' and '.join(problems)}: {how}"


def region(ptr, nbytes: int, what: str, writable: bool) -> np.ndarray:
    if is_c_int(ptr):
        view = lookup(int(ptr), nbytes, what)
        if writable and not view.flags.writeable:
            raise AclnnError(AclError.INVALID_PARAM, f"{what}: {hex(int(ptr))} is read-only host memory")
        return view
    view = as_bytes(ptr, what, writable, expected="a host address (int) or a NumPy array / bytes / bytearray")
    if nbytes > view.size:
        raise AclnnError(AclError.INVALID_PARAM,
                         f"{what}: {nbytes} bytes requested but the host buffer holds {view.size}")
    return view[:nbytes]
