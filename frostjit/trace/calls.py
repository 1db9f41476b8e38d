"""Function calls in the trace: the body of an ``@fj.func`` function, traced over placeholders.

A call of a function decorated with ``@fj.func`` (:mod:`frostjit.control.func`) is three kinds
of node, all made by the door (:mod:`.ops`: :func:`~.ops.call_param`, :func:`~.ops.call`,
:func:`~.ops.call_out`):

* ``call_param`` (one per parameter): a placeholder of size 1 standing for one argument, one
  lane at a time (Dr.Jit's callee inputs are size 1 too); it has no value of its own and is
  never computed outside the function's body.
* ``call`` (one per call site): operands are the call's arguments, those the function received
  followed by its *implicit* ones (size-1 arrays the body read without receiving them); its
  ``extra`` is the :class:`FuncRecord` of the body.
* ``call_out`` (one per array result): ``value`` is the result's position.

Call sites whose bodies are structurally equal share one record (:func:`body_key`), so the
scheduler gives every site the same function and the LLVM backend compiles it once per kernel
(``schedule/calls.py``, ``backend/llvm/codegen/calls.py``).
"""
from __future__ import annotations

import weakref

from .node import Node
from .optable import LANEWISE

#: The node kinds of calls.
CALL_NODES = frozenset({"call", "call_param", "call_out"})


class FuncRecord:
    """The body of a function, traced once over placeholders (shared by equal call sites).

    Attributes
    ----------
    name : str
        The function's name, for messages and the generated code.
    params : list[Node]
        The ``call_param`` placeholders: the explicit parameters, then the implicit ones.
    results : list[Node]
        One node per array result, over ``params`` and literals only.
    nodes : list[Node]
        Every node of the body that depends on a parameter, operands before users.
    key : tuple
        The body's structure (:func:`body_key`): equal keys give equal code.
    info : object
        The body as a kernel fragment, made by the scheduler the first time it emits a call
        of this record (``schedule/calls.py``).
    """

    __slots__ = ("name", "params", "results", "nodes", "key", "info", "__weakref__")

    def __init__(self, name: str, params: list, results: list, nodes: list, key: tuple):
        self.name = name
        self.params = params
        self.results = results
        self.nodes = nodes
        self.key = key
        self.info = None

    def __repr__(self) -> str:
        return f"FuncRecord({self.name!r}, {len(self.params)} parameters, {len(self.nodes)} nodes)"


def body_nodes(params: list, roots: list) -> tuple[list, list]:
    """``(nodes, free)``: the nodes under ``roots`` that depend on ``params`` (post-order,
    operands first), and the *free* ones they read that do not (literals excluded: a literal
    stays a constant of the body).  Iterative (a body can be a long chain)."""
    variant: dict = {p: True for p in params}
    order: list = []
    free: dict = {}
    stack = [(r, False) for r in reversed(roots)]
    while stack:
        n, expanded = stack.pop()
        if n in variant:
            continue
        if not expanded:
            stack.append((n, True))
            for a in reversed(n.args):
                if a not in variant:
                    stack.append((a, False))
            continue
        v = variant[n] = any(variant[a] for a in n.args)
        if v:
            order.append(n)
    for n in order:
        for a in n.args:
            if not variant[a] and a.op != "literal":
                free.setdefault(a, None)
    for r in roots:
        if not variant[r] and r.op != "literal":
            free.setdefault(r, None)
    return order, list(free)


def is_pure(nodes: list) -> bool:
    """Whether a body made of ``nodes`` is lane-wise only (calls of pure bodies included): the
    backend can compile it as a function of its parameters."""
    for n in nodes:
        op = n.op
        if op in LANEWISE:
            continue
        if op == "call" or op == "call_out":     # (a nested call is always of a pure body)
            continue
        return False
    return True


def body_key(params: list, nodes: list, results: list) -> tuple:
    """The structure of a body: every node as ``(op, type, operand positions, value)`` with
    parameters and literals by position and value; equal keys give equal code."""
    pos: dict = {}
    items: list = []
    for j, p in enumerate(params):
        pos[p] = j
        items.append(("param", p.vt, j))

    def ref(a: Node):
        k = pos.get(a)
        if k is None:       # a literal (a free node is a parameter)
            v = a.value
            return ("lit", a.vt, ("f", v.hex()) if type(v) is float else v)
        return k
    for n in nodes:
        pos[n] = len(items)
        v = n.value
        if type(v) is float:
            v = ("f", v.hex())
        extra = n.extra
        if extra is not None:
            extra = extra.key if isinstance(extra, FuncRecord) else ("id", id(extra))
        items.append((n.op, n.vt, tuple(ref(a) for a in n.args), v, extra))
    return tuple(items), tuple(ref(r) for r in results)


_shared: "weakref.WeakValueDictionary[tuple, FuncRecord]" = weakref.WeakValueDictionary()


def shared_record(record: FuncRecord) -> FuncRecord:
    """The record of an equal body traced before and still in use (else ``record`` itself):
    call sites of one function with equal bodies share one record, so one compiled function."""
    old = _shared.get(record.key)
    if old is not None:
        return old
    _shared[record.key] = record
    return record
