"""Walking one PyTree: :func:`traverse` and :func:`leaves` (read only), :func:`transform`,
:func:`flatten` / :func:`unflatten` (rebuilding), and the paths named in error messages."""
from __future__ import annotations

import logging
from typing import Any, Callable, Iterable

from ..array.flat import ArrayBase
from .kinds import (ARRAY, ARRAY_TYPES, TYPES, VALUE, VECTOR, SEQUENCE, LeafError, NodeType, node_type,
                    vector_from_components)

log = logging.getLogger("frostjit")


class Path:
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


def cycle_error(who: str, path: Path, o) -> ValueError:
    """The error of a rebuilding walk that reached ``o`` again below itself."""
    return ValueError(f"{who}(): {path} refers back to a {type(o).__name__} that contains it (a reference "
                      "cycle): a PyTree with a cycle cannot be rebuilt")


def leaf_error(who: str, path: Path, e: LeafError) -> TypeError:
    """A callback's :class:`LeafError` as the ``TypeError`` the caller sees, naming the path."""
    return TypeError(f"{who}(): {path}: {e}")


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
    if type(tree) in ARRAY_TYPES:
        fn(tree)
    else:
        _traverse(tree, fn, value_fn, set())


def _traverse(o, fn, value_fn, active: set) -> None:
    nt = TYPES.get(type(o)) or node_type(type(o))
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
            if type(c) in ARRAY_TYPES:
                fn(c)
            else:           # a nested static array (Array33f: three Array3f)
                _traverse(c, fn, value_fn, active)
        return
    i = id(o)
    if i in active:         # ``active``: the containers on the path to ``o``
        log.debug("frostjit.tree: skipped a reference cycle through a %s", type(o).__name__)
        return
    active.add(i)
    arrays = ARRAY_TYPES
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
    t = type(tree)
    if t in ARRAY_TYPES:
        return [tree]
    if t is tuple:
        # The arguments of fj.eval(x, y), fj.eval(Array4f(...)), enable_grad(x), ...: 1-D arrays
        # and static vectors of them, without a call per level (no cycle is possible here).
        out = []
        for v in tree:
            tv = type(v)
            if tv in ARRAY_TYPES:
                out.append(v)
                continue
            nt = TYPES.get(tv)
            if nt is None or nt.kind is not VECTOR:
                break
            for c in v._c:
                if type(c) not in ARRAY_TYPES:
                    break           # (a nested static array: the walk)
                out.append(c)
            else:
                continue
            break
        else:
            return out
    out: list = []
    _traverse(tree, out.append, None, set())
    return out


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
    t = type(tree)
    try:                        # the common cases, an array or a static vector: no path, no closure
        if t in ARRAY_TYPES:
            return fn(tree)
        nt = TYPES.get(t)
        # (a static array of 1-D JIT arrays; the scalar backend's arrays hold numbers: the general walk)
        if nt is not None and nt.kind is VECTOR and tree.Depth == 2 and tree.IsJIT:
            return vector_from_components(t, [fn(c) for c in tree._c])
    except LeafError as e:
        raise leaf_error(who, Path(root), e) from None
    path = Path(root)
    active: set = set()
    arrays = ARRAY_TYPES

    def rec(o):
        t = type(o)
        nt = TYPES.get(t) or node_type(t)
        kind = nt.kind
        try:
            if kind is ARRAY:
                return fn(o)
            if kind is VALUE:
                return o if value_fn is None else value_fn(o)
            if kind is VECTOR and o.Depth == 2 and o.IsJIT:
                return vector_from_components(t, [fn(c) for c in o._c])
        except LeafError as e:
            raise leaf_error(who, path, e) from None
        i = id(o)
        if i in active:
            raise cycle_error(who, path, o)
        active.add(i)
        keys, values = nt.children(o)
        out = []
        for k, v in zip(range(len(values)) if keys is None else keys, values):
            path.push(nt, k)
            out.append(fn(v) if type(v) in arrays else rec(v))
            path.pop()
        active.discard(i)
        try:
            return nt.rebuild(o, keys, out)
        except LeafError as e:
            raise leaf_error(who, path, e) from None

    try:
        return rec(tree)
    except LeafError as e:      # raised by ``fn`` for an array child (the path is still pushed)
        raise leaf_error(who, path, e) from None
    finally:
        rec = None  # (a recursive closure holds itself: a reference cycle left for the GC per call)


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
    path = Path("tree")
    active: set = set()

    def rec(o) -> TreeDef:
        t = type(o)
        nt = TYPES.get(t) or node_type(t)
        kind = nt.kind
        if kind is ARRAY:
            out.append(o)
            return TreeDef(nt, None, None, (), 1)
        if kind is VALUE:
            return TreeDef(nt, o, None, (), 0)
        i = id(o)
        if i in active:
            raise cycle_error("flatten", path, o)
        active.add(i)
        keys, values = nt.children(o)
        kids = []
        for k, v in zip(range(len(values)) if keys is None else keys, values):
            path.push(nt, k)
            kids.append(rec(v))
            path.pop()
        active.discard(i)
        return TreeDef(nt, o, keys, tuple(kids), sum(c.num_leaves for c in kids))

    try:
        return out, rec(tree)
    finally:
        rec = None  # (see transform)


def unflatten(treedef: TreeDef, leaves: Iterable) -> Any:
    """Rebuild a PyTree from :func:`flatten`'s ``treedef`` and a list of JIT arrays.

    Raises ``ValueError`` when the number of leaves is not ``treedef.num_leaves``.
    """
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"unflatten(): the tree definition takes {treedef.num_leaves} leaves, got {len(leaves)}")
    it = iter(leaves)
    path = Path("tree")

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
            raise leaf_error("unflatten", path, e) from None

    try:
        return rec(treedef)
    finally:
        rec = None  # (see transform)
