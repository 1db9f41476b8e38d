"""Type hints as dispatch sees them: matching, subhint order, and what a cache may key on.

Every annotation is normalised once into a small :class:`Hint` object. A hint answers
three questions:

* ``match(value)``: does this value satisfy the hint (the ground truth, full check, no sampling);
* ``classify(T)``: for *every* value whose ``type()`` is ``T``, is the answer known?
  ``ALWAYS`` or ``NEVER`` when the type alone decides, ``DEPENDS`` when the value matters
  (``Literal``, container elements, ``type[X]``, jaxtyping shapes, a proxy whose
  ``__class__`` lies);
* ``le(other)``: is this hint a subhint of ``other`` (the specificity order).

The resolution cache keys on ``type(arg)``; ``classify`` is what makes that key sound.
"""

from __future__ import annotations

import abc
import collections
import collections.abc as cabc
import sys
import types
import typing
from typing import Any

from .repr import repr_short

NEVER = 0
ALWAYS = 1
DEPENDS = 2

_NoneType = type(None)
_type_instancecheck = type.__dict__["__instancecheck__"]
_abc_instancecheck = abc.ABCMeta.__dict__["__instancecheck__"]

# Classes whose metaclass has a custom ``__instancecheck__`` but whose answer we can still
# derive from the argument's type. Maps the class to ``classify(T) -> ALWAYS|NEVER|DEPENDS``.
_type_classifiers: dict[type, typing.Callable[[type], int]] = {}


def register_type_classifier(cls: type, classifier: typing.Callable[[type], int]) -> None:
    """Declare how ``isinstance(x, cls)`` depends on ``type(x)``.

    Parameters
    ----------
    cls : type
        A class with a custom metaclass ``__instancecheck__`` (for example ``jax.Array``).
    classifier : callable
        ``classifier(T)`` returns ``ALWAYS``/``NEVER`` when ``type(x) is T`` decides the
        answer for every ``x``, else ``DEPENDS`` (the value is then checked per call).

    Examples
    --------
    >>> register_type_classifier(MyMeta, lambda T: ALWAYS if issubclass(T, Impl) else NEVER)
    ... # doctest: +SKIP
    """
    _type_classifiers[cls] = classifier


_liar_cache: dict[type, bool] = {}


def lies_about_class(T: type) -> bool:
    """Whether instances of ``T`` may report a ``__class__`` other than ``T``.

    ``isinstance`` consults ``x.__class__`` when ``type(x)`` does not match, so for such
    types a cache keyed on ``type(x)`` cannot decide class annotations.
    """
    try:
        return _liar_cache[T]
    except KeyError:
        pass
    result = any("__class__" in vars(C) for C in T.__mro__ if C is not object)
    _liar_cache[T] = result
    return result


def _safe_issubclass(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return issubclass(a, b)
    except TypeError:
        return False


def _has_instance_dict(T: type) -> bool:
    """Whether instances of ``T`` can carry attributes the class does not have."""
    if getattr(T, "__dictoffset__", 0):
        return True
    return type(T).__getattribute__ is not type.__getattribute__ or any(
        "__getattr__" in vars(C) or "__getattribute__" in vars(C) for C in T.__mro__ if C is not object
    )


def type_name(T: Any) -> str:
    """A short readable name for a class or hint (``int``, ``numpy.ndarray``)."""
    if isinstance(T, type):
        if T.__module__ in ("builtins", "__main__"):
            return T.__qualname__
        return f"{T.__module__}.{T.__qualname__}"
    return repr(T)


class Hint:
    """Base class of normalised hints."""

    __slots__ = ()
    #: True when the answer can change when a class is registered with an ABC.
    uses_abc = False

    def match(self, value: Any) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def classify(self, T: type) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def value_keyable(self, T: type) -> bool:
        """Whether, for values of type ``T``, ``match`` depends only on the value's hash/equality."""
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hint) and le(self, other) and le(other, self)

    def __hash__(self) -> int:
        return hash(type(self))


class AnyHint(Hint):
    """``Any`` or a missing annotation: matches everything."""

    __slots__ = ()

    def match(self, value: Any) -> bool:
        return True

    def classify(self, T: type) -> int:
        return ALWAYS

    def __repr__(self) -> str:
        return "Any"


ANY = AnyHint()


class ClassHint(Hint):
    """A class, checked with ``isinstance``."""

    __slots__ = ("cls", "uses_abc", "_kind")

    def __init__(self, cls: type):
        self.cls = cls
        meta = type(cls)
        self.uses_abc = isinstance(cls, abc.ABCMeta)
        check = getattr(meta, "__instancecheck__", _type_instancecheck)
        if getattr(cls, "_is_protocol", False) and isinstance(cls, abc.ABCMeta):
            if not getattr(cls, "_is_runtime_protocol", False):
                raise TypeError(
                    f"{type_name(cls)} is a Protocol that is not @runtime_checkable; dispatch "
                    "needs isinstance to work on it"
                )
            self._kind = "protocol"
        elif cls in _type_classifiers:
            self._kind = "registered"
        elif getattr(meta, "__dispatch_parametric__", False) and \
                getattr(meta, "__dispatch_instancecheck_by_type__", True):
            # ``@parametric`` classes: ``isinstance(x, A[int])`` is ``issubclass(type(x), A[int])``;
            # a parameter that is an ABC makes the answer depend on ABC registrations.
            self._kind = "parametric"
            self.uses_abc = self.uses_abc or _parameters_use_abc(cls)
        elif hasattr(cls, "array_type") and hasattr(cls, "dtypes") and hasattr(cls, "dim_str"):
            self._kind = "jaxtyping"
        elif check is _type_instancecheck or check is _abc_instancecheck:
            self._kind = "plain"
        else:
            self._kind = "opaque"

    def match(self, value: Any) -> bool:
        return isinstance(value, self.cls)

    def classify(self, T: type) -> int:
        kind = self._kind
        if kind == "plain":
            if issubclass(T, self.cls):
                return ALWAYS
            return DEPENDS if lies_about_class(T) else NEVER
        if kind == "parametric":
            try:
                if issubclass(T, self.cls):
                    return ALWAYS
            except TypeError:
                return DEPENDS
            return DEPENDS if lies_about_class(T) else NEVER
        if kind == "registered":
            return _type_classifiers[self.cls](T)
        if kind == "protocol":
            try:
                if issubclass(T, self.cls):
                    return ALWAYS
            except TypeError:  # protocols with data members refuse issubclass
                return DEPENDS
            return DEPENDS if (_has_instance_dict(T) or lies_about_class(T)) else NEVER
        if kind == "jaxtyping":
            # ``isinstance(x, Float[Array, "n"])`` first requires ``isinstance(x, Array)``.
            if classify_class(self.cls.array_type, T) == NEVER:
                return NEVER
            return DEPENDS
        return DEPENDS

    def __repr__(self) -> str:
        return type_name(self.cls)

    def __hash__(self) -> int:
        return hash(self.cls)


def _parameters_use_abc(cls: type) -> bool:
    if not cls.__dict__.get("_concrete", False):
        return False
    p = cls.__dict__.get("_type_parameter")
    todo = list(p) if isinstance(p, tuple) else [p]
    while todo:
        x = todo.pop()
        if isinstance(x, abc.ABCMeta):
            return True
        if isinstance(x, tuple):
            todo.extend(x)
        elif isinstance(x, type) and getattr(type(x), "__dispatch_parametric__", False):
            if _parameters_use_abc(x):
                return True
    return False


def classify_class(cls: Any, T: type) -> int:
    """Classify ``isinstance(x, cls)`` for ``type(x) is T`` (see :meth:`Hint.classify`)."""
    try:
        return normalize(cls).classify(T)
    except TypeError:
        return DEPENDS


class UnionHint(Hint):
    """``X | Y``, ``Union[X, Y]``, ``Optional[X]``."""

    __slots__ = ("members", "uses_abc")

    def __init__(self, members: tuple[Hint, ...]):
        self.members = members
        self.uses_abc = any(m.uses_abc for m in members)

    def match(self, value: Any) -> bool:
        return any(m.match(value) for m in self.members)

    def classify(self, T: type) -> int:
        result = NEVER
        for m in self.members:
            c = m.classify(T)
            if c == ALWAYS:
                return ALWAYS
            if c == DEPENDS:
                result = DEPENDS
        return result

    def value_keyable(self, T: type) -> bool:
        return all(m.value_keyable(T) for m in self.members if m.classify(T) == DEPENDS)

    def __repr__(self) -> str:
        return " | ".join(map(repr, self.members))


class LiteralHint(Hint):
    """``Literal[v1, v2, ...]``: ``isinstance(x, type(v)) and x == v`` for some ``v``."""

    __slots__ = ("values",)

    def __init__(self, values: tuple[Any, ...]):
        self.values = values

    def match(self, value: Any) -> bool:
        for v in self.values:
            if isinstance(value, type(v)) and value == v:
                return True
        return False

    def classify(self, T: type) -> int:
        if any(issubclass(T, type(v)) for v in self.values) or lies_about_class(T):
            return DEPENDS
        return NEVER

    def value_keyable(self, T: type) -> bool:
        return not lies_about_class(T)

    def __repr__(self) -> str:
        return f"Literal[{', '.join(map(repr, self.values))}]"

    def __hash__(self) -> int:
        return hash(("Literal", len(self.values)))


def _is_validator(m: Any) -> bool:
    """A beartype validator (``beartype.vale.Is[...]``, ``IsAttr``, ``IsEqual``, ...): checked on
    the value, as plum does. Other metadata only marks the hint (see :class:`AnnotatedHint`)."""
    return type(m).__name__ == "BeartypeValidator" and callable(getattr(m, "is_valid", None))


class AnnotatedHint(Hint):
    """``Annotated[T, m1, ...]``: values of ``T`` that pass every validator among the metadata.

    As in plum, an ``Annotated`` hint is strictly more specific than its ``T`` (even with
    metadata that validates nothing), and two of them with the same ``T`` and metadata are the
    same hint (a redefinition).
    """

    __slots__ = ("base", "metadata", "validators")

    def __init__(self, base: Hint, metadata: tuple):
        self.base = base
        self.metadata = metadata
        self.validators = tuple(m for m in metadata if _is_validator(m))

    @property
    def uses_abc(self) -> bool:
        return self.base.uses_abc

    @property
    def nested(self) -> tuple:
        return (self.base,)

    def match(self, value: Any) -> bool:
        return self.base.match(value) and all(v.is_valid(value) for v in self.validators)

    def classify(self, T: type) -> int:
        c = self.base.classify(T)
        return DEPENDS if c != NEVER and self.validators else c

    def __repr__(self) -> str:
        return f"Annotated[{self.base!r}, {', '.join(map(repr, self.metadata))}]"

    def __hash__(self) -> int:
        return hash(("Annotated", self.base))


def _same_metadata(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y or _safe_eq(x, y) for x, y in zip(a, b))


def _safe_eq(x: Any, y: Any) -> bool:
    try:
        return bool(x == y)
    except Exception:  # noqa: BLE001 - metadata with an odd __eq__
        return False


class SubhintHint(Hint):
    """Values that are type hints below ``target`` (``int`` and ``bool | int`` are values of
    ``SubhintHint(int | str)``): how ``convert`` and promotion rules dispatch on a target type.

    The value is any hint object (a class, a union, ``list[int]``), so only the value decides:
    ``classify`` is always *depends*, and decisions are remembered per value (hints hash).
    """

    __slots__ = ("target", "raw")

    def __init__(self, raw: Any):
        self.raw = raw
        self.target = normalize(raw)

    @property
    def uses_abc(self) -> bool:
        return self.target.uses_abc

    def match(self, value: Any) -> bool:
        try:
            return le(normalize(value), self.target)
        except TypeError:  # not a type hint
            return False

    def classify(self, T: type) -> int:
        return DEPENDS

    def value_keyable(self, T: type) -> bool:
        return True

    def __repr__(self) -> str:
        return repr_short(self.raw)

    def __hash__(self) -> int:
        return hash(("Subhint", self.target))


class SubclassHint(Hint):
    """``type[X]``: the value is a class that is a subclass of ``X``."""

    __slots__ = ("inner", "uses_abc")

    def __init__(self, inner: Hint):
        if not isinstance(inner, (ClassHint, UnionHint, AnyHint)):
            raise TypeError(f"type[...] of {inner!r} is not supported")
        self.inner = inner
        self.uses_abc = inner.uses_abc

    def _classes(self) -> tuple[Any, ...]:
        if isinstance(self.inner, UnionHint):
            return tuple(m.cls if isinstance(m, ClassHint) else object for m in self.inner.members)
        if isinstance(self.inner, ClassHint):
            return (self.inner.cls,)
        return (object,)

    def match(self, value: Any) -> bool:
        return isinstance(value, type) and any(_safe_issubclass(value, c) for c in self._classes())

    def classify(self, T: type) -> int:
        return DEPENDS if issubclass(T, type) else NEVER

    def value_keyable(self, T: type) -> bool:
        return True  # classes hash and compare by identity

    def __repr__(self) -> str:
        return f"type[{self.inner!r}]"


# Containers whose elements are checked one by one (all of them: never a sample).
class SequenceHint(Hint):
    """``list[T]``, ``set[T]``, ``Sequence[T]``, ``tuple[T, ...]``, ...: every element matches ``T``."""

    __slots__ = ("origin", "elem", "uses_abc")

    def __init__(self, origin: type, elem: Hint):
        self.origin = origin
        self.elem = elem
        self.uses_abc = isinstance(origin, abc.ABCMeta) or elem.uses_abc

    def match(self, value: Any) -> bool:
        if not isinstance(value, self.origin):
            return False
        m = self.elem.match
        return all(m(e) for e in value)

    def classify(self, T: type) -> int:
        c = ClassHint(self.origin).classify(T)
        return NEVER if c == NEVER else DEPENDS

    def __repr__(self) -> str:
        name = type_name(self.origin)
        return f"{name}[{self.elem!r}, ...]" if self.origin is tuple else f"{name}[{self.elem!r}]"


class TupleHint(Hint):
    """``tuple[A, B, C]``: fixed length, element-wise."""

    __slots__ = ("items", "uses_abc")

    def __init__(self, items: tuple[Hint, ...]):
        self.items = items
        self.uses_abc = any(i.uses_abc for i in items)

    def match(self, value: Any) -> bool:
        if not isinstance(value, tuple) or len(value) != len(self.items):
            return False
        return all(h.match(v) for h, v in zip(self.items, value))

    def classify(self, T: type) -> int:
        c = ClassHint(tuple).classify(T)
        return NEVER if c == NEVER else DEPENDS

    def __repr__(self) -> str:
        return f"tuple[{', '.join(map(repr, self.items)) or '()'}]"


class MappingHint(Hint):
    """``dict[K, V]``, ``Mapping[K, V]``: every key and value match."""

    __slots__ = ("origin", "key", "value", "uses_abc")

    def __init__(self, origin: type, key: Hint, value: Hint):
        self.origin = origin
        self.key = key
        self.value = value
        self.uses_abc = isinstance(origin, abc.ABCMeta) or key.uses_abc or value.uses_abc

    def match(self, value: Any) -> bool:
        if not isinstance(value, self.origin):
            return False
        km, vm = self.key.match, self.value.match
        return all(km(k) and vm(v) for k, v in value.items())

    def classify(self, T: type) -> int:
        c = ClassHint(self.origin).classify(T)
        return NEVER if c == NEVER else DEPENDS

    def __repr__(self) -> str:
        return f"{type_name(self.origin)}[{self.key!r}, {self.value!r}]"


_SEQUENCE_ORIGINS = (list, set, frozenset, collections.deque, cabc.Sequence, cabc.MutableSequence,
                     cabc.Set, cabc.MutableSet, cabc.Collection)
_MAPPING_ORIGINS = (dict, cabc.Mapping, cabc.MutableMapping)


_normalize_cache: dict[Any, Hint] = {}
#: Class -> class replacements applied to every annotation (plum's ``type_mapping``; IPython
#: autoreload maps a reloaded class's old version to its new one). ``clear_all_cache()`` must
#: follow a change, as in plum.
type_mapping: dict[Any, Any] = {}


class LazyHint(Hint):
    """A ``PromisedType`` or ``ModuleType``: what it stands for is looked up at each use.

    Unresolved (a module not imported yet) it matches nothing; a promise not delivered yet
    raises ``TypeError`` when used.
    """

    __slots__ = ("cls",)

    def __init__(self, cls: type):
        self.cls = cls

    def resolved(self) -> Hint | None:
        r = self.cls._dispatch_lookup()
        return None if r is self.cls else normalize(r)

    @property
    def uses_abc(self) -> bool:
        r = self.resolved()
        # Unresolved, the class may turn out to be an ABC: check the ABC token meanwhile.
        return True if r is None else r.uses_abc

    def match(self, value: Any) -> bool:
        r = self.resolved()
        return False if r is None else r.match(value)

    def classify(self, T: type) -> int:
        r = self.resolved()
        return NEVER if r is None else r.classify(T)

    def value_keyable(self, T: type) -> bool:
        r = self.resolved()
        return True if r is None else r.value_keyable(T)

    def __repr__(self) -> str:
        return self.cls.__qualname__

    def __hash__(self) -> int:
        return hash(self.cls)


def normalize(annotation: Any) -> Hint:
    """Turn an annotation into a :class:`Hint`.

    Parameters
    ----------
    annotation : Any
        A class, ``X | Y``, ``Union``, ``Optional``, ``Any``, ``Literal``, ``type[X]``,
        ``tuple[int, ...]``, ``list[float]``, ``dict[str, int]``, a runtime-checkable
        ``Protocol``, an ABC, ``None``, or a jaxtyping annotation. String forward references
        must be resolved before calling this.

    Returns
    -------
    Hint

    Examples
    --------
    >>> normalize(int | None)
    int | NoneType
    """
    try:
        return _normalize_cache[annotation]
    except (KeyError, TypeError):
        pass
    hint = _normalize(annotation)
    try:
        _normalize_cache[annotation] = hint
    except TypeError:
        pass
    return hint


def _normalize(a: Any) -> Hint:
    if isinstance(a, Hint):  # already normalised (``SubhintHint`` in convert's signatures)
        return a
    if type_mapping:
        try:
            if a in type_mapping:
                return normalize(type_mapping[a])
        except TypeError:  # unhashable
            pass
    if getattr(type(a), "__dispatch_lazy__", False):
        return LazyHint(a)
    if a is Any or a is typing.Any or a is object:
        return ANY if a is not object else ClassHint(object)
    if a is None or a is _NoneType:
        return ClassHint(_NoneType)
    if isinstance(a, (str, typing.ForwardRef)):
        raise TypeError(f"unresolved forward reference {a!r}")
    origin = typing.get_origin(a)
    args = typing.get_args(a)
    if origin is typing.Annotated:
        return AnnotatedHint(normalize(args[0]), tuple(a.__metadata__))
    if origin is typing.Union or (sys.version_info >= (3, 10) and origin is types.UnionType):
        members: list[Hint] = []
        for m in args:
            h = normalize(m)
            if h is ANY:
                return ANY
            members.extend(h.members if isinstance(h, UnionHint) else (h,))
        return members[0] if len(members) == 1 else UnionHint(tuple(members))
    if origin is typing.Literal:
        return LiteralHint(tuple(args))
    if origin is type:
        if not args or args[0] is Any:
            return ClassHint(type)
        return SubclassHint(normalize(args[0]))
    if origin is tuple:
        if not args:
            return ClassHint(tuple)
        if len(args) == 2 and args[1] is Ellipsis:
            e = normalize(args[0])
            return ClassHint(tuple) if e is ANY else SequenceHint(tuple, e)
        if args == ((),):
            return TupleHint(())
        return TupleHint(tuple(normalize(x) for x in args))
    if origin is not None and isinstance(origin, type):
        if args and issubclass(origin, _MAPPING_ORIGINS) and len(args) == 2:
            k, v = normalize(args[0]), normalize(args[1])
            if k is ANY and v is ANY:
                return ClassHint(origin)
            return MappingHint(origin, k, v)
        if args and issubclass(origin, _SEQUENCE_ORIGINS) and len(args) == 1:
            e = normalize(args[0])
            return ClassHint(origin) if e is ANY else SequenceHint(origin, e)
        # Other generics (Callable[...], Iterable[...], user Generic[T]): the origin class only;
        # checking elements would consume iterators or call functions.
        return ClassHint(origin)
    if isinstance(a, typing.TypeVar):
        if a.__constraints__:
            return normalize(typing.Union[a.__constraints__])
        return normalize(a.__bound__) if a.__bound__ is not None else ANY
    if isinstance(a, type):
        return ClassHint(a)
    raise TypeError(f"cannot dispatch on annotation {a!r}")


def le(a: Hint, b: Hint) -> bool:
    """Whether hint ``a`` is a subhint of ``b`` (``a`` is at least as specific).

    ``Any`` is only below ``Any`` (as in plum >= 2.10): an annotated parameter is always
    more specific than an unannotated one.
    """
    if a is b:
        return True
    if isinstance(a, LazyHint) or isinstance(b, LazyHint):
        ra = a.resolved() if isinstance(a, LazyHint) else a
        rb = b.resolved() if isinstance(b, LazyHint) else b
        if ra is None or rb is None:  # an unresolved module type: only below itself and Any
            return (ra is None and rb is None and a.cls is b.cls) or isinstance(b, AnyHint)
        return le(ra, rb)
    if isinstance(b, AnyHint):
        return True
    if isinstance(a, AnyHint):
        return False
    if isinstance(a, UnionHint):
        return all(le(m, b) for m in a.members)
    if isinstance(b, UnionHint):
        return any(le(a, m) for m in b.members)
    if isinstance(a, AnnotatedHint) or isinstance(b, AnnotatedHint):
        if not isinstance(b, AnnotatedHint):
            return le(a.base, b)
        if not isinstance(a, AnnotatedHint):
            return False  # T is less specific than Annotated[T, ...]
        return le(a.base, b.base) and _same_metadata(a.metadata, b.metadata)
    if isinstance(a, SubhintHint) or isinstance(b, SubhintHint):
        return isinstance(a, SubhintHint) and isinstance(b, SubhintHint) and le(a.target, b.target)
    if isinstance(a, LiteralHint):
        if isinstance(b, LiteralHint):
            return all(any(type(v) is type(w) and v == w for w in b.values) for v in a.values)
        return all(b.match(v) for v in a.values)
    if isinstance(b, LiteralHint):
        return False
    if isinstance(a, SubclassHint):
        if isinstance(b, SubclassHint):
            return all(any(_safe_issubclass(x, y) for y in b._classes()) for x in a._classes())
        return isinstance(b, ClassHint) and _safe_issubclass(type, b.cls)
    if isinstance(b, SubclassHint):
        return False
    if isinstance(a, ClassHint):
        return isinstance(b, ClassHint) and _safe_issubclass(a.cls, b.cls)
    # a is a container hint
    a_origin = tuple if isinstance(a, TupleHint) else a.origin
    if isinstance(b, ClassHint):
        return _safe_issubclass(a_origin, b.cls)
    if isinstance(b, TupleHint):
        return isinstance(a, TupleHint) and len(a.items) == len(b.items) and all(
            le(x, y) for x, y in zip(a.items, b.items)
        )
    if isinstance(b, SequenceHint):
        if not _safe_issubclass(a_origin, b.origin):
            return False
        if isinstance(a, TupleHint):
            return all(le(x, b.elem) for x in a.items)
        if isinstance(a, SequenceHint):
            return le(a.elem, b.elem)
        return False
    if isinstance(b, MappingHint):
        return (isinstance(a, MappingHint) and _safe_issubclass(a.origin, b.origin)
                and le(a.key, b.key) and le(a.value, b.value))
    return False


def _install_jax_classifier() -> None:
    """Teach dispatch that ``isinstance(x, jax.Array)`` is decided by ``type(x)`` (tracers too)."""
    jax = sys.modules.get("jax")
    if jax is None or getattr(jax, "Array", None) is None or jax.Array in _type_classifiers:
        return
    core = sys.modules.get("jax._src.core")
    tracer = getattr(core, "Tracer", None)
    array = jax.Array

    def classify_jax_array(T: type) -> int:
        if issubclass(T, array):
            return ALWAYS
        if tracer is not None and issubclass(T, tracer):
            return DEPENDS
        mod = getattr(T, "__module__", "") or ""
        if mod.startswith(("jax", "jaxlib")) or lies_about_class(T):
            return DEPENDS
        return NEVER

    register_type_classifier(array, classify_jax_array)


def prepare_annotation(a: Any) -> None:
    """Hook run before normalising an annotation: registers lazy third-party classifiers."""
    if "jax" in sys.modules:
        _install_jax_classifier()


def walk(h: Hint):
    """``h`` and every hint nested in it."""
    yield h
    if isinstance(h, UnionHint):
        subs: tuple = h.members
    elif isinstance(h, SequenceHint):
        subs = (h.elem,)
    elif isinstance(h, TupleHint):
        subs = h.items
    elif isinstance(h, MappingHint):
        subs = (h.key, h.value)
    elif isinstance(h, SubclassHint):
        subs = (h.inner,)
    else:
        subs = getattr(h, "nested", ())
    for s in subs:
        yield from walk(s)


def is_faithful_hint(h: Hint) -> bool:
    """Whether ``isinstance(x, hint) == issubclass(type(x), hint)`` for every ``x`` (plum's
    *faithful*): plain classes, ABCs and unions of them; a class may declare ``__faithful__``."""
    if h is ANY:
        return True
    if isinstance(h, UnionHint):
        return all(is_faithful_hint(m) for m in h.members)
    if type(h) is ClassHint:
        declared = getattr(h.cls, "__faithful__", None)
        if declared is not None:
            return bool(declared)
        return h._kind == "plain"
    if type(h) is LazyHint:
        r = h.resolved()
        return True if r is None else is_faithful_hint(r)
    return False


def clear_caches() -> None:
    """Forget normalised annotations and per-type answers (``clear_all_cache``)."""
    _normalize_cache.clear()
    _liar_cache.clear()
