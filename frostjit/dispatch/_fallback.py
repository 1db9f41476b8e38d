"""Falling back to a parent class: a dispatched method with no matching signature calls the
same-named attribute of the next class in its *owner's* MRO (as plum does).

The owner is the class whose body defined the dispatched function. It is found from the
function's qualified name through its module (any decorator on top, ``staticmethod`` included)
or, for classes local to a function, from the call's first argument. The answer depends on the
owner only, never on the class of the instance or the ``cls`` a classmethod was called
through, so a decision cached for one call is right for every call with the same types.

How the parent's attribute is called depends on how the dispatched function sits in its owner:
as a plain method (the first argument is ``self``), a ``staticmethod`` (no ``self``), a
``classmethod`` (the first argument is ``cls``) or a property setter. The parent's attribute is
bound as Python's attribute access would bind it, so a parent ``classmethod`` receives ``cls``
and a parent ``staticmethod`` no ``self``. The walk happens at each fallback call (a few dict
lookups), so a parent class patched after the first call is seen.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable

METHOD, STATIC, CLASS, SETTER = "method", "staticmethod", "classmethod", "setter"
_MAX_WRAPPERS = 64


def placement(attr: Any, fn: Callable) -> str | None:
    """How ``fn`` sits in a class attribute ``attr`` (through decorators), or ``None``.

    The outermost ``staticmethod``/``classmethod``/``property`` decides the calling convention;
    wrappers made with ``functools.wraps`` (``__wrapped__``) and ``lru_cache`` are looked through.
    """
    kind = None
    for _ in range(_MAX_WRAPPERS):
        if attr is fn:
            return kind or METHOD
        if attr is None:
            return None
        if isinstance(attr, staticmethod):
            kind = kind or STATIC
            attr = attr.__func__
        elif isinstance(attr, classmethod):
            kind = kind or CLASS
            attr = attr.__func__
        elif isinstance(attr, property):
            if fn in (attr.fset, attr.fdel) or placement(attr.fset, fn) is not None:
                return SETTER
            attr = attr.fget
            kind = kind or METHOD
        else:
            attr = getattr(attr, "__wrapped__", None) or getattr(attr, "__func__", None)
    return None


def owner_from_qualname(module: str, qualname: str) -> type | None:
    """The class named by ``qualname``'s prefix in ``module`` (``A.B.f`` -> ``A.B``), or ``None``
    (not in a class, a class local to a function, or the module does not define it)."""
    parts = qualname.split(".")[:-1]
    if not parts or "<locals>" in parts:
        return None
    obj: Any = sys.modules.get(module)
    for p in parts:
        obj = getattr(obj, p, None)
        if obj is None:
            return None
    if isinstance(obj, type) and obj.__qualname__ == ".".join(parts):
        return obj
    return None


def class_from_name(name: str) -> type | None:
    """The class with the fully qualified name ``module.Qualified.Name`` (the longest prefix
    that is an imported module is the module), or ``None``."""
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:i])
        if module in sys.modules:
            return owner_from_qualname(module, ".".join(parts[i:]) + ".f")
    return None


def owner_in_mros(mros: list, name: str, class_qualname: str, fn: Callable) -> type | None:
    """The class in these MROs (the first argument's class's, and its own for a class
    argument) whose ``name`` attribute is ``fn`` (through decorators) and whose qualified
    name matches: the owner of a class local to a function."""
    for mro in mros:
        for C in mro:
            attr = C.__dict__.get(name)
            if attr is not None and C.__qualname__ == class_qualname and placement(attr, fn):
                return C
    return None


def next_in_mro(owner: type, name: str, fn: Callable | None = None) -> Any:
    """The attribute ``name`` of the first class after ``owner`` in its MRO that defines it
    (``object`` and ``type`` excluded, abstract methods and ``fn`` itself skipped, as in plum),
    or ``None``."""
    for C in owner.__mro__[1:]:
        if C is object or C is type:
            continue
        attr = C.__dict__.get(name)
        if attr is None or getattr(attr, "__isabstractmethod__", False):
            continue
        if fn is not None and placement(attr, fn) is not None:
            continue  # the same dispatched function (a class that re-exports it)
        return attr
    return None


def _call_as_method(attr: Any, args: tuple, kw: dict) -> Any:
    """``type(self).name(*rest)`` semantics for a parent attribute: bind it to ``args[0]``."""
    get = getattr(type(attr), "__get__", None)
    if get is None:
        return attr(*args[1:], **kw)  # a plain callable object: Python passes no ``self``
    if not args:
        return attr(**kw)
    self = args[0]
    return get(attr, self, type(self))(*args[1:], **kw)


def _call_as_classmethod(attr: Any, args: tuple, kw: dict) -> Any:
    get = getattr(type(attr), "__get__", None)
    if get is None:
        return attr(*args[1:], **kw)
    return get(attr, None, args[0])(*args[1:], **kw)


def _call_as_static(attr: Any, owner: type, args: tuple, kw: dict) -> Any:
    get = getattr(type(attr), "__get__", None)
    target = attr if get is None else get(attr, None, owner)
    return target(*args, **kw)


def _call_as_setter(attr: Any, args: tuple, kw: dict) -> Any:
    if isinstance(attr, property) and attr.fset is not None:
        return attr.fset(*args, **kw)
    return _call_as_method(attr, args, kw)


class Fallback:
    """A cache entry that calls the parent class's attribute (looked up at each call).

    Calling it with no parent attribute left (a parent changed since) raises through
    ``not_found(args)``.
    """

    __slots__ = ("owner", "name", "kind", "not_found", "fn", "__weakref__")

    def __init__(self, owner: type, name: str, kind: str, not_found: Callable[[tuple], Exception],
                 fn: Callable | None = None):
        self.owner = owner
        self.name = name
        self.kind = kind
        self.not_found = not_found
        self.fn = fn

    def __call__(self, *args: Any, **kw: Any) -> Any:
        attr = next_in_mro(self.owner, self.name, self.fn)
        if attr is None:
            raise self.not_found(args)
        kind = self.kind
        if kind == METHOD:
            if type(attr) is types.FunctionType:  # the common case: no binding needed
                return attr(*args, **kw)
            return _call_as_method(attr, args, kw)
        if kind == CLASS:
            return _call_as_classmethod(attr, args, kw)
        if kind == STATIC:
            return _call_as_static(attr, self.owner, args, kw)
        return _call_as_setter(attr, args, kw)

    def __repr__(self) -> str:
        return f"<fallback of {self.owner.__qualname__}.{self.name} to the next class in its MRO>"
