"""``fj.while_loop``: a loop whose condition may differ from lane to lane (Dr.Jit's API).

Modes (see :mod:`.modes` for how ``mode=None`` chooses):

* **scalar**: the condition is a Python ``bool``; a plain Python ``while`` loop.
* **evaluated**: a host loop of kernels.  Each iteration evaluates the state and the active
  mask together (one kernel: the previous body, the merge and the condition), stops when no lane
  is active, runs the body on every lane with the active mask pushed (scatters and gathers of
  retired lanes do nothing, :mod:`frostjit.trace.masks`), and keeps retired lanes' state with
  ``select``.  With ``compress=True`` the body runs on the active lanes only: the state of the
  active lanes is gathered, and the body's results are scattered back each iteration.
* **symbolic**: one loop inside the kernel (issue 12 part B; until it lands an explicit
  ``mode="symbolic"`` raises ``NotImplementedError`` and the flag's default choice falls back to
  evaluated mode, :func:`.modes.vector_mode`).

Inside ``fj.freeze`` the number of iterations becomes a guard of the recording (:mod:`.host`).
"""
from __future__ import annotations

import logging
from typing import Callable

from ..ad.api import isolate_grad
from ..array.flat import ArrayBase
from ..functions.creation import zeros
from ..functions.evaluation import eval as eval_, width
from ..functions.memory import gather, scatter
from ..functions.reduce import compress as compress_
from ..trace import loops as trace_loops, masks
from ..trace.dtypes import UInt32
from ..trace.state import JitFlag, flag
from ..trace.state import state as trace_state
from ..array import registry
from ..tree import map2, transform
from . import host, loop_ad
from .identity import Returned, leaves_of, write_back
from .consistency import (check_body_result, check_initialized, check_labels, check_tuple, contract_error, fresh, merge,
                          size_error)
from .errors import ControlFlowArgumentTypeError, LoopVariableError, StateValueError, wrapped
from .modes import check_mask, check_mode, is_python_bool, vector_mode

log = logging.getLogger("frostjit")

WHO = "while_loop"


def while_loop(state: tuple, cond: Callable, body: Callable, labels=(), label: str | None = None,
               mode: str | None = None, strict: bool = True, compress: bool | None = None,
               max_iterations: int | None = None) -> tuple:
    """Run ``state = body(*state)`` while ``cond(*state)`` holds, lane by lane.

    Parameters
    ----------
    state : tuple
        The loop's state variables: arrays or PyTrees of them (Python values are passed along
        and, with ``strict=True``, must not change).
    cond : callable
        ``cond(*state)`` returns a ``Bool`` array (one condition per lane) or a Python ``bool``.
        It must not modify anything.
    body : callable
        ``body(*state)`` runs one iteration and returns the new state, a tuple of the same
        length whose entries keep their types, structures and sizes (a size-1 array may become
        wider).  A lane whose condition is false keeps its state.
    labels : sequence of str, optional
        One name per state entry, used in error messages (``@fj.syntax`` passes the variable
        names).
    label : str, optional
        A name for the loop: in the DEBUG log of each evaluated loop and in the guards a frozen
        function records for it.
    mode : {None, "scalar", "symbolic", "evaluated"}
        ``None``: scalar if the first condition is a Python ``bool``, else symbolic or evaluated
        as ``JitFlag.SymbolicLoops`` says (set by default; evaluated while the symbolic
        implementation is absent).
    strict : bool
        Whether Python values in the state must keep their value (``False``: the body's new
        value is taken).
    compress : bool, optional
        Evaluated mode: run each iteration on the active lanes only (``None``: the flag
        ``JitFlag.CompressLoops``, off by default).  The condition and the body then see arrays
        of the active lanes only, so everything they use that has a lane per lane of the loop
        must be in the state.
    max_iterations : int, optional
        Accepted for Dr.Jit compatibility; evaluated loops need no bound (reverse-mode AD
        records every iteration), and symbolic loops will use it.

    Returns
    -------
    tuple
        The final state.

    Raises
    ------
    StateTypeError, StateValueError
        (``RuntimeError`` subclasses, from :mod:`frostjit.control.errors`) a state variable
        changed type, structure or size, a Python value changed with ``strict=True``, ``body``
        did not return a tuple of the right length, or the condition is not a ``Bool`` array
        (or a Python ``bool`` in scalar mode).
    NotImplementedError
        ``mode="symbolic"`` while symbolic mode is not implemented.

    Examples
    --------
    >>> i, x = fj.while_loop((UInt32(0), Float(1, 1, 1)), lambda i, x: i < UInt32(1, 2, 3),
    ...                      lambda i, x: (i + 1, x * 2), mode="evaluated")
    >>> x
    [2, 4, 8]
    """
    if not isinstance(state, tuple):
        raise ControlFlowArgumentTypeError(f"fj.while_loop(): 'state' must be a tuple, got {type(state).__name__}")
    if not callable(cond) or not callable(body):
        raise ControlFlowArgumentTypeError("fj.while_loop(): 'cond' and 'body' must be callables")
    check_mode(WHO, mode)
    labels = check_labels(WHO, len(state), labels)
    try:
        return _run(state, cond, body, labels, label, mode, strict, compress, max_iterations)
    except Exception as err:
        new = wrapped(WHO, err)      # Dr.Jit (every mode): a RuntimeError whose cause is the original
        if new is err:
            raise
        raise new from err


def _run(state, cond, body, labels, label, mode, strict, compress, max_iterations):
    first = None
    if mode is None:
        first = cond(*state)
        if is_python_bool(first):
            mode = "scalar"
        else:
            check_mask(WHO, first, "the loop condition")
            mode = vector_mode(JitFlag.SymbolicLoops)
    if mode == "scalar":
        return _scalar(state, cond, body, first)
    return _vectorized(state, cond, body, labels, label, mode, strict, compress, max_iterations, first)


def _vectorized(state, cond, body, labels, label, mode, strict, compress, max_iterations, first):
    check_initialized(WHO, state, leaves_of(state), labels)
    body = Returned(body)       # Dr.Jit: results that are the body's arguments are the caller's objects
    if mode == "symbolic":
        out = _symbolic(state, cond, body, labels, label, strict, max_iterations)
        return write_back(state, out, [body], loop=True)
    if compress is None:
        compress = flag(JitFlag.CompressLoops)
    # Dr.Jit: the loop is an isolate_grad() scope (as an if_stmt, if_stmt.py): a backward pass in
    # the body stops at variables created before the loop, with the gradient of the active lanes,
    # and propagates on once, when the loop ends, so every iteration's pass reaches them
    with isolate_grad():
        if compress:
            out = _compressed(state, cond, body, labels, label, strict, first)
        else:
            out = _evaluated(state, cond, body, labels, label, strict, first)
    return write_back(state, out, [body], loop=True)


def _name(label) -> str:
    return f"fj.while_loop {label!r}" if label else "fj.while_loop"


def _scalar(state: tuple, cond, body, first) -> tuple:
    """Plain Python (Dr.Jit's scalar mode checks only that the body returns a tuple)."""
    c = cond(*state) if first is None else first
    while c:
        new = body(*state)
        check_body_result(WHO, new, len(state))
        state = new
        c = cond(*state)
    return state


def _symbolic(state, cond, body, labels, label, strict, max_iterations):
    return loop_ad.symbolic_while_loop(state, cond, body, labels, label, strict, max_iterations)


def _enclosed(active):
    """The condition restricted to the enclosing scope's lanes (a loop inside a loop body)."""
    top = masks.top()
    if top is None or not masks.compatible(top, active._node.size):
        return active
    return active & type(active)._from_node(top)


def _first_eval(c, state, *arrays) -> None:
    """Evaluate ``arrays`` before the first iteration.  Where that fails because the condition or
    the state is a variable of an enclosing symbolic loop, conditional or call body (no value on
    the host), Dr.Jit's error instead (looked for only then: the walk costs ~60 us on a large
    unevaluated state)."""
    try:
        eval_(*arrays)
    except LoopVariableError:
        _refuse_symbolic_inputs(c, state)
        raise


def _refuse_symbolic_inputs(c, state) -> None:
    """Dr.Jit's error for an evaluated loop whose condition or state is a variable of an enclosing
    symbolic loop, conditional or call body: such a variable has no value on the host."""
    nodes = [a._node for a in leaves_of((c, state)) if isinstance(a, ArrayBase)]
    if trace_loops.is_symbolic(nodes):
        raise RuntimeError(
            "fj.while_loop(): frostjit is currently recording symbolic computation and cannot execute a loop in "
            "*evaluated mode* (its condition or state is a variable of an enclosing symbolic loop, conditional "
            "or call). Set fj.JitFlag.SymbolicLoops, or annotate the loop condition with "
            "fj.hint(..., mode='symbolic') in an @fj.syntax function")


def _evaluated(state: tuple, cond, body, labels, label, strict, first) -> tuple:
    """The masked host loop (see module docstring)."""
    c = cond(*state) if first is None else first
    check_mask(WHO, c, "the loop condition")
    active = _enclosed(c)
    _first_eval(c, state, state, active)
    what = f"the termination test of {_name(label)} (iteration 1)"
    it = 0
    while host.any_active(active, what):
        it += 1
        with masks.scope(active._node):
            new = body(*fresh(state))
        check_body_result(WHO, new, len(state))
        check_tuple(WHO, state, new, labels, "state", strict)
        # a state array the body scattered into (its own argument, returned) is memory, not
        # per-lane state: its new value is taken whole, whatever its size (Dr.Jit; the retired
        # lanes' writes were masked already)
        whole = _scattered_arguments(body, new)
        _check_sizes(active, state, new, labels, whole)
        state = merge(active, new, state, values_from_a=True, whole=whole)
        c = cond(*state)
        check_mask(WHO, c, "the loop condition")
        active = active & c
        eval_(state, active)        # one kernel: this body, the merge and the next condition
        what = f"the termination test of {_name(label)} (iteration {it + 1})"
    if log.isEnabledFor(logging.DEBUG):
        log.debug("%s: evaluated loop ran %d iterations", _name(label), it)
    return state


def _check_sizes(active, state, new, labels, whole) -> None:
    """Dr.Jit's error for a state array, changed by the body and not taken whole, whose size does not
    match the loop's (``active``)."""
    m = active._node.size
    old_leaves, new_leaves = leaves_of(state), leaves_of(new)
    for a in new_leaves:
        n = a._node.size
        if n != m and n != 1:
            break
    else:
        return
    skip = {j for j, (a, b) in enumerate(zip(old_leaves, new_leaves))
            if a._node is b._node or (whole is not None and whole(b))}
    merged = [b if b._node.size not in (1, m) else a for a, b in zip(old_leaves, new_leaves)]
    err = size_error(WHO, m, state, merged, labels, skip=skip)
    if err is not None:
        raise err


def _scattered_arguments(body, new):
    """``whole`` for :func:`.consistency.merge`: true for the arrays of ``new`` that are the ones
    ``body`` (a :class:`.identity.Returned`) received at their position and that have scatters
    pending; ``None`` when there are none."""
    dirty = trace_state.dirty
    positions = getattr(body, "leaves", None)
    if not dirty or not positions:
        return None
    leaves = leaves_of(new)
    ids = {id(a) for j, a in enumerate(leaves) if positions[j] == j and a._node in dirty}
    return (lambda a: id(a) in ids) if ids else None


def _compressed(state: tuple, cond, body, labels, label, strict, first) -> tuple:
    """Evaluated mode with compression: each iteration runs on the active lanes only."""
    c = cond(*state) if first is None else first
    check_mask(WHO, c, "the loop condition")
    c = _enclosed(c)
    n = width(state, c)
    full = _broadcast(state, n)                 # our own handles: written back by scatter
    what = f"the termination test of {_name(label)} (iteration 1)"
    _first_eval(c, state, full, c)
    idx = compress_(c)
    if host.is_empty(idx, what):
        return full
    cur = _take(full, idx)
    it = 0
    while True:
        it += 1
        with masks.scope(None):                 # every lane of a compressed iteration is active
            new = body(*fresh(cur))
        check_body_result(WHO, new, len(state))
        check_tuple(WHO, cur, new, labels, "state", strict)
        full = _write_back(full, new, idx)
        c = cond(*new)
        check_mask(WHO, c, "the loop condition")
        _check_compressed_width(c, idx, label)
        what = f"the termination test of {_name(label)} (iteration {it + 1})"
        eval_(new, c)
        sel = compress_(c)
        if host.is_empty(sel, what):
            break
        cur = _take(new, sel)
        with masks.scope(None):
            idx = gather(type(idx), idx, sel)
    eval_(full)
    if log.isEnabledFor(logging.DEBUG):
        log.debug("%s: compressed evaluated loop ran %d iterations", _name(label), it)
    return full


# The compressed loop's own gathers and scatters run with no mask pushed: their indices address
# the loop's active lanes (the enclosing scope's mask is folded into the condition already), and
# an enclosing mask of the same width would otherwise be applied to lanes it does not describe.

def _check_compressed_width(c, idx, label) -> None:
    """A compressed iteration runs on the active lanes only: a condition of another width read an
    array of the enclosing lanes that is not in the state (its lanes no longer line up)."""
    m, k = c._node.size, idx._node.size
    if m != 1 and m != k:
        raise contract_error(StateValueError, WHO, f"the loop condition of the compressed {_name(label)} has "
                                                   f"{m} lanes, but the iteration ran on {k} active lanes. With "
                                                   "compress=True the condition and the body see the active lanes "
                                                   "only: every array with one entry per lane must be a state "
                                                   "variable")


def _broadcast(tree, n: int):
    """New handles on ``tree``'s arrays, size-1 arrays widened to ``n`` lanes."""
    def one(a):
        if a._node.size == n:
            return type(a)(a)
        if a._node.size != 1:
            raise contract_error(StateValueError, WHO, f"a state variable of {a._node.size} lanes is not "
                                                       f"compatible with the loop's {n} lanes")
        return gather(type(a), a, zeros(registry.flat_type(a._backend, UInt32), n))
    with masks.scope(None):
        return transform(tree, one, who="while_loop", root="state")


def _take(tree, index):
    """The lanes ``index`` of every array of ``tree`` (Python values kept)."""
    with masks.scope(None):
        return transform(tree, lambda a: gather(type(a), a, index), who="while_loop", root="state")


def _write_back(full, new, index):
    """Scatter ``new``'s arrays into ``full``'s at ``index``; Python values are the new ones."""
    def leaf(f, v):
        if isinstance(f, ArrayBase):
            scatter(f, v, index)
            return f
        return v
    with masks.scope(None):
        return map2(full, new, leaf, who="while_loop", names=("state", "body result"))
