"""Tensor and scalar handles as the engine sees them.

``aclTensor`` describes a view of device memory exactly like ``aclCreateTensor``: view shape,
dtype, strides and offset in *elements*, format, storage shape and the device address of the
storage start. ``ArrayTensor`` wraps a NumPy array for the Pythonic API. Both give the engine the
same metadata and an ``array()`` that returns the live strided NumPy view of the data.
``aclScalar`` stores a value in its aclDataType, like ``aclCreateScalar``.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from . import dtypes, memory
from .checks import bit_size, brief, counted, is_c_int, is_null
from .dtypes import DataType, Format
from .shape import INT64_MAX, contiguous_strides, is_contiguous, numel, opbase_contiguous_strides
from .status import AclError, AclnnError, Status

log = logging.getLogger("opsnn")


# opbase converts an integer to float16 with fp16_t's own routines (fp16_t.cpp, operator= for
# int8_t / int32_t; int64_t hands values in the int32 range to the latter), which round to nearest
# even but for two values: INT8 -128, whose magnitude bits (the value & 0x7F) are 0, is built as
# -0.0; -2**31, negated into itself (the int32 overflow, as an AArch64 host wraps it), keeps no
# magnitude bit below the sign and is built as -0.5. aclnnHardtanh's ConvertToTensor of a bound for
# a FLOAT16 self goes through them, so such a bound clamps there (docs/decisions-forward.md, F5).
_FP16_OF_INT = {(DataType.INT8, -128): -0.0, (DataType.INT32, -2**31): -0.5, (DataType.INT64, -2**31): -0.5}


class TensorBase:
    """What every tensor handle offers: metadata plus the live data view."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: DataType
    format: Format

    @property
    def numel(self) -> int:
        return numel(self.shape)

    @property
    def is_empty(self) -> bool:
        """aclTensor::IsEmpty: some view dim is 0 (a 0-d tensor is not empty)."""
        return 0 in self.shape

    @property
    def is_contiguous(self) -> bool:
        return is_contiguous(self.shape, self.strides)

    def array(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:
        return (f"{dtypes.name(self.dtype)} {list(self.shape)} strides {list(self.strides)} "
                f"{Format(self.format).name}")


class _Fixed:
    """A handle whose ``_FIXED`` attributes cannot be reassigned once set, as a C caller cannot
    change an aclTensor's or aclScalar's metadata (CANN has no setters for them): the plan
    cache and the same-handles memo (``engine._LAST_CHECKED``) rely on it. A breaker's: a
    scalar's ``value`` changed between two calls passed the checks with the new value while
    the kernel kept the old one."""

    _FIXED: frozenset = frozenset()

    def __setattr__(self, name: str, value) -> None:
        if name in self._FIXED and name in self.__dict__:
            raise self._fixed(name)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:  # a del would let the field be set anew
        if name in self._FIXED:
            raise self._fixed(name)
        object.__delattr__(self, name)

    def _fixed(self, name: str) -> AttributeError:
        return AttributeError(f"{type(self).__name__}.{name} is fixed when the handle is created; "
                              f"create another {type(self).__name__} for other metadata")


class aclTensor(_Fixed, TensorBase):  # noqa: N801 - the CANN type name
    """A view of emulated device memory (``aclCreateTensor``'s arguments, validated); its
    metadata is fixed once created (``_Fixed``), but for the device address, which
    ``set_storage_addr`` alone changes (as in C only aclSetInputTensorAddr and its kin do)."""

    _FIXED = frozenset({"shape", "dtype", "strides", "offset", "format", "storage_shape", "addr",
                        "storage_nbytes"})

    def __init__(self, view_shape, dtype, strides, offset, fmt, storage_shape, addr):
        # fields straight into __dict__: _Fixed.__setattr__ would cost each ~0.4 us, a third
        # of a create_tensor
        fields = self.__dict__
        # None or the int 0 is the C null pointer (checks.is_null, as for every handle): opbase's
        # aclTensor reads a null viewDims / storageDims (with a count of 0, the only one a null
        # may come with) as a 0-d shape, and a null stride as the view's row-major strides
        fields["shape"] = () if is_null(view_shape) else _dims(view_shape, "viewDims")
        fields["dtype"] = _enum(DataType, dtype, "dataType")
        if self.dtype == DataType.DT_UNDEFINED:
            raise _bad("dataType ACL_DT_UNDEFINED cannot describe a tensor")
        if is_null(strides):
            fields["strides"] = opbase_contiguous_strides(self.shape)
            for index, stride in enumerate(self.strides):
                if stride > INT64_MAX:  # opbase's int64 product would wrap into a wrong stride
                    raise _bad(f"stride {strides!r} (a null pointer) gives the row-major strides, but stride[{index}], "
                               f"the product of viewDims[{index + 1}:], is {brief(stride)}, outside int64 "
                               "[0, 2**63 - 1]; pass the strides")
        else:
            fields["strides"] = _dims(strides, "stride")
        if len(self.strides) != len(self.shape):
            raise _bad(f"stride has {len(self.strides)} entries but viewDims has {len(self.shape)}")
        if not is_c_int(offset) or not 0 <= offset <= INT64_MAX:
            raise _bad(f"offset must be an integer in [0, 2**63 - 1] (elements; a non-negative int64, as "
                       f"aclCreateTensor takes), got {brief(offset)}")
        fields["offset"] = int(offset)
        # any aclFormat, ACL_FORMAT_UNDEFINED (-1) included: opbase's aclCreateTensor checks none
        # (its storage format is ToOpFormat's FORMAT_MAX for -1, read back as -1), and phase 1
        # carries formats unchecked (DECISION 13)
        fields["format"] = _enum(Format, fmt, "format", takes=tuple(Format))
        fields["storage_shape"] = () if is_null(storage_shape) else _dims(storage_shape, "storageDims")
        if not is_c_int(addr):
            raise _bad(f"tensorData must be a device address (int from acl.rt.malloc), got {type(addr).__name__}")
        fields["addr"] = int(addr)
        fields["destroyed"] = False
        # how many times set_storage_addr moved it: when nonzero, aclnn rechecks out's overlap at
        # launch; a count, not a flag, so a launch sees a move there and back (A -> B -> A) too
        fields["moved"] = 0
        fields["_view"] = None  # (address, memory.Allocation, np.ndarray): see array()
        fields["layout"] = None  # (address, overlap.layout() of this view), computed on first use
        storage_numel = numel(self.storage_shape)
        if not self.is_empty:
            reach = self.offset + sum((d - 1) * s for d, s in zip(self.shape, self.strides)) + 1
            if reach > storage_numel:
                null = (f" (storageDims {storage_shape!r}, a null pointer, is a 0-d storage)"
                        if is_null(storage_shape) else "")
                raise _bad(f"the view (offset {self.offset}, shape {list(self.shape)}, strides "
                           f"{list(self.strides)}) reaches element {reach - 1}, outside storage "
                           f"{list(self.storage_shape)} of {storage_numel} elements{null}")
        fields["storage_nbytes"] = dtypes.nbytes(self.dtype, storage_numel)
        # A null tensorData is a tensor with no memory yet (``unbacked``): opbase stores the pointer
        # as given, and CANN's aclSetInputTensorAddr sample makes its tensors so, runs phase 1 (which
        # reads no memory) and sets the addresses before the launch, which refuses it until then.
        # Such a tensor must still fit the device, so that an address can hold it (and the
        # workspace phase 1 sizes after it stays a uint64_t).
        if self.storage_nbytes and not self.addr:
            beyond = memory.beyond_device(self.storage_nbytes, f"its storage (storageDims "
                                                               f"{list(self.storage_shape)} of {self.dtype.acl_name})")
            if beyond:
                raise _bad(f"tensorData is a null pointer (a tensor with no memory yet), but {beyond}: no "
                           "address could hold it")
        elif self.storage_nbytes:
            try:
                memory.DEVICE.region(self.addr, self.storage_nbytes, "create_tensor")  # bounds check now
            except AclnnError as exc:
                raise self._past_allocation() or exc from None

    def _past_allocation(self) -> AclnnError | None:
        """The refusal of a storage that starts in a live allocation and runs past its end, naming
        the arguments that make its bytes (storageDims, dataType, tensorData) and the arithmetic
        (a breaker's port was told "32 bytes at 0x... reach 16 bytes past the end", naming
        neither); None where the address lies in no live allocation (``memory`` says so). The
        view's offset does not count: it lies in the storage, checked above."""
        alloc = memory.DEVICE.find(self.addr)
        if alloc is None:
            return None
        start = self.addr - alloc.addr
        each = bit_size(dtypes.BITS[self.dtype])
        into = f" ({counted(start, 'byte')} into the allocation)" if start else ""
        return _bad(f"storageDims {list(self.storage_shape)} of {self.dtype.acl_name} ({each} each) need "
                    f"{counted(self.storage_nbytes, 'byte')} at tensorData {hex(self.addr)}{into}; they reach "
                    f"{counted(start + self.storage_nbytes - alloc.size, 'byte')} past the end of the "
                    f"{alloc.size}-byte allocation at {hex(alloc.addr)}")

    def array(self) -> np.ndarray:
        """The live strided view; raises if the tensor or its memory is gone.

        Built once and kept with the address and the allocation it views: addresses are never
        reused, so the view stays right for as long as the tensor keeps that address and that
        allocation is live (two reads per call, which is what keeps a repeated launch of a small
        tensor cheap). The address is read once, first: a ``set_storage_addr`` on another thread
        meanwhile leaves a view keyed by the address it was built for."""
        if self.destroyed:  # an attribute read, not a call: array() is on every launch's path
            raise _destroyed()
        addr = self.addr
        cached = self._view
        if cached is not None and cached[0] == addr and cached[1].live:
            return cached[2]
        np_dtype = dtypes.to_numpy(self.dtype)
        if self.storage_nbytes == 0 or self.is_empty:
            return np.empty(self.shape, dtype=np_dtype)
        alloc, start = memory.DEVICE.locate(addr, self.storage_nbytes, "tensor data")
        size = np_dtype.itemsize
        # A size-1 dim's stride is never stepped, and opbase takes any int64 there: in bytes it
        # could pass 2**63 (NumPy refused the view: a launch failed 561000), so it is 0 here, as
        # byte_view and the overlap layouts take it
        view = np.ndarray(self.shape, np_dtype, buffer=alloc.buffer, offset=start + self.offset * size,
                          strides=tuple(0 if d == 1 else s * size for d, s in zip(self.shape, self.strides)))
        self._view = (addr, alloc, view)
        return view

    def byte_view(self) -> tuple[np.ndarray, bool]:
        """The live view of the bytes this (non-empty) view's elements occupy, as NumPy void items
        of one element's width (one byte for a sub-byte dtype), and whether it holds those bytes
        alone: what the out-overlap check compares for a dtype NumPy cannot hold (HIFLOAT8,
        COMPLEX32, fp6, INT4 ...; ``array`` raises KeyError for them), reading no element. A
        sub-byte dtype (INT4, UINT1, fp4, fp6) packs elements into bytes (the ``storage_nbytes``
        rule), an fp6 one across two at times; packed ones lie at bit strides no NumPy view takes,
        so where a stride is no whole number of bytes, or an element crosses a byte's end, the
        view is the run of bytes from the first element's to the last's: exactly theirs (True)
        when the view is contiguous, else theirs and more (False). Raises AclnnError (161002) for
        a destroyed tensor, and the runtime's 100000 for memory that is gone, as ``array`` does."""
        if self.destroyed:
            raise _destroyed()
        alloc, start = memory.DEVICE.locate(self.addr, self.storage_nbytes, "tensor data")
        bits = dtypes.BITS[self.dtype]
        first = self.offset * bits  # in bits from the storage's start
        strides = tuple(0 if d == 1 else s * bits for d, s in zip(self.shape, self.strides))
        # every element in one byte of its own (or whole bytes): an fp6 one at bit 6 is in two
        if all(s % 8 == 0 for s in strides) and (bits % 8 == 0 or first % 8 + bits <= 8):
            return np.ndarray(self.shape, f"V{max(bits // 8, 1)}", alloc.buffer, start + first // 8,
                              tuple(s // 8 for s in strides)), True
        last = first + sum((d - 1) * s for d, s in zip(self.shape, strides))  # strides are >= 0
        end = (last + bits - 1) // 8  # the byte holding the last element's last bit
        return np.ndarray((end - first // 8 + 1,), "V1", alloc.buffer, start + first // 8), self.is_contiguous

    @property
    def unbacked(self) -> bool:
        """Whether the tensor has elements but no memory: its address is the null pointer
        (created with a null tensorData, or moved to it), so it shares memory with nothing."""
        return self.addr == 0 and self.storage_nbytes != 0 and not self.is_empty

    @property
    def allocation(self) -> memory.Allocation | None:
        """The device allocation the data lives in (None for a tensor with no bytes)."""
        if self.storage_nbytes == 0 or self.is_empty:
            return None
        self.array()
        return self._view[1]

    def set_storage_addr(self, addr: int) -> None:
        """Point the tensor at the storage starting at device address ``addr`` (an int; opbase's
        aclTensor::SetStorageAddr, which aclSetInputTensorAddr / aclSetOutputTensorAddr /
        aclSetRawTensorAddr call).
        Nothing is checked here: whether ``addr`` holds the storage is checked where every
        tensor's memory is, when it is used (a launch, a phase 1). A change counts as a release
        (``memory.released``), as a free does: the launches and memos that checked or viewed the
        old address check again before their next use; a task already queued keeps the views it
        captured, as a queued kernel keeps the addresses it was launched with."""
        if addr == self.addr:
            return
        fields = self.__dict__
        # counted first: a launch on another thread that reads the new address then sees it
        # moved and checks out's overlap again (acl.set_raw_tensor_addr takes no launch lock)
        fields["moved"] += 1
        fields["addr"] = addr
        memory.released()

    def __repr__(self) -> str:
        return f"<aclTensor {self.describe()} offset {self.offset} at {hex(self.addr)}>"


class DataLessTensor(TensorBase):
    """A tensor's metadata with no data opsnn may read, as the engine's tensor handle: a torch
    fake/meta tensor (its shape and dtype give the output's), a tensor whose dtype no
    aclDataType describes (``dtype`` DT_UNDEFINED, refused by the dtype checks, in CANN's order
    and naming ``given_dtype``, before anything would read it), or one of an aclDataType NumPy
    cannot hold (torch.complex32: ``dtypes.BYTES_ONLY``), whose ``memory`` (a NumPy view of its
    bytes as same-size integers, its shape and strides) only the out-overlap check reads: such
    dtypes are refused before any element would be."""

    def __init__(self, shape: tuple, dtype: DataType, given_dtype, memory: np.ndarray | None = None):
        self.shape = shape  # a torch fake tensor's SymInts stay symbolic (torch.compile(dynamic=True))
        self.dtype = dtype
        self.given_dtype = given_dtype
        self.memory = memory
        self.strides = (contiguous_strides(shape) if memory is None else
                        tuple(s // memory.itemsize for s in memory.strides))
        self.format = Format.ND

    def array(self) -> np.ndarray:  # pragma: no cover - the checks refuse it, or only infer the output
        raise RuntimeError("a data-less tensor has no data")


class ArrayTensor(TensorBase):
    """A NumPy array seen as a tensor (Pythonic API); any strides, ND format."""

    def __init__(self, arr: np.ndarray):
        self._arr = arr
        self.shape = tuple(arr.shape)
        self.dtype = dtypes.from_numpy(arr.dtype)
        self.format = Format.ND
        item = arr.dtype.itemsize
        self._odd_strides = not all(s % item == 0 for s in arr.strides)
        if not self._odd_strides:
            self.strides = tuple(s // item for s in arr.strides)
        else:  # byte strides that are no element multiple: never contiguous
            self.strides = tuple(-1 for _ in arr.strides)
        if arr.flags.c_contiguous:
            self.strides = contiguous_strides(self.shape)
            self._odd_strides = False

    @property
    def is_contiguous(self) -> bool:
        return self._arr.flags.c_contiguous

    def describe(self) -> str:
        """As ``TensorBase.describe``; byte strides that are no element multiple (a record field, an
        odd ``as_strided``) are shown as such, not as the -1 standing for them (a breaker)."""
        if not self._odd_strides:
            return super().describe()
        return (f"{dtypes.name(self.dtype)} {list(self.shape)} byte strides {list(self._arr.strides)} (no multiple "
                f"of its {self._arr.dtype.itemsize}-byte elements) {Format(self.format).name}")

    def array(self) -> np.ndarray:
        return self._arr

    @property
    def given_dtype(self) -> np.dtype:
        """The array's NumPy dtype (what a refusal of a dtype no aclDataType describes names)."""
        return self._arr.dtype


class aclScalar(_Fixed):  # noqa: N801 - the CANN type name
    """A host scalar stored in its aclDataType (``aclCreateScalar``); dtype and value are fixed
    once created (``_Fixed``). ``value`` is a number: a Python bool, int, float or complex, a
    NumPy scalar (ml_dtypes' bfloat16 too), or a 0-d NumPy array, taken as its item."""

    _FIXED = frozenset({"dtype", "value"})

    def __init__(self, value, dtype):
        # fields straight into __dict__, as aclTensor's
        fields = self.__dict__
        fields["dtype"] = _enum(DataType, dtype, "dataType", dtypes.SCALAR)  # (the others are refused below)
        fields["destroyed"] = False
        if self.dtype not in dtypes.SCALAR:
            listed = ", ".join(sorted(d.acl_name.removeprefix("ACL_") for d in dtypes.SCALAR))
            raise _bad(f"dataType {self.dtype.acl_name} cannot hold an aclScalar (aclCreateScalar "
                       f"takes {listed})")
        if isinstance(value, np.ndarray) and value.ndim == 0:  # its item, as a NumPy scalar
            value = value[()]
        if isinstance(value, np.timedelta64):  # an np.integer subclass, but a duration
            raise _bad(f"value {brief(value)} is a duration, not a number")
        floats = dtypes.float_scalar_types()  # ml_dtypes' bfloat16 too (a breaker: was refused)
        if self.dtype in dtypes.COMPLEX:
            if not isinstance(value, (int, complex, np.number, *floats)) or isinstance(value, np.bool_):
                raise _bad(_not_storable(value, self.dtype, "an int, float or complex"))
            try:
                fields["value"] = complex(value)
            except OverflowError:
                raise _bad(f"value {brief(value)} does not fit a C double") from None
        else:  # every other SCALAR dtype has a NumPy dtype
            np_dtype = dtypes.to_numpy(self.dtype)
            if not isinstance(value, (bool, int, np.bool_, np.integer, *floats)):
                raise _bad(_not_storable(value, self.dtype, "a bool, int or float"))
            if np_dtype.kind in "iu":
                if isinstance(value, floats) and not math.isfinite(value):
                    raise _bad(f"value {brief(value)} has no {self.dtype.acl_name} representation")
                info = np.iinfo(np_dtype)
                if not info.min <= int(value) <= info.max:  # int() truncates toward zero, like C
                    raise _bad(f"value {brief(value)} is out of range for {self.dtype.acl_name} "
                               f"[{info.min}, {info.max}]")
                fields["value"] = np_dtype.type(int(value))
            else:
                try:
                    with np.errstate(all="ignore"):  # C float conversion: overflow gives +-inf
                        fields["value"] = np_dtype.type(float(value) if np_dtype.kind != "b" else bool(value))
                except OverflowError:
                    raise _bad(f"value {brief(value)} does not fit a C double") from None

    def _complex_as_zero(self) -> bool:
        """Whether the value is complex, which every real conversion reads as 0, saying so (a
        warning, as opbase's conversions log one)."""
        if self.dtype not in dtypes.COMPLEX:
            return False
        log.warning("aclScalar of %s cannot be converted to a real type; using 0", self.dtype.acl_name)
        return True

    def to_double(self) -> float:
        """aclScalar::ToDouble: a plain C cast (complex -> 0 with a warning)."""
        if self._complex_as_zero():
            return 0.0
        return float(self.value)

    def to_float(self) -> np.float32:
        """aclScalar::ToFloat: C cast to float (round to nearest, overflow to +-inf)."""
        if self._complex_as_zero():
            return np.float32(0.0)
        with np.errstate(all="ignore"):
            return np.float32(self.value)

    def to_int64(self) -> int:
        """aclScalar::ToInt64: a C cast to int64; floats truncate toward zero.

        NaN and floats beyond the int64 range, which C++ leaves undefined, give what an AArch64
        host computes (FCVTZS: NaN -> 0, saturation at the int64 limits). Complex -> 0 (warning).
        """
        if self._complex_as_zero():
            return 0
        if isinstance(self.value, (np.integer, np.bool_)):
            return int(self.value)
        value = float(self.value)
        if math.isnan(value):
            return 0
        if math.isinf(value):
            return 2**63 - 1 if value > 0 else -2**63
        return max(-2**63, min(2**63 - 1, math.trunc(value)))

    def to_dtype(self, dtype: DataType) -> np.generic:
        """The value as a one-element tensor of ``dtype`` (opbase ``ConvertToTensor``: the C
        conversion ``ToFp16/ToBf16/ToFloat/ToDouble/ToInt8/.../ToUint8`` of the stored value).

        Floating targets round to nearest even (BF16 through float32, ``bfloat16(float(x))``);
        overflow gives +-inf and NaN stays NaN; but FLOAT16 takes two integers as opbase's fp16_t
        does (``_FP16_OF_INT``: INT8 -128 is -0.0, INT32 / INT64 -2**31 is -0.5). Integer
        targets: an integer value is reduced modulo 2^bits (C++ integral conversion); a floating
        value is truncated toward zero and must then
        fit ``dtype``, else OverflowError (NaN, inf and out-of-range float-to-integer conversions
        are undefined in C++, so there is no CANN result to reproduce). Complex -> 0 (warning).
        """
        target = dtypes.to_numpy(dtype)
        value = self.value
        if self._complex_as_zero():
            value = np.int64(0)
        if target.kind in "iu":
            info = np.iinfo(target)
            if isinstance(value, (np.integer, np.bool_)):
                span = 2 ** (8 * target.itemsize)
                return target.type((int(value) - int(info.min)) % span + int(info.min))
            number = float(value)
            if not math.isfinite(number):
                raise OverflowError(f"{number!r} has no {dtypes.name(dtype)} value")
            whole = math.trunc(number)
            if not info.min <= whole <= info.max:
                raise OverflowError(f"{number!r} truncates to {whole}, outside the "
                                    f"{dtypes.name(dtype)} range [{info.min}, {info.max}]")
            return target.type(whole)
        if target == np.float16 and isinstance(value, np.integer) and (self.dtype, int(value)) in _FP16_OF_INT:
            return np.float16(_FP16_OF_INT[self.dtype, int(value)])
        if target.kind not in "fV" or target.itemsize > 8:
            raise ValueError(f"no scalar conversion to {dtypes.name(dtype)}")
        with np.errstate(all="ignore"):  # C conversion: overflow gives +-inf
            source = np.asarray(value)
            if target.kind == "V":  # ml_dtypes types (bf16): through float32
                source = source.astype(np.float32)
            return source.astype(target)[()]

    def __repr__(self) -> str:
        return f"<aclScalar {self.dtype.acl_name} {self.value!r}>"


def _not_storable(value, dtype: DataType, taken: str) -> str:
    """aclScalar's refusal of a value of a type it does not take, naming the types it takes."""
    got = (f"an ndarray of shape {value.shape}" if isinstance(value, np.ndarray)
           else type(value).__name__)
    return (f"value {brief(value)} cannot be stored as {dtype.acl_name}: it takes {taken} (Python's or "
            f"NumPy's, ml_dtypes' bfloat16, or a 0-d NumPy array of one), got {got}")


def _bad(message: str) -> AclnnError:
    return AclnnError(AclError.INVALID_PARAM, message)


def _destroyed() -> AclnnError:
    """The refusal (161002) of a destroyed tensor's use: its memory may be another's by now."""
    return AclnnError(Status.ERR_PARAM_INVALID, "tensor was destroyed (aclDestroyTensor or aclDestroyTensorList) "
                                                "before use")


def _dims(values, what: str) -> tuple[int, ...]:
    # a list/tuple/array only: an arbitrary iterable could be endless (tuple() would never return)
    if not isinstance(values, (list, tuple, range, np.ndarray)):
        raise _bad(f"{what} must be a sequence of integers, got {type(values).__name__}")
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise _bad(f"{what} must be a 1-D sequence of integers, got a {values.ndim}-D array")
    host_copy(values, 8, what)  # the C array is of int64_t
    dims = tuple(values.tolist() if isinstance(values, np.ndarray) else values)
    for index, d in enumerate(dims):
        if not is_c_int(d) or not 0 <= d <= INT64_MAX:
            raise _bad(f"{what}[{index}] must be an integer in [0, 2**63 - 1] (a non-negative int64, as "
                       f"aclCreateTensor takes), got {brief(d)}")
    return tuple(int(d) for d in dims)


def host_copy(values, itemsize: int, what: str) -> None:
    """AclnnError 200000 (ACL_ERROR_BAD_ALLOC) when the C copy of ``values`` (a list, tuple,
    range or NumPy array; ``itemsize`` bytes an element) would not fit the host's RAM
    (``memory.beyond_host``), decided from the count before any element is read: copying a
    ``range(10**20)`` would never end, and a broadcast array's ``.tolist()`` would exhaust the
    memory. opbase's constructors, whose ``new`` then fails, return nullptr."""
    if isinstance(values, np.ndarray):
        count = values.size
    elif isinstance(values, range):  # len() raises OverflowError past sys.maxsize
        step = values.step
        count = max(0, (values.stop - values.start + step - (1 if step > 0 else -1)) // step)
    else:
        count = len(values)
    refusal = memory.beyond_host(count * itemsize, f"{what} of {brief(count)} elements of {itemsize} bytes")
    if refusal:
        raise AclnnError(AclError.BAD_ALLOC, refusal)


def _enum(enum_type, value, what: str, takes=None):
    """``value`` as an ``enum_type`` member; a refusal of a value that is none lists ``takes``
    (the members the caller accepts; default: every one but UNDEFINED, -1, which no tensor's or
    scalar's dataType can be) by acl constant name and number."""
    if not is_c_int(value):
        raise _bad(f"{what} must be a {enum_type.__name__} value (int), got {brief(value)}")
    try:
        return enum_type(int(value))
    except ValueError:
        listing = ", ".join(f"{m.acl_name} {int(m)}" for m in sorted(takes or (m for m in enum_type if m >= 0)))
        raise _bad(f"{what} {brief(value)} is not a {enum_type.__name__} value; it must be one of "
                   f"{listing}") from None
