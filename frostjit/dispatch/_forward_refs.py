"""String forward references in annotations, resolved wherever they are nested.

``def f(x: Union[int, "B"])``, ``Optional["B"]``, ``list["B"]``, ``"int | B"`` and
``from __future__ import annotations`` all leave strings (or ``typing.ForwardRef``) inside
the annotation. :func:`resolve_forward_refs` evaluates each of them in the function's
namespace and rebuilds the ``typing`` construct around the results; ``Literal`` values and
``Annotated`` metadata are data, never evaluated.
"""

from __future__ import annotations

import collections.abc
import functools
import operator
import sys
import types
import typing
from typing import Any

_MAX_DEPTH = 64


def has_forward_refs(annotation: Any) -> bool:
    """Whether a string or ``ForwardRef`` occurs anywhere inside ``annotation``."""
    if isinstance(annotation, (str, typing.ForwardRef)):
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return False
    if origin is typing.Annotated:
        return has_forward_refs(typing.get_args(annotation)[0])
    return any(has_forward_refs(a) for a in _args(annotation))


def _args(annotation: Any) -> tuple:
    try:
        args = typing.get_args(annotation)
    except Exception:  # exotic objects with a broken __args__
        return ()
    # ``Callable[[int], str]`` lists its parameters in a nested list.
    out = []
    for a in args:
        if isinstance(a, (list, tuple)):
            out.extend(a)
        else:
            out.append(a)
    return tuple(out)


def resolve_forward_refs(annotation: Any, globalns: dict, localns: dict | None = None,
                         _depth: int = 0) -> Any:
    """``annotation`` with every nested string forward reference evaluated.

    Parameters
    ----------
    annotation : Any
        A class, a string, a ``typing.ForwardRef`` or a ``typing`` construct containing them
        (``Union[int, "B"]``, ``Optional["B"]``, ``list["B"]``, ``dict[str, "B"]``, ...).
    globalns, localns : dict
        Where names are looked up (the function's globals; the enclosing classes).

    Returns
    -------
    The same kind of annotation, built from the resolved parts (``annotation`` itself when
    nothing needed resolving).

    Raises
    ------
    NameError
        A name that is not defined (yet) in those namespaces.

    Examples
    --------
    >>> class B: ...
    >>> resolve_forward_refs(typing.Optional["B"], {"B": B})
    typing.Optional[B]
    """
    if _depth > _MAX_DEPTH:
        raise RecursionError(f"forward reference {annotation!r} does not resolve to a type")
    if isinstance(annotation, typing.ForwardRef):
        module = getattr(annotation, "__forward_module__", None)
        if module is not None and module in sys.modules:
            globalns = vars(sys.modules[module])
        annotation = annotation.__forward_arg__
    if isinstance(annotation, str):
        value = eval(annotation, globalns, localns)  # noqa: S307 - what typing.get_type_hints does
        return resolve_forward_refs(value, globalns, localns, _depth + 1)
    origin = typing.get_origin(annotation)
    if origin is None or origin is typing.Literal:
        return annotation
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        inner = resolve_forward_refs(args[0], globalns, localns, _depth + 1)
        if inner is args[0]:
            return annotation
        return typing.Annotated[(inner, *annotation.__metadata__)]
    if not has_forward_refs(annotation):
        return annotation
    new = tuple(
        [resolve_forward_refs(x, globalns, localns, _depth + 1) for x in a] if isinstance(a, list)
        else resolve_forward_refs(a, globalns, localns, _depth + 1)
        for a in args
    )
    try:
        return _rebuild(annotation, origin, new)
    except TypeError:
        # A construct we cannot rebuild (``Callable[[...], "B"]``): dispatch reads only its
        # origin class, which is already resolved.
        return annotation


def enclosing_namespace(fn: Any) -> dict | None:
    """The attributes of the classes enclosing ``fn`` (innermost wins), so that ``"Inner"``
    resolves inside ``class Outer: class Inner: ...``; ``None`` for functions outside classes
    and for classes local to a function (they are not reachable from the module)."""
    parts = (getattr(fn, "__qualname__", "") or "").split(".")[:-1]
    if not parts or "<locals>" in parts:
        return None
    obj = getattr(fn, "__globals__", {}).get(parts[0])
    chain = []
    for name in parts[1:] + [None]:
        if not isinstance(obj, type):
            break
        chain.append(vars(obj))
        if name is not None:
            obj = vars(obj).get(name)
    if not chain:
        return None
    ns: dict = {}
    for d in chain:
        ns.update(d)
    return ns


def _rebuild(annotation: Any, origin: Any, args: tuple) -> Any:
    """The ``typing`` construct ``annotation`` with its arguments replaced by ``args``."""
    if origin is typing.Union:
        return typing.Union[args]
    if origin is collections.abc.Callable and len(args) == 2 and (isinstance(args[0], list) or args[0] is ...):
        # ``get_args`` gives ``([params], result)``, but ``copy_with`` wants them flattened:
        # rebuild by subscription, as the hint was written.
        callable_ = typing.Callable if type(annotation).__module__ == "typing" else collections.abc.Callable
        return callable_[args[0], args[1]]
    if sys.version_info >= (3, 10) and isinstance(annotation, types.UnionType):
        return functools.reduce(operator.or_, args)
    if hasattr(annotation, "copy_with"):  # typing's own aliases: List["B"], Type["B"], ...
        return annotation.copy_with(args)
    if isinstance(annotation, types.GenericAlias):  # list["B"], dict[str, "B"], type["B"]
        return types.GenericAlias(origin, args)
    return origin[args]
