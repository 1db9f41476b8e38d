"""Lookup errors, with messages that show argument types and the closest candidates."""

from __future__ import annotations

from typing import Any, Sequence

from .hints import type_name


class NotFoundLookupError(LookupError):
    """No method of a dispatched function accepts the arguments' types."""


class AmbiguousLookupError(LookupError):
    """Several methods match equally well and ``precedence`` does not decide between them."""


def call_repr(name: str, types: Sequence[type]) -> str:
    """``f(int, numpy.ndarray)``: the call shown by types (values can be huge, e.g. tracers)."""
    return f"{name}({', '.join(type_name(t) for t in types)})"


def _candidate_lines(methods: Sequence[Any]) -> str:
    lines = []
    for m in methods:
        lines.append(f"    {m.describe()}")
        lines.append(f"        {m.implementation!r} @ {m.location}")
    return "\n".join(lines)


def not_found(name: str, types: Sequence[type], closest: Sequence[Any]) -> NotFoundLookupError:
    msg = f"`{call_repr(name, types)}` could not be resolved."
    if closest:
        msg += "\n\nClosest candidates are the following:\n" + _candidate_lines(closest)
    else:
        msg += "\n\nThe function has no methods."
    return NotFoundLookupError(msg)


def ambiguous(name: str, types: Sequence[type], candidates: Sequence[Any]) -> AmbiguousLookupError:
    msg = (f"`{call_repr(name, types)}` is ambiguous.\n\nCandidates:\n" + _candidate_lines(candidates)
           + "\n\nDefine a more specific method, or give one of them a higher `precedence`.")
    return AmbiguousLookupError(msg)
