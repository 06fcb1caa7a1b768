"""aclnnStatus codes, the AclnnError exception and the per-thread recent-error message.

Values are CANN's (opbase ``op_errno.h``; ops-nn ``docs/*/context/aclnn_return_code*.md``).
Inside opsnn every failure is an ``AclnnError``; only the aclnn/acl boundary turns it into a
status code and stores its text for ``acl.get_recent_err_msg()``.
"""

from __future__ import annotations

import enum
import threading


class Status(enum.IntEnum):
    """aclnnStatus values (CANN ``ACLNN_*`` names without the prefix)."""

    SUCCESS = 0
    ERR_PARAM_NULLPTR = 161001
    ERR_PARAM_INVALID = 161002
    ERR_RUNTIME_ERROR = 361001
    ERR_INNER = 561000
    ERR_INNER_INFERSHAPE_ERROR = 561001
    ERR_INNER_TILING_ERROR = 561002
    ERR_INNER_FIND_KERNEL_ERROR = 561003
    ERR_INNER_CREATE_EXECUTOR = 561101
    ERR_INNER_NOT_TRANS_EXECUTOR = 561102
    ERR_INNER_NULLPTR = 561103
    # the rest of CANN's table: opsnn never returns these (they report GE's operator-info JSON and
    # kernel packages, which an emulation has not), but ported code compares against their names
    ERR_INNER_WRONG_ATTR_INFO_SIZE = 561104
    ERR_INNER_KEY_CONFILICT = 561105  # CANN's spelling
    ERR_INNER_INVALID_IMPL_MODE = 561106
    ERR_INNER_OPP_PATH_NOT_FOUND = 561107
    ERR_INNER_LOAD_JSON_FAILED = 561108
    ERR_INNER_JSON_VALUE_NOT_FOUND = 561109
    ERR_INNER_JSON_FORMAT_INVALID = 561110
    ERR_INNER_JSON_DTYPE_INVALID = 561111
    ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND = 561112
    ERR_INNER_OP_FILE_INVALID = 561113
    ERR_INNER_ATTR_NUM_OUT_OF_BOUND = 561114
    ERR_INNER_ATTR_LEN_NOT_ENOUGH = 561115
    ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE = 561116
    ERR_INNER_INPUT_JSON_IS_NULL = 561117
    ERR_INNER_STATIC_WORKSPACE_INVALID = 561118
    ERR_INNER_STATIC_BLOCK_DIM_INVALID = 561119

    @property
    def acl_name(self) -> str:
        """The CANN constant name, e.g. ``ACLNN_ERR_PARAM_INVALID``."""
        return "ACLNN_" + self.name


class AclError(enum.IntEnum):
    """AscendCL runtime ``aclError`` values (``acl_base.h``): the ones the emulated runtime returns,
    and the general ones ported code names (unsupported feature, unaligned address...)."""

    SUCCESS = 0
    INVALID_PARAM = 100000
    UNINITIALIZE = 100001
    REPEAT_INITIALIZE = 100002
    INVALID_FILE = 100003
    UNSUPPORTED_DATA_TYPE = 100026
    FORMAT_NOT_MATCH = 100027
    REPEAT_FINALIZE = 100037
    INVALID_OPP_PATH = 148049
    BAD_ALLOC = 200000
    API_NOT_SUPPORT = 200001
    INVALID_DEVICE = 200002
    MEMORY_ADDRESS_UNALIGNED = 200003
    RESOURCE_NOT_MATCH = 200004
    INVALID_RESOURCE_HANDLE = 200005
    FEATURE_UNSUPPORTED = 200006
    STORAGE_OVER_LIMIT = 300000
    RT_PARAM_INVALID = 107000
    RT_CONTEXT_NULL = 107002
    RT_EVENT_TIMESTAMP_INVALID = 107006
    RT_EVENT_TIMESTAMP_REVERSAL = 107007
    RT_INVALID_MEMORY_TYPE = 107016
    RT_FEATURE_NOT_SUPPORT = 207000
    INTERNAL_ERROR = 500000
    FAILURE = 500001
    GE_FAILURE = 500002
    RT_FAILURE = 500003
    DRV_FAILURE = 500004
    PROFILING_FAILURE = 500005
    RT_STREAM_SYNC_TIMEOUT = 507046
    RT_EVENT_SYNC_TIMEOUT = 507047

    @property
    def acl_name(self) -> str:
        if self.value == 0:
            return "ACL_SUCCESS"
        return "ACL_ERROR_" + self.name


def status_name(code: int) -> str:
    """Name of an aclnnStatus or aclError value, or ``'UNKNOWN'``."""
    for enum_type in (Status, AclError):
        try:
            return enum_type(code).acl_name
        except ValueError:
            continue
    return "UNKNOWN"


class AclnnError(Exception):
    """An operator or runtime call failed with a CANN status code.

    Attributes:
        status: the aclnnStatus (or aclError) value, e.g. 161002.
        message: the text ``acl.get_recent_err_msg()`` returns for the same failure.
    """

    def __init__(self, status: int, message: str):
        super().__init__(f"[{int(status)} {status_name(int(status))}] {message}")
        self.status = int(status)
        self.message = message

    def __reduce__(self):
        # pickled (a failure in a worker process): rebuilt without calling __init__, whose
        # parameters differ from ``args`` (the formatted text) here and in the subclasses
        return _restore, (type(self), self.args, self.__dict__)


def _restore(cls, args: tuple, state: dict) -> AclnnError:
    exc = cls.__new__(cls, *args)
    exc.args = args
    exc.__dict__.update(state)
    return exc


_recent = threading.local()


def set_recent_error(message: str) -> None:
    """Record the last failure's text for the calling thread (aclGetRecentErrMsg)."""
    _recent.message = message


def pop_recent_error() -> str | None:
    """Fetch and clear the calling thread's last failure text (None if there is none)."""
    message = getattr(_recent, "message", None)
    _recent.message = None
    return message


def warning_refused(where: str, exc: Warning) -> str:
    """The message of a call refused because the caller's warnings filter raised ``exc`` (a
    warning opsnn issued) as an error: both boundaries report it so."""
    return f"{where}: {type(exc).__name__} raised as an error by the warnings filter: {exc}"


def boundary(failure, *, fallback: int = Status.ERR_INNER, invalid: int = Status.ERR_PARAM_INVALID,
             unbound_hint: str = ""):
    """Decorator for the C-shaped boundary: turn any exception into a status return.

    ``failure(code)`` builds the function's failure return value (e.g. ``(0, None, code)``).
    An ``AclnnError`` keeps its status; a call with arguments the function's signature cannot
    take (a C compiler would refuse it) is ``invalid`` (ACLNN_ERR_PARAM_INVALID; the runtime
    passes ACL_ERROR_INVALID_PARAM), and so is a warning the caller's filter raises as an error
    (``warnings.simplefilter("error")``, pytest's ``-W error``: the call refuses what it would
    have warned about); any other exception is an opsnn bug and is reported as ``fallback``
    (ACLNN_ERR_INNER) with the exception text, so nothing escapes to the caller.
    ``unbound_hint`` follows Python's text where more positional arguments came than the function
    takes (how the call differs from its C form, whose out-parameters a port passes too).
    """

    def wrap(fn):
        import functools

        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except AclnnError as exc:
                set_recent_error(exc.message)
                return failure(exc.status)
            except Warning as exc:
                set_recent_error(warning_refused(fn.__name__, exc))
                return failure(int(invalid))
            except Exception as exc:  # noqa: BLE001 - the boundary must never raise
                if isinstance(exc, TypeError) and exc.__traceback__.tb_next is None:
                    # raised by the call itself, before fn's first line: the arguments do not bind
                    # names the function: "f() missing 2 required ..."
                    set_recent_error(f"{exc}{unbound_hint if str(exc).endswith(' were given') else ''}")
                    return failure(int(invalid))
                set_recent_error(f"{fn.__name__}: internal error: {type(exc).__name__}: {exc}")
                return failure(int(fallback))

        return inner

    return wrap
