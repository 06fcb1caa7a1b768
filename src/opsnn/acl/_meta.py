"""opbase's acl_meta.h calls, pyACL-shaped (the module ``opsnn.acl`` re-exports them): the
aclTensor and aclScalar handles the operators take, created, queried and destroyed
(``acl.create_tensor``, ``acl.get_view_shape`` ...), and the arrays and lists no opsnn operator
takes (``acl.create_int_array`` ...), there so that a ported C program's calls run.

Constructors return the object or None (a C NULL); the other calls return ``ret`` or
``(value, ret)``; nothing raises (the boundary helpers of ``opsnn._core.status``)."""

from __future__ import annotations

import contextlib

import numpy as np

from .._core import checks, dtypes, forksafe, memory
from .._core.arrays import HandleList, aclBoolArray, aclFloatArray, aclIntArray, aclScalarList, aclTensorList
from .._core.dtypes import DataType
from .._core.status import AclError, AclnnError, Status, boundary
from .._core.tensor import aclScalar, aclTensor
from . import _host
from ._rt_state import named as _named  # (a refusal from the handle and container classes, prefixed once)

_ret = boundary(lambda code: code, invalid=AclError.INVALID_PARAM)
_null = boundary(lambda code: None, invalid=AclError.INVALID_PARAM)


@_null
def create_tensor(view_dims, data_type, stride, offset, fmt, storage_dims, tensor_data) -> aclTensor:
    """aclCreateTensor: a view of device memory.

    Args:
        view_dims: view shape (0-8 dims are usable by the operators; more are refused there);
            None or 0, a null pointer (pyACL passes pointers as ints), is a 0-d view (opbase
            reads a null viewDims, whose count must then be 0, as no dims). Every dim, stride, storage dim and the offset is an
            int64_t in C: each must lie in [0, 2**63 - 1].
        data_type: aclDataType (``ACL_FLOAT``...).
        stride: strides of the view, in elements (non-negative); None or 0, a null pointer, gives
            the view's row-major strides as opbase computes them (plain products of the inner
            dims: ``[2, 3]`` -> ``[3, 1]``, ``[3, 0]`` -> ``[0, 1]``), refused where a product
            passes 2**63 - 1 (opbase's int64 product would wrap).
        offset: element offset of the view's first element in the storage.
        fmt: aclFormat, ``ACL_FORMAT_UNDEFINED`` (-1) included, as opbase's aclCreateTensor
            takes it; carried, not checked against the rank (DECISION 13); an int that is no
            aclFormat value is refused (None).
        storage_dims: shape of the storage the address points to; None or 0, a null pointer,
            is a 0-d storage (one element), as opbase reads it, so a view reaching past element
            0 is then refused.
        tensor_data: device address from ``acl.rt.malloc`` (or inside such an allocation);
            None or 0, the null pointer, for a view with no elements (as C callers pass it), or
            for a tensor with no memory yet, as opbase stores any pointer: phase 1 takes it, a
            launch refuses it (161002) until aclSetInputTensorAddr / aclSetOutputTensorAddr /
            ``set_raw_tensor_addr`` gives it an address (CANN's aclSetInputTensorAddr sample).

    Returns:
        The aclTensor, or None when an argument is invalid or the view reaches outside the
        storage or the storage outside its allocation (under a null tensorData: beyond the
        emulated device's 64 GiB), or a dims list's C copy would exceed the host's RAM (message
        in ``get_recent_err_msg()``, naming the entry).
    """
    with _named("create_tensor"):
        return aclTensor(view_dims, data_type, stride, offset, fmt, storage_dims,
                         0 if checks.is_null(tensor_data) else tensor_data)


@_ret
def destroy_tensor(tensor) -> int:
    """aclDestroyTensor. Returns ret: 0, also for a null pointer (None or 0), which has nothing
    to destroy (as opbase's aclDestroyTensor answers nullptr); 100000 for a non-tensor or a
    second destroy. Of two destroys racing on threads (of one handle, or of a list and a handle
    in it: every acl_meta.h destroy), exactly one destroys it."""
    _destroy(tensor, aclTensor, "destroy_tensor")
    return 0


@_null
def create_scalar(value, data_type) -> aclScalar:
    """aclCreateScalar: ``value`` stored as ``data_type`` (C conversion: float->int truncates,
    float overflow -> inf). Returns the aclScalar, or None when the value cannot be stored.

    ``value`` is the number itself (a Python bool, int, float or complex, a NumPy scalar, a 0-d
    NumPy array), not its address as C's ``aclCreateScalar(&value, ACL_FLOAT)`` takes: an int
    (or a 0-d array of one) that is a live host address (``acl.util.numpy_to_ptr`` /
    ``bytes_to_ptr``, ``acl.rt.malloc_host``) or device address (``acl.rt.malloc``) is refused,
    for any dtype, with the call to write instead, in ``data_type`` (a port line by line had
    stored the pointer as the slope)."""
    with _named("create_scalar"):
        _refuse_address(value, data_type)
        return aclScalar(value, data_type)


def _refuse_address(value, data_type) -> None:
    """AclnnError 100000 where ``value`` is an int inside live host or device memory opsnn
    handed out (the registries tell it in a lookup; ints below 64 KiB, where no address lies,
    are not looked up), saying what to pass: the number the host bytes there hold as
    ``data_type``, where they can be read, written as Python reads it (``float('nan')``), else
    an example of ``data_type`` (ACL_FLOAT's where it is no scalar dtype). A 0-d array is its
    item here too, as aclScalar takes it (a regression breaker: one holding an address was
    stored)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if not checks.is_c_int(value) or value < 1 << 16:
        return
    addr = int(value)
    if memory.DEVICE.find(addr) is not None:
        where = "device memory (acl.rt.malloc)"
    elif memory.HOST.find(addr) is not None:
        where = "pinned host memory (acl.rt.malloc_host)"
    elif _host.known(addr):
        where = "host memory (acl.util.numpy_to_ptr / bytes_to_ptr)"
    else:
        return
    how = ", as in acl.create_scalar(0.01, acl.ACL_FLOAT)"
    if checks.is_c_int(data_type) and data_type in dtypes.SCALAR:
        dtype = DataType(int(data_type))
        example = "True" if dtype == DataType.BOOL else "1" if dtype in dtypes.INTEGRAL else "0.01"
        how = f", as in acl.create_scalar({example}, acl.{dtype.acl_name})"
        np_dtype, held = dtypes.to_numpy(dtype), None
        if not where.startswith("device"):  # (device bytes are not read from the host)
            with contextlib.suppress(AclnnError):  # fewer bytes there than the dtype's
                held = _literal(np.frombuffer(_host.lookup(addr, np_dtype.itemsize, "").tobytes(), np_dtype)[0])
        if held is not None:
            count = f"{np_dtype.itemsize} bytes there hold" if np_dtype.itemsize > 1 else "1 byte there holds"
            how = f": acl.create_scalar({held}, acl.{dtype.acl_name}) ({held} is what the {count} as {dtype.acl_name})"
    raise AclnnError(AclError.INVALID_PARAM,
                     f"value {addr:#x} is an address of {where}, not a number: create_scalar takes the value "
                     f"itself, not its address as aclCreateScalar does; pass the number{how}")


def _literal(number) -> str:
    """``number`` (a NumPy scalar) as Python source: NaN and infinities as ``float('nan')``,
    ``float('inf')``, ``-float('inf')`` (str gives ``nan`` / ``inf``), a complex one's parts so."""
    if isinstance(number, np.complexfloating):
        if np.isfinite(number):
            return str(number)
        return f"complex({_literal(number.real)}, {_literal(number.imag)})"
    if isinstance(number, (np.bool_, np.integer)) or np.isfinite(float(number)):
        return str(number)
    return "float('nan')" if np.isnan(float(number)) else f"{'-' if number < 0 else ''}float('inf')"


@_ret
def destroy_scalar(scalar) -> int:
    """aclDestroyScalar. Returns ret: 0, also for a null pointer (None or 0), as
    ``destroy_tensor``; 100000 for a non-scalar or a second destroy."""
    _destroy(scalar, aclScalar, "destroy_scalar")
    return 0


# The arrays and lists: no opsnn operator takes one; they are here so that a ported C program's
# calls run. Python's sequence carries the count C passes as ``size``.
@_null
def create_int_array(value) -> aclIntArray:
    """aclCreateIntArray: a copy of ``value`` (a list, tuple, range or 1-D NumPy array) as int64,
    each element stored as ``create_scalar`` stores an ACL_INT64 value (a float truncates toward
    zero; NaN, inf and values outside int64 are refused). None or 0, a null pointer, gives an
    empty array, as opbase makes one for a null value. Returns the aclIntArray, or None (the
    message names the element, a long value shortened); None too when the copy, 8 bytes an
    element, would exceed the host's RAM (``memory.host_total``), decided from the count before
    an element is read (``range(10**20)``), as opbase's constructor whose ``new`` fails returns
    nullptr."""
    with _named("create_int_array"):
        return aclIntArray(value)


@_null
def create_float_array(value) -> aclFloatArray:
    """aclCreateFloatArray: a copy of ``value`` as C floats (float32), each element stored as
    ``create_scalar`` stores an ACL_FLOAT value (rounded to nearest, past float32's range +-inf,
    NaN kept). None or 0 gives an empty array. Returns the aclFloatArray, or None (as
    ``create_int_array``; 4 bytes an element)."""
    with _named("create_float_array"):
        return aclFloatArray(value)


@_null
def create_bool_array(value) -> aclBoolArray:
    """aclCreateBoolArray: a copy of ``value`` as C bools, each element stored as ``create_scalar``
    stores an ACL_BOOL value (nonzero is True). None or 0 gives an empty array. Returns the
    aclBoolArray, or None (as ``create_int_array``; 1 byte an element)."""
    with _named("create_bool_array"):
        return aclBoolArray(value)


@_null
def create_tensor_list(value) -> aclTensorList:
    """aclCreateTensorList: a copy of ``value``, a list or tuple of aclTensor handles (None or 0,
    a null element, is kept as None), not of the tensors: ``destroy_tensor_list`` destroys them.
    None or 0 (a null pointer) gives an empty list. Returns the aclTensorList, or None for an
    element that is no aclTensor, or one already destroyed (C would copy the dangling pointer),
    or a copy beyond the host's RAM (8 bytes a handle, as ``create_int_array``). Atomic with
    respect to the acl_meta.h destroys on other threads: a destroy of an element lands wholly
    before the list is made (None) or after (the list holds it, and its destroy is refused)."""
    return _handle_list(aclTensorList, value, "create_tensor_list")


@_null
def create_scalar_list(value) -> aclScalarList:
    """aclCreateScalarList: as ``create_tensor_list``, of aclScalar handles."""
    return _handle_list(aclScalarList, value, "create_scalar_list")


def _handle_list(kind, value, call: str):
    # the elements' destroyed flags are read under the lock the destroys set them under, so a
    # list is never made from a handle whose destroy had begun (unlocked, a destroy on another
    # thread could land between the checks of two elements)
    with _named(call), _DESTROYED_LOCK:
        made = kind(value)
        # the lock is reentrant: code this thread ran while the elements were read (a __del__
        # the cycle collector ran, a signal handler) may have destroyed one after its check
        for index, handle in enumerate(made.values):
            made.element(handle, index)
        return made


@_ret
def destroy_int_array(array) -> int:
    """aclDestroyIntArray. Returns ret: 0, also for a null pointer; 100000 for an object that is
    no aclIntArray or a second destroy (as ``destroy_tensor``)."""
    _destroy(array, aclIntArray, "destroy_int_array")
    return 0


@_ret
def destroy_float_array(array) -> int:
    """aclDestroyFloatArray. Returns ret as ``destroy_int_array``."""
    _destroy(array, aclFloatArray, "destroy_float_array")
    return 0


@_ret
def destroy_bool_array(array) -> int:
    """aclDestroyBoolArray. Returns ret as ``destroy_int_array``."""
    _destroy(array, aclBoolArray, "destroy_bool_array")
    return 0


@_ret
def destroy_tensor_list(tensor_list) -> int:
    """aclDestroyTensorList: the list and every aclTensor in it, as opbase's destroys each
    element (so a tensor in a destroyed list must not be destroyed again: 100000 then). Returns
    ret: 0, also for a null pointer; 100000, with nothing destroyed, for an object that is no
    aclTensorList, a second destroy, or an element destroyed since the list was made or listed
    twice (C would free it a second time)."""
    _destroy(tensor_list, aclTensorList, "destroy_tensor_list")
    return 0


@_ret
def destroy_scalar_list(scalar_list) -> int:
    """aclDestroyScalarList: the list and every aclScalar in it; ret as ``destroy_tensor_list``."""
    _destroy(scalar_list, aclScalarList, "destroy_scalar_list")
    return 0


# The queries are aclnnStatus calls: opbase answers a null handle with ACLNN_ERR_PARAM_NULLPTR.
# A handle of another kind, or a destroyed one, C cannot tell from a live one (it reads what the
# pointer points at); opsnn answers it as the operators answer a wrong or destroyed handle,
# ACLNN_ERR_PARAM_INVALID, and so arguments that do not bind. The value is None when ret is not
# 0: C leaves the output unwritten.
_got = boundary(lambda code: (None, code))


@_got
def get_view_shape(tensor) -> tuple[list[int] | None, int]:
    """aclGetViewShape: ``(dims, ret)``, the view shape (a list of ints; [] for a 0-d tensor).
    ret 161001 for a null tensor (None or 0), as opbase answers nullptr; 161002 for an object
    that is no aclTensor, or one destroyed; the value is None then."""
    return list(_live(tensor, aclTensor, "get_view_shape").shape), 0


@_got
def get_storage_shape(tensor) -> tuple[list[int] | None, int]:
    """aclGetStorageShape: ``(dims, ret)``, the storage shape create_tensor was given (a list of
    ints). Statuses as ``get_view_shape``'s."""
    return list(_live(tensor, aclTensor, "get_storage_shape").storage_shape), 0


@_got
def get_view_strides(tensor) -> tuple[list[int] | None, int]:
    """aclGetViewStrides: ``(strides, ret)``, the view's strides in elements (a list of ints;
    those opbase computes for a null stride). Statuses as ``get_view_shape``'s."""
    return list(_live(tensor, aclTensor, "get_view_strides").strides), 0


@_got
def get_view_offset(tensor) -> tuple[int | None, int]:
    """aclGetViewOffset: ``(offset, ret)``, the element offset of the view's first element in
    the storage. Statuses as ``get_view_shape``'s."""
    return _live(tensor, aclTensor, "get_view_offset").offset, 0


@_got
def get_format(tensor) -> tuple[int | None, int]:
    """aclGetFormat: ``(format, ret)``, the aclFormat create_tensor was given (an int,
    ``ACL_FORMAT_ND`` ...). Statuses as ``get_view_shape``'s."""
    return int(_live(tensor, aclTensor, "get_format").format), 0


@_got
def get_data_type(tensor) -> tuple[int | None, int]:
    """aclGetDataType: ``(data_type, ret)``, the aclDataType (an int, ``ACL_FLOAT`` ...).
    Statuses as ``get_view_shape``'s."""
    return int(_live(tensor, aclTensor, "get_data_type").dtype), 0


@_got
def get_int_array_size(array) -> tuple[int | None, int]:
    """aclGetIntArraySize: ``(size, ret)``, the element count. ret 161001 for a null array, as
    opbase; 161002 for an object that is no aclIntArray, or one destroyed; the value None then."""
    return _live(array, aclIntArray, "get_int_array_size", "array").size, 0


@_got
def get_float_array_size(array) -> tuple[int | None, int]:
    """aclGetFloatArraySize: ``(size, ret)``; statuses as ``get_int_array_size``'s."""
    return _live(array, aclFloatArray, "get_float_array_size", "array").size, 0


@_got
def get_bool_array_size(array) -> tuple[int | None, int]:
    """aclGetBoolArraySize: ``(size, ret)``; statuses as ``get_int_array_size``'s."""
    return _live(array, aclBoolArray, "get_bool_array_size", "array").size, 0


@_got
def get_tensor_list_size(tensor_list) -> tuple[int | None, int]:
    """aclGetTensorListSize: ``(size, ret)``, null elements counted; statuses as
    ``get_int_array_size``'s."""
    return _live(tensor_list, aclTensorList, "get_tensor_list_size", "tensorList").size, 0


@_got
def get_scalar_list_size(scalar_list) -> tuple[int | None, int]:
    """aclGetScalarListSize: ``(size, ret)``, null elements counted; statuses as
    ``get_int_array_size``'s."""
    return _live(scalar_list, aclScalarList, "get_scalar_list_size", "scalarList").size, 0


# aclSetRawTensorAddr / aclGetRawTensorAddr are aclnnStatus calls too, answering as the queries
_status = boundary(lambda code: code)


@_status
def set_raw_tensor_addr(tensor, addr) -> int:
    """aclSetRawTensorAddr: ``tensor`` now views the storage starting at device address ``addr``
    (an int from ``acl.rt.malloc``; None or 0 is the null pointer), as opbase's, which sets the
    tensor's storage address (aclTensor::SetStorageAddr, what aclSetInputTensorAddr does too):
    meant for reusing a tensor, its shape, strides and format kept, over new memory.

    Returns ret: 0; 161001 for a null tensor (None or 0), the one failure CANN documents;
    161002 for an object that is no aclTensor, one destroyed (as the queries answer them), or an
    ``addr`` that is not an int in [0, 2**64). A refused call changes nothing. As for
    aclSetInputTensorAddr (and ``create_tensor``), whether ``addr`` holds the storage is checked
    where the tensor is used (phase 1, a launch: 161002 there), and the 32-byte alignment CANN
    asks for (undefined behaviour otherwise) is not checked.

    CANN supports the call before a phase 1 or after a phase 2, not between them; opbase does
    not check that, nor does opsnn: the address lives in the aclTensor, so an executor made
    with it launches with the new address, checked then as above, out's overlap with the inputs
    included. Sources: the aclSetRawTensorAddr documentation and opbase's implementation."""
    call = "set_raw_tensor_addr"
    _live(tensor, aclTensor, call).set_storage_addr(checks.device_addr(call, addr))
    return 0


@_got
def get_raw_tensor_addr(tensor) -> tuple[int | None, int]:
    """aclGetRawTensorAddr: ``(addr, ret)``, the device address of the tensor's storage start
    (an int: what ``create_tensor`` was given, or the last ``set_raw_tensor_addr`` /
    aclSetInputTensorAddr / aclSetOutputTensorAddr; 0 for a null one). Statuses as
    ``get_view_shape``'s: 161001 for a null tensor, as CANN documents (C's null ``addr`` output
    pointer, its other 161001, has no Python form), 161002 for an object that is no aclTensor or
    one destroyed; the value None then. Sources: the aclGetRawTensorAddr documentation and
    opbase's implementation (the tensor's storage address)."""
    return _live(tensor, aclTensor, "get_raw_tensor_addr").addr, 0


def _live(handle, kind, call: str, arg: str = "tensor"):
    """``handle`` if it is a live ``kind`` (the statuses ``_got`` describes), else AclnnError."""
    if checks.is_null(handle):
        raise AclnnError(Status.ERR_PARAM_NULLPTR, f"{call}: {arg} must be an {kind.__name__}, got a "
                                                   f"null pointer ({handle!r})")
    if not isinstance(handle, kind):
        raise AclnnError(Status.ERR_PARAM_INVALID, f"{call}: {arg} must be an {kind.__name__}, got "
                                                   f"{type(handle).__name__}")
    if handle.destroyed:
        raise AclnnError(Status.ERR_PARAM_INVALID, f"{call}: {arg} is an {kind.__name__} that was "
                                                   "already destroyed")
    return handle


# Every acl_meta.h destroy checks and sets the ``destroyed`` flags under this one lock, so two
# threads destroying one handle, or a list and a handle in it, cannot both see it live: exactly
# one destroys it (a breaker's: both got 0 in ~70 of 3000 races); the list constructors read
# their elements' flags under it too (``_handle_list``). Reentrant: code the holder runs may
# destroy a handle on the same thread (a wrapper's __del__ run by the cycle collector at an
# allocation inside a list's construction; a plain lock hung there, a breaker's).
_DESTROYED_LOCK = forksafe.rlock()


def _destroy(obj, kind, call: str) -> None:
    if checks.is_null(obj):  # like free(NULL): opbase acl_op_api.cpp returns OK for nullptr
        return
    if not isinstance(obj, kind):
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: expected an {kind.__name__}, got "
                                                 f"{type(obj).__name__}")
    with _DESTROYED_LOCK:
        if obj.destroyed:
            raise AclnnError(AclError.INVALID_PARAM, f"{call}: the {kind.__name__} was already destroyed")
        # claimed before its elements are read: the lock is reentrant, and code this thread runs
        # meanwhile (a __del__ the cycle collector runs, a signal handler) then finds it
        # destroyed, as another thread does (a breaker: such a destroy of the same list had
        # returned 0 too); the elements are read twice for the same reason (none is then
        # destroyed by both)
        obj.destroyed = True
        try:
            with _named(call):  # a list destroys its elements too, as opbase's aclDestroyTensorList
                owned = obj.owned() if isinstance(obj, HandleList) else ()
                if owned:
                    obj.owned()
        except BaseException:
            obj.destroyed = False
            raise
        for handle in owned:
            handle.destroyed = True
    memory.released()
