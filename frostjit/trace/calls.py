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

Call sites whose bodies are structurally equal share one record (:func:`analyze`), so the
scheduler gives every site the same function and the LLVM backend compiles it once per kernel
(``schedule/calls.py``, ``backend/llvm/codegen/calls.py``).
"""
from __future__ import annotations

import weakref

from .dtypes import float_bits
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
        The body's structure (:attr:`Body.key`): equal keys give equal code.
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


class Body:
    """What :func:`analyze` finds in a traced body.

    Attributes
    ----------
    nodes : list[Node]
        Every node that depends on a parameter, operands before users.
    free : list[Node]
        The nodes they read that depend on no parameter and are not literals (arrays the body
        read without receiving them): implicit parameters of the call.
    key : tuple
        The body's structure: every node as ``(op, type, operands, value, extra)`` with
        parameters and free nodes by position, literals by type and value (float zeros and
        NaN by their bits: ``0.0 == -0.0``, ``nan != nan``), and the results; equal keys give equal code.
    pure : bool
        Whether every node is lane-wise (or a call): the backend can compile the body as a
        function of its parameters.
    loops : bool
        Whether the body contains a symbolic loop.
    """

    __slots__ = ("nodes", "free", "key", "pure", "loops")


def analyze(params: list, roots: list) -> Body:
    """The body under ``roots`` traced over the placeholders ``params`` (see :class:`Body`).

    One iterative pass (a body can be a long chain), run at every call: it is what tells equal
    bodies apart, so it is kept to a few dict operations per node.
    """
    var: dict = {}              # parameter or body node -> its position in items
    items: list = []
    for j, p in enumerate(params):
        var[p] = j
        items.append(("param", p.vt))
    nonvar: set = set()
    free: dict = {}
    nodes: list = []
    pure = True
    loops = False

    def fixed(a: Node):
        """A non-variant operand: a literal by value, any other node as an implicit parameter."""
        if a.op == "literal":
            v = a.value
            # (0.0 == -0.0 and NaN != NaN: those by their bits, as schedule/single_op.py keys them)
            return ("lit", a.vt, ("f", float_bits(v)) if type(v) is float and (v == 0 or v != v) else v)
        k = free.get(a)
        if k is None:
            k = free[a] = len(free)
        return ("free", k, a.vt)

    for r in roots:
        stack = [r]
        while stack:
            n = stack[-1]
            if n in var or n in nonvar:
                stack.pop()
                continue
            args = n.args
            refs = []
            waiting = variant = False
            for a in args:
                k = var.get(a)
                if k is not None:
                    variant = True
                elif a not in nonvar:
                    if a.op == "literal":       # (a leaf: no need to visit it)
                        nonvar.add(a)
                    else:
                        stack.append(a)
                        waiting = True
                refs.append(k)
            if waiting:
                continue
            stack.pop()
            if not variant:
                nonvar.add(n)
                continue
            op = n.op
            if op not in LANEWISE and op != "call" and op != "call_out":
                pure = False
                if op in _LOOP_NODES:
                    loops = True
            v = n.value
            if type(v) is float and (v == 0 or v != v):
                v = ("f", float_bits(v))
            extra = n.extra
            if extra is not None:
                extra = extra.key if isinstance(extra, FuncRecord) else ("id", id(extra))
            for j, k in enumerate(refs):
                if k is None:
                    refs[j] = fixed(args[j])
            var[n] = len(items)
            nodes.append(n)
            items.append((op, n.vt, tuple(refs), v, extra))
    results = tuple([var[r] if r in var else fixed(r) for r in roots])
    body = Body()
    body.nodes = nodes
    body.free = list(free)
    body.key = (tuple(items), results)
    body.pure = pure
    body.loops = loops
    return body


_LOOP_NODES = frozenset({"loop", "loop_phi", "loop_out"})


_shared: "weakref.WeakValueDictionary[tuple, FuncRecord]" = weakref.WeakValueDictionary()


def shared_record(record: FuncRecord) -> FuncRecord:
    """The record of an equal body traced before and still in use (else ``record`` itself):
    call sites of one function with equal bodies share one record, so one compiled function."""
    old = _shared.get(record.key)
    if old is not None:
        return old
    _shared[record.key] = record
    return record
