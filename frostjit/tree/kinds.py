"""What each object is in a PyTree (:class:`Kind`), resolved once per type (:func:`node_type`),
and how a node's children are read, written and rebuilt (:class:`NodeType`).  The order of the
checks is in the package docstring (:mod:`frostjit.tree`)."""
from __future__ import annotations

import collections
import dataclasses
import enum

from ..array import registry
from ..array.flat import ArrayBase
from ..array.vector import VectorBase


class Kind(enum.Enum):
    """What an object is in a PyTree (the order of the checks: :mod:`frostjit.tree`)."""

    ARRAY = "array"            # a 1-D JIT array: a leaf
    VECTOR = "vector"          # a static vector: its components
    PROTOCOL = "protocol"      # __fj_traverse_attrs__ / __fj_traverse__
    SEQUENCE = "sequence"      # tuple, list and subclasses
    MAPPING = "mapping"        # dict and subclasses
    STRUCT = "struct"          # DRJIT_STRUCT classes
    DATACLASS = "dataclass"
    VALUE = "value"            # a Python value: a leaf that is not a JIT array


ARRAY, VECTOR, PROTOCOL, SEQUENCE, MAPPING, STRUCT, DATACLASS, VALUE = Kind


class LeafError(TypeError):
    """Raised by a callback of :func:`transform`, :func:`map2` or :func:`traverse2` for a leaf
    it cannot handle; the walk re-raises it as a ``TypeError`` naming the leaf's path."""


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class NodeType:
    """How objects of one type are walked: the children of a node and how it is rebuilt.

    Attributes
    ----------
    cls : type
        The type described.
    kind : Kind
        What objects of ``cls`` are.
    fields : tuple of str or None
        The attribute names of a ``DRJIT_STRUCT`` class, a dataclass or a protocol class
        with ``__fj_traverse_attrs__`` (None: read from each object).
    key_paths : bool
        Paths show the children as ``["name"]`` rather than ``.name``
        (``__fj_path_style__ = "key"``).
    struct : dict, tuple or None
        What ``fields`` were read from: the ``DRJIT_STRUCT`` dict or the ``__fj_traverse_attrs__``
        of a user class, so that a class whose declaration is reassigned or changed in place is
        resolved again (:meth:`stale`).  ``None`` for frostjit's own classes (taken as constant).
    """

    cls: type
    kind: Kind
    fields: tuple | None = None
    key_paths: bool = False
    struct: dict | None = None

    def stale(self) -> bool:
        """Whether the class's ``DRJIT_STRUCT`` (``__fj_traverse_attrs__``) is no longer the
        object and the names ``fields`` were read from (``S.DRJIT_STRUCT = {...}`` or
        ``S.DRJIT_STRUCT["c"] = T`` after first use; Dr.Jit reads it at every traversal: r16, a
        plain call mixed the old fields and the new)."""
        s = self.struct
        return s is not None and (getattr(self.cls, declaration(self.kind), None) is not s or tuple(s) != self.fields)

    def children(self, o) -> tuple[tuple | None, list]:
        """``(keys, values)`` of node ``o``: keys are None for sequences and vectors (positions)."""
        kind = self.kind
        if kind is SEQUENCE:
            return None, list(o)
        if kind is VECTOR:
            return None, list(o._c)
        if kind is MAPPING:
            items = list(o.items())
            return tuple(k for k, _ in items), [v for _, v in items]
        if self.fields is not None:
            if self.struct is not None and self.stale():
                nt = node_type(self.cls)
                return ((), []) if nt.kind is VALUE or nt.kind is ARRAY else nt.children(o)
            return self.fields, [getattr(o, n) for n in self.fields]
        if kind is PROTOCOL:
            state = o.__fj_traverse__()
            return tuple(state), list(state.values())
        raise TypeError(f"frostjit.tree: a {self.cls.__name__} ({kind.value}) has no children")

    def rebuild(self, o, keys: tuple | None, values: list):
        """A new object like node ``o`` with children ``values`` (``o`` is left as it is)."""
        kind = self.kind
        cls = self.cls
        if kind is SEQUENCE:
            if cls is tuple:
                return tuple(values)
            if cls is list:
                return values
            return _rebuild_sequence(o, values)
        if kind is MAPPING:
            if cls is dict:
                return dict(zip(keys, values))
            return _rebuild_mapping(o, keys, values)
        if kind is VECTOR:
            return _rebuild_vector(o, values)
        if kind is PROTOCOL and hasattr(cls, "__fj_construct__"):
            return cls.__fj_construct__(dict(zip(keys, values)))
        new = _shallow_copy(o)
        if kind is PROTOCOL and hasattr(cls, "__fj_assign__"):
            new.__fj_assign__(dict(zip(keys, values)))
        else:
            for n, v in zip(keys, values):
                object.__setattr__(new, n, v)       # frozen dataclasses too; no __init__ runs again
        return new

    def assign(self, o, keys: tuple | None, values: list) -> None:
        """Write the children ``values`` into node ``o`` in place (raises ``TypeError`` for a tuple)."""
        kind = self.kind
        if kind is VECTOR:
            o._c[:] = values
        elif kind is SEQUENCE:
            if isinstance(o, tuple):
                raise TypeError(f"frostjit.tree: cannot assign into a {self.cls.__name__} (tuples are immutable)")
            o[:] = values
        elif kind is MAPPING:
            for k, v in zip(keys, values):
                o[k] = v
        elif kind is PROTOCOL and hasattr(self.cls, "__fj_assign__"):
            o.__fj_assign__(dict(zip(keys, values)))
        else:
            for n, v in zip(keys, values):
                try:
                    setattr(o, n, v)
                except (AttributeError, dataclasses.FrozenInstanceError):
                    object.__setattr__(o, n, v)

    def format_key(self, key) -> str:
        """One step of a path in Dr.Jit's notation: ``[2]``, ``["name"]`` or ``.name``."""
        kind = self.kind
        if kind is SEQUENCE or kind is VECTOR:
            return f"[{key}]"
        if kind is MAPPING or self.key_paths:
            return f'["{key}"]' if isinstance(key, str) else f"[{key!r}]"
        return f".{key}"


# ------------------------------------------------------------------------------ resolution
TYPES: dict = {}       # type -> NodeType (resolved on first sight)
ARRAY_TYPES: set = set()     # the 1-D array classes resolved so far (a set lookup: the fast path)


def node_type(cls: type) -> NodeType:
    """How objects of type ``cls`` are walked (resolved once per type, then cached).

    Parameters
    ----------
    cls : type
        The type of an object found in a PyTree.

    Returns
    -------
    NodeType
        Its :class:`Kind`, its field names where they are fixed per type, and the
        ``children``/``rebuild``/``assign`` operations.

    Examples
    --------
    >>> fj.tree.node_type(dict).kind
    <Kind.MAPPING: 'mapping'>
    """
    nt = TYPES.get(cls)
    if nt is None or (nt.struct is not None and nt.stale()):
        nt = TYPES[cls] = _resolve(cls)
    return nt


def _resolve(t: type) -> NodeType:
    if issubclass(t, ArrayBase):
        ARRAY_TYPES.add(t)
        return NodeType(t, ARRAY)
    if issubclass(t, VectorBase):
        return NodeType(t, VECTOR)
    if getattr(t, "__fj_opaque__", False):
        return NodeType(t, VALUE)
    if hasattr(t, "__fj_traverse__") or hasattr(t, "__fj_traverse_attrs__"):
        attrs = getattr(t, "__fj_traverse_attrs__", None)
        return NodeType(t, PROTOCOL, tuple(attrs) if attrs is not None else None,
                        getattr(t, "__fj_path_style__", None) == "key", _source(t, attrs))
    if issubclass(t, (tuple, list)):
        return NodeType(t, SEQUENCE)
    if issubclass(t, dict):
        return NodeType(t, MAPPING)
    struct = getattr(t, "DRJIT_STRUCT", None)
    if isinstance(struct, dict):
        return NodeType(t, STRUCT, tuple(struct), struct=_source(t, struct))
    if dataclasses.is_dataclass(t):
        return NodeType(t, DATACLASS, tuple(f.name for f in dataclasses.fields(t)))
    return NodeType(t, VALUE)


def declaration(kind: Kind) -> str:
    """The class attribute that declares the fields of a node of ``kind`` (STRUCT or PROTOCOL)."""
    return "DRJIT_STRUCT" if kind is STRUCT else "__fj_traverse_attrs__"


def frostjit_class(t: type) -> bool:
    """Whether class ``t`` is one of frostjit's own (defined in a ``frostjit`` module): its field
    declarations and slots are taken as constant by the tree walk and by freeze's guards.
    (freeze/readset.py and freeze/lookup.py spell the test out: they import nothing outside
    freeze/, so that other Pythons can load them alone: tests/freeze/readset_probe.py.)"""
    return str(getattr(t, "__module__", "")).startswith("frostjit")


def _source(t: type, decl):
    """``decl`` (a user class's field declaration) for :meth:`NodeType.stale` to compare;
    ``None`` for frostjit's own classes, taken as constant (no check on their walks)."""
    if decl is None or frostjit_class(t):
        return None
    return decl


def is_pytree(obj) -> bool:
    """Whether ``obj`` is a PyTree node with children (not a JIT array, not a Python value)."""
    kind = node_type(type(obj)).kind
    return kind is not ARRAY and kind is not VALUE


# ------------------------------------------------------------------------------ rebuilding
_SLOTS: dict = {}        # type -> its instance slot names (resolved once per type)


def slot_names(t: type) -> tuple:
    """The instance slot names of type ``t`` and its bases (without ``__dict__``/``__weakref__``)."""
    s = _SLOTS.get(t)
    if s is None:
        names = []
        for k in t.__mro__:
            sl = k.__dict__.get("__slots__", ())
            if isinstance(sl, str):
                sl = (sl,)
            names.extend(n for n in sl if n not in ("__dict__", "__weakref__") and n not in names)
        s = _SLOTS[t] = tuple(names)
    return s


def _copy_attributes(o, new) -> None:
    """Copy the instance attributes (``__dict__`` and slots) of ``o`` into ``new``, shallowly."""
    try:        # (past a user __getattr__, which may raise anything)
        d = object.__getattribute__(o, "__dict__")
    except (AttributeError, TypeError):
        d = None
    if d:
        new.__dict__.update(d)
    for n in slot_names(type(o)):
        try:
            v = object.__getattribute__(o, n)
        except AttributeError:
            continue
        object.__setattr__(new, n, v)


def _shallow_copy(o):
    """A new object of ``o``'s type with ``o``'s attributes (and, for a tuple, list or dict
    subclass, its items), made without calling ``__init__``."""
    if isinstance(o, (tuple, list, dict)):     # a protocol object with a container base
        if isinstance(o, dict):
            return _rebuild_mapping(o, tuple(o.keys()), list(o.values()))
        return _rebuild_sequence(o, list(o))
    new = type(o).__new__(type(o))
    _copy_attributes(o, new)
    return new


_DICT_BASES = (collections.OrderedDict, collections.defaultdict, dict)


def make_container(cls: type, keys: tuple | None, values: list):
    """A new ``cls`` (a subclass of ``tuple``, ``list`` or ``dict``) holding ``values`` (at
    ``keys`` for a dict), made without running user constructors and without instance attributes.

    ``tuple.__new__`` / ``list.__new__`` / the dict base's ``__new__`` make the object (a
    ``namedtuple``'s ``__new__`` and an ``OrderedDict`` subclass's ``__init__`` do not run); a tuple
    type that refuses ``tuple.__new__`` (``os.stat_result``) is called with the values.  A
    ``defaultdict``'s ``default_factory`` is left ``None``.
    """
    if issubclass(cls, dict):
        base = next(b for b in cls.__mro__ if b in _DICT_BASES)
        new = base.__new__(cls)
        setitem = base.__setitem__
        for k, v in zip(keys, values):
            setitem(new, k, v)
        return new
    if issubclass(cls, list):
        new = list.__new__(cls)
        list.extend(new, values)
        return new
    try:
        return tuple.__new__(cls, values)         # namedtuple: no user __new__ runs
    except TypeError:                             # e.g. os.stat_result: its own constructor
        return cls(values)


def _rebuild_sequence(o, values: list):
    new = make_container(type(o), None, values)
    _copy_attributes(o, new)
    return new


def _rebuild_mapping(o, keys: tuple, values: list):
    new = make_container(type(o), keys, values)
    if isinstance(o, collections.defaultdict):
        new.default_factory = o.default_factory
    _copy_attributes(o, new)
    return new


def _rebuild_vector(o, values: list):
    return vector_from_components(type(o), values)


def vector_from_components(like: type, components: list):
    """A static vector of ``components``: of type ``like`` when they are its component type,
    else of the vector type of ``like``'s family matching theirs (an AD component makes an AD
    vector, as in Dr.Jit's arithmetic), so a vector's class never disagrees with its components.
    Nested arrays (components that are static arrays) and dynamic arrays too.

    Raises :class:`LeafError` (a ``TypeError``) when the components are not arrays of one type.
    """
    elem = like._elem
    for v in components:
        if type(v) is not elem:
            break
    else:
        return like._from_components(components)
    first = components[0] if components else None
    if not like.IsJIT and like.Depth == 1 and all(isinstance(v, (bool, int, float)) for v in components):
        return like._from_components(components)     # the scalar backend: rounded to its type
    if isinstance(first, (ArrayBase, VectorBase)) and all(type(v) is type(first) for v in components):
        # the same family (a matrix of AD entries is an AD matrix); nested arrays too
        n = None if like._family == "dynamic" else len(components)
        vcls = registry.array_type(type(first), n, like._family) or registry.array_type(type(first), n, "array")
        if vcls is not None:
            return vcls._from_components(components)
    raise LeafError(f"cannot make a static vector like {like.__name__} from components of types "
                    f"{', '.join(sorted({type(v).__name__ for v in components}))}")
