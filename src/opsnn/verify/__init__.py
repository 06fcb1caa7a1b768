"""``opsnn verify FILE...``: run CANN's own system-test case files against opsnn.

Two formats are read (spec §9.3, ``../shared/cases/README.md``):

* **kernel ST csv** (``ttk_kernel_*_st.csv``): one row per case naming a kernel op
  (``leaky_relu_grad``, ``hardtanh_grad``, ``leaky_relu``, ``clip_by_value_v2``), its input dtypes,
  shapes, formats, attrs and data ranges such as ``(-1, 1, nan, -0.0, inf)`` (uniform in [-1, 1]
  with nan, -0.0 and inf injected; an integer input's special values must be integers its dtype
  holds), plus a tolerance.
* **aclnn ST json** (``atk_aclnn*.json``): a list of cases whose inputs carry a dtype, a shape and
  ``range_values``: ``[low, high]``, one fill value (a number or ``"inf"``/``"-inf"``/``"nan"``)
  or a one-element list holding one; an integer is read as one, not through a float.

Each case runs exactly like a CANN user runs it: ``acl.rt.malloc`` + ``memcpy`` for every input,
``acl.create_tensor`` / ``create_scalar``, ``aclnnXxxGetWorkspaceSize``, a workspace
``malloc``, phase 2, ``synchronize_stream``, ``memcpy`` back, then destroy and free. The result
is compared with ``opsnn.reference`` (default) or with ``torch.ops.aten`` (``--golden torch``,
as CANN's own harness does), at the case's tolerance (bit-exact for the atk "md5" standard and a
csv row that gives none: ``compare``). opsnn's kernels are meant to be bit-exact,
so every row also says whether it is (NaN counts equal to NaN).

Kernel cases are mapped onto the aclnn API: ``LeakyReluGrad(gradients, features)`` ->
``aclnnLeakyReluBackward(gradOutput=gradients, self=features, selfIsResult=False)``;
``HardtanhGrad(result, grad)`` -> ``aclnnHardtanhBackward(gradOutput=grad, self=result)`` (the
kernel takes the forward input first, spec §7.1); ``LeakyRelu(x)`` -> ``aclnnLeakyRelu``;
``ClipByValueV2(x, min, max)`` -> ``aclnnHardtanh`` when min and max hold one element each. Float
kernel attrs become ``ACL_FLOAT`` scalars; an absent OPTIONAL attr takes the kernel default
(slope 0.0), an absent REQUIRED one (HardtanhGrad's min_val and max_val) makes the row malformed.
Operators that ``opsnn.aclnn`` does not provide yet are reported as SKIP, and so is a case
that phase 1 refuses with 561003 because the ``--soc`` product line has no kernel for its
operator (LeakyReluBackward on Ascend310B), and a case whose BF16 tensors or scalars the ``--soc``
dtype lists refuse (Ascend910: "needs a BF16-capable SoC"; ``bf16_refusal``). A kernel row runs as
the aclnn call would, casts included, so a dtype mix the kernel's own def has no binary for
(ops-nn's tiling refuses it: LeakyReluGrad's float16 and float32 inputs) still runs, with a note
saying so; so does a row whose ``soc_series`` names another SoC than the one run (``--soc`` picks
it). Notes never change a result. A case whose inputs do not broadcast runs too, and FAILs as the
aclnn call refuses it (161002).

Results: PASS (within tolerance), FAIL, SKIP (with the reason; never silently dropped) and DOC (a
``--golden torch`` difference that a documented decision explains element by element:
DECISIONS 2, the float32 slope for DOUBLE tensors; DECISIONS 8, NaN in self for HardtanhBackward).
The exit status is 1 if any case fails, else 0; a file that holds no case is a usage error (2).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import dataclasses
import importlib.util
import json
import math
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import ml_dtypes
import numpy as np
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from opsnn import golden_files, opdef, registry
from opsnn import results as report
from opsnn._core import interrupts, memory, platform
from opsnn._core.dtypes import DataType, Format, from_numpy, promote_type, to_numpy
from opsnn._core.extras import install_hint
from opsnn._core.shape import broadcast_shape
from opsnn._core.status import Status
from opsnn.cli_args import (
    OutputError,
    PipeConsole,
    int_at_least,
    output_folder_refusal,
    read_json,
)
from opsnn.results import FAIL, SKIP, Result
from opsnn.verify.bindings import OPS, Arrays, OpBinding, Scalars
from opsnn.verify.cases import (
    _CASES_EXPECTED,
    Case,
    ScalarSpec,
    TensorSpec,
    Tolerance,
    Values,
    case_filter,
    is_real,
    is_tolerance,
)
from opsnn.verify.comparison import compare, verdict
from opsnn.verify.inputs import case_rng, generate, pick_scalar, python_number

# A case with more elements than this (its largest tensor) is skipped. Measured peak: ~80 B per
# element for fp64 (inputs and output on host and "device", float64 golden and comparison
# temporaries), so 1.2e8 elements stay near 10 GB, inside a 24 GiB machine, while the next case
# sizes in CANN's files (3.5e8 fp64 elements and up, ~28 GB) do not fit. With it the three
# backward files run 249 of their 260 cases in ~70 s on 2 cores; pass a smaller value for speed.
DEFAULT_MAX_ELEMENTS = 120_000_000
# That peak per element of a case's largest tensor, rounded up: a case below --max-elements that
# needs more than the host has available now is skipped too (Linux overcommits: its arrays were
# made and the out-of-memory killer ended the run as they filled, on a host smaller than 24 GiB
# or with a larger --max-elements)
CASE_BYTES_PER_ELEMENT = 80
# ClipByValueV2 rows give no range; x uses this one, min its lower half and max its upper half,
# so that aclnnHardtanh (which rejects min > max, spec §6.1) can run them.
DEFAULT_RANGE = (-10.0, 10.0)
# Threshold standard of the aclnn ST json ("single_bm" / "default"), per output dtype, applied
# element-wise as rtol = atol; "md5" is bit-exact. float64 reuses the float32 value.
_ATK_THRESHOLDS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-13, "float64": 2.0**-13}
# The standards an aclnn ST json's "acc" names (CANN's files use these three), "md5" where none.
_ATK_STANDARDS = ("md5", "single_bm", "default")

# Kernel attrs are C floats, so they reach aclnn as ACL_FLOAT scalars.
_ATTR_DTYPE = np.dtype(np.float32)

# Case files are read as UTF-8, a byte-order mark (an editor's on Windows) skipped: one had made a
# json file unreadable (JSONDecodeError) and a csv file's first field unknown ("no 'testcase_name'").
_ENCODING = "utf-8-sig"

_DTYPE_NAMES = {
    "float32": np.float32, "fp32": np.float32, "float": np.float32,
    "float16": np.float16, "fp16": np.float16, "half": np.float16,
    "bfloat16": ml_dtypes.bfloat16, "bf16": ml_dtypes.bfloat16,
    "float64": np.float64, "fp64": np.float64, "double": np.float64,
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "bool": np.bool_,
}


# ---- parsing: shared helpers --------------------------------------------------------------------

def _cut(text: str, limit: int = 60) -> str:
    """``text`` (what a case file holds, as a message quotes it: ``repr`` of a csv field,
    ``json.dumps`` of a json value) cut to ``limit`` characters: a 10 KB field was quoted whole."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


# A number read from a case file beyond this was an OverflowError where it met float()
_BEYOND_FLOAT = "beyond a float's range (+-1.8e308), which no dtype holds"


def _within_float(value) -> bool:
    """Whether the number ``value`` converts to a float (a Python int of 309 digits or more does
    not: OverflowError)."""
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _dtype(name: str, where: str) -> np.dtype:
    """The dtype a case file's name gives (``_DTYPE_NAMES``, any case); ValueError naming
    ``where`` (the field or the input) and the names it takes otherwise."""
    try:
        return np.dtype(_DTYPE_NAMES[str(name).strip().lower()])
    except KeyError:
        raise ValueError(f"{where}: unknown dtype name {_cut(repr(name))}; case files name them "
                         f"{', '.join(_DTYPE_NAMES)}") from None


def _format(name, field: str) -> str:
    """The aclFormat name (``Format``'s, ``ND``) a case file's ``field`` gives, in any case and
    spacing, as ``_dtype`` reads a dtype; ValueError naming the field and the names it takes
    otherwise (an unknown name had run as ND, saying nothing)."""
    text = name.strip().upper() if isinstance(name, str) else None
    if text not in Format.__members__ or text == Format.UNDEFINED.name:
        raise ValueError(f"{field}: unknown format name {_cut(repr(name))}; case files name them "
                         f"{', '.join(f.name for f in Format if f != Format.UNDEFINED)}")
    return text


def _literal(text: str, field: str):
    """A Python literal from a case file's ``field``; bare ``nan``/``inf``/``-inf`` are read as
    floats. ValueError naming the field where the text is no literal, or holds an integer of
    more digits than Python converts (``sys.set_int_max_str_digits``: 4300 by default)."""
    quoted = re.sub(r"(-?)\b(nan|inf)\b", r'"\1\2"', text.strip())
    try:
        return _floats_in(ast.literal_eval(quoted)) if quoted else None
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as exc:
        if "integer string conversion" in str(exc):  # (CPython's words for its digit limit)
            limit = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
            raise ValueError(f"{field} {_cut(repr(text.strip()))} holds an integer of more than {limit} digits, "
                             "more than Python reads (its int/str digit limit: sys.set_int_max_str_digits)") from None
        raise ValueError(f"{field} {_cut(repr(text.strip()))} is not a Python literal (numbers, strings, "
                         "tuples, lists, dicts; bare nan and inf)") from None


def _floats_in(value):
    if isinstance(value, str) and value.lstrip("-") in ("nan", "inf"):
        return float(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_floats_in(v) for v in value)
    if isinstance(value, dict):
        return {k: _floats_in(v) for k, v in value.items()}
    return value


def _broadcast(shapes: Iterable[tuple[int, ...]]) -> tuple[int, ...]:
    """The out shape of a case that gives none: its inputs' broadcast shape, in Python ints (no
    NumPy limit on its size: a case too large to run is skipped for size, not refused as a
    file). Where the inputs do not broadcast, the largest input's shape (the first of equals):
    the case still runs, and the aclnn call refuses it (161002, naming both shapes), as a csv
    row that gives its out shape does; its out then costs no more than that input."""
    shapes = list(shapes)
    result: tuple[int, ...] | None = ()
    for shape in shapes:
        result = broadcast_shape(result, shape)
        if result is None:
            return max(shapes, key=math.prod)
    return result


def _dims(shape, role: str) -> tuple[int, ...]:
    """A shape from a case file, read before anything broadcasts it: a list or tuple of
    non-negative integer dims (ValueError naming ``role`` otherwise)."""
    if not golden_files.is_dims(shape):
        shown = list(shape) if isinstance(shape, (list, tuple)) else shape
        raise ValueError(f"{role} has shape {_cut(str(shown))}; dims must be non-negative integers up to 2**63 - 1 "
                         "(an aclTensor's dims are int64)")
    return tuple(shape)


# ---- parsing: kernel ST csv ---------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _Kernel:
    """How a kernel op's row maps onto an aclnn operator."""

    op: str
    inputs: tuple[str, ...]  # aclnn role of each kernel input, in kernel order
    attrs: dict[str, tuple[str, float | None]]  # kernel attr -> (aclnn scalar role, default; None: REQUIRED)
    flags: tuple[tuple[str, bool], ...] = ()
    bound_inputs: tuple[str, ...] = ()  # kernel inputs that become aclnn scalars (one element each)


_KERNELS = {
    "leaky_relu_grad": _Kernel("LeakyReluBackward", ("gradOutput", "self"),
                               {"negative_slope": ("negativeSlope", 0.0)}, (("selfIsResult", False),)),
    "hardtanh_grad": _Kernel("HardtanhBackward", ("self", "gradOutput"),
                             {"min_val": ("min", None), "max_val": ("max", None)}),
    "leaky_relu": _Kernel("LeakyRelu", ("self",), {"negative_slope": ("negativeSlope", 0.0)}),
    "clip_by_value_v2": _Kernel("Hardtanh", ("self", "min", "max"), {}, (), ("min", "max")),
}


def parse_csv(path: str | Path) -> list[Case]:
    """All rows of a kernel ST csv as cases (ValueError naming the file line, case and field of
    a malformed one, and the line of a row the csv module cannot read: a field of more than its
    131072 characters). Header names are read stripped (``a, op_name``), and a row of empty cells
    (``,,,,``, which spreadsheets write) is skipped."""
    with open(path, newline="", encoding=_ENCODING) as f:
        # restval: a row shorter than the header reads its missing cells as empty, which each field's
        # reader names (they were None, a TypeError or AttributeError naming no field)
        rows = csv.DictReader(f, restval="")
        cases = []
        try:
            rows.fieldnames = [str(name).strip() for name in rows.fieldnames or ()]
            for row in rows:
                if any(str(cell).strip() for cell in row.values()):
                    where = f"line {rows.line_num} (case {len(cases)})"  # (the line a row ends on)
                    cases.append(_parsed(where, _csv_case, str(path), len(cases), row))
        except csv.Error as exc:  # (a traceback, exit 1); line_num: the lines of the rows read whole
            which = f"(case {len(cases)})" if rows.line_num else "(the header)"
            raise ValueError(f"line {rows.line_num + 1} {which}: {exc}") from None
        return cases


def _csv_case(file: str, index: int, row: dict[str, str]) -> Case:
    kernel = _KERNELS.get(row["op_name"].strip())
    if kernel is None:
        raise ValueError(f"unknown kernel op {_cut(repr(row['op_name']))} (known: {', '.join(_KERNELS)})")
    dtypes = [_dtype(d, "input_dtypes")
              for d in _entries(row["input_dtypes"], "input_dtypes", "input", "('float16', 'float16')")]
    shapes = _entries(row.get("input_shapes") or row["input_ori_shapes"], "input_shapes", "input", "((2, 3), (2, 3))")
    if not len(dtypes) == len(shapes) == len(kernel.inputs):
        raise ValueError(f"{row['op_name'].strip()} takes {len(kernel.inputs)} inputs; input_dtypes names "
                         f"{len(dtypes)}, input_shapes {len(shapes)}")
    shapes = [_dims(shape, role) for shape, role in zip(shapes, kernel.inputs)]
    formats_text = row.get("input_formats") or row.get("input_ori_formats") or ""
    formats = ([_format(f, "input_formats") for f in _entries(formats_text, "input_formats", "input", "('ND', 'ND')")]
               if formats_text.strip() else [])
    values = _csv_values(row.get("input_data_ranges", ""), len(dtypes), kernel)
    specs = [TensorSpec(role, dt, shape, val, formats[i] if i < len(formats) else "ND")
             for i, (role, dt, shape, val) in enumerate(zip(kernel.inputs, dtypes, shapes, values))]
    tensors = tuple(s for s in specs if s.role not in kernel.bound_inputs)
    scalars = tuple(_csv_attr_scalars(kernel, _literal(row.get("attributes") or "{}", "attributes") or {}))
    scalars += tuple(ScalarSpec(s.role, s.dtype, s.values) for s in specs if s.role in kernel.bound_inputs)
    unsupported = _per_element_bounds(specs, kernel)
    out_shapes = row.get("output_shapes", "")
    out_shape = (_dims(_entries(out_shapes, "output_shapes", "output", "((2, 3),)")[0], "out")
                 if out_shapes[:1] in ("(", "[")
                 else _broadcast(s.shape for s in tensors))  # ClipByValueV2 rows say "ELEWISE"
    out_formats_text = row.get("output_formats") or ""
    out_formats = ([_format(f, "output_formats") for f in _entries(out_formats_text, "output_formats", "output",
                                                                    "('ND',)")]
                   if out_formats_text.strip() else ["ND"])
    out_dtype = _dtype(_entries(row["output_dtypes"], "output_dtypes", "output", "('float16',)")[0], "output_dtypes")
    note = _kernel_dtype_note(row["op_name"], kernel.op, [*dtypes, out_dtype])
    soc_series = tuple(re.findall(r"\w+", row.get("soc_series") or ""))  # (a name, or a list of them)
    return Case(file, index, row["testcase_name"], kernel.op, tensors, scalars, kernel.flags, out_dtype, out_shape,
                out_formats[0], _csv_tolerance(row), unsupported, note, soc_series)


def _entries(text: str, field: str, per: str, example: str) -> list:
    """The entries of a csv cell that holds a tuple or list of them, one ``per`` input or output;
    ValueError naming ``field``, what it takes and what it holds otherwise (an empty cell, a
    number, an empty tuple: these had raised a TypeError or IndexError naming no field)."""
    value = _literal(text, field)
    if not isinstance(value, (list, tuple)) or not value:
        found = _cut(repr(text.strip())) if text.strip() else "empty"
        raise ValueError(f"{field} is {found}; expected a tuple of one entry per {per}, such as {example}")
    return list(value)


def _kernel_dtype_note(op_name: str, op: str, dtypes: list[np.dtype]) -> str:
    """A note where the kernel's own def has no binary for the row's dtypes (inputs, then the
    output), which its tiling refuses too (LeakyReluGradTiling::DoOpTiling: one dtype throughout),
    while the aclnn call verify runs may cast them; "" otherwise, and for ClipByValueV2, an
    ops-math kernel whose def opsnn does not model."""
    kernel = next((d for d in opdef.OPDEFS if d.name.lower() == op_name.strip().replace("_", "")), None)
    acl = [from_numpy(d) for d in dtypes]
    # (an all-DOUBLE row goes to the op's AICPU kernel, as aclnn hands it there)
    if kernel is None or kernel.match_dtypes(acl) is not None or all(d in kernel.aicpu_dtypes for d in acl):
        return ""
    rows = " | ".join(",".join(d.name for d in row) for row in kernel.dtype_rows)
    given = f"{', '.join(d.name for d in acl[:-1])} -> {acl[-1].name}"
    runs = OPS[op].aclnn
    return f"the {kernel.name} kernel itself refuses {given} (its def's binaries: {rows}); the row runs as {runs}"


def _csv_values(text: str, count: int, kernel: _Kernel) -> list[Values]:
    """Per-input value specs: one range per input, one range for all, or the default range."""
    ranges = _literal(text, "input_data_ranges") if text and text.strip() else None
    if not ranges:
        low, high = DEFAULT_RANGE
        middle = (low + high) / 2
        split = {"min": Values(low, middle), "max": Values(middle, high)}
        return [split.get(role, Values(low, high)) for role in kernel.inputs[:count]]
    if not isinstance(ranges, (list, tuple)) or not all(
            isinstance(r, (list, tuple)) and len(r) >= 2 and all(map(is_real, r)) for r in ranges):
        raise ValueError(f"input_data_ranges {_cut(repr(text.strip()))} holds no (low, high[, special values]) range per "
                         "input; expected one per input or one for all, such as ((-1, 1),)")
    huge = next((x for r in ranges for x in r if not _within_float(x)), None)
    if huge is not None:  # (Values.is_constant's isnan and the specials' checks raised OverflowError)
        raise ValueError(f"input_data_ranges holds {_cut(repr(huge))}: {_BEYOND_FLOAT}")
    if len(ranges) not in (1, count):
        raise ValueError(f"input_data_ranges gives {len(ranges)} ranges for {count} inputs "
                         "(one per input, or one for all)")
    ranges = list(ranges) if len(ranges) == count else [ranges[0]] * count
    return [Values(r[0], r[1], tuple(r[2:])) for r in ranges]


def _csv_attr_scalars(kernel: _Kernel, attrs) -> Iterator[ScalarSpec]:
    if not isinstance(attrs, dict):  # a malformed file: ValueError, as every parsing refusal here
        raise ValueError(f"attributes must be a dict of attr values, got {_cut(repr(attrs))}")  # noqa: TRY004
    unknown = set(attrs) - set(kernel.attrs)
    if unknown:
        raise ValueError(f"attributes {_cut(repr(sorted(map(str, unknown))))} are not attrs of {kernel.op}'s kernel "
                         f"(it takes {sorted(kernel.attrs) or 'none'})")
    missing = [attr for attr, (_, default) in kernel.attrs.items() if default is None and attr not in attrs]
    if missing:
        raise ValueError(f"attributes lack {', '.join(missing)}, which {kernel.op}'s kernel requires "
                         "(REQUIRED in its op definition, spec section 7.1)")
    for attr, (role, default) in kernel.attrs.items():
        value = attrs.get(attr, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"attribute {attr} is {_cut(repr(value))}; a number expected")  # noqa: TRY004 - malformed file
        if not _within_float(value):
            raise ValueError(f"attribute {attr} is {_cut(repr(value))}: {_BEYOND_FLOAT} (kernel attrs are C floats)")
        value = float(value)
        yield ScalarSpec(role, _ATTR_DTYPE, Values.constant(value))


def _per_element_bounds(specs: list[TensorSpec], kernel: _Kernel) -> str | None:
    wide = [s for s in specs if s.role in kernel.bound_inputs and math.prod(s.shape) != 1]
    if not wide:
        return None
    shapes = ", ".join(f"{s.role} {list(s.shape)}" for s in wide)
    return f"per-element bounds ({shapes}): aclnnHardtanh bounds are scalars"


def _csv_tolerance(row: dict[str, str]) -> Tolerance:
    """``precision_tolerances`` holds (relative, absolute) per output; else ``absolute_precision``
    serves as both; with neither the case must be bit-exact (opsnn's reading of the format)."""
    text = row.get("precision_tolerances") or ""
    pairs = _literal(text, "precision_tolerances")
    if pairs:
        first = pairs[0] if isinstance(pairs, (list, tuple)) else None
        if not (isinstance(first, (list, tuple)) and len(first) == 2 and all(map(is_tolerance, first))):
            raise ValueError(f"precision_tolerances {_cut(repr(text.strip()))} holds no (relative, absolute) pair of "
                             "finite numbers >= 0 per output; expected such as ((0.001, 0.001),)")
        rtol, atol = map(float, first)
        return Tolerance(rtol, atol, "precision_tolerances")
    absolute = (row.get("absolute_precision") or "").strip()
    if absolute:
        try:
            value = float(absolute)
        except ValueError:
            value = math.nan
        if not is_tolerance(value):
            raise ValueError(f"absolute_precision is {_cut(repr(absolute))}; expected a finite number >= 0 such as 1e-08")
        return Tolerance(value, value, "absolute_precision")
    return Tolerance(0.0, 0.0, "exact")


# ---- parsing: aclnn ST json ---------------------------------------------------------------------

# json input names -> aclnn argument roles (names not listed are already roles: gradOutput, self)
_ATK_ROLES = {"x": "self", "a": "negativeSlope", "clipValueMin": "min", "clipValueMax": "max"}


def parse_json(path: str | Path) -> list[Case]:
    """All cases of an aclnn ST json (ValueError naming the case of a malformed one)."""
    with open(path, encoding=_ENCODING) as f:
        cases = read_json(f.read())
    if cases == {}:  # holds no case, as [] does
        return []
    if not isinstance(cases, list):  # (null, 0 and false too: enumerate() met them as a TypeError)
        held = f"a {type(cases).__name__}" if isinstance(cases, dict) else _json_text(cases)
        raise ValueError(f"the file holds {held}; an aclnn ST json is a list of cases")  # noqa: TRY004
    return [_parsed(f"case {i}", _json_case, str(path), i, case) for i, case in enumerate(cases)]


def _json_case(file: str, index: int, case: dict) -> Case:
    # (each check below names what a field holds where the code after it would raise a TypeError
    # or AttributeError naming no field)
    if not isinstance(case, dict):
        raise ValueError(f"the case is {_json_text(case)}; expected an object with the fields "  # noqa: TRY004 - malformed file
                         "aclnn_name and inputs")
    if not isinstance(case["aclnn_name"], str):
        raise ValueError(f"aclnn_name is {_json_text(case['aclnn_name'])}; expected an operator name "  # noqa: TRY004
                         'such as "aclnnLeakyReluBackward"')
    op = case["aclnn_name"].removeprefix("aclnn")  # the forward files name "LeakyRelu", "Hardtanh"
    if op not in OPS:
        raise ValueError(f"unknown operator {_cut(repr(case['aclnn_name']))} (known: aclnn{', aclnn'.join(OPS)})")
    items = case["inputs"]
    if not isinstance(items, list):
        raise ValueError(f"inputs is {_json_text(items)}; expected a list of objects, one per tensor, "  # noqa: TRY004
                         "scalar and attr")
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ValueError(f"inputs[{i}] is {_json_text(item)}; expected an object whose name is a string "  # noqa: TRY004
                             'such as "gradOutput"')
    tensors, scalars, flags = [], [], []
    for item in items:
        role = _ATK_ROLES.get(item["name"], item["name"])
        if item["type"] == "tensor":
            tensors.append(TensorSpec(role, _dtype(item["dtype"], f"{role}'s dtype"), _dims(item["shape"], role),
                                      _json_values(item["range_values"], role)))
        elif item["type"] == "scalar":
            scalars.append(ScalarSpec(role, _dtype(item["dtype"], f"{role}'s dtype"),
                                      _json_values(item["range_values"], role)))
        else:
            flags.append((role, _json_flag(item["range_values"], role)))
    _check_arguments(op, tensors, scalars, flags)  # (before the out dtype, which reads them)
    out_dtype = _json_out_dtype(op, tensors)
    name = f"{case['aclnn_name']}_{case.get('id', index)}"
    return Case(file, index, name, op, tuple(tensors), tuple(scalars), tuple(flags), out_dtype,
                _broadcast(t.shape for t in tensors), "ND", _json_tolerance(case, out_dtype))


def _json_text(value, limit: int = 60) -> str:
    """``value`` as the file writes it, cut to ``limit`` characters (a message quotes it)."""
    return _cut(json.dumps(value), limit)


def _json_values(spec, role: str) -> Values:
    """``[low, high]`` range, one fill value, or a one-element list holding one (ValueError
    naming ``role`` otherwise)."""
    items = spec if isinstance(spec, list) else [spec]
    numbers = [_json_number(v) for v in items]
    if len(numbers) not in (1, 2) or None in numbers:
        raise ValueError(f"{role}'s range_values is {_json_text(spec)}; expected a [low, high] range or one value "
                         '(a number, "nan", "inf" or "-inf", alone or in a one-element list)')
    return Values(*numbers) if len(numbers) == 2 else Values.constant(numbers[0])


def _json_number(value) -> int | float | None:
    """A number (an integer kept as one: ``Values``), or a string ``float`` reads ("nan", "inf",
    "-inf") as a float; None for anything else (a boolean included: true is no value to fill a
    tensor with) and for an integer no float holds (no dtype does)."""
    if not isinstance(value, (int, float, str)) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return value if isinstance(value, int) else number


def _json_flag(spec, role: str) -> bool:
    """A bool attr; odd generated values (``["inf"]``, ``["-inf"]``) count by truthiness -> True.
    ValueError naming ``role`` for a value that is neither (null, "false", a list)."""
    value = spec[0] if isinstance(spec, list) and len(spec) == 1 else spec
    number = value if isinstance(value, bool) else _json_number(value)
    if number is None:
        raise ValueError(f"flag {role}'s range_values is {_json_text(spec)}; expected true or false (a number, "
                         '"nan", "inf" or "-inf" counts as true unless it is 0)')
    return bool(number)


def _json_out_dtype(op: str, tensors: list[TensorSpec]) -> np.dtype:
    """LeakyReluBackward's out is PromoteType(gradOutput, self); the others keep self's dtype."""
    if op == "LeakyReluBackward":
        return to_numpy(promote_type(from_numpy(tensors[0].dtype), from_numpy(tensors[1].dtype)))
    return next(t.dtype for t in tensors if t.role == "self")


def _json_tolerance(case: dict, out_dtype: np.dtype) -> Tolerance:
    """The tolerance of ``standard.acc``: bit-exact for "md5" (and where none is given), else the
    threshold of the out dtype (``_ATK_THRESHOLDS``); ValueError for a name not in
    ``_ATK_STANDARDS``."""
    if not isinstance(case.get("standard", {}), dict):
        raise ValueError(f"standard is {_json_text(case['standard'])}; expected an object such as "  # noqa: TRY004
                         '{"acc": "single_bm"}')
    standard = case.get("standard", {}).get("acc", "md5")
    if standard not in _ATK_STANDARDS:  # (a typo had got a threshold: "MD5" ran at 2**-13, not bit-exact)
        raise ValueError(f"standard.acc is {_json_text(standard)}; expected one of "
                         f"{', '.join(map(json.dumps, _ATK_STANDARDS))} (as written: names are case-sensitive)")
    threshold = _ATK_THRESHOLDS.get(out_dtype.name)
    if standard == "md5" or threshold is None:
        return Tolerance(0.0, 0.0, standard)
    return Tolerance(threshold, threshold, standard)


def _parsed(where: str, parse: Callable, file: str, index: int, item) -> Case:
    """``parse(file, index, item)``, checked (``_checked``); a malformed item raises ValueError
    that says ``where`` it is and what is wrong with it."""
    try:
        return _checked(parse(file, index, item))
    except KeyError as exc:
        raise ValueError(f"{where}: no {exc.args[0]!r} field") from exc
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from exc
    except (TypeError, IndexError, AttributeError) as exc:
        raise ValueError(f"{where}: {type(exc).__name__}: {exc}") from exc


def _check_arguments(op: str, tensors, scalars, flags) -> None:
    """ValueError unless the tensors, scalars and flags are each of ``op``'s, once."""
    binding = OPS[op]
    given = {"tensors": [t.role for t in tensors], "scalars": [s.role for s in scalars],
             "flags": [name for name, _ in flags]}
    for kind, wanted in (("tensors", binding.tensors), ("scalars", binding.scalars), ("flags", binding.flags)):
        if sorted(given[kind]) != sorted(wanted):
            raise ValueError(f"{binding.aclnn} takes the {kind} {list(wanted)}; the case gives {given[kind]}")


def _checked(case: Case) -> Case:
    """``case`` if verify can build its call (its shapes' dims and format names were checked as
    they were read): each of the operator's tensors, scalars and flags once, value ranges that
    are finite, do not run downward and (for an integer input) hold an integer the dtype holds
    (a constant must be one: the cast would wrap or truncate it), and no NaN or infinity where
    an integer or bool input is to hold it. ValueError otherwise (the usage error of a
    malformed file, not a FAIL of the operator)."""
    _check_arguments(case.op, case.tensors, case.scalars, case.flags)
    for spec in (*case.tensors, *case.scalars):
        v = spec.values
        ends = (v.low,) if v.is_constant else (v.low, v.high)
        if spec.dtype.kind in "biu" and not all(map(math.isfinite, ends)):
            raise ValueError(f"{spec.role} is {spec.dtype}, which cannot hold {', '.join(map(str, ends))}")
        if spec.dtype.kind in "iu":
            info = np.iinfo(spec.dtype)
            if v.is_constant and not info.min <= v.low <= info.max:  # (the cast would wrap it)
                raise ValueError(f"{spec.role} is {spec.dtype} [{info.min}, {info.max}], which cannot hold {v.low}")
            if v.is_constant and v.low != math.floor(v.low):
                raise ValueError(f"{spec.role} is {spec.dtype}, and its value {v.low} is no integer (the cast "
                                 "would truncate it)")
            if not v.is_constant and (v.high < info.min or v.low > info.max):  # (a range is clipped to it)
                raise ValueError(f"{spec.role} is {spec.dtype} [{info.min}, {info.max}], and its range "
                                 f"[{v.low}, {v.high}] holds none of its values")
        if v.is_constant:
            continue
        if v.low > v.high:
            raise ValueError(f"{spec.role}'s range [{v.low}, {v.high}] runs downward")
        if not all(map(math.isfinite, ends)):
            raise ValueError(f"{spec.role}'s range [{v.low}, {v.high}] is not finite (NaN and infinities "
                             "are special values: a range's third and later entries)")
        if spec.dtype.kind in "iu" and math.ceil(v.low) > math.floor(v.high):
            raise ValueError(f"{spec.role} is {spec.dtype}, and its range [{v.low}, {v.high}] holds no integer")
    for spec in (*case.tensors, *case.scalars):
        _check_integer_specials(spec)
    return case


def _check_integer_specials(spec: TensorSpec | ScalarSpec) -> None:
    """ValueError unless an integer or bool input's special values are each one its dtype holds
    (they are injected as they are: a NaN, 2.5 or 300 in an int8 had been dropped silently)."""
    if spec.dtype.kind not in "biu":
        return
    low, high = (0, 1) if spec.dtype.kind == "b" else (int(np.iinfo(spec.dtype).min), int(np.iinfo(spec.dtype).max))
    for value in spec.values.specials:
        if not (math.isfinite(value) and value == math.floor(value) and low <= value <= high):
            raise ValueError(f"{spec.role} is {spec.dtype} (integers {low} to {high}), which cannot hold its "
                             f"special value {value}")


def load_cases(path: str | Path) -> list[Case]:
    """Cases of one file, by extension (``.csv`` kernel ST, ``.json`` aclnn ST)."""
    suffix = Path(path).suffix.lower()
    parse = {".csv": parse_csv, ".json": parse_json}.get(suffix)
    if parse is None:
        raise ValueError(f"{path}: expected a .csv (kernel ST) or .json (aclnn ST) case file")
    kind = "ttk kernel ST csv" if suffix == ".csv" else "atk aclnn ST json"
    try:
        cases = parse(path)
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as exc:  # JSONDecodeError too
        why = str(exc) if type(exc) is ValueError else f"{type(exc).__name__}: {exc}"
        raise ValueError(f"{path}: not a readable {kind} case file ({why})") from exc
    if not cases:  # an empty file, a header alone, '{}': a green run of nothing would hide it
        raise ValueError(f"{path}: holds no case; expected a case file ({kind}) with at least one")
    return cases


# ---- running one case through the acl runtime ---------------------------------------------------

class CaseError(Exception):
    """A runtime or operator call of a case returned a failure status (``status``, None where
    no call returned one)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class Session:
    """One acl session for a verify run: init, device 0, one stream; torn down in reverse."""

    def __init__(self):
        from opsnn import acl, aclnn

        self.acl, self.aclnn = acl, aclnn
        self.stream = None
        self._owns_init = False
        self.dump_labels: dict[str, str] = {}  # case file (resolved) -> its --dump folder name
        self.dump_written: list[Path] = []     # the case folders this run wrote, in order

    def __enter__(self) -> Session:
        ret = self.acl.init()
        self._owns_init = ret == self.acl.ACL_SUCCESS  # else someone else initialised acl
        _check(self.acl.rt.set_device(0), "acl.rt.set_device", self.acl)
        self.stream, ret = self.acl.rt.create_stream()
        _check(ret, "acl.rt.create_stream", self.acl)
        return self

    def __exit__(self, *exc) -> None:
        self.acl.rt.destroy_stream(self.stream)
        self.acl.rt.reset_device(0)
        if self._owns_init:
            self.acl.finalize()

    def missing(self, binding: OpBinding) -> bool:
        return not all(hasattr(self.aclnn, n) for n in (binding.aclnn, binding.aclnn + "GetWorkspaceSize"))


def _check(ret: int, call: str, acl) -> None:
    """Raise CaseError with the status and acl's recent error message unless ``ret`` is 0."""
    if ret != 0:
        message = acl.get_recent_err_msg()
        raise CaseError(f"{call} returned {ret}" + (f": {message}" if message else ""), ret)


def run_aclnn(session: Session, binding: OpBinding, case: Case, inputs: Arrays, scalars: Scalars) -> np.ndarray:
    """Run one case the way a CANN user does; returns the output copied back to the host."""
    acl = session.acl
    with contextlib.ExitStack() as stack:
        tensors = [_device_tensor(stack, acl, inputs[role], _spec(case, role).format)[0]
                   for role in binding.tensors]
        out = np.empty(case.out_shape, case.out_dtype)
        out_tensor, out_addr = _device_tensor(stack, acl, out, case.out_format, upload=False)
        handles = [_scalar(stack, acl, scalars[role]) for role in binding.scalars]
        flags = [dict(case.flags)[name] for name in binding.flags]
        size, executor, ret = getattr(session.aclnn, binding.aclnn + "GetWorkspaceSize")(
            *tensors, *handles, *flags, out_tensor)
        _check(ret, binding.aclnn + "GetWorkspaceSize", acl)
        workspace = _malloc(stack, acl, size) if size > 0 else None
        _check(getattr(session.aclnn, binding.aclnn)(workspace, size, executor, session.stream), binding.aclnn, acl)
        _check(acl.rt.synchronize_stream(session.stream), "acl.rt.synchronize_stream", acl)
        _check(acl.rt.memcpy(out, out.nbytes, out_addr, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST),
               "acl.rt.memcpy (device to host)", acl)
    return out


def _spec(case: Case, role: str) -> TensorSpec:
    return next(t for t in case.tensors if t.role == role)


def _malloc(stack: contextlib.ExitStack, acl, nbytes: int) -> int:
    # aclrtMalloc refuses 0 bytes; an empty tensor still needs an address to describe.
    addr, ret = acl.rt.malloc(max(nbytes, 1), acl.ACL_MEM_MALLOC_HUGE_FIRST)
    _check(ret, f"acl.rt.malloc({nbytes})", acl)
    stack.callback(acl.rt.free, addr)
    return addr


def _device_tensor(stack: contextlib.ExitStack, acl, host: np.ndarray, fmt: str, upload: bool = True):
    """Device copy of a host array and its contiguous aclTensor; returns (tensor, address)."""
    addr = _malloc(stack, acl, host.nbytes)
    if upload and host.nbytes:
        _check(acl.rt.memcpy(addr, host.nbytes, np.ascontiguousarray(host), host.nbytes,
                             acl.ACL_MEMCPY_HOST_TO_DEVICE), "acl.rt.memcpy (host to device)", acl)
    strides = [math.prod(host.shape[i + 1:]) for i in range(host.ndim)]
    acl_format = int(Format[fmt])  # (a name _format read)
    tensor = acl.create_tensor(list(host.shape), int(from_numpy(host.dtype)), strides, 0, acl_format,
                               list(host.shape), addr)
    if tensor is None:
        raise CaseError(f"acl.create_tensor failed: {acl.get_recent_err_msg()}")
    stack.callback(acl.destroy_tensor, tensor)
    return tensor, addr


def _scalar(stack: contextlib.ExitStack, acl, value: np.generic):
    dtype = from_numpy(value.dtype)
    python_value = python_number(value)
    handle = acl.create_scalar(python_value, int(dtype))
    if handle is None:
        raise CaseError(f"acl.create_scalar({python_value!r}, {DataType(dtype).acl_name}) failed: "
                        f"{acl.get_recent_err_msg()}")
    stack.callback(acl.destroy_scalar, handle)
    return handle


# ---- one case, end to end -----------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Settings:
    """What a verify run was asked to do (also written to ``--json``)."""

    golden: str = "reference"
    seed: int = 0
    max_elements: int = DEFAULT_MAX_ELEMENTS
    soc: str = platform.DEFAULT_SOC
    dump: str | None = None  # a folder for each run case's tensors (opsnn.golden_files)


def skip_reason(case: Case, settings: Settings, session: Session) -> str | None:
    """Why a case is not run, or None."""
    if case.unsupported:
        return case.unsupported
    binding = OPS[case.op]
    if session.missing(binding):
        return f"operator not implemented: no {binding.aclnn} in opsnn.aclnn"
    if case.numel > settings.max_elements:
        return f"{case.numel:,} elements > --max-elements {settings.max_elements:,}"
    beyond = memory.beyond_available(case.numel * CASE_BYTES_PER_ELEMENT, f"the case ({case.numel:,} elements)")
    if beyond:
        return beyond
    unheld = _numpy_refusal(case)
    if unheld:
        return unheld
    return bf16_refusal(case, settings.soc)


def bf16_refusal(case: Case, soc: str) -> str | None:
    """Why ``soc``, whose dtype lists lack BF16, does not run a case made for a BF16-capable SoC,
    or None: its arguments whose BF16 those lists refuse (161002 from its aclnn call; the
    scalars' lists too, spec §3.2), or an ``ascend910B2`` name prefix (spec §9.1: such a case
    runs with the 910B lists). Such a case is another product line's, as a 561003 one is: its
    FAIL would say nothing of opsnn. Read from the OpSpecs' lists, so a BF16 argument the call
    does not check (LeakyRelu's slope, LeakyReluBackward's out) runs, as there the call does."""
    profile = platform.get_profile(soc)
    if profile.uses_910b_dtype_list:
        return None
    binding = OPS[case.op]
    spec = registry.get(binding.aclnn)
    params = dict(zip((*binding.tensors, *binding.scalars, "out"), (*spec.inputs, *spec.scalars, spec.output)))
    dtypes = {x.role: x.dtype for x in (*case.tensors, *case.scalars)} | {"out": case.out_dtype}
    refused = [role for role, param in params.items()  # in the aclnn call's order (a csv row's may differ)
               if from_numpy(dtypes[role]) == DataType.BF16 and param.dtypes
               and DataType.BF16 not in param.dtypes.for_profile(profile)]
    why = [f"{soc}'s dtype lists lack BF16, so its aclnn call refuses the BF16 {', '.join(refused)} (161002)"
           ] if refused else []
    if case.name.lower().startswith("ascend910b2"):
        why.append("its ascend910B2 name prefix marks it for the 910B dtype lists")
    capable = [p.name for p in platform.PROFILES.values() if p.uses_910b_dtype_list]
    return f"needs a BF16-capable SoC: {'; '.join(why)}; --soc {' / '.join(capable)} runs it" if why else None


def verify_case(case: Case, settings: Settings, session: Session) -> Result:
    """Generate, run, compare one case; never raises for a case-level problem."""
    result = Result(case.file, case.index, case.name, case.op, case.dtype_label, case.shape_label,
                    case.numel, SKIP)
    other_soc = case.soc_series and settings.soc.lower() not in {s.lower() for s in case.soc_series}
    soc_note = f"soc_series names {', '.join(case.soc_series)}; run on {settings.soc} (--soc picks the SoC)"
    result.note = "; ".join(filter(None, (case.note, soc_note if other_soc else "")))
    if settings.dump:  # whatever happens below, nothing an earlier run wrote stays as if current
        golden_files.clear(_dump_folder(case, settings, session))
    reason = skip_reason(case, settings, session)
    if reason:
        result.reason = reason
        return result
    start = time.perf_counter()
    try:
        _run_and_compare(case, settings, session, result)
    except CaseError as exc:
        elsewhere = _not_on_this_soc(case, settings, exc)
        result.status, result.reason = (SKIP, elsewhere) if elsewhere else (FAIL, str(exc))
    except Exception as exc:  # noqa: BLE001 - one broken case must not stop the run
        result.status, result.reason = FAIL, f"internal error: {type(exc).__name__}: {exc}"
    result.seconds = time.perf_counter() - start
    return result


def _numpy_refusal(case: Case) -> str | None:
    """Why NumPy cannot hold a tensor of the case (an empty one whose other dims are huge,
    ``[2**63 - 1, 0]``: its bytes, counted without the 0, pass NumPy's limit), or None. Such a
    case is a SKIP, which verify, holding every tensor in NumPy, cannot run (it had been an
    "internal error" FAIL, though the aclnn API takes those tensors)."""
    for role, shape, dtype in [(t.role, t.shape, t.dtype) for t in case.tensors] + [("out", case.out_shape,
                                                                                  case.out_dtype)]:
        if math.prod(shape) == 0:
            try:
                np.empty(shape, dtype)
            except ValueError as exc:
                return f"NumPy cannot hold {role}'s empty shape {list(shape)} ({exc})"
    return None


def _not_on_this_soc(case: Case, settings: Settings, exc: CaseError) -> str | None:
    """Why the case is a SKIP where it failed only because the emulated SoC's product line has no
    kernel for the operator (561003 from phase 1, registry ``unsupported_socs``), else None: a
    case of another product line, as a bfloat16 case on a SoC without BF16 is. An empty case
    still runs there, as CANN's empty fast path comes before the kernel lookup."""
    binding = OPS[case.op]
    spec = registry.get(binding.aclnn)
    if exc.status != Status.ERR_INNER_FIND_KERNEL_ERROR or settings.soc not in spec.unsupported_socs:
        return None
    return (f"no {spec.kernel_name} kernel on {settings.soc}'s product line: "
            f"{binding.aclnn}GetWorkspaceSize returns {exc.status} there")


def _run_and_compare(case: Case, settings: Settings, session: Session, result: Result) -> None:
    binding = OPS[case.op]
    rng = case_rng(settings.seed, case)
    inputs = {t.role: generate(t.values, t.dtype, t.shape, rng) for t in case.tensors}
    scalars = {s.role: pick_scalar(s, rng) for s in case.scalars}
    ours = golden = None
    try:
        ours = run_aclnn(session, binding, case, inputs, scalars)
        if settings.golden == "torch":
            try:
                golden = np.asarray(binding.torch(inputs, scalars, dict(case.flags))).astype(case.out_dtype)
            except RuntimeError as exc:
                raise CaseError(f"the torch golden raised: {exc}") from None
        else:
            golden = binding.golden(inputs, scalars, case.out_dtype)
    except CaseError as exc:  # the folder holds what there is, and the verdict
        if settings.dump and not _not_on_this_soc(case, settings, exc):
            result.status, result.reason = FAIL, str(exc)
            _dump(case, settings, session, binding, inputs, scalars, golden, ours, result)
        raise
    comparison = compare(ours, golden, case.tolerance)
    result.max_abs, result.max_rel = comparison.max_abs, comparison.max_rel
    result.bit_exact, result.mismatches = comparison.bit_exact, comparison.mismatches
    explain = lambda: binding.explain(inputs, scalars, ours, golden, comparison.differs)  # noqa: E731
    result.status, result.reason = verdict(comparison, case.tolerance,
                                           explain if settings.golden == "torch" else lambda: None)
    if settings.dump:
        _dump(case, settings, session, binding, inputs, scalars, golden, ours, result)


def _dump(case: Case, settings: Settings, session: Session, binding: OpBinding, inputs: Arrays,
          scalars: Scalars, golden: np.ndarray | None, ours: np.ndarray | None, result: Result) -> None:
    """The case's tensors and what they mean, as ``opsnn.golden_files`` lays them out."""
    manifest = {"file": case.file, "index": case.index, "name": case.name, "aclnn": binding.aclnn,
                "soc": settings.soc, "seed": settings.seed,
                "scalars": {role: {"dtype": from_numpy(v.dtype).acl_name, "value": python_number(v)}
                            for role, v in scalars.items()},
                "flags": dict(case.flags), "golden": {"source": settings.golden},
                "formats": {**{t.role: t.format for t in case.tensors}, "output": case.out_format},
                "tolerance": dataclasses.asdict(case.tolerance),
                "verdict": {"status": result.status, "bit_exact": result.bit_exact,
                            "mismatches": result.mismatches, "reason": result.reason, "note": result.note}}
    folder = _dump_folder(case, settings, session)
    try:
        golden_files.write(folder, manifest, inputs, golden, ours)
    except OSError as exc:  # a full disk: the run fails (the folder was checked writable at its start)
        raise CaseError(f"--dump: cannot write the case's files: {exc}") from None
    session.dump_written.append(folder)


def _dump_folder(case: Case, settings: Settings, session: Session) -> Path:
    label = session.dump_labels.get(str(Path(case.file).resolve()), Path(case.file).name)
    return golden_files.case_folder(settings.dump, label, case.index, case.name)


# ---- CLI ----------------------------------------------------------------------------------------

def _positive_count(text: str) -> int:
    try:
        value = int(float(text))
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"expected a number of elements, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``opsnn verify``."""
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="case files: kernel ST .csv (ttk_kernel_*) or aclnn ST .json (atk_aclnn*)")
    parser.add_argument("--golden", choices=("reference", "torch"), default="reference",
                        help="compare with opsnn.reference (default) or torch.ops.aten like CANN's harness")
    parser.add_argument("--max-elements", type=_positive_count, default=DEFAULT_MAX_ELEMENTS,
                        help=f"skip cases whose largest tensor has more elements (default {DEFAULT_MAX_ELEMENTS}, "
                             "sized for a 24 GiB / 2-core machine)")
    # SUPPRESS: no default of its own, so a top-level ``opsnn --soc X verify ...`` is not overwritten
    parser.add_argument("--soc", default=argparse.SUPPRESS,
                        help=f"emulated SoC for phase 1 (default: the current one, {platform.DEFAULT_SOC} unless set)")
    parser.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the input data (default 0)")
    parser.add_argument("--cases", type=case_filter, default=None,
                        help=f"select cases: {_CASES_EXPECTED}; each must match a case")
    parser.add_argument("--json", dest="json_path", type=report.path_argument, default=None, metavar="PATH",
                        help="also write machine-readable results to PATH (- for stdout, the tables "
                             "then going to stderr); an existing PATH must be such a results file")
    parser.add_argument("--dump", type=report.path_argument, default=None, metavar="DIR",
                        help="also write each run case's inputs, golden and output as raw .bin files "
                             "(ndarray.tofile, as CANN's gen_data.py) with a case.json, under "
                             "DIR/<file>/<index>_<name>/")


def run(args: argparse.Namespace) -> int:
    """Run ``opsnn verify``; returns the exit status (1 if any case failed or the dump's index could
    not be written, 130 after Ctrl-C, which still reports the cases done, else 0)."""
    # with --json -, stdout holds the JSON alone and the tables go to stderr
    console = PipeConsole(stderr=args.json_path == "-")
    if not console.is_terminal:  # a log or pipe: wide enough that every row stays on one line
        console.width = max(console.width, report.LOG_WIDTH)
    if args.golden == "torch" and importlib.util.find_spec("torch") is None:  # before running anything
        raise ValueError(f"--golden torch needs PyTorch: {install_hint('torch')}")
    soc = getattr(args, "soc", None) or platform.current().name
    settings = Settings(args.golden, args.seed, args.max_elements, platform.get_profile(soc).name, args.dump)
    files = [(path, load_cases(path)) for path in args.files]
    if args.cases:
        args.cases.check_matches([c for _, cases in files for c in cases])
        files = [(path, [c for c in cases if args.cases(c)]) for path, cases in files]
    # the outputs are probed once the inputs have been read: a refused run leaves no folder behind
    labels = golden_files.file_labels([path for path, _ in files])
    # a --json PATH in a --dump DIR not there yet is checked once the probe has made DIR (the
    # refusal below suggests DIR/results.json: a regression breaker's first run failed on it)
    in_new_dump = bool(args.json_path and args.dump and args.json_path != "-" and not Path(args.dump).exists()
                       and Path(args.json_path).resolve().parent == Path(args.dump).resolve())
    if args.json_path:
        _check_json_beside_dump(args.json_path, args.dump,
                                {labels[str(Path(path).resolve())] for path, cases in files if cases})
        if not in_new_dump:
            report.check_writable(args.json_path, args.files)
    if args.dump:
        _check_dump_folders(args.dump, files, labels)
        refusal = output_folder_refusal("--dump", args.dump)
        if refusal:  # a misread option (usage); a folder the system will not make is an I/O failure
            raise ValueError(refusal)
        made = _missing_folders(args.dump)
        try:
            golden_files.probe(args.dump)
        except OSError as exc:
            raise OutputError("--dump", args.dump, exc, "into the folder") from None
        if in_new_dump:
            try:
                report.check_writable(args.json_path, args.files)
            except BaseException:  # refused: the folders made for the run go (none is left behind)
                for folder in made:
                    with contextlib.suppress(OSError):
                        folder.rmdir()
                raise
    start = time.perf_counter()
    with contextlib.ExitStack() as reporting:
        with platform.use_soc(settings.soc), Session() as session:
            session.dump_labels = labels
            per_file, interrupted = _run_all(files, settings, session, console)
            # held while the report is written (a breaker: a press as the index was written or
            # the tables printed lost the whole report, and the index); the run then ends with 130
            pressed = reporting.enter_context(interrupts.held(reraise=False))
            index_error = _write_index(settings, session) if settings.dump else None
        results, total, failed = _report(args, console, settings, files, per_file, interrupted, index_error,
                                         time.perf_counter() - start)
    if interrupted or pressed:
        held = "the summary above and --json hold" if args.json_path else "the summary above holds"
        print(f"opsnn verify: interrupted after {len(results)} of {total} cases; {held} those "
              f"{len(results)} (a case under way is not counted)", file=sys.stderr)
        return 130
    return 1 if failed or index_error else 0


def _report(args: argparse.Namespace, console: Console, settings: Settings, files, per_file: list[list[Result]],
            interrupted: bool, index_error: str | None, elapsed: float) -> tuple[list[Result], int, int]:
    """Print the tables, the failures and the summary line, and write ``--json``; returns the
    results, the count of cases and the count failed."""
    for (path, _), file_results in zip(files, per_file):  # (a file given twice: a table per run)
        if file_results or not interrupted:
            console.print(report.table(path, file_results))
    results = [r for file_results in per_file for r in file_results]
    for line in report.failures(results):
        console.print(line, soft_wrap=True)
    summary = report.summary(results, elapsed)
    total = sum(len(cases) for _, cases in files)
    if interrupted:
        summary["not_run"] = total - len(results)
    console.print(report.summary_line(summary, settings.golden, settings.soc, settings.seed))
    if args.json_path:
        report.write_json(args.json_path, dataclasses.asdict(settings), summary, results)
    if index_error:  # after the results: a full disk at the end must not lose the run's table and --json
        print(f"opsnn verify: {index_error}", file=sys.stderr)
    return results, total, summary[FAIL]


def _check_dump_folders(dump: str, files, labels: dict[str, str]) -> None:
    """A usage error (ValueError) where a case file's folder of the dump, ``DIR/<file name>``,
    is a file: every case of it would fail to write ("Not a directory"), each reported FAIL (a
    breaker: ``--dump`` into the folder holding the case file, whose folder is the case file)."""
    for path, _ in files:
        folder = Path(dump) / labels[str(Path(path).resolve())]
        if folder.exists() and not folder.is_dir():
            what = "the case file itself (DIR is the folder holding it)" if folder.samefile(path) else "a file"
            raise ValueError(f"--dump: cannot write the cases of {path!r} into {str(folder)!r}: it is {what}, "
                             "not a folder; name another DIR (each case file's cases go to DIR/<file name>/)")


def _missing_folders(folder: str) -> list[Path]:
    """``folder`` and those of its parents not there yet, deepest first (what making it makes)."""
    missing = []
    for path in (Path(folder).absolute(), *Path(folder).absolute().parents):
        if path.exists() or path.is_symlink():
            break
        missing.append(path)
    return missing


def _check_json_beside_dump(json_path: str, dump: str | None, folders: set[str]) -> None:
    """A usage error (ValueError) where ``--json`` names a file among those ``--dump DIR``
    writes: DIR's index (the results would replace it), a case file's folder of this run
    (``folders``, the labels of the files with cases to run: the run makes DIR/<label>/ there, and
    a regression breaker's results were lost at the end, 'Is a directory') or anything in a folder
    below DIR, which are the case files' folders (the run empties and removes them: a breaker's
    --json inside a case folder passed the pre-run check and was lost at the end). DIR itself,
    beside the index, takes any other name. Paths are compared resolved (links followed, as the
    files are written)."""
    if not dump or json_path == "-":
        return
    root, target = Path(dump).resolve(), Path(json_path).resolve()
    if target.is_relative_to(root) and (target.parent != root or target.name in (golden_files.INDEX,
                                                                                  golden_files.PARTIAL_INDEX,
                                                                                  *folders)):
        raise ValueError(f"--json {json_path!r} lies among the files --dump {dump!r} writes (its {golden_files.INDEX} "
                         "and the folders below it, which a run empties and replaces); name a path elsewhere, such "
                         f"as {str(Path(dump) / 'results.json')!r}")


def _write_index(settings: Settings, session: Session) -> str | None:
    """Write the dump's index (``golden_files.write_index``); what went wrong, or None. A failure
    (a full disk) fails the run, as a case whose files cannot be written does, but is not a
    usage error: the results are still printed and written."""
    try:
        golden_files.write_index(settings.dump, dataclasses.asdict(settings), session.dump_written)
    except OSError as exc:
        failure = OutputError("--dump", Path(settings.dump) / golden_files.INDEX, exc, "the dump's index")
        return (f"{failure}; the case folders written stand without it (opsnn compare reads one case "
                f"file's folder, {str(Path(settings.dump) / '<file>')!r}, without an index)")
    return None


def _run_all(files, settings: Settings, session: Session,
             console: Console) -> tuple[list[list[Result]], bool]:
    """Every case of every file, run in order: the results of each file, and whether Ctrl-C
    stopped the run (the results then those of the cases done: a long run's report is kept)."""
    per_file = []
    total = sum(len(cases) for _, cases in files)
    columns = (TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("verify", total=total)
        try:
            for _, cases in files:
                per_file.append([])
                for case in cases:
                    progress.update(task, description=f"{Path(case.file).name} #{case.index} {case.name}")
                    per_file[-1].append(verify_case(case, settings, session))
                    progress.advance(task)
        except KeyboardInterrupt:
            return per_file, True
    return per_file, False
