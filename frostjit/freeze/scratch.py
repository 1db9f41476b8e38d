"""Scratch buffers of a replay, planned by liveness.

Kernel outputs that never leave the replay (intermediates of a chain of kernels) need not be
new buffers at every replay: they share a few *registers*, buffers the replay keeps and grows
when a wider call needs more.  A register whose slot is read for the last time serves a later
kernel output of the same dtype, so a replay of a chain of 100 kernels allocates only its
outputs.  The plan is backend-neutral; a backend's replay emitter allocates the registers.

The same liveness finds *dead* operations: a kernel or reduction whose results nothing reads
(the loss value a backward derivative computes again only to differentiate it, ``fj.eval`` of a
value the function then drops) is not replayed.
"""
from __future__ import annotations

from .records import Argsort, BlockReduce, BufferEntry, Copy, Launch, PrefixSum, Reduce
from ..backend.kernel import OUT, SCATTER_DST


def plan_scratch(ops: list, node_table: list, kept=()) -> dict:
    """``{slot: register}`` for the kernel outputs that may live in scratch buffers.

    Excluded: outputs that leave the replay (``BufferEntry`` of the node table), slots a
    ``Copy`` reads (a copy reads its whole buffer, which must have the exact size) and the
    ``kept`` slots (handed to the replay's backward derivative, :mod:`.kept`).
    """
    banned = {e.slot for e in node_table if type(e) is BufferEntry} | set(kept)
    last_use: dict = {}
    for i, op in enumerate(ops):
        for slot in op.reads():
            last_use[slot] = i
        if type(op) is Copy:
            banned.add(op.src)
    dtype_of: dict = {}
    regs: dict = {}
    free: dict = {}         # dtype -> registers free for reuse
    n = 0
    for i, op in enumerate(ops):
        if type(op) is Launch:
            for p in op.params:
                if p.kind == OUT and p.slot not in banned:
                    dt = dtype_of[p.slot] = p.vt.np_dtype
                    pool = free.setdefault(dt, [])
                    if pool:
                        regs[p.slot] = pool.pop()
                    else:
                        regs[p.slot] = n
                        n += 1
                    last_use.setdefault(p.slot, i)
            # (a slot bound to two parameters, an input and a gather source, is freed once)
            for slot in dict.fromkeys(p.slot for p in op.params):
                if slot in regs and last_use.get(slot) == i:
                    free.setdefault(dtype_of[slot], []).append(regs[slot])
        else:
            for slot in dict.fromkeys(op.reads()):
                if slot in regs and last_use.get(slot) == i:
                    free.setdefault(dtype_of[slot], []).append(regs[slot])
    return regs


_REDUCTIONS = (Reduce, PrefixSum, Argsort, BlockReduce)


def dead_operations(ops: list, node_table: list, kept=(), skip=frozenset()) -> set:
    """Indices of the operations whose results no later operation, output, write-back or
    ``kept`` slot reads (``skip``: operations left out whatever they do, :mod:`.kept`).

    Only kernel launches without a scatter (their one effect is their outputs) and reductions
    count; every other operation (copies, compressions, bounds checks, uploads) is kept.
    """
    live = {e.slot for e in node_table if type(e) is BufferEntry} | set(kept)
    dead = set()
    for i in range(len(ops) - 1, -1, -1):
        op = ops[i]
        t = type(op)
        if i in skip:
            dead.add(i)
            continue
        if t is Launch:
            outs = [p.slot for p in op.params if p.kind == OUT]
            if outs and not any(p.kind == SCATTER_DST for p in op.params) and live.isdisjoint(outs):
                dead.add(i)
                continue
        elif t in _REDUCTIONS and op.out not in live:
            dead.add(i)
            continue
        live.update(op.reads())
    return dead
