"""Literal folding: operations whose operands are all literals compute at trace time.

This module holds the rules (which operations fold, the folded value, the symbolic size);
the node doors of :mod:`.ops` apply them and make the literal node (one door for nodes).

Dr.Jit 1.5 propagates constants while it traces: ``Int(4) + Int(5)`` is a literal 9
(``VarState.Literal``), ``fj.zeros(Float, 5) + 1`` a literal 1 of five elements, and
``fj.select`` with a literal condition is the chosen operand.  frostjit does the same in its
node doors (:mod:`.ops`): when every operand of a lane-wise operation is a literal, the door
makes a literal node of :func:`folded_value` instead of a pending node (``select`` on a
literal condition returns the chosen operand, broadcast to a literal of the result's size
when it is a narrower literal).

**A folded value is what a kernel would compute, bit for bit.**  Folding evaluates the op's
reference semantics (:mod:`.numpy_semantics`, the spec every backend matches bit for bit:
``tests/trace/test_optable.py``) on one-element arrays of the operands' types, so integer
arithmetic wraps, ``//`` and ``%`` round as C's, shifts beyond the width give 0, ``fma``
rounds once, ``Float16`` computes in ``float32``.  Operations with a documented accuracy
(the transcendental functions and float ``pow``: vectorized polynomial approximations
whose last bit may differ from NumPy's) are **not** folded: their result stays a pending
node computed by the kernel (a deliberate difference from Dr.Jit, which folds them too;
docs/engine.md, "Differences from Dr.Jit").  Conversions fold in
:func:`.ops.cast` and :func:`.ops.bitcast`.

Folding follows ``JitFlag.ConstantPropagation`` (set by default, as in Dr.Jit): cleared,
every operation makes a pending node.

Inside a frozen function's recording a folded literal keeps the symbolic size of its
operands (``fj.zeros(Float, fj.width(x)) + 1``).  Literal *values* there are either
constants of the function or literal inputs, whose values are part of the recording's key
(a changed value records again, then the input is made opaque), so a folded value is never
stale in a replay.
"""
from __future__ import annotations

import math
import operator
import struct
from fractions import Fraction

import numpy as np

from .dtypes import ALL_TYPES, Bool, Float16, Float64
from .optable import OPS, TRANSCENDENTAL
from .state import JitFlag, state

CONSTANT_PROPAGATION = int(JitFlag.ConstantPropagation)

#: The reference of every operation that folds on literals: lane-wise, exact (no accuracy
#: bound), no parameter (conversions fold in their own doors, :func:`.ops.cast`).
FOLDABLE: dict = {name: e.numpy for name, e in OPS.items()
                  if e.lanewise and name not in TRANSCENDENTAL and name not in ("cast", "bitcast")
                  and e.numpy is not None}


def enabled() -> bool:
    """Whether literal folding is on (``JitFlag.ConstantPropagation``)."""
    return bool(state.flags & CONSTANT_PROPAGATION)


def folded_value(op: str, vt, args: tuple):
    """The value of ``op(*args)`` on the literal nodes ``args`` (``op`` in :data:`FOLDABLE`,
    result type ``vt``), as the literal of a node of type ``vt`` stores it (a Python
    ``int``, ``float`` or ``bool``): the op's reference semantics on one-element arrays, or
    for the common cases the same value computed on Python numbers (``_PYTHON_BINARY``,
    ``_PYTHON_UNARY`` below: ~1.5 us a fold; the NumPy path costs ~20 us, mostly
    ``numpy.errstate``).

    Examples
    --------
    >>> folded_value("add", Int32, (literal(Int32, 2**31 - 1), literal(Int32, 1)))     # wraps
    -2147483648
    >>> folded_value("shl", UInt32, (literal(UInt32, 1), literal(UInt32, 32)))   # count >= the width
    0
    """
    if len(args) == 2:
        a, b = args
        f = _PYTHON_BINARY.get((op, a.vt, b.vt))
        if f is not None:
            value = f(a.value, b.value)
            if value is not _NO:
                return value
    elif len(args) == 1:
        f = _PYTHON_UNARY.get((op, args[0].vt))
        if f is not None:
            return f(args[0].value)
    elif len(args) == 3:
        a, b, c = args
        f = _PYTHON_TERNARY.get((op, a.vt)) if a.vt is b.vt is c.vt else None
        if f is not None:
            value = f(a.value, b.value, c.value)
            if value is not _NO:
                return value
    arrays = [np.array([a.value], dtype=a.vt.np_dtype) for a in args]
    return FOLDABLE[op](vt, *arrays)[0].item()


def result_sym(args: tuple, size: int):
    """The symbolic size a folded result takes while a frozen function records: that of an
    operand of the result's size; ``None`` for a size-1 result (the recorder gives it its
    symbol); ``False`` when operands of the result's size do not share one symbol (their
    sizes are equal in this call, not known to be in others: the door makes a pending node,
    whose recording guards the equality)."""
    if size == 1:
        return None
    sym = None
    for a in args:
        if a.size == size:
            s = a.sym
            if sym is None:
                sym = s
            elif s is not sym:
                return False
    return sym


# -- the common cases on Python numbers --------------------------------------------------------
#
# Exact by construction: Python ints are exact and wrap around below; Python floats are IEEE
# doubles (+ - * / correctly rounded, comparisons IEEE, NaN unordered); a Float32 result
# computed in double and rounded once to float32 is the correctly rounded float32 result
# for + - * / and sqrt (double has more than 2 * 24 + 2 bits: the double rounding is
# innocuous); fma as below.  Everything else (Float16 arithmetic, rounding, bit counts, x / 0.0, a
# Bool mask operand, ...) takes the NumPy reference.  One function per (op, operand types),
# made once.

_NO = object()
_F32 = struct.Struct("f")


def to_f32(v: float) -> float:
    """The double ``v`` rounded to float32 (to +-inf beyond its range)."""
    try:
        return _F32.unpack(_F32.pack(v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def _wrapper(vt):
    """``wrap(v)``: the Python int ``v`` wrapped around to integer type ``vt``."""
    mask = (1 << vt.bits) - 1
    if not vt.is_signed:
        return lambda v: v & mask
    half = 1 << (vt.bits - 1)
    return lambda v: ((v + half) & mask) - half


def _binary_functions() -> dict:
    table = {}
    compare = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
               "gt": operator.gt, "ge": operator.ge}
    arith = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}
    bits = {"and": operator.and_, "or": operator.or_, "xor": operator.xor}
    for vt in ALL_TYPES:
        if vt is Float16:
            continue
        for name, f in compare.items():
            table[(name, vt, vt)] = f
        if vt is Bool:
            for name, f in bits.items():
                table[(name, vt, vt)] = f
        elif vt is Float64:
            table.update({(name, vt, vt): f for name, f in arith.items()})
            table[("truediv", vt, vt)] = lambda x, y: _NO if y == 0 else x / y
        elif vt.is_float:
            for name, f in arith.items():
                table[(name, vt, vt)] = lambda x, y, f=f: to_f32(f(x, y))
            table[("truediv", vt, vt)] = lambda x, y: _NO if y == 0 else to_f32(x / y)
        else:
            wrap = _wrapper(vt)
            for name, f in {**arith, **bits}.items():
                table[(name, vt, vt)] = lambda x, y, f=f, wrap=wrap: wrap(f(x, y))
            table.update({(name, vt, vt): f(vt, wrap) for name, f in _INTEGER_BINARY.items()})
        if vt.is_float:
            table[("min", vt, vt)] = _float_min
            table[("max", vt, vt)] = _float_max
        elif vt is not Bool:
            table[("min", vt, vt)] = min
            table[("max", vt, vt)] = max
    return table


def _float_min(x: float, y: float) -> float:
    """IEEE 754-2019 ``minimum``: NaN if either is NaN, ``-0 < +0`` (the result is an operand:
    no rounding)."""
    if x != x or y != y:
        return math.nan
    if x == y:
        return x if math.copysign(1.0, x) < 0 else y
    return x if x < y else y


def _float_max(x: float, y: float) -> float:
    """IEEE 754-2019 ``maximum`` (see :func:`_float_min`)."""
    if x != x or y != y:
        return math.nan
    if x == y:
        return y if math.copysign(1.0, x) < 0 else x
    return x if x > y else y


def _c_division(vt, wrap):
    def floordiv(x: int, y: int) -> int:
        """C's quotient: toward zero; ``x // 0 == 0``; ``INT_MIN // -1`` wraps."""
        if y == 0:
            return 0
        q = abs(x) // abs(y)
        return wrap(-q if (x < 0) != (y < 0) else q)
    return floordiv


def _c_remainder(vt, wrap):
    def mod(x: int, y: int) -> int:
        """C's remainder: the dividend's sign; ``x % 0 == 0``."""
        if y == 0:
            return 0
        r = abs(x) % abs(y)
        return wrap(-r if x < 0 else r)
    return mod


def _shifter(left: bool):
    def make(vt, wrap):
        bits = vt.bits
        count_mask = (1 << bits) - 1

        def shift(x: int, y: int) -> int:
            """Counts >= the width (negative ones as huge unsigned counts) give 0, or -1 for a
            right shift of a negative signed value."""
            y &= count_mask
            if y >= bits:
                return -1 if (not left and x < 0) else 0
            return wrap(x << y) if left else x >> y
        return shift
    return make


_INTEGER_BINARY = {"floordiv": _c_division, "mod": _c_remainder, "shl": _shifter(True), "shr": _shifter(False)}


def _unary_functions() -> dict:
    table = {("not", Bool): operator.not_}
    for vt in ALL_TYPES:
        if vt.is_float:
            table[("neg", vt)] = operator.neg       # (exact: flips the sign bit, NaN and zeros too)
            table[("abs", vt)] = math.fabs
            table[("isnan", vt)] = math.isnan
            table[("isinf", vt)] = math.isinf
            table[("isfinite", vt)] = math.isfinite
            if vt is Float64:
                table[("sqrt", vt)] = lambda x: math.nan if x < 0 else math.sqrt(x)
            elif vt is not Float16:
                table[("sqrt", vt)] = lambda x: math.nan if x < 0 else to_f32(math.sqrt(x))
        elif vt is not Bool:
            wrap = _wrapper(vt)
            table[("neg", vt)] = lambda x, wrap=wrap: wrap(-x)
            table[("not", vt)] = lambda x, wrap=wrap: wrap(~x)
            table[("abs", vt)] = lambda x, wrap=wrap: wrap(abs(x))
    return table


_F64_BITS = struct.Struct("<d")
_I64_BITS = struct.Struct("<q")


def _fma_f32(a: float, b: float, c: float):
    """Float32 ``a * b + c`` rounded once, as the NumPy reference computes it: the product of
    two float32 values is exact in double; the sum is rounded to odd in double (Knuth's
    two-sum gives the error; an inexact sum with an even last bit steps toward it), then to
    nearest float32.  ``_NO`` (the reference decides) unless inputs and result are finite."""
    p = a * b
    s = p + c
    if not (math.isfinite(s) and math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return _NO
    bb = s - p
    e = (p - (s - bb)) + (c - bb)
    if e != 0 and not _I64_BITS.unpack(_F64_BITS.pack(s))[0] & 1:
        s = math.nextafter(s, math.inf if e > 0 else -math.inf)
    return to_f32(s)


def _fma_f64(a: float, b: float, c: float):
    """Float64 ``a * b + c`` rounded once: exact rational arithmetic, rounded by ``float()``
    (int / int true division is correctly rounded).  ``_NO`` (the reference decides, signed
    zeros and IEEE specials included) unless inputs and result are finite and non-zero."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return _NO
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return _NO
    try:
        r = float(exact)
    except OverflowError:
        return _NO
    return r if math.isfinite(r) else _NO


def _ternary_functions() -> dict:
    table = {}
    for vt in ALL_TYPES:
        if vt is Float64:
            table[("fma", vt)] = _fma_f64
        elif vt.is_float and vt is not Float16:
            table[("fma", vt)] = _fma_f32
        elif vt.is_integral:
            wrap = _wrapper(vt)
            table[("fma", vt)] = lambda x, y, z, wrap=wrap: wrap(x * y + z)
    return table


_PYTHON_BINARY = _binary_functions()
_PYTHON_UNARY = _unary_functions()
_PYTHON_TERNARY = _ternary_functions()
