"""A case's input data: the generator of each case (``case_rng``), its tensors filled from the
case file's value specs with the special values injected (``generate``), its scalars picked
(``pick_scalar``), and ``python_number``, which hands such a NumPy scalar on to acl, torch and
a dump's case.json.

Separate because the data are verify's one source of randomness: a case's inputs depend on the
seed, the file name and the case index alone, whatever else runs.
"""

from __future__ import annotations

import math
import os
import zlib
from pathlib import Path

import numpy as np

from opsnn.verify.cases import Case, ScalarSpec, Values

# Fraction of a tensor's elements replaced by the special values of a range spec (at least one
# of each when the tensor is large enough), assigned round-robin to the specials.
SPECIAL_FRACTION = 0.05


def case_rng(seed: int, case: Case) -> np.random.Generator:
    """A generator per case: the data of a case do not depend on which other cases run. The file
    name enters as the bytes it is on disk (``os.fsencode``: a Latin-1 name, which Python holds
    with surrogates, had failed every case with UnicodeEncodeError)."""
    return np.random.default_rng([seed, zlib.crc32(os.fsencode(Path(case.file).name)), case.index])


def generate(values: Values, dtype: np.dtype, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """A C-contiguous array: uniform in the range (integers inclusive) with the specials injected."""
    n = math.prod(shape)
    dtype = np.dtype(dtype)
    if values.is_constant:  # (an integer dtype's constant as itself: as a float, 2**53 + 1 was 2**53)
        data = np.full(n, values.low if dtype.kind in "iu" else float(values.low),
                       dtype=dtype if dtype.kind in "iu" else np.float64)
    elif dtype.kind in "iu":  # the range as far as the dtype holds it (an int32 case of +-1e10)
        bounds = np.iinfo(dtype)
        data = rng.integers(max(math.ceil(values.low), int(bounds.min)), min(math.floor(values.high), int(bounds.max)),
                            size=n, endpoint=True)
    elif dtype.kind == "b":
        data = rng.integers(0, 2, size=n)
    elif math.isinf(float(values.high) - float(values.low)):  # (-1e308, 1e308): the width overflows, its ends do not
        u = rng.random(n)
        data = (1.0 - u) * float(values.low) + u * float(values.high)
    else:
        data = rng.uniform(float(values.low), float(values.high), size=n)
    _inject(data, values.specials, rng)
    with np.errstate(over="ignore", invalid="ignore"):
        return data.astype(dtype).reshape(shape)


def _inject(data: np.ndarray, specials: tuple[float, ...], rng: np.random.Generator) -> None:
    if not specials or data.size == 0:
        return
    count = min(data.size, max(len(specials), round(data.size * SPECIAL_FRACTION)))
    positions = rng.choice(data.size, size=count, replace=False)
    # (an integer input's as integers: fields._check_integer_specials found each one its dtype holds)
    data[positions] = np.resize(np.array(specials, dtype=data.dtype if data.dtype.kind in "iu" else np.float64),
                                count)


def pick_scalar(spec: ScalarSpec, rng: np.random.Generator) -> np.generic:
    """The scalar value, already rounded to its dtype (so every consumer sees the same value)."""
    return generate(spec.values, spec.dtype, (), rng)[()]


def python_number(value: np.generic) -> bool | int | float:
    """The Python number of a NumPy scalar (ml_dtypes scalars have no usable ``item``)."""
    return value.item() if value.dtype.kind in "biuf" else float(value)

