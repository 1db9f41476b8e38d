"""The mask stack: which lanes the innermost vectorized control-flow scope runs.

A loop body or a branch of ``fj.while_loop``/``fj.if_stmt`` (evaluated mode) runs on every
lane, and ``fj.select`` later keeps the results of the lanes that were active.  Side effects
cannot be undone that way, so the control-flow functions push their active mask here and
``gather``/``scatter`` (``functions/memory.py``) combine it with their own ``active`` argument:
a retired lane writes nothing (and, with ``JitFlag.Debug``, its indices are not checked), as in
Dr.Jit, whose ``jit_var_mask_push`` plays the same role.

The stack is per thread (a scope opened in one thread says nothing about another's lanes).
Each entry is the *effective* mask of its scope (the caller combines it with the enclosing
one), so :func:`apply` reads only the top.  A scope whose lanes are all active (the compressed
body of a loop, a target of ``fj.switch``) pushes ``None``.

An operation whose width is neither 1 nor the mask's works on other lanes than the scope's
(an unrelated array inside a loop body) and is left unmasked, as in Dr.Jit's evaluated mode.
"""
from __future__ import annotations

import contextlib
import threading

from . import ops
from .dtypes import Bool
from .node import Node


class _Stack(threading.local):
    def __init__(self) -> None:
        self.masks: list = []
        self.shown: list = []       # the lanes fj.print shows (scope(..., shown=True))


_stack = _Stack()


def top() -> Node | None:
    """The innermost scope's mask node (``None``: no scope, or every lane active)."""
    m = _stack.masks
    return m[-1] if m else None


def in_scope() -> bool:
    """Whether a control-flow scope (a loop body, a branch, a call target) is open in this thread."""
    return bool(_stack.masks)


def shown() -> Node | None:
    """The lanes ``fj.print`` shows in the innermost scope that restricts them (``None``: all).
    Dr.Jit prints the active lanes of a symbolic conditional's branch, every lane of an evaluated
    branch or loop body."""
    m = _stack.shown
    return m[-1] if m else None


@contextlib.contextmanager
def scope(mask: Node | None, shown: bool = False):
    """Run the body of a ``with`` block with ``mask`` as the active lanes (``None``: all);
    ``shown``: ``fj.print`` shows only those lanes (a symbolic conditional's branch)."""
    if mask is not None and mask.vt is not Bool:
        raise TypeError(f"frostjit: a control-flow mask must be a Bool node, got {mask.vt.name}")
    m = _stack.masks
    m.append(mask)
    if shown:
        _stack.shown.append(mask)
    try:
        yield
    finally:
        m.pop()
        if shown:
            _stack.shown.pop()


def compatible(mask: Node, size: int) -> bool:
    """Whether an operation of ``size`` lanes runs on the lanes of ``mask`` (sizes broadcast)."""
    return mask.size == size or mask.size == 1 or size == 1


def apply(active: Node, size: int) -> Node:
    """``active`` restricted to the innermost scope's lanes, for an operation of ``size`` lanes."""
    m = _stack.masks
    mask = m[-1] if m else None
    if mask is None or not compatible(mask, size):
        return active
    if active.op == "literal" and active.value is True:
        return mask
    if active.op == "literal" and active.value is False:
        return active
    return ops.make_binary("and", Bool, active, mask)
