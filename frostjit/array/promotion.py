"""Dr.Jit's typing of operations on arrays and Python numbers, driven by the op table.

Operand types are first promoted to one type (:func:`~frostjit.trace.dtypes.promote`;
Python numbers adopt the array's type), then the op's :class:`~frostjit.trace.optable.TypeRule`
says what the operands are converted to and what the result is.  Nothing here knows
about array classes: the array layer hands in element types and gets element types back.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConversionOverflowError
from ..trace.dtypes import Bool, Float32, Int32, Int64, UInt64, VarType, promote
from ..trace.optable import OpDef, TypeRule

# Operand kinds for fast_result_type(): an array of the same class, a Python float, a Python int.
SAME, FLOAT, INT = "same", "float", "int"


def int_range(vt: VarType) -> tuple[int, int]:
    """The Python ints an integer ``vt`` takes without widening: its values as signed or
    unsigned bits (``UInt32(x) + -1`` is ``x + 0xFFFFFFFF``); floats and Bool take any."""
    if not vt.is_integral:
        return -math.inf, math.inf
    bits = vt.bits
    return -(1 << (bits - 1)), (1 << bits) - 1


def int_fits(vt: VarType, v) -> bool:
    """Whether Python int ``v`` is representable in ``vt``'s bits (as signed or unsigned)."""
    if not vt.is_integral or vt is Bool:
        return True
    bits = vt.bits
    return -(1 << (bits - 1)) <= v < (1 << bits)


def zero_dim_operand(op: str, o: np.ndarray, vt: VarType) -> np.ndarray:
    """The 0-d NumPy array ``o`` checked as an operand of arrays of type ``vt``: Dr.Jit converts
    such an operand (and a 0-d PyTorch/JAX array) to the array's type rather than typing it like
    the Python number it holds (``Int(1, 2, 3) * np.array(2.5)`` is ``Int(2, 4, 6)``,
    ``Int(1, 2, 3) == np.array(2.5)`` is true at 2), and refuses an integer that is not a value
    of ``vt`` (``UInt(1) + np.array(-1)``, ``Int(1) + np.array(2**40)``:
    :class:`~frostjit.errors.ConversionOverflowError`, Dr.Jit's "Could not promote type
    'ndarray'")."""
    v = o.item()
    if vt.is_integral and vt is not Bool and isinstance(v, (int, float)) and not isinstance(v, bool):
        check_integral_element(op, v, vt)
    return o


def check_integral_element(op: str, v, vt: VarType) -> None:
    """Raise :class:`~frostjit.errors.ConversionOverflowError` unless the NumPy value ``v`` (a
    Python int or float) truncated toward zero is a value of the integer type ``vt``: Dr.Jit's
    "Could not promote type" (``UInt(3) + np.float64(-1.5)``, ``Int(3) + np.float32(1e20)``, NaN)."""
    lo, hi = (-(1 << (vt.bits - 1)), (1 << (vt.bits - 1)) - 1) if vt.is_signed else (0, (1 << vt.bits) - 1)
    if isinstance(v, float) and not math.isfinite(v) or not lo <= math.trunc(v) <= hi:
        raise ConversionOverflowError(f"frostjit.{op}(): could not promote the NumPy value {v} to {vt.name}")


def scalar_type_of(v, like: VarType | None) -> VarType:
    """Type a Python scalar takes when combined with an array of type ``like``."""
    if isinstance(v, (bool, np.bool_)):
        return like if like is not None else Bool
    if isinstance(v, (int, np.integer)):
        if like is None or like is Bool:
            return Int32
        return like
    if isinstance(v, (float, np.floating)):
        if like is not None and like.is_float:
            return like
        return Float32
    raise TypeError


def with_python_scalar(op: str, vt: VarType | None, o, no_float_promotion: bool) -> VarType:
    """The operand type of ``op`` after a Python scalar ``o`` joins operands of type ``vt``
    (None: no array operand typed yet).

    A Python float turns integers into ``Float32`` (not for bitwise ops and shifts:
    ``no_float_promotion``); a Python int beyond 32 bits makes an integer operation ``Int64``
    (``UInt64`` beyond that), as Dr.Jit; an 8-bit type takes only ints of its width
    (:class:`~frostjit.errors.ConversionOverflowError` otherwise).  Shared by the JIT's
    :func:`~frostjit.array.flat.apply` and the scalar backend's eager kernels.
    """
    if vt is None:
        vt = scalar_type_of(o, None)
    elif isinstance(o, (float, np.floating)) and not vt.is_float and not no_float_promotion:
        vt = Float32 if vt.rank < Float32.rank else vt
    elif vt is Bool and isinstance(o, (int, np.integer)) and not isinstance(o, (bool, np.bool_)):
        vt = Int32      # Dr.Jit: a mask beside a Python int counts as 0/1 (Bool(...) * 2 is an Int)
    if isinstance(o, (int, np.integer)) and not isinstance(o, (bool, np.bool_)) \
            and vt.is_integral and vt is not Bool and not int_fits(vt, o):
        # Dr.Jit: a Python int beyond 32 bits is an Int64 (UInt64 beyond that), not wrapped.
        # (A width inside a frozen function is compared as it is: the recording guards
        # the comparisons instead of pinning the exact value.)
        v = o if hasattr(o, "__symbolic_size__") else int(o)
        if vt.bits < 32:
            # Dr.Jit: an 8-bit array takes only Python ints of its width.
            lo, hi = int_range(vt)
            raise ConversionOverflowError(f"frostjit.{op}(): the Python int {o} does not fit "
                                          f"{vt.name} (takes {lo}..{hi})")
        big = Int64 if -2**63 <= v < 2**63 else UInt64
        if not -2**63 <= v < 2**64:
            raise ConversionOverflowError(f"frostjit.{op}(): Python int {o} does not fit in 64 bits "
                                          f"(could not promote type 'int')")
        vt = promote(vt, big)
    return vt


def fast_result_type(entry: OpDef, vt: VarType, kind: str, is_operator: bool) -> VarType | None:
    """The result type of ``entry`` on an array of type ``vt`` and an operand of ``kind``
    (:data:`SAME`, :data:`FLOAT`, :data:`INT`) when nothing needs converting, else None.

    ``None`` sends the operation to the general path (promotion, conversions, errors).
    ``is_operator``: a Python operator (``x ** 2`` has exact special cases there).
    """
    simple = kind == SAME or (kind == FLOAT and vt.is_float) or (kind == INT and vt is not Bool)
    if not simple or (entry.integer_variant is not None and kind != SAME):
        return None
    rule = entry.types
    if rule is TypeRule.COMPARE:
        return Bool
    if rule is TypeRule.SHIFT:
        return vt if vt.is_integral else None
    if rule is TypeRule.BITWISE:
        return vt if kind == SAME or not vt.is_float else None
    if vt is Bool:
        return None
    if rule in (TypeRule.NUMERIC, TypeRule.ANY):
        return vt
    if rule in (TypeRule.FLOAT, TypeRule.ROUNDING):
        return vt if vt.is_float else None
    return None


def operand_types(entry: OpDef, vt: VarType, operand_vts: list, names: str):
    """``(node_vt, result_vt, targets)`` of ``entry`` on operands promoted to ``vt``.

    ``operand_vts[k]`` is operand k's element type (None for a Python number);
    ``targets[k]`` the type it is converted to (None: keep it as it is).  ``names``
    describes the operands for error messages.  Raises ``TypeError`` for types the op's
    rule rejects.
    """
    op = entry.name
    rule = entry.types
    n = len(operand_vts)
    if rule is TypeRule.COMPARE:
        return vt, Bool, [vt] * n
    if rule is TypeRule.SELECT:
        if operand_vts[0] is not Bool:
            raise TypeError(f"frostjit.select(): the condition must be a Bool array, got {names.split(',')[0]}")
        return vt, vt, [None] + [vt] * (n - 1)
    if rule is TypeRule.BITWISE:
        # x & mask / x | mask keep x's type (Dr.Jit's masking idiom)
        if n == 2 and operand_vts[1] is Bool and vt is not Bool:
            avt = operand_vts[0] if operand_vts[0] is not None else vt
            if op != "and" and avt.is_integral:
                # Dr.Jit's Python operators: int | mask and int ^ mask count the mask as 0/1
                # (Int(-3, 5) | Bool(True, False) is [-3, 5]; it set every bit: [-1, 5])
                return avt, avt, [avt, avt]
            if op == "xor":
                raise TypeError(f"frostjit.xor(): unsupported operand types ({names})")
            return avt, avt, [avt, None]
        return vt, vt, [vt] * n
    if rule is TypeRule.SHIFT:
        if not vt.is_integral:
            raise TypeError(f"frostjit.{op}(): shifts need integer arrays, got ({names})")
        return vt, vt, [vt] * n
    if rule is TypeRule.NOT:
        if vt.is_float:
            raise TypeError(f"frostjit: '~' is not defined for {names}")
        return vt, vt, [vt] * n
    if rule is TypeRule.FLOAT_TEST:
        if not vt.is_float:
            raise TypeError(f"frostjit.{op}(): needs a float array, got ({names})")
        return vt, Bool, [vt] * n
    if rule in (TypeRule.CONVERT, TypeRule.REINTERPRET, TypeRule.NONE):
        raise TypeError(f"frostjit.{op}() is not an element-wise operation on arrays")
    if vt is Bool and rule is not TypeRule.ANY:
        raise TypeError(f"frostjit.{op}(): arithmetic is not defined for Bool arrays ({names}); "
                        "convert them first, e.g. UInt32(mask)")
    if rule is TypeRule.FLOAT and not vt.is_float:
        vt = Float32
    elif rule is TypeRule.INTEGER and not vt.is_integral:
        raise TypeError(f"frostjit.{op}(): needs integer arrays, got ({names})")
    return vt, vt, [vt] * n


# -- operators Dr.Jit's Python arrays refuse ------------------------------------------------
# Dr.Jit's ``/`` takes float operands only, ``//``, ``%`` and the shifts integer ones only,
# and ``&``, ``|``, ``^`` no floats but ``float_array & mask``: its operators return
# ``NotImplemented`` otherwise, so Python raises ``TypeError: unsupported operand type(s)``.
# (``frostjit.apply`` and the functions built on it still compute these: ``fj.mean(Int)``.)
REFUSABLE_OPERATORS = frozenset({"truediv", "floordiv", "mod", "and", "or", "xor", "shl", "shr"})
# A NumPy scalar or 0-d array beside a mask is converted to a mask by Dr.Jit, whose masks do no
# arithmetic: ``Bool(True, False) * np.array(2)`` returns NotImplemented (NumPy computes it).
MASK_REFUSED_OPERATORS = frozenset({"add", "sub", "mul", "truediv", "floordiv", "mod", "shl", "shr"})


def operator_refused(op: str, left, right) -> bool:
    """Whether Dr.Jit's Python operator ``left <op> right`` refuses its operands.

    ``left``/``right``: an array operand's element :class:`VarType`, or a Python scalar's type
    (``int``, ``float``, ``bool``)."""
    if op not in REFUSABLE_OPERATORS:
        return False
    floats = [_is_float_kind(k) for k in (left, right)]
    if op == "truediv":
        return not any(floats)
    if op in ("floordiv", "mod", "shl", "shr"):
        return any(floats)
    if any(floats):     # and/or/xor: only float & mask (Float & Bool, Float & True)
        return not (op == "and" and floats[0] and (right is Bool or right is bool))
    return False


def _is_float_kind(k) -> bool:
    if isinstance(k, VarType):
        return k.is_float
    return issubclass(k, (float, np.floating))
