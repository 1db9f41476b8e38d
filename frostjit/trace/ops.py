"""Node constructors: the one door through which every operation enters the trace.

``make()`` checks operand sizes (size-1 broadcasts, anything else must match),
folds an operation on literal operands into a literal (:mod:`.folding`, Dr.Jit's
constant propagation; ``select`` on a literal condition is the chosen operand),
forces evaluation of operands that pending scatters write to (so side effects
stay in program order), and tells the freeze recorder about the new node.
:func:`make_binary` is the same door for the hottest case (two operands, no
parameter), :func:`make_unary` and :func:`make_ternary` for one and three operands, and
:func:`operand_literal` the door for Python numbers used as operands;
:func:`literal` (:func:`stored_literal` for a value already converted), :func:`data`,
:func:`cast` and :func:`bitcast` build the other kinds, and :func:`loop_phi`, :func:`loop`,
:func:`loop_out` the nodes of a symbolic loop (:mod:`.loops`), :func:`call_param`, :func:`call`,
:func:`call_out` those of an ``@fj.func`` call (:mod:`.calls`).  No other module creates a
:class:`~frostjit.trace.node.Node`: frozen functions' recorders and replays come through here too.  Type promotion happens one level up, in the
array classes; here every operand already has the type the operation expects.
"""
from __future__ import annotations

import math
import struct
import weakref

import numpy as np

from ..errors import ConversionOverflowError, IncompatibleSizesError, ReinterpretSizeError
from . import numpy_semantics as ns
from .dtypes import ALL_TYPES, VarType, Bool, Float32, Float64, round_to
from . import folding
from .node import Node
from .state import state

_F32 = struct.Struct("f")
_new = object.__new__


def broadcast_size(op: str, args) -> int:
    """Size of an elementwise result: operands of size 1 broadcast."""
    size = 1
    for a in args:
        s = a.size
        if s != size:
            if size == 1:
                size = s
            elif s != 1:
                sizes = ", ".join(str(x.size) for x in args)
                raise IncompatibleSizesError(
                    f"frostjit.{op}(): incompatible array sizes ({sizes}); only size-1 operands "
                    "broadcast, so these operands have incompatible sizes")
    return size


def check_array_operands(op: str, nodes) -> None:
    """Dr.Jit's rule for array operands whose sizes differ (the caller tests that they do):
    an empty one beside a non-empty one (``Float(1) + Float()``) is an error, not an empty
    result.

    Called by the array classes with the nodes of the operands that are arrays: a Python number
    beside an empty array still gives an empty one (NumPy's rule; the engine's own index
    arithmetic needs it; Dr.Jit raises there, a deliberate difference in docs/types.md).
    Inside a frozen function's recording the non-empty width is a guarded fact
    (``not (s == 0)``), so a width-0 call traces again and raises as the plain call.
    """
    for n in nodes:
        if n.size == 0:
            _raise_empty(op, nodes)
    rec = state.recorder
    if rec is not None:
        for n in nodes:
            if n.size != 1:
                rec.on_empty(n)     # False, guarded: a width-0 replay traces again


def _raise_empty(op: str, args):
    sizes = ", ".join(str(x.size) for x in args)
    raise IncompatibleSizesError(
        f"frostjit.{op}(): incompatible array sizes ({sizes}); an empty operand does not broadcast, so "
        "these operands have incompatible sizes")


def make(op: str, vt: VarType, args: tuple, value=None, extra=None, size: int | None = None) -> Node:
    """Create a pending node ``op(*args)`` of type ``vt`` (``op``: a name of the op table)."""
    if size is None:
        n = len(args)
        if n == 2 and value is None and extra is None:
            return make_binary(op, vt, args[0], args[1])
        if n == 1:
            size = args[0].size
        elif n == 3:        # (fma, select: unrolled, as make_binary is for two)
            size = args[0].size
            s = args[1].size
            if s != size:
                if size == 1:
                    size = s
                elif s != 1:
                    broadcast_size(op, args)        # raises the size error
            s = args[2].size
            if s != size:
                if size == 1:
                    size = s
                elif s != 1:
                    broadcast_size(op, args)
        else:
            size = broadcast_size(op, args)
        if args and value is None and extra is None and args[0].op == "literal":
            out = _fold_any(op, vt, args, size)
            if out is not None:
                return out
    if state.dirty:
        flush_if_dirty(args)
    node = _new(Node)       # (object.__new__ and slot stores: no __init__ frame, as in make_binary)
    node.op = op
    node.vt = vt
    node.size = size
    node.a0 = args          # (a1 None: a0 is the operand tuple, see Node)
    node.a1 = None
    node.value = value
    node.extra = extra
    node.sym = None
    rec = state.recorder
    if rec is not None:
        rec.on_node(node)
    return node


def make_binary(op: str, vt: VarType, a: Node, b: Node) -> Node:
    """``make(op, vt, (a, b))``: the door of every two-operand operation without a parameter.

    The hottest function of tracing (``x * 2 + 1`` calls it twice).  The node keeps its
    operands in its slots ``a0`` and ``a1`` (no tuple: one object per operation for the
    garbage collector, not two) and is made by ``object.__new__`` and slot stores (no
    ``__init__`` frame: ~0.1 us less than ``Node(...)`` in a micro-benchmark).
    """
    sa = a.size
    sb = b.size
    if sa != sb and sb != 1 and sa != 1:
        broadcast_size(op, (a, b))      # raises the size error
    if a.op == "literal" and b.op == "literal":     # (folding: one comparison when a is not)
        out = _fold(op, vt, (a, b), sb if sa == 1 else sa)
        if out is not None:
            return out
    elif op == "truediv":
        out = _divide_by_constant(vt, a, b)
        if out is not None:
            return out
    if state.dirty:
        flush_if_dirty((a, b))
    node = _new(Node)
    node.op = op
    node.vt = vt
    node.size = sb if sa == 1 else sa
    node.a0 = a
    node.a1 = b
    node.value = None
    node.extra = None
    node.sym = None
    rec = state.recorder
    if rec is not None:
        rec.on_node(node)
    return node


def make_unary(op: str, vt: VarType, a: Node) -> Node:
    """``make(op, vt, (a,))``: the door of one-operand operations without a parameter (``neg``
    of a complex product: the static arrays' direct paths, :mod:`frostjit.array.direct`)."""
    args = (a,)
    if a.op == "literal":
        out = _fold(op, vt, args, a.size)
        if out is not None:
            return out
    if state.dirty:
        flush_if_dirty(args)
    node = _new(Node)
    node.op = op
    node.vt = vt
    node.size = a.size
    node.a0 = args
    node.a1 = None
    node.value = None
    node.extra = None
    node.sym = None
    rec = state.recorder
    if rec is not None:
        rec.on_node(node)
    return node


def make_ternary(op: str, vt: VarType, a: Node, b: Node, c: Node) -> Node:
    """``make(op, vt, (a, b, c))``: the door of three-operand operations without a parameter
    (the ``fma`` chains of matrix products and complex numbers)."""
    size = a.size
    s = b.size
    t = c.size
    if s != size:
        if size == 1:
            size = s
        elif s != 1:
            broadcast_size(op, (a, b, c))       # raises the size error
    if t != size:
        if size == 1:
            size = t
        elif t != 1:
            broadcast_size(op, (a, b, c))
    args = (a, b, c)
    # (the test of _fold_any inline: an fma of a matrix's literal entry and a pending operand
    # is most of a transform's nodes, and a call to learn that nothing folds cost ~5% of it)
    if a.op == "literal" and (op == "select" or (b.op == "literal" and c.op == "literal")):
        out = _fold(op, vt, args, size)
        if out is not None:
            return out
    if state.dirty:
        flush_if_dirty(args)
    node = _new(Node)
    node.op = op
    node.vt = vt
    node.size = size
    node.a0 = args
    node.a1 = None
    node.value = None
    node.extra = None
    node.sym = None
    rec = state.recorder
    if rec is not None:
        rec.on_node(node)
    return node


#: Nodes that a frozen function's recording makes for a width-derived value (``x / fj.width(x)``,
#: ``fj.mean``): the plain call has a literal there, so :func:`_divide_by_constant` treats them as one.
LITERAL_STAND_INS: "weakref.WeakSet[Node]" = weakref.WeakSet()


def _divide_by_constant(vt: VarType, a: Node, b: Node):
    """``a / c`` for a literal ``c`` as Dr.Jit 1.5 computes it: ``a * rcp(c)``, the reciprocal a
    literal rounded once to the type (float32 / float64, not float16; with
    ``JitFlag.ConstantPropagation`` set).  It differs from the division in the last bit for about
    half of all ``a`` (``x / 7.0``); Dr.Jit's core makes this rewrite, so frostjit does, to give
    its bits.  A recording's stand-in for a literal (:data:`LITERAL_STAND_INS`) gets ``a * rcp(b)``
    computed in the kernel: the same bits (``rcp`` is the exact ``1 / b``), so that a replay
    computes what the plain call does.  ``None`` (the door divides) otherwise."""
    if vt is not _FLOAT32 and vt is not _FLOAT64 or not state.flags & _CONSTANT_PROPAGATION \
            or a.op == "literal":
        return None         # (of two literals, the plain call's quotient folds: exact)
    if state.recorder is not None:
        if a in LITERAL_STAND_INS:
            return None     # (so does a stand-in's: the recording divides, and marks the node one)
        if b in LITERAL_STAND_INS:
            return make_binary("mul", vt, a, make_unary("rcp", vt, b))
    if b.op != "literal":
        return None
    c = b.value
    if c == 1.0:
        return None                     # (x / 1 is x either way: Dr.Jit keeps the division's operand)
    r = 1.0 / c if c != 0.0 else math.copysign(math.inf, c)
    if vt is _FLOAT32:
        r = folding.to_f32(r)       # (double, rounded once: the correctly rounded float32 reciprocal)
    recip = stored_literal(vt, r, b.size)
    if b.sym is not None:
        recip.sym = b.sym           # (a frozen function's symbolic size carries over, as in _fold)
    return make_binary("mul", vt, a, recip)


def _fold_any(op: str, vt: VarType, args: tuple, size: int):
    """:func:`_fold` when the first operand is a literal: every operand a literal, or a
    ``select`` on a literal condition."""
    for a in args:
        if a.op != "literal":
            return _fold(op, vt, args, size) if op == "select" else None
    return _fold(op, vt, args, size)


def _fold(op: str, vt: VarType, args: tuple, size: int):
    """The literal result of ``op(*args)`` (``size`` elements) when it folds (:mod:`.folding`:
    every operand a literal, ``op`` exact), ``select(c, a, b)`` on a literal ``c``: the chosen
    operand itself (or a literal broadcast from it); else ``None``: the door makes a pending node."""
    if not state.flags & _CONSTANT_PROPAGATION:
        return None
    if op not in _FOLDABLE:
        return None
    sym = folding.result_sym(args, size) if state.recorder is not None else None
    if sym is False:
        return None
    if op == "select":
        chosen = args[1] if args[0].value else args[2]
        if chosen.size == size:
            return chosen
        if chosen.op != "literal":
            return None     # (a wider operand not chosen: the result still has its size)
        value = chosen.value
    else:
        value = folding.folded_value(op, vt, args)
    out = stored_literal(vt, value, size)
    if sym is not None:
        out.sym = sym       # a frozen function's symbolic size carries over
    return out


_CONSTANT_PROPAGATION = folding.CONSTANT_PROPAGATION
_FOLDABLE = folding.FOLDABLE
_FLOAT32, _FLOAT64 = Float32, Float64


def flush_if_dirty(nodes) -> None:
    """Evaluate pending side effects if one of ``nodes`` is their target."""
    dirty = state.dirty
    for a in nodes:
        if a in dirty:
            # The scheduler registers its evaluate() (the trace does not import layers above it).
            state.evaluate(())
            return


# Size-1 literal nodes of Python numbers used as operands (``x * 2.0``), per type, keyed by the
# number.  A literal node is never changed after it is made, so equal numbers can share one:
# the fast path then creates one node per operation instead of two.  Zeros (0.0 == -0.0) and
# NaN (never equal to itself) are not cached; neither is anything while a frozen function
# records (its recorder must see every node).
_LITERALS: dict = {vt: {} for vt in ALL_TYPES}
_LITERAL_CACHE_SIZE = 1024


def literal_cache(vt: VarType) -> dict:
    """The shared size-1 literals of type ``vt`` (``{number: node}``), for the array classes'
    fast path; a miss goes through :func:`operand_literal`."""
    return _LITERALS[vt]


def operand_literal(vt: VarType, value) -> Node:
    """A size-1 literal node for the Python number ``value`` used as an operand of type ``vt``.

    Outside frozen-function recording the node is shared with later uses of the same
    number (:func:`literal_cache`).
    """
    if state.recorder is not None:
        return literal(vt, value)
    if vt.is_float and type(value) is float and vt.itemsize == 4:
        try:
            v = _F32.unpack(_F32.pack(value))[0]
        except OverflowError:
            v = normalize_literal(vt, value)
    else:
        v = normalize_literal(vt, value)
    node = _new(Node)
    node.op = "literal"
    node.vt = vt
    node.size = 1
    node.a0 = ()
    node.a1 = None
    node.value = v
    node.extra = None
    node.sym = None
    if value != 0 and value == value:
        cache = _LITERALS[vt]
        if len(cache) >= _LITERAL_CACHE_SIZE:
            cache.clear()
        cache[value] = node
    return node


def normalize_literal(vt: VarType, value):
    """Convert a Python scalar to the exact value type ``vt`` stores.

    Integers wrap around like a C cast (``UInt32(-1)`` is 4294967295), floats
    round to the type's precision (beyond its range to +-inf, as IEEE
    arithmetic does), Bool is ``value != 0``.  This is the rule for operands
    of arithmetic; constructors check their values with :func:`convert_scalar`.
    """
    if vt is Bool:
        return bool(value)
    if vt.is_float:
        value = float(value)
        if vt.itemsize == 8:
            return value
        if vt.compute is not None:      # Float16: through Float32, as Dr.Jit rounds a Python float
            return round_to(vt, value)
        try:
            return _F32.unpack(_F32.pack(value))[0]
        except OverflowError:      # finite but beyond float32: rounds to infinity
            return math.copysign(math.inf, value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"cannot convert {value} to integer type {vt.name}")
        value = int(value)
    value = int(value)
    bits = vt.bits
    value &= (1 << bits) - 1
    if vt.is_signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def int_range(vt: VarType) -> tuple[int, int]:
    """The smallest and largest value of integer type ``vt``."""
    bits = vt.bits
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if vt.is_signed else (0, (1 << bits) - 1)


_INT_RANGES = {vt: int_range(vt) for vt in ALL_TYPES if vt.is_integral}


def convert_scalar(vt: VarType, value, who: str):
    """Convert a Python or NumPy scalar to type ``vt`` as a constructor does (``UInt32(v)``,
    ``full(UInt32, v)``, the value of a scatter): never silently narrowing.

    Integers must lie in ``vt``'s range; a float converts to an integer type by
    truncation toward zero, and the result must lie in the range too.  Out of
    range raises :class:`~frostjit.errors.ConversionOverflowError` (an
    ``OverflowError`` as in NumPy 2, and a ``TypeError`` as in Dr.Jit); NaN
    raises ``ValueError``.  Floats round to the float type (beyond its range
    to +-inf, like ``numpy.float32(1e40)``); Bool is ``value != 0``.

    Examples
    --------
    >>> convert_scalar(UInt32, -1.5, "UInt32()")
    Traceback (most recent call last):
    frostjit.errors.ConversionOverflowError: UInt32(): -1.5 is out of range for UInt32 [0, 4294967295]
    """
    t = type(value)
    if t is int:            # the common cases first: this is every constructor's path
        rng = _INT_RANGES.get(vt)
        if rng is not None and rng[0] <= value <= rng[1]:
            return value
    elif t is float and vt.is_float:
        return normalize_literal(vt, value)
    if hasattr(value, "__symbolic_size__"):
        # A width inside a frozen function: check the range with comparisons (the recording
        # guards them, they hold at other widths) and keep the value symbolic for literal().
        rng = _INT_RANGES.get(vt)
        if rng is not None and not rng[0] <= value <= rng[1]:
            raise ConversionOverflowError(f"{who}: {value} is out of range for {vt.name} [{rng[0]}, {rng[1]}]")
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if vt is Bool:
        return bool(value)
    if vt.is_float:
        try:
            return normalize_literal(vt, value)
        except OverflowError:       # a Python int beyond the float64 range
            raise ConversionOverflowError(f"{who}: the Python int {_short(value)} is too large for {vt.name}") \
                from None
    if isinstance(value, float):
        if value != value:
            raise ValueError(f"{who}: cannot convert NaN to the integer type {vt.name}")
        if value in (math.inf, -math.inf):
            raise ConversionOverflowError(f"{who}: cannot convert {value} to the integer type {vt.name}")
        iv = int(value)     # truncation toward zero, as a C cast and Dr.Jit do
    else:
        iv = int(value)
    lo, hi = _INT_RANGES[vt]
    if not lo <= iv <= hi:
        raise ConversionOverflowError(f"{who}: {_short(value)} is out of range for {vt.name} [{lo}, {hi}]")
    return iv


def _short(value) -> str:
    """``repr(value)``, abbreviated for Python ints of hundreds of digits."""
    r = repr(value)
    return r if len(r) <= 40 else f"{r[:12]}...{r[-4:]} ({len(r)} digits)"


def literal(vt: VarType, value, size: int = 1) -> Node:
    """A literal node: ``value`` broadcast to ``size`` elements, folded into kernels."""
    rec = state.recorder
    if rec is not None and hasattr(value, "__symbolic_size__"):
        # A width used as a value inside a frozen function: the recording recomputes it.
        return rec.symbolic_literal(vt, value, size)
    return stored_literal(vt, normalize_literal(vt, value), size)


def stored_literal(vt: VarType, value, size: int = 1) -> Node:
    """A literal node for a ``value`` already of the type ``vt`` stores (what
    :func:`normalize_literal` returns): a frozen function's replay rebuilds its recorded
    literals through this door, with no conversion."""
    # (object.__new__ and plain stores: ~50 ns less than Node(...), on every replay's outputs)
    node = _new(Node)
    node.op = "literal"
    node.vt = vt
    node.size = size
    node.a0 = ()
    node.a1 = None
    node.value = value
    node.extra = None
    node.sym = None
    rec = state.recorder
    if rec is not None:
        rec.on_node(node)
    return node


def data(vt: VarType, buffer, size: int) -> Node:
    """An evaluated node wrapping a backend buffer of ``size`` elements."""
    node = _new(Node)
    node.op = "data"
    node.vt = vt
    node.size = size
    node.a0 = ()
    node.a1 = None
    node.value = buffer
    node.extra = None
    node.sym = None
    rec = state.recorder
    if rec is not None:
        rec.on_node(node)
    return node


def data_source(var: str, vt: str, buffer: str, size: str) -> str:
    """Python source of one statement that makes ``var`` the node :func:`data` returns for the
    expressions ``vt``, ``buffer``, ``size``, without telling a recorder (for generated replays,
    which run it only while ``state.recorder is None``; it needs ``NODE_NEW`` and ``Node``
    in their namespace).  Kept beside :func:`data`: the same fields, the same values."""
    return (f"{var} = NODE_NEW(Node); {var}.op = 'data'; {var}.vt = {vt}; {var}.size = {size}; "
            f"{var}.a0 = (); {var}.a1 = None; {var}.value = {buffer}; {var}.extra = None; {var}.sym = None")


def cast(node: Node, vt: VarType) -> Node:
    """Convert ``node`` to type ``vt`` (literals are converted at trace time, with the
    conversion's reference semantics, so a folded literal is what a kernel would compute)."""
    if node.vt is vt:
        return node
    if node.op == "literal" and state.flags & _CONSTANT_PROPAGATION:
        src = np.array([node.value], dtype=node.vt.np_dtype)
        if ns.cast_unspecified(vt, src)[0]:
            v = 0       # NaN, +-inf or out of range: unspecified (the hardware decides in a kernel)
        else:
            v = ns.cast(vt, src)[0].item()
        out = literal(vt, v, node.size)
        out.sym = node.sym      # a frozen function's symbolic size carries over
        return out
    return make("cast", vt, (node,), value=vt)


def bitcast(node: Node, vt: VarType) -> Node:
    """Reinterpret the bits of ``node`` as type ``vt`` (same width required)."""
    if vt.itemsize != node.vt.itemsize or (vt is Bool) != (node.vt is Bool):
        raise ReinterpretSizeError(f"reinterpret_array(): cannot reinterpret-cast between types of different "
                                   f"size ({node.vt.name} as {vt.name}: different bit widths)")
    if vt is node.vt:
        return node
    if node.op == "literal" and folding.enabled():     # (the same bits, as a kernel reads them)
        v = ns.bitcast(vt, np.array([node.value], dtype=node.vt.np_dtype))[0].item()
        out = stored_literal(vt, v, node.size)
        if state.recorder is not None:
            out.sym = node.sym      # a frozen function's symbolic size carries over
        return out
    return make("bitcast", vt, (node,), value=vt)


def loop_phi(vt: VarType, width: Node, index: int, record) -> Node:
    """The placeholder of state variable ``index`` of a symbolic loop (:mod:`.loops`).

    ``width`` is a node of the loop's width (an initial value or a free node of the loop): the
    placeholder's only operand, so its size (and a frozen function's symbolic size) is the
    loop's.  ``record`` is the loop's :class:`~.loops.LoopRecord`.
    """
    return make("loop_phi", vt, (width,), value=index, extra=record, size=width.size)


def loop(record, initial: tuple, free: tuple) -> Node:
    """The node of a symbolic loop: operands ``initial`` (the state's first values) then ``free``
    (what the condition and the body read besides the state); ``record`` holds the body."""
    args = tuple(initial) + tuple(free)
    size = broadcast_size("while_loop", args) if args else 1
    return make("loop", Bool, args, extra=record, size=size)


def loop_out(node: Node, vt: VarType, index: int) -> Node:
    """The final value of state variable ``index`` of the symbolic loop ``node``."""
    out = make("loop_out", vt, (node,), value=index, size=node.size)
    node.extra.add_output(out)
    return out


def call_param(vt: VarType, index: int, name: str) -> Node:
    """The placeholder of parameter ``index`` of the ``@fj.func`` body of the function ``name``
    (:mod:`.calls`): one lane of the argument, size 1, never computed outside the body."""
    return make("call_param", vt, (), value=index, extra=name, size=1)


def call(record, args: tuple, size: int) -> Node:
    """The node of one call of an ``@fj.func`` body: operands ``args`` (one per parameter of
    ``record``, a :class:`~.calls.FuncRecord`), ``size`` lanes."""
    return make("call", Bool, tuple(args), extra=record, size=size)


def call_out(node: Node, vt: VarType, index: int) -> Node:
    """Array result ``index`` of the call ``node``."""
    return make("call_out", vt, (node,), value=index, size=node.size)
