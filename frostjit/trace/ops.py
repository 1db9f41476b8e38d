"""Node constructors: the one door through which every operation enters the trace.

``make()`` checks operand sizes (size-1 broadcasts, anything else must match),
forces evaluation of operands that pending scatters write to (so side effects
stay in program order), and tells the freeze recorder about the new node.
Type promotion happens one level up, in the array classes; here every operand
already has the type the operation expects.
"""
from __future__ import annotations

import numpy as np

from .dtypes import VarType, Bool
from .node import Node
from .state import state

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
            from ..schedule.evaluate import evaluate
            evaluate(())
            return


def normalize_literal(vt: VarType, value):
    """Convert a Python scalar to the exact value type ``vt`` stores.

    Integers wrap around like a C cast (``UInt32(-1)`` is 4294967295), floats
    round to the type's precision, Bool is ``value != 0``.
    """
    if vt is Bool:
        return bool(value)
    if vt.is_float:
        return float(np.asarray(value, dtype=np.float64).astype(vt.np_dtype))
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
