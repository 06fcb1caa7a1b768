"""Host-side memory the runtime may touch: malloc_host memory, pointers handed out by
``acl.util`` (which keep their object alive, as pyACL asks callers to), and buffer objects."""

from __future__ import annotations

import threading
import weakref

import numpy as np

from .._core import memory
from .._core.checks import is_c_int
from .._core.status import AclError, AclnnError

_lock = threading.Lock()
# address -> uint8 view (read-only for bytes), or a weak reference to the C-contiguous array
# whose bytes start there (the entry goes when the array does, so a loop of numpy_to_ptr calls
# neither leaks nor slows the lookups down)
_registered: dict[int, np.ndarray | weakref.ref] = {}


def register(buffer: np.ndarray, owner: np.ndarray | None = None) -> int:
    """Register a uint8 view of host memory; returns its real address. With ``owner`` (the
    C-contiguous array ``buffer`` views), only a weak reference is kept: the address stays
    known while the caller keeps ``owner`` alive, as pyACL asks."""
    addr = int(buffer.__array_interface__["data"][0])
    entry: np.ndarray | weakref.ref = buffer
    with _lock:
        if owner is not None:
            known = _registered.get(addr)
            if isinstance(known, weakref.ref) and known() is owner:
                return addr  # registered already (e.g. the same array every iteration)
            entry = weakref.ref(owner)
            weakref.finalize(owner, _forget, addr, entry)
        _registered[addr] = entry
    return addr


def _forget(addr: int, entry) -> None:
    with _lock:
        if _registered.get(addr) is entry:
            del _registered[addr]


def _bytes_of(entry) -> np.ndarray | None:
    if isinstance(entry, weakref.ref):
        owner = entry()
        return None if owner is None else owner.reshape(-1).view(np.uint8)
    return entry


def lookup(addr: int, nbytes: int, what: str) -> np.ndarray:
    alloc = memory.HOST.find(addr)
    if alloc is not None:
        return memory.HOST.region(addr, nbytes, what)
    with _lock:
        entries = list(_registered.items())
    for start, entry in entries:
        buf = _bytes_of(entry)
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
                     "acl.util.numpy_to_ptr / bytes_to_ptr, or pass the NumPy array itself)")


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
