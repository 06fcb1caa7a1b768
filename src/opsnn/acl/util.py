"""``acl.util``: host pointer helpers, pyACL-shaped.

The returned pointers are the objects' real addresses, known while the object lives: opsnn keeps
no reference to it (pyACL asks callers to keep the object alive), and forgets the pointer when
the object dies, so a later use is refused (``bytes_to_ptr(a.tobytes())`` used after the call:
0 / None and a message), never a read of freed memory. ``ptr_to_bytes`` and
``ptr_to_numpy`` read only memory opsnn knows (malloc_host or registered), never arbitrary
addresses. Errors return 0 / None and leave the message in ``acl.get_recent_err_msg()``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._core.checks import is_c_int as _is_c_int
from .._core.status import AclError, AclnnError
from .._core.status import boundary as _boundary
from . import _host

# acl.util.ptr_to_numpy type codes (the NumPy C enum numbers pyACL uses)
NPY_TYPES = {0: np.bool_, 1: np.int8, 2: np.uint8, 3: np.int16, 4: np.uint16, 5: np.int32,
             6: np.uint32, 7: np.int64, 8: np.uint64, 11: np.float32, 12: np.float64, 23: np.float16}


@_boundary(lambda code: 0, invalid=AclError.INVALID_PARAM)
def numpy_to_ptr(array: np.ndarray) -> int:
    """Address of a C-contiguous array's data (an int), valid while the caller keeps the array.
    A non-contiguous array is copied first, with a RuntimeWarning (pyACL warns there too): writes
    through the pointer, such as a device-to-host memcpy, land in that private copy, not in the
    array. A list or tuple of numbers is taken too (NumPy's conversion of it, kept while the list
    lives). 0, with the message in ``get_recent_err_msg()``, for anything else: None, a str or
    bytes (``bytes_to_ptr`` takes bytes), an object array."""
    given = isinstance(array, np.ndarray)
    original = array
    if not given:
        try:
            array = np.asarray(array)
        except Exception as exc:  # noqa: BLE001 - whatever the object's conversion raises
            raise AclnnError(AclError.INVALID_PARAM, f"numpy_to_ptr: {type(array).__name__} is not "
                                                     f"an array: {exc}") from None
    # np.asarray wraps None, or any object, as an object array, and reads a str or bytes (or a list
    # of them) as text: none is a list of numbers
    if not given and (array.dtype.hasobject or array.dtype.kind in "US"):
        raise AclnnError(AclError.INVALID_PARAM, f"numpy_to_ptr: expected a NumPy array (or a list of "
                                                 f"numbers), got {type(original).__name__}")
    _host.refuse_object_array(array, "numpy_to_ptr")
    if given and array.flags.c_contiguous:  # valid while the caller keeps the array
        return _host.register_array(array)
    if given:  # a private copy, kept while the array it views lives, as its own bytes would be
        warnings.warn(f"numpy_to_ptr: the array (shape {array.shape}, strides {array.strides}) is not "
                      "C-contiguous, so the pointer is to a private copy: what is written through it "
                      "does not reach the array; pass np.ascontiguousarray(array) and keep that array",
                      RuntimeWarning, stacklevel=3)
        return _host.register_array(array, np.ascontiguousarray(array).reshape(-1).view(np.uint8))
    return _host.register_object(original, array.reshape(-1).view(np.uint8))  # made of a list


@_boundary(lambda code: 0, invalid=AclError.INVALID_PARAM)
def bytes_to_ptr(data) -> int:
    """Address of a bytes / bytearray object's buffer (read-only for bytes), known while the
    caller keeps the object alive (pyACL: "keep the bytes object alive")."""
    return _host.register_object(data, _host.as_bytes(data, "bytes_to_ptr", writable=False,
                                                      expected="bytes, a bytearray or a NumPy array"))


@_boundary(lambda code: None, invalid=AclError.INVALID_PARAM)
def ptr_to_bytes(ptr: int, size: int) -> bytes:
    """Copy ``size`` bytes (>= 0) of known host memory at ``ptr`` into a bytes object."""
    nbytes = _count(size, "size", "ptr_to_bytes")
    return _host.region(ptr, nbytes, "ptr_to_bytes", writable=False).tobytes()


@_boundary(lambda code: None, invalid=AclError.INVALID_PARAM)
def ptr_to_numpy(ptr: int, shape, npy_type: int) -> np.ndarray:
    """A NumPy array over ``shape`` elements of known host memory at ``ptr`` (``npy_type``: the
    NumPy C enum number), sharing it, as pyACL's does (PyArray_SimpleNewFromData): writes through
    the array reach the memory, later copies into the memory show in the array. Read-only for
    bytes_to_ptr memory. Like pyACL's, it does not own the memory: after free_host, ``.copy()``
    what is still needed (opsnn keeps the bytes alive, so a late use reads stale data, never
    faults)."""
    code = _count(npy_type, "npy_type", "ptr_to_numpy")
    if code not in NPY_TYPES:
        raise AclnnError(AclError.INVALID_PARAM, f"ptr_to_numpy: npy_type {code} is not one of "
                                                 f"{sorted(NPY_TYPES)}")
    dtype = np.dtype(NPY_TYPES[code])
    if _is_c_int(shape):
        shape = (shape,)
    if not isinstance(shape, (list, tuple, np.ndarray)) or (isinstance(shape, np.ndarray) and shape.ndim != 1):
        raise AclnnError(AclError.INVALID_PARAM, f"ptr_to_numpy: shape must be a list of integers, "
                                                 f"got {type(shape).__name__}")
    dims = tuple(_count(d, "shape entries", "ptr_to_numpy") for d in shape)
    raw = _host.region(ptr, math.prod(dims) * dtype.itemsize, "ptr_to_numpy", writable=False)
    try:
        return raw.view(dtype).reshape(dims)
    except ValueError as exc:  # more dims than NumPy allows, or one past its index type (when empty)
        raise AclnnError(AclError.INVALID_PARAM, f"ptr_to_numpy: NumPy cannot make an array of shape "
                                                 f"{list(dims)}: {exc}") from None


def _count(value, what: str, call: str) -> int:
    """A non-negative Python int (products of them cannot wrap, unlike NumPy int64)."""
    if not _is_c_int(value) or value < 0:
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: {what} must be an integer >= 0, got {value!r}")
    return int(value)
