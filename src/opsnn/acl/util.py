"""``acl.util``: host pointer helpers, pyACL-shaped.

The returned pointers are the objects' real addresses; opsnn keeps a reference to each object so
the address stays valid (pyACL asks callers to keep them alive). ``ptr_to_bytes`` and
``ptr_to_numpy`` read only memory opsnn knows (malloc_host or registered), never arbitrary
addresses. Errors return 0 / None and leave the message in ``acl.get_recent_err_msg()``.
"""

from __future__ import annotations

import numpy as np

from .._core.status import boundary
from . import _host

# acl.util.ptr_to_numpy type codes (the NumPy C enum numbers pyACL uses)
NPY_TYPES = {0: np.bool_, 1: np.int8, 2: np.uint8, 3: np.int16, 4: np.uint16, 5: np.int32,
             6: np.uint32, 7: np.int64, 8: np.uint64, 11: np.float32, 12: np.float64, 23: np.float16}


@boundary(lambda code: 0)
def numpy_to_ptr(array: np.ndarray) -> int:
    """Address of a C-contiguous array's data (a non-contiguous array is copied first)."""
    if not isinstance(array, np.ndarray):
        array = np.asarray(array)
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    return _host.register(array.reshape(-1).view(np.uint8))


@boundary(lambda code: 0)
def bytes_to_ptr(data) -> int:
    """Address of a bytes / bytearray object's buffer (read-only for bytes)."""
    return _host.register(_host.as_bytes(data, "bytes_to_ptr", writable=False))


@boundary(lambda code: None)
def ptr_to_bytes(ptr: int, size: int) -> bytes:
    """Copy ``size`` bytes of known host memory at ``ptr`` into a bytes object."""
    return _host.region(ptr, int(size), "ptr_to_bytes", writable=False).tobytes()


@boundary(lambda code: None)
def ptr_to_numpy(ptr: int, shape, npy_type: int) -> np.ndarray:
    """A NumPy array copied from known host memory (``npy_type``: NumPy C enum number)."""
    dtype = np.dtype(NPY_TYPES[int(npy_type)])
    count = int(np.prod(shape, dtype=np.int64))
    raw = _host.region(ptr, count * dtype.itemsize, "ptr_to_numpy", writable=False)
    return raw.copy().view(dtype).reshape(shape)
