"""The aclnn operators verify drives (``OPS``): for each one, its arguments in
GetWorkspaceSize order, its golden (``opsnn.reference``), its ``torch.ops.aten`` call
(``--golden torch``, torch imported only then: it is an optional extra) and the documented
decision that explains a torch difference element by element (a DOC row).

Separate because it is the one table to extend for a new operator: the case file readers map
rows onto it, the run calls through it, ``opsnn compare`` explains with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import ml_dtypes
import numpy as np

from opsnn import reference
from opsnn._core.dtypes import DataType, from_numpy, promote_type
from opsnn.verify.comparison import _bits
from opsnn.verify.inputs import python_number

# ---- operator bindings --------------------------------------------------------------------------

Arrays = dict[str, np.ndarray]


Scalars = dict[str, np.generic]


@dataclasses.dataclass(frozen=True)
class OpBinding:
    """One aclnn operator as verify drives it.

    ``tensors``, ``scalars`` and ``flags`` name the aclnn arguments in GetWorkspaceSize order
    (then ``out``). ``golden`` is the opsnn.reference formula; ``torch`` the torch.ops.aten call;
    ``explain`` names the documented decision that explains a torch difference, or None.
    """

    aclnn: str
    tensors: tuple[str, ...]
    scalars: tuple[str, ...]
    flags: tuple[str, ...]
    golden: Callable[[Arrays, Scalars, np.dtype], np.ndarray]
    torch: Callable[[Arrays, Scalars, dict[str, bool]], object]
    explain: Callable[[Arrays, Scalars, np.ndarray, np.ndarray, np.ndarray], str | None]


def _explain_double_slope(inputs: Arrays, scalars: Scalars, ours: np.ndarray, torch_out: np.ndarray,
                          differs: np.ndarray) -> str | None:
    """DECISIONS 2: opsnn multiplies by float32(slope) where torch uses the double slope (f64).

    Explained iff the compute dtype is DOUBLE and every differing element is in the slope branch,
    torch's value there is ``grad * double(slope)`` and opsnn's is the reference value. (The
    forward LeakyRelu multiplies self itself, so there ``grad`` is self.)
    """
    grad = inputs.get("gradOutput", inputs["self"])
    if promote_type(from_numpy(grad.dtype), from_numpy(inputs["self"].dtype)) != DataType.DOUBLE:
        return None
    grad_b, self_b = np.broadcast_arrays(grad.astype(np.float64), inputs["self"].astype(np.float64))
    torch_rule = grad_b * reference.to_double(scalars["negativeSlope"])
    golden = _leaky_golden(inputs, scalars, ours.dtype)
    slope_branch = ~(self_b > 0)
    agrees = lambda x, y: (x == y) | (np.isnan(x) & np.isnan(y))  # noqa: E731
    explained = slope_branch & agrees(torch_out, torch_rule) & agrees(ours, golden)
    return "DECISIONS 2: float32 slope for DOUBLE (torch: double)" if explained[differs].all() else None


def _explain_nan_self(inputs: Arrays, scalars: Scalars, ours: np.ndarray, torch_out: np.ndarray,
                      differs: np.ndarray) -> str | None:
    """DECISIONS 8: NaN in self passes the gradient; torch CPU's SIMD path gives 0 there."""
    self_, grad = inputs["self"].astype(np.float64), inputs["gradOutput"]
    explained = np.isnan(self_) & (torch_out.astype(np.float64) == 0) & (_bits(ours) == _bits(grad))
    return "DECISIONS 8: NaN self passes grad (torch CPU SIMD: 0)" if explained[differs].all() else None


def _explain_fp16_t_bound(inputs: Arrays, scalars: Scalars, ours: np.ndarray, torch_out: np.ndarray,
                          differs: np.ndarray) -> str | None:
    """decisions-forward F5: for a FLOAT16 self, opbase's fp16_t makes an INT8 -128 bound -0.0 and
    an INT32 / INT64 -2**31 bound -0.5, where torch rounds the value: explained where the result's
    element is such a bound and opsnn's reference, which models F5, clamps to it there too (a
    breaker: a board's -0.0 at an element inside the bounds was explained, a DOC, not a FAIL)."""
    bounds = [reference.fp16_t_exception(v) for v in scalars.values()] if inputs["self"].dtype == np.float16 else []
    bits = [_bits(np.asarray(b, np.float16)) for b in bounds if b is not None]
    if not bits:
        return None
    clamped = _bits(reference.hardtanh(inputs["self"], scalars["min"], scalars["max"])) == _bits(ours)
    if (np.isin(_bits(ours), bits) & clamped)[differs].all():
        return "F5: opbase's fp16_t converts this integer bound to float16 as -0.0 / -0.5 (torch: rounded)"
    return None


def _leaky_golden(t: Arrays, s: Scalars, out: np.dtype) -> np.ndarray:
    if "gradOutput" in t:
        return reference.leaky_relu_backward(t["gradOutput"], t["self"], s["negativeSlope"], out)
    return reference.leaky_relu(t["self"], s["negativeSlope"], out)


OPS: dict[str, OpBinding] = {
    "LeakyReluBackward": OpBinding(
        "aclnnLeakyReluBackward", ("gradOutput", "self"), ("negativeSlope",), ("selfIsResult",),
        _leaky_golden,
        lambda t, s, f: _aten("leaky_relu_backward", t["gradOutput"], t["self"],
                              s["negativeSlope"], f["selfIsResult"]),
        _explain_double_slope),
    "HardtanhBackward": OpBinding(
        "aclnnHardtanhBackward", ("gradOutput", "self"), ("min", "max"), (),
        lambda t, s, out: reference.hardtanh_backward(t["gradOutput"], t["self"], s["min"], s["max"], out),
        lambda t, s, f: _aten("hardtanh_backward", t["gradOutput"], t["self"], s["min"], s["max"]),
        _explain_nan_self),
    "LeakyRelu": OpBinding(
        "aclnnLeakyRelu", ("self",), ("negativeSlope",), (),
        _leaky_golden,
        lambda t, s, f: _aten("leaky_relu", t["self"], s["negativeSlope"]),
        _explain_double_slope),
    "Hardtanh": OpBinding(
        "aclnnHardtanh", ("self",), ("min", "max"), (),
        lambda t, s, out: reference.hardtanh(t["self"], s["min"], s["max"]),
        lambda t, s, f: _aten("hardtanh", t["self"], s["min"], s["max"]),
        _explain_fp16_t_bound),
}


# ---- torch golden (lazy: torch is an optional extra) --------------------------------------------

def _aten(name: str, *args):
    """Call ``torch.ops.aten.<name>`` with NumPy arrays (bf16 through int16 views) and scalars."""
    import torch

    def to_torch(value):
        if isinstance(value, np.ndarray):
            if value.dtype == ml_dtypes.bfloat16:
                return torch.from_numpy(np.ascontiguousarray(value).view(np.int16)).view(torch.bfloat16)
            return torch.from_numpy(np.ascontiguousarray(value))
        return python_number(value) if isinstance(value, np.generic) else value

    result = getattr(torch.ops.aten, name)(*(to_torch(a) for a in args))
    if result.dtype == torch.bfloat16:
        return result.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return result.numpy()

