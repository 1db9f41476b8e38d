"""AD through symbolic loops (Dr.Jit 1.5's rules): a loop over grad-enabled state, or whose body
reads grad-enabled arrays from outside its state, is one :func:`fj.custom
<frostjit.ad.custom.custom>` operation (:class:`LoopOp`).

* **Implicit inputs.** The arrays a body reads without receiving them in the state (a closure,
  an outer loop's state read by a nested loop, a gathered-from table) are found when the body
  is traced: the AD vertices, created before the trace, that its results depend on
  (:func:`.symbolic.outer_vertices`).  A loop over grad-free state that finds some is traced
  again as a ``LoopOp`` with them as implicit inputs (:class:`.symbolic.ClosureGradients`; the
  body's Python side effects then happen twice).
* **Forward mode**: a second symbolic loop whose state is the state and the tangents of its
  floating-point arrays; the body's Jacobian-vector product is traced once inside it, from the
  state's tangents and the implicit inputs' (their gradients when the traversal reaches the
  operation, loop-invariant values the tangent loop reads).
* **Reverse mode** needs ``max_iterations`` (Dr.Jit's rule and error).  The loop is re-run as a
  host loop of masked iterations over the grad-enabled state (:func:`recorded_loop`, the AD
  graph records each one) and the output gradients are propagated through it to the state and
  to the implicit inputs.
* **Scatters** in the body that carry derivatives: their targets are outputs of the operation;
  both modes handle them as :mod:`.loop_scatters` describes (the re-traced and re-run bodies
  never write again: the primal loop did).
"""
from __future__ import annotations

from ..ad import graph
from ..ad.api import detach, enable_grad, grad, isolate_grad, set_grad
from ..ad.custom import CustomOp, custom
from ..ad.graph import ADFlag
from ..functions.evaluation import eval as fj_eval
from ..trace import masks
from ..trace.state import state as trace_state
from ..tree import flatten, unflatten
from ..array.flat import ArrayBase
from . import host, symbolic
from .loop_scatters import emit_tangents, inside_a_log, logging_scatters, propagate_back, targets_of
from .consistency import check_tuple, fresh, merge

WHILE = "while_loop"


def symbolic_while_loop(state: tuple, cond, body, labels: tuple, label, strict: bool, max_iterations):
    """``fj.while_loop`` in symbolic mode; returns the final state.

    Parameters are those of :func:`frostjit.while_loop` (``labels`` already checked).
    """
    leaves, treedef = flatten(state)
    if not any(a._ad is not None for a in leaves):
        before = list(trace_state.side_effects)
        try:
            with logging_scatters() as log:
                out = symbolic.loop(state, leaves, treedef, cond, body, labels, label, strict)
        except symbolic.ClosureGradients:
            pass        # the body reads grad-enabled arrays: trace it again as a differentiable operation
        else:
            if not log.scatters:
                return out
            # a scatter carries derivatives: the same, and this loop's scatters are not made
            symbolic.drop_effects(symbolic.queued_since(before))
    return custom(LoopOp, state, cond=cond, body=body, labels=labels, label=label, strict=strict,
                  max_iterations=max_iterations)


def _differentiable(leaves: list) -> list[int]:
    """The positions of the floating-point AD arrays among ``leaves`` (those with tangents)."""
    return [k for k, a in enumerate(leaves) if a._is_ad and a._vt.is_float]


class LoopOp(CustomOp):
    """A symbolic loop whose state or implicit inputs carry gradients (see the module docstring).

    ``eval`` runs the symbolic loop on the detached state and registers the implicit inputs and
    the body's differentiable scatter targets (:mod:`.loop_scatters`); ``forward`` runs the
    tangent loop; ``backward`` (with ``max_iterations``) re-runs the loop as a recorded host
    loop and propagates the output gradients through it.
    """

    _fj_wrap_eval_errors = False      # (custom(): its errors pass through as they are)

    def eval(self, state, cond, body, labels, label, strict, max_iterations):
        self.args = (state, cond, body, labels, label, strict, max_iterations)
        leaves, treedef = flatten(state)
        implicit: list = []
        nested = inside_a_log()
        start = graph.next_id()
        before = list(trace_state.side_effects)
        with logging_scatters() as log:
            out = symbolic.loop(state, leaves, treedef, cond, body, labels, label, strict, implicit=implicit)
        queued = symbolic.queued_since(before)
        if _differentiable(leaves) and any(e.vt.is_float for e in queued):
            # A scatter of floating-point values may carry the state's derivatives, which the
            # detached placeholders do not show: trace again with grad-enabled ones (only then:
            # their AD graph costs tracing time).
            symbolic.drop_effects(queued)
            implicit = []
            start = graph.next_id()
            with logging_scatters() as log:
                out = symbolic.loop(state, leaves, treedef, cond, body, labels, label, strict, implicit=implicit,
                                    grad_placeholders=True)
        # what the scattered values read from outside is an implicit input too
        implicit += symbolic.outer_vertices([v._ad for _, _, v, _, _ in log.scatters if _has_grad(v)], start)
        # (vertices, not arrays: an array the body read may be gone by the time derivatives run)
        self._fj_implicit_in.extend(v for v in implicit if graph.is_active(v))
        self.unsupported = bool(log.scatters) and nested
        self.targets, self.slot = [], {}
        if log.scatters and not nested:
            self.targets, self.slot = targets_of(log)
            self._fj_implicit_in.extend(t.before for t in self.targets if t.before is not None)
            self.add_output([t for t, *_ in log.scatters])
        return out

    def _check_supported(self) -> None:
        if self.unsupported:
            raise NotImplementedError(
                "fj.while_loop(): derivatives of the scatters of a symbolic loop nested in the body of another "
                "differentiated symbolic loop are not supported; use mode='evaluated' for one of them")

    def forward(self):
        self._check_supported()
        state, cond, body, labels, label, strict, _ = self.args
        diff = _differentiable(flatten(state)[0])
        tangents = flatten(self.grad_in("state"))[0]
        inner = (state, [tangents[k] for k in diff])
        buffers = [t.tangent_buffer() for t in self.targets]
        fj_eval(buffers)
        slot = self.slot

        def jvp_body(s, t):
            xs, tree = flatten(s)
            before = list(trace_state.side_effects)
            with isolate_grad():
                start = graph.next_id()
                for k, dt in zip(diff, t):
                    x = xs[k] = detach(xs[k])
                    enable_grad(x)
                    set_grad(x, dt)
                with logging_scatters() as log:
                    new = body(*unflatten(tree, xs))
                symbolic.drop_effects(symbolic.queued_since(before))    # (the primal loop made these writes)
                _same_targets(log, slot)
                ys = flatten(new)[0]
                outs = [ys[k] for k in diff]
                _forward_into(outs + [v for _, _, v, _, _ in log.scatters if _has_grad(v)], start)
                grads = [type(dt)(detach(grad(y))) for dt, y in zip(t, outs)]
                emit_tangents(log, slot, buffers, lambda v: detach(grad(v)) if _has_grad(v) else None)
            return detach(new), grads

        leaves, treedef = flatten(inner)
        _, final = symbolic.loop(inner, leaves, treedef, lambda s, t: cond(*s), jvp_body, (), label, strict,
                                 implicit=[])
        zeros, out_def = flatten(self.grad_out())
        for k, g in zip(diff, final):
            zeros[k] = g
        self.set_grad_out(unflatten(out_def, zeros))
        for target, buf in zip(self.targets, buffers):
            v = target.vertex()
            if v is not None:
                graph.accum(v, buf)

    def backward(self):
        self._check_supported()
        state, cond, body, labels, label, strict, max_iterations = self.args
        if max_iterations is None:
            raise RuntimeError(
                "fj.while_loop(): reverse-mode differentiation of a symbolic loop requires a 'max_iterations' "
                "hint (an upper bound on the iteration count, or -1), as in Dr.Jit; or use mode='evaluated'")
        accept = self._fj_accept
        xs, tree = flatten(state)
        start = graph.next_id()
        xs = [detach(x) for x in xs]
        for k in _differentiable(xs):
            enable_grad(xs[k])
        logs: list = []
        out = recorded_loop(unflatten(tree, xs), cond, body, labels, strict, logs)
        for log in logs:
            _same_targets(log, self.slot)
        set_grad(out, self.grad_out())
        # (the gradients of the targets' vertices: implicit outputs, shown during this call)
        grads = [None if v is None else v.grad for v in (t.vertex() for t in self.targets)]
        left, reached = propagate_back(logs, self.slot, grads, start, accept)
        _backward_into(out, xs, start, accept, reached)
        for target, g in zip(self.targets, left):
            b = target.before
            if b is not None and g is not None and (accept is None or accept(b)):
                graph.accum(b, g)
        self.set_grad_in("state", unflatten(tree, [detach(grad(x)) for x in xs]))


def _has_grad(v) -> bool:
    return isinstance(v, ArrayBase) and v._ad is not None


def _same_targets(log, slot: dict) -> None:
    for t, *_ in log.scatters:
        if id(t) not in slot:
            raise RuntimeError("fj.while_loop(): the body of a differentiated symbolic loop scattered into an array "
                               "it did not scatter into when the loop was traced; its derivatives are unknown")


def _forward_into(outs: list, start: int) -> None:
    """Forward-propagate into ``outs`` the gradients of what they depend on: the vertices created
    from ``start`` on, and those created before it (the state's tangents, the implicit inputs'
    gradients, taken as they are: the traversal does not reach further back)."""
    targets = [a._ad for a in outs if a._ad is not None]
    verts = graph.ancestors(targets, start)
    keep = {v.id for v in targets}
    sources = [v for v in verts if v.grad is not None and v.id not in keep]
    graph.traverse_forward(verts, sources, ADFlag.ClearNone, keep=keep)


def _backward_into(out, xs: list, start: int, accept, more: list) -> None:
    """Propagate the gradients set on ``out`` (and on the vertices ``more``) back through the
    vertices created from ``start`` on, into ``xs`` and into the vertices created before
    ``start`` that they read (the implicit inputs, whose gradients are added to; ``accept``
    filters those, as the enclosing traversal asks)."""
    starts = [a._ad for a in flatten(out)[0] if a._ad is not None and a._ad.grad is not None]
    starts = list({v.id: v for v in starts + more}.values())
    verts = [v for v in graph.ancestors(starts, start) if v.id >= start or accept is None or accept(v)]
    keep = {a._ad.id for a in xs if a._ad is not None} | {v.id for v in verts if v.id < start}
    graph.traverse_backward(starts, ADFlag.ClearNone, targets=verts, keep=keep)


def recorded_loop(state: tuple, cond, body, labels, strict: bool, logs: list) -> tuple:
    """The loop as a host loop of masked iterations over grad-enabled state, so that the AD graph
    records each iteration (reverse mode); a frozen function guards its iteration count.

    The body's differentiable scatters are logged (one :class:`.loop_scatters.ScatterLog` per
    iteration, appended to ``logs``) and none of its scatters write: the primal loop did."""
    active = symbolic.enclosed(cond(*state))
    fj_eval(state, active)
    it = 0
    while host.any_active(active, f"the termination test of a differentiated fj.while_loop (iteration {it + 1})"):
        it += 1
        before = list(trace_state.side_effects)
        with masks.scope(active._node), logging_scatters() as log:
            new = body(*fresh(state))
        symbolic.drop_effects(symbolic.queued_since(before))
        logs.append(log)
        symbolic.check_result(new, len(state))
        check_tuple(WHILE, state, new, labels, "state", strict)
        state = merge(active, new, state, values_from_a=True)
        active = active & cond(*state)
        fj_eval(state, active)
    return state
