"""Python-number arithmetic for short columns of the scalar backend's eager operations.

:func:`frostjit.array.eager.compute` runs an op's NumPy reference on the components of scalar
arrays; for the one to a few components of a scalar static array (``Array3f``) or of the
one-lane arrays a scalar ``PCG32`` computes on, NumPy's per-call overhead (array creation,
error-state switching, ``tolist``) costs ~10x the arithmetic.  :func:`compute` does the common
ops on Python numbers instead, with the element type's rounding, bit-identical to the NumPy
path (``tests/array/test_eager_python.py`` compares both over every op of the op table):

- float32: the operation in double precision, then rounded to float32 once (struct
  ``"f"``; beyond float32's range: the signed infinity).  For ``+ - * /`` and ``sqrt``
  the double result is rounded twice, which is exact because ``53 >= 2 * 24 + 2``
  (the double rounding theorem); ``fma`` and transcendental functions are not done here;
- float64: Python's own IEEE double arithmetic;
- integers: Python's exact integers wrapped to the type's width (two's complement);
  shifts only for amounts inside the width, ``//`` and ``%`` (floor semantics, the scalar
  backend's) only for nonzero divisors;
- anything else (Float16, 8-bit types, float ``min``/``max``, a float divisor of zero, ...)
  returns None and the caller takes the NumPy path.

:func:`cast` and :func:`bitcast` do the same for conversions between element types (scalar
arrays built from others, ``reinterpret_array``).
"""
from __future__ import annotations

import math
import operator
import struct

from ..trace.dtypes import Bool, Float32, Float64, Int32, Int64, UInt32, UInt64

#: Columns longer than this take the NumPy path (its per-element cost is lower).
MAX_COMPONENTS = 16

_F32 = struct.Struct("f")


def _round32(v: float) -> float:
    try:
        return _F32.unpack(_F32.pack(v))[0]
    except OverflowError:      # finite but beyond float32: rounds to infinity
        return math.copysign(math.inf, v)


def _wrapper(vt):
    """The function wrapping an exact Python int to ``vt``'s width."""
    bits = vt.bits
    mask = (1 << bits) - 1
    if not vt.is_signed:
        return lambda v: v & mask
    half = 1 << (bits - 1)
    return lambda v: ((v + half) & mask) - half


_WRAP = {vt: _wrapper(vt) for vt in (Int32, UInt32, Int64, UInt64)}
_BITS = {vt: vt.bits for vt in _WRAP}
_FLOAT_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
              "neg": operator.neg, "abs": math.fabs, "sqrt": math.sqrt}
_INT_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "neg": operator.neg, "abs": abs,
            "and": operator.and_, "or": operator.or_, "xor": operator.xor, "not": operator.invert,
            "min": min, "max": max, "floordiv": operator.floordiv, "mod": operator.mod}
_BOOL_OPS = {"and": operator.and_, "or": operator.or_, "xor": operator.ne, "not": operator.not_}
_COMPARE = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
            "ge": operator.ge}
#: Every op :func:`compute` may do (for some types); the tests sweep them.
OPS = frozenset(_FLOAT_OPS) | frozenset(_INT_OPS) | frozenset(_BOOL_OPS) | frozenset(_COMPARE) | {
    "select", "shl", "shr"}


def compute(op: str, in_vt, out_vt, args: list, n: int):
    """``op`` on ``args`` (per operand: a list of ``n`` Python numbers of its type, or one
    number broadcast to all), with operands of type ``in_vt`` and results of type ``out_vt``
    (as :func:`frostjit.array.promotion.operand_types` gives them).  Returns the ``n``
    results as Python numbers, or None where this op and type are not done here (or an
    operand needs the NumPy path's special-case rules)."""
    if op in _COMPARE:
        fn, wrap = _COMPARE[op], None
    elif op == "select":
        return _select(args, n)
    elif in_vt is Float32 or in_vt is Float64:
        fn = _FLOAT_OPS.get(op)
        wrap = _round32 if out_vt is Float32 and op != "neg" and op != "abs" else None
    elif in_vt is Bool:
        fn, wrap = _BOOL_OPS.get(op), bool
    else:
        wrap = _WRAP.get(in_vt)
        if wrap is None:
            return None
        if op == "shl" or op == "shr":
            return _shift(op, in_vt, wrap, args, n)
        fn = _INT_OPS.get(op)
        if fn is not None and (op == "floordiv" or op == "mod") and _has_zero(args[1]):
            return None
    if fn is None:
        return None
    cols = [a if type(a) is list else [a] * n for a in args]
    try:
        if len(cols) == 2:
            a, b = cols
            out = [fn(a[i], b[i]) for i in range(n)]
        elif len(cols) == 1:
            a = cols[0]
            out = [fn(a[i]) for i in range(n)]
        else:
            return None
    except (ZeroDivisionError, ValueError):     # x / 0.0, sqrt(-1): IEEE results on the NumPy path
        return None
    return out if wrap is None else [wrap(v) for v in out]


def _has_zero(a) -> bool:
    return (0 in a) if type(a) is list else a == 0


def _select(args, n):
    c, a, b = (x if type(x) is list else [x] * n for x in args)
    return [a[i] if c[i] else b[i] for i in range(n)]


def _shift(op, vt, wrap, args, n):
    a, s = (x if type(x) is list else [x] * n for x in args)
    bits = _BITS[vt]
    for v in s:
        if not 0 <= v < bits:
            return None         # the op table's rule for out-of-range amounts
    if op == "shl":
        return [wrap(a[i] << s[i]) for i in range(n)]
    return [a[i] >> s[i] for i in range(n)]       # (Python's >> is arithmetic for signed values)


_EXACT_INT_IN_DOUBLE = 1 << 53
_STRUCT = {Bool: "?", Int32: "i", UInt32: "I", Int64: "q", UInt64: "Q", Float32: "f", Float64: "d"}


def cast(src_vt, vt, values: list):
    """``values`` (Python numbers of ``src_vt``) converted to ``vt`` as
    :func:`frostjit.trace.numpy_semantics.cast` converts them, or None where this path does
    not (Float16 and 8-bit types, a float whose truncation is outside an integer target's
    range or NaN: the rule's unspecified lanes; an integer beyond 2^53 to a float: it would
    round twice)."""
    if vt is Bool:
        return [v != 0 for v in values]
    if src_vt not in _STRUCT or vt not in _STRUCT:
        return None
    if vt is Float64 or vt is Float32:
        if not src_vt.is_float:
            for v in values:
                if not -_EXACT_INT_IN_DOUBLE <= v <= _EXACT_INT_IN_DOUBLE:
                    return None
            values = [float(v) for v in values]
        return values if vt is Float64 or src_vt is Float32 else [_round32(v) for v in values]
    if src_vt.is_float:
        lo, hi = _SPAN[vt]
        out = []
        for v in values:
            if v != v or v in (math.inf, -math.inf):
                return None
            t = int(v)              # truncates toward zero
            if not lo <= t < hi:
                return None
            out.append(t)
        return out
    return [_WRAP[vt](int(v)) for v in values]          # (Bool to integers: 0 / 1)


def bitcast(src_vt, vt, values: list):
    """The bits of ``values`` (Python numbers of ``src_vt``) seen as ``vt`` (same width), or
    None for types this path does not do."""
    a, b = _STRUCT.get(src_vt), _STRUCT.get(vt)
    if a is None or b is None or src_vt is Bool or vt is Bool:
        return None
    n = len(values)
    return list(struct.unpack(f"<{n}{b}", struct.pack(f"<{n}{a}", *values)))


_SPAN = {vt: ((-(1 << (vt.bits - 1)), 1 << (vt.bits - 1)) if vt.is_signed else (0, 1 << vt.bits)) for vt in _WRAP}
