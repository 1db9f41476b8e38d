"""Variable nodes of the traced program.

A :class:`Node` is one JIT variable: either *pending* (an operation over other
nodes, not yet computed), a *literal* (a Python scalar broadcast to ``size``),
or *data* (an evaluated buffer).  Evaluation turns a pending node into a data
node in place, so every array that refers to it sees the result, and drops its
operands so traced graphs never grow without bound.

Nodes are reference counted by Python: when the last array referring to a data
node goes away, its buffer goes back to the backend's allocator.
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
        Operands of a pending operation.
    value : object
        The literal value (``"literal"``), the backend buffer (``"data"``), or
        an operation parameter (target type of a cast, ...).
    extra : object
        Operation-specific payload: the source node of a gather, the target of
        a scatter, ...
    sym : object
        Symbolic size used by frozen-function recording (``None`` otherwise).
    """

    __slots__ = ("op", "vt", "size", "args", "value", "extra", "sym", "__weakref__")

    def __init__(self, op: str, vt: VarType, size: int, args: tuple = (), value=None, extra=None):
        self.op = op
        self.vt = vt
        self.size = size
        self.args = args
        self.value = value
        self.extra = extra
        self.sym = None

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
        self.args = ()
        self.value = buffer
        self.extra = None

    def __repr__(self) -> str:
        return f"Node({self.op}, {self.vt}, size={self.size})"
