"""What a user sees of the JIT variable behind an array: its number and its state.

A 1-D array is a handle on a trace node; Dr.Jit calls that node a *variable* and gives it a
number (``x.index``) and a state (``x.state``).  Nodes carry no number themselves (the trace
stays lean): numbers live here, in a weak table keyed by node, so they last as long as the
variable and follow it through evaluation (which turns a pending node into data in place).
A new variable (``x + 1``, ``x += 1``) has a new number, as in Dr.Jit.  (Labels are kept the
same way, in :mod:`.labels`.)
"""
from __future__ import annotations

import itertools
import threading
import weakref

from ..trace.node import Node
from ..trace.state import state
from .meta import VarState

_indices: "weakref.WeakKeyDictionary[Node, int]" = weakref.WeakKeyDictionary()
_next_index = itertools.count(1)
_lock = threading.Lock()


def index_of(node: Node) -> int:
    """The variable number of ``node``: a positive int, the same for as long as the node lives.

    Numbers are handed out on first request (by ``x.index``, :func:`frostjit.whos`,
    :func:`frostjit.graphviz`), so they count the variables someone looked at, not all of them.
    """
    i = _indices.get(node)
    if i is None:
        with _lock:
            i = _indices.get(node)
            if i is None:
                i = _indices[node] = next(_next_index)
    return i


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
