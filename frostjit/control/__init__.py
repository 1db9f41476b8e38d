"""Vectorized control flow: loops and conditionals whose condition differs from lane to lane,
per-lane calls, and the ``@fj.syntax`` rewrite of Python ``while``/``if``/``for`` into them.

* :func:`while_loop` (``while_loop.py``), :func:`if_stmt` (``if_stmt.py``), :func:`switch`
  (``switch.py``): Dr.Jit's functions, in scalar and evaluated modes; symbolic mode (the
  default, as in Dr.Jit) will plug in behind the same functions (``modes.py``).
* :func:`syntax` and :func:`hint` (``syntax.py``, the rewrite; ``analysis.py``, which variables
  become state).
* :func:`func` (``func.py``): ``@fj.func``, a function the kernel calls instead of inlining it;
  :func:`reorder_threads` (``reorder.py``): Dr.Jit's GPU reordering hint, a checked no-op.
* :class:`Local` and :func:`alloc_local` (``local.py``): per-lane scratch buffers.
* ``symbolic.py``: symbolic mode (loops in the kernel, conditionals and calls as selects);
  ``loop_ad.py`` and ``loop_scatters.py``: AD through symbolic loops (implicit inputs, scatters).
* ``consistency.py``: the checks between iterations and branches, and the merge;
  ``host.py``: decisions read from data (lanes left), frozen-function safe; ``errors.py``.
* The mask of the lanes a body runs on lives in :mod:`frostjit.trace.masks` (gathers and
  scatters read it).

Docs: docs/control.md.
"""
from .errors import (ControlFlowArgumentError, ControlFlowArgumentTypeError, ControlFlowError, StateTypeError,
                     StateValueError)
from .func import func
from .if_stmt import if_stmt
from .local import Local, alloc_local
from .reorder import reorder_threads
from .switch import switch
from .syntax import hint, syntax
from .while_loop import while_loop

__all__ = ["func", "reorder_threads", "while_loop", "Local", "alloc_local", "if_stmt", "switch", "syntax", "hint", "ControlFlowError", "StateTypeError", "StateValueError",
           "ControlFlowArgumentError", "ControlFlowArgumentTypeError"]
