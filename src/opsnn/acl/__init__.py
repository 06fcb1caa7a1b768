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

from .._core import platform
from .._core.status import AclError, AclnnError
from .._core.status import boundary as _boundary
from .._core.status import pop_recent_error as _pop_recent_error
from .._core.status import set_recent_error as _set_recent_error
from .._core.arrays import (aclBoolArray, aclFloatArray, aclIntArray, aclScalarList,  # noqa: F401 - handle types
                           aclTensorList)
from .._core.tensor import aclScalar, aclTensor  # noqa: F401 - the handle types, as acl.aclTensor
from . import rt, util
from ._meta import (create_bool_array, create_float_array, create_int_array,  # noqa: F401 - acl API
                    create_scalar, create_scalar_list, create_tensor, create_tensor_list, destroy_bool_array,
                    destroy_float_array, destroy_int_array, destroy_scalar, destroy_scalar_list,
                    destroy_tensor, destroy_tensor_list, get_bool_array_size, get_data_type,
                    get_float_array_size, get_format, get_int_array_size, get_raw_tensor_addr,
                    get_scalar_list_size, get_storage_shape, get_tensor_list_size, get_view_offset,
                    get_view_shape, get_view_strides, set_raw_tensor_addr)
from ._rt_state import run_queued as _run_queued
from .constants import *  # noqa: F403 - the CANN constant names are this module's API

_ret = _boundary(lambda code: code, invalid=AclError.INVALID_PARAM)


@_ret
def init(config_path: str | None = None) -> int:
    """aclInit. ``config_path``: None or "" (no configuration), or the path of CANN's JSON
    configuration file (dump, profiling), which must be a readable file; its content is not
    used. Returns ret (ACL_ERROR_REPEAT_INITIALIZE 100002 when already initialised, whatever the path,
    ACL_ERROR_INVALID_FILE 100003 for a path that is no readable file, as the acl return-code
    table says to check, 100000 when ``config_path`` is not a path)."""
    if config_path is not None and not isinstance(config_path, (str, os.PathLike)):
        raise AclnnError(AclError.INVALID_PARAM, f"init: configPath must be a file path (str) or "
                                                 f"None, got {type(config_path).__name__}")
    with rt.STATE.lock:
        # the repeat first: CANN's aclInit checks it before it reads the configuration
        if rt.STATE.initialized:
            raise AclnnError(AclError.REPEAT_INITIALIZE, "init: acl.init() was already called")
        if config_path not in (None, "") and not (os.path.isfile(config_path) and os.access(config_path, os.R_OK)):
            raise AclnnError(AclError.INVALID_FILE, f"init: configPath {os.fspath(config_path)!r} is not a "
                                                    "readable file (pass None or \"\" for no configuration)")
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
    return _pop_recent_error()


def get_soc_name() -> str | None:
    """aclrtGetSocName: the emulated SoC (see ``opsnn.set_soc`` / ``OPSNN_SOC``); None, the C
    API's NULL, when $OPSNN_SOC names no emulated SoC (the reason: ``get_recent_err_msg()``)."""
    try:
        return platform.current().name
    except ValueError as exc:
        _set_recent_error(f"aclrtGetSocName: {exc}")  # (it names $OPSNN_SOC)
        return None
