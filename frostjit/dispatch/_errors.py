"""Lookup errors, with messages that show argument types and the closest candidates."""

from __future__ import annotations

from typing import Any, Sequence

from ._hints import type_name
from .repr import repr_pyfunction


class _LookupError(LookupError):
    """A lookup error with plum's attributes: ``f_name``, ``target`` (the argument types) and
    ``methods`` (the candidates shown)."""

    def __init__(self, message: str, f_name: str = "", target: tuple = (), methods: Sequence[Any] = ()):
        super().__init__(message)
        self.f_name = f_name
        self.target = tuple(target)
        self.methods = list(methods)


class NotFoundLookupError(_LookupError):
    """No method of a dispatched function accepts the arguments' types."""


class AmbiguousLookupError(_LookupError):
    """Several methods match equally well and ``precedence`` does not decide between them."""


class MethodRedefinitionWarning(Warning):
    """A method replaced an earlier one with an equivalent signature (``warn_redefinition``)."""


def call_repr(name: str, types: Sequence[Any]) -> str:
    """``f(int, numpy.ndarray)``: the call shown by types (values can be huge, e.g. tracers)."""
    return f"{name}({', '.join(type_name(t) for t in types)})"


def _candidate_lines(methods: Sequence[Any]) -> str:
    lines = []
    for m in methods:
        lines.append(f"    {m.describe()}")
        lines.append(f"        {repr_pyfunction(m.implementation)}")
    return "\n".join(lines)


def not_found(name: str, types: Sequence[type], closest: Sequence[Any]) -> NotFoundLookupError:
    msg = f"`{call_repr(name, types)}` could not be resolved."
    if closest:
        msg += "\n\nClosest candidates are the following:\n" + _candidate_lines(closest)
    else:
        msg += "\n\nThe function has no methods."
    return NotFoundLookupError(msg, name, types, closest)


def ambiguous(name: str, types: Sequence[type], candidates: Sequence[Any]) -> AmbiguousLookupError:
    msg = (f"`{call_repr(name, types)}` is ambiguous.\n\nCandidates:\n" + _candidate_lines(candidates)
           + "\n\nDefine a more specific method, or give one of them a higher `precedence`.")
    return AmbiguousLookupError(msg, name, types, candidates)
