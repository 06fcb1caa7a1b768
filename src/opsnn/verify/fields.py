"""What both case file formats share as they are read: the dtype names (``_dtype``), shapes
(``_dims``, ``_broadcast``), quoting a field in a message (``_cut``), and the checks every case
passes whatever its format (``_parsed`` wraps a reader's case in ``_checked``: the operator's
arguments once each, value ranges its dtypes hold).

Separate so that the csv and json readers (``casefiles``) apply one policy: a case that passes
here builds its aclnn call; one that does not is a usage error naming its field, not a FAIL.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import ml_dtypes
import numpy as np

from opsnn import golden_files
from opsnn._core.shape import broadcast_shape
from opsnn.verify.bindings import OPS
from opsnn.verify.cases import Case, ScalarSpec, TensorSpec

# ---- reading the fields both formats share ------------------------------------------------------

_DTYPE_NAMES = {
    "float32": np.float32, "fp32": np.float32, "float": np.float32,
    "float16": np.float16, "fp16": np.float16, "half": np.float16,
    "bfloat16": ml_dtypes.bfloat16, "bf16": ml_dtypes.bfloat16,
    "float64": np.float64, "fp64": np.float64, "double": np.float64,
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "bool": np.bool_,
}


def _cut(text: str, limit: int = 60) -> str:
    """``text`` (what a case file holds, as a message quotes it: ``repr`` of a csv field,
    ``json.dumps`` of a json value) cut to ``limit`` characters: a 10 KB field was quoted whole."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _dtype(name: str, where: str) -> np.dtype:
    """The dtype a case file's name gives (``_DTYPE_NAMES``, any case, also after CANN's ``ACL_``
    or ``DT_`` prefix: DT_FLOAT16, ACL_FLOAT, which a dump's case.json takes too); ValueError
    naming ``where`` (the field or the input) and the names it takes otherwise."""
    word = str(name).strip().lower()
    word = word.removeprefix("acl_") if word.startswith("acl_") else word.removeprefix("dt_")
    try:
        return np.dtype(_DTYPE_NAMES[word])
    except KeyError:
        raise ValueError(f"{where}: unknown dtype name {_cut(repr(name))}; case files name them "
                         f"{', '.join(_DTYPE_NAMES)}, each also after ACL_ or DT_") from None


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


# ---- the checks every case passes ---------------------------------------------------------------

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
    malformed file, not a FAIL of the operator). A case read for its name alone (``Case.unread``:
    never run, no tensors) has nothing to check."""
    if case.unsupported and not case.tensors:
        return case
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

