"""Run a kernel spec with NumPy: one instruction at a time over all lanes of a launch.

Every value is a NumPy array of the launch's lanes, or a 0-d array when it is the same on
every lane (a literal, a size-1 input), which NumPy broadcasts.  Lane-wise operations come
from :func:`.lowering.numpy_impl`; loads, stores, the lane counter, gathers and scatters are
here.

Memory semantics, as the LLVM backend's:

* a gather reads 0 where its lane is inactive or its index out of bounds; a 32-bit index is
  in bounds below ``min(size, 2**31 - 1)`` (the LLVM backend addresses through a signed 32-bit
  offset), a negative ``Int32`` index never is; a gather of element pairs (a ``UInt64``
  result from a 32-bit source) needs its index's successor in bounds too;
* a scatter skips those lanes; a plain scatter whose active lanes hit one element leaves the
  value of the *last* such lane (as one thread of the LLVM backend does; with several threads
  the LLVM backend leaves any of them, as Dr.Jit);
* scatter reductions combine in lane order (``numpy.ufunc.at``); float ``min``/``max`` ignore
  NaN (``fmin``/``fmax``, as LLVM's ``minnum``/``maxnum``);
* a read-modify-write (``scatter_rmw``) acts lane after lane, in lane order, as one thread of
  the LLVM backend does (its threads interleave: the values each lane sees may differ there,
  the final contents of ``inc`` targets do not);
* scatters run in the order of their instructions, each over all lanes (the LLVM backend runs
  a kernel's instructions per group of lanes: two scatters of one kernel that hit the same
  element may combine in another order there; which one wins is unspecified in both).
"""
from __future__ import annotations

import numpy as np

from ..kernel import IN_SCALAR, GATHER_SRC, SCATTER_DST
from .lowering import numpy_impl
from . import calls, loops
from .memory import data_of

_SCATTER_REDUCE = {"add": np.add, "mul": np.multiply, "and": np.bitwise_and, "or": np.bitwise_or}


def run_kernel(spec, size: int, buffers: list, sizes: list) -> None:
    """Run ``spec`` over ``size`` lanes: ``buffers[p]`` is bound to parameter ``p``, and
    ``sizes[p]`` is the element count of a gather source or scatter target."""
    vals: list = [None] * len(spec.instrs)
    with np.errstate(all="ignore"):
        run_range(spec, 0, len(spec.instrs), vals, size, buffers, sizes)


def run_range(spec, lo: int, hi: int, vals: list, size: int, buffers: list, sizes: list) -> None:
    """Run instructions ``lo .. hi - 1`` of ``spec``; ``vals[k]`` receives instruction k's value.

    A loop region (``loop_start`` .. ``loop_end``) runs as a whole, by :func:`.loops.run_loop`.
    """
    params = spec.params
    instrs = spec.instrs
    k = lo
    while k < hi:
        ins = instrs[k]
        op = ins.op
        if op == "load":
            p = ins.value
            data = data_of(buffers[p])
            vals[k] = data[0:1].reshape(()) if params[p][0] == IN_SCALAR else data[:size]
        elif op == "literal":
            vals[k] = np.asarray(ins.value, ins.vt.np_dtype)
        elif op == "counter":
            vals[k] = np.arange(size, dtype=np.uint64).astype(ins.vt.np_dtype)
        elif op == "store":
            data_of(buffers[ins.value])[:size] = vals[ins.args[0]]
        elif op == "gather":
            p = ins.value
            assert params[p][0] == GATHER_SRC
            vals[k] = _gather(ins.vt, data_of(buffers[p]), sizes[p], vals[ins.args[0]], vals[ins.args[1]], size)
        elif op == "scatter":
            p, reduce_op = ins.value
            assert params[p][0] == SCATTER_DST
            value, index, active = (vals[a] for a in ins.args)
            _scatter(data_of(buffers[p]), sizes[p], value, index, active, reduce_op, size)
        elif op == "scatter_rmw":
            p, kind = ins.value
            assert params[p][0] == SCATTER_DST
            *compare, value, index, active = (vals[a] for a in ins.args)
            vals[k] = _scatter_rmw(data_of(buffers[p]), sizes[p], kind, value, index, active,
                                   compare[0] if compare else None, size)
        elif op == "loop_start":
            k = loops.run_loop(spec, k, vals, size, lambda a, b: run_range(spec, a, b, vals, size, buffers, sizes))
            continue
        elif op == "loop_out" or op == "call_out":
            vals[k] = vals[ins.args[0]][ins.value]
        elif op == "call":
            vals[k] = calls.run_call(ins.value, [vals[a] for a in ins.args], size, run_range)
        else:
            vals[k] = numpy_impl(op)(ins.vt, *[vals[a] for a in ins.args])
        k += 1


def _in_bounds(index: np.ndarray, count: int) -> np.ndarray:
    """Lanes whose index addresses one of ``count`` elements (see the module docstring)."""
    index = np.asarray(index)
    if index.dtype.itemsize == 4:
        limit = min(count, 2**31 - 1)
        return (index >= 0) & (index.astype(np.int64) < limit)
    if index.dtype.kind == "i":
        return (index >= 0) & (index < count)
    return index < np.uint64(count)


def _active_lanes(index, active, count: int, size: int):
    """``(lanes, positions)``: the lanes (ascending) whose access happens, and their element
    positions as ``intp``."""
    mask = np.broadcast_to(_in_bounds(index, count) & np.asarray(active, bool), (size,))
    lanes = np.flatnonzero(mask)
    positions = np.broadcast_to(np.asarray(index), (size,))[lanes].astype(np.intp)
    return lanes, positions


def _gather(vt, source: np.ndarray, count: int, index, active, size: int) -> np.ndarray:
    out = np.zeros(size, vt.np_dtype)
    if vt.itemsize != source.dtype.itemsize:
        # a pair (functions/memory.gather_pair; 32-bit indices): elements i and i + 1, i in the
        # low bits, where i + 1 is in bounds (as the LLVM backend: i < min(count, 2**31 - 1) - 1)
        lanes, positions = _active_lanes(index, active, max(min(count, 2**31 - 1) - 1, 0), size)
        bits = source.view(np.uint32)
        out[lanes] = bits[positions].astype(np.uint64) | (bits[positions + 1].astype(np.uint64) << np.uint64(32))
        return out
    lanes, positions = _active_lanes(index, active, count, size)
    out[lanes] = source[positions]
    return out


def _scatter(target: np.ndarray, count: int, value, index, active, reduce_op, size: int) -> None:
    lanes, positions = _active_lanes(index, active, count, size)
    if lanes.size == 0:
        return
    values = np.broadcast_to(np.asarray(value), (size,))[lanes]
    if reduce_op is None:
        # The last lane writing an element wins: keep each position's last occurrence (NumPy
        # does not promise an order for repeated indices in an assignment).
        last = positions.size - 1 - np.unique(positions[::-1], return_index=True)[1]
        target[positions[last]] = values[last]
        return
    if reduce_op in _SCATTER_REDUCE:
        _SCATTER_REDUCE[reduce_op].at(target, positions, values)
    elif target.dtype.kind == "f":      # NaN-ignoring, as LLVM's minnum / maxnum
        (np.fmin if reduce_op == "min" else np.fmax).at(target, positions, values)
    else:
        (np.minimum if reduce_op == "min" else np.maximum).at(target, positions, values)


def _scatter_rmw(target: np.ndarray, count: int, kind: str, value, index, active, compare, size: int) -> np.ndarray:
    """``scatter_rmw`` (:mod:`frostjit.backend.kernel`): the lanes act on their elements in lane
    order; returns each lane's old value (0 where it did not act)."""
    out = np.zeros(size, target.dtype)
    lanes, positions = _active_lanes(index, active, count, size)
    if lanes.size == 0:
        return out
    values = np.broadcast_to(np.asarray(value, target.dtype), (size,))[lanes]
    order = np.argsort(positions, kind="stable")        # lanes grouped by element, in lane order
    pos = positions[order]
    vals = values[order]
    first = np.ones(pos.size, bool)
    first[1:] = pos[1:] != pos[:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(pos.size), 0))
    if kind == "inc":
        total = np.cumsum(vals, dtype=target.dtype)
        before = total - vals                           # (wraps as the integer type does)
        old = target[pos] + (before - before[start])
        np.add.at(target, pos, vals)
    elif kind == "exch":
        old = np.where(first, target[pos], np.roll(vals, 1))
        last = np.ones(pos.size, bool)
        last[:-1] = first[1:]
        target[pos[last]] = vals[last]
    else:
        cmp = np.broadcast_to(np.asarray(compare, target.dtype), (size,))[lanes][order]
        rank = np.arange(pos.size) - start
        old = np.zeros(pos.size, target.dtype)
        bits = np.dtype(f"u{target.dtype.itemsize}")
        for r in range(int(rank.max()) + 1):            # the r-th lane of every element: distinct elements
            now = rank == r
            cur = target[pos[now]]
            old[now] = cur
            hit = cur.view(bits) == cmp[now].view(bits)
            target[pos[now][hit]] = vals[now][hit]
    out[lanes[order]] = old
    return out
