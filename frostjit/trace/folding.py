"""Literal folding: operations whose operands are all literals compute at trace time.

This module holds the rules (which operations fold, the folded value, the symbolic size);
the node doors of :mod:`.ops` apply them and make the literal node (one door for nodes).

Dr.Jit 1.5 propagates constants while it traces: ``Int(4) + Int(5)`` is a literal 9
(``VarState.Literal``), ``fj.zeros(Float, 5) + 1`` a literal 1 of five elements, and
``fj.select`` with a literal condition is the chosen operand.  frostjit does the same in its
node doors (:mod:`.ops`): when every operand of a lane-wise operation is a literal, the door
asks :func:`fold` for the result, a new literal node, instead of making a pending node.

**A folded value is what a kernel would compute, bit for bit.**  Folding evaluates the op's
reference semantics (:mod:`.numpy_semantics`, the spec every backend matches bit for bit:
``tests/trace/test_optable.py``) on one-element arrays of the operands' types, so integer
arithmetic wraps, ``//`` and ``%`` round as C's, shifts beyond the width give 0, ``fma``
rounds once, ``Float16`` computes in ``float32``.  Operations with a documented accuracy
(the transcendental functions and float ``pow``: vectorized polynomial approximations
whose last bit may differ from NumPy's) are **not** folded: their result stays a pending
node computed by the kernel (a deliberate difference from Dr.Jit, which evaluates them
by the same approximations at trace time; docs/engine.md).  Conversions fold in
:func:`.ops.cast` and :func:`.ops.bitcast`.

Folding follows ``JitFlag.ConstantPropagation`` (set by default, as in Dr.Jit): cleared,
every operation makes a pending node.

Inside a frozen function's recording a folded literal keeps the symbolic size of its
operands (``fj.zeros(Float, fj.width(x)) + 1``).  Literal *values* there are either
constants of the function or literal inputs, whose values are part of the recording's key
(a changed value records again, then the input is made opaque), so a folded value is never
stale in a replay.
"""
from __future__ import annotations

import numpy as np

from .optable import OPS, TRANSCENDENTAL
from .state import JitFlag, state

CONSTANT_PROPAGATION = int(JitFlag.ConstantPropagation)

#: The reference of every operation that folds on literals: lane-wise, exact (no accuracy
#: bound), no parameter (conversions fold in their own doors, :func:`.ops.cast`).
FOLDABLE: dict = {name: e.numpy for name, e in OPS.items()
                  if e.lanewise and name not in TRANSCENDENTAL and name not in ("cast", "bitcast")
                  and e.numpy is not None}


def enabled() -> bool:
    """Whether literal folding is on (``JitFlag.ConstantPropagation``)."""
    return bool(state.flags & CONSTANT_PROPAGATION)


def folded_value(op: str, vt, args: tuple):
    """The value of ``op(*args)`` on the literal nodes ``args`` (``op`` in :data:`FOLDABLE`,
    result type ``vt``), as the literal of a node of type ``vt`` stores it (a Python
    ``int``, ``float`` or ``bool``): the op's reference semantics on one-element arrays.

    Examples
    --------
    >>> folded_value("add", Int32, (literal(Int32, 2**31 - 1), literal(Int32, 1)))     # wraps
    -2147483648
    >>> folded_value("shl", UInt32, (literal(UInt32, 1), literal(UInt32, 32)))   # count >= the width
    0
    """
    arrays = [np.array([a.value], dtype=a.vt.np_dtype) for a in args]
    return FOLDABLE[op](vt, *arrays)[0].item()


def result_sym(args: tuple, size: int):
    """The symbolic size a folded result takes while a frozen function records: that of an
    operand of the result's size; ``None`` for a size-1 result (the recorder gives it its
    symbol); ``False`` when operands of the result's size do not share one symbol (their
    sizes are equal in this call, not known to be in others: the door makes a pending node,
    whose recording guards the equality)."""
    if size == 1:
        return None
    sym = None
    for a in args:
        if a.size == size:
            s = a.sym
            if sym is None:
                sym = s
            elif s is not sym:
                return False
    return sym
