"""Atomic read-modify-write scatters that return the old values: ``scatter_inc``, ``scatter_exch``,
``scatter_cas`` (Dr.Jit 1.5).

Dr.Jit runs them as atomic instructions, so where several lanes hit one element the result is one
of the valid interleavings, chosen by the hardware.  frostjit computes the interleaving in *lane
order* (lane ``i`` acts before lane ``j > i`` on the same element: what one thread running the
whole launch gives, and what Dr.Jit's single-threaded runs measure), deterministically, from
array operations:

* the lanes are grouped by target element with a stable sort of the index
  (:func:`frostjit.functions.sorting.sort_permutation`), which gives each lane its rank among
  the lanes before it on the same element;
* ``scatter_inc``: the old value is the element's value plus that rank; the target is then
  increased by each element's count (one ``scatter_add``).  A one-element target (the stream
  compaction counter) needs no sort: the rank is an exclusive prefix sum of the active lanes;
* ``scatter_exch``: a lane reads the value of the previous lane on its element (the element's
  value for the first), and the last lane's value is written (one scatter with distinct indices);
* ``scatter_cas``: lanes act in rounds, the ``r``-th lane of every element in round ``r``
  (a gather, a comparison of the bits and a scatter with distinct indices per round); the number
  of rounds, the largest number of lanes on one element, is read back once.

So the results are race-free whatever the thread count, on every backend; ``scatter_inc`` and
``scatter_exch`` also work inside frozen functions and under AD (their values are gathers and
arithmetic; ``scatter_cas`` under AD too).  Inactive lanes and out-of-bounds indices change
nothing and return 0 (and ``False``).

**Inside a symbolic loop** (the body of ``fj.while_loop(..., mode="symbolic")``, and the
symbolic ``if_stmt`` branches and ``switch`` targets in it) the lanes have no values outside
the kernel, so each call is one ``scatter_rmw`` instruction of the loop's kernel
(``backend/kernel.py``; LLVM ``atomicrmw add``/``xchg`` and ``cmpxchg`` per active lane,
``backend/llvm/codegen/atomics.py``), run every iteration as the body's scatters are: as in
Dr.Jit, with several threads the lanes on one element act in an order the hardware picks (the
final count of a ``scatter_inc`` counter does not depend on it, which slot each lane gets
does); on one thread, in launch order.  Such a call refuses grad-enabled operands with a
``GradArgumentError`` (there is no derivative rule for the in-kernel instruction; Dr.Jit 1.5
detaches the old values and the target silently).  Outside loops ``scatter_exch`` and
``scatter_cas`` are differentiated as the gathers and scatters they are built from: old values
and the target's new contents carry the derivatives of the values they came from (Dr.Jit 1.5
detaches them; docs/ad.md).
"""
from __future__ import annotations

import numpy as np

from ..array import registry
from ..array.flat import ArrayBase
from ..trace import loops, masks, ops
from ..trace.dtypes import Bool, Float32, UInt32, UInt64
from ..trace.state import state as trace_state
from .creation import arange, zeros
from .evaluation import width
from .math import reinterpret_array, select
from .memory import ReduceOp, _prepare_target, gather, scatter, scatter_add
from .reduce import _reduce_array, prefix_sum
from .scan import prefix_reduce
from .sorting import sort_permutation


def _flat(x, vt):
    return registry.flat_type(x._backend, vt)


def _operands(who: str, target, index, active):
    """``(index as UInt32, active & in bounds)`` broadcast to the launch width."""
    if not isinstance(target, ArrayBase):
        raise TypeError(f"{who}(): 'target' must be a 1-D frostjit array, got {type(target).__name__}")
    u32 = _flat(target, UInt32)
    if not isinstance(index, ArrayBase):
        index = u32(index)
    if not index._vt.is_integral or index._vt is Bool:
        raise TypeError(f"{who}(): 'index' must be an integer array, got {type(index).__name__}")
    b = _flat(target, Bool)
    if isinstance(active, (list, tuple)):       # a sequence of bools, one per lane (Dr.Jit)
        active = b(active)
    if isinstance(active, ArrayBase):
        if active._vt is not Bool:
            raise TypeError(f"{who}(): 'active' must be a Bool array or bool, got {type(active).__name__}")
        act = active
    elif isinstance(active, (bool, np.bool_)):
        act = b(bool(active))
    else:
        raise TypeError(f"{who}(): 'active' must be a Bool array or bool, got {type(active).__name__}")
    n = width(target)
    ok = act & (index >= 0) & (index < n) if index._vt.is_signed else act & (index < n)
    if masks.top() is not None:
        # inside a loop body or a branch: one lane per lane of the scope (a size-1 index runs once
        # per active lane, as a scatter does)
        ok = b._from_node(masks.apply(ok._node, max(ok._node.size, index._node.size)))
    return u32(index), ok


def _in_kernel(idx, ok, *values) -> bool:
    """Whether the operands are variables of a symbolic loop's body (or of an ``@fj.func``
    body): they have no values on the host, so the operation runs in the kernel
    (:func:`_read_modify_write`) instead of as array operations."""
    return loops.is_symbolic([idx._node, ok._node] + [v._node for v in values if isinstance(v, ArrayBase)])


def _read_modify_write(kind: str, target, value, idx, ok, compare=None):
    """The ``scatter_rmw`` node of ``kind`` (``backend/kernel.py``), queued as a side effect like
    a scatter, as an array of the target's type: the old values.  The lanes of one element act
    one after the other inside the kernel (in launch order on one thread; in an order the
    hardware picks with several, as in Dr.Jit)."""
    if ok._node.op == "literal" and ok._node.value is False:
        return type(target)(0)          # no lane acts: nothing to run, every old value is 0
    tnode = _prepare_target(target)
    args = (value._node, idx._node, ok._node)
    if compare is not None:
        args = (compare._node,) + args
    node = ops.make("scatter_rmw", target._vt, args, extra=(tnode, kind))
    with trace_state.lock:      # atomic with respect to an evaluation taking the queue
        trace_state.side_effects.append(node)
        trace_state.dirty.add(tnode)
    return type(target)._from_node(node)


def _refuse_gradients(who: str, **operands) -> None:
    """A clear error, not silently lost derivatives, for grad-enabled operands of an in-kernel
    atomic (the AD hook decides: it knows which arrays are grad-enabled in the current scope)."""
    if trace_state.ad_hook is not None and any(getattr(x, "_ad", None) is not None for x in operands.values()):
        trace_state.ad_hook.on_read_modify_write(who, operands)


def _groups(index, ok, target):
    """``(perm, sorted index, sorted ok, rank)``: lanes sorted by index (inactive lanes after every
    active one), and each lane's rank, in lane order, among the active lanes on its element."""
    n = width(index)
    u32 = type(index)
    n_target = width(target)
    if type(n_target) is int and n_target < 0xFFFFFFFF:
        # An active lane's index is below the target's size (``ok`` holds the bounds test), so an
        # inactive lane keyed with the size itself sorts after them, and the radix sort needs only
        # the size's bits (9 passes for a 256-element histogram, not 32).  An int width is a
        # constant even inside a frozen function (a symbolic one is not an int: all 32 bits).
        key = select(ok, index, u32(n_target))
        bits = max(1, n_target.bit_length())
    else:
        key = select(ok, index, u32(0xFFFFFFFF))
        bits = 32
    perm = sort_permutation([(key, bits)], u32)
    pos = arange(u32, n)
    s = gather(u32, key, perm)
    has_prev = pos >= 1
    prev = gather(u32, s, pos - 1, has_prev)
    starts = ~has_prev | (prev != s)
    start = prefix_reduce(ReduceOp.Max, select(starts, pos, u32(0)), exclusive=False)
    rank = zeros(u32, n)
    scatter(rank, pos - start, perm)
    return perm, s, gather(_flat(index, Bool), ok, perm), rank


def scatter_inc(target, index, active=True):
    """Atomically increment ``target[index]`` and return the value before (Dr.Jit's
    ``scatter_inc``): for stream compaction, ``slot = fj.scatter_inc(counter, UInt32(0), mask)``.

    Parameters
    ----------
    target : UInt32 array
    index : UInt32 array or int
    active : Bool array or bool

    Returns
    -------
    UInt32
        Per lane, the element's value before this lane's increment, lanes acting in lane order
        (module docstring); 0 for inactive lanes.

    Examples
    --------
    >>> t = UInt32(10, 20)
    >>> fj.scatter_inc(t, UInt32(0, 1, 0, 0, 1), Bool(True, True, False, True, True))
    [10, 20, 0, 11, 21]
    >>> t
    [12, 22]
    """
    if not (isinstance(target, ArrayBase) and target._vt is UInt32):
        raise TypeError(f"scatter_inc(): 'target' must be a UInt32 array, got {type(target).__name__}")
    idx, ok = _operands("scatter_inc", target, index, active)
    u32 = type(idx)
    if _in_kernel(idx, ok):
        return _read_modify_write("inc", target, u32(1), idx, ok)
    n_target = width(target)
    if type(n_target) is int and n_target == 1:
        rank = prefix_sum(u32(ok))                      # the counter: no sort needed
    else:
        _, _, _, rank = _groups(idx, ok, target)
    old = select(ok, gather(u32, target, idx, ok) + rank, u32(0))
    scatter_add(target, u32(1), idx, ok)
    return old


def scatter_exch(target, value, index, active=True):
    """Atomically write ``value`` to ``target[index]`` and return the values before (Dr.Jit's
    ``scatter_exch``), lanes acting in lane order (module docstring): a lane reads what the
    previous lane on its element wrote, the last lane's value stays.  0 for inactive lanes.

    Examples
    --------
    >>> t = Float(1, 2, 3)
    >>> fj.scatter_exch(t, Float(7, 8, 9), UInt32(0, 0, 1))
    [1, 7, 2]
    >>> t
    [8, 9, 3]
    """
    idx, ok = _operands("scatter_exch", target, index, active)
    cls = type(target)
    n = width(idx)
    if not isinstance(value, ArrayBase):
        value = cls(value)
    if type(value) is not cls:
        raise TypeError(f"scatter_exch(): the value type {type(value).__name__} does not match the target "
                        f"type {cls.__name__}")
    if _in_kernel(idx, ok, value):
        _refuse_gradients("scatter_exch", target=target, value=value)
        return _read_modify_write("exch", target, value, idx, ok)
    u32 = type(idx)
    perm, s, ok_sorted, _ = _groups(idx, ok, target)
    pos = arange(u32, n)
    one_value = width(value) == 1          # a size-1 value (or a literal) is every lane's value
    v_sorted = value if one_value else gather(cls, value, perm)
    has_prev = pos >= 1
    prev_same = has_prev & (gather(u32, s, pos - 1, has_prev) == s) & gather(type(ok), ok_sorted, pos - 1, has_prev)
    before = gather(cls, target, s, ok_sorted)
    previous = value if one_value else gather(cls, v_sorted, pos - 1, prev_same)
    old_sorted = select(prev_same, previous, before)
    has_next = pos + 1 < n
    next_same = has_next & (gather(u32, s, pos + 1, has_next) == s)
    old = zeros(cls, n)
    scatter(old, select(ok_sorted, old_sorted, cls(0)), perm)
    scatter(target, v_sorted, s, ok_sorted & ~next_same)
    return old


def scatter_cas(target, compare, value, index, active=True):
    """Atomic compare-and-swap (Dr.Jit's ``scatter_cas``): where ``target[index]`` equals
    ``compare`` (bit for bit), write ``value``.  Lanes act in lane order (module docstring).

    Returns
    -------
    tuple
        ``(old, success)``: the element's value each lane saw, and whether its swap happened;
        0 and ``False`` for inactive lanes.

    Examples
    --------
    >>> t = Int32(1, 2, 3)
    >>> fj.scatter_cas(t, Int32(1, 7, 1), Int32(7, 8, 9), UInt32(0, 0, 0))
    ([1, 7, 8], [True, True, False])
    >>> t
    [8, 2, 3]
    """
    idx, ok = _operands("scatter_cas", target, index, active)
    cls = type(target)
    compare = compare if isinstance(compare, ArrayBase) else cls(compare)
    value = value if isinstance(value, ArrayBase) else cls(value)
    for what, x in (("compare", compare), ("value", value)):
        if type(x) is not cls:
            raise TypeError(f"scatter_cas(): the {what} type {type(x).__name__} does not match the target "
                            f"type {cls.__name__}")
    b = _flat(idx, Bool)
    if _in_kernel(idx, ok, compare, value):
        _refuse_gradients("scatter_cas", target=target, compare=compare, value=value)
        old = _read_modify_write("cas", target, value, idx, ok, compare)
        return old, ok & _same_bits(old, compare)
    n = width(idx)
    _, _, _, rank = _groups(idx, ok, target)
    rounds = int(_reduce_array("max", select(ok, rank + 1, type(rank)(0)))[0]) if n else 0
    old = zeros(cls, n)
    success = zeros(b, n)
    for r in range(rounds):
        mine = ok & (rank == r)
        cur = gather(cls, target, idx, mine)
        hit = mine & _same_bits(cur, compare)
        old = select(mine, cur, old)
        success = success | hit
        scatter(target, value, idx, hit)
    return old, success


def _same_bits(a, b):
    """``a == b`` bit for bit (floats compared as their bits, as a hardware compare-and-swap;
    Float16 through its exact float32 value)."""
    vt = a._vt
    if not vt.is_float:
        return a == b
    if vt.compute is not None:
        f32 = registry.flat_type(a._backend, Float32)
        return _same_bits(f32(a), f32(b))
    ut = registry.flat_type(a._backend, UInt32 if vt.bits == 32 else UInt64)
    return reinterpret_array(ut, a) == reinterpret_array(ut, b)
