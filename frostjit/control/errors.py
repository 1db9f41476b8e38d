"""The errors of the control-flow functions.

Dr.Jit raises ``RuntimeError`` for every inconsistency of a loop's or a conditional's state;
frostjit's errors are ``RuntimeError`` too (code written for Dr.Jit keeps catching them) and
also the specific Python exception of the case: ``TypeError`` for a type or structure that
changed, ``ValueError`` for a size or a Python value that changed.
"""
from __future__ import annotations

from ..schedule.loops import LoopVariableError


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



class BodyError(ControlFlowError):
    """An exception raised by a loop's condition or body, a branch of a conditional or a target of
    a switch (vectorized modes): Dr.Jit raises ``RuntimeError`` ("encountered an exception")
    with the original as ``__cause__``.  frostjit's is :func:`wrapped`'s subclass of this class
    *and* of the original's class, so ``except ValueError`` keeps working."""


_WRAPPED: dict = {}


def wrapped(who: str, err: Exception) -> Exception:
    """The exception to raise, ``from err``, for ``err`` raised inside ``fj.<who>()`` (see
    :class:`BodyError`; a ``RuntimeError`` of the user's code too, as in Dr.Jit); ``err`` itself
    when it is frostjit's own control-flow error (the contract checks, an inner statement's
    wrapped error, a symbolic loop's variable used outside it)."""
    if isinstance(err, (ControlFlowError, LoopVariableError)):
        return err
    cls = type(err)
    sub = _WRAPPED.get(cls)
    if sub is None:
        try:
            sub = type(f"ControlFlow{cls.__name__}", (BodyError, cls), {"__module__": __name__})
        except TypeError:           # (an exception class whose layout cannot be combined)
            sub = BodyError
        _WRAPPED[cls] = sub
    message = f"fj.{who}(): encountered an exception: {type(err).__name__}: {err}"
    try:
        out = sub.__new__(sub)
        Exception.__init__(out, message)
    except Exception:               # (an exception class with its own __new__ requirements)
        out = BodyError(message)
    return out
