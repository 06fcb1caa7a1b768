"""Host-side memory the runtime may touch: malloc_host memory, pointers handed out by
``acl.util`` (valid while the caller keeps their object alive, as pyACL asks), and buffer
objects."""

from __future__ import annotations

import sys
import threading
import weakref

import numpy as np

from .._core import memory
from .._core.checks import is_c_int
from .._core.status import AclError, AclnnError

_lock = threading.Lock()
# address -> the host bytes acl.util handed out a pointer to, valid while the caller keeps the
# object it passed alive (as pyACL asks: "keep the bytes object alive"). Entries go with their
# object, so a loop of numpy_to_ptr / bytes_to_ptr calls neither leaks nor slows lookups down.
_registered: dict[int, _Entry] = {}
# held entries (below) are scanned for dead ones each time the registry doubles from
# _PRUNE_MIN, and at each registration of at least _PRUNE_BYTES, whose memory should go soon
_PRUNE_MIN = 16
_PRUNE_BYTES = 1 << 20
_prune_at = _PRUNE_MIN


class _Entry:
    """Host bytes registered at an address, and how to tell that their object is gone.

    * an array (``weak``): held by a weak reference; its bytes are the array's own, or a
      private copy made of it (``copy``); the entry is removed when the array dies;
    * an object that cannot be weakly referenced (bytes, bytearray, a list made an array):
      held here with its bytes, and dead once nothing but this entry refers to it (its
      reference count down to ``baseline``, measured when it was registered)."""

    __slots__ = ("weak", "copy", "held", "baseline")

    def __init__(self, weak=None, copy=None, held=None, baseline=0):
        self.weak, self.copy, self.held, self.baseline = weak, copy, held, baseline

    def bytes(self) -> np.ndarray | None:
        if self.weak is not None:
            owner = self.weak()
            if owner is None:
                return None
            return self.copy if self.copy is not None else owner.reshape(-1).view(np.uint8)
        return self.copy if sys.getrefcount(self.held) > self.baseline else None


def register_array(array: np.ndarray, copy: np.ndarray | None = None) -> int:
    """The address of a C-contiguous ``array``'s bytes, or of ``copy`` (uint8, a private copy of
    a non-contiguous one), known while the caller keeps ``array`` alive."""
    buffer = array.reshape(-1).view(np.uint8) if copy is None else copy
    addr = int(buffer.__array_interface__["data"][0])
    with _lock:
        known = _registered.get(addr)
        if known is not None and known.weak is not None and known.weak() is array and known.copy is copy:
            return addr  # registered already (e.g. the same array every iteration)
        entry = _Entry(weak=weakref.ref(array), copy=copy)
        weakref.finalize(array, _forget, addr, entry)
        _registered[addr] = entry
    return addr


def register_object(obj, to_bytes) -> int:
    """The address of ``to_bytes(obj)`` (uint8: ``obj``'s own bytes, or an array made of it),
    known while anything besides this registry refers to ``obj`` (bytes and lists have no weak
    references)."""
    global _prune_at
    before = sys.getrefcount(obj)
    entry = _Entry(held=obj, copy=to_bytes(obj))
    # the references this registry now holds (the entry; the bytes' base when it is obj), plus
    # the one a later sys.getrefcount(entry.held) takes for its argument
    entry.baseline = sys.getrefcount(obj) - before + 1
    addr = int(entry.copy.__array_interface__["data"][0])
    with _lock:
        _registered[addr] = entry
        if len(_registered) >= _prune_at or entry.copy.nbytes >= _PRUNE_BYTES:
            for start in [a for a, e in _registered.items() if e.held is not None and e.bytes() is None]:
                del _registered[start]
            _prune_at = max(_PRUNE_MIN, 2 * len(_registered))
    return addr


def _forget(addr: int, entry: _Entry) -> None:
    with _lock:
        if _registered.get(addr) is entry:
            del _registered[addr]


def lookup(addr: int, nbytes: int, what: str) -> np.ndarray:
    alloc = memory.HOST.find(addr)
    if alloc is not None:
        return memory.HOST.region(addr, nbytes, what)
    with _lock:
        entries = list(_registered.items())
    for start, entry in entries:
        buf = entry.bytes()
        if buf is not None:
            if start <= addr < start + max(buf.size, 1):
                offset = addr - start
                if nbytes < 0 or offset + nbytes > buf.size:
                    raise AclnnError(AclError.INVALID_PARAM,
                                     f"{what}: {nbytes} bytes at {hex(addr)} reach past the "
                                     f"{buf.size}-byte host buffer at {hex(start)}")
                return buf[offset:offset + nbytes]
    raise AclnnError(AclError.INVALID_PARAM,
                     f"{what}: {hex(addr)} is not host memory opsnn knows (use acl.rt.malloc_host, "
                     "acl.util.numpy_to_ptr / bytes_to_ptr and keep the object alive while the "
                     "pointer is used, or pass the NumPy array itself)")


def as_bytes(obj, what: str, writable: bool) -> np.ndarray:
    """uint8 view of a buffer object (NumPy array, bytes, bytearray, memoryview)."""
    if isinstance(obj, np.ndarray):
        if writable:
            if not (obj.flags.c_contiguous and obj.flags.writeable):
                raise AclnnError(AclError.INVALID_PARAM,
                                 f"{what}: the host array must be C-contiguous and writable")
            return obj.reshape(-1).view(np.uint8)
        return np.ascontiguousarray(obj).reshape(-1).view(np.uint8)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        view = np.frombuffer(obj, dtype=np.uint8)
        if writable and not view.flags.writeable:
            raise AclnnError(AclError.INVALID_PARAM, f"{what}: bytes objects are read-only")
        return view
    raise AclnnError(AclError.INVALID_PARAM,
                     f"{what}: expected a host address (int) or a NumPy array / bytes / bytearray, "
                     f"got {type(obj).__name__}")


def region(ptr, nbytes: int, what: str, writable: bool) -> np.ndarray:
    if is_c_int(ptr):
        view = lookup(int(ptr), nbytes, what)
        if writable and not view.flags.writeable:
            raise AclnnError(AclError.INVALID_PARAM, f"{what}: {hex(int(ptr))} is read-only host memory")
        return view
    view = as_bytes(ptr, what, writable)
    if nbytes > view.size:
        raise AclnnError(AclError.INVALID_PARAM,
                         f"{what}: {nbytes} bytes requested but the host buffer holds {view.size}")
    return view[:nbytes]
