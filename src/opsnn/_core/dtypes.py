"""aclDataType / aclFormat values, the NumPy mapping, PromoteType and CanCast, as data.

Transcribed once from the public ACL headers and opbase ``data_type_utils.h`` (spec §2.2, §2.4,
§2.5). Operators name these policies; they never compute their own.
"""

from __future__ import annotations

import enum
import math
import re
import sys

import numpy as np

from .words import non_ascii


class DataType(enum.IntEnum):
    """aclDataType (``ACL_`` + name is the CANN constant, e.g. ``ACL_FLOAT16``)."""

    DT_UNDEFINED = -1
    FLOAT = 0
    FLOAT16 = 1
    INT8 = 2
    INT32 = 3
    UINT8 = 4
    INT16 = 6
    UINT16 = 7
    UINT32 = 8
    INT64 = 9
    UINT64 = 10
    DOUBLE = 11
    BOOL = 12
    STRING = 13
    COMPLEX64 = 16
    COMPLEX128 = 17
    BF16 = 27
    INT4 = 29
    UINT1 = 30
    COMPLEX32 = 33
    HIFLOAT8 = 34
    FLOAT8_E5M2 = 35
    FLOAT8_E4M3FN = 36
    FLOAT8_E8M0 = 37
    FLOAT6_E3M2 = 38
    FLOAT6_E2M3 = 39
    FLOAT4_E2M1 = 40
    FLOAT4_E1M2 = 41
    HIFLOAT4 = 42  # newer headers (metadef graph/types.h DT_HIFLOAT4, opbase since its hifloat4 support)

    @property
    def acl_name(self) -> str:
        return "ACL_" + self.name


class Format(enum.IntEnum):
    """aclFormat (``ACL_FORMAT_`` + name; FRACTAL_Z_3D is ``ACL_FRACTAL_Z_3D`` in CANN)."""

    UNDEFINED = -1
    NCHW = 0
    NHWC = 1
    ND = 2
    NC1HWC0 = 3
    FRACTAL_Z = 4
    NC1HWC0_C04 = 12
    HWCN = 16
    NDHWC = 27
    FRACTAL_NZ = 29
    NCDHW = 30
    NDC1HWC0 = 32
    FRACTAL_Z_3D = 33
    NC = 35
    NCL = 47
    FRACTAL_NZ_C0_16 = 50
    FRACTAL_NZ_C0_32 = 51
    FRACTAL_NZ_C0_2 = 52
    FRACTAL_NZ_C0_4 = 53
    FRACTAL_NZ_C0_8 = 54

    @property
    def acl_name(self) -> str:
        return "ACL_FRACTAL_Z_3D" if self is Format.FRACTAL_Z_3D else "ACL_FORMAT_" + self.name


D = DataType

# Storage width in bits of every aclDataType (sub-byte types pack: fp6 four elements in three bytes,
# as metadef's GetSizeByDataType has it, kDataTypeSizeBitOffset + 6, graph/types.h).
BITS: dict[DataType, int] = {
    D.FLOAT: 32, D.FLOAT16: 16, D.INT8: 8, D.INT32: 32, D.UINT8: 8, D.INT16: 16, D.UINT16: 16,
    D.UINT32: 32, D.INT64: 64, D.UINT64: 64, D.DOUBLE: 64, D.BOOL: 8, D.STRING: 8,
    D.COMPLEX64: 64, D.COMPLEX128: 128, D.BF16: 16, D.INT4: 4, D.UINT1: 1, D.COMPLEX32: 32,
    D.HIFLOAT8: 8, D.FLOAT8_E5M2: 8, D.FLOAT8_E4M3FN: 8, D.FLOAT8_E8M0: 8, D.FLOAT6_E3M2: 6,
    D.FLOAT6_E2M3: 6, D.FLOAT4_E2M1: 4, D.FLOAT4_E1M2: 4, D.HIFLOAT4: 4,
}

# NumPy representation. Types without an entry (STRING, INT4, UINT1, COMPLEX32, HIFLOAT8, fp6/fp4,
# HIFLOAT4) can describe tensors but hold no data here.
NUMPY: dict[DataType, np.dtype] = {
    D.FLOAT: np.dtype(np.float32), D.FLOAT16: np.dtype(np.float16), D.DOUBLE: np.dtype(np.float64),
    D.INT8: np.dtype(np.int8), D.INT16: np.dtype(np.int16), D.INT32: np.dtype(np.int32),
    D.INT64: np.dtype(np.int64), D.UINT8: np.dtype(np.uint8), D.UINT16: np.dtype(np.uint16),
    D.UINT32: np.dtype(np.uint32), D.UINT64: np.dtype(np.uint64), D.BOOL: np.dtype(np.bool_),
    D.COMPLEX64: np.dtype(np.complex64), D.COMPLEX128: np.dtype(np.complex128),
}
_FROM_NUMPY = {v: k for k, v in NUMPY.items()}
# bf16 and the fp8 family are ml_dtypes types, which join NUMPY on first need (``_ml_dtypes``)
# rather than with ``import opsnn``: importing ml_dtypes 0.7.0 takes ~0.7 s (0.6.0: ~0.1 s; Zen 3
# VM, numpy 2.3 and 2.4), most of a process's start for one that never meets these types. No
# array, scalar or NumPy dtype of them can exist before ml_dtypes is imported.
_ML_DTYPES = {D.BF16: "bfloat16", D.FLOAT8_E5M2: "float8_e5m2", D.FLOAT8_E4M3FN: "float8_e4m3fn",
              D.FLOAT8_E8M0: "float8_e8m0fnu"}

# torch dtypes that NumPy has no code for (neither its DLPack import nor ``Tensor.numpy`` takes
# them), by torch's name: the same-size integer dtype they cross as, reinterpreted then as the
# ml_dtypes type of their aclDataType (same memory and strides). A float8 tensor so reaches the
# dtype checks, whose refusal names it and the dtypes expected.
TORCH_VIEWS = {"bfloat16": ("int16", D.BF16), "float8_e5m2": ("uint8", D.FLOAT8_E5M2),
               "float8_e4m3fn": ("uint8", D.FLOAT8_E4M3FN), "float8_e8m0fnu": ("uint8", D.FLOAT8_E8M0)}
# dtypes with an aclDataType but no NumPy type, nor an ml_dtypes one in every version taken
# (complex32 is in ml_dtypes from 0.6, not 0.5), so no data of them is held here, by the name
# torch and ml_dtypes both give them: the same-size integer dtype they cross as, a
# DataLessTensor's memory (what the out-overlap check compares); no element is read: an input of
# them fails its dtype list, an out the Cast kernel (561103), as an ACL_COMPLEX32 tensor does
# through the aclnn API (a breaker: ml_dtypes' complex32 was refused as no aclDataType's, where
# torch.complex32 is ACL_COMPLEX32).
BYTES_ONLY = {"complex32": ("int32", D.COMPLEX32)}
# torch's sub-byte shell dtypes whose name is an aclDataType's: torch stores one element a byte
# (element_size 1), where the aclDataType packs them (``packing``), so none describes their memory.
TORCH_UNPACKED = {"int4": D.INT4, "uint1": D.UINT1}
# torch's packed shell dtypes, by torch's name: the aclDataType that packs the same values as
# tightly, yet counts each value an element, where torch's element is the byte that holds
# 8 // BITS of them, so a shape describes other memory (a breaker: float4_e2m1fn_x2 was refused
# with no word of ACL_FLOAT4_E2M1)
TORCH_PAIRED = {"float4_e2m1fn_x2": D.FLOAT4_E2M1}
# the same for ml_dtypes' sub-byte types (one element a byte too), by ml_dtypes' name: its fp6 types
# are not ACL_FLOAT6_*, which pack 4 elements in 3 bytes (a breaker had mapped them as the same memory)
ML_UNPACKED = {"int4": D.INT4, "uint1": D.UINT1, "float4_e2m1fn": D.FLOAT4_E2M1,
               "float6_e3m2fn": D.FLOAT6_E3M2, "float6_e2m3fn": D.FLOAT6_E2M3}
# torch dtypes that cross as the NumPy dtype of their name, by that name: their aclDataType. A
# torch dtype in no table here, or only in TORCH_UNPACKED / TORCH_PAIRED (int1..int7, uint1..uint7,
# float8_e4m3fnuz, float4_e2m1fn_x2, bits16 ...), has no aclDataType: torch's DLPack export labels
# the sub-byte integers as 8-bit ones, which NumPy would take at their word.
TORCH_NAMES = {"float16": D.FLOAT16, "float32": D.FLOAT, "float64": D.DOUBLE, "int8": D.INT8, "int16": D.INT16,
               "int32": D.INT32, "int64": D.INT64, "uint8": D.UINT8, "uint16": D.UINT16, "uint32": D.UINT32,
               "uint64": D.UINT64, "bool": D.BOOL, "complex64": D.COMPLEX64, "complex128": D.COMPLEX128}


def is_ml_dtypes(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is one of ml_dtypes' own types (NumPy gives them the kind V of records,
    or c: complex32), not a record holding them."""
    return dtype.fields is None and dtype.type.__module__.partition(".")[0] == "ml_dtypes"


def ml_bytes(dtype: np.dtype) -> tuple | None:
    """(the integer dtype it crosses as, its aclDataType) for a native-order ml_dtypes type in
    BYTES_ONLY, else None."""
    return BYTES_ONLY.get(dtype.name) if dtype.isnative and is_ml_dtypes(dtype) else None


def _ml_dtypes() -> None:
    """Imports ml_dtypes and adds its types to _FROM_NUMPY, then to NUMPY, each in one
    ``dict.update`` (atomic under the GIL): another thread that finds NUMPY's bf16 entry finds
    every other entry too (a breaker caught an fp8 lookup in between, entry by entry)."""
    if D.BF16 in NUMPY:
        return
    import ml_dtypes

    loaded = {acl: np.dtype(getattr(ml_dtypes, name)) for acl, name in _ML_DTYPES.items()}
    _FROM_NUMPY.update({dt: acl for acl, dt in loaded.items()})
    NUMPY.update(loaded)


FLOATING = frozenset({D.FLOAT, D.FLOAT16, D.DOUBLE, D.BF16, D.HIFLOAT8, D.FLOAT8_E5M2,
                      D.FLOAT8_E4M3FN, D.FLOAT8_E8M0, D.FLOAT6_E3M2, D.FLOAT6_E2M3,
                      D.FLOAT4_E2M1, D.FLOAT4_E1M2, D.HIFLOAT4})
COMPLEX = frozenset({D.COMPLEX32, D.COMPLEX64, D.COMPLEX128})
INTEGRAL = frozenset({D.INT8, D.INT16, D.INT32, D.INT64, D.UINT8, D.UINT16, D.UINT32, D.UINT64})
# what aclCreateScalar can hold: the cases of opbase's aclScalar(const void*, DataType); any other
# dtype throws there and aclCreateScalar returns NULL (float8 / hifloat8 / complex32 / string ...)
SCALAR = INTEGRAL | frozenset({D.FLOAT, D.FLOAT16, D.BF16, D.DOUBLE, D.BOOL, D.COMPLEX64, D.COMPLEX128})


def from_numpy(dtype) -> DataType:
    """aclDataType of a NumPy dtype (bf16 = ``ml_dtypes.bfloat16``); DT_UNDEFINED if none."""
    dtype = np.dtype(dtype)
    found = _FROM_NUMPY.get(dtype)
    if found is None and dtype.itemsize == 1 and not dtype.isnative:
        # a byte order means nothing for one byte: NumPy drops '>' from its own (>i1 is int8), not
        # from ml_dtypes' (a breaker: a '>' float8_e5m2 array was refused as byte-swapped)
        dtype = dtype.newbyteorder("=")
        found = _FROM_NUMPY.get(dtype)
    if found is None and "ml_dtypes" in sys.modules and D.BF16 not in NUMPY:
        _ml_dtypes()  # the caller's dtype may be one of its types
        found = _FROM_NUMPY.get(dtype)
    return D.DT_UNDEFINED if found is None else found


# The short dtype names opsnn bench prints, which every subcommand also reads, mapped onto NumPy's
# names: widths in bits, as CANN and torch write them (NumPy would take "f16" for a 16-byte
# float128, and "i8" / "u8" for the 8-byte int64 / uint64: a breaker's `--dtype i8` ran int64).
# C's words too, as CANN's C samples and torch mean them: "int" is int32 as "float" is float32
# (a new user's `--dtype int` ran NumPy's int64), "uint" uint32, "long" int64.
SHORT_NAMES = {"f16": "float16", "fp16": "float16", "half": "float16", "bf16": "bfloat16",
               "f32": "float32", "fp32": "float32", "f64": "float64", "fp64": "float64",
               "c64": "complex64", "c128": "complex128", "int": "int32", "uint": "uint32", "long": "int64",
               **{f"{p}{bits}": f"{kind}{bits}" for bits in (8, 16, 32, 64)
                  for p, kind in (("i", "int"), ("s", "int"), ("u", "uint"))}}
# NumPy's letter-and-byte-count codes, b1 (bool) and a native or unspecified byte order's (<i8 is
# int64) too: each would read as a bit width beside i8 (a breaker: b1 ran bool, <i8 int64); '>'
# marks a byte order no aclTensor has, refused as such, but a one-byte code has none to refuse it
# by (NumPy drops it: >i1 ran int8, >b1 bool), so those are byte codes too; the count as NumPy
# reads it, with C's strtol: leading zeros (>i01 ran int8 where i01 was refused), and blanks and
# a '+' before it (i+8 and 'i 8' ran int64)
_BYTE_CODE = re.compile(r"[<=|]?[biufc]\s*\+?\d+|>[biu]\s*\+?0*1")


# what np.dtype raises for a word it reads as no dtype: TypeError, and for one it reads as a
# structured dtype's spec (a bracket: "()(", "() )"; a comma or a leading digit, "0999", is
# refused before NumPy reads it) SyntaxError or ValueError, which had escaped as a traceback
_NOT_A_DTYPE = (TypeError, ValueError, SyntaxError)


def parse_name(text: str) -> DataType:
    """The aclDataType a dtype word names, the one grammar of the CLI's ``--dtype`` options and of
    golden data's case.json: CANN's names with or without ACL_ / DT_ and in any case (FLOAT,
    ACL_FLOAT16, DT_BF16, float, double; so "float" is float32, as in CANN and torch, not NumPy's
    float64; "int" int32, as in C and torch), then, after the same prefix, opsnn's short names
    (``SHORT_NAMES``: f16, bf16, i8, c64 in bits) and NumPy's (float32, bfloat16, float8_e5m2,
    its one-letter codes in their own case: B is uint8, b int8), in any case where NumPy has none.
    Another letter-and-number code NumPy reads (f8, i4, u1, c8, b1, <i8) is its count of bytes
    and is refused: beside i8 meaning int8 it would read as a bit width (a breaker: f8 ran
    float64, i4 int32, <i8 int64), as is a word NumPy reads after a shape (``()f4``); bool is
    ``bool`` or ``?``. A name is ASCII: a character past
    it is refused (``words.non_ascii``), as upper() reads some as ASCII letters. ValueError,
    saying why, for anything else."""
    why = non_ascii(text)
    if why:  # (a breaker: upper() made ﬂoat FLOAT, ınt8 INT8)
        raise ValueError(f"unknown dtype {text!r}: {why}, as no dtype name is")
    word = text.strip()
    if "," in word:  # NumPy reads 'f16,' as a structured dtype, void128: no name a user meant
        raise ValueError(f"unknown dtype {text!r}: a dtype name holds no comma")
    for prefix in ("ACL_", "DT_"):
        if word.upper().startswith(prefix):
            word = word[len(prefix):]
            break
    if word.upper() in D.__members__ and word.upper() != "DT_UNDEFINED":
        return D[word.upper()]
    expected = "a CANN name (FLOAT, FLOAT16, BF16, DOUBLE, INT32 ...), f16 / bf16 / f32 or a NumPy name"
    # NumPy reads a count before a type as an array dtype ('32f': 32 float32 in one, void1024), and a
    # '()' as the shape of one, none ('()f4' float32, where f4 is refused below; '()float' float64), after
    # a byte-order mark too ('>2f')
    count = re.match(r"[<>=|]?(?=[\d(])", word)
    if count:
        before = text.strip()[:len(text.strip()) - len(word) + count.end()]  # (a prefix and the mark)
        after = f" after {before}" if before else ""
        # (NumPy reads a shape only in '()' here, one with a comma refused above: '(f4)' and '(2)f4' are none)
        what = ("a digit" if word[count.end()].isdigit() else "'(' (NumPy reads a subarray's shape there)"
                if word[count.end():].startswith("()") else "'('")
        raise ValueError(f"unknown dtype {text!r}: a dtype name{after} begins with a letter, not {what}; "
                         f"expected {expected}")
    found = None
    for candidate in dict.fromkeys((word, word.lower())):  # NumPy's own case first: its codes differ by case
        name = SHORT_NAMES.get(candidate, candidate)
        try:
            found = np.dtype(name)
        except _NOT_A_DTYPE:  # ml_dtypes' names (bfloat16, float8_e5m2) are NumPy's once it is imported
            _ml_dtypes()
            try:
                found = np.dtype(name)
            except _NOT_A_DTYPE:
                continue
        # a letter-and-number code NumPy reads counts bytes (one it does not, c64, is no such code: a
        # new user's --dtype c64 had been told it was)
        if name == candidate and _BYTE_CODE.fullmatch(candidate):
            raise ValueError(f"dtype {text!r} is NumPy's code in bytes; opsnn's short names count bits (f16, bf16, "
                             "f32, f64, i8, u8, i16, i32, i64, c64, c128): write one of them or the full name "
                             "(bool, float64, int32, ...)")
        break
    if found is None:
        raise ValueError(f"unknown dtype {text!r}; expected {expected}")
    acl = from_numpy(found)
    if acl == D.DT_UNDEFINED:  # object, str, datetime64, ...
        raise ValueError(f"dtype {text!r} is NumPy's {found.str!r} ({found.name}), which no aclDataType "
                         f"describes; expected {expected}")
    return acl


def to_numpy(dtype: DataType) -> np.dtype:
    """NumPy dtype of an aclDataType (bf16: ``ml_dtypes.bfloat16``, imported here on first need);
    raises KeyError for types that hold no data here."""
    found = NUMPY.get(dtype)  # a DataType or its int value (an IntEnum hashes as its int)
    if found is None:
        dtype = DataType(dtype)
        if dtype in _ML_DTYPES:
            _ml_dtypes()
        found = NUMPY[dtype]
    return found


def holds_data(dtype: DataType) -> bool:
    """Whether tensors of ``dtype`` can hold data here (``to_numpy`` has a NumPy dtype for it)."""
    return dtype in NUMPY or dtype in _ML_DTYPES


def float_scalar_types() -> tuple:
    """The scalar types that are floats: Python's, NumPy's and, once ml_dtypes is imported, its
    bfloat16 (no ``np.floating``, yet a float like NumPy's)."""
    if "ml_dtypes" in sys.modules:
        return (float, np.floating, to_numpy(D.BF16).type)
    return (float, np.floating)


def packing(dtype: DataType) -> str:
    """How a sub-byte aclDataType packs its elements, as a message says it: the fewest whole
    elements that fill whole bytes ("2 a byte" for INT4 and fp4, "8 a byte" for UINT1, "4 in 3
    bytes" for fp6)."""
    bits = BITS[DataType(dtype)]
    run = math.lcm(bits, 8)
    return f"{run // bits} a byte" if run == 8 else f"{run // bits} in {run // 8} bytes"


def nbytes(dtype: DataType, numel: int) -> int:
    """Bytes needed for ``numel`` elements of ``dtype`` (sub-byte types round up)."""
    return (numel * BITS[DataType(dtype)] + 7) // 8


def value_text(value, dtype: DataType) -> str:
    """``value`` (exact in ``dtype``) as the shortest decimal that reads back as it in ``dtype``:
    a float32 attr 0.01, not its double 0.009999999776482582; a NaN with its sign (``-nan``,
    which Python and NumPy both write ``nan``). In Python's notation whatever the NumPy version
    (str() of a float32 wrote 2e11 as '2e+11' under NumPy 2.4, '200000000000.0' under 2.0), but
    where those digits padded with zeros would read as an integer the value is not (float32
    2e11 is 199999995904, -123456789 is -123456792; float16 65504 has the digits 6.55e4): then in
    scientific notation, ``2e+11``, so that no printed integer claims a value never held.
    Integers and non-float dtypes as Python writes them."""
    if isinstance(value, float) and math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if isinstance(value, float) and dtype in (D.FLOAT, D.FLOAT16):
        with np.errstate(over="ignore"):  # (a double past the type's range is the inf it holds: tiling's attrs)
            held = to_numpy(dtype).type(value)
        text = repr(float(np.format_float_scientific(held, unique=True)))  # (a double holds those digits exactly)
        if text.endswith(".0") and math.isfinite(held) and float(text) != float(held):
            return np.format_float_scientific(held, unique=True, trim="-")
        return text
    return repr(value)


def name(dtype: int) -> str:
    """CANN-style name for messages (``DT_FLOAT16``), tolerant of unknown values."""
    try:
        return "DT_" + DataType(dtype).name.removeprefix("DT_")
    except ValueError:
        return f"<unknown aclDataType {dtype}>"


# ---- PromoteType: opbase kPromoteTypesLookup (spec §2.4; code, not the doc table) -------------
_ORDER = [D.FLOAT, D.FLOAT16, D.DOUBLE, D.BF16, D.INT8, D.UINT8, D.INT16, D.UINT16, D.INT32,
          D.UINT32, D.INT64, D.UINT64, D.BOOL, D.COMPLEX32, D.COMPLEX64, D.COMPLEX128]
_ABBR = {"f32": D.FLOAT, "f16": D.FLOAT16, "f64": D.DOUBLE, "bf16": D.BF16, "s8": D.INT8,
         "u8": D.UINT8, "s16": D.INT16, "u16": D.UINT16, "s32": D.INT32, "u32": D.UINT32,
         "s64": D.INT64, "u64": D.UINT64, "bool": D.BOOL, "c32": D.COMPLEX32, "c64": D.COMPLEX64,
         "c128": D.COMPLEX128, "x": D.DT_UNDEFINED}
_PROMOTE_ROWS = """
f32  f32 f32 f64 f32 f32 f32 f32 x f32 x f32 x f32 c64 c64 c128
f16  f32 f16 f64 f32 f16 f16 f16 x f16 x f16 x f16 c32 c64 c128
f64  f64 f64 f64 f64 f64 f64 f64 x f64 x f64 x f64 c128 c128 c128
bf16 f32 f32 f64 bf16 bf16 bf16 bf16 x bf16 x bf16 x bf16 c64 c64 c128
s8   f32 f16 f64 bf16 s8 s16 s16 x s32 x s64 x s8 c32 c64 c128
u8   f32 f16 f64 bf16 s16 u8 s16 x s32 x s64 x u8 c32 c64 c128
s16  f32 f16 f64 bf16 s16 s16 s16 x s32 x s64 x s16 c32 c64 c128
u16  x x x x x x x u16 x x x x x x c64 c128
s32  f32 f16 f64 bf16 s32 s32 s32 x s32 x s64 x s32 c32 c64 c128
u32  x x x x x x x x x u32 x x x x c64 c128
s64  f32 f16 f64 bf16 s64 s64 s64 x s64 x s64 x s64 c32 c64 c128
u64  x x x x x x x x x x x u64 x x c128 c128
bool f32 f16 f64 bf16 s8 u8 s16 x s32 x s64 x bool c32 c64 c128
c32  c64 c32 c128 c64 c32 c32 c32 x c32 x c32 x c32 c32 c64 c128
c64  c64 c64 c128 c64 c64 c64 c64 x c64 x c64 x c64 c64 c64 c128
c128 c128 c128 c128 c128 c128 c128 c128 x c128 x c128 x c128 c128 c128 c128
"""
PROMOTE: dict[tuple[DataType, DataType], DataType] = {}
for _line in _PROMOTE_ROWS.strip().splitlines():
    _row, *_cells = _line.split()
    for _col, _cell in zip(_ORDER, _cells, strict=True):
        PROMOTE[(_ABBR[_row], _col)] = _ABBR[_cell]


def in_listing_order(types) -> tuple[DataType, ...]:
    """``types`` in the one order opsnn lists dtypes in (``opsnn describe``, ``opsnn demo``, the
    161002 messages): that of opbase's PromoteType table, floating types first, then the
    integers by width, bool and complex; types outside the table last, by value. The sources'
    own lists differ (aclnn_hardtanh.cpp starts with FLOAT16, aclnn_leaky_relu.cpp with FLOAT),
    so a list kept in its source's order showed each operator's dtypes in another order."""
    rank = {dtype: i for i, dtype in enumerate(_ORDER)}
    return tuple(sorted(types, key=lambda d: (rank.get(d, len(rank)), int(d))))


def promote_type(a: DataType, b: DataType) -> DataType:
    """opbase PromoteType: equal types return themselves, else the (row a, column b) cell.

    DT_UNDEFINED means the pair cannot promote. The table is not symmetric for unsigned x complex.
    """
    a, b = DataType(a), DataType(b)
    if a == b:
        return a
    return PROMOTE.get((a, b), D.DT_UNDEFINED)


def can_cast(src: DataType, dst: DataType) -> bool:
    """opbase CanCast: false only for complex->real, floating->integral, and non-bool->bool."""
    src, dst = DataType(src), DataType(dst)
    if src in COMPLEX and dst not in COMPLEX:
        return False
    if src in FLOATING and dst in INTEGRAL:
        return False
    if dst == D.BOOL and src != D.BOOL:
        return False
    return True


def cast_into(dst: np.ndarray, src: np.ndarray) -> None:
    """Copy ``src`` into ``dst`` converting once, rounding to nearest even.

    NumPy/ml_dtypes already round once for every pair except float64 -> an ml_dtypes float
    (bf16, fp8), which ml_dtypes does through float32, i.e. twice. For that pair the float64
    values are first rounded to float32 *to odd* (truncate, then set the last bit when inexact):
    float32 carries more than two extra bits, so the final rounding is then correct.
    """
    if src.dtype == np.float64 and dst.dtype.kind == "V":
        with np.errstate(all="ignore"):
            narrow = src.astype(np.float32)
            inexact = np.isfinite(narrow) & (narrow.astype(np.float64) != src)
            away = inexact & (np.abs(narrow.astype(np.float64)) > np.abs(src))
            narrow = np.where(away, np.nextafter(narrow, np.float32(0)), narrow)
            bits = narrow.view(np.uint32)
            narrow = np.where(inexact, bits | np.uint32(1), bits).view(np.float32)
        src = narrow
    np.copyto(dst, src, casting="unsafe")
    if src.dtype == np.float32 and from_numpy(dst.dtype) == D.BF16:
        # ml_dtypes makes every NaN 0x7FC0; keep the payload (top half of the float32 bits): as
        # they are where the low half is zero, so a bf16 NaN widened to float32 and narrowed back
        # is unchanged, a signalling one included (DECISION 1); else with the quiet bit set (the
        # top half alone might read as infinity)
        nan = np.isnan(src)
        if nan.any():
            u = src.view(np.uint32)[nan]
            bits = (u >> 16).astype(np.uint16)
            dst.view(np.uint16)[nan] = np.where((u & 0xFFFF) != 0, bits | np.uint16(0x0040), bits)
