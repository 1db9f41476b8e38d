"""Variable nodes of the traced program.

A :class:`Node` is one JIT variable: either *pending* (an operation over other
nodes, not yet computed), a *literal* (a Python scalar broadcast to ``size``),
or *data* (an evaluated buffer).  Evaluation turns a pending node into a data
node in place, so every array that refers to it sees the result, and drops its
operands so traced graphs never grow without bound.

Nodes are reference counted by Python: when the last array referring to a data
node goes away, its buffer goes back to the backend's allocator.

Two-operand nodes (most of a trace: ``x * 2 + 1``) keep their operands in the slots
``a0`` and ``a1`` instead of a tuple: the tuple was a second object per operation for
Python's cyclic garbage collector to track and traverse (about a tenth of the tracing
cost).  :attr:`Node.args` still reads as a tuple for every node; the scheduler's hot
loops read the slots directly (``_args is None`` marks a two-operand node).
"""
from __future__ import annotations

from .dtypes import VarType


class Node:
    """One JIT variable (see module docstring).

    Attributes
    ----------
    op : str
        ``"data"``, ``"literal"`` or the name of an operation (``"add"``...).
    vt : VarType
        Element type.
    size : int
        Number of elements (1 means "broadcasts").
    args : tuple[Node, ...]
        Operands of a pending operation (a property: for a two-operand node the tuple
        ``(a0, a1)`` is built on each read; assigning it replaces the operands).
    a0, a1 : Node
        The operands of a two-operand node (set only when ``_args`` is ``None``).
    value : object
        The literal value (``"literal"``), the backend buffer (``"data"``), or
        an operation parameter (target type of a cast, ...).
    extra : object
        Operation-specific payload: the source node of a gather, the target of
        a scatter, ...
    sym : object
        Symbolic size used by frozen-function recording (``None`` otherwise).
    """

    # _args: the operand tuple, or None for a two-operand node (operands in a0 and a1, unset
    # otherwise).  One class for every node: a subclass for two-operand nodes would make the
    # attribute reads of every node polymorphic (CPython's specialized loads miss).
    __slots__ = ("op", "vt", "size", "_args", "a0", "a1", "value", "extra", "sym", "__weakref__")

    def __init__(self, op: str, vt: VarType, size: int, args: tuple = (), value=None, extra=None):
        self.op = op
        self.vt = vt
        self.size = size
        self._args = args
        self.value = value
        self.extra = extra
        self.sym = None

    @property
    def args(self) -> tuple:
        """The operands, a tuple (see the class docstring)."""
        t = self._args
        if t is None:
            return (self.a0, self.a1)
        return t

    @args.setter
    def args(self, value: tuple) -> None:
        self._args = tuple(value)
        self.a0 = self.a1 = None

    @property
    def is_data(self) -> bool:
        return self.op == "data"

    @property
    def is_literal(self) -> bool:
        return self.op == "literal"

    @property
    def is_pending(self) -> bool:
        return self.op != "data" and self.op != "literal"

    def set_data(self, buffer) -> None:
        """Turn this node into an evaluated data node holding ``buffer``."""
        self.op = "data"
        self._args = ()
        self.a0 = self.a1 = None        # (drops a two-operand node's operands)
        self.value = buffer
        self.extra = None

    def __repr__(self) -> str:
        return f"Node({self.op}, {self.vt}, size={self.size})"
