"""Memory-level operations that are not compiled kernels: reductions, prefix sums,
``compress``, copies.

Each evaluates its input, asks the backend to run it, wraps the result in a new
data node, and reports itself to the kernel history and to the freeze
recorder (which replays it on new inputs).
"""
from __future__ import annotations

import time

import numpy as np

from ..backend import current_backend
from ..backend.base import BlockReduction
from ..backend.kernel import OUT, PARTIAL, Instr
from ..trace import ops
from ..trace.dtypes import UInt32
from ..trace.node import Node
from ..trace.state import KERNEL_HISTORY, state
from .evaluate import evaluate, record_operation
from .kernel import build_kernel
from .loops import StateUsedAsMemory


def materialize(node: Node) -> Node:
    """Evaluate ``node``; a literal becomes a filled buffer. Returns a data node."""
    if node.op == "loop_phi":
        # a gather from or a scatter to a symbolic loop's state variable: the loop binds it to the
        # caller's array and traces its body again (control/symbolic.py)
        raise StateUsedAsMemory(node)
    # A literal depends on nothing: filling it must not flush pending scatters
    # (the backward pass of several gathers queues one scatter_add per source).
    if (node.op != "data" and node.op != "literal") or node in state.dirty:
        evaluate((node,))
    if node.op == "literal":
        buf = current_backend().full(node.vt, node.value, node.size)
        new = ops.data(node.vt, buf, node.size)
        rec = state.recorder
        if rec is not None:
            new.sym = node.sym      # a frozen function's symbolic size of the literal
            rec.on_memop("fill", node.value, [], [new])
        return new
    return node


def _finish(kind: str, param, inputs, output: Node, count=None, history=None) -> Node:
    """Report the operation to the freeze recorder (``param``) and the kernel history
    (``history``, default ``param``)."""
    rec = state.recorder
    if rec is not None:
        rec.on_memop(kind, param, inputs, [output], count=count)
    record_operation({"type": kind, "size": inputs[0].size if inputs else output.size,
                      "operation": param if history is None else history})
    return output


def reduce(op: str, node: Node) -> Node:
    """Reduce all elements of ``node`` with ``op``; a size-1 data node.

    A large pending ``node`` is reduced in the kernel that computes it (see :func:`_fused`):
    its values are never stored."""
    if node.op != "data" and node.op != "literal":
        out = _fused(op, node)
        if out is not None:
            return out
    src = materialize(node)
    buf = current_backend().reduce(op, src.vt, src.value, src.size)
    return _finish("reduce", op, [src], ops.data(src.vt, buf, 1))


def _fused(op: str, node: Node) -> Node | None:
    """``node`` (pending) computed and reduced with ``op`` by one kernel (``reduce``, see
    :mod:`frostjit.backend.kernel`), or ``None`` where that does not apply: a backend without
    fused reductions, fewer lanes than its ``fused_reductions_from`` (small reductions keep the
    evaluated path, so their bits stay NumPy's), a type or operation it cannot fuse, a kernel
    that must store other results too (a symbolic loop's), or while a frozen function records
    (it records the evaluation and the reduction; their replay reduces the evaluated values
    with the same kernel order, ``Backend.reduce``, so the bits agree)."""
    backend = current_backend()
    start = backend.fused_reductions_from
    if start is None or node.size < start or state.recorder is not None or not backend.fuses(op, node.vt):
        return None
    with state.lock:        # (as evaluate: one thread schedules and launches at a time)
        return _launch_fused(backend, op, node)


def _launch_fused(backend, op: str, node: Node) -> Node | None:
    """:func:`_fused` once it applies, holding the evaluation lock."""
    value = _launch_in_producer(backend, node, (op,), op,
                                lambda kernel, inputs: backend.launch_reduction(kernel, node.size, inputs, op, node.vt))
    if value is None:
        return None
    buf = backend.from_numpy(np.array([value], dtype=node.vt.np_dtype))
    return ops.data(node.vt, buf, 1)


def _launch_in_producer(backend, node: Node, reduce_args: tuple, op: str, launch):
    """Run ``node``'s kernel with its store replaced by a ``reduce`` instruction
    (``(param, *reduce_args)``) and return what ``launch(kernel, inputs)`` returns; ``None``
    where the kernel would have to store other results too.  Holds the evaluation lock."""
    if state.side_effects:
        evaluate(())        # queued scatters first, in program order (as materialize does)
    if node.op == "data":   # (evaluated meanwhile by another thread)
        return None
    spec = build_kernel([node], ())
    if spec.outputs != [node] or spec.params[-1] != (OUT, node.vt):
        return None
    p = len(spec.params) - 1
    value = spec.instrs[-1].args[0]
    ins = Instr("reduce", node.vt, (value,), (p, *reduce_args))
    spec.params[-1] = (PARTIAL, node.vt)
    spec.instrs[-1] = ins
    spec.key_items[-1] = ins
    spec.outputs = []
    kernel, _status = backend.compile(spec)
    inputs = [n.value for n in spec.bindings[:-1]]
    if node.size >= backend.wake_from:
        backend.wake_threads()
    history = state.flags & KERNEL_HISTORY
    t0 = time.perf_counter()
    result = launch(kernel, inputs)
    if history:
        record_operation({"type": "jit", "backend": backend.name, "size": node.size, "hash": kernel.hash,
                          "ir": kernel.ir, "cache_hit": _status == "memory", "cache_disk": _status == "disk",
                          "operation_count": len(spec.instrs), "operation": op,
                          "execution_time": (time.perf_counter() - t0) * 1e3})
    return result


def count(node: Node) -> Node:
    """The number of true entries of the Bool node ``node``: a size-1 ``UInt32`` data node.

    The mask is evaluated as it is (one byte per lane) and counted by the backend; counting it
    as ``UInt32`` lanes first would write and read back four bytes per lane.  A large pending
    mask is not even stored: its kernel sums it as ``UInt32`` lanes (:func:`_fused`)."""
    if node.op != "data" and node.op != "literal":
        out = _fused("add", ops.cast(node, UInt32))
        if out is not None:
            return out
    src = materialize(node)
    buf = current_backend().reduce("count", src.vt, src.value, src.size)
    return _finish("reduce", "count", [src], ops.data(UInt32, buf, 1))


def prefix_sum(node: Node, exclusive: bool) -> Node:
    """Exclusive or inclusive prefix sum of ``node``."""
    src = materialize(node)
    buf = current_backend().prefix_sum(src.vt, src.value, src.size, exclusive)
    out = ops.data(src.vt, buf, src.size)
    out.sym = src.sym
    return _finish("prefix_sum", exclusive, [src], out)


def argsort(node: Node) -> Node:
    """The stable ascending permutation (``UInt32``) of the unsigned integer keys ``node``
    (``Backend.argsort``): one host operation instead of one radix pass per key bit."""
    src = materialize(node)
    buf = current_backend().argsort(src.vt, src.value, src.size)
    out = ops.data(UInt32, buf, src.size)
    out.sym = src.sym
    return _finish("argsort", None, [src], out)


def block_reduce(block: BlockReduction, node: Node) -> Node:
    """The block reduction or block prefix reduction ``block`` of ``node`` (evaluated first)."""
    src = materialize(node)
    buf = current_backend().block_reduce(block, src.vt, src.value, src.size)
    out = ops.data(src.vt, buf, block.out_size(src.size))
    return _finish("block_reduce", block, [src], out, history=block.op)


def axis_reduce(red, node: Node) -> Node:
    """The axis reduction ``red`` (a :class:`~frostjit.backend.base.AxisReduction`, chosen by
    ``Backend.axis_reduction``) of ``node``: ``node.size // red.size`` elements.

    A pending ``node`` is reduced in the kernel that computes it where the backend fuses (its
    values are never stored); otherwise, and while a frozen function records, it is evaluated
    and reduced as a block reduction (the same kernel order: the same bits)."""
    if node.op != "data" and node.op != "literal":
        backend = current_backend()
        if backend.fused_reductions_from is not None and state.recorder is None and node.size:
            with state.lock:
                out = _launch_fused_axis(backend, red, node)
            if out is not None:
                return out
    return block_reduce(red, node)


def _launch_fused_axis(backend, red, node: Node) -> Node | None:
    """:func:`axis_reduce`'s fused kernel, holding the evaluation lock; ``None`` where the
    kernel would have to store other results too."""
    buf = _launch_in_producer(backend, node, (red.op, red.segment, red.inner), red.op,
                              lambda kernel, inputs: backend.launch_axis_reduction(kernel, node.size, inputs, red,
                                                                                   node.vt))
    if buf is None:
        return None
    return ops.data(node.vt, buf, red.out_size(node.size))


def compress(node: Node) -> Node:
    """Indices of the true entries of a Bool node (size depends on the data)."""
    src = materialize(node)
    buf, count = current_backend().compress(src.value, src.size)
    return _finish("compress", None, [src], ops.data(UInt32, buf, count), count=count)


def copy(node: Node) -> Node:
    """A new data node with a copy of ``node``'s contents (copy-on-write for scatters)."""
    src = materialize(node)
    buf = current_backend().copy(src.vt, src.value, src.size)
    out = ops.data(src.vt, buf, src.size)
    out.sym = src.sym
    return _finish("copy", None, [src], out)
