"""AD inside frozen functions (used by :mod:`frostjit.freeze`).

A frozen call runs in an isolation scope, as in Dr.Jit: a backward pass inside
stops at the variables that existed before the call.  The inputs' AD vertices
are walked by the freeze layout like containers holding their gradient
(``Vertex.__fj_traverse_attrs__``), so a gradient the function gives an input is a
write-back that every replay repeats.  After the call (recorded or replayed),
:func:`after_call` continues the backward pass from inputs that were
themselves computed from other grad-enabled variables.

What a recording cannot repeat makes it fall back to plain calls (correct
gradients, no replay), with the reason returned by :func:`leave` or
:func:`output_reason`: gradients reaching a grad-enabled variable that is not
an input, or outputs connected to the inputs through the AD graph
(differentiating *through* a frozen function's result).
"""
from __future__ import annotations

from . import graph
from .graph import DeferredCalls, leaf_vertex, next_id, scopes, propagate_postponed, is_active, push_scope, pop_scope

OUTPUT_REASON = ("returns (or writes back) arrays that depend on grad-enabled inputs through the AD graph; "
                 "so that gradients can flow through them, these calls run the plain function")


NOT_AN_INPUT = ("gives gradients to a grad-enabled variable that is not among its inputs (pass it as an "
                "argument, an attribute of one, or use state_fn)")
REBOUND = "enables, disables or rebinds the gradient tracking of an input; these calls run the plain function"
REASONS = (OUTPUT_REASON, NOT_AN_INPUT, REBOUND)


class _NewVariable:
    """Stands for a variable created now (an id no vertex has yet), to ask how the scope treats one."""

    __slots__ = ("id",)

    def __init__(self):
        self.id = next_id()


# Whether enable_grad() can make new variables differentiable in the current scope (graph's
# model of Dr.Jit's suspend/resume scopes; without it, it always can).
_grad_allowed = getattr(graph, "grad_allowed", lambda: True)


def scope_token(leaves):
    """The AD scope a frozen call runs in, as far as it can change what the call does (part of
    the layout key): ``None`` outside every ``suspend_grad``/``resume_grad``/``isolate_grad``
    scope (the common case), else whether new variables are tracked and can be made
    differentiable, whether an isolation scope is open, and whether each grad-enabled input
    (``leaves`` in walk order) is tracked.  Inputs are described by position, never by vertex id,
    so a scope over this call's inputs matches the next call's.
    """
    if not graph.open_scopes or (not scopes.enable and not scopes.isolate):
        return None
    return (is_active(_NewVariable()), _grad_allowed(), bool(scopes.isolate),
            tuple(is_active(a._ad) for a in leaves if a._ad is not None))


def enter(leaves):
    """Start a frozen call's recording: an isolation scope; remembers the inputs' vertices."""
    scope = [next_id(), {}]
    push_scope(scopes.isolate, scope)
    return scope, [a._ad for a in leaves]


def leave(token, leaves) -> str | None:
    """End the recording's isolation scope; returns why the recording cannot be replayed, or None."""
    scope, before = token
    if scopes.isolate and scopes.isolate[-1] is scope:
        pop_scope(scopes.isolate, scope)
    inputs = {id(v) for v in before if v is not None}
    reason = None
    for v in scope[1].values():
        if id(v) not in inputs:
            reason = NOT_AN_INPUT
    for a, v in zip(leaves, before):
        if a._ad is not v:
            reason = reason or REBOUND
    # The postponed part of the backward pass runs after the recording (see after_call).
    postponed = [v for v in scope[1].values() if v.parents]
    if postponed:
        graph.mark_after_call()
        scopes.after_call.extend(postponed)
    return reason


def output_reason(array) -> str | None:
    """Why an output array cannot be rebuilt by a replay (None: it can)."""
    v = array._ad
    if v is not None and v.parents:
        return OUTPUT_REASON
    return None


def new_leaf(array) -> None:
    """A replayed output that was grad-enabled when recorded: a fresh AD leaf (Dr.Jit's behaviour)."""
    array._ad = leaf_vertex(type(array), array._node)


def after_call() -> None:
    """Continue the backward pass from inputs that received gradients and depend on other variables."""
    if not graph.after_call_used:       # (no list was ever appended to: all are empty)
        return
    verts = scopes.after_call
    if verts and type(verts) is not DeferredCalls:       # (deferred while a derivative runs)
        scopes.after_call = []
        unique = {v.id: v for v in verts}
        propagate_postponed(unique.values())
