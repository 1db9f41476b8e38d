"""Which of a body's (or branch's) results are its own arguments, and Dr.Jit's write-back of them
into the caller's objects.

Bodies and branches receive fresh handles (:func:`.consistency.fresh`), so nothing they do
changes the caller's arrays while they run.  Dr.Jit 1.5 then maps the results back: a result
that *is* (by identity) the object a body or both branches received in some argument position
becomes the caller's object of that position, updated in place to the final value::

    def body(i, x):
        x += 1              # updates the body's handle in place
        return i + 1, x     # the handle it received

    i2, x2 = fj.while_loop((i, x), cond, body)      # x2 is x, and x holds the final value

A loop result that is still the caller's variable (the body returned it unchanged, even as a
new handle) is the caller's object too.  A new object with a new value is returned as it is, and
the caller's object keeps its value (``return i + 1, x + 1``: ``x`` unchanged).  Top-level
``list`` and ``dict`` entries that a loop body updates in place and returns are updated in the
caller's container likewise (also dataclasses, static vectors and other mutable containers, for a
conditional's branches too).
"""
from __future__ import annotations

from ..array.flat import ArrayBase
from ..tree import Kind, flatten, node_type, unflatten


def leaves_of(tree) -> list:
    """``flatten(tree)[0]``, without the walk for the common tuple of arrays."""
    if type(tree) is tuple and all(isinstance(a, ArrayBase) for a in tree):
        return list(tree)
    return flatten(tree)[0]


class Returned:
    """``fn`` wrapped to record, for each array of its result (in :func:`~frostjit.tree.flatten`
    order), the position of the argument array it is (``None``: a new object), and for each
    top-level entry of a tuple result, the position of the argument it is.  The last call's
    record counts (a body traced again, or called once per iteration, behaves the same)."""

    __slots__ = ("fn", "leaves", "tops")

    def __init__(self, fn):
        self.fn = fn
        self.leaves = None
        self.tops = None

    def __call__(self, *args, **kwargs):
        # (what it received, before the call: it may replace entries of a container argument)
        given = {id(a): k for k, a in enumerate(args)}
        simple = all(isinstance(a, ArrayBase) for a in args)
        received = given if simple else {id(a): k for k, a in enumerate(flatten(args)[0])}
        out = self.fn(*args, **kwargs)
        try:
            self.leaves = [received.get(id(a)) for a in leaves_of(out)]
        except Exception:           # (a malformed result: the contract check reports it)
            self.leaves = None
        # (a result that is not a tuple is one entry: a branch returning its argument itself)
        if simple:
            self.tops = None        # (no containers to update)
        else:
            self.tops = [given.get(id(o)) for o in out] if isinstance(out, tuple) else given.get(id(out))
        return out


def write_back(originals: tuple, out, records: list, loop: bool = False):
    """``out`` with each result array that every record in ``records`` maps to the same argument
    position replaced by the caller's array of that position (``originals``), updated in place
    to the result's value.  ``loop``: only a result at its own position maps (Dr.Jit: a loop
    body returning its state swapped gives new objects), and a result that is still the
    caller's variable of its position (a loop's state left unchanged) is the caller's object
    too.  ``out`` itself when nothing maps."""
    if any(r.leaves is None for r in records):
        return out
    orig = leaves_of(originals)
    simple = type(out) is tuple and all(isinstance(a, ArrayBase) for a in out)
    res, treedef = (list(out), None) if simple else flatten(out)
    maps = [r.leaves for r in records]
    if any(len(m) != len(res) for m in maps):
        return out
    changed = False
    for j, a in enumerate(res):
        k = maps[0][j]
        if k is None or any(m[j] != k for m in maps[1:]) or (loop and k != j) or not _same_kind(orig[k], a):
            if not (loop and j < len(orig) and _same_kind(orig[j], a) and orig[j]._node is a._node):
                continue
            k = j
        if orig[k]._node is not a._node:
            # (the same variable keeps the caller's AD vertex: an unchanged state entry of a
            # differentiated loop is the input itself, as in Dr.Jit)
            orig[k]._become(a)
        res[j] = orig[k]
        changed = True
    if simple:
        return tuple(res) if changed else out
    tops = [r.tops for r in records]
    if any(t is None for t in tops):
        return unflatten(treedef, res) if changed else out
    new = unflatten(treedef, res) if changed else out
    if not isinstance(out, tuple):
        return _container(originals, new, tops, None) if all(isinstance(t, int) for t in tops) else new
    if not all(isinstance(t, list) and len(t) == len(out) for t in tops):
        return new
    return tuple(_container(originals, v, [t[i] for t in tops], i if loop else None) for i, v in enumerate(new))


def _same_kind(a, b) -> bool:
    return isinstance(a, ArrayBase) and type(a) is type(b)


def _container(originals: tuple, value, positions: list, own):
    """The caller's ``list``/``dict`` (updated in place to ``value``) when every record returned the
    argument it received at one position (``own``, unless ``None``); else ``value``."""
    k = positions[0]
    if k is None or any(p != k for p in positions[1:]) or (own is not None and k != own):
        return value
    target = originals[k]
    if type(target) is not type(value) or isinstance(target, ArrayBase):
        return value
    if type(target) is dict:
        target.clear()
        target.update(value)
        return target
    nt = node_type(type(target))
    if nt.kind in (Kind.VALUE, Kind.ARRAY):
        return value
    if type(target) is tuple:
        a, b = flatten(target)[0], flatten(value)[0]
        # (immutable: the caller's tuple only when its arrays are all the results)
        return target if len(a) == len(b) and all(x is y for x, y in zip(a, b)) else value
    keys, values = nt.children(value)
    nt.assign(target, keys, values)     # (a list, a dataclass, a static vector, a DRJIT_STRUCT ...)
    return target
