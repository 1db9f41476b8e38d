"""The backend boundary.

The trace, the scheduler and frozen functions talk to a backend only through this
interface, so the NumPy reference backend (``backend/reference/``) sits beside the LLVM
one and a CUDA backend can join them.  A *buffer* is whatever object the backend uses for
memory; the layers above store it in data nodes and never look inside.  A *kernel* is what
:meth:`Backend.compile` returns; the layers above read only the attributes listed in
:class:`Kernel`.
"""
from __future__ import annotations

import abc
import sys

from dataclasses import dataclass, field

import numpy as np

from ..trace import numpy_semantics as ns
from ..trace.dtypes import VarType
from .kernel import KernelSpec


@dataclass(frozen=True, slots=True)
class BlockReduction:
    """A block reduction (``fj.block_reduce``) or block prefix reduction
    (``fj.block_prefix_reduce``): what :meth:`Backend.block_reduce` runs and frozen
    functions record.

    ``op`` is "add", "mul", "min", "max", "and" or "or"; ``size`` the block size (>= 1; the last
    block may be shorter); ``prefix`` selects the prefix reduction within each block, with
    ``exclusive`` (start from the identity) and ``reverse`` (accumulate from the block's end).
    """

    op: str
    size: int
    prefix: bool = False
    exclusive: bool = True
    reverse: bool = False

    def out_size(self, n):
        """The output size for ``n`` input elements (``n`` may be a frozen function's symbol)."""
        return n if self.prefix else (n + self.size - 1) // self.size


@dataclass(frozen=True, slots=True)
class AxisReduction:
    """A reduction over the middle axis of an array seen as ``(outer, size, inner)`` (a tensor's
    ``fj.sum(t, axis=k)``): ``outer * inner`` results, ``out[o * inner + j] = op over i of
    in[(o * size + i) * inner + j]``.  What :meth:`Backend.block_reduce` runs (and frozen
    functions record, as a block reduction) when :meth:`Backend.axis_reduction` chose it.

    ``segment`` (a divisor of ``size``, the backend's choice) fixes the order: the axis is cut
    into segments of ``segment`` entries, each reduced in one fixed order (by one thread), then
    the segments' partials are combined in order.  The same ``AxisReduction`` gives the same bits
    whether its input was pending (the LLVM backend fuses it into the kernel that computes the
    input) or evaluated, at any thread count.
    """

    op: str
    size: int
    inner: int
    segment: int
    prefix: bool = False        # (read by code that handles every block reduction)

    def out_size(self, n):
        """The output size for ``n`` input elements (``n`` may be a frozen function's symbol)."""
        return n // self.size


@dataclass(frozen=True, slots=True)
class OpenAxisReduction:
    """The reduction of the middle axis of an array seen as ``(outer, n, inner)`` whose length
    ``n`` is the input's size over ``outer * inner``: what a frozen function records where the
    reduced axis (or its rows) follows the batch size.  :meth:`Backend.block_reduce` resolves
    it, at the recorded call and at each replay, for the size it gets (:meth:`resolve`): the
    backend's :class:`AxisReduction` for that length, or on the last axes (``inner == 1``) the
    block reduction of rows of ``n``, which is what the plain call with that length runs, so a
    replay has the plain call's bits.  (Where the backend would take the generic path for the
    length, the recording does not use this: ``tensor/reduce.py`` guards on that choice.)

    ``outer`` and ``inner`` are the recorded call's numbers.  Where they follow the batch size
    too (two batch axes: ``(B, B)``), ``symbols`` holds them as the recording's symbolic sizes
    (``(outer, inner)``, each a ``Sym`` or an int): the recorder takes the output's size from
    them and the replay rebuilds the reduction for the call's numbers (:meth:`at`).

    With ``prefix`` (over the last axes, ``inner == 1``): the prefix reduction within each row
    (``exclusive``, ``reverse`` as in :class:`BlockReduction`), the plain call's
    ``fj.block_prefix_reduce`` with rows of ``n`` (a tensor's ``fj.cumsum`` over the batch).
    """

    op: str
    outer: int
    inner: int
    prefix: bool = False
    exclusive: bool = True
    reverse: bool = False
    symbols: tuple = field(default=(), compare=False, repr=False)

    def out_size(self, n):
        """The output size, ``outer * inner`` for any input size ``n`` (symbolic where ``n`` and
        :attr:`symbols` are: a frozen function's recording); ``n`` for a prefix reduction."""
        if self.prefix:
            return n
        if self.symbols and hasattr(n, "__symbolic_size__"):
            return self.symbols[0] * self.symbols[1]
        return self.outer * self.inner

    def at(self, outer: int, inner: int) -> "OpenAxisReduction":
        """This reduction for a replay's ``outer`` and ``inner`` (the values of :attr:`symbols`)."""
        return OpenAxisReduction(self.op, outer, inner, self.prefix, self.exclusive, self.reverse)

    def resolve(self, backend, vt: VarType, size: int):
        """The reduction the plain call runs for an input of ``size`` elements."""
        if self.prefix:
            return BlockReduction(self.op, max(size // self.outer, 1), True, self.exclusive, self.reverse)
        n = size // (self.outer * self.inner) if self.outer * self.inner else 0
        red = backend.axis_reduction(self.op, vt, n, self.inner) if n else None
        if red is not None:
            return red
        if self.inner != 1 or not n:
            raise RuntimeError(f"frostjit: the {backend.name} backend does not reduce an axis of {n} "
                               f"entries over rows of {self.inner} as one axis reduction (not guarded)")
        return BlockReduction(self.op, n)


class Kernel(abc.ABC):
    """What every backend's compiled kernel offers to the layers above (the kernel history,
    the logs, frozen functions' replay code).

    Attributes
    ----------
    hash : str
        A hex digest identifying the kernel's code.
    ir : str
        The kernel's code as text (``fj.kernel_history()``'s ``ir``; LLVM IR for the LLVM
        backend, a listing of the spec for the reference backend).
    n_instrs : int
        The number of instructions of its spec.
    codegen_time, compile_time : float
        Seconds spent generating and compiling (or loading) it.
    """

    __slots__ = ()
    hash: str
    ir: str
    n_instrs: int
    codegen_time: float
    compile_time: float


class Backend(abc.ABC):
    """Abstract compute backend (see module docstring)."""

    #: The backend's name ("LLVM", "reference"), as ``fj.kernel_history()`` reports it.
    name: str

    #: Whether texture lookups read a row's two texels with one gather of a pair
    #: (:func:`~frostjit.functions.memory.gather_pair`); every backend evaluates such a gather,
    #: this only says whether it pays.
    pair_gathers: bool = False

    # -- memory --------------------------------------------------------------------------
    @abc.abstractmethod
    def alloc(self, vt: VarType, size: int):
        """A new uninitialized buffer of ``size`` elements of type ``vt``."""

    @abc.abstractmethod
    def from_numpy(self, array: np.ndarray):
        """A new buffer holding a copy of a contiguous 1-D NumPy array."""

    def full(self, vt: VarType, value, size: int):
        """A new buffer of ``size`` elements equal to ``value`` (a literal made concrete)."""
        return self.from_numpy(np.full(size, value, dtype=vt.np_dtype))

    @abc.abstractmethod
    def to_numpy(self, buffer, size: int) -> np.ndarray:
        """A NumPy copy of the first ``size`` elements of ``buffer``."""

    def thread_count(self) -> int:
        """Threads that run a launch (the calling thread included); 1 for a backend without a pool."""
        return 1

    def set_thread_count(self, n: int) -> None:
        """Run launches on ``n`` threads (the calling thread included; ``n >= 1``)."""

    #: Evaluations of at least this many lanes call :meth:`wake_threads` when they start.
    wake_from: int = sys.maxsize

    def wake_threads(self) -> None:
        """A launch of at least :attr:`wake_from` lanes is coming (an evaluation starts): a
        backend whose pool's workers sleep when idle wakes them now, so that their wake-up
        overlaps the work before the launch.  Nothing to do without a pool."""

    @abc.abstractmethod
    def element(self, buffer, index: int):
        """Element ``index`` of ``buffer`` as a Python scalar (``x[i]``)."""

    @abc.abstractmethod
    def host_array(self, buffer, size: int) -> np.ndarray:
        """A NumPy array sharing the first ``size`` elements of ``buffer`` (no copy: DLPack export).

        A backend whose memory is not host memory raises ``TypeError``.
        """

    def host_address(self, buffer) -> int:
        """The host address of ``buffer``'s first element (a NumPy view of it is made from this
        address: ``array/export.py``); ``TypeError`` as :meth:`host_array`."""
        return self.host_array(buffer, len(buffer)).__array_interface__["data"][0]

    @abc.abstractmethod
    def copy(self, vt: VarType, buffer, size: int):
        """A new buffer with the same contents."""

    def flush_memory_cache(self) -> None:
        """Return memory kept for reuse (freed buffers) to the system (``fj.flush_malloc_cache``)."""

    # -- kernels -------------------------------------------------------------------------
    @abc.abstractmethod
    def compile(self, spec: KernelSpec):
        """Return ``(kernel, status)`` for a kernel spec (status: "memory", "disk" or "compiled").

        The kernel has the attributes of :class:`Kernel`.
        """

    @abc.abstractmethod
    def launch(self, kernel, size: int, spec: KernelSpec, buffers: list) -> None:
        """Run ``kernel`` over ``size`` lanes with ``buffers`` bound to the spec's parameters.

        OUT buffers hold at least ``size`` elements; a gather source's or scatter target's
        element count is its buffer's length.
        """

    def launch_new_output(self, kernel, size: int, spec: KernelSpec, inputs: list, vt: VarType):
        """Launch a kernel whose last parameter is its only output, into a new buffer of
        ``size`` elements of ``vt``; return that buffer (``inputs`` are the other parameters').

        The scheduler's path for a single operation (``schedule/single_op.py``); a backend may
        do it in one step.
        """
        out = self.alloc(vt, size)
        if size > 0:
            self.launch(kernel, size, spec, inputs + [out])
        return out

    def launch_new_outputs(self, kernel, size: int, spec: KernelSpec, inputs: list, vts: tuple) -> list:
        """Launch a kernel whose last parameters are its outputs, into new buffers of ``size``
        elements of the types ``vts``; return those buffers (``inputs`` are the other
        parameters').

        The scheduler's path for a graph evaluated from a cached plan (``schedule/plans.py``); a
        backend may do it in one step.
        """
        outs = [self.alloc(vt, size) for vt in vts]
        if size > 0:
            self.launch(kernel, size, spec, inputs + outs)
        return outs

    def flush_kernel_cache(self) -> None:
        """Forget every compiled kernel held in memory (``fj.flush_kernel_cache``)."""

    def set_kernel_cache_size(self, size: int) -> int:
        """Bound the in-memory kernel cache to ``size`` kernels; return the previous bound."""
        raise NotImplementedError(f"the {self.name} backend has no bounded kernel cache")

    def kernel_cache_info(self) -> dict:
        """Counts of the in-memory kernel cache: ``capacity``, ``cached``, ``live``, ``evictions``."""
        raise NotImplementedError(f"the {self.name} backend has no kernel cache")

    # -- memory-level operations ---------------------------------------------------------
    #: Reductions of pending arrays of at least this many lanes are fused into the kernel that
    #: computes them (a ``reduce`` instruction, see :mod:`frostjit.backend.kernel`, launched
    #: with :meth:`launch_reduction`) where :meth:`fuses` allows; ``None``: never.
    fused_reductions_from: int | None = None

    def fuses(self, op: str, vt: VarType) -> bool:
        """Whether a reduction ``op`` over ``vt`` can be fused into a kernel (``reduce``)."""
        return False

    def launch_reduction(self, kernel, size: int, inputs: list, op: str, vt: VarType):
        """Run the fused reduction ``kernel`` (its last parameter: the partials) over ``size``
        lanes, the buffers ``inputs`` bound to its other parameters; the result as a NumPy scalar."""
        raise NotImplementedError(f"the {self.name} backend has no fused reductions")

    def axis_reduction(self, op: str, vt: VarType, size: int, inner: int) -> AxisReduction | None:
        """How this backend reduces the middle axis (``size`` entries, ``inner`` elements apart)
        of an array with ``op`` (see :class:`AxisReduction`), or ``None`` where it keeps the
        generic path (``frostjit.tensor.reduce``'s gathers): Bool, Float16 (computed in a wider
        type), bitwise ``and``/``or`` of floats.  The choice depends only on its arguments."""
        if not self.axis_fusable(op, vt, size, inner):
            return None
        return AxisReduction(op, size, inner, size)

    def axis_fusable(self, op: str, vt: VarType, size, inner: int) -> bool:
        """Whether :meth:`axis_reduction` gives an :class:`AxisReduction` (not ``None``).  Only
        comparisons of ``size`` decide it, so inside a frozen function a symbolic ``size`` (an
        axis that follows the batch size) records guards on the facts, not its value."""
        return not (vt.is_bool or vt.compute is not None or (vt.is_float and op in ("and", "or"))
                    or size < 1 or inner < 1)

    def launch_axis_reduction(self, kernel, size: int, inputs: list, red: AxisReduction, vt: VarType):
        """Run the fused axis reduction ``kernel`` (its last parameter: the partials of ``red``)
        over ``size`` lanes, the buffers ``inputs`` bound to its other parameters; the result as
        a buffer of ``size // red.size`` elements."""
        raise NotImplementedError(f"the {self.name} backend has no fused reductions")

    @abc.abstractmethod
    def reduce(self, op: str, vt: VarType, buffer, size: int):
        """Reduce a buffer with ``op`` in {"add", "mul", "min", "max", "and", "or"}; a size-1 buffer.

        ``op == "count"`` counts the true entries of a Bool buffer: a size-1 ``UInt32`` buffer.

        ``min``/``max`` ignore NaN; an empty (or, for min/max, all-NaN) input gives the
        operation's identity.
        """

    @abc.abstractmethod
    def prefix_sum(self, vt: VarType, buffer, size: int, exclusive: bool):
        """Exclusive or inclusive prefix sum of a buffer."""

    def argsort(self, vt: VarType, buffer, size: int):
        """A ``UInt32`` buffer: the stable permutation sorting ``size`` elements of the unsigned
        key buffer ``buffer`` (``UInt32``/``UInt64``) in ascending order; equal keys keep their
        order.  The host's stable sort (:func:`numpy_semantics.argsort_keys`) on the buffer."""
        return self.from_numpy(ns.argsort_keys(self.host_array(buffer, size)))

    def block_reduce(self, block: BlockReduction, vt: VarType, buffer, size: int):
        """Each run of ``block.size`` consecutive elements reduced with ``block.op`` (the last run
        may be shorter), or with ``block.prefix``, the prefix reduction within each run (same
        size as the input).  The NumPy reference semantics (``numpy_semantics.block_reduce``)
        on the host buffer; a backend overrides this where it can do better."""
        if isinstance(block, OpenAxisReduction):
            block = block.resolve(self, vt, size)
        a = self.host_array(buffer, size)
        if isinstance(block, AxisReduction):
            return self.from_numpy(ns.axis_reduce(block.op, a, block.size, block.inner))
        return self.from_numpy(ns.block_reduce(block.op, a, block.size, block.prefix, block.exclusive,
                                               block.reverse))

    @abc.abstractmethod
    def compress(self, buffer, size: int):
        """Indices (UInt32 buffer) of the true entries of a Bool buffer, and their count."""

    # -- frozen functions ----------------------------------------------------------------
    @abc.abstractmethod
    def replay_emitter(self, code):
        """A :class:`~frostjit.backend.replay.ReplayEmitter` that writes this backend's part of a
        frozen function's replay into ``code`` (a :class:`~frostjit.backend.replay.ReplayCode`)."""
