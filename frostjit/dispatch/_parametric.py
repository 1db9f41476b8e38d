"""Parametric classes (plum's ``@parametric``): ``A[int]``, ``A[1, 2]``, covariant dispatch.

``@parametric class A`` returns a subclass of ``A`` (same name) whose metaclass derives from
:class:`CovariantMeta`. ``A[p]`` is a *concrete* subclass of it, made once per parameter and
remembered; ``A(x)`` infers the parameter from the arguments (``A(1)`` is an ``A[int]``).
Concrete types are covariant: ``A[int]`` is a subclass of ``A[Number]``.

Dispatch sees through this: ``isinstance(x, A[int])`` is decided by ``type(x)`` alone, so a
call with a parametric argument is cached like any other (plum treats parametric types as
unfaithful and re-resolves every call).

The class hooks, overridable as ``@classmethod`` on the decorated class:

* ``__infer_type_parameter__(cls, *args, **kw)``: the parameter of ``A(*args, **kw)``
  (default: the types of the positional arguments; one argument gives a single type);
* ``__init_type_parameter__(cls, *ps)``: validate/normalise a parameter given as ``A[ps]``
  (default: ``ps`` unchanged);
* ``__le_type_parameter__(cls, left, right)``: whether ``A[left]`` is a subtype of ``A[right]``
  (default: same length, and element-wise a sub-hint for types, equality for values).
"""

from __future__ import annotations

import abc
import threading
from typing import Any

from . import _hints as H
from ._function import is_dispatched
from .repr import repr_short

__all__ = ["CovariantMeta", "parametric", "type_parameter", "type_unparametrized", "type_nonparametric",
           "Kind", "kind"]

_lock = threading.RLock()


def _as_tuple(p: Any) -> tuple:
    return p if isinstance(p, tuple) else (p,)


def _param_repr(p: Any) -> str:
    return ", ".join(repr_short(x) for x in _as_tuple(p))


class ParametricTypeMeta(type):
    """Metaclass of parametric classes: ``A[p]`` makes a concrete subtype, ``A(...)`` infers ``p``."""

    #: Tells ``_hints`` that ``isinstance(x, cls)`` is ``issubclass(type(x), cls)``.
    __dispatch_parametric__ = True

    def __getitem__(cls, p: Any) -> type:
        if cls.__dict__.get("_concrete", False) or getattr(cls, "_concrete", False):
            raise TypeError("Cannot specify type parameters. This type is concrete.")
        if not cls.__dict__.get("_parametric", False):
            raise TypeError(f"{cls.__qualname__} is not a parametric class")
        ps = cls.__init_type_parameter__(*_as_tuple(p))
        param = ps[0] if isinstance(ps, tuple) and len(ps) == 1 else ps
        with _lock:
            concrete = cls.__dict__["_concrete_types"]
            try:
                return concrete[param]
            except KeyError:
                pass
            except TypeError:  # an unhashable parameter: never remembered
                return cls._make_concrete(param)
            sub = cls._make_concrete(param)
            concrete[param] = sub
            return sub

    def _make_concrete(cls, param: Any) -> type:
        name = f"{cls.__name__}[{_param_repr(param)}]"
        ns = {"__module__": cls.__module__, "__qualname__": f"{cls.__qualname__}[{_param_repr(param)}]",
              "_parametric": True, "_concrete": True, "_type_parameter": param, "__doc__": cls.__doc__}
        return type(cls)(name, (cls,), ns)

    def __call__(cls, *args: Any, **kw: Any) -> Any:
        if cls.__dict__.get("_parametric", False) and not cls.__dict__.get("_concrete", False):
            p = cls.__infer_type_parameter__(*args, **kw)
            return cls[p](*args, **kw)
        return super().__call__(*args, **kw)

    @property
    def parametric(cls) -> bool:
        """Whether the class was made by :func:`parametric` (or is a concrete type of one)."""
        return bool(getattr(cls, "_parametric", False))

    @property
    def concrete(cls) -> bool:
        """Whether the class is concrete (``A[int]``, not ``A``).

        Raises
        ------
        RuntimeError
            The class is not parametric (a class with this metaclass not made by
            :func:`parametric`), as plum.
        """
        if not getattr(cls, "_parametric", False):
            raise RuntimeError(f"`{cls.__qualname__}` is not parametric, so it is neither concrete "
                               "nor not concrete.")
        return bool(cls.__dict__.get("_concrete", False))

    @property
    def type_parameter(cls) -> Any:
        """The type parameter of a concrete type (``A[int].type_parameter is int``).

        Raises
        ------
        RuntimeError
            The class is not concrete (``A``, not ``A[int]``).
        """
        if not cls.__dict__.get("_concrete", False):
            raise RuntimeError(f"Cannot get the type parameter of non-concrete type `{cls.__qualname__}`.")
        return cls._type_parameter

    def __infer_type_parameter__(cls, *args: Any, **kw: Any) -> Any:
        """Default: the types of the positional arguments (one argument: its type)."""
        types = tuple(type(a) for a in args)
        return types[0] if len(types) == 1 else types

    def __init_type_parameter__(cls, *ps: Any) -> Any:
        """Default: the parameter as given."""
        return ps


class CovariantMeta(ParametricTypeMeta):
    """A metaclass that implements *covariance* of parametric types: ``A[int] <= A[Number]``."""

    def __subclasscheck__(cls, subclass: Any) -> bool:
        if cls.__dict__.get("_concrete", False) and getattr(type(subclass), "__dispatch_parametric__", False) \
                and subclass.__dict__.get("_concrete", False):
            base_cls, base_sub = cls.__mro__[1], subclass.__mro__[1]
            if type.__subclasscheck__(base_cls, base_sub):
                return bool(cls.__le_type_parameter__(subclass._type_parameter, cls._type_parameter))
            return False
        return type.__subclasscheck__(cls, subclass)

    def __instancecheck__(cls, instance: Any) -> bool:
        return cls.__subclasscheck__(type(instance))

    def __le_type_parameter__(cls, left: Any, right: Any) -> bool:
        """Whether ``cls[left]`` is a subtype of ``cls[right]``: element-wise, a sub-hint for
        types (covariance), equality for values."""
        left, right = _as_tuple(left), _as_tuple(right)
        if len(left) != len(right):
            return False
        for a, b in zip(left, right):
            if _is_hint(a) and _is_hint(b):
                try:
                    if not H.le(H.normalize(a), H.normalize(b)):
                        return False
                except TypeError:
                    if a != b:
                        return False
            elif a != b:
                return False
        return True


def _is_hint(x: Any) -> bool:
    return isinstance(x, type) or type(x).__module__ in ("typing", "types", "typing_extensions")


#: plum's private name: whether ``x`` is a class or a ``typing`` hint (``int | float``).
is_type = _is_hint


def is_concrete(t: Any) -> bool:
    """Whether ``t`` is a concrete parametric type (``A[1]``; not ``A``, nor a plain class)
    (plum's private helper)."""
    return isinstance(t, type) and getattr(type(t), "__dispatch_parametric__", False) \
        and bool(t.__dict__.get("_concrete", False))


_metaclasses: dict[type, type] = {}


def _covariant_meta(meta: type) -> type:
    """``CovariantMeta`` combined with a class's own metaclass (one per metaclass)."""
    if issubclass(meta, CovariantMeta):
        return meta
    with _lock:
        m = _metaclasses.get(meta)
        if m is None:
            ns: dict[str, Any] = {"__module__": CovariantMeta.__module__}
            own = getattr(meta, "__instancecheck__", None)
            if own is not None and own not in (type.__instancecheck__, abc.ABCMeta.__instancecheck__):
                # The class's own metaclass decides ``isinstance`` (e.g. by array shape):
                # keep its answer, and tell dispatch the answer depends on the value, not
                # only on the type (so decisions are not cached by type alone).
                ns["__instancecheck__"] = own
                ns["__dispatch_instancecheck_by_type__"] = False
            m = type(f"CovariantMeta[{repr_short(meta)}]", (CovariantMeta, meta), ns)
            _metaclasses[meta] = m
        return m


def parametric(original_class: type | None = None) -> Any:
    """Make a class parametric: ``A[int]``, ``A[1, 2]``; ``A(x)`` infers the parameter.

    Examples
    --------
    >>> @parametric
    ... class A:
    ...     def __init__(self, x): self.x = x
    >>> type(A(1)).__name__, issubclass(A[int], A)
    ('A[int]', True)
    """
    if original_class is None:
        return parametric
    meta = _covariant_meta(type(original_class))
    # The dispatched methods of the class belong to it, not to the subclass returned here
    # (``A.f.owner`` is the original class, as plum).
    for v in list(original_class.__dict__.values()):
        f = v.__func__ if isinstance(v, (staticmethod, classmethod)) else v
        if is_dispatched(f):
            f._dispatch_state.adopt_owner(original_class)
    ns = {"__module__": original_class.__module__, "__qualname__": original_class.__qualname__,
          "__doc__": original_class.__doc__, "_parametric": True, "_concrete": False,
          "_type_parameter": None, "_concrete_types": {},
          "__class_unparametrized__": _class_unparametrized, "__class_nonparametric__": _class_nonparametric}
    return meta(original_class.__name__, (original_class,), ns)


def _class_unparametrized(self: Any) -> type:
    """The parametric class of this instance without its parameter (``A`` for an ``A[int]``)."""
    return type_unparametrized(self)


def _class_nonparametric(self: Any) -> type:
    """The original class of this instance, before ``@parametric``."""
    return type_nonparametric(self)


def type_parameter(x: Any) -> Any:
    """The type parameter of a concrete parametric type or of an instance of one.

    Raises
    ------
    RuntimeError
        ``x`` is a parametric type that is not concrete (``A``, not ``A[int]``).
    """
    cls = x if isinstance(x, type) else type(x)
    if getattr(type(cls), "__dispatch_parametric__", False) and cls.__dict__.get("_concrete", False):
        return cls._type_parameter
    if getattr(type(cls), "__dispatch_parametric__", False):
        raise RuntimeError("Cannot get the type parameter of non-instantiated parametric type.")
    raise ValueError(f"{cls!r} is not a concrete parametric type")


def type_unparametrized(q: Any) -> type:
    """The type of ``q`` without its parameter: ``A`` (still parametric) for an ``A[int]``
    instance, ``type(q)`` for anything else."""
    T = type(q)
    if getattr(type(T), "__dispatch_parametric__", False) and T.__dict__.get("_concrete", False):
        return T.__mro__[1]
    return T


def type_nonparametric(q: Any) -> type:
    """The original class behind ``q``'s type (before ``@parametric``), ``type(q)`` otherwise."""
    T = type_unparametrized(q)
    if getattr(type(T), "__dispatch_parametric__", False) and T.__dict__.get("_parametric", False):
        return T.__mro__[1]
    return T


class _Kind:
    """A parametric wrapper: ``Kind["name"](*xs)`` carries ``xs``; ``get()`` returns them."""

    def __init__(self, *xs: Any):
        self._xs = xs

    def get(self) -> Any:
        """The wrapped object (several: a tuple)."""
        return self._xs[0] if len(self._xs) == 1 else self._xs


def kind(SuperClass: type = object) -> type:  # noqa: N803 - plum's name
    """A new parametric wrapper type deriving from ``SuperClass`` (plum's ``kind``)."""
    if not isinstance(SuperClass, type):
        raise TypeError(f"kind() takes a class to derive from, not {SuperClass!r}")
    base = type("Kind", (SuperClass,), {"__init__": _Kind.__init__, "get": _Kind.get,
                                         "__module__": "frostjit.dispatch", "__doc__": _Kind.__doc__})
    return parametric(base)


#: The default parametric wrapper: ``Kind["this"](1).get() == 1``.
Kind = kind()
