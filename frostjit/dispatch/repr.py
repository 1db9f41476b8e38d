"""Text representations used in dispatch's messages and listings (plum's ``plum.repr``).

plum renders these with ``rich`` (coloured ``rich.Text``); frostjit depends on neither rich nor
beartype, so every helper here returns a plain ``str`` with the same text.
"""

from __future__ import annotations

import builtins
import inspect
import os
import sys
import typing
from typing import Any, Callable

__all__ = ["repr_short", "repr_type", "repr_source_path", "repr_pyfunction", "rich_repr"]

def repr_short(x: object, /) -> str:
    """A short text for a type or type hint: ``int``, ``numpy.ndarray``, ``list[int]``.

    Builtins are shown by name, other classes as ``module.QualifiedName`` (``__main__.A``),
    ``typing`` constructs as ``typing`` prints them (with union aliases active, an aliased union
    as ``typing.Union[Alias]``).

    Examples
    --------
    >>> repr_short(int), repr_short(list[int])
    ('int', 'list[int]')
    """
    if isinstance(x, type):
        if x.__module__ == "builtins":
            return x.__qualname__
        return f"{x.__module__}.{x.__qualname__}"
    if x is Ellipsis:
        return "..."
    if isinstance(x, (str, int, float, bool)) or x is None:
        return repr(x)
    return typing._type_repr(x)  # what typing itself prints inside a subscription


def repr_type(x: object, /) -> str:
    """The text of a type or module (plum returns it as highlighted ``rich.Text``).

    Classes of ``builtins``, ``typing`` and ``typing_extensions`` show by name (``int``,
    ``Any``), other classes as ``module.QualifiedName``, modules by name, other hints as
    :func:`repr_short` prints them.
    """
    if inspect.ismodule(x):
        return x.__name__
    if isinstance(x, type) and x.__module__ in ("typing", "typing_extensions"):
        return x.__qualname__
    return repr_short(x)


def repr_source_path(function: Callable[..., Any], /) -> str | None:
    """``path:line`` of a function's definition, or ``None`` when it is not in a file (code
    made by ``exec``, the REPL) or cannot be found."""
    target = inspect.unwrap(function) if callable(function) else function
    code = getattr(target, "__code__", None)
    if code is not None:
        path, line = code.co_filename, code.co_firstlineno
        return f"{path}:{line}" if os.path.isfile(path) else None
    try:
        path = inspect.getfile(target)
    except TypeError:  # a C callable (jax.jit objects, builtins): its module's file
        module = sys.modules.get(getattr(function, "__module__", None) or "")
        path = getattr(module, "__file__", None)
    return path if path and os.path.isfile(path) else None


def repr_pyfunction(f: Callable[..., Any]) -> str:
    """``<function f at 0x...> @ path:line``."""
    path = repr_source_path(f)
    return f"{f!r}" if path is None else f"{f!r} @ {path}"


def rich_repr(cls: type | None = None, str: bool = False) -> Any:  # noqa: A002 - plum's name
    """Class decorator: ``__repr__`` (and ``__str__`` with ``str=True``) from ``__rich__``.

    plum renders ``__rich__`` with rich; here its text is used as is.
    """
    def decorate(c: type) -> type:
        def __repr__(self: Any) -> builtins.str:
            rich = getattr(self, "__rich__", None)
            return object.__repr__(self) if rich is None else builtins.str(rich())

        c.__repr__ = __repr__
        if str:
            c.__str__ = __repr__
        return c

    return decorate if cls is None else decorate(cls)

