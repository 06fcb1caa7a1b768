"""Host-side memory the runtime may touch: malloc_host memory, pointers handed out by
``acl.util`` (which keep their object alive, as pyACL asks callers to), and buffer objects."""

from __future__ import annotations

import threading

import numpy as np

from .._core import memory
from .._core.status import AclError, AclnnError

_lock = threading.Lock()
_registered: dict[int, np.ndarray] = {}  # address -> uint8 view (read-only for bytes)


def register(buffer: np.ndarray) -> int:
    """Register a uint8 view of host memory; returns its real address."""
    addr = int(buffer.__array_interface__["data"][0])
    with _lock:
        _registered[addr] = buffer
    return addr


def lookup(addr: int, nbytes: int, what: str) -> np.ndarray:
    alloc = memory.HOST.find(addr)
    if alloc is not None:
        return memory.HOST.region(addr, nbytes, what)
    with _lock:
        for start, buf in _registered.items():
            if start <= addr < start + max(buf.size, 1):
                offset = addr - start
                if offset + nbytes > buf.size:
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
    if isinstance(ptr, (int, np.integer)) and not isinstance(ptr, bool):
        view = lookup(int(ptr), nbytes, what)
        if writable and not view.flags.writeable:
            raise AclnnError(AclError.INVALID_PARAM, f"{what}: {hex(int(ptr))} is read-only host memory")
        return view
    view = as_bytes(ptr, what, writable)
    if nbytes > view.size:
        raise AclnnError(AclError.INVALID_PARAM,
                         f"{what}: {nbytes} bytes requested but the host buffer holds {view.size}")
    return view[:nbytes]
