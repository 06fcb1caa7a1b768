"""opbase's acl_meta.h calls, pyACL-shaped: the aclTensor and aclScalar handles the operators
take, created and destroyed (``acl.create_tensor`` ...; the module ``opsnn.acl`` re-exports them).

Constructors return the object or None (a C NULL); the other calls return ``ret`` or
``(value, ret)``; nothing raises (the boundary helpers of ``opsnn._core.status``)."""

from __future__ import annotations

from .._core import checks, memory
from .._core.status import AclError, AclnnError, boundary
from .._core.tensor import aclScalar, aclTensor

_ret = boundary(lambda code: code, invalid=AclError.INVALID_PARAM)
_null = boundary(lambda code: None, invalid=AclError.INVALID_PARAM)


@_null
def create_tensor(view_dims, data_type, stride, offset, fmt, storage_dims, tensor_data) -> aclTensor:
    """aclCreateTensor: a view of device memory.

    Args:
        view_dims: view shape (0-8 dims are usable by the operators; more are refused there);
            None, a null pointer, is a 0-d view (opbase reads a null viewDims, whose count
            must then be 0, as no dims).
        data_type: aclDataType (``ACL_FLOAT``...).
        stride: strides of the view, in elements (non-negative); None, a null pointer, gives
            the view's row-major strides as opbase computes them (plain products of the inner
            dims: ``[2, 3]`` -> ``[3, 1]``, ``[3, 0]`` -> ``[0, 1]``).
        offset: element offset of the view's first element in the storage.
        fmt: aclFormat; carried, not checked against the rank (DECISION 13).
        storage_dims: shape of the storage the address points to; None, a null pointer, is a
            0-d storage (one element), as opbase reads it, so a view reaching past element 0
            is then refused.
        tensor_data: device address from ``acl.rt.malloc`` (or inside such an allocation);
            None or 0, the null pointer, for a view with no elements (as C callers pass it).

    Returns:
        The aclTensor, or None when an argument is invalid or the view reaches outside the
        storage or the storage outside its allocation (message in ``get_recent_err_msg()``).
    """
    with _named("create_tensor"):
        return aclTensor(view_dims, data_type, stride, offset, fmt, storage_dims,
                         0 if tensor_data is None else tensor_data)


@_ret
def destroy_tensor(tensor) -> int:
    """aclDestroyTensor. Returns ret: 0, also for a null pointer (None or 0), which has nothing
    to destroy (as opbase's aclDestroyTensor answers nullptr); 100000 for a non-tensor or a
    second destroy."""
    _destroy(tensor, aclTensor, "destroy_tensor")
    return 0


@_null
def create_scalar(value, data_type) -> aclScalar:
    """aclCreateScalar: ``value`` stored as ``data_type`` (C conversion: float->int truncates,
    float overflow -> inf). Returns the aclScalar, or None when the value cannot be stored."""
    with _named("create_scalar"):
        return aclScalar(value, data_type)


@_ret
def destroy_scalar(scalar) -> int:
    """aclDestroyScalar. Returns ret: 0, also for a null pointer (None or 0), as
    ``destroy_tensor``; 100000 for a non-scalar or a second destroy."""
    _destroy(scalar, aclScalar, "destroy_scalar")
    return 0


class _named:
    """Context manager: a refusal from the aclTensor / aclScalar constructors (which the
    Pythonic API shares, wording its own prefix) leaves prefixed with the call's name, as the
    runtime's other messages are."""

    def __init__(self, call: str):
        self.call = call

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if isinstance(exc, AclnnError) and not exc.message.startswith(self.call + ":"):
            raise AclnnError(exc.status, f"{self.call}: {exc.message}") from None
        return False


def _destroy(obj, kind, call: str) -> None:
    if checks.is_null(obj):  # like free(NULL): opbase acl_op_api.cpp returns OK for nullptr
        return
    if not isinstance(obj, kind):
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: expected an {kind.__name__}, got "
                                                 f"{type(obj).__name__}")
    if obj.destroyed:
        raise AclnnError(AclError.INVALID_PARAM, f"{call}: the {kind.__name__} was already destroyed")
    obj.destroyed = True
    memory.released()
