"""The vocabulary of a recording: slots, recorded operations, guards and the node table.

While a frozen function records, the recorder (:mod:`.recorder`) writes down what the
engine did, against *slots* instead of buffers and *symbolic sizes* (:class:`~.symbolic.Sym`)
instead of numbers.  The replay generator (:mod:`.replay_code`) turns these records into one
Python function.  Every record is an immutable named type defined here, so a reader never
has to reverse-engineer a tuple.

Slots
-----
A slot is a buffer of the recorded call, numbered in the order the recorder met it.  In the
replay, slot ``k`` is the local variable ``buffer_<k>``.  :class:`SlotSource` says where it
comes from: an input of the call, the output of a recorded operation, or an array the
function captured (a global, a closure cell) that is not among its inputs.

Operations
----------
:data:`Operation` is one of :class:`Launch`, :class:`Reduce`, :class:`PrefixSum`,
:class:`Compress`, :class:`Copy`, :class:`Fill`, :class:`FillWidth`, :class:`Upload`,
:class:`UploadInput` and :class:`BoundsCheck`.  Each names the slots it reads
(:meth:`reads`) and the slot it writes (``out``; a launch writes several).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar, NamedTuple, Union

import numpy as np

from ..backend.kernel import OUT, SCATTER_DST
from ..trace.dtypes import VarType
from .symbolic import Sym


# ------------------------------------------------------------------------------------ slots
class SlotOrigin(str, enum.Enum):
    """Where a slot's buffer comes from."""

    INPUT = "in"            #: an input array of the call (``index``: its position among the input nodes)
    OPERATION = "op"        #: written by a recorded operation (``index``: its position in the recording)
    CAPTURED = "cap"        #: an array the function reached without it being an input (``index``: capture number)


class SlotSource(NamedTuple):
    """The origin of one slot: a :class:`SlotOrigin` and an index whose meaning it gives."""

    origin: SlotOrigin
    index: int


# ------------------------------------------------------------------------------ operations
class LaunchParam(NamedTuple):
    """One parameter of a recorded kernel launch: its kind (``backend.kernel.IN``, ...), type
    and slot."""

    kind: str
    vt: VarType
    slot: int


@dataclass(frozen=True, slots=True)
class Launch:
    """A compiled kernel run over ``size`` lanes with ``params`` bound to slots."""

    kernel: object
    size: Sym
    params: tuple          # of LaunchParam
    history_type: ClassVar[str] = "jit"

    def reads(self) -> list:
        return [p.slot for p in self.params if p.kind != OUT]

    def writes(self) -> list:
        return [p.slot for p in self.params if p.kind == OUT]


@dataclass(frozen=True, slots=True)
class Reduce:
    """``out`` = the reduction ``op`` ("add", "mul", "min", "max", "and", "or") of ``size``
    elements of ``src`` (a size-1 buffer)."""

    op: str
    vt: VarType
    src: int
    size: Sym
    out: int
    history_type: ClassVar[str] = "reduce"

    def reads(self) -> list:
        return [self.src]


@dataclass(frozen=True, slots=True)
class PrefixSum:
    """``out`` = the (exclusive or inclusive) prefix sum of ``size`` elements of ``src``."""

    exclusive: bool
    vt: VarType
    src: int
    size: Sym
    out: int
    history_type: ClassVar[str] = "prefix_sum"

    def reads(self) -> list:
        return [self.src]


@dataclass(frozen=True, slots=True)
class BlockReduce:
    """``out`` = the block reduction ``block`` (a :class:`~frostjit.backend.base.BlockReduction`)
    of ``size`` elements of ``src``."""

    block: object
    vt: VarType
    src: int
    size: Sym
    out: int
    history_type: ClassVar[str] = "block_reduce"

    def reads(self) -> list:
        return [self.src]


@dataclass(frozen=True, slots=True)
class Compress:
    """``out`` = the indices of the true entries among ``size`` elements of the Bool slot
    ``src``; their number is the symbol ``c<count>`` of later sizes."""

    src: int
    size: Sym
    count: int
    out: int
    history_type: ClassVar[str] = "compress"

    def reads(self) -> list:
        return [self.src]


@dataclass(frozen=True, slots=True)
class Copy:
    """``out`` = a copy of ``size`` elements of ``src`` (a scatter's copy-on-write)."""

    vt: VarType
    src: int
    size: Sym
    out: int
    history_type: ClassVar[str] = "copy"

    def reads(self) -> list:
        return [self.src]


@dataclass(frozen=True, slots=True)
class Fill:
    """``out`` = ``size`` elements equal to the constant ``value`` (a literal made concrete)."""

    vt: VarType
    value: object
    size: Sym
    out: int
    history_type: ClassVar[None] = None

    def reads(self) -> list:
        return []


@dataclass(frozen=True, slots=True)
class FillWidth:
    """``out`` = one element, a width-derived value recomputed by every replay
    (``x + fj.width(x)``, ``fj.mean``)."""

    vt: VarType
    value: Sym
    out: int
    history_type: ClassVar[None] = None

    def reads(self) -> list:
        return []


@dataclass(frozen=True, slots=True)
class Upload:
    """``out`` = a copy of ``snapshot``, an array built from Python data inside the function
    (``Float([1, 2])``), a constant of the recording."""

    vt: VarType
    snapshot: np.ndarray
    out: int
    history_type: ClassVar[None] = None

    def reads(self) -> list:
        return []


@dataclass(frozen=True, slots=True)
class UploadInput:
    """``out`` = the NumPy input number ``input`` of the call, converted to ``vt`` (re-read at
    every replay)."""

    vt: VarType
    input: int
    out: int
    history_type: ClassVar[None] = None

    def reads(self) -> list:
        return []


class SlotOperand(NamedTuple):
    """An operand of a bounds check held in a slot."""

    slot: int


class LiteralOperand(NamedTuple):
    """An operand of a bounds check that is one value for every lane."""

    value: object


@dataclass(frozen=True, slots=True)
class BoundsCheck:
    """``JitFlag.Debug``: raise ``IndexError`` (as the plain call does) if an active ``index``
    is outside ``[0, target_size)``; writes nothing."""

    who: str
    index: Union[SlotOperand, LiteralOperand]
    active: Union[SlotOperand, LiteralOperand]
    index_size: Sym
    active_size: Sym
    target_size: Sym
    history_type: ClassVar[None] = None

    def reads(self) -> list:
        return [x.slot for x in (self.index, self.active) if type(x) is SlotOperand]


Operation = Union[Launch, Reduce, PrefixSum, BlockReduce, Compress, Copy, Fill, FillWidth, Upload, UploadInput, BoundsCheck]


def scatters_into_captured(ops, slot_sources) -> bool:
    """Whether an operation writes into a captured slot (a scatter target, or the copy a
    scatter makes of it): such a recording cannot be replayed."""
    for op in ops:
        if type(op) is Launch:
            for p in op.params:
                if p.kind == SCATTER_DST and slot_sources[p.slot].origin is SlotOrigin.CAPTURED:
                    return True
        elif type(op) is Copy and slot_sources[op.src].origin is SlotOrigin.CAPTURED:
            return True
    return False


# ---------------------------------------------------------------------------------- guards
class Guard(NamedTuple):
    """A fact the recording depends on, checked by every replay.

    Attributes
    ----------
    expr : str
        A Python expression over the size symbols that must be true (``s0 == 7``).
    ready : int
        The index of the operation after which its symbols are known (-1: before the replay
        starts; a ``compress`` count is known after that ``compress``).
    why : str
        What the guard protects, for the re-trace message.
    """

    expr: str
    ready: int
    why: str


# ------------------------------------------------------------------------------ node table
class BufferEntry(NamedTuple):
    """An output node holding the buffer of ``slot`` (of ``size`` elements of ``vt``)."""

    slot: int
    vt: VarType
    size: Sym


class LiteralEntry(NamedTuple):
    """An output node that is a literal: ``value`` broadcast to ``size`` elements."""

    vt: VarType
    value: object
    size: Sym


class InputEntry(NamedTuple):
    """An output node that is input node number ``index`` of the call (passed through)."""

    index: int


class CapturedEntry(NamedTuple):
    """An output node that is the captured node number ``index`` (passed through)."""

    index: int


NodeEntry = Union[BufferEntry, LiteralEntry, InputEntry, CapturedEntry]
