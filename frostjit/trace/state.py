"""Process-wide JIT state: flags, pending side effects, hooks.

Everything mutable that the trace, the scheduler and the observers (freeze, AD)
share lives here, in one object, so it is easy to find and to reset in tests.
"""
from __future__ import annotations

import contextlib
import enum
import threading


class JitFlag(enum.IntFlag):
    """Flags changing the JIT's behaviour (Dr.Jit 1.5's names and bit values).

    ``Debug``: gathers and scatters check their indices and raise
    ``IndexError`` naming the offending index instead of silently reading 0 /
    skipping the write.  ``KernelHistory``: record every launch for
    :func:`kernel_history`.  ``LaunchBlocking`` is accepted for Dr.Jit
    compatibility (frostjit launches are always synchronous).
    ``SymbolicLoops``, ``SymbolicConditionals``, ``SymbolicCalls`` (set by default, as in
    Dr.Jit): ``fj.while_loop``, ``fj.if_stmt``, ``fj.switch`` without ``mode=`` record
    symbolically, else evaluate; ``CompressLoops``: evaluated loops compress their active lanes
    (docs/control.md).  ``KernelFreezing`` (set by default): frozen functions record and replay;
    cleared, every ``fj.freeze`` function runs as a plain call (docs/freeze.md).
    ``ConstantPropagation`` (set by default): operations on literals fold into literals
    (:mod:`frostjit.trace.folding`); cleared, they make unevaluated variables.

    Dr.Jit's optimization, diagnostic and CUDA-only flags (``ReuseIndices``, ``FastMath``,
    ``ValueNumbering``, ``OptimizeLoops``, ``OptimizeCalls``, ``MergeFunctions``, ``PacketOps``, ``ForceOptiX``, ``PrintIR``, ``ForbidSynchronization``,
    ``ScatterReduceLocal``, ``SymbolicScope``, ``FreezingScope``, ``EnableObjectTraversal``,
    ``ShaderExecutionReordering``, ``SpillToSharedMemory``) and its old aliases (``LoopRecord``,
    ``LoopOptimize``, ``VCallRecord``, ``VCallOptimize``, ``VCallDeduplicate``, ``Recording``)
    are accepted so that programs setting them run; they change no result here.
    """

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``JitFlag.Member``

    Debug = 1 << 0
    ReuseIndices = 1 << 1
    ConstantPropagation = 1 << 2
    FastMath = 1 << 3
    ValueNumbering = 1 << 4
    SymbolicLoops = 1 << 5
    OptimizeLoops = 1 << 6
    CompressLoops = 1 << 7
    SymbolicCalls = 1 << 8
    OptimizeCalls = 1 << 9
    MergeFunctions = 1 << 10
    SymbolicConditionals = 1 << 11
    PacketOps = 1 << 12
    ForceOptiX = 1 << 13
    PrintIR = 1 << 14
    KernelHistory = 1 << 15
    LaunchBlocking = 1 << 16
    ForbidSynchronization = 1 << 17
    ScatterReduceLocal = 1 << 18
    SymbolicScope = 1 << 19
    KernelFreezing = 1 << 20
    FreezingScope = 1 << 21
    EnableObjectTraversal = 1 << 22
    ShaderExecutionReordering = 1 << 23
    SpillToSharedMemory = 1 << 24
    # Dr.Jit 1.5's default, bit for bit.
    Default = (ReuseIndices | ConstantPropagation | FastMath | ValueNumbering | SymbolicLoops
               | OptimizeLoops | SymbolicCalls | OptimizeCalls | MergeFunctions
               | SymbolicConditionals | PacketOps | ScatterReduceLocal | KernelFreezing
               | ShaderExecutionReordering | SpillToSharedMemory)
    # Dr.Jit's older names for the same bits.
    VCallRecord = SymbolicCalls
    VCallOptimize = OptimizeCalls
    VCallDeduplicate = MergeFunctions
    LoopRecord = SymbolicLoops
    LoopOptimize = OptimizeLoops
    Recording = SymbolicScope

    # Printed as Dr.Jit prints them (``JitFlag.Debug``), not as the bare number IntFlag gives.
    __str__ = enum.Enum.__str__
    __format__ = enum.Enum.__format__


class JitBackend(enum.Enum):
    """Compute backends (Dr.Jit 1.5's names and values).  Only ``LLVM`` exists so far."""

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``JitBackend.Member``

    Invalid = 0
    CUDA = 1
    LLVM = 2
    Metal = 3


# The flags as plain ints, for hot-path tests (``state.flags & KERNEL_HISTORY``).
DEBUG = int(JitFlag.Debug)
KERNEL_HISTORY = int(JitFlag.KernelHistory)
KERNEL_FREEZING = int(JitFlag.KernelFreezing)


class TraceState:
    """The single mutable JIT state (see module docstring)."""

    def __init__(self) -> None:
        # A plain int (IntFlag arithmetic costs ~0.5 us per test on the evaluation hot path).
        self.flags = int(JitFlag.Default)
        # Side-effect nodes (scatters) waiting for the next evaluation, in program order.
        self.side_effects: list = []
        # Data nodes that pending side effects write to: using one forces evaluation.
        self.dirty: set = set()
        # Freeze recorder observing node creation, reads and launches (None when not recording).
        self.recorder = None
        # The function of the read set's trace hook (freeze/readset.py ReadSet._global, registered
        # by freeze/frozen.py): while a recording runs under it, evaluation (which runs no user
        # code) suspends it (schedule/evaluate.py).
        self.readset_trace = None
        # Automatic differentiation observer (frostjit.ad), told about operations on AD arrays.
        self.ad_hook = None
        # Nodes passed to schedule(): evaluated by the next evaluation.
        self.scheduled: list = []
        # Launch records for kernel_history().
        self.history: list = []
        # Evaluation is not re-entrant across threads: one lock around schedule+launch.
        self.lock = threading.RLock()
        # The scheduler's evaluate(nodes), registered by frostjit.schedule.evaluate when it is
        # imported: the trace flushes pending side effects through it without importing upward.
        self.evaluate = _no_scheduler


def _no_scheduler(nodes) -> None:
    raise RuntimeError("frostjit: no scheduler registered (import frostjit, not frostjit.trace alone)")


state = TraceState()


def set_flag(flag: JitFlag, value: bool) -> None:
    """Set or clear a :class:`JitFlag`.

    Parameters
    ----------
    flag : JitFlag
        The flag to change.
    value : bool
        The new value.
    """
    if not isinstance(flag, JitFlag):
        raise TypeError(f"set_flag(): expected a JitFlag, got {type(flag).__name__}")
    if value:
        state.flags |= int(flag)
    else:
        state.flags &= ~int(flag)


def flag(flag: JitFlag) -> bool:
    """Return the current value of a :class:`JitFlag`."""
    return bool(state.flags & int(flag))


@contextlib.contextmanager
def scoped_set_flag(flag_: JitFlag, value: bool = True):
    """Context manager that sets a :class:`JitFlag` and restores it on exit.

    Examples
    --------
    >>> with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
    ...     fj.eval(x)
    """
    old = flag(flag_)
    set_flag(flag_, value)
    try:
        yield
    finally:
        set_flag(flag_, old)
