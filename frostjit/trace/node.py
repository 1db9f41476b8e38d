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
cost).  Every other node has ``a1 = None`` and its operand tuple in ``a0`` (``()`` for
data and literals).  :attr:`Node.args` reads as the operand tuple of every node; the
scheduler's hot loops read the slots directly, without the property's call.
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
    a0, a1 : Node or tuple
        The two operands of a two-operand node; for every other node ``a1`` is ``None``
        and ``a0`` the operand tuple.
    value : object
        The literal value (``"literal"``), the backend buffer (``"data"``), or
        an operation parameter (target type of a cast, ...).
    extra : object
        Operation-specific payload: the source node of a gather, the target of
        a scatter, ...
    sym : object
        Symbolic size used by frozen-function recording (``None`` otherwise).
    """

    # Two slots for the operands of every kind of node (a separate tuple slot would be one more
    # store per operation and one more reference for the collector to visit).  One class for
    # every node: a subclass for two-operand nodes would make the attribute reads of every node
    # polymorphic (CPython's specialized loads miss: W1 measured ~10% slower).
    __slots__ = ("op", "vt", "size", "a0", "a1", "value", "extra", "sym", "__weakref__")

    def __init__(self, op: str, vt: VarType, size: int, args: tuple = (), value=None, extra=None):
        self.op = op
        self.vt = vt
        self.size = size
        self.a0 = args
        self.a1 = None
        self.value = value
        self.extra = extra
        self.sym = None

    @property
    def args(self) -> tuple:
        """The operands, a tuple (see the class docstring)."""
        b = self.a1
        if b is None:
            return self.a0
        return (self.a0, b)

    @args.setter
    def args(self, value: tuple) -> None:
        self.a0 = tuple(value)
        self.a1 = None

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
        self.a0 = ()
        self.a1 = None        # (drops a two-operand node's operands)
        self.value = buffer
        self.extra = None

    def __repr__(self) -> str:
        return f"Node({self.op}, {self.vt}, size={self.size})"
