"""Check primitives. Each raises ``AclnnError`` with CANN's status and a message that names the
operator and argument, the expected and the actual value (spec §10 paraphrased)."""

from __future__ import annotations

import numpy as np

from . import dtypes
from .dtypes import DataType
from .shape import MAX_DIM, fmt
from .status import AclnnError, Status


def is_c_int(value) -> bool:
    """Whether ``value`` is an integer a C API argument can be in Python: an ``int`` or a NumPy
    integer, never a bool nor a ``np.timedelta64`` (a duration, though NumPy makes it an
    np.integer: a breaker's was taken as selfIsResult and failed as a device id with 561000).
    The plain int is tested first: launches check several per call."""
    if type(value) is int:
        return True
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.timedelta64))


def int_held(value: int) -> bool:
    """Whether the Python int ``value`` is one an aclDataType holds: in int64's or uint64's range,
    [-2**63, 2**64), as torch.Scalar takes it. The one limit for an int given as a scalar (the
    Pythonic API's, ``opsnn run --scalar``) or as a tensor (the Pythonic API's)."""
    return -2**63 <= value < 2**64


def held(value):
    """A 0-d array's NumPy scalar (a scalar, flag or attr given as one, as np.float32(x) or
    np.True_ would be); anything else as it is."""
    return value[()] if type(value) is np.ndarray and value.ndim == 0 else value


def c_bool(value) -> bool | None:
    """``value`` as a C ``bool`` parameter (aclnnLeakyReluBackward's selfIsResult) receives it: a
    bool or NumPy bool, or the int 0 or 1 (Python or NumPy), which C converts to false / true as
    ctypes' c_bool does; None for anything else. C would make any other number true as well;
    opsnn refuses it (161002), as an argument more likely passed in the wrong place than meant
    as true (a dtype code, a handle), and a non-number has no C form at all."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if is_c_int(value) and (value == 0 or value == 1):
        return bool(value)
    return None


def shown(handle) -> str:
    """A runtime handle as messages print it: an integer in hex (as addresses are), else repr."""
    return f"{int(handle):#x}" if is_c_int(handle) else repr(handle)


def counted(amount: int, unit: str, plural: str | None = None) -> str:
    """``amount`` of ``unit`` as a message writes it: "1 byte", "4 bytes"; ``plural`` where it is
    not ``unit`` + "s" ("1 entry", "2 entries")."""
    return f"{amount} {unit if amount == 1 else plural or unit + 's'}"


def bit_size(bits: int) -> str:
    """A size or distance of ``bits`` as a message writes it: in bytes where whole ("1 byte", "8
    bytes"), else in bits (a sub-byte dtype's: "4 bits")."""
    return counted(bits // 8, "byte") if bits % 8 == 0 else counted(bits, "bit")


# Past this many bits an int is shown by its size: a decimal repr of it is quadratic in the digits,
# and past sys.get_int_max_str_digits() (4300 by default, ~14 300 bits) it raises ValueError.
_BRIEF_BITS = 4096


def brief(value) -> str:
    """``repr(value)`` as a message shows an argument's actual value: in full when short, else its
    first and last characters and its length (a 400-digit int: ``"100000000000...000000 (401
    characters)"``); an int too long to print in decimal by its bit length."""
    if isinstance(value, int) and value.bit_length() > _BRIEF_BITS:
        return f"<an int of {value.bit_length()} bits>"
    try:
        text = repr(value)
    except ValueError:  # a list or tuple holding such an int
        return f"<a {type(value).__name__} holding an int too long to print>"
    return text if len(text) <= 40 else f"{text[:12]}...{text[-6:]} ({len(text)} characters)"


def is_null(value) -> bool:
    """Whether a handle argument is a C null pointer: ``None``, or the int 0 (pyACL hands out its
    handles as ints, so a handle variable not yet set is often 0). CANN answers NULL with 161001."""
    return value is None or (is_c_int(value) and value == 0)


def device_addr(call: str, addr) -> int:
    """``addr`` as the device address an aclTensor records: None or 0, the null pointer, is 0;
    else an int in [0, 2**64) (a C ``void*``), whatever memory it names (checked where the
    tensor is used); 161002 otherwise. The one address check of aclSetInputTensorAddr,
    aclSetOutputTensorAddr and aclSetRawTensorAddr."""
    if is_null(addr):
        return 0
    if not is_c_int(addr) or not 0 <= addr < 2**64:
        raise fail(call, f"addr must be a device address (an int in [0, 2**64) from acl.rt.malloc), got "
                         f"{brief(addr)}")
    return int(addr)


def fail(op: str, message: str, status: int = Status.ERR_PARAM_INVALID) -> AclnnError:
    return AclnnError(status, f"{op}: {message}")


def not_null(op: str, value, api_name: str, type_name: str) -> None:
    if is_null(value):
        raise fail(op, f"{api_name} must be an {type_name}, got a null pointer ({value!r})",
                   Status.ERR_PARAM_NULLPTR)


def dtype_in(op: str, dtype: DataType, allowed: tuple[DataType, ...], api_name: str, soc: str,
             what: str = "tensor", elsewhere: tuple[str, ...] | None = None) -> None:
    """161002 unless ``dtype`` is in ``allowed`` (the SoC's list). ``elsewhere``, the SoCs whose
    list has it, lets the message say where it runs or that no SoC takes it (a user reading
    "which Ascend910B does not support" of a float64 HardtanhBackward tried other SoCs). ``what``
    is "tensor" or "scalar": a tensor's dtype selects the kernel, a scalar's does not (it is
    converted for the kernel), so only a tensor's refusal everywhere says no kernel has it."""
    if dtype not in allowed:
        names = ", ".join(dtypes.name(d) for d in allowed)
        if elsewhere is None:
            where = ""
        elif elsewhere:
            where = f"; {', '.join(elsewhere)} take it (the emulated SoC: opsnn.set_soc, $OPSNN_SOC, opsnn --soc)"
        elif what == "scalar":
            where = "; no SoC's list takes a scalar of that dtype"
        else:
            where = f"; no SoC does ({op} has no {dtypes.name(dtype)} kernel)"
        raise fail(op, f"{what} {api_name} has dtype {dtypes.name(dtype)}, which {soc} does not "
                       f"support; it must be one of [{names}]{where}")


def same_dtype(op: str, dtype: DataType, expected: DataType, api_name: str, ref_name: str) -> None:
    if dtype != expected:
        raise fail(op, f"{api_name} must have the dtype of {ref_name} ({dtypes.name(expected)}), "
                       f"got {dtypes.name(dtype)}")


def max_rank(op: str, shape: tuple[int, ...], api_name: str) -> None:
    if len(shape) > MAX_DIM:
        raise fail(op, f"{api_name} has {len(shape)} dimensions {fmt(shape)}; at most {MAX_DIM} "
                       "are supported")


def same_shape(op: str, shape: tuple[int, ...], expected: tuple[int, ...], api_name: str,
               ref_name: str) -> None:
    if tuple(shape) != tuple(expected):
        raise fail(op, f"{api_name} shape must equal {ref_name} shape {fmt(expected)}, got {fmt(shape)}")
