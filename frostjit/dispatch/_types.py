"""Types that stand for other types (plum's ``PromisedType``, ``ModuleType``), and hint tools.

* :class:`PromisedType`: a placeholder for a class not importable yet (circular imports);
  ``P.deliver(T)`` makes it ``T``. Delivering (again) changes the resolution of every function
  whose signatures mention ``P``: they forget their decisions and tell their subscribers
  (frozen recordings, ``DispatchCache``, jit wrappers), as a registration does.
* :class:`ModuleType`: the class ``name`` of module ``module``, looked up lazily; until the
  module is imported it matches nothing. Unlike plum, no ``clear_all_cache()`` is needed after
  the import: the hint is looked up at each resolution, and a type that existed before the
  import cannot be an instance of a class created by it (a target that is a ``Protocol``
  satisfied by older types is the exception: call ``clear_all_cache()`` then).
* :func:`resolve_type_hint`: a hint with promised and module types replaced by what they
  stand for, and :data:`type_mapping` applied (IPython autoreload maps old classes to new).
* :func:`isinstance` / :func:`issubclass` / :func:`is_faithful`: plum's hint-aware versions.
"""

from __future__ import annotations

import builtins
import sys
import typing
import warnings
import weakref
from typing import Any, Callable

from . import _hints as H
from ._forward_refs import _rebuild

__all__ = ["PromisedType", "ModuleType", "resolve_type_hint", "type_mapping", "isinstance", "issubclass",
           "is_faithful"]

type_mapping = H.type_mapping


class _LazyType(type):
    """Metaclass of types standing for another type, resolved later (``resolve()``)."""

    #: Tells ``_hints.normalize`` to make a lazy hint of these.
    __dispatch_lazy__ = True

    def resolve(cls) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _dispatch_peek(cls) -> Any:
        """What this stands for now, looking it up if possible; itself while unknown."""
        return cls.resolve()

    def _dispatch_lookup(cls) -> Any:
        """What dispatch uses: :meth:`_dispatch_peek`, but a promise not delivered yet raises."""
        return cls._dispatch_peek()

    def _dependents(cls) -> weakref.WeakSet:
        deps = cls.__dict__.get("_dispatch_dependents")
        if deps is None:
            deps = weakref.WeakSet()
            type.__setattr__(cls, "_dispatch_dependents", deps)
        return deps


class PromisedType(_LazyType):
    """A type to be delivered later: ``P = PromisedType("Name")``, then ``P.deliver(T)``.

    Use ``P`` in annotations before ``T`` exists (a circular import); deliver ``T`` before the
    first call that needs it. Delivering again replaces the type, and every function whose
    signatures mention ``P`` re-resolves (and tells its JIT-cache subscribers).

    Examples
    --------
    >>> ProxyInt = PromisedType("SpecialInt")
    >>> ProxyInt.deliver(int)
    >>> resolve_type_hint(ProxyInt)
    <class 'int'>
    """

    def __new__(mcs, name: str = "SomeType"):
        cls = super().__new__(mcs, f"PromisedType[{name}]", (), {"__module__": "frostjit.dispatch"})
        cls._name = name
        cls._type = None
        return cls

    def __init__(cls, name: str = "SomeType"):
        super().__init__(f"PromisedType[{name}]", (), {})

    def deliver(cls, type_: Any) -> PromisedType:
        """Make this promise stand for ``type_`` (functions using it re-resolve).

        Returns
        -------
        PromisedType
            This promise (as plum: ``P = PromisedType("P").deliver(int)``).
        """
        type.__setattr__(cls, "_type", type_)
        for state in list(cls._dependents()):
            state.changed(reregister=True)
        return cls

    def resolve(cls) -> Any:
        """The delivered type, or this promise itself before delivery (as plum); dispatch
        refuses an undelivered promise when a call needs it (``TypeError``)."""
        return cls if cls._type is None else cls._type

    def _dispatch_lookup(cls) -> Any:
        if cls._type is None:
            raise TypeError(f"{cls.__qualname__} was used before a type was delivered: call "
                            f"`.deliver(T)` on it first")
        return cls._type


#: Python 2 names of the builtins module that plum accepts in ``ModuleType``.
_MODULE_ALIASES = {"__builtin__": "builtins", "__builtins__": "builtins"}


class ModuleType(_LazyType):
    """The class ``name`` of module ``module``, looked up when that module is imported.

    Parameters
    ----------
    module, name : str
        Where the class lives (``ModuleType("tensorflow", "Tensor")``).
    allow_fail : bool
        When the module is imported but has no ``name``, stay unresolved instead of raising
        ``AttributeError``.
    condition : callable, optional
        ``condition() -> bool``: look the class up only when it returns true (a version check).
    faithful : bool, optional
        Accepted for plum compatibility (dispatch decides faithfulness itself).

    Examples
    --------
    >>> Fraction = ModuleType("fractions", "Fraction")
    >>> import fractions
    >>> resolve_type_hint(Fraction)
    <class 'fractions.Fraction'>
    """

    def __new__(mcs, module: str, name: str, allow_fail: bool = False,
                condition: Callable[[], bool] | None = None, faithful: bool | None = None):
        cls = super().__new__(mcs, f"ModuleType[{module}.{name}]", (), {"__module__": "frostjit.dispatch"})
        cls._module, cls._name = module, name
        cls._allow_fail, cls._condition, cls._faithful = allow_fail, condition, faithful
        cls._type = None
        return cls

    def __init__(cls, module: str, name: str, allow_fail: bool = False,
                 condition: Callable[[], bool] | None = None, faithful: bool | None = None):
        super().__init__(f"ModuleType[{module}.{name}]", (), {})

    def retrieve(cls) -> bool:
        """Look the class up if its module is imported (and ``condition`` holds); whether found."""
        if cls._type is not None:
            return True
        module = sys.modules.get(_MODULE_ALIASES.get(cls._module, cls._module))
        if module is None or (cls._condition is not None and not cls._condition()):
            return False
        try:
            found = getattr(module, cls._name)
        except AttributeError:
            if cls._allow_fail:
                return False
            raise
        if cls._faithful is not None:
            current = found.__dict__.get("__faithful__") if builtins.isinstance(found, type) else None
            if current is not None and current != cls._faithful:
                raise TypeError(f"`{cls._name}.__faithful__` is already set to {current!r}; "
                                f"ModuleType(..., faithful={cls._faithful!r}) contradicts it.")
            try:
                found.__faithful__ = cls._faithful
            except (AttributeError, TypeError):  # pragma: no cover - immutable builtins
                pass
        type.__setattr__(cls, "_type", found)
        return True

    def resolve(cls) -> Any:
        """The class once :meth:`retrieve` found it, else this ``ModuleType`` itself (as plum:
        ``resolve`` does not look the class up; dispatch and :func:`resolve_type_hint` do)."""
        return cls if cls._type is None else cls._type

    def _dispatch_peek(cls) -> Any:
        return cls._type if cls.retrieve() else cls


def resolve_type_hint(x: Any, _depth: int = 0) -> Any:
    """``x`` with promised and module types replaced by what they stand for (recursively),
    and :data:`type_mapping` applied; tuples and lists of hints are resolved element-wise.

    Examples
    --------
    >>> P = PromisedType("P"); P.deliver(float)
    >>> resolve_type_hint(list[P])
    list[float]
    """
    if _depth > 64:
        raise RecursionError(f"type hint {x!r} does not resolve")
    if builtins.isinstance(x, _LazyType):
        r = x._dispatch_peek()
        return x if r is x else resolve_type_hint(r, _depth + 1)
    if type_mapping:
        try:
            if x in type_mapping:
                return resolve_type_hint(type_mapping[x], _depth + 1)
        except TypeError:  # unhashable
            pass
    if type(x) in (tuple, list):
        return type(x)(resolve_type_hint(e, _depth + 1) for e in x)
    origin = typing.get_origin(x)
    if origin is None:
        if not _is_hint_leaf(x):
            warnings.warn(f"Could not resolve the type hint {x!r}: it is not a type; used as is.",
                          stacklevel=2)
        return x
    if origin is typing.Literal:
        return x
    args = typing.get_args(x)
    if origin is typing.Annotated:
        inner = resolve_type_hint(args[0], _depth + 1)
        return x if inner is args[0] else typing.Annotated[(inner, *x.__metadata__)]
    new = tuple(resolve_type_hint(a, _depth + 1) for a in args)
    if all(a is b for a, b in zip(new, args)):
        return x
    try:
        return _rebuild(x, origin, new)
    except TypeError:
        return x


def _is_hint_leaf(x: Any) -> bool:
    """Whether ``x`` is a hint without arguments: a class, ``None``, ``...``, a forward
    reference string, or a ``typing``/``types``/``collections.abc`` object (``Any``, a
    ``TypeVar``, bare ``Callable``)."""
    return (x is None or x is Ellipsis or builtins.isinstance(x, (type, str))
            or type(x).__module__ in ("typing", "types", "typing_extensions", "collections.abc"))


def isinstance(instance: Any, c: Any) -> bool:  # noqa: A001 - plum's name
    """``isinstance`` that accepts type hints (``int | None``, ``list[int]``, ``Literal``, ...).

    Containers are checked element by element.

    Examples
    --------
    >>> isinstance([1, 2], list[int]), isinstance([1, "a"], list[int])
    (True, False)
    """
    return H.normalize(resolve_type_hint(c)).match(instance)


def issubclass(c1: Any, c2: Any) -> bool:  # noqa: A001 - plum's name
    """``issubclass`` on type hints: whether ``c1`` is a sub-hint of ``c2`` (``list[int]`` of
    ``list``, ``int`` of ``int | str``)."""
    return H.le(H.normalize(resolve_type_hint(c1)), H.normalize(resolve_type_hint(c2)))


def is_faithful(x: Any) -> bool:
    """Whether ``isinstance(v, x) == issubclass(type(v), x)`` for every ``v`` (plum's notion).

    frostjit caches every decision whatever the answer (value-dependent hints are checked per
    call only where they matter); this is for plum compatibility.
    """
    if x is Ellipsis:  # the parameter list of ``Callable[..., T]``
        return True
    if type(x) in (tuple, list):  # ``Callable``'s parameter list, or several hints
        return all(is_faithful(e) for e in x)
    return H.is_faithful_hint(H.normalize(resolve_type_hint(x)))
