"""Checking a graph against a cached plan's shape, without walking it to its shape.

A plan (:mod:`.plans`) is the spec of a graph *shape*.  An unfrozen loop evaluates a graph of the
same shape at every call, and finding its plan by the shape meant walking the graph to its key
(an entry per node), hashing the key and comparing it with the cached one: ~0.3 us a node, as
much as tracing the node.  Here the graph is checked against the shape of a plan that recently
served outputs like its own instead, from the outputs down, by one of two equivalent checkers:

* :func:`check`, which interprets :func:`program_of`'s entries (a plan's first reuses), and
* the function :func:`compile_check` generates for a plan reused more often: the same tests as
  straight-line code, one local variable per shape position (a third of the time).

Both test, for each node, its operation, type and parameter (literals: their value to the bit;
data: whether it broadcasts) and, for each operand edge, the node at its position: a position
reached for the first time takes the node, reached again it must hold that very node, so the
graph shares every node the shape shares.  A graph that passes has the shape, except that it may
share nodes the shape does not: equal operations on the same nodes compute equal values, and a
data node bound to two parameters is read twice, so the plan computes it correctly.
"""
from __future__ import annotations

from .._dump import register_source, release_source
from ..trace.dtypes import float_bits

# The kinds of a program's entries (check() tests them in this order: the most frequent first).
BINARY, TERNARY, LITERAL, DATA, UNARY, GATHER, GENERAL, SCATTER = range(8)

MAX_COMPILED = 2000         # entries of the largest shape given a generated checker


def program_of(shape: tuple) -> tuple[list, list]:
    """``(program, data positions)`` of a shape (:func:`.plans.shape_of`'s key).

    The program has one ``(kind, position, op, vt, x, y)`` per entry, every node before its
    operands (the shape reversed), with ``x, y``: the operands' positions (:data:`BINARY`),
    ``None`` and the three operands' positions (:data:`TERNARY`: ``fma``, ``select``, no
    parameter), ``None`` and the operand's position (:data:`UNARY`, no parameter), the source's
    position and the index's and mask's (:data:`GATHER`), the target's position with the
    reduction and the operands' positions (value, index, mask: :data:`SCATTER`), the parameter
    and the operands' positions (:data:`GENERAL`), the value (:data:`LITERAL`), whether it broadcasts
    (:data:`DATA`).  The data positions are those of the data entries, in order.
    """
    program = []
    data_at = []
    for i, item in enumerate(shape[:-1]):
        op = item[0]
        if op == "gather":
            program.append((GATHER, i, op, item[1], item[2], item[3]))
        elif op == "scatter":
            program.append((SCATTER, i, op, item[1], (item[3], item[4]), item[2]))
        elif op == "literal":
            program.append((LITERAL, i, op, item[1], item[2], None))
        elif op == "data":
            program.append((DATA, i, op, item[1], item[2], None))
            data_at.append(i)
        elif type(item[3]) is not tuple:
            program.append((BINARY, i, op, item[1], item[2], item[3]))
        elif item[2] is None and len(item[3]) == 3:
            program.append((TERNARY, i, op, item[1], None, item[3]))
        elif item[2] is None and len(item[3]) == 1:
            program.append((UNARY, i, op, item[1], None, item[3][0]))
        else:
            program.append((GENERAL, i, op, item[1], item[2], item[3]))
    program.reverse()
    return program, data_at


def value_key(v):
    """A literal's value or a node's parameter as the shape holds it: floats that equal zero or
    differ from themselves (``-0.0 == 0.0``, NaN) by their bits."""
    if type(v) is float and (v == 0 or v != v):
        return ("f", float_bits(v))
    return v


def check(program: list, outputs_at: tuple, outputs: list):
    """The nodes of ``outputs``' graph at the positions of the shape of ``program``, a list, or
    ``None`` if the graph does not have that shape (see the module docstring)."""
    got = [None] * len(program)
    for i, o in zip(outputs_at, outputs):
        if got[i] is not None:          # (evaluate() passes distinct outputs)
            return None
        got[i] = o
    for kind, i, op, vt, x, y in program:
        n = got[i]      # (set: every node comes after the nodes using it)
        if n.op != op or n.vt is not vt:
            return None
        # (the kinds as numbers, most frequent first: BINARY, TERNARY, LITERAL, DATA, UNARY, GATHER, SCATTER,
        # GENERAL)
        if kind == 0:
            b = n.a1
            if b is None or n.extra is not None:
                return None
            a = n.a0
            g = got[x]
            if g is None:
                got[x] = a
            elif g is not a:
                return None
            g = got[y]
            if g is None:
                got[y] = b
            elif g is not b:
                return None
        elif kind == 1:
            args = n.a0
            if n.a1 is not None or n.extra is not None or n.value is not None or len(args) != 3:
                return None
            a, b, c = args
            j, k, m = y
            g = got[j]
            if g is None:
                got[j] = a
            elif g is not a:
                return None
            g = got[k]
            if g is None:
                got[k] = b
            elif g is not b:
                return None
            g = got[m]
            if g is None:
                got[m] = c
            elif g is not c:
                return None
        elif kind == 2:
            v = n.value
            if type(v) is float and (v == 0 or v != v):
                v = ("f", float_bits(v))
            if v != x:
                return None
        elif kind == 3:
            if (n.size == 1) is not x:
                return None
        elif kind == 4:
            args = n.a0
            if n.a1 is not None or n.extra is not None or n.value is not None or len(args) != 1:
                return None
            a = args[0]
            g = got[y]
            if g is None:
                got[y] = a
            elif g is not a:
                return None
        elif kind == 5:
            # (op "gather": its extra is its source node, its operands the tuple (index, mask))
            args = n.a0
            if n.a1 is not None or len(args) != 2:
                return None
            for j, a in ((x, n.extra), (y[0], args[0]), (y[1], args[1])):
                g = got[j]
                if g is None:
                    got[j] = a
                elif g is not a:
                    return None
        elif kind == 7:
            # (op "scatter", a side effect: its extra is (target node, reduction), its value None
            # outside symbolic loops, its operands the tuple (value, index, mask))
            args = n.a0
            extra = n.extra
            if n.a1 is not None or n.value is not None or type(extra) is not tuple or len(extra) != 2 or \
                    len(args) != 3 or extra[1] != x[1]:
                return None
            for j, a in ((x[0], extra[0]), (y[0], args[0]), (y[1], args[1]), (y[2], args[2])):
                g = got[j]
                if g is None:
                    got[j] = a
                elif g is not a:
                    return None
        else:
            args = n.a0
            if n.a1 is not None or n.extra is not None or len(args) != len(y):
                return None
            if value_key(n.value) != x:
                return None
            for j, a in zip(y, args):
                g = got[j]
                if g is None:
                    got[j] = a
                elif g is not a:
                    return None
    return got


class CompiledCheck:
    """A generated checker: ``fn(outputs)`` is the list of the buffers of the data nodes at
    ``inputs_at`` (in that order) if ``outputs``' graph has the shape, else ``None``; ``filename`` is its source's
    (:mod:`frostjit._dump`), released by :meth:`release`."""

    __slots__ = ("fn", "filename")

    def __init__(self, fn, filename: str):
        self.fn = fn
        self.filename = filename

    def release(self) -> None:
        """Forget the source (the plan is dropped)."""
        release_source(self.filename)


def compile_check(program: list, outputs_at: tuple, inputs_at: tuple) -> CompiledCheck | None:
    """The checker of :func:`check` for ``program`` as generated straight-line code, returning the
    buffers of the data nodes at ``inputs_at`` (``None`` for a program of more than
    :data:`MAX_COMPILED` entries).

    Generated names: ``node_<i>`` the node at shape position ``i``, ``n`` the node being tested,
    ``t`` its operand tuple; ``vt_<k>``, ``value_<k>`` the types and values compared with.
    """
    if len(program) > MAX_COMPILED:
        return None
    consts: dict = {}
    names: dict = {}

    def const(prefix: str, v) -> str:
        key = (prefix, id(v))
        name = names.get(key)
        if name is None:
            name = names[key] = f"{prefix}_{len(names)}"
            consts[name] = v
        return name

    reached = set()
    lines = [f"def check_shape({', '.join(f'node_{i}' for i in outputs_at)}):", "  try:"]

    def operand(j: int, expr: str) -> None:
        # The first edge to reach position j binds it; every later one must find the same node.
        if j in reached:
            lines.append(f"    if {expr} is not node_{j}: return None")
        else:
            reached.add(j)
            lines.append(f"    node_{j} = {expr}")

    def unpack(n: str, positions) -> None:
        # The operand tuple unpacked in one step: a tuple of another length raises ValueError, a
        # two-operand node's a0 (a Node) TypeError, both a mismatch (the except clause below).
        if not positions:
            lines.append(f"    if {n}.a0 != (): return None")
            return
        names = []
        for k, j in enumerate(positions):
            if j in reached:
                names.append(f"t{k}")
            else:
                reached.add(j)
                names.append(f"node_{j}")
        lines.append(f"    {', '.join(names)}, = {n}.a0")
        for k, j in enumerate(positions):
            if names[k] == f"t{k}":
                lines.append(f"    if t{k} is not node_{j}: return None")

    for i in outputs_at:
        reached.add(i)
    for kind, i, op, vt, x, y in program:
        n = f"node_{i}"
        test = f"{n}.op != {op!r} or {n}.vt is not {const('vt', vt)}"
        if kind == BINARY:
            # (no test of extra: a node with a1 is made by ops.make_binary only, whose extra is None)
            lines.append(f"    if {test} or {n}.a1 is None: return None")
            operand(x, f"{n}.a0")
            operand(y, f"{n}.a1")
        elif kind == TERNARY or kind == UNARY:
            # (no test of a1 or of the operand count: the unpacking's)
            lines.append(f"    if {test} or {n}.extra is not None or {n}.value is not None: return None")
            unpack(n, y if kind == TERNARY else (y,))
        elif kind == LITERAL:
            if type(x) is float:
                # (a float key is never 0 or NaN, which are keyed by their bits: a value that is
                # compares unequal here as in the key)
                lines.append(f"    if {test} or {n}.value != {const('value', x)}: return None")
            elif type(x) is int or type(x) is bool:
                # (a float value equal to the number fails here, not in the key: it goes to the walk)
                lines.append(f"    if {test} or type({n}.value) is float or {n}.value != {const('value', x)}: "
                             "return None")
            else:
                lines.append(f"    if {test} or value_key({n}.value) != {const('value', x)}: return None")
        elif kind == DATA:
            lines.append(f"    if {test} or {n}.size {'!=' if x else '=='} 1: return None")
        elif kind == GATHER:
            # (a gather's extra is its source node; the unpacking tests the operand count)
            lines.append(f"    if {test}: return None")
            unpack(n, y)
            operand(x, f"{n}.extra")
        elif kind == SCATTER:
            # (a scatter's extra is (target, reduction), unpacked as its operands; its value is
            # None outside symbolic loops)
            lines.append(f"    if {test} or {n}.value is not None: return None")
            unpack(n, y)
            lines.append(f"    extra, reduce_op = {n}.extra")
            lines.append(f"    if reduce_op != {const('value', x[1])}: return None")
            operand(x[0], "extra")
        else:
            lines.append(f"    if {test} or {n}.a1 is not None or {n}.extra is not None or "
                         f"value_key({n}.value) != {const('value', x)}: return None")
            unpack(n, y)
    lines.append(f"    return [{', '.join(f'node_{j}.value' for j in inputs_at)}]")
    # (an exception is a mismatch, never a match: the caller then walks the graph to its shape)
    lines.append("  except (TypeError, ValueError):")
    lines.append("    return None")
    source = "\n".join(lines) + "\n"
    filename = register_source("plan shape check", source)
    namespace = dict(consts, value_key=value_key)
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace["check_shape"]
    return CompiledCheck(fn, filename)
