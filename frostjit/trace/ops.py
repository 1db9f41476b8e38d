"""Node constructors: the one door through which every operation enters the trace.

``make()`` checks operand sizes (size-1 broadcasts, anything else must match),
forces evaluation of operands that pending scatters write to (so side effects
stay in program order), and tells the freeze recorder about the new node.
Type promotion happens one level up, in the array classes; here every operand
already has the type the operation expects.
"""
from __future__ import annotations

import math
import struct

import numpy as np

from ..errors import ConversionOverflowError
from .dtypes import ALL_TYPES, VarType, Bool
from .node import Node
from .state import state

_F32 = struct.Struct("f")

# Operations whose result is Bool regardless of operand type.
COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
UNARY_FLOAT_TESTS = frozenset({"isnan", "isinf", "isfinite"})


def broadcast_size(op: str, args) -> int:
    """Size of an elementwise result: operands of size 1 broadcast."""
    size = 1
    for a in args:
        s = a.size
        if s != size:
            if size == 1:
                size = s
            elif s != 1:
                sizes = ", ".join(str(x.size) for x in args)
                raise ValueError(
                    f"frostjit.{op}(): incompatible array sizes ({sizes}); only size-1 operands broadcast"
                )
    return size


def make(op: str, vt: VarType, args: tuple, value=None, extra=None, size: int | None = None) -> Node:
    """Create a pending node ``op(*args)`` of type ``vt``."""
    if size is None:
        if len(args) == 2:
            # Inlined broadcast_size() for the most common case.
            sa = args[0].size
            sb = args[1].size
            size = sa if sa == sb or sb == 1 else sb if sa == 1 else broadcast_size(op, args)
        else:
            size = broadcast_size(op, args)
    if state.dirty:
        flush_if_dirty(args)
    node = Node(op, vt, size, args, value, extra)
    rec = state.recorder
    if rec is not None:
        rec.on_node(node)
    return node


def flush_if_dirty(nodes) -> None:
    """Evaluate pending side effects if one of ``nodes`` is their target."""
    dirty = state.dirty
    for a in nodes:
        if a in dirty:
            # The scheduler registers its evaluate() (the trace does not import layers above it).
            state.evaluate(())
            return


def normalize_literal(vt: VarType, value):
    """Convert a Python scalar to the exact value type ``vt`` stores.

    Integers wrap around like a C cast (``UInt32(-1)`` is 4294967295), floats
    round to the type's precision (beyond its range to +-inf, as IEEE
    arithmetic does), Bool is ``value != 0``.  This is the rule for operands
    of arithmetic; constructors check their values with :func:`convert_scalar`.
    """
    if vt is Bool:
        return bool(value)
    if vt.is_float:
        value = float(value)
        if vt.itemsize == 8:
            return value
        try:
            return _F32.unpack(_F32.pack(value))[0]
        except OverflowError:      # finite but beyond float32: rounds to infinity
            return math.copysign(math.inf, value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"cannot convert {value} to integer type {vt.name}")
        value = int(value)
    value = int(value)
    bits = vt.bits
    value &= (1 << bits) - 1
    if vt.is_signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def int_range(vt: VarType) -> tuple[int, int]:
    """The smallest and largest value of integer type ``vt``."""
    bits = vt.bits
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if vt.is_signed else (0, (1 << bits) - 1)


_INT_RANGES = {vt: int_range(vt) for vt in ALL_TYPES if vt.is_integral}


def convert_scalar(vt: VarType, value, who: str):
    """Convert a Python or NumPy scalar to type ``vt`` as a constructor does (``UInt32(v)``,
    ``full(UInt32, v)``, the value of a scatter): never silently narrowing.

    Integers must lie in ``vt``'s range; a float converts to an integer type by
    truncation toward zero, and the result must lie in the range too.  Out of
    range raises :class:`~frostjit.errors.ConversionOverflowError` (an
    ``OverflowError`` as in NumPy 2, and a ``TypeError`` as in Dr.Jit); NaN
    raises ``ValueError``.  Floats round to the float type (beyond its range
    to +-inf, like ``numpy.float32(1e40)``); Bool is ``value != 0``.

    Examples
    --------
    >>> convert_scalar(UInt32, -1.5, "UInt32()")
    Traceback (most recent call last):
    frostjit.errors.ConversionOverflowError: UInt32(): -1.5 is out of range for UInt32 [0, 4294967295]
    """
    t = type(value)
    if t is int:            # the common cases first: this is every constructor's path
        rng = _INT_RANGES.get(vt)
        if rng is not None and rng[0] <= value <= rng[1]:
            return value
    elif t is float and vt.is_float:
        return normalize_literal(vt, value)
    if hasattr(value, "__symbolic_size__"):
        # A width inside a frozen function: check the range with comparisons (the recording
        # guards them, they hold at other widths) and keep the value symbolic for literal().
        rng = _INT_RANGES.get(vt)
        if rng is not None and not rng[0] <= value <= rng[1]:
            raise ConversionOverflowError(f"{who}: {value} is out of range for {vt.name} [{rng[0]}, {rng[1]}]")
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if vt is Bool:
        return bool(value)
    if vt.is_float:
        try:
            return normalize_literal(vt, value)
        except OverflowError:       # a Python int beyond the float64 range
            raise ConversionOverflowError(f"{who}: the Python int {_short(value)} is too large for {vt.name}") \
                from None
    if isinstance(value, float):
        if value != value:
            raise ValueError(f"{who}: cannot convert NaN to the integer type {vt.name}")
        if value in (math.inf, -math.inf):
            raise ConversionOverflowError(f"{who}: cannot convert {value} to the integer type {vt.name}")
        iv = int(value)     # truncation toward zero, as a C cast and Dr.Jit do
    else:
        iv = int(value)
    lo, hi = _INT_RANGES[vt]
    if not lo <= iv <= hi:
        raise ConversionOverflowError(f"{who}: {_short(value)} is out of range for {vt.name} [{lo}, {hi}]")
    return iv


def _short(value) -> str:
    """``repr(value)``, abbreviated for Python ints of hundreds of digits."""
    r = repr(value)
    return r if len(r) <= 40 else f"{r[:12]}...{r[-4:]} ({len(r)} digits)"


def literal(vt: VarType, value, size: int = 1) -> Node:
    """A literal node: ``value`` broadcast to ``size`` elements, folded into kernels."""
    rec = state.recorder
    if rec is not None and hasattr(value, "__symbolic_size__"):
        # A width used as a value inside a frozen function: the recording recomputes it.
        return rec.symbolic_literal(vt, value, size)
    node = Node("literal", vt, size, (), normalize_literal(vt, value))
    if rec is not None:
        rec.on_node(node)
    return node


def data(vt: VarType, buffer, size: int) -> Node:
    """An evaluated node wrapping a backend buffer of ``size`` elements."""
    node = Node("data", vt, size, (), buffer)
    rec = state.recorder
    if rec is not None:
        rec.on_node(node)
    return node


def cast(node: Node, vt: VarType) -> Node:
    """Convert ``node`` to type ``vt`` (literals are converted at trace time)."""
    if node.vt is vt:
        return node
    if node.op == "literal":
        v = node.value
        if vt.is_float:
            out = literal(vt, float(v), node.size)
        elif vt is Bool:
            out = literal(vt, v != 0, node.size)
        elif node.vt.is_float:
            # Float -> int: truncation toward zero, as a kernel would do it.
            out = Node("literal", vt, node.size, (), normalize_literal(vt, int(np.trunc(v))) if v == v and abs(v) != float("inf") else 0)
        else:
            out = literal(vt, int(v), node.size)
        out.sym = node.sym      # a frozen function's symbolic size carries over
        return out
    return make("cast", vt, (node,), value=vt)


def bitcast(node: Node, vt: VarType) -> Node:
    """Reinterpret the bits of ``node`` as type ``vt`` (same width required)."""
    if vt.itemsize != node.vt.itemsize or (vt is Bool) != (node.vt is Bool):
        raise TypeError(f"reinterpret_array(): cannot reinterpret {node.vt.name} as {vt.name} (different bit widths)")
    if vt is node.vt:
        return node
    return make("bitcast", vt, (node,), value=vt)
