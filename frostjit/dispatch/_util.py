"""Small helpers of plum's public API: where a function lives, lambdas, sorting."""

from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

__all__ = ["Missing", "get_class", "get_context", "is_in_class", "wrap_lambda", "argsort", "Comparable"]


class _MissingType(type):
    """Metaclass of :class:`Missing`: the sentinel has no truth value (as plum's)."""

    def __bool__(cls) -> bool:
        # Sphinx evaluates ``bool(Missing)`` while documenting signatures; let it.
        if "sphinx" in sys.modules:
            return False
        raise TypeError("`Missing` has no boolean value: compare with `is Missing`.")


class Missing(metaclass=_MissingType):
    """Sentinel of "no ``*args``" in a :class:`Signature` (``Signature(int).varargs is Missing``).

    The class itself is the sentinel: it cannot be instantiated and has no truth value, so a
    test must be ``varargs is Missing`` (as in plum).
    """

    def __init__(self) -> None:
        raise TypeError("`Missing` cannot be instantiated: use the class itself.")


def _parts(f: Callable) -> list[str]:
    return (getattr(f, "__qualname__", None) or getattr(f, "__name__", "")).split(".")


def is_in_class(f: Callable) -> bool:
    """Whether ``f`` was defined in a class body (``A.m``, also in a class local to a function).

    Examples
    --------
    >>> class A:
    ...     def m(self): pass
    >>> is_in_class(A.m), is_in_class(is_in_class)
    (True, False)
    """
    parts = _parts(f)
    return len(parts) > 1 and parts[-2] != "<locals>"


def get_class(f: Callable) -> str:
    """The fully qualified name of the class ``f`` was defined in (``module.A.B``); for a
    function outside classes, its module's name (as plum)."""
    return ".".join([f.__module__] + _parts(f)[:-1])


def get_context(f: Callable) -> str:
    """The fully qualified name of the scope ``f`` lives in: the scope of its class for a
    method, else the scope of the function (``module``, ``module.outer.<locals>``)."""
    parts = _parts(f)[:-1]
    if is_in_class(f):
        parts = parts[:-1]
    return ".".join([f.__module__] + parts)


def wrap_lambda(f: Callable) -> Callable:
    """``f`` wrapped in a lambda (a Python function whatever ``f`` is)."""
    return lambda *args, **kw_args: f(*args, **kw_args)


def argsort(seq: Sequence[Any]) -> list[int]:
    """The indices that sort ``seq``."""
    return sorted(range(len(seq)), key=seq.__getitem__)


class Comparable:
    """A mixin that makes instances comparable from ``__le__`` alone (plum's ``Comparable``).

    ``a == b`` is ``a <= b and b <= a``; ``a < b`` is ``a <= b and a != b``; ``>=``/``>`` mirror
    them; ``is_comparable(b)`` is ``a <= b or b <= a``.
    """

    def __eq__(self, other: Any) -> bool:
        return self <= other and other <= self

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __lt__(self, other: Any) -> bool:
        return self <= other and self != other

    def __ge__(self, other: Any) -> bool:
        return other.__le__(self)

    def __gt__(self, other: Any) -> bool:
        return self >= other and self != other

    def __le__(self, other: Any) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    __hash__ = object.__hash__

    def is_comparable(self, other: Any) -> bool:
        """Whether ``self`` and ``other`` are ordered one way or the other."""
        return self <= other or other <= self
