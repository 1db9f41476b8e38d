"""``fj.switch``: call one of several Python callables per lane (Dr.Jit's API).

A Python ``int`` index calls ``targets[index](*args, **kwargs)``.  A ``UInt32`` index in
**evaluated** mode groups the lanes by target: for each target that some active lane selects,
the lanes are compressed (``fj.compress``), the array arguments gathered at them, the target
called once on them, and its results scattered into zero-initialized outputs.  Lanes that are
masked out (a ``Bool`` array as the last positional argument or as ``active=``), or whose index
is out of range, call nothing and return zeros; with ``JitFlag.Debug`` an out-of-range index
of an active lane raises ``IndexError`` instead (Dr.Jit leaves it undefined without Debug).
**Symbolic** mode (``JitFlag.SymbolicCalls``, the default) traces every target once over all lanes,
with its lanes as the mask of its side effects, and selects the results per lane
(:func:`.symbolic.symbolic_switch`): one kernel, no evaluation.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..ad.api import isolate_grad
from ..array import registry
from ..array.flat import ArrayBase
from ..functions.creation import zeros
from ..functions.evaluation import eval as eval_, width
from ..functions.memory import gather, scatter
from ..functions.reduce import compress
from ..trace import masks
from ..trace.dtypes import Bool, UInt32
from ..trace.state import DEBUG, JitFlag, state
from ..tree import flatten, transform, unflatten
from . import host, symbolic
from .consistency import check, contract_error, is_empty, uninitialized
from .errors import wrapped, ControlFlowArgumentError, ControlFlowArgumentTypeError, StateValueError
from .modes import check_mode, is_mask, switch_lanes, vector_mode

WHO = "switch"


def switch(index, targets: Sequence[Callable], *args, mode: str | None = None, label: str | None = None,
           **kwargs):
    """Call ``targets[index[i]]`` for every lane ``i``, each target once on its lanes.

    Parameters
    ----------
    index : UInt32 array or int
        Which target each lane calls (a Python ``int``: one call, ``targets[index](...)``).
    targets : sequence of callable
        The functions; their results must have the same type and structure (and equal Python
        values).
    *args, **kwargs
        Passed to the targets: arrays (and the arrays in PyTrees) are reduced to each target's
        lanes, Python values passed unchanged.  A ``Bool`` array as the last positional
        argument or as the keyword ``active`` is the mask: its false lanes call nothing and
        return zeros, and the targets receive ``True`` in its place.
    mode : {None, "symbolic", "evaluated"}
        ``None``: as ``JitFlag.SymbolicCalls`` says (set by default: symbolic).
    label : str, optional
        A name, in the guards a frozen function records for the call.

    Returns
    -------
    object
        A Python index: the target's result.  An array index: the targets' results combined
        lane by lane (zeros where no target ran).

    Raises
    ------
    TypeError
        ``index`` is neither an ``int`` nor a ``UInt32`` array.
    IndexError
        A Python index out of range; an array index out of range on an active lane with
        ``JitFlag.Debug``.
    StateTypeError, StateValueError
        The targets' results differ in type, structure or Python values (Dr.Jit's "inconsistent
        types/sizes/dictionary keys for field 'result'" leads the message), or the array
        arguments have incompatible sizes.
    RuntimeError
        An exception raised by a target, as its ``__cause__`` (and also of its class).

    Examples
    --------
    >>> fj.switch(UInt32(0, 0, 1, 1), [lambda x: x, lambda x: x * 10], UInt32(1, 2, 3, 4), mode="evaluated")
    [1, 2, 30, 40]
    """
    targets = list(targets)
    if not targets:
        raise ControlFlowArgumentError("fj.switch(): 'targets' is empty")
    check_mode(WHO, mode, ("symbolic", "evaluated"))
    positional_mask = bool(args) and is_mask(args[-1])
    mask = args[-1] if positional_mask else kwargs.get("active")
    scalar = isinstance(index, (int, np.integer)) and not isinstance(index, bool)
    if not scalar and not (isinstance(index, ArrayBase) and index._vt is UInt32):
        raise ControlFlowArgumentTypeError(f"fj.switch(): 'index' must be a Python int or a UInt32 array, got {type(index).__name__}")
    if mode is None:
        mode = vector_mode(JitFlag.SymbolicCalls)
    if not scalar:
        _check_sizes(index, args, kwargs)
    try:
        if scalar:
            return _scalar(int(index), targets, mask, args, kwargs)
        if mode == "symbolic":
            return _symbolic(index, targets, args, kwargs, label)
        return _evaluated(index, targets, args, kwargs, positional_mask, mask, label)
    except Exception as err:
        new = wrapped("switch", err)      # Dr.Jit (every mode): a RuntimeError whose cause is the original
        if new is err:
            raise
        raise new from err


def _check_sizes(index, args, kwargs) -> None:
    """The index and the array arguments have one size (or size 1): Dr.Jit's error otherwise."""
    nodes = [index._node] + [a._node for a in flatten((args, kwargs))[0]]
    n = 1
    for node in nodes:
        s = node.size
        if s != n and s != 1:
            if n != 1 or is_empty(node):
                raise contract_error(StateValueError, WHO, f"some of the call arguments have incompatible sizes "
                                                           f"(encountered arrays of length {n} and {s})")
            n = s


def _scalar(index: int, targets, mask, args, kwargs):
    if isinstance(mask, ArrayBase) and mask._node.size != 1:
        raise ControlFlowArgumentTypeError("fj.switch(): the mask must be scalar (a bool or a size-1 Bool array) when 'index' is a "
                        "Python int")
    if not 0 <= index < len(targets):
        raise IndexError(f"fj.switch(): index {index} is out of range for {len(targets)} targets")
    if mask is False or (isinstance(mask, ArrayBase) and not mask.numpy()[0]):
        return None                 # Dr.Jit: a masked scalar call calls nothing
    return targets[index](*args, **kwargs)


def _symbolic(index, targets, args, kwargs, label):
    # one isolate_grad() scope, as an if_stmt (if_stmt.py): a backward pass inside a target stops
    # at earlier variables, with the gradient limited to that target's lanes (its mask scope)
    with isolate_grad():
        return symbolic.symbolic_switch(index, targets, args, kwargs, None, label)


def _evaluated(index, targets, args, kwargs, positional_mask: bool, mask, label):
    backend = index._backend
    bool_t = registry.flat_type(backend, Bool)
    n = width(index, args, kwargs)
    active = switch_lanes(index, len(targets), mask, n)
    if state.flags & DEBUG:
        _check_range(index, mask, len(targets), n)
    eval_(index, active, args, kwargs)
    name = f"fj.switch {label!r}" if label else "fj.switch"
    calls = []
    for k, fn in enumerate(targets):
        sel = compress(active & (index == k))
        if host.is_empty(sel, f"the lanes of target {k} of {name}"):
            continue
        calls.append((sel, _call(fn, sel, n, args, kwargs, positional_mask, bool_t)))
    if not calls:
        # No lane calls anything: one call gives the result's structure.  It runs on lane 0
        # (on no lanes, its arithmetic with numbers would raise: an empty operand does not
        # broadcast), its side effects masked off (Dr.Jit: they write nothing), and its results
        # are scattered at no index: the switch returns zeros.
        one = zeros(registry.flat_type(backend, UInt32), 1)
        out = _call(targets[0], one, n, args, kwargs, positional_mask, bool_t, bool_t(False)._node)
        calls.append((compress(bool_t(False)), out))
    return _combine(calls, n)


def _check_range(index, mask, count: int, n: int) -> None:
    """Debug mode: the first active lane whose index is out of range raises ``IndexError``.
    Active: ``mask`` and, inside a loop body or a branch, the enclosing scope's lanes (Dr.Jit
    applies the loop mask to the call: a lane that left the loop is not checked)."""
    if isinstance(mask, (bool, np.bool_)) and not mask:
        return
    act = np.ones(n, bool)
    if isinstance(mask, ArrayBase):
        act &= np.broadcast_to(mask.numpy(), (n,))
    top = masks.top()
    if top is not None and masks.compatible(top, n):
        act &= np.broadcast_to(registry.flat_type(index._backend, Bool)._from_node(top).numpy(), (n,))
    idx = np.broadcast_to(index.numpy(), (n,))
    bad = act & (idx >= count)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        # Dr.Jit's debug-mode message numbers callables from 1 (0 is its "no call")
        raise IndexError(f"fj.switch(): index {int(idx[k])} (at position {k}) is out of range for {count} targets "
                         f"(Dr.Jit: out-of-bounds callable ID {int(idx[k]) + 1} (must be < {count + 1}).)")


def _call(fn, sel, n: int, args, kwargs, positional_mask: bool, bool_t, lanes=None):
    """``fn`` on the lanes ``sel``: arrays gathered there, the mask replaced by ``True``;
    ``lanes``: the mask of its side effects (``None``: every lane of the call is active)."""
    ones = None

    def take(a):
        nonlocal ones
        if a._node.size == n:
            return gather(type(a), a, sel)
        if ones is None:        # a size-1 array broadcasts to the target's lanes
            ones = zeros(registry.flat_type(a._backend, UInt32), width(sel))
        return gather(type(a), a, ones)
    if positional_mask:
        args = args[:-1]
    with masks.scope(None):     # 'sel' already holds the enclosing scope's lanes (see _evaluated)
        sub_args = transform(args, take, who="switch", root="args")
        sub_kwargs = transform(kwargs, take, who="switch", root="kwargs")
    if positional_mask:
        sub_args = sub_args + (bool_t(True),)
    if "active" in sub_kwargs:
        sub_kwargs["active"] = bool_t(True)
    # every lane of the call is active (unless it has none: then fj.print shows nothing, Dr.Jit)
    with masks.scope(lanes, shown=lanes is not None):
        return fn(*sub_args, **sub_kwargs)


def _combine(calls, n: int):
    """One result: each target's arrays scattered into zeros at its lanes."""
    first = calls[0][1]
    for _, out in calls[1:]:       # each target ran on its own lanes: their sizes differ
        check(WHO, first, out, "result", True, sizes=False)
    leaves0, treedef = flatten(first)
    if not leaves0:
        return first
    per_call = [(sel, flatten(out)[0]) for sel, out in calls]
    for k, (sel, leaves) in enumerate(per_call):
        m = sel._node.size
        for leaf in leaves:
            if isinstance(leaf, ArrayBase) and leaf._node.size == 0 and m:
                raise uninitialized(WHO, "result", leaf)
            if isinstance(leaf, ArrayBase) and leaf._node.size not in (1, m):
                raise contract_error(StateValueError, WHO, f"a target returned an array of {leaf._node.size} "
                                                           f"lanes for a call on {m} lanes (a target's results "
                                                           "must have one lane per lane of its call, or one)")
    results = []
    with masks.scope(None):     # the lanes 'sel' are the active ones already: no enclosing mask
        for j, leaf in enumerate(leaves0):
            r = zeros(type(leaf), n)
            for sel, leaves in per_call:
                scatter(r, leaves[j], sel)
            results.append(r)
    return unflatten(treedef, results)
