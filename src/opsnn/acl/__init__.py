"""``opsnn.acl``: a pyACL-shaped, host-emulated Ascend runtime.

Conventions (spec/pyacl_conventions.md): calls return ``(value, ret)`` with the status last, or
``ret`` alone; constructors return the object or None (a C NULL). Nothing raises: a failure's
text is fetched (and cleared) per thread with ``get_recent_err_msg()``.

    import opsnn.acl as acl
    ret = acl.init(); ret = acl.rt.set_device(0); stream, ret = acl.rt.create_stream()
    dev, ret = acl.rt.malloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    t = acl.create_tensor(shape, acl.ACL_FLOAT, strides, 0, acl.ACL_FORMAT_ND, shape, dev)
"""

from __future__ import annotations

import os

from .._core import checks, memory, platform
from .._core.status import AclError, AclnnError, boundary, pop_recent_error, set_recent_error
from .._core.tensor import aclScalar, aclTensor
from . import rt, util
from ._rt_state import run_queued as _run_queued
from .constants import *  # noqa: F403 - the CANN constant names are this module's API

_ret = boundary(lambda code: code, invalid=AclError.INVALID_PARAM)
_null = boundary(lambda code: None, invalid=AclError.INVALID_PARAM)


@_ret
def init(config_path: str | None = None) -> int:
    """aclInit. ``config_path``: None or "" (no configuration), or the path of CANN's JSON
    configuration file (dump, profiling), which must be a readable file; its content is not
    used. Returns ret (ACL_ERROR_REPEAT_INITIALIZE 100002 when already initialised,
    ACL_ERROR_INVALID_FILE 100003 for a path that is no readable file, as the acl return-code
    table says to check, 100000 when ``config_path`` is not a path)."""
    if config_path is not None and not isinstance(config_path, (str, os.PathLike)):
        raise AclnnError(AclError.INVALID_PARAM, f"init: configPath must be a file path (str) or "
                                                 f"None, got {type(config_path).__name__}")
    if config_path not in (None, "") and not (os.path.isfile(config_path) and os.access(config_path, os.R_OK)):
        raise AclnnError(AclError.INVALID_FILE, f"init: configPath {os.fspath(config_path)!r} is not a "
                                                "readable file (pass None or \"\" for no configuration)")
    with rt.STATE.lock:
        if rt.STATE.initialized:
            raise AclnnError(AclError.REPEAT_INITIALIZE, "init: acl.init() was already called")
        rt.STATE.initialized = True
    return 0


@_ret
def finalize() -> int:
    """aclFinalize: the work still queued on every stream runs (nothing is dropped), then streams
    are dropped and devices reset; device memory stays allocated until freed (so leaks stay
    visible). Returns ret (100037 when not initialised; 500003 when a queued task failed: the
    runtime is finalized all the same and the message names the task)."""
    with rt.STATE.lock:
        if not rt.STATE.initialized:
            raise AclnnError(AclError.REPEAT_FINALIZE, "finalize: acl is not initialised")
        rt.STATE.initialized = False
        rt.STATE.device_refs.clear()
        rt.STATE.contexts.clear()
        streams = rt.STATE.reset_streams()  # closed: later launches are refused, not lost
    failures = _run_queued(streams)
    if failures:
        raise AclnnError(AclError.RT_FAILURE, "finalize: the runtime was finalized, but queued work "
                                              "failed: " + "; ".join(failures))
    return 0


def get_recent_err_msg() -> str | None:
    """aclGetRecentErrMsg: the calling thread's last failure text, then cleared (None if none)."""
    return pop_recent_error()


def get_soc_name() -> str | None:
    """aclrtGetSocName: the emulated SoC (see ``opsnn.set_soc`` / ``OPSNN_SOC``); None, the C
    API's NULL, when $OPSNN_SOC names no emulated SoC (the reason: ``get_recent_err_msg()``)."""
    try:
        return platform.current().name
    except ValueError as exc:
        set_recent_error(f"aclrtGetSocName: {exc}")  # (it names $OPSNN_SOC)
        return None


@_null
def create_tensor(view_dims, data_type, stride, offset, fmt, storage_dims, tensor_data) -> aclTensor:
    """aclCreateTensor: a view of device memory.

    Args:
        view_dims: view shape (0-8 dims are usable by the operators; more are refused there).
        data_type: aclDataType (``ACL_FLOAT``...).
        stride: strides of the view, in elements (non-negative).
        offset: element offset of the view's first element in the storage.
        fmt: aclFormat; carried, not checked against the rank (DECISION 13).
        storage_dims: shape of the storage the address points to.
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
