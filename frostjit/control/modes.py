"""Which mode a control-flow call runs in, and the checks of the value that decides it.

``mode=None`` follows Dr.Jit: a Python ``bool`` condition (or a Python ``int`` index of
``switch``) means *scalar* mode, plain Python; otherwise the JIT flag of the construct
(``SymbolicLoops``, ``SymbolicConditionals``, ``SymbolicCalls``, all set by default) chooses
*symbolic* over *evaluated*.  An explicit ``mode=`` is used as given.
"""
from __future__ import annotations

import importlib.util
import logging

import numpy as np

from ..array.flat import ArrayBase
from ..trace.dtypes import Bool
from ..trace.state import JitFlag, flag
from .consistency import contract_error, type_name
from .errors import ControlFlowArgumentError, StateTypeError

MODES = ("scalar", "symbolic", "evaluated")

log = logging.getLogger("frostjit")

# Whether frostjit/control/symbolic.py (issue 12 part B) is present, looked up once; until it is,
# the flags' default choice of symbolic mode falls back to evaluated mode (logged once).
_symbolic_present: bool | None = None


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


def symbolic_available() -> bool:
    """Whether the symbolic implementation (``frostjit/control/symbolic.py``) can be imported."""
    global _symbolic_present
    if _symbolic_present is None:
        _symbolic_present = importlib.util.find_spec(f"{__package__}.symbolic") is not None
        if not _symbolic_present:
            log.debug("frostjit.control: symbolic mode is not available yet; loops, conditionals and "
                      "switches whose mode is chosen by the JitFlags run in evaluated mode")
    return _symbolic_present


def vector_mode(flag_: JitFlag) -> str:
    """``"symbolic"`` or ``"evaluated"`` as the flag says (the choice for a vectorized value).

    While the symbolic implementation is absent, a set flag still chooses ``"evaluated"`` (one
    DEBUG log line, the first time), so that programs written for Dr.Jit's defaults run; an
    explicit ``mode="symbolic"`` raises :func:`symbolic_unavailable`'s error."""
    if flag(flag_) and symbolic_available():
        return "symbolic"
    return "evaluated"


def symbolic_unavailable(who: str, flag_name: str) -> NotImplementedError:
    """The error of symbolic mode until the symbolic backend lands (issue 12, part B)."""
    return NotImplementedError(
        f"fj.{who}(): symbolic mode is not implemented yet in frostjit. Use evaluated mode: pass "
        f"mode='evaluated', or turn the default off with fj.set_flag(fj.JitFlag.{flag_name}, False) "
        f"(or a fj.scoped_set_flag(fj.JitFlag.{flag_name}, False) block; with @fj.syntax, "
        f"fj.hint(cond, mode='evaluated')).")
