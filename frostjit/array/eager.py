"""Eager element-wise operations of the scalar backend: the op table's NumPy references.

A scalar static array (``frostjit.scalar.Array3f``) holds Python numbers; its class says
their element type.  An operation on such arrays is typed exactly as the JIT types it
(:func:`frostjit.array.promotion.operand_types`, the same Dr.Jit promotion) and computed at
once by the op's reference semantics (:mod:`frostjit.trace.numpy_semantics`) on NumPy
arrays of that type, one entry per component: so a ``Float32`` sum is rounded to float32,
a ``Float16`` product is computed in float32 and rounded to half, integers wrap, exactly
as a kernel of the LLVM backend computes them (transcendental functions: within the op's
documented ULP bound, as the references are correctly rounded and the kernels are
polynomials).
"""
from __future__ import annotations

import math
import struct

import numpy as np

from . import eager_python, promotion
from ..errors import UnsupportedOperandError
from ..trace import numpy_semantics as ns
from ..trace import ops
from ..trace.dtypes import ALL_TYPES, Bool, Float64, Int64, UInt64, from_numpy_dtype, promote
from ..trace.optable import OPS, TypeRule, node_op

_NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating)


class Column:
    """The components of one operand: a NumPy array or a list of Python numbers (of ``vt``'s
    range and precision), of element type ``vt``."""

    __slots__ = ("values", "vt")

    def __init__(self, values: np.ndarray, vt):
        self.values = values
        self.vt = vt


def column(values, vt) -> Column:
    """Python numbers ``values`` (already of ``vt``'s range and precision) as a :class:`Column`."""
    return Column(np.array(values, dtype=vt.np_dtype).reshape(-1), vt)


def compute(op: str, operands, who):
    """``op`` on :class:`Column` operands and Python numbers (broadcast to every component).

    Parameters
    ----------
    op : str
        A lane-wise op of the op table (``"add"``, ``"sqrt"``, ``"select"``, ...).
    operands : sequence
        :class:`Column` objects (of equal lengths) and Python/NumPy scalars.
    who : str or callable
        The operand types, for error messages (a callable returning them: called only for
        an error).

    Returns
    -------
    (list, VarType)
        The result components as Python numbers and their element type.

    Raises
    ------
    TypeError
        Operand types the op's type rule rejects (as the JIT raises).
    """
    key = _plan_key(op, operands)
    plan = _PLANS.get(key) if key is not None else None
    if plan is None:
        plan = _plan(op, operands, who if isinstance(who, str) else who())
        if key is not None:
            _PLANS[key] = plan
    in_vt, out_vt, targets = plan
    first = next(o for o in operands if type(o) is Column)
    if targets is None:
        # Integers are already rounded (fj.floor of an Array3i is the array itself).
        return ns.cast(out_vt, _array(first)).tolist(), out_vt
    n = len(first.values)
    if n <= eager_python.MAX_COMPONENTS and op in eager_python.OPS:
        out = _python_path(op, operands, targets, in_vt, out_vt, n)
        if out is not None:
            return out, out_vt
    args = []
    for o, t in zip(operands, targets):
        if isinstance(o, Column):
            a = _array(o)
            if t is not None and t is not o.vt:
                a = ns.cast(t, a)
        else:
            t = t if t is not None else Bool
            # (the JIT's literal conversion: integers wrap, floats round, Float16 via float32)
            a = np.array(ops.normalize_literal(t, o.item() if isinstance(o, np.generic) else o), dtype=t.np_dtype)
        args.append(a)
    ref = _FLOOR.get(op) if not out_vt.is_float else None
    ref = ref or OPS[node_op(op, in_vt)].numpy
    with np.errstate(all="ignore"):
        out = np.asarray(ref(out_vt, *args), dtype=out_vt.np_dtype)
    if out.shape != (n,):         # (only Python-number operands reached it)
        out = np.broadcast_to(out, (n,))
    return out.tolist(), out_vt


#: The typing of each (op, operand kinds) seen: ``(in_vt, out_vt, targets)`` (see :func:`_plan`).
_PLANS: dict = {}


def _plan_key(op: str, operands):
    """The typing's cache key: the op and each operand's element type (Python numbers: their
    Python type); None where the typing may depend on a value (a Python int that would widen
    the integer type, NumPy scalars)."""
    key = [op]
    col_vt = None
    ints = None
    for k, o in enumerate(operands):
        t = type(o)
        if t is Column:
            key.append(o.vt)
            if not (op == "select" and k == 0):
                col_vt = o.vt if col_vt is None else promote(col_vt, o.vt)
        elif t is float or t is bool:
            key.append(t)
        elif t is int:
            key.append(t)
            ints = [o] if ints is None else ints + [o]
        else:
            return None
    if ints is not None:
        if col_vt is None:
            return None
        lo, hi = _INT_SPAN[col_vt]
        for v in ints:
            if not lo <= v < hi:
                return None
    return tuple(key)


# Per element type, the Python ints that keep it (promotion.int_fits: its bits, signed or not).
_INT_SPAN = {vt: ((-(1 << (vt.bits - 1)), 1 << vt.bits) if vt.is_integral else (-math.inf, math.inf))
             for vt in ALL_TYPES}


def fast_plan(op: str, operands):
    """What the scalar backend's hot path needs to run ``op`` on operands of these kinds on
    Python numbers without :func:`compute`'s dispatch: ``(in_vt, out_vt, targets, int_span)``
    (``int_span``: the Python ints for which the plan holds), or None where the op is not one
    of :mod:`.eager_python`'s, a column needs a conversion, or the typing raises (the caller
    then takes :func:`compute`, which raises it).  ``operands``: :class:`Column` objects
    (their values unused) and Python numbers standing for their type."""
    if op not in eager_python.OPS or _plan_key(op, operands) is None:
        return None
    try:
        in_vt, out_vt, targets = _plan(op, operands, "")
    except (TypeError, ValueError, OverflowError):
        return None
    if targets is None:
        return None
    col_vt = None
    for k, (o, t) in enumerate(zip(operands, targets)):
        if type(o) is Column:
            want = t if t is not None else (Bool if op == "select" and k == 0 else in_vt)
            if o.vt is not want:
                return None
            if not (op == "select" and k == 0):
                col_vt = o.vt if col_vt is None else promote(col_vt, o.vt)
    return in_vt, out_vt, targets, _INT_SPAN[col_vt] if col_vt is not None else (0, 0)


def _plan(op: str, operands, who: str):
    """``(in_vt, out_vt, targets)`` of ``op`` on these operands (Dr.Jit's promotion, the
    JIT's rule); ``targets`` None for a rounding op on integers (the identity)."""
    entry = OPS.get(op)
    if entry is None or not entry.lanewise:
        raise TypeError(f"frostjit: {op!r} is not an element-wise operation")
    vt = None
    for k, o in enumerate(operands):
        if isinstance(o, Column) and not (op == "select" and k == 0):
            vt = o.vt if vt is None else promote(vt, o.vt)
    no_float_promotion = entry.types in (TypeRule.BITWISE, TypeRule.SHIFT)
    for k, o in enumerate(operands):
        if not isinstance(o, Column) and not (op == "select" and k == 0):
            if not isinstance(o, _NUMBERS):
                raise UnsupportedOperandError(f"frostjit.{op}(): unsupported operand type {type(o).__name__} ({who})")
            vt = promotion.with_python_scalar(op, vt, o, no_float_promotion)
    operand_vts = [o.vt if isinstance(o, Column) else (Bool if op == "select" and k == 0 else None)
                   for k, o in enumerate(operands)]
    if entry.types is TypeRule.ROUNDING and vt is not Bool and not vt.is_float:
        return vt, vt, None
    return promotion.operand_types(entry, vt, operand_vts, who)


def _array(col: Column) -> np.ndarray:
    v = col.values
    return v if type(v) is not list else np.array(v, dtype=col.vt.np_dtype)


def _python_path(op: str, operands, targets, in_vt, out_vt, n: int):
    """:func:`compute` on Python numbers (:mod:`.eager_python`) where every column already has
    its operand type (no conversion); None where that path does not do this op."""
    args = []
    for k, (o, t) in enumerate(zip(operands, targets)):
        if type(o) is Column:
            want = t if t is not None else (Bool if op == "select" and k == 0 else in_vt)
            if o.vt is not want:
                return None
            v = o.values
            args.append(v if type(v) is list else v.tolist())
        else:
            args.append(literal(t if t is not None else Bool, o))
    return eager_python.compute(op, in_vt, out_vt, args, n)


def literal(t, o):
    """The Python-number operand ``o`` as operand type ``t`` has it (the JIT's literal rule:
    :func:`frostjit.trace.ops.normalize_literal`)."""
    if type(o) is int:
        key = (t, o)
        v = _INT_LITERALS.get(key)
        if v is None:
            v = ops.normalize_literal(t, o)
            if len(_INT_LITERALS) > 1024:
                _INT_LITERALS.clear()
            _INT_LITERALS[key] = v
        return v
    return ops.normalize_literal(t, o.item() if isinstance(o, np.generic) else o)


#: Python int operands converted to their operand type (the constants of a generator's steps
#: recur; bounded: cleared when full).  Only ints: ``0.0 == -0.0`` would share a key.
_INT_LITERALS: dict = {}


def _floor_adjust(vt, a, b):
    """C's quotient and remainder (the op table's, as Dr.Jit's JIT arrays compute them) moved to
    Python's floor rounding where the remainder's sign differs from the divisor's."""
    a, b = np.broadcast_arrays(a, b)
    q, r = ns.floordiv(vt, a, b), ns.mod(vt, a, b)
    fix = (r != 0) & ((r < 0) != (b < 0))
    return q, r, fix, b


def _floor_floordiv(vt, a, b):
    q, _, fix, _ = _floor_adjust(vt, a, b)
    return np.where(fix, q - q.dtype.type(1), q)


def _floor_mod(vt, a, b):
    _, r, fix, b = _floor_adjust(vt, a, b)
    return np.where(fix, r + b, r)


# Integer // and % of scalar arrays round toward -infinity, as Python's and Dr.Jit 1.5's scalar
# backend (measured: drjit.scalar.Array3i(-7) // 2 is -4, % 2 is 1), unlike its JIT arrays
# (C's: -3, -1), whose rule the op table holds.
_FLOOR = {"floordiv": _floor_floordiv, "mod": _floor_mod}


def python_numbers(op: str, operands):
    """``op`` on Python numbers only (the components of scalar-backend arrays, read by code
    written over components: matrix products, complex functions): as Python computes them, in
    double precision (the op table's ``py``, IEEE special values), as Dr.Jit does on Python
    numbers.  Ops without a ``py`` run their reference on ``Float64`` / ``Int64`` / ``Bool``
    (a NumPy scalar: its own type)."""
    if op == "fma" and all(type(o) is float for o in operands) and _is_float32(operands[0]) \
            and _is_float32(operands[1]):
        # The product of two float32 values is exact in double: ``a * b + c`` rounds once, as the
        # fma does (the common case: components of Float32 arrays; ~30x faster than the exact
        # general algorithm).
        a, b, c = operands
        return a * b + c
    entry = OPS[op]
    if entry.py is not None:
        return entry.py(*operands)
    cols = [Column(np.array([o]), _python_vt(o)) for o in operands]
    values, _ = compute(op, cols, ", ".join(type(o).__name__ for o in operands))
    return values[0]


_F32 = struct.Struct("f")


def _is_float32(v: float) -> bool:
    """Whether the Python float ``v`` is a float32 value (NaN and infinities are)."""
    try:
        w = _F32.unpack(_F32.pack(v))[0]
    except OverflowError:
        return False
    return w == v or v != v


def _python_vt(v):
    if isinstance(v, np.generic):
        return from_numpy_dtype(v.dtype)
    if isinstance(v, bool):
        return Bool
    if isinstance(v, int):
        return Int64 if -2**63 <= v < 2**63 else UInt64
    return Float64
