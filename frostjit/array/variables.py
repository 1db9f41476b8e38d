"""What a user sees of the JIT variable behind an array: its index, its label and its state.

A 1-D array is a handle on a trace node; Dr.Jit calls that node a *variable* and gives it a
number (``x.index``), an optional label (``x.label``, :func:`frostjit.set_label`) and a state
(``x.state``).  Nodes carry none of this themselves (the trace stays lean): indices and labels
live here, in weak tables keyed by node, so they last as long as the variable and follow it
through evaluation (which turns a pending node into data in place).  A new variable (``x + 1``,
``x += 1``) has a new index and no label, as in Dr.Jit.

This module is the one place for labels: array classes of every family and the AD layer read
and write them through :func:`label_of` / :func:`set_label_of`.
"""
from __future__ import annotations

import itertools
import threading
import weakref

from ..trace.node import Node
from ..trace.state import state
from .meta import VarState

_indices: "weakref.WeakKeyDictionary[Node, int]" = weakref.WeakKeyDictionary()
_labels: "weakref.WeakKeyDictionary[Node, str]" = weakref.WeakKeyDictionary()
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


def label_of(node: Node) -> str | None:
    """The label given to ``node`` (:func:`set_label_of`), or ``None``."""
    return _labels.get(node)


def set_label_of(node: Node, label: str | None) -> None:
    """Label ``node`` (``None`` removes the label).

    Raises
    ------
    TypeError
        ``label`` is neither a ``str`` nor ``None``.
    """
    if label is None:
        _labels.pop(node, None)
        return
    if not isinstance(label, str):
        raise TypeError(f"a label must be a str, not {type(label).__name__}")
    _labels[node] = label


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
