"""Small helpers of plum's public API: where a function lives, lambdas, sorting."""

from __future__ import annotations

from typing import Any, Callable, Sequence

__all__ = ["get_class", "get_context", "is_in_class", "wrap_lambda", "argsort", "Comparable"]


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
