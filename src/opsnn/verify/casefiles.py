"""CANN's two case file formats read into ``Case``s (``load_cases``, by extension): the kernel
ST csv (``parse_csv``: one row per case naming a kernel op, mapped onto its aclnn operator) and
the aclnn ST json (``parse_json``: a list of cases naming the aclnn operator itself). The
package docstring (``opsnn.verify``) describes both formats and the kernel-to-aclnn mapping.

Separate because it is the only code that knows either format: a malformed file is a
ValueError from here naming the line or case and the field, before anything runs.
"""

from __future__ import annotations

import ast
import csv
import dataclasses
import difflib
import json
import math
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from opsnn import opdef
from opsnn._core.dtypes import Format, from_numpy, promote_type, to_numpy
from opsnn.cli_files import read_json
from opsnn.verify.bindings import OPS
from opsnn.verify.cases import (
    Case,
    ScalarSpec,
    TensorSpec,
    Tolerance,
    Values,
    is_real,
    is_tolerance,
)
from opsnn.verify.fields import (
    _broadcast,
    _check_arguments,
    _cut,
    _dims,
    _dtype,
    _parsed,
)

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


# ---- kernel ST csv ------------------------------------------------------------------------------

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


# How close a misspelt op name must come to a known one (difflib's ratio, in lower case without
# underscores) to be named: 'hardtanh_gard' is 0.92 from hardtanh_grad, while gelu_grad, another
# op, is 0.67 from leaky_relu_grad and must not be called a slip of it (difflib's default, 0.6)
_NEAR_MISS = 0.8


def _unknown_op(what: str, written: str, field: str, spelling: str, candidates: list[str],
                known: list[str]) -> ValueError:
    """The refusal of an op name ``field`` gives that is none of ``candidates`` (the spellings
    taken, ``known`` those listed). Op names are read as written: CANN's are case-sensitive
    identifiers, and a file opsnn ran under another spelling would not be one CANN's harness
    runs (dtype and format names, which CANN's files spell several ways, are read in any case).
    Surrounding spaces are no part of a name (``_csv_case``, ``_json_case`` strip them).
    So that the fix is one edit, the message names the candidate ``written`` misses only in
    letter case and underscores (the op type LeakyReluGrad for leaky_relu_grad), saying how
    ``field`` is spelt (``spelling``), or one it misses by a slip (``_NEAR_MISS``)."""
    def key(name: str) -> str:
        return name.strip().lower().replace("_", "")
    keys = {key(name): name for name in reversed(candidates)}  # (the first candidate of a key wins)
    if key(written) in keys:
        hint = (f" (did you mean {keys[key(written)]!r}? {field} is read as written, as CANN reads an op name: "
                f"{spelling})")
    else:
        close = difflib.get_close_matches(key(written), keys, n=1, cutoff=_NEAR_MISS)
        hint = f" (did you mean {keys[close[0]]!r}?)" if close else ""
    return ValueError(f"unknown {what} {_cut(repr(written))}{hint}; known: {', '.join(known)}")


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
    131072 characters). Header names are read stripped (``a, op_name``), a name given twice is a
    ValueError (``_check_header``), and a row of empty cells (``,,,,``, which spreadsheets write)
    is skipped."""
    with open(path, newline="", encoding=_ENCODING) as f:
        # restval: a row shorter than the header reads its missing cells as empty, which each field's
        # reader names (they were None, a TypeError or AttributeError naming no field)
        rows = csv.DictReader(f, restval="")
        cases = []
        try:
            rows.fieldnames = [str(name).strip() for name in rows.fieldnames or ()]
            _check_header(rows.fieldnames)
            for row in rows:
                if any(str(cell).strip() for cell in row.values()):
                    where = f"line {rows.line_num} (case {len(cases)})"  # (the line a row ends on)
                    cases.append(_parsed(where, _csv_case, str(path), len(cases), row))
        except csv.Error as exc:  # (a traceback, exit 1); line_num: the lines of the rows read whole
            which = f"(case {len(cases)})" if rows.line_num else "(the header)"
            raise ValueError(f"line {rows.line_num + 1} {which}: {exc}") from None
        return cases


def _check_header(names: list[str]) -> None:
    """ValueError where the header names a column twice: each row would be read with the later
    cell alone, saying nothing (a breaker's pasted op_name column ran another operator). Empty
    names (a spreadsheet's trailing commas) name no column a case reads. A header of one column
    split by semicolons or tabs is a file a spreadsheet saved with another list separator: said
    so (each row had been refused as having "no 'op_name' field")."""
    for separator, word in ((";", "semicolons"), ("\t", "tabs")):
        if len(names) == 1 and separator in names[0]:
            head = separator.join(names[0].split(separator)[:2])
            raise ValueError(f"line 1 (the header): it is one column, {_cut(head)}...: its fields are separated by "
                             f"{word}; a ttk csv separates them by commas (a spreadsheet set to another list "
                             "separator writes so)")
    for name in dict.fromkeys(filter(None, names)):
        columns = [i + 1 for i, other in enumerate(names) if other == name]
        if len(columns) > 1:
            raise ValueError(f"line 1 (the header): it names {_cut(name)} {'twice' if len(columns) == 2 else f'{len(columns)} times'}, columns "
                             f"{', '.join(map(str, columns[:-1]))} and {columns[-1]}; expected each column once")


def _csv_case(file: str, index: int, row: dict[str, str]) -> Case:
    disabled = _disabled(row)
    if disabled:  # its other cells unread: a malformed one in a row no harness runs is no usage error (a breaker)
        written = (row.get("op_name") or "").strip()
        kernel = _KERNELS.get(written)
        return Case.unread(file, index, row["testcase_name"], kernel.op if kernel else written, disabled)
    kernel = _KERNELS.get(row["op_name"].strip())
    if kernel is None:
        raise _unknown_op("kernel op", row["op_name"], "op_name",
                          "the kernel's snake_case name, the one CANN's ST csv files give", [*_KERNELS], [*_KERNELS])
    dtypes = [_dtype(d, "input_dtypes")
              for d in _entries(row["input_dtypes"], "input_dtypes", "input", "('float16', 'float16')")]
    shapes = _entries(row.get("input_shapes") or row["input_ori_shapes"], "input_shapes", "input", "((2, 3), (2, 3))")
    if not len(dtypes) == len(shapes) == len(kernel.inputs):
        raise ValueError(f"{row['op_name'].strip()} takes {len(kernel.inputs)} inputs; input_dtypes names "
                         f"{len(dtypes)}, input_shapes {len(shapes)}")
    shapes = [_dims(shape, role) for shape, role in zip(shapes, kernel.inputs)]
    # an empty input_formats reads input_ori_formats: a refusal names the field read, not the empty one
    formats_field = "input_formats" if row.get("input_formats") else "input_ori_formats"
    formats_text = row.get(formats_field) or ""
    formats = ([_format(f, formats_field) for f in _entries(formats_text, formats_field, "input", "('ND', 'ND')")]
               if formats_text.strip() else [])
    if formats and len(formats) != len(kernel.inputs):  # (as the dtypes': one ran as ND, a third was ignored)
        raise ValueError(f"{row['op_name'].strip()} takes {len(kernel.inputs)} inputs; {formats_field} names "
                         f"{len(formats)} (one per input, or the cell left empty: ND)")
    values = _csv_values(row.get("input_data_ranges", ""), len(dtypes), kernel)
    specs = [TensorSpec(role, dt, shape, val, formats[i] if formats else "ND")
             for i, (role, dt, shape, val) in enumerate(zip(kernel.inputs, dtypes, shapes, values))]
    tensors = tuple(s for s in specs if s.role not in kernel.bound_inputs)
    scalars = tuple(_csv_attr_scalars(kernel, _literal(row.get("attributes") or "{}", "attributes") or {}))
    scalars += tuple(ScalarSpec(s.role, s.dtype, s.values) for s in specs if s.role in kernel.bound_inputs)
    unsupported = _not_run(row) or _per_element_bounds(specs, kernel)
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


def _disabled(row: dict[str, str]) -> str | None:
    """Why a row is not run at all, or None: ``is_enabled`` False (CANN's harness skips such a
    row: a known failure is disabled so; ``_csv_case`` then reads its name and op alone). An
    empty cell, or no such column as in ops-nn's files, runs; ValueError naming the field for a
    value of neither form."""
    enabled = (row.get("is_enabled") or "").strip()
    if enabled.lower() not in ("", "true", "false"):
        raise ValueError(f"is_enabled is {_cut(repr(enabled))}; expected True or False (or the cell left empty: True)")
    return "is_enabled is False: CANN's harness does not run this row" if enabled.lower() == "false" else None


def _not_run(row: dict[str, str]) -> str | None:
    """Why an enabled row is not run as the file means it, or None: inputs or golden given as
    binary files (``manual_input_binaries`` / ``manual_golden_binaries``: verify generates its
    data and judges it against its own golden, so it would check another case). An empty cell,
    or no such column, runs; ValueError naming the field for a value that is no tuple."""
    for field, what in (("manual_input_binaries", "inputs"), ("manual_golden_binaries", "golden")):
        text = (row.get(field) or "").strip()
        files = _literal(text, field) if text else ()
        if not isinstance(files, (list, tuple)):
            raise ValueError(f"{field} is {_cut(repr(text))}; expected a tuple of file names, such as "  # noqa: TRY004
                             "('x.bin',), or () for none")
        if files:
            return (f"its {what} {'are' if what == 'inputs' else 'is'} given as binary files ({field} {_cut(text)}), "
                    "which verify does not read: it would run on data it generated instead")
    return None


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


# ---- aclnn ST json ------------------------------------------------------------------------------

# json input names -> aclnn argument roles (names not listed are already roles: gradOutput, self)
_ATK_ROLES = {"x": "self", "a": "negativeSlope", "clipValueMin": "min", "clipValueMax": "max"}
# The kinds of input an aclnn ST json names (its "type"): an aclTensor, an aclScalar, a bool attr
_ATK_TYPES = ("tensor", "scalar", "attr")


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
    # read without surrounding spaces, as a csv's op_name (a hand-edited file's " aclnnX " was an
    # unknown operator: a breaker); letter case as written
    aclnn_name = case["aclnn_name"].strip()
    op = aclnn_name.removeprefix("aclnn")  # the forward files name "LeakyRelu", "Hardtanh"
    if op not in OPS:
        named = [f"aclnn{name}" for name in OPS]
        raise _unknown_op("operator", case["aclnn_name"], "aclnn_name", "the aclnn API's name", [*named, *OPS], named)
    items = case["inputs"]
    if not isinstance(items, list):
        raise ValueError(f"inputs is {_json_text(items)}; expected a list of objects, one per tensor, "  # noqa: TRY004
                         "scalar and attr")
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ValueError(f"inputs[{i}] is {_json_text(item)}; expected an object whose name is a string "  # noqa: TRY004
                             'such as "gradOutput"')
        if "type" in item and item["type"] not in _ATK_TYPES:  # (any other had been read as an attr)
            raise ValueError(f"inputs[{i}] ({_cut(item['name'])}) has type {_json_text(item['type'])}; expected "
                             f"{', '.join(map(json.dumps, _ATK_TYPES[:-1]))} or {json.dumps(_ATK_TYPES[-1])} (as written)")
    tensors, scalars, flags = [], [], []
    for item in items:
        role = _ATK_ROLES.get(item["name"], item["name"])
        if item["type"] == "tensor":
            tensors.append(TensorSpec(role, _dtype(item["dtype"], f"{role}'s dtype"), _dims(item["shape"], role),
                                      _json_values(item["range_values"], role)))
        elif item["type"] == "scalar":
            scalars.append(ScalarSpec(role, _dtype(item["dtype"], f"{role}'s dtype"),
                                      _json_values(item["range_values"], role)))
        elif item["type"] == "attr":
            flags.append((role, _json_flag(item["range_values"], role)))
    _check_arguments(op, tensors, scalars, flags)  # (before the out dtype, which reads them)
    out_dtype = _json_out_dtype(op, tensors)
    case_id = case.get("id")  # (a null one had named the case aclnnLeakyReluBackward_None)
    label = index if case_id is None else case_id if isinstance(case_id, str) else _json_text(case_id)
    name = f"{aclnn_name}_{label}"
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


# ---- either, by extension -----------------------------------------------------------------------

def load_cases(path: str | Path) -> list[Case]:
    """Cases of one file, by extension (``.csv`` kernel ST, ``.json`` aclnn ST)."""
    suffix = Path(path).suffix.lower()
    parse = {".csv": parse_csv, ".json": parse_json}.get(suffix)
    if parse is None:
        raise ValueError(f"{path}: expected a .csv (kernel ST) or .json (aclnn ST) case file")
    kind = "ttk kernel ST csv" if suffix == ".csv" else "atk aclnn ST json"
    expected = f"expected {'an' if kind[0] == 'a' else 'a'} {kind} case file"
    refusal = _not_a_file(path)
    if refusal:
        raise ValueError(f"{path}: {refusal}; {expected}")
    try:
        cases = parse(path)
    except OSError as exc:  # Python's own words ("[Errno 2] ...: 'x.csv'") said nothing of what was expected
        raise ValueError(f"{path}: {_unopened(exc)}; {expected}") from exc
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as exc:  # JSONDecodeError too
        why = str(exc) if type(exc) is ValueError else f"{type(exc).__name__}: {exc}"
        raise ValueError(f"{path}: not a readable {kind} case file ({why})") from exc
    if not cases:  # an empty file, a header alone, '{}': a green run of nothing would hide it
        raise ValueError(f"{path}: holds no case; expected a case file ({kind}) with at least one")
    return cases


def _not_a_file(path: str | Path) -> str | None:
    """What is at a case file's path, after links, where it is no regular file (None where it
    is one, or where the system will not say: opening it tells why): checked before opening it,
    as a named pipe's open waits for a writer (a breaker's verify hung for ever) and a device
    such as /dev/zero reads without end."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO), not a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a file"
    return "a socket, not a file" if stat.S_ISSOCK(mode) else "not a regular file"


def _unopened(exc: OSError) -> str:
    """What is at a case file's path that could not be read: none, or the system's reason (a
    folder is told before the open, by _not_a_file)."""
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "a folder, not a file"
    return f"cannot be read ({exc.strerror or exc})"
