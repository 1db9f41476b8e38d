"""The errors of the control-flow functions.

Dr.Jit raises ``RuntimeError`` for every inconsistency of a loop's or a conditional's state;
frostjit's errors are ``RuntimeError`` too (code written for Dr.Jit keeps catching them) and
also the specific Python exception of the case: ``TypeError`` for a type or structure that
changed, ``ValueError`` for a size or a Python value that changed.
"""
from __future__ import annotations


class ControlFlowError(RuntimeError):
    """Base class: a ``while_loop``, ``if_stmt`` or ``switch`` whose functions broke its contract."""


class StateTypeError(ControlFlowError, TypeError):
    """A state variable or return value changed its type or structure (``Float`` -> ``UInt32``,
    a tuple of 2 -> 3 entries, other dict keys), or a function returned the wrong kind of object."""


class StateValueError(ControlFlowError, ValueError):
    """A state variable or return value changed its size incompatibly (3 -> 4 lanes), or a Python
    value in it changed while ``strict=True``."""


class ControlFlowArgumentError(ControlFlowError, ValueError):
    """An argument of the call itself is invalid (an unknown ``mode``, labels of the wrong
    length): ``RuntimeError`` as in Dr.Jit, and ``ValueError``."""


class ControlFlowArgumentTypeError(ControlFlowError, TypeError):
    """An argument of the call has the wrong type (``state`` not a tuple, a ``switch`` index that
    is not a ``UInt32`` array): ``RuntimeError`` as in Dr.Jit, and ``TypeError``."""


class BranchValueError(ControlFlowError, ValueError):
    """A ``ValueError`` (an incompatible size, mostly) raised while a ``switch`` or an ``if_stmt`` ran
    its targets or branches: Dr.Jit raises ``RuntimeError`` there.  The original is its
    ``__cause__``."""
