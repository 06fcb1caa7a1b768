"""The CPU kernels' memo: what they derive from their arguments' metadata alone, kept per key.

Apart from the kernels because it is one policy (what a key holds, which plans are kept, how
the memo stays bounded) that two callers share: the functional kernels' plans (``_known``, in
``_kernels``) and the in-place ops' scalars (``_taken``, in ``_checks``). ``MEMO_ENTRIES`` is
read here at each store, so a test that bounds the memo patches it on this module.
"""

from __future__ import annotations

import math

# Per op, dtypes, shapes and strides of the tensors, and type, value (and the sign of a zero) of
# the scalars and flags: the scalars as torch takes them and the result's layout (``_plan_*``).
# A hit skips nothing that could come out otherwise: every check a plan makes reads only those
# fields (never the SoC in force, grad mode, requires_grad, a storage offset or memory: the SoC's
# dtype lists, the overlap and every other aclnn check are the Pythonic call's, which runs on
# every call, with its own plan cache keyed on the SoC), and only a plan that succeeded is kept,
# so a refused call is refused again, the same way. NaN and other scalar types (complex, symbolic)
# are not kept. Thread safety: an entry is a tuple made once and stored whole (one dict store,
# atomic under the GIL); two threads missing together both make it, equal.
_MEMO: dict[tuple, tuple] = {}
MEMO_ENTRIES = 512


def _scalars_key(key: list, scalars) -> tuple | None:
    """``key`` with each scalar's type and value (and the sign of a zero: -0.0 == 0.0) appended,
    as a tuple; None where a scalar is not kept (NaN, or a type but float, int and bool:
    complex, symbolic). The memo's one rule for scalars (``_known``, ``_taken``)."""
    for value in scalars:
        kind = type(value)
        if kind is float:
            if math.isnan(value):
                return None
            key += (kind, value, None if value else math.copysign(1.0, value))
        elif kind is int or kind is bool:
            key += (kind, value)
        else:
            return None
    return tuple(key)


def _remember(key: tuple, value: tuple) -> None:
    """Store ``value`` under ``key``; past MEMO_ENTRIES the older half goes (insertion order)."""
    if len(_MEMO) >= MEMO_ENTRIES:
        for stale in list(_MEMO)[:MEMO_ENTRIES // 2]:
            _MEMO.pop(stale, None)
    _MEMO[key] = value


def _known(name: str, plan, tensors: tuple, scalars: tuple) -> tuple | None:
    """``plan(*tensors, *scalars)``, from the memo where the same metadata met it before."""
    if len(tensors) == 1:  # (unrolled: ~0.1 us less a call)
        (t,) = tensors
        key = [name, t.dtype, t.shape, t.stride()]
    else:
        t, u = tensors
        key = [name, t.dtype, t.shape, t.stride(), u.dtype, u.shape, u.stride()]
    key = _scalars_key(key, scalars)
    if key is None:
        return plan(*tensors, *scalars)
    known = _MEMO.get(key)
    if known is None:
        known = plan(*tensors, *scalars)
        if known is not None:
            _remember(key, known)
    return known
