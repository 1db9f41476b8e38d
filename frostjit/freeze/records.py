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
:data:`Operation` is one of :class:`Launch`, :class:`Reduce`, :class:`PrefixSum`, :class:`Argsort`,
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
class Argsort:
    """``out`` = the stable ascending permutation (``UInt32``) of ``size`` unsigned keys of
    ``src`` (``Backend.argsort``)."""

    vt: VarType
    src: int
    size: Sym
    out: int
    history_type: ClassVar[str] = "argsort"

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


Operation = Union[Launch, Reduce, PrefixSum, Argsort, BlockReduce, Compress, Copy, Fill, FillWidth, Upload, UploadInput, BoundsCheck]


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


# ----------------------------------------------------------------------- output descriptors
# What a recording returned, described once when recorded (:mod:`.outputs`), rebuilt by every
# replay: :func:`.outputs.generate_finish` turns a descriptor into straight-line code, and
# :func:`.outputs.build` interprets it for the recorded call itself.  Outputs are rebuilt
# without running user constructors (see :mod:`.outputs`).
@dataclass(frozen=True, slots=True)
class ArrayOut:
    """A fresh array of type ``cls`` around node-table entry ``node``.

    ``grad_enabled``: it was grad-enabled when recorded, so every replay makes it a new AD leaf
    with gradient ``grad`` (a descriptor, or None).  ``hub_slot``: instead of a new leaf it is
    output slot ``hub_slot`` of the replay's hub, so gradients flow through it to the inputs
    (:mod:`.through`); None otherwise.
    """

    cls: type
    node: int
    grad_enabled: bool = False
    grad: "OutputDesc | None" = None
    hub_slot: "int | None" = None


@dataclass(frozen=True, slots=True)
class InputArray:
    """The live input array number ``index`` of the call (passed through)."""

    index: int


@dataclass(frozen=True, slots=True)
class InputAlias:
    """A new ``cls`` array object on the variable of input array number ``index`` (its node and AD
    vertex): ``Float(x)``, a tensor or texture made around an input's array.  Sharing the input's
    AD vertex, it passes gradients exactly as the plain call's object does (no hub needed)."""

    index: int
    cls: type


@dataclass(frozen=True, slots=True)
class InputContainer:
    """The live input container number ``index`` of the call (passed through)."""

    index: int


@dataclass(frozen=True, slots=True)
class PythonValue:
    """A Python value returned as it is (a number, a string, an object freeze does not look into)."""

    value: object


@dataclass(frozen=True, slots=True)
class WidthOut:
    """Symbolic output number ``index``: a width or count the replay recomputes (``fj.width(x)``)."""

    index: int


@dataclass(frozen=True, slots=True)
class SharedOut:
    """The object described by ``desc``, reached more than once: built once as shared object ``index``."""

    index: int
    desc: "OutputDesc"


@dataclass(frozen=True, slots=True)
class SharedRef:
    """A further reference to shared object ``index`` (built by its :class:`SharedOut`)."""

    index: int


@dataclass(frozen=True, slots=True)
class VectorOut:
    """A static vector of type ``cls`` with components ``items``."""

    cls: type
    items: tuple


@dataclass(frozen=True, slots=True)
class SequenceOut:
    """An exact ``tuple`` or ``list`` (``cls``) of ``items``."""

    cls: type
    items: tuple


@dataclass(frozen=True, slots=True)
class DictOut:
    """An exact ``dict``: ``keys`` (recorded values) mapped to ``items``."""

    keys: tuple
    items: tuple


@dataclass(frozen=True, slots=True)
class ObjectOut:
    """An instance of ``cls`` made without a constructor, with ``__dict__`` entries ``names`` ->
    ``values`` and slots ``slots`` -> ``slot_values``."""

    cls: type
    names: tuple
    values: tuple
    slots: tuple
    slot_values: tuple


@dataclass(frozen=True, slots=True)
class ContainerOut:
    """A ``tuple``/``list``/``dict`` subclass instance: ``items`` (at ``keys`` for a dict; None
    for a sequence), a ``defaultdict``'s ``factory`` (a descriptor, or None) and its instance
    state as in :class:`ObjectOut`."""

    cls: type
    keys: "tuple | None"
    items: tuple
    factory: "OutputDesc | None"
    names: tuple
    values: tuple
    slots: tuple
    slot_values: tuple


@dataclass(frozen=True, slots=True)
class ReduceOut:
    """An object rebuilt through its copy protocol (deques, partials, bound methods):
    ``func(*args)``, then ``state`` (a descriptor or None), list ``items`` and dict items
    ``keys`` -> ``values`` (None where the protocol has none)."""

    func: object
    args: tuple
    state: "OutputDesc | None"
    items: "tuple | None"
    keys: "tuple | None"
    values: "tuple | None"


@dataclass(frozen=True, slots=True)
class ConstructedOut:
    """``cls.__fj_construct__({names: values})`` (a traversal-protocol class that builds itself)."""

    cls: type
    names: tuple
    values: tuple


@dataclass(frozen=True, slots=True)
class FunctionOut:
    """A copy of the returned closure ``fn`` around described ``defaults``, keyword defaults
    ``kwdefaults`` and closure ``cells``, so that it sees the replay's arrays."""

    fn: object
    defaults: tuple
    kwdefaults: tuple
    cells: tuple


@dataclass(frozen=True, slots=True)
class CellOut:
    """A closure cell holding ``contents`` (a descriptor), or an empty cell (``contents`` None)."""

    contents: "OutputDesc | None" = None


OutputDesc = Union[ArrayOut, InputArray, InputAlias, InputContainer, PythonValue, WidthOut, SharedOut, SharedRef, VectorOut,
                   SequenceOut, DictOut, ObjectOut, ContainerOut, ReduceOut, ConstructedOut, FunctionOut, CellOut]
OUTPUT_DESCRIPTORS = OutputDesc.__args__


def nested_descriptors(d) -> list:
    """The descriptors directly inside descriptor ``d`` (not inside a :class:`PythonValue`)."""
    out = []
    if type(d) is PythonValue:
        return out
    for name in d.__slots__:
        v = getattr(d, name)
        if isinstance(v, OUTPUT_DESCRIPTORS):
            out.append(v)
        elif type(v) is tuple:
            out.extend(x for x in v if isinstance(x, OUTPUT_DESCRIPTORS))
    return out


# ---------------------------------------------------------------------- write-back actions
# What a recording stored into its inputs, repeated by every replay after its launches.
@dataclass(frozen=True, slots=True)
class SetNode:
    """Input array number ``leaf`` was changed in place (``x += 1``): its node becomes node-table
    entry ``node``."""

    leaf: int
    node: int


@dataclass(frozen=True, slots=True)
class SetEntry:
    """Entry ``key`` of input container number ``container`` (a dict key, an attribute, an item)
    becomes ``value`` (a descriptor)."""

    container: int
    key: object
    value: OutputDesc


@dataclass(frozen=True, slots=True)
class SetDictItem:
    """Key ``key`` of input container number ``container``, an exact ``dict`` (the layout key
    fixes its type), becomes ``value``: a plain item store in the generated code."""

    container: int
    key: object
    value: OutputDesc


@dataclass(frozen=True, slots=True)
class DelEntry:
    """Entry ``key`` of input container number ``container`` was deleted."""

    container: int
    key: object


@dataclass(frozen=True, slots=True)
class SetItems:
    """All items of input container number ``container`` (a list, deque or static vector)
    become ``items`` (descriptors)."""

    container: int
    items: tuple


@dataclass(frozen=True, slots=True)
class AssignAll:
    """Input container number ``container`` (a traversal-protocol object with ``__fj_assign__``)
    is given all its children: ``names`` -> ``values`` (descriptors)."""

    container: int
    names: tuple
    values: tuple


WriteBack = Union[SetNode, SetEntry, SetDictItem, DelEntry, SetItems, AssignAll]


# ---------------------------------------------------------------------- guard roots
# Where a guard finds the object it reads (guards.py): one per guarded atom.
@dataclass(frozen=True, slots=True, eq=False)
class ConstRoot:
    """An object outside the inputs (a module's globals, a class, a closure cell), held by the
    guard itself (``None`` for a guard that reads no holder, such as ``abc``'s cache token)."""

    holder: object


@dataclass(frozen=True, slots=True)
class ContainerRoot:
    """Input container number ``index`` of the call (its ``__dict__`` when ``via_dict``)."""

    index: int
    via_dict: bool


@dataclass(frozen=True, slots=True)
class NumpyRoot:
    """NumPy input array number ``index`` of the call."""

    index: int


GuardRoot = Union[ConstRoot, ContainerRoot, NumpyRoot]
