"""The kernel contract: what the scheduler hands a backend to compile and launch.

A :class:`KernelSpec` is a straight-line SSA program over one *lane* of a launch:
instructions refer to earlier instructions by index, buffers by parameter index.  It
contains no sizes, no addresses and no trace nodes, so the same spec (and the same
compiled kernel) serves every launch width, and a backend never needs to know where the
spec came from (the scheduler's subclass adds the nodes bound to the parameters, see
``frostjit/schedule/kernel.py``).

Instructions (``Instr.op``; ``args`` index earlier instructions, ``value`` as listed)::

    load      value: parameter index (an IN or IN_SCALAR parameter)
    store     args: (value,)             value: parameter index (an OUT parameter)
    literal   value: the constant (a Python number of the instruction's type)
    counter   the lane index (the launch covers lanes 0 .. size - 1)
    gather    args: (index, active)      value: parameter index (a GATHER_SRC parameter)
    scatter   args: (value, index, active)  value: (parameter index, reduction or None)
    scatter_rmw  args: ([compare,] value, index, active)  value: (parameter index, kind)
              an atomic read-modify-write of one element per active lane, whose result is
              the element's value before it (0 on inactive or out-of-bounds lanes); kinds
              (:data:`RMW_KINDS`): ``"inc"`` adds ``value`` (``scatter_inc``), ``"exch"``
              writes it, ``"cas"`` writes it where the element equals ``compare`` bit for bit.
              Lanes hitting one element act one after the other (on one thread: in lane
              order); only in symbolic loop regions (``fj.scatter_inc`` & co. elsewhere are
              array operations)
    reduce    args: (value,)             value: (parameter index, op)  a PARTIAL parameter:
              element k holds ``op`` over the lanes of row k (rows of a length the backend
              chooses, the same at every launch; "add", "mul", "min", "max", "and", "or");
              an axis reduction adds ``(segment, inner)``: partials per segment of an axis
              (``AxisReduction`` in backend/base.py, the layout in codegen/reductions.py)
    cast, bitcast   value: the target type
    any other lane-wise operation by its name (add, sin, select, ...): args are its operands

A *loop region* (a symbolic loop, ``fj.while_loop(..., mode="symbolic")``) is a run of
instructions between ``loop_start`` and ``loop_end`` that executes repeatedly, each lane until
its condition is false::

    loop_start  args: the initial state values       value: a LoopInfo record (below)
    loop_phi    args: (start,)   value: j            the state variable j at the top of an iteration
    ... the condition's instructions ...
    loop_cond   args: (start, condition)             (Bool) a lane runs the body while its
                                                     condition holds; ``loop_end`` follows when
                                                     no lane of the group runs it
    ... the body's instructions ...
    loop_end    args: (start, new value of each state variable)
    loop_out    args: (start,)   value: j            the final value of state variable j

``start`` is the index of the ``loop_start`` instruction.  The ``loop_phi`` instructions follow
``loop_start`` directly, one per state variable, of the initial values' types; the ``loop_out``
instructions come after ``loop_end``.  A lane whose condition was false once is *retired*: its
state keeps its value and it runs no more iterations (a backend may still compute the body on
it, but must drop the results; the body's gathers carry the condition in their ``active``
operand).  Loops nest: the initial lanes of an inner loop are the lanes running the enclosing
body.  Instructions inside a region use only instructions of the region or from before it, and
instructions after ``loop_end`` use nothing from inside it but the ``loop_out`` values.  A loop
region contains no ``store`` or ``load``; it may contain the body's ``scatter`` instructions,
which run every iteration (their ``active`` operand carries the condition).

A *call* (of an ``@fj.func`` function, :mod:`frostjit.control.func`) runs a function's body, a
program of its own over one lane, on the call's arguments::

    call        args: the argument values        value: a CallInfo (the body, below)
    call_out    args: (call,)    value: j        array result j of the call

The body (``CallInfo.body``) is an SSA list like a kernel's, whose first instructions are
``call_param`` (value: j), one per argument, of the types ``CallInfo.params``; it contains
lane-wise operations, literals and calls only (no memory access, no loop region), and
``CallInfo.results`` are the indices of its results.  Calls with equal ``CallInfo`` run the same
function: a backend may compile it once per kernel (the LLVM backend emits an internal
function) or evaluate the body at each call.

Out-of-bounds (or inactive) gathers read 0; out-of-bounds (or inactive) scatters write
nothing.  A gather never reads a buffer that the same kernel scatters into (the
scheduler's copy-on-write guarantees it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ..trace.dtypes import VarType, float_bits

# Parameter kinds: how a kernel uses a buffer.  Plain strings (not an Enum): spec keys are
# hashed on every launch, and a str hashes in C.
IN = "in"            #: elementwise input, one element per lane
IN_SCALAR = "in1"    #: size-1 input broadcast to every lane
OUT = "out"          #: elementwise output (allocated by the launcher, one element per lane)
GATHER_SRC = "src"   #: random-access read (the buffer and its element count)
SCATTER_DST = "dst"  #: random-access write (the buffer and its element count)
PARTIAL = "part"     #: a fused reduction's partials: one element per row of lanes (see ``reduce``)

PARAM_KINDS = (IN, IN_SCALAR, OUT, GATHER_SRC, SCATTER_DST, PARTIAL)


class LoopInfo(NamedTuple):
    """The ``value`` of a ``loop_start`` instruction: where the region's parts are.

    Attributes
    ----------
    n_state : int
        The number of state variables (``loop_phi`` instructions right after ``loop_start``).
    cond : int
        The index of the region's ``loop_cond`` instruction.
    end : int
        The index of its ``loop_end`` instruction.
    """

    n_state: int
    cond: int
    end: int


#: The kinds of ``scatter_rmw`` (see the module docstring).
RMW_KINDS = frozenset({"inc", "exch", "cas"})


#: The operations of loop regions (see the module docstring).
LOOP_OPS = frozenset({"loop_start", "loop_phi", "loop_cond", "loop_end", "loop_out"})


#: The operations of calls (see the module docstring).
CALL_OPS = frozenset({"call", "call_param", "call_out"})


class CallInfo:
    """The ``value`` of a ``call`` instruction: the function's body.

    Equal (and equally hashed) when the bodies are equal instruction by instruction (floats by
    their bits), so it is its own part of a kernel's key.

    Attributes
    ----------
    name : str
        The function's name (for generated code and messages).
    params : tuple[VarType, ...]
        The parameters' types (the ``call_param`` instructions at the start of ``body``).
    body : tuple[Instr, ...]
        The program over one lane.
    results : tuple[int, ...]
        The indices in ``body`` of the results, in ``call_out`` order.
    """

    __slots__ = ("name", "params", "body", "results", "key", "_hash")

    def __init__(self, name: str, params: tuple, body: tuple, results: tuple):
        self.name = name
        self.params = params
        self.body = body
        self.results = results
        self.key = (params, tuple([i if type(i.value) is not float else instr_key(i) for i in body]), results)
        self._hash = hash(self.key)

    def __eq__(self, other) -> bool:
        return self is other or (type(other) is CallInfo and self._hash == other._hash and self.key == other.key)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"CallInfo({self.name!r}, {len(self.params)} parameters, {len(self.body)} instructions)"


class Instr(NamedTuple):
    """One SSA instruction (see the module docstring for each ``op``).

    A named tuple: cheap to make, and its own part of a spec's key when its value is not a
    float.

    Attributes
    ----------
    op : str
        The operation's name.
    vt : VarType
        The result type.
    args : tuple[int, ...]
        Indices of earlier instructions, the operands.
    value : object
        A literal value, cast target, parameter index, ... (depends on ``op``).
    """

    op: str
    vt: VarType
    args: tuple = ()
    value: object = None


@dataclass(slots=True)
class KernelSpec:
    """A kernel: its instructions and its parameter list.

    Attributes
    ----------
    instrs : list[Instr]
        The program over one lane, in order.
    params : list[tuple[str, VarType]]
        ``(kind, element type)`` of each parameter (kinds: :data:`IN`, :data:`IN_SCALAR`,
        :data:`OUT`, :data:`GATHER_SRC`, :data:`SCATTER_DST`).
    has_side_effects : bool
        Whether the kernel scatters.

    Examples
    --------
    ``y = x * 0.5`` over Float32 buffers::

        KernelSpec(instrs=[Instr("load", Float32, (), 0), Instr("literal", Float32, (), 0.5),
                           Instr("mul", Float32, (0, 1)), Instr("store", Float32, (2,), 1)],
                   params=[(IN, Float32), (OUT, Float32)])
    """

    instrs: list = field(default_factory=list)
    params: list = field(default_factory=list)
    has_side_effects: bool = False

    def key(self) -> tuple:
        """A hashable structural key: equal keys give equal code (sizes and buffers excluded)."""
        return (tuple(self.params), tuple([i if type(i.value) is not float else instr_key(i) for i in self.instrs]))


def literal_key(v):
    """``v`` as a part of a key: floats by their exact bits (-0.0 == 0.0 and NaN != NaN; a NaN's
    sign and payload too: :func:`~frostjit.trace.dtypes.float_bits`)."""
    return ("f", float_bits(v)) if type(v) is float else v


def instr_key(ins: Instr) -> tuple:
    """An instruction as a part of a key (see :func:`literal_key`)."""
    return (ins.op, ins.vt, ins.args, literal_key(ins.value))
