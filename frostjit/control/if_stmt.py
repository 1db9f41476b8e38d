"""``fj.if_stmt``: a conditional whose condition may differ from lane to lane (Dr.Jit's API).

Modes (see :mod:`.modes`): **scalar** (a Python ``bool`` condition: plain Python, one branch
runs); **evaluated** (both branches run on every lane, each with its own lanes' mask pushed so
that scatters and gathers of the other lanes do nothing; the results are merged with ``select``.
Nothing is evaluated: the branches fuse into the kernels that use the result, as in Dr.Jit);
**symbolic** (not implemented yet: an explicit ``mode="symbolic"`` raises ``NotImplementedError``
naming the evaluated mode; the flag's default falls back to evaluated, :func:`.modes.vector_mode`).
"""
from __future__ import annotations

from typing import Callable

from ..ad.api import isolate_grad
from ..trace import masks
from . import symbolic
from ..trace.state import JitFlag
from .identity import Returned, leaves_of, write_back
from .consistency import (is_empty, branch_call, check_branch_results, check_initialized, check_labels, contract_error, merge,
                          share_scattered)
from .errors import wrapped, ControlFlowArgumentError, ControlFlowArgumentTypeError
from .modes import check_mask, check_mode, is_python_bool, vector_mode

WHO = "if_stmt"


def if_stmt(args: tuple, cond, true_fn: Callable, false_fn: Callable, arg_labels=(), rv_labels=(),
            label: str | None = None, mode: str | None = None, strict: bool = True):
    """Return ``true_fn(*args)`` on the lanes where ``cond`` holds and ``false_fn(*args)`` elsewhere.

    Parameters
    ----------
    args : tuple
        The arguments of both functions (arrays, PyTrees, Python values).  Each function gets
        its own handles: updating an argument in place (``x += 1``) changes neither the
        caller's variable nor the other branch's argument.
    cond : Bool array or bool
        One condition per lane, or a Python ``bool``.
    true_fn, false_fn : callable
        Called with ``*args``; their results must have the same type and structure, arrays of
        compatible sizes, and (with ``strict=True``) equal Python values.
    arg_labels, rv_labels : sequence of str, optional
        Names of the arguments and of the entries of a tuple result, for error messages
        (``@fj.syntax`` passes the variable names).
    label : str, optional
        A name for the conditional (accepted for Dr.Jit compatibility).
    mode : {None, "scalar", "symbolic", "evaluated"}
        ``None``: scalar for a Python ``bool``, else as ``JitFlag.SymbolicConditionals`` says
        (set by default; evaluated while symbolic mode is not implemented).  ``"scalar"`` with a size-1
        ``Bool`` array uses its value.
    strict : bool
        Whether a Python value in the results must be equal in both (``False``: ``false_fn``'s
        is returned, as in Dr.Jit).

    Returns
    -------
    object
        The merged result, with ``true_fn``'s structure.

    Raises
    ------
    StateTypeError, StateValueError
        (``RuntimeError`` subclasses) the two results differ in type, structure or size, a
        Python value differs with ``strict=True``, or ``cond`` is not a ``Bool`` array (or a
        Python ``bool`` in scalar mode).
    NotImplementedError
        ``mode="symbolic"`` while symbolic mode is not implemented.

    Examples
    --------
    >>> x = Float(1, 2, 3)
    >>> fj.if_stmt((x,), x > 1.5, lambda x: x * 2, lambda x: x + 100, mode="evaluated")
    [101, 4, 6]
    """
    if not isinstance(args, tuple):
        raise ControlFlowArgumentTypeError(f"fj.if_stmt(): 'args' must be a tuple, got {type(args).__name__}")
    if not callable(true_fn) or not callable(false_fn):
        raise ControlFlowArgumentTypeError("fj.if_stmt(): 'true_fn' and 'false_fn' must be callables")
    check_mode(WHO, mode)
    check_labels(WHO, len(args), arg_labels)
    try:
        return _run(args, cond, true_fn, false_fn, arg_labels, rv_labels, label, mode, strict)
    except Exception as err:
        new = wrapped("if_stmt", err)    # Dr.Jit (every mode): a RuntimeError whose cause is the original
        if new is err:
            raise
        raise new from err


def _run(args, cond, true_fn, false_fn, arg_labels, rv_labels, label, mode, strict):
    if mode is None:
        if is_python_bool(cond):
            mode = "scalar"
        else:
            check_mask(WHO, cond, "'cond'")
            mode = vector_mode(JitFlag.SymbolicConditionals)
    if mode == "scalar":
        return true_fn(*args) if cond else false_fn(*args)
    if is_empty(cond._node):
        raise contract_error(ControlFlowArgumentError, WHO, "'cond' cannot be empty")
    check_initialized(WHO, args, leaves_of(args), arg_labels, "args")
    # Dr.Jit: a result that both branches return as the argument they received is the caller's
    # object, updated in place (identity.py)
    true_fn, false_fn = Returned(true_fn), Returned(false_fn)
    # Dr.Jit: the statement is an isolate_grad() scope, so a traversal inside a branch stops at
    # variables created before it (their gradients, masked to the branch's lanes, propagate on
    # once, when the statement ends) and does not clear what the other branch still needs
    with isolate_grad():
        if mode == "symbolic":
            out = _symbolic(args, cond, true_fn, false_fn, rv_labels, label, strict)
        else:
            out = _evaluated(args, cond, true_fn, false_fn, rv_labels, strict)
    return write_back(args, out, [true_fn, false_fn])


def _symbolic(args, cond, true_fn, false_fn, rv_labels, label, strict):
    return symbolic.symbolic_if_stmt(args, cond, true_fn, false_fn, (), rv_labels, label, strict)


def _evaluated(args: tuple, cond, true_fn, false_fn, rv_labels, strict: bool):
    check_mask(WHO, cond, "'cond'")
    top = masks.top()
    mask_t, mask_f = cond, ~cond
    if top is not None and masks.compatible(top, cond._node.size):     # a conditional inside a loop body
        enclosing = type(cond)._from_node(top)
        mask_t, mask_f = mask_t & enclosing, mask_f & enclosing
    with masks.scope(mask_t._node):
        t, given = branch_call(true_fn, args)
    with masks.scope(mask_f._node):
        f, _ = branch_call(false_fn, args, given)
    check_branch_results(WHO, t, f, rv_labels, strict)
    t, f = share_scattered(args, t, f)
    return merge(cond, t, f, values_from_a=False)

