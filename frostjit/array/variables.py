"""What a user sees of the JIT variable behind an array: its number and its state.

A 1-D array is a handle on a trace node; Dr.Jit calls that node a *variable* and gives it a
number (``x.index``) and a state (``x.state``).  Nodes carry no number themselves (the trace
stays lean): numbers live here, in a weak table keyed by node, so they last as long as the
variable and follow it through evaluation (which turns a pending node into data in place).
A new variable (``x + 1``, ``x += 1``) has a new number, as in Dr.Jit.  (Labels are kept the
same way, in :mod:`.labels`.)

Value numbering: with ``JitFlag.ValueNumbering`` set (the default), Dr.Jit hands an existing
variable back instead of making a new one when a literal or a side-effect-free operation
repeats one that still lives unevaluated (``UInt32(3)`` twice, ``a + b`` twice, ``a + b`` folded
to ``9`` and ``Int(9)``): one ``.index``.  frostjit keeps one node per handle (kernels share the
code anyway) and numbers those nodes alike instead: a literal or a lane-wise operation (or
``arange``'s lane counter) whose key (op, type, size, parameter, operands' numbers) matches a
living, still-pending node's gets that node's number.  Gathers, data and everything with side
effects keep numbers of their own (Dr.Jit value-numbers gathers too: a known difference).
"""
from __future__ import annotations

import itertools
import threading
import weakref

from ..trace.node import Node
from ..trace.optable import LANEWISE
from ..trace.state import JitFlag, state
from .meta import VarState

_indices: "weakref.WeakKeyDictionary[Node, int]" = weakref.WeakKeyDictionary()
_next_index = itertools.count(1)
_lock = threading.Lock()


def index_of(node: Node) -> int:
    """The variable number of ``node``: a positive int, the same for as long as the node lives.

    Numbers are handed out on first request (by ``x.index``, :func:`frostjit.whos`,
    :func:`frostjit.graphviz`), so they count the variables someone looked at, not all of them.
    Under ``JitFlag.ValueNumbering`` a literal or lane-wise node equal to a living pending one
    shares its number (module docstring).
    """
    i = _indices.get(node)
    if i is None:
        with _lock:
            i = _indices.get(node)
            if i is None:
                i = _number(node)
    return i


_VALUE_NUMBERING = int(JitFlag.ValueNumbering)
#: Nodes that Dr.Jit's value numbering merges: no side effect, a result fixed by the key.
_NUMBERED_BY_VALUE = LANEWISE | {"literal", "counter"}
#: value key -> weak references to the living nodes that hold the key's number (each is dropped
#: with its node, the key with the last one: the number lasts while any of them lives).
_by_key: dict = {}


def _value_key(node: Node):
    """The value-numbering key of ``node``, or ``None`` (not merged, or an operand unnumbered)."""
    op = node.op
    if op not in _NUMBERED_BY_VALUE or node.extra is not None or node.sym is not None:
        return None
    value = node.value
    if op == "literal":     # repr: 0.0 and -0.0 (equal, one hash) are two literals
        return (op, node.vt, node.size, type(value), repr(value))
    try:
        hash(value)
    except TypeError:
        return None
    numbers = tuple(_indices.get(a) for a in node.args)
    return None if None in numbers else (op, node.vt, node.size, value, numbers)


def _forget(key, ref) -> None:
    refs = _by_key.get(key)
    if refs is not None and ref in refs:
        refs.remove(ref)
        if not refs:
            del _by_key[key]


def _shared_number(key):
    """The number a new node of ``key`` joins: one whose living holders all still pend with
    ``key`` (once one of them is evaluated, Dr.Jit's one variable is, and a new expression makes
    a new variable), or ``None``."""
    good, gone = [], set()
    for ref in _by_key.get(key, ()):
        holder = ref()
        if holder is not None:
            if _value_key(holder) == key:
                good.append(_indices[holder])
            else:
                gone.add(_indices[holder])
    return next((n for n in good if n not in gone), None)


def _number(root: Node) -> int:
    """Give ``root`` (and, for value numbering, its unnumbered operands first) a number."""
    numbering = bool(state.flags & _VALUE_NUMBERING)
    stack = [root]
    while stack:            # operands before users, without recursion (graphs run deep)
        node = stack[-1]
        if node in _indices:
            stack.pop()
            continue
        if numbering and node.op in _NUMBERED_BY_VALUE:
            todo = [a for a in node.args if a not in _indices]
            if todo:
                stack.extend(todo)
                continue
        stack.pop()
        key = _value_key(node) if numbering else None
        number = None
        if key is not None:
            number = _shared_number(key)
            _by_key.setdefault(key, []).append(weakref.ref(node, lambda r, k=key: _forget(k, r)))
        _indices[node] = next(_next_index) if number is None else number
    return _indices[root]


def state_of(node: Node) -> VarState:
    """The :class:`~.meta.VarState` of ``node``: ``Invalid`` when empty, ``Literal``, ``Evaluated``
    (``Dirty`` while scatters into it are pending) or ``Unevaluated``."""
    if node.size == 0:
        return VarState.Invalid
    op = node.op
    if op == "literal":
        return VarState.Literal
    if op == "data":
        return VarState.Dirty if node in state.dirty else VarState.Evaluated
    return VarState.Unevaluated


def combined_state(states) -> VarState:
    """The state of a static vector: its components' common state, ``Mixed`` when they differ."""
    found = set(states)
    if not found:
        return VarState.Invalid
    return found.pop() if len(found) == 1 else VarState.Mixed
