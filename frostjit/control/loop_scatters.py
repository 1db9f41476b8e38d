"""Derivatives of the scatters of a differentiated symbolic loop's body (for :mod:`.loop_ad`).

The body runs inside the loop's kernel, so its scatters cannot join the AD graph as ordinary
scatters do (their index, mask and value are loop variables).  Instead, while the body is
traced for the loop (or re-run for its derivatives), :func:`logging_scatters` stands in for
the AD hook: a scatter whose value or target is grad-enabled is *logged*, not attached.

* Each AD-typed floating-point target becomes an implicit output of the loop's operation (a
  new vertex, :class:`Target`); its previous vertex, if any, an implicit input.
* **Forward mode**: the tangent loop repeats every logged scatter on a tangent buffer of its
  target (a ``scatter_add`` adds the value's tangent, a ``scatter`` writes it), created before
  the loop from the previous vertex's tangent; after the loop the buffer is the target's tangent.
* **Reverse mode**: the host loop that re-runs the body logs its scatters (and drops their
  writes: the primal loop made them); they are walked back in reverse program order: a
  value's gradient is the target's gradient gathered at its lanes, and a ``scatter``
  (overwrite) zeroes the entries it wrote before earlier writes see them; what is left
  flows to the previous vertex.
"""
from __future__ import annotations

import threading
import weakref

from ..ad import graph
from ..array.flat import ArrayBase
from ..functions.memory import gather, scatter, scatter_add
from ..trace.state import state as trace_state


class ScatterLog:
    """Stands in for the AD hook while a loop body is traced: logs the differentiable scatters
    (``(target, reduce_op, value, index, active)``) instead of attaching them to the AD graph;
    every other hook call goes to the hook it replaces."""

    def __init__(self, inner):
        self.inner = inner
        self.scatters: list = []
        self.thread = threading.get_ident()

    def on_scatter(self, who, reduce_op, target, value, index, active, before=None) -> None:
        if threading.get_ident() != self.thread:    # (the hook is process-wide) another thread's
            self.inner.on_scatter(who, reduce_op, target, value, index, active, before=before)
            return
        if not (type(target)._is_ad and target._vt.is_float):
            return
        if reduce_op not in (None, "add"):
            raise NotImplementedError(
                f"frostjit AD: scatter_reduce with ReduceOp.{reduce_op.capitalize()} is not differentiable "
                "inside a differentiated loop (only scatter, scatter_add and ReduceOp.Add are)")
        self.scatters.append((target, reduce_op, value, index, active))

    def __getattr__(self, name):
        return getattr(self.inner, name)


class logging_scatters:     # noqa: N801  (used as a function: ``with logging_scatters() as log``)
    """Context manager: the differentiable scatters made inside are logged (a :class:`ScatterLog`).

    (A class, not a generator: every symbolic loop enters one.)"""

    __slots__ = ("log",)

    def __enter__(self) -> ScatterLog:
        self.log = ScatterLog(trace_state.ad_hook)
        trace_state.ad_hook = self.log
        return self.log

    def __exit__(self, *exc) -> None:
        trace_state.ad_hook = self.log.inner


def inside_a_log() -> bool:
    """Whether a loop body is being traced for a differentiated loop right now."""
    return isinstance(trace_state.ad_hook, ScatterLog)


class Target:
    """A scatter target of a differentiated loop's body: ``vertex`` (weakly: the operation must
    not keep its outputs alive) is the target's vertex after the loop, ``before`` the one it had
    (or ``None``)."""

    __slots__ = ("cls", "size", "vertex", "before")

    def __init__(self, array: ArrayBase, before):
        self.cls, self.size = type(array), array._node.size
        v = graph.Vertex(type(array), self.size, (), array._node)
        array._ad = v
        self.vertex = weakref.ref(v)
        self.before = before

    def tangent_buffer(self):
        """A new array holding the previous vertex's tangent (zeros if none)."""
        g = self.before.grad if self.before is not None else None
        buf = graph.sized_literal(self.cls, 0, self.size)
        return buf + graph.as_grad(self.before, g) if g is not None else self.cls(buf)


def targets_of(log: ScatterLog) -> tuple[list, dict]:
    """The distinct targets of the logged scatters, as :class:`Target` (their arrays get new vertices),
    and ``{id(array): position}``."""
    targets, slot = [], {}
    for t, *_ in log.scatters:
        if id(t) not in slot:
            before = t._ad if t._ad is not None and graph.is_active(t._ad) else None
            slot[id(t)] = len(targets)
            targets.append(Target(t, before))
    return targets, slot


def emit_tangents(log: ScatterLog, slot: dict, buffers: list, tangent) -> None:
    """Repeat the logged scatters on the tangent buffers; ``tangent(value)`` is the tangent of a
    scattered value (``None``: none)."""
    for t, op, value, index, active in log.scatters:
        g = tangent(value)
        buf = buffers[slot[id(t)]]
        if g is None:
            if op is None:
                scatter(buf, 0.0, index, active)        # the write replaced the entries by a constant
            continue
        (scatter if op is None else scatter_add)(buf, g, index, active)


def propagate_back(logs: list, slot: dict, grads: list, start: int, accept) -> tuple[list, list]:
    """Reverse mode through the logged scatters of every iteration (``logs`` in program order).

    Gives each scattered value's vertex its gradient (gathered from its target's, ``grads``;
    a vertex created before ``start`` only if ``accept`` takes it) and returns ``(left,
    reached)``: what is left of the targets' gradients for their previous vertices, and the
    value vertices created from ``start`` on that received a gradient."""
    grads = list(grads)
    reached = []
    for log in reversed(logs):
        for t, op, value, index, active in reversed(log.scatters):
            k = slot[id(t)]
            g = grads[k]
            if g is None:
                continue
            v = value._ad if isinstance(value, ArrayBase) else None
            if v is not None and graph.is_active(v) and (v.id >= start or accept is None or accept(v)):
                graph.accum(v, gather(v.cls, g, index, active))
                if v.id >= start:
                    reached.append(v)
            if op is None:          # an overwrite: earlier writes of these entries do not survive
                g = type(g)(g)
                scatter(g, 0.0, index, active)
                grads[k] = g
    return grads, reached
