"""Kernel expression -> DAG -> numba source.

``trace`` runs a kernel expression (``kernel(ops, *inputs, **scalars)``, the same call the NumPy
backend makes, with the same ``ops`` namespace) on symbolic operands. Every NumPy call the
expression makes lands in ``Sym.__array_ufunc__`` / ``__array_function__`` (NEP 13/18), which
records a node -- the CANN DAG idea: compare, select, multiply -- and, to learn its dtype, runs the
same call on one-element probe arrays. Node dtypes, weak Python scalars and ml_dtypes promotions
are therefore NumPy's own, never re-derived here.

``element_source`` turns the DAG into straight-line numba code for one element: loads (with the
dtype conversions of the fused Contiguous/Cast steps), the nodes, and the store (with the Cast
chain to ``out``). float16/bfloat16 values live as uint16 bits and are computed in float32 with
the helpers of ``_numba_support`` (NumPy's and ml_dtypes' exact conversions).

Anything this cannot express raises ``Unsupported``; the backend then runs the NumPy backend.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import numbers

import numpy as np

from .._core import dtypes
from .._core.dtypes import DataType

F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
C64 = np.dtype(np.complex64)
C128 = np.dtype(np.complex128)
BOOL = np.dtype(np.bool_)
INTS = {np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                              np.uint64)}
# bfloat16 is named here by its aclDataType, never by its NumPy dtype, which would import
# ml_dtypes with the first kernel of any dtype (dtypes._ML_DTYPES says why it waits)
# (widening helper, narrowing helper, exponent mask: a NaN's magnitude bits are above it)
HALVES = {DataType.FLOAT16: ("h2f", "f2h", 0x7C00), DataType.BF16: ("bf2f", "f2bf", 0x7F80)}
_VALUE_DTYPES = {F16, F32, F64, BOOL} | INTS  # dtypes a DAG node may have, with bfloat16
_STORE_DTYPES = _VALUE_DTYPES | {C64, C128}   # dtypes a tensor may be stored in, with bfloat16


def is_bf16(dt) -> bool:
    """Whether ``dt`` (a NumPy dtype or None) is bfloat16."""
    return dt is not None and dtypes.from_numpy(dt) == DataType.BF16


def half(dt) -> tuple | None:
    """(widening helper, narrowing helper, exponent mask) of float16 / bfloat16 ``dt``, else None."""
    return None if dt is None else HALVES.get(dtypes.from_numpy(dt))


def is_value_dtype(dt) -> bool:
    """Whether a DAG node may have dtype ``dt``."""
    return np.dtype(dt) in _VALUE_DTYPES or is_bf16(dt)


def is_store_dtype(dt) -> bool:
    """Whether a tensor stored as ``dt`` can be loaded or stored by compiled code."""
    return np.dtype(dt) in _STORE_DTYPES or is_bf16(dt)


class Unsupported(Exception):
    """The expression, a dtype or a conversion has no compiled lowering; use the NumPy backend."""


@dataclasses.dataclass(frozen=True)
class Node:
    """One DAG node. ``op``: ``input`` (attr = index), ``scalar`` (attr = name), ``const`` (attr =
    value in ``dtype``), ``ufunc`` (attr = NumPy ufunc name, ``loop`` = its input dtypes) or
    ``where``. ``dtype``: the result dtype NumPy gives."""

    op: str
    args: tuple
    dtype: np.dtype
    attr: object = None
    loop: tuple = ()


_OPERATORS = {
    "__lt__": ("less", False), "__le__": ("less_equal", False), "__gt__": ("greater", False),
    "__ge__": ("greater_equal", False), "__eq__": ("equal", False), "__ne__": ("not_equal", False),
    "__add__": ("add", False), "__radd__": ("add", True), "__sub__": ("subtract", False),
    "__rsub__": ("subtract", True), "__mul__": ("multiply", False), "__rmul__": ("multiply", True),
    "__truediv__": ("divide", False), "__rtruediv__": ("divide", True),
    "__and__": ("bitwise_and", False), "__rand__": ("bitwise_and", True),
    "__or__": ("bitwise_or", False), "__ror__": ("bitwise_or", True),
    "__xor__": ("bitwise_xor", False), "__rxor__": ("bitwise_xor", True),
}
_UNARY_OPERATORS = {"__invert__": "invert", "__neg__": "negative", "__pos__": "positive",
                    "__abs__": "absolute"}


class Sym:
    """A symbolic array operand: a DAG node plus a one-element probe of its dtype."""

    __array_priority__ = 1000
    __hash__ = object.__hash__

    def __init__(self, node: Node, probe: np.ndarray):
        self.node = node
        self.probe = probe

    @property
    def dtype(self) -> np.dtype:
        return self.node.dtype

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs or ufunc.nout != 1:
            raise Unsupported(f"np.{ufunc.__name__}.{method} with {sorted(kwargs)}")
        return _apply_ufunc(ufunc, inputs)

    def __array_function__(self, func, types, args, kwargs):
        if func is np.where and len(args) == 3 and not kwargs:
            return _apply_where(*args)
        raise Unsupported(f"np.{getattr(func, '__name__', func)} is not lowered")

    def __array__(self, *args, **kwargs):
        raise Unsupported("a symbolic operand was converted to an array")

    def __bool__(self):
        raise Unsupported("Python control flow on an operand (e.g. `if x > 0`)")

    def __repr__(self) -> str:
        return f"Sym({self.node.op}, {self.node.dtype})"


def _binary(name, reflected):
    ufunc = getattr(np, name)

    def method(self, other):
        return _apply_ufunc(ufunc, (other, self) if reflected else (self, other))

    return method


for _dunder, (_name, _reflected) in _OPERATORS.items():
    setattr(Sym, _dunder, _binary(_name, _reflected))
for _dunder, _name in _UNARY_OPERATORS.items():
    setattr(Sym, _dunder, (lambda uf: lambda self: _apply_ufunc(uf, (self,)))(getattr(np, _name)))


def _operand(value):
    """(node, probe, dtype-or-python-type for resolve_dtypes) of a ufunc/where operand."""
    if isinstance(value, Sym):
        return value.node, value.probe, value.node.dtype
    if isinstance(value, bool) or isinstance(value, np.bool_):
        v = np.bool_(value)
        return Node("const", (), BOOL, bool(v)), v, BOOL
    if isinstance(value, (int, float)) and not isinstance(value, np.generic):
        return Node("const", (), None, value), value, type(value)  # weak: NumPy decides its dtype
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        v = np.asarray(value)[()]
        if not is_value_dtype(v.dtype):
            raise Unsupported(f"constant of dtype {v.dtype}")
        return Node("const", (), np.dtype(v.dtype), v), v, np.dtype(v.dtype)
    raise Unsupported(f"operand {type(value).__name__}")


def _const_in(node: Node, dtype: np.dtype) -> Node:
    """A constant converted (exactly) to ``dtype``, the way the ufunc loop sees it."""
    if node.op != "const" or node.dtype == dtype:
        return node
    with np.errstate(all="ignore"):
        try:
            v = np.asarray(node.attr).astype(dtype)[()] if node.dtype is not None else \
                np.asarray(node.attr, dtype=dtype)[()]
        except (OverflowError, ValueError, TypeError) as exc:
            raise Unsupported(f"constant {node.attr!r} in {dtype}: {exc}") from None
    if node.dtype is None and isinstance(node.attr, numbers.Real) and not np.isnan(node.attr) \
            and float(v) != float(node.attr) and dtype.kind in "iub":
        raise Unsupported(f"constant {node.attr!r} has no exact {dtype} value")
    return Node("const", (), dtype, v)


def _apply_ufunc(ufunc, inputs):
    nodes, probes, kinds = zip(*(_operand(v) for v in inputs))
    with np.errstate(all="ignore"):
        try:
            result = np.asarray(ufunc(*probes))
            loop = ufunc.resolve_dtypes(tuple(kinds) + (None,))
        except Exception as exc:  # noqa: BLE001 - whatever NumPy refuses, the NumPy backend reports
            raise Unsupported(f"np.{ufunc.__name__} on {kinds}: {exc}") from None
    loop_in, loop_out = loop[:-1], np.dtype(loop[-1])
    if loop_out != result.dtype or not all(map(is_value_dtype, loop)):
        raise Unsupported(f"np.{ufunc.__name__} loop {loop} (result {result.dtype})")
    args = tuple(_const_in(n, np.dtype(d)) for n, d in zip(nodes, loop_in))
    node = Node("ufunc", args, result.dtype, ufunc.__name__, tuple(np.dtype(d) for d in loop_in))
    return Sym(node, result.reshape(1))


def _apply_where(cond, a, b):
    (cn, cp, _), (an, ap, _), (bn, bp, _) = (_operand(v) for v in (cond, a, b))
    with np.errstate(all="ignore"):
        result = np.asarray(np.where(cp, ap, bp))
    dtype = result.dtype
    if not is_value_dtype(dtype):
        raise Unsupported(f"np.where result {dtype}")
    if cn.op == "const":
        cn = _const_in(cn, BOOL)
    node = Node("where", (cn, _const_in(an, dtype), _const_in(bn, dtype)), dtype)
    return Sym(node, result.reshape(1))


def trace(kernel, ops, input_dtypes, scalars) -> Node:
    """The DAG of ``kernel(ops, *inputs, **scalars)``: inputs of ``input_dtypes``, scalars given as
    ``{name: dtype}``. Raises Unsupported."""
    for dt in list(input_dtypes) + list(scalars.values()):
        if not is_value_dtype(dt):
            raise Unsupported(f"dtype {dt}")
    args = [Sym(Node("input", (), np.dtype(dt), i), np.zeros(1, dt)) for i, dt in enumerate(input_dtypes)]
    kw = {name: Sym(Node("scalar", (), np.dtype(dt), name), np.zeros(1, dt)) for name, dt in scalars.items()}
    try:
        with np.errstate(all="ignore"):
            result = kernel(ops, *args, **kw)
    except Unsupported:
        raise
    except Exception as exc:  # noqa: BLE001 - the expression needs something a Sym does not offer
        raise Unsupported(f"tracing failed: {type(exc).__name__}: {exc}") from None
    node, _, _ = _operand(result)
    if node.dtype is None:  # a bare Python number: NumPy makes it an array of its default dtype
        node = _const_in(node, np.asarray(node.attr).dtype)
    return node


# ---- code generation ------------------------------------------------------------------------

def _numba_type(dt: np.dtype) -> str:
    if half(dt):
        return "np.uint16"
    return "np." + ("bool_" if dt == BOOL else dt.name)


def literal(value, dt: np.dtype) -> str:
    """Source text for a constant of dtype ``dt`` (f16/bf16 as their bits)."""
    dt = np.dtype(dt)
    if half(dt):
        return f"np.uint16({int(np.asarray(value, dtype=dt).view(np.uint16))})"
    if dt == BOOL:
        return "True" if bool(value) else "False"
    if dt.kind in "iu":
        return f"np.{dt.name}({int(value)})"
    v = float(np.asarray(value, dtype=dt))
    if np.isnan(v):
        bits = int(np.asarray(value, dtype=dt).view(np.uint32 if dt == F32 else np.uint64))
        return f"bits_{'f32' if dt == F32 else 'f64'}(np.uint{dt.itemsize * 8}({bits}))"
    text = "np.inf" if v == np.inf else "-np.inf" if v == -np.inf else repr(v)
    return f"np.{dt.name}({text})"


def fval(expr: str, dt: np.dtype) -> str:
    """``expr`` (a value of dtype ``dt``) as something to compute with: float32 for f16/bf16."""
    if half(dt):
        return f"{half(dt)[0]}({expr})"
    return expr


def conv(expr: str, src: np.dtype, dst: np.dtype) -> str:
    """Source converting ``expr`` from ``src`` to ``dst`` as NumPy's casts (``dtypes.cast_into``)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return expr
    if dst in (C64, C128):
        part = F32 if dst == C64 else F64
        if src in (C64, C128):
            raise Unsupported(f"{src} -> {dst}")
        return f"np.{dst.name}({conv(expr, src, part)})"
    if dst == BOOL:
        return f"({fval(expr, src)} != 0)"
    if src == BOOL:
        if half(dst):
            one = literal(1, dst)
            return f"({one} if {expr} else np.uint16(0))"
        return f"{_numba_type(dst)}({expr})"
    if src in INTS:
        if dst in INTS or dst in (F32, F64):
            return f"np.{dst.name}({expr})"
        raise Unsupported(f"{src} -> {dst}")
    if dst in INTS:
        raise Unsupported(f"{src} -> {dst}")
    found = _FLOAT_CONV.get((dtypes.from_numpy(src), dtypes.from_numpy(dst)))
    if found is None:
        raise Unsupported(f"{src} -> {dst}")
    return found.format(expr)


_F16, _BF16, _F32, _F64 = DataType.FLOAT16, DataType.BF16, DataType.FLOAT, DataType.DOUBLE
# float -> float conversions, NumPy's and ml_dtypes' casts ({} is the value)
_FLOAT_CONV = {
    (_F16, _F32): "h2f({})", (_F16, _F64): "h2d({})", (_F16, _BF16): "f2bf_canonical(h2f({}))",
    (_BF16, _F32): "bf2f({})", (_BF16, _F64): "f2d(bf2f({}))", (_BF16, _F16): "f2h_canonical(bf2f({}))",
    (_F32, _F64): "f2d({})", (_F32, _F16): "f2h({})", (_F32, _BF16): "f2bf({})",
    (_F64, _F32): "np.float32({})", (_F64, _F16): "d2h({})", (_F64, _BF16): "d2bf({})",
}


_COMPARE = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=", "equal": "==",
            "not_equal": "!="}
_ARITH = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "true_divide": "/"}
_BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}


def _ufunc_source(name: str, args: list[str], loop: tuple) -> str:
    dt = loop[0]
    if name in _COMPARE:
        a, b = (fval(x, d) for x, d in zip(args, loop))
        return f"({a} {_COMPARE[name]} {b})"
    if name in _ARITH:
        if dt in INTS and name in ("divide", "true_divide"):
            raise Unsupported("integer true division loop")
        a, b = (fval(x, d) for x, d in zip(args, loop))
        expr = f"({a} {_ARITH[name]} {b})"
        if half(dt):
            return f"{half(dt)[1]}({expr})"
        if dt == BOOL:
            raise Unsupported(f"{name} on bool")
        return f"{_numba_type(dt)}{expr}" if dt in INTS else expr
    if name in _BITWISE:
        if dt != BOOL and dt not in INTS:
            raise Unsupported(f"{name} on {dt}")
        expr = f"({args[0]} {_BITWISE[name]} {args[1]})"
        return expr if dt == BOOL else f"{_numba_type(dt)}{expr}"
    (a,) = args
    if name == "invert":
        if dt == BOOL:
            return f"(not {a})"
        if dt in INTS:
            return f"{_numba_type(dt)}(~{a})"
    if name == "positive" and dt != BOOL:
        return a
    if name == "negative":
        if half(dt):
            return f"np.uint16({a} ^ np.uint16(0x8000))"
        if dt in INTS:
            return f"{_numba_type(dt)}(-{a})"
        if dt in (F32, F64):
            return f"(-{a})"
    if name == "absolute":
        if half(dt):
            return f"np.uint16({a} & np.uint16(0x7FFF))"
        if dt in INTS:
            return f"{_numba_type(dt)}(abs({a}))"
        if dt in (F32, F64):
            return f"abs({a})"
    if name in ("isnan", "isinf", "isfinite"):
        if half(dt):
            mask = half(dt)[2]
            test = {"isnan": f"isnan16({a}, {mask})",
                    "isinf": f"((np.uint32({a}) & np.uint32(0x7FFF)) == np.uint32({mask}))",
                    "isfinite": f"((np.uint32({a}) & np.uint32(0x7FFF)) < np.uint32({mask}))"}
            return test[name]
        if dt in (F32, F64):
            return f"np.{name}({a})"
    raise Unsupported(f"np.{name} on {dt}")


@dataclasses.dataclass(frozen=True)
class ElementCode:
    """Straight-line code for one element: ``lines`` use the names ``x0..`` (the loaded inputs,
    already in the DAG's input dtypes), ``sc_<name>`` (the scalars) and define ``e_<n>``;
    ``result`` is the value to store, already converted to the stored dtype."""

    lines: tuple[str, ...]
    result: str
    value_inputs: frozenset  # inputs whose value (not only a comparison of it) can reach the result


def _zero_bits(node: Node) -> bool:
    """Whether ``node`` is a constant whose bits are all zero (+0.0, integer 0)."""
    return node.op == "const" and not np.asarray(node.attr, dtype=node.dtype).reshape(1).view(np.uint8).any()


def _sign_test(node: Node, raw: dict) -> str | None:
    """``x > 0`` / ``x < 0`` (either operand order) of an input ``x`` widened exactly from float16
    or bfloat16 bits ``ld<k>`` (``raw``: input -> half dtype), as one unsigned compare on those
    bits, or None. True for x > 0 exactly on the bits 0x0001 .. the +inf pattern (not zero, not
    NaN), for x < 0 on 0x8001 .. -inf. LeakyReluBackward's self is only compared, so its float32
    widening goes: bfloat16 1e6, 85 -> 74 us (float16's F16C widening costs nothing to drop)."""
    if node.op != "ufunc" or node.attr not in ("greater", "less") or node.loop[0].kind != "f":
        return None
    a, b = node.args
    op = node.attr
    if a.op == "const":  # 0 < x is x > 0
        a, b, op = b, a, {"greater": "less", "less": "greater"}[op]
    if a.op != "input" or a.attr not in raw or not (b.op == "const" and b.attr == 0):
        return None
    first = 0x0001 if op == "greater" else 0x8001
    return f"(np.uint16(ld{a.attr} - np.uint16({first:#06x})) < np.uint16({half(raw[a.attr])[2]:#06x}))"


# a comparison of a raw half input against a launch-invariant float32 value, on the half's bits:
# ufunc -> (_numba_support intrinsic, its half_bound predicate code, the mirrored ufunc)
_BITS_COMPARES = {"less_equal": ("bits_le", 0, "greater_equal"), "greater_equal": ("bits_ge", 1, "less_equal"),
                  "less": ("bits_lt", 2, "greater"), "greater": ("bits_gt", 3, "less")}


def _launch_invariant(node: Node) -> bool:
    """Whether ``node`` depends on no input (scalars and constants only)."""
    return node.op in ("scalar", "const") or (node.op != "input" and all(map(_launch_invariant, node.args)))


def _bits_compare(node: Node, raw: dict, compared_only: set, emit) -> str | None:
    """``x <= s`` (or >=, <, >; either operand order) of an input ``x`` widened exactly from
    float16/bfloat16 bits ``ld<k>`` (``raw``) and a float32 ``s`` that depends on no input
    (HardtanhBackward's bounds), as a compare of 16-bit keys (``_numba_support.bits_le`` ...)
    against a bound computed from ``s`` (``half_bound``, hoisted out of the loop by LLVM), or None.
    Same answer as the float32 compare for every pattern, NaN and -0 included (tested
    exhaustively). Only for an input that is only compared (``compared_only``): the widening to
    float32 and the narrowing of its masks then drop out: 12 instead of ~18 vector instructions
    per 16 elements on AVX2 (HardtanhBackward, one thread, Zen 3 EPYC VM, separate processes
    alternating, three rounds: float16 1e6 130-181 -> 108-121 us, bfloat16 176-278 -> 85-114;
    1e5 16-19 -> 12-13 us, one bfloat16 round 17). Hardtanh's clamp, which stores the widened
    value too, ran 1.5x slower with its first compare on the bits and its second on a float32."""
    if node.op != "ufunc" or node.attr not in _BITS_COMPARES or tuple(node.loop) != (F32, F32):
        return None
    a, b = node.args
    op = node.attr
    if not (a.op == "input" and a.attr in raw):
        a, b, op = b, a, _BITS_COMPARES[op][2]
    if not (a.op == "input" and a.attr in raw and a.attr in compared_only) or not _launch_invariant(b):
        return None
    fn, code, _ = _BITS_COMPARES[op]
    bits = raw[a.attr]
    return (f"{fn}(ld{a.attr}, half_bound({emit(b)}, {code}, {is_bf16(bits)}), "
            f"np.uint16({half(bits)[2]:#06x}))")


def _selects_bf16_input(node: Node, raw: dict) -> bool:
    """Whether float32 ``node`` is a selection (nested ``where``) with a bfloat16 input widened
    exactly (``raw``) among its candidates: narrowed to bfloat16, that candidate is its own bits."""
    if node.dtype != F32:
        return False
    if node.op == "where":
        return any(_selects_bf16_input(arg, raw) for arg in node.args[1:])
    return node.op == "input" and is_bf16(raw.get(node.attr))


@functools.cache
def selects_fold() -> bool:
    """Whether numba's LLVM folds a float select into arithmetic (before 20: numba 0.60 and 0.61),
    so that float selections are written ``select_bits`` (see there: a signalling NaN the
    selection passes came out quiet). numba 0.62's LLVM 20 and later keep the select, and their
    kernels' source is as before."""
    from llvmlite import binding

    return binding.llvm_version_info < (20,)


def element_source(dag: Node, store_chain: tuple, raw: dict | None = None) -> ElementCode:
    """Code for the DAG, then the casts of ``store_chain`` (dtypes from the DAG result's onwards).
    ``raw``: inputs whose raw float16/bfloat16 bits ``ld<k>`` the walker loads and widens exactly
    into ``x<k>`` (input index -> half dtype): a sign test of one is made on its bits.

    A float32 result stored as bfloat16 is narrowed where it is cheapest, with the same bits: a
    selection with a bfloat16 input among its candidates (``_selects_bf16_input``) narrows each
    candidate instead -- the input is its own bits ``ld<k>``, an arithmetic result takes
    ``f2bf_computed``, a scalar ``f2bf`` once per launch -- so LeakyReluBackward rounds only its
    products (bfloat16 1e6: 69 -> 64 us) and Hardtanh's clamp nothing (65 -> 52 us). float16 keeps
    the round trip: F16C converts for free there. Arithmetic on widened bfloat16 inputs and
    launch-invariant values only (``grad * slope``) takes ``f2bf_rounding``, with no NaN patch:
    its NaNs have their low 16 bits zero unless a scalar is a NaN, and then the rounding
    increment is dropped instead (LeakyReluBackward and LeakyRelu bfloat16, one thread, Zen 3
    EPYC VM with AVX2, separate processes alternating, three rounds: 1e6 242-258 -> 191-213 us,
    1e5 28-36 -> 20-25; 21 instead of 30 vector instructions per 16 elements)."""
    lines: list[str] = []
    names: dict[int, str] = {}
    raw = raw or {}
    compared_only = set(raw) - value_inputs(dag)

    def emit(node: Node) -> str:
        key = id(node)
        if key in names:
            return names[key]
        bits_test = _sign_test(node, raw)
        if bits_test is None:
            bits_test = _bits_compare(node, raw, compared_only, emit)
        if bits_test is not None:
            name = f"e_{len(lines)}"
            lines.append(f"{name} = {bits_test}")
            names[key] = name
            return name
        if node.op == "input":
            names[key] = f"x{node.attr}"
            return names[key]
        if node.op == "scalar":
            names[key] = scalar_param(node.attr)
            return names[key]
        if node.op == "const":
            return literal(node.attr, node.dtype)
        if node.op == "ufunc":
            args = [emit(a) for a in node.args]
            expr = _ufunc_source(node.attr, args, node.loop)
        elif node.op == "where":
            cond = condition(node.args[0])
            a, b = emit(node.args[1]), emit(node.args[2])
            a = conv(a, node.args[1].dtype, node.dtype)
            b = conv(b, node.args[2].dtype, node.dtype)
            if node.dtype != BOOL and _zero_bits(node.args[2]):
                expr = f"zero_unless({cond}, {a})"
            elif node.dtype != BOOL and _zero_bits(node.args[1]):
                expr = f"zero_unless(not {cond}, {b})"
            elif node.dtype in (F32, F64) and selects_fold():
                expr = f"select_bits({cond}, {a}, {b})"
            else:
                expr = f"({a} if {cond} else {b})"
        else:  # pragma: no cover - trace builds no other node
            raise Unsupported(node.op)
        name = f"e_{len(lines)}"
        lines.append(f"{name} = {expr}")
        names[key] = name
        return name

    def condition(node: Node) -> str:
        c = emit(node)
        return c if node.dtype == BOOL else conv(c, node.dtype, BOOL)

    def bf16_store(node: Node) -> str:
        """float32 ``node`` narrowed to bfloat16 bits (see the docstring)."""
        if _selects_bf16_input(node, raw):
            if node.op == "input":
                return f"ld{node.attr}"
            cond = condition(node.args[0])
            return f"({bf16_store(node.args[1])} if {cond} else {bf16_store(node.args[2])})"
        computed = node.op == "ufunc" and node.attr in _ARITH  # IEEE arithmetic: quiet NaNs only
        # a line of its own, so the selection picks between two values: with the rounding inside
        # it, a loop LLVM leaves scalar (strided loads) branched per element (bfloat16 with a
        # stride of 2: 4.1 ms per 1e6 elements, 1.2 ms as a select)
        value = emit(node)  # first: a name taken before it could be one its lines define
        if computed and tuple(node.loop) == (F32, F32) and all(
                (a.op == "input" and is_bf16(raw.get(a.attr))) or _launch_invariant(a) for a in node.args):
            # its NaNs come from a widened bfloat16 (low 16 bits zero), the default NaN (the same)
            # or a NaN scalar: no NaN patch, the increment dropped for a NaN scalar instead
            nan = " or ".join(f"np.isnan({emit(a)})" for a in node.args if a.op != "input") or "False"
            rounded = f"f2bf_rounding({value}, np.uint32(0) if {nan} else np.uint32(0xFFFFFFFF))"
        else:
            rounded = f"{'f2bf_computed' if computed else 'f2bf'}({value})"
        name = f"e_{len(lines)}"
        lines.append(f"{name} = {rounded}")
        return name

    if len(store_chain) == 2 and store_chain[0] == F32 and is_bf16(store_chain[1]):
        value = bf16_store(dag)
    else:
        value = emit(dag)
        src = dag.dtype
        for dst in store_chain[1:]:
            value = conv(value, src, dst)
            src = dst
    return ElementCode(tuple(lines), value, value_inputs(dag))


_PREDICATES = frozenset(_COMPARE) | {"isnan", "isinf", "isfinite"}


def value_inputs(dag: Node) -> frozenset:
    """Indices of the inputs whose value can flow into the result. An input read only by
    comparisons and NaN/inf tests (HardtanhBackward's self) is not one: its NaN payload, or the
    quieting of a signalling NaN, cannot change the result."""
    found, seen = set(), set()

    def visit(node: Node) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if node.op == "input":
            found.add(node.attr)
        elif node.op == "where":  # the condition's operands only steer the selection
            visit(node.args[1])
            visit(node.args[2])
        elif node.op == "ufunc" and node.attr not in _PREDICATES:
            for arg in node.args:
                visit(arg)

    visit(dag)
    return frozenset(found)


def scalar_param(name: str) -> str:
    """The generated code's parameter name for kernel scalar ``name`` (prefixed: no clashes)."""
    return f"sc_{name}"


def load_source(array: str, index: str, chain: tuple) -> str:
    """Load ``array[index]`` stored as ``chain[0]`` and convert along ``chain``."""
    return convert_source(f"{array}[{index}]", chain)


def convert_source(expr: str, chain: tuple) -> str:
    """``expr`` (a value of ``chain[0]``) converted along ``chain``."""
    for src, dst in zip(chain, chain[1:]):
        expr = conv(expr, src, dst)
    return expr


def digest(*parts) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:20]
