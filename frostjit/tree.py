"""One definition of a PyTree: what it is, how to walk it, how to rebuild it.

A *PyTree* is a nest of Python containers with JIT arrays at the leaves.  Every
frostjit function that accepts "arrays or PyTrees of them" (``fj.eval``,
``fj.schedule``, ``fj.make_opaque``, ``fj.width``, the AD functions, ``gather``
and ``scatter``, ``select``, ``tile``/``repeat``, the optimizers) walks it with
the functions of this module, so they all agree on what is inside.

What each object is, decided once per type (:func:`node_type`), in this order:

1. a 1-D JIT array (``Float``, ``UInt32``, ...): a **leaf**;
2. a static vector (``Array3f``, ...): a node whose children are its components;
3. a class with ``__fj_opaque__ = True``: a Python value (never walked);
4. the **traversal protocol** (frostjit's counterpart of Dr.Jit's traversal
   callbacks): a class with ``__fj_traverse_attrs__ = ("a", "b")`` (its children
   are exactly these attributes) and/or ``__fj_traverse__(self) -> dict`` (its
   children, by name); ``__fj_assign__(self, dict)`` writes new children into the
   object, the classmethod ``__fj_construct__(cls, dict)`` builds a new one;
5. ``tuple`` and ``list``, and their subclasses (``namedtuple``);
6. ``dict`` and its subclasses (``OrderedDict``, ``defaultdict``, ``Counter``);
7. a class with a ``DRJIT_STRUCT = {"field": Type, ...}`` dict: its fields;
8. a dataclass (frozen ones too): its fields;
9. anything else (``None``, numbers, strings, NumPy arrays, other objects): a
   **Python value**, a leaf that is not a JIT array.

There is no registration function: as in Dr.Jit, a user type becomes a PyTree
by declaring ``DRJIT_STRUCT``, by being a dataclass, or through the traversal
protocol (which may be set on an existing class).

Rebuilding (:func:`transform`, :func:`unflatten`, :func:`map2`) makes a new
container of the same type without running user constructors: tuples and lists
through the built-in constructors, dict subclasses through their base class
(``defaultdict`` keeps its ``default_factory``), dataclasses and ``DRJIT_STRUCT``
objects as a shallow copy whose fields are replaced (``__init__`` and
``__post_init__`` do not run again; other attributes are kept), protocol objects
with ``__fj_construct__`` or else as a shallow copy given ``__fj_assign__``.

A container reached twice is walked twice (a PyTree is a tree: shared subtrees
count at each place).  A reference cycle is skipped by the read-only walks
(:func:`traverse`, :func:`leaves`) and is an error for the walks that rebuild.

>>> import frostjit as fj
>>> from frostjit.llvm import Float
>>> leaves, treedef = fj.tree.flatten({"x": Float(1, 2), "n": 3, "v": [Float(4)]})
>>> len(leaves)
2
>>> fj.tree.unflatten(treedef, [a * 2 for a in leaves])["n"]
3
"""
from __future__ import annotations

import collections
import dataclasses
import enum
import logging
from typing import Any, Callable, Iterable

from .array import registry
from .array.flat import ArrayBase
from .array.vector import VectorBase

log = logging.getLogger("frostjit")

__all__ = ["Kind", "NodeType", "TreeDef", "LeafError", "node_type", "is_pytree", "traverse", "leaves",
           "transform", "flatten", "unflatten", "map2", "traverse2",
           "vector_from_components"]


class Kind(enum.Enum):
    """What an object is in a PyTree (see the module docstring for the order of the checks)."""

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
    """

    cls: type
    kind: Kind
    fields: tuple | None = None
    key_paths: bool = False

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
_TYPES: dict = {}       # type -> NodeType (resolved on first sight)
_ARRAY_TYPES: set = set()     # the 1-D array classes resolved so far (a set lookup: the fast path)


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
    nt = _TYPES.get(cls)
    if nt is None:
        nt = _TYPES[cls] = _resolve(cls)
    return nt


def _resolve(t: type) -> NodeType:
    if issubclass(t, ArrayBase):
        _ARRAY_TYPES.add(t)
        return NodeType(t, ARRAY)
    if issubclass(t, VectorBase):
        return NodeType(t, VECTOR)
    if getattr(t, "__fj_opaque__", False):
        return NodeType(t, VALUE)
    if hasattr(t, "__fj_traverse__") or hasattr(t, "__fj_traverse_attrs__"):
        attrs = getattr(t, "__fj_traverse_attrs__", None)
        return NodeType(t, PROTOCOL, tuple(attrs) if attrs is not None else None,
                        getattr(t, "__fj_path_style__", None) == "key")
    if issubclass(t, (tuple, list)):
        return NodeType(t, SEQUENCE)
    if issubclass(t, dict):
        return NodeType(t, MAPPING)
    struct = getattr(t, "DRJIT_STRUCT", None)
    if isinstance(struct, dict):
        return NodeType(t, STRUCT, tuple(struct))
    if dataclasses.is_dataclass(t):
        return NodeType(t, DATACLASS, tuple(f.name for f in dataclasses.fields(t)))
    return NodeType(t, VALUE)


def is_pytree(obj) -> bool:
    """Whether ``obj`` is a PyTree node with children (not a JIT array, not a Python value)."""
    kind = node_type(type(obj)).kind
    return kind is not ARRAY and kind is not VALUE


# ------------------------------------------------------------------------------ rebuilding
def _slot_names(t: type) -> tuple:
    names = []
    for k in t.__mro__:
        sl = k.__dict__.get("__slots__", ())
        if isinstance(sl, str):
            sl = (sl,)
        names.extend(n for n in sl if n not in ("__dict__", "__weakref__") and n not in names)
    return tuple(names)


def _copy_attributes(o, new) -> None:
    """Copy the instance attributes (``__dict__`` and slots) of ``o`` into ``new``, shallowly."""
    d = getattr(o, "__dict__", None)
    if d:
        new.__dict__.update(d)
    for n in _slot_names(type(o)):
        try:
            v = object.__getattribute__(o, n)
        except AttributeError:
            continue
        object.__setattr__(new, n, v)


def _shallow_copy(o):
    """A new object of ``o``'s type with ``o``'s attributes, made without calling ``__init__``."""
    new = type(o).__new__(type(o))
    _copy_attributes(o, new)
    return new


def _rebuild_sequence(o, values: list):
    cls = type(o)
    if isinstance(o, list):
        new = list.__new__(cls)
        list.extend(new, values)
    else:
        try:
            new = tuple.__new__(cls, values)         # namedtuple: no user __new__ runs
        except TypeError:                           # e.g. os.stat_result: its own constructor
            return cls(values)
    _copy_attributes(o, new)
    return new


_DICT_BASES = (collections.OrderedDict, collections.defaultdict, dict)


def _rebuild_mapping(o, keys: tuple, values: list):
    cls = type(o)
    base = next(b for b in cls.__mro__ if b in _DICT_BASES)
    new = base.__new__(cls)
    if base is collections.defaultdict:
        new.default_factory = o.default_factory
    setitem = base.__setitem__
    for k, v in zip(keys, values):
        setitem(new, k, v)
    _copy_attributes(o, new)
    return new


def _rebuild_vector(o, values: list):
    return vector_from_components(type(o), values)


def vector_from_components(like: type, components: list):
    """A static vector of ``components``: of type ``like`` when they are its component type,
    else of the vector type matching theirs (an AD component makes an AD vector, as in Dr.Jit's
    arithmetic), so a vector's class never disagrees with its components.

    Raises :class:`LeafError` (a ``TypeError``) when the components are not 1-D arrays of one type.
    """
    elem = like._elem
    if all(type(v) is elem for v in components):
        return like._from_components(components)
    first = components[0] if components else None
    if isinstance(first, ArrayBase) and all(type(v) is type(first) for v in components):
        vcls = registry.vector_type(first._backend, first._vt, len(components), first._is_ad)
        if vcls is not None:
            return vcls._from_components(components)
    raise LeafError(f"cannot make a static vector like {like.__name__} from components of types "
                    f"{', '.join(sorted({type(v).__name__ for v in components}))}")


# ------------------------------------------------------------------------------ paths
class _Path:
    """The path from the root to the node being visited, formatted only for error messages."""

    __slots__ = ("root", "steps")

    def __init__(self, root: str):
        self.root = root
        self.steps: list = []       # (NodeType, key) per level

    def push(self, nt: NodeType, key) -> None:
        self.steps.append((nt, key))

    def pop(self) -> None:
        self.steps.pop()

    def __str__(self) -> str:
        return self.root + "".join(nt.format_key(k) for nt, k in self.steps)


def _cycle_error(who: str, path: _Path, o) -> ValueError:
    return ValueError(f"{who}(): {path} refers back to a {type(o).__name__} that contains it (a reference "
                      "cycle): a PyTree with a cycle cannot be rebuilt")


def _leaf_error(who: str, path: _Path, e: LeafError) -> TypeError:
    return TypeError(f"{who}(): {path}: {e}")


# ------------------------------------------------------------------------------ read-only walks
def traverse(tree, fn: Callable[[ArrayBase], Any], value_fn: Callable[[Any], Any] | None = None) -> None:
    """Call ``fn(array)`` for every 1-D JIT array in ``tree``, in order.

    Parameters
    ----------
    tree : PyTree
        Arrays, static vectors (their components are visited), containers of them.
    fn : callable
        Called with each 1-D JIT array (an array reached twice is visited twice).
    value_fn : callable, optional
        Called with each Python value (a leaf that is not a JIT array).

    Notes
    -----
    Depth-first, children in order: sequence order, dict order, field order, the order of
    ``__fj_traverse__``.  A reference cycle is skipped (logged at DEBUG on the "frostjit" logger).
    """
    if type(tree) in _ARRAY_TYPES:
        fn(tree)
    else:
        _traverse(tree, fn, value_fn, set())


def _traverse(o, fn, value_fn, active: set) -> None:
    nt = _TYPES.get(type(o)) or node_type(type(o))
    kind = nt.kind
    if kind is ARRAY:
        fn(o)
        return
    if kind is VALUE:
        if value_fn is not None:
            value_fn(o)
        return
    if kind is VECTOR:
        for c in o._c:
            fn(c)
        return
    i = id(o)
    if i in active:         # ``active``: the containers on the path to ``o``
        log.debug("frostjit.tree: skipped a reference cycle through a %s", type(o).__name__)
        return
    active.add(i)
    arrays = _ARRAY_TYPES
    for v in (o if kind is SEQUENCE else nt.children(o)[1]):
        if type(v) in arrays:
            fn(v)
        else:
            _traverse(v, fn, value_fn, active)
    active.discard(i)


def leaves(tree) -> list:
    """The 1-D JIT arrays in ``tree``, in order (static vectors give their components).

    Examples
    --------
    >>> fj.tree.leaves({"a": Float(1), "b": (2, Array3f(1, 2, 3))})    # 4 arrays
    """
    if type(tree) in _ARRAY_TYPES:
        return [tree]
    out: list = []
    _traverse(tree, out.append, None, set())
    return out


# ------------------------------------------------------------------------------ rebuilding walks
def transform(tree, fn: Callable[[ArrayBase], Any], value_fn: Callable[[Any], Any] | None = None, *,
              who: str = "transform", root: str = "tree"):
    """Rebuild ``tree`` with every 1-D JIT array ``a`` replaced by ``fn(a)``.

    Parameters
    ----------
    tree : PyTree
    fn : callable
        Maps each 1-D JIT array (static vectors map their components and are rebuilt
        with the vector type of the results).
    value_fn : callable, optional
        Maps each Python value (default: kept as it is).
    who, root : str
        Function name and name of ``tree`` in error messages.

    Returns
    -------
    A new PyTree of the same structure (containers are new objects, see the module
    docstring for how each kind is rebuilt).

    Raises
    ------
    ValueError
        ``tree`` contains a reference cycle.
    TypeError
        ``fn`` or ``value_fn`` raised :class:`LeafError`: the message names the leaf's path.
    """
    path = _Path(root)
    active: set = set()

    def rec(o):
        t = type(o)
        nt = _TYPES.get(t) or node_type(t)
        kind = nt.kind
        try:
            if kind is ARRAY:
                return fn(o)
            if kind is VALUE:
                return o if value_fn is None else value_fn(o)
        except LeafError as e:
            raise _leaf_error(who, path, e) from None
        i = id(o)
        if i in active:
            raise _cycle_error(who, path, o)
        active.add(i)
        keys, values = nt.children(o)
        out = []
        for k, v in zip(range(len(values)) if keys is None else keys, values):
            path.push(nt, k)
            out.append(rec(v))
            path.pop()
        active.discard(i)
        try:
            return nt.rebuild(o, keys, out)
        except LeafError as e:
            raise _leaf_error(who, path, e) from None

    return rec(tree)


class TreeDef:
    """The structure of a flattened PyTree: containers, keys and Python values (see :func:`flatten`).

    Two tree definitions are equal when their node types, keys and Python values are (values
    by ``==`` when they are hashable, else by identity).  ``num_leaves`` is the number of JIT
    arrays that :func:`unflatten` takes.
    """

    __slots__ = ("node", "obj", "keys", "children", "num_leaves")

    def __init__(self, node: NodeType, obj, keys, children: tuple, num_leaves: int):
        self.node = node                # NodeType (ARRAY for a leaf slot, VALUE for a Python value)
        self.obj = obj                  # the container rebuilt from, or the Python value
        self.keys = keys
        self.children = children
        self.num_leaves = num_leaves

    def _token(self):
        kind = self.node.kind
        if kind is VALUE:
            o = self.obj
            try:
                hash(o)
                return (VALUE, type(o), o)
            except TypeError:
                return (VALUE, type(o), id(o))
        if kind is ARRAY:
            return (ARRAY, self.node.cls)
        return (kind, self.node.cls, self.keys, len(self.children))

    def __eq__(self, other) -> bool:
        if not isinstance(other, TreeDef):
            return NotImplemented
        if self.num_leaves != other.num_leaves or self._token() != other._token():
            return False
        return all(a == b for a, b in zip(self.children, other.children))

    def __hash__(self) -> int:
        return hash((self.node.kind, self.node.cls, self.keys, self.num_leaves,
                     tuple(hash(c) for c in self.children)))

    def __repr__(self) -> str:
        kind = self.node.kind
        if kind is ARRAY:
            return "*"
        if kind is VALUE:
            return repr(self.obj)
        inner = ", ".join(repr(c) if self.keys is None else f"{k!r}: {c!r}"
                          for k, c in zip(self.keys or range(len(self.children)), self.children))
        return f"{self.node.cls.__name__}({inner})"


def flatten(tree) -> tuple[list, TreeDef]:
    """Split ``tree`` into its 1-D JIT arrays and its structure.

    Returns
    -------
    (leaves, treedef)
        ``leaves`` as :func:`leaves` gives them; ``treedef`` holds the containers, their keys
        and the Python values, so that ``unflatten(treedef, leaves)`` rebuilds the tree.

    Raises
    ------
    ValueError
        ``tree`` contains a reference cycle.
    """
    out: list = []
    path = _Path("tree")
    active: set = set()

    def rec(o) -> TreeDef:
        t = type(o)
        nt = _TYPES.get(t) or node_type(t)
        kind = nt.kind
        if kind is ARRAY:
            out.append(o)
            return TreeDef(nt, None, None, (), 1)
        if kind is VALUE:
            return TreeDef(nt, o, None, (), 0)
        i = id(o)
        if i in active:
            raise _cycle_error("flatten", path, o)
        active.add(i)
        keys, values = nt.children(o)
        kids = []
        for k, v in zip(range(len(values)) if keys is None else keys, values):
            path.push(nt, k)
            kids.append(rec(v))
            path.pop()
        active.discard(i)
        return TreeDef(nt, o, keys, tuple(kids), sum(c.num_leaves for c in kids))

    return out, rec(tree)


def unflatten(treedef: TreeDef, leaves: Iterable) -> Any:
    """Rebuild a PyTree from :func:`flatten`'s ``treedef`` and a list of JIT arrays.

    Raises ``ValueError`` when the number of leaves is not ``treedef.num_leaves``.
    """
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"unflatten(): the tree definition takes {treedef.num_leaves} leaves, got {len(leaves)}")
    it = iter(leaves)
    path = _Path("tree")

    def rec(d: TreeDef):
        kind = d.node.kind
        if kind is ARRAY:
            return next(it)
        if kind is VALUE:
            return d.obj
        out = []
        for k, c in zip(range(len(d.children)) if d.keys is None else d.keys, d.children):
            path.push(d.node, k)
            out.append(rec(c))
            path.pop()
        try:
            return d.node.rebuild(d.obj, d.keys, out)
        except LeafError as e:
            raise _leaf_error("unflatten", path, e) from None

    return rec(treedef)


# ------------------------------------------------------------------------------ two trees
def _describe(o) -> str:
    nt = node_type(type(o))
    name = type(o).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    if nt.kind is SEQUENCE:
        return f"{article} {name} of {len(o)} {'entry' if len(o) == 1 else 'entries'}"
    if nt.kind is MAPPING:
        return f"{article} {name} with keys {list(o)}"
    if nt.kind is VALUE and isinstance(o, (int, float, str, type(None))):
        return f"{article} {name} ({o!r})"
    return f"{article} {name}"


def _match(nt: NodeType, a, b, bt: NodeType | None, broadcast: bool):
    """The parts of ``b`` matching the children ``(keys, values)`` of node ``a``, or an error text."""
    keys, values = nt.children(a)
    n = len(values)
    bk = bt.kind if bt is not None else None
    if bk is VALUE or bk is ARRAY:
        # A 1-D array or a Python value broadcasts over a static vector (as in arithmetic) and,
        # with ``broadcast``, over any PyTree.
        if nt.kind is VECTOR or broadcast:
            return keys, values, [b] * n
        return f"expected {_describe(a)}, got {_describe(b)}"
    kind = nt.kind
    if kind is VECTOR or kind is SEQUENCE:
        if bk is not kind:
            return f"expected {_describe(a)}, got {_describe(b)}"
        bv = list(b._c) if kind is VECTOR else list(b)
        if len(bv) != n:
            return f"expected {_describe(a)}, got {_describe(b)}"
        return keys, values, bv
    if kind is MAPPING:
        if bk is not MAPPING:
            return f"expected {_describe(a)}, got {_describe(b)}"
        if len(b) != n or any(k not in b for k in keys):
            return f"the keys differ ({list(keys)} and {list(b)})"
        return keys, values, [b[k] for k in keys]
    if type(b) is not type(a):
        return f"expected {_describe(a)}, got {_describe(b)}"
    bkeys, bv = bt.children(b)
    if bkeys != keys:
        return f"the fields differ ({list(keys)} and {list(bkeys)})"
    return keys, values, bv


def _walk2(a, b, leaf: Callable, rebuild: bool, broadcast: bool, who: str, names: tuple):
    """Walk ``a`` and ``b`` together, calling ``leaf(x, y)`` at each leaf of ``a``."""
    path = _Path(names[0])
    active: set = set()

    def rec(x, y):
        nt = _TYPES.get(type(x)) or node_type(type(x))
        kind = nt.kind
        yt = _TYPES.get(type(y)) or node_type(type(y))
        if kind is ARRAY or kind is VALUE:
            if yt.kind is not ARRAY and yt.kind is not VALUE and yt.kind is not VECTOR:
                raise TypeError(f"{who}(): {names[1]} does not match {names[0]} at {path}: expected "
                                f"{_describe(x)}, got {_describe(y)}")
            try:
                return leaf(x, y)
            except LeafError as e:
                raise _leaf_error(who, path, e) from None
        i = id(x)
        if i in active:
            raise _cycle_error(who, path, x)
        m = _match(nt, x, y, yt, broadcast)
        if isinstance(m, str):
            raise TypeError(f"{who}(): {names[1]} does not match {names[0]} at {path}: {m}")
        keys, xs, ys = m
        active.add(i)
        out = []
        for k, xv, yv in zip(range(len(xs)) if keys is None else keys, xs, ys):
            path.push(nt, k)
            out.append(rec(xv, yv))
            path.pop()
        active.discard(i)
        if not rebuild:
            return None
        try:
            return nt.rebuild(x, keys, out)
        except LeafError as e:
            raise _leaf_error(who, path, e) from None

    return rec(a, b)


def map2(a, b, fn: Callable[[Any, Any], Any], *, broadcast: bool = False, who: str = "map2",
         names: tuple[str, str] = ("a", "b")):
    """Rebuild ``a`` with each leaf ``x`` replaced by ``fn(x, y)``, ``y`` the matching part of ``b``.

    Parameters
    ----------
    a, b : PyTree
        Trees of the same structure: sequences of the same length (tuple and list match),
        mappings with the same keys, dataclasses / ``DRJIT_STRUCT`` / protocol objects of the
        same type, static vectors of the same size.  A 1-D array or Python value in ``b``
        broadcasts over a static vector of ``a``; with ``broadcast=True`` over any subtree.
    fn : callable
        Called for every leaf of ``a`` (JIT arrays and Python values alike); it may raise
        :class:`LeafError`, which the walk turns into a ``TypeError`` naming the path.
    who, names : str
        Function name and the names of ``a`` and ``b`` in error messages.

    Raises
    ------
    TypeError
        The structures differ; the message names the first path where they do, e.g.
        ``scatter(): value does not match target at target[1]["pos"]: expected a tuple of 2
        entries, got a tuple of 3 entries``.
    ValueError
        ``a`` contains a reference cycle.

    Examples
    --------
    >>> fj.tree.map2((Float(1), {"k": Float(2)}), (Float(10), {"k": Float(20)}), lambda x, y: x + y)
    ([11], {'k': [22]})
    """
    return _walk2(a, b, fn, True, broadcast, who, names)


def traverse2(a, b, fn: Callable[[Any, Any], Any], *, broadcast: bool = False, who: str = "traverse2",
              names: tuple[str, str] = ("a", "b")) -> None:
    """Call ``fn(x, y)`` for every leaf ``x`` of ``a`` and the matching part ``y`` of ``b``: the
    calls :func:`map2` makes, in the same order, with the same checks, rebuilding nothing."""
    _walk2(a, b, fn, False, broadcast, who, names)


# The former name of :func:`leaves` (tests of frozen functions still use it).
arrays_in = leaves
