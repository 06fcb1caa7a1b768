"""The reference backend: evaluates a kernel expression with NumPy ufuncs on whole arrays."""

from __future__ import annotations

import types

import numpy as np

from .._core import dtypes

# The ``ops`` namespace a kernel expression is written against (operators cover the rest).
OPS = types.SimpleNamespace(where=np.where, isnan=np.isnan, zero=0)


def launch(step, srcs: list[np.ndarray], dst: np.ndarray) -> None:
    compute = dtypes.to_numpy(step.compute)
    args = [src if native else src.astype(compute, copy=False)
            for src, native in zip(srcs, step.native)]
    scalars = {name: compute.type(value) for name, value in step.scalars}
    with np.errstate(all="ignore"):  # IEEE results (inf * 0 = NaN, overflow to inf) are the contract
        result = step.kernel(OPS, *args, **scalars)
        np.copyto(dst, result, casting="unsafe")
