"""Which mode a control-flow call runs in, and the checks of the value that decides it.

``mode=None`` follows Dr.Jit: a Python ``bool`` condition (or a Python ``int`` index of
``switch``) means *scalar* mode, plain Python; otherwise the JIT flag of the construct
(``SymbolicLoops``, ``SymbolicConditionals``, ``SymbolicCalls``, all set by default) chooses
*symbolic* over *evaluated*.  An explicit ``mode=`` is used as given.
"""
from __future__ import annotations


import numpy as np

from ..array import registry
from ..array.flat import ArrayBase
from ..trace import masks
from ..trace.dtypes import Bool
from ..trace.state import JitFlag, flag
from .consistency import contract_error, type_name
from .errors import ControlFlowArgumentError, ControlFlowArgumentTypeError, StateTypeError

MODES = ("scalar", "symbolic", "evaluated")


def check_mode(who: str, mode, allowed: tuple = MODES) -> None:
    """Raise ``ValueError`` for a ``mode`` that is neither ``None`` nor one of ``allowed``."""
    if mode is not None and mode not in allowed:
        choices = ", ".join(repr(m) for m in allowed)
        raise ControlFlowArgumentError(f"fj.{who}(): invalid 'mode' argument {mode!r} (must equal None, {choices})")


def is_python_bool(c) -> bool:
    return isinstance(c, (bool, np.bool_))


def is_mask(c) -> bool:
    """A 1-D JIT ``Bool`` array (what a vectorized condition must be)."""
    return isinstance(c, ArrayBase) and c._vt is Bool


def check_mask(who: str, c, what: str) -> None:
    """Raise Dr.Jit's error unless ``c`` is a 1-D JIT ``Bool`` array."""
    if not is_mask(c):
        raise contract_error(StateTypeError, who, f"the type of {what} ('{type_name(c)}') is not supported. "
                                                  "It must be a Jit-compiled 1D Boolean array or, in scalar "
                                                  "mode, a Python 'bool'")


def vector_mode(flag_: JitFlag) -> str:
    """``"symbolic"`` or ``"evaluated"`` as the flag says (the choice for a vectorized value)."""
    return "symbolic" if flag(flag_) else "evaluated"


def switch_lanes(index, n_targets: int, mask, n: int):
    """The lanes of an ``fj.switch`` (evaluated or symbolic) that call a target: ``index`` in
    range, ``mask`` set (a ``Bool`` array or bool; ``None``: every lane) and, inside a loop body
    or a branch, the enclosing scope's lanes of width ``n``."""
    active = index < n_targets
    if mask is not None:
        if not (is_mask(mask) or is_python_bool(mask)):
            raise ControlFlowArgumentTypeError(f"fj.switch(): 'active' must be a Bool array or bool, got "
                                               f"{type(mask).__name__}")
        active = active & mask
    top = masks.top()
    if top is not None and masks.compatible(top, n):
        active = active & registry.flat_type(index._backend, Bool)._from_node(top)
    return active
