"""Two PyTrees of the same structure walked together: :func:`map2` (rebuilding the first) and
:func:`traverse2`, with errors naming the first path where the structures differ."""
from __future__ import annotations

from typing import Any, Callable

from .kinds import ARRAY, ARRAY_TYPES, MAPPING, SEQUENCE, TYPES, VALUE, VECTOR, LeafError, NodeType, node_type
from .walk import Path, cycle_error, leaf_error


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


def _walk2(a, b, leaf: Callable, rebuild: bool, broadcast: bool, who: str, names: tuple, is_leaf=None):
    """Walk ``a`` and ``b`` together, calling ``leaf(x, y)`` at each leaf of ``a`` (and at each
    node ``x`` of ``a`` for which ``is_leaf(x)`` is true, without descending into it)."""
    if type(a) in ARRAY_TYPES and (type(b) in ARRAY_TYPES or type(b) in _NUMBERS):    # the common case
        try:
            return leaf(a, b)
        except LeafError as e:
            raise leaf_error(who, Path(names[0]), e) from None
    path = Path(names[0])
    active: set = set()

    def rec(x, y):
        nt = TYPES.get(type(x)) or node_type(type(x))
        kind = nt.kind
        yt = TYPES.get(type(y)) or node_type(type(y))
        if kind is ARRAY or kind is VALUE or (is_leaf is not None and is_leaf(x)):
            if yt.kind is not ARRAY and yt.kind is not VALUE and yt.kind is not VECTOR:
                raise TypeError(f"{who}(): {names[1]} does not match {names[0]} at {path}: expected "
                                f"{_describe(x)}, got {_describe(y)}")
            try:
                return leaf(x, y)
            except LeafError as e:
                raise leaf_error(who, path, e) from None
        i = id(x)
        if i in active:
            raise cycle_error(who, path, x)
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
            raise leaf_error(who, path, e) from None

    try:
        return rec(a, b)
    finally:
        rec = None  # (a recursive closure holds itself: a reference cycle left for the GC per call)


_NUMBERS = {int, float, bool}


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
              names: tuple[str, str] = ("a", "b"), is_leaf: Callable[[Any], bool] | None = None) -> None:
    """Call ``fn(x, y)`` for every leaf ``x`` of ``a`` and the matching part ``y`` of ``b``: the
    calls :func:`map2` makes, in the same order, with the same checks, rebuilding nothing.
    ``is_leaf(x)`` true makes a node of ``a`` a leaf too (``fn`` gets it whole), e.g. the
    scalar backend's 1-D arrays, which are static-vector nodes of Python numbers otherwise."""
    _walk2(a, b, fn, False, broadcast, who, names, is_leaf)
