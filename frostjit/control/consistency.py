"""The contract between iterations and branches: a state variable keeps its type, structure and
size, and (with ``strict=True``) a Python value in it keeps its value.

:func:`check` compares the state before and after a loop body (or the results of the two
branches of a conditional, or of two ``switch`` targets) and raises Dr.Jit's error for the first
variable that broke the contract, naming it by its label and path (``state[1]``, ``x["b"][0]``,
``rv``).  :func:`merge` then combines the two lane by lane.
"""
from __future__ import annotations

import math

import numpy as np

from ..array.flat import ArrayBase
from ..functions.math import select
from ..trace.state import state as trace_state
from ..tree import Kind, flatten, map2, node_type, unflatten
from ..tree import transform
from .errors import StateTypeError, StateValueError

_DOCS = {
    "while_loop": "fj.while_loop()",
    "if_stmt": "fj.if_stmt()",
    "switch": "fj.switch()",
}


def contract_error(cls, who: str, message: str) -> Exception:
    """``cls`` with Dr.Jit's wording: the function, the problem, and where the rules are."""
    name = _DOCS.get(who, f"fj.{who}()")
    return cls(f"{name}: {message}. Please review the interface and assumptions of '{name}' "
               f"(help({name[:-2]}) and docs/control.md).")


def type_name(x) -> str:
    """``frostjit.llvm.Float32`` for frostjit types, the bare name for Python's (``int``)."""
    t = type(x)
    mod = t.__module__
    return t.__qualname__ if mod == "builtins" else f"{mod}.{t.__qualname__}"


def root_names(n: int, labels, root: str) -> list[str]:
    """The name of each top-level entry: its label, else ``root[i]``."""
    if labels:
        return list(labels)
    return [f"{root}[{i}]" for i in range(n)]


def check_labels(who: str, n: int, labels, what: str = "state") -> tuple:
    """``labels`` as a tuple; raise when there is one but not one per entry (Dr.Jit)."""
    labels = tuple(labels) if labels is not None else ()
    if labels and len(labels) != n:
        raise contract_error(StateValueError, who, f"the variable {what} and labels have an inconsistent size "
                                                   f"({n} vs {len(labels)})")
    return labels


def same_value(a, b) -> bool:
    """Whether two Python values are the same for the purposes of ``strict`` (NaN equals NaN)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:       # objects whose == is elementwise or raises: only identity counts
        return False


def _sizes_compatible(a: int, b: int) -> bool:
    return a == b or a == 1 or b == 1


def check(who: str, old, new, name: str, strict: bool, sizes: bool = True) -> None:
    """Raise if ``new`` is not a valid successor of ``old`` (see module docstring).

    Parameters
    ----------
    who : str
        ``"while_loop"``, ``"if_stmt"`` or ``"switch"`` (error messages).
    old, new : PyTree
        The state before and after (or the two results).
    name : str
        The name of ``old`` in messages (a label, ``state[0]``, ``rv``).
    strict : bool
        Whether a Python value (a leaf that is not a JIT array) must keep its value.
    sizes : bool
        Whether array sizes must be compatible (``False`` for the results of ``switch`` targets,
        which ran on different numbers of lanes).
    """
    to, tn = type(old), type(new)
    if to is not tn:
        raise contract_error(StateTypeError, who, _as_switch(who, f"inconsistent types for field '{name}' "
                                                                  f"('{type_name(new)}' and '{type_name(old)}')",
                                                             f"the type of state variable '{name}' changed from "
                                                             f"'{type_name(old)}' to '{type_name(new)}', which is "
                                                             "not permitted"))
    nt = node_type(to)
    kind = nt.kind
    if kind is Kind.ARRAY:
        if not sizes:
            return
        so, sn = old._node.size, new._node.size
        if is_empty(new._node) or is_empty(old._node):
            raise uninitialized(who, name, new if sn == 0 else old)
        if not _sizes_compatible(so, sn):
            raise contract_error(StateValueError, who, f"the size of state variable '{name}' of type "
                                                       f"'{type_name(old)}' changed from {so} to {sn}. These sizes "
                                                       "aren't compatible, and such a change is therefore not permitted")
        return
    if kind is Kind.VALUE:
        if strict and not same_value(old, new):
            raise contract_error(StateValueError, who, f"the non-array state variable '{name}' of type "
                                                       f"'{type_name(old)}' changed from '{old!r}' to '{new!r}'. You "
                                                       "can annotate the loop/conditional with strict=False to "
                                                       "disable this check")
        return
    ko, vo = nt.children(old)
    kn, vn = nt.children(new)
    if kind is Kind.SEQUENCE or kind is Kind.VECTOR:
        if len(vo) != len(vn):
            raise contract_error(StateTypeError, who, _as_switch(who, f"inconsistent sizes for field '{name}' "
                                                                      f"({len(vn)} and {len(vo)})",
                                                                 f"the size of state variable '{name}' of type "
                                                                 f"'{type_name(old)}' changed from {len(vo)} to "
                                                                 f"{len(vn)}"))
        keys = range(len(vo))
        pairs = zip(vo, vn)
    else:
        if set(ko) != set(kn):
            raise contract_error(StateTypeError, who, _as_switch(who, f"inconsistent dictionary keys for field "
                                                                      f"'{name}' ({sorted(map(str, kn))} and "
                                                                      f"{sorted(map(str, ko))})",
                                                                 f"the keys of state variable '{name}' of type "
                                                                 f"'{type_name(old)}' changed from {list(ko)} to "
                                                                 f"{list(kn)}"))
        nv = dict(zip(kn, vn))
        keys = ko
        pairs = ((v, nv[k]) for k, v in zip(ko, vo))
    for k, (a, b) in zip(keys, pairs):
        check(who, a, b, name + nt.format_key(k), strict, sizes)


def is_empty(node) -> bool:
    """``node.size == 0``; inside a frozen function's recording a guarded fact (its replays at
    width 0 then trace again, and the plain call's error is raised)."""
    r = trace_state.recorder
    return node.size == 0 if r is None else r.on_empty(node)


def uninitialized(who: str, name: str, a) -> Exception:
    """Dr.Jit's error for an empty array (``UInt32()``) in a loop's state or a conditional's
    results."""
    if who == "switch":     # (Dr.Jit's wording for calls)
        return contract_error(StateValueError, who, f"field '{name}' is uninitialized (an empty "
                                                    f"'{type_name(a)}')")
    return contract_error(StateValueError, who, f"state variable '{name}' of type '{type_name(a)}' is uninitialized")


def _as_switch(who: str, drjit: str, message: str) -> str:
    """``message``, led by Dr.Jit's wording for the results of ``switch`` targets (which says
    "inconsistent ... for field 'result'" where loops and conditionals say "state variable")."""
    return f"{drjit}: {message}" if who == "switch" else message


def leaf_names(tree: tuple, labels, root: str) -> list[str]:
    """The name of each JIT array of ``tree`` (a tuple), in :func:`~frostjit.tree.flatten` order:
    the entry's label (or ``root[i]``) and the path inside it, as :func:`check` names them."""
    names: list = []

    def rec(o, name: str) -> None:
        nt = node_type(type(o))
        if nt.kind is Kind.ARRAY:
            names.append(name)
            return
        if nt.kind is Kind.VALUE:
            return
        keys, values = nt.children(o)
        for k, v in zip(range(len(values)) if keys is None else keys, values):
            rec(v, name + nt.format_key(k))
    for name, x in zip(root_names(len(tree), labels, root), tree):
        rec(x, name)
    return names


def check_initialized(who: str, state: tuple, leaves: list, labels, root: str = "state") -> None:
    """Raise Dr.Jit's error for the first empty array among ``leaves`` (``state``'s arrays)."""
    if not any([is_empty(a._node) for a in leaves]):     # (each one guarded while recording)
        return
    for name, a in zip(leaf_names(state, labels, root), leaves):
        if a._node.size == 0:
            raise uninitialized(who, name, a)


def size_error(who: str, width: int, state: tuple, leaves: list, labels, root: str = "state", skip=()):
    """Dr.Jit's error for the first of ``leaves`` (``state``'s arrays; positions in ``skip``
    excepted) whose size is incompatible with ``width`` (``None`` if none is)."""
    for j, (name, a) in enumerate(zip(leaf_names(state, labels, root), leaves)):
        n = a._node.size
        if j in skip:
            continue
        if not _sizes_compatible(n, width):
            return contract_error(StateValueError, who, f"this operation processes arrays of size {width}, while "
                                                        f"state variable '{name}' has an incompatible size {n}")
    return None


def check_tuple(who: str, old: tuple, new: tuple, labels, root: str, strict: bool) -> None:
    """:func:`check` for each entry of two tuples, named by ``labels`` or ``root[i]``."""
    for name, a, b in zip(root_names(len(old), labels, root), old, new):
        check(who, a, b, name, strict)


def merge(mask, a, b, values_from_a: bool, whole=None):
    """``a`` where ``mask`` else ``b``, array by array (the structures were checked).  A Python value
    is taken from ``a`` or ``b`` (they are equal unless ``strict=False``; Dr.Jit keeps a loop body's
    new value and a conditional's ``false_fn`` value).  ``whole(x)`` true: the array ``x`` of
    ``a`` is taken as it is (a loop body's scatter target)."""
    if whole is None and type(a) in (tuple, list) and len(a) and all(isinstance(x, ArrayBase) for x in a):
        out = [_select(mask, x, y) for x, y in zip(a, b)]
        return tuple(out) if type(a) is tuple else out

    def leaf(x, y):
        if isinstance(x, ArrayBase):
            if whole is not None and whole(x):
                return x
            return _select(mask, x, y)
        return x if values_from_a else y
    return map2(a, b, leaf, who="merge", names=("a", "b"))


def _select(mask, x, y):
    """``select(mask, x, y)``, or ``y`` itself when both are the same variable: a state entry the body
    (or both branches) left unchanged keeps its own width, as in Dr.Jit (a size-1 ``Float(5)`` in a
    3-lane loop stays size 1), and a loop returns the caller's own array for it.  Two handles on one
    AD variable are the same variable even when one was evaluated meanwhile (a gather from it
    materializes it): a select there would make a new AD variable whose gradient nothing reads
    (``while ...: q += gather(x, i)`` then ``grad(x)`` of the returned ``x`` would be zero)."""
    if x._node is y._node or (x._ad is not None and x._ad is y._ad):
        return y
    m = mask._node.size
    for n in (x._node.size, y._node.size):
        if not _sizes_compatible(m, n):
            # Dr.Jit's RuntimeError (a plain select would raise a ValueError)
            raise StateValueError(f"the condition and the results have incompatible sizes ({m}, {x._node.size}, "
                                  f"{y._node.size}); only size-1 arrays broadcast")
    return select(mask, x, y)


def fresh(tree):
    """New handles on the same variables (containers rebuilt): a function that updates an argument in
    place (``x += 1``, ``v.x = ...``) cannot change the caller's state or the other branch's input."""
    if type(tree) is tuple and all(isinstance(x, ArrayBase) for x in tree):
        return tuple(type(x)(x) for x in tree)
    return transform(tree, lambda a: type(a)(a), who="fresh", root="state")


def branch_call(fn, args: tuple, after=None):
    """``fn(*fresh(args))`` for a branch of a conditional; returns ``(result, its arguments)``.

    ``after``: the arguments of the branch called before.  An array that branch scattered into
    (Dr.Jit: the same memory for both branches) is passed as that branch's own handle, so this
    branch's scatters add to it (see :func:`share_scattered`)."""
    given = fresh(args)
    if after is not None and trace_state.dirty:
        mine, treedef = flatten(given)
        for j, (a, b) in enumerate(zip(flatten(after)[0], flatten(args)[0])):
            if a._node is not b._node and a._node in trace_state.dirty:
                mine[j] = a
        given = unflatten(treedef, mine)
    return fn(*given), given


def share_scattered(args: tuple, a, b):
    """The results of two branches, where one branch returns an argument it scattered into and the
    other returns that argument as it came: both return the scattered array (Dr.Jit: scatters
    write the argument's memory, which no lane-wise ``select`` may split)."""
    if not trace_state.dirty:
        return a, b
    la, da = flatten(a)
    lb, db = flatten(b)
    if len(la) != len(lb):
        return a, b
    dirty = trace_state.dirty
    given = {id(x._node) for x in flatten(args)[0]}
    changed = False
    for j, (x, y) in enumerate(zip(la, lb)):
        if x._node is y._node:
            continue
        if x._node in dirty and y._node not in dirty and id(y._node) in given:
            lb[j] = x
            changed = True
        elif y._node in dirty and x._node not in dirty and id(x._node) in given:
            la[j] = y
            changed = True
    return (unflatten(da, la), unflatten(db, lb)) if changed else (a, b)


def check_branch_results(who: str, a, b, rv_labels, strict: bool) -> None:
    """Check the results of two branches against each other (``if_stmt``), naming the entries
    of tuple results by ``rv_labels`` (else ``rv``, ``rv[1]``, ...)."""
    if rv_labels and isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) != len(b):
            raise contract_error(StateTypeError, who, f"the size of state variable 'rv' of type 'tuple' changed "
                                                      f"from {len(a)} to {len(b)}")
        for name, x, y in zip(root_names(len(a), tuple(rv_labels), "rv"), a, b):
            check(who, x, y, name, strict)
    else:
        check(who, a, b, "rv", strict)


def check_body_result(who: str, new, n: int) -> None:
    """Raise Dr.Jit's error unless a loop body returned a tuple of ``n`` entries."""
    if not isinstance(new, tuple):
        raise contract_error(StateTypeError, who, f"the 'body' function must return a tuple, got "
                                                  f"{type(new).__name__}")
    if len(new) != n:
        raise contract_error(StateTypeError, who, f"the 'body' function returned a tuple with an inconsistent "
                                                  f"size ({len(new)} entries, the state has {n})")
