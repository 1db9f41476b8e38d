"""The recorder: watches the engine while a frozen function runs for real, and writes down
everything it launched, against *slots* instead of buffers and *symbols* instead of sizes.

The engine reaches it through ``state.recorder`` (one ``is not None`` test on its hot paths):

* ``on_node(node)``: every node created (``ops.make``/``literal``/``data``) gets ``node.sym``;
  equal concrete sizes with different symbols add a guard.
* ``on_launch(kernel, spec, size, buffers, effects)``: a compiled kernel launch.
* ``on_memop(kind, param, inputs, outputs, count)``: reduce, prefix_sum, argsort, compress, copy, fill.
* ``on_upload(array, node)``: a NumPy array became a data node (an input one is re-read at
  replay; any other upload is a constant of the recording).
* ``on_read(node, what)``: user code read array data; the recording depends on data and is
  never replayed (see :mod:`.frozen`).
* ``on_width`` / ``on_len``, ``sized_literal``, ``sized_counter``, ``symbolic_max``,
  ``symbolic_literal``: sizes and width-derived values stay symbolic (:mod:`.symbolic`).

Buffers are mapped to slots by ``id()``; the recorder keeps every buffer it saw alive until it
is released, so ids are not reused.  Nodes are tracked through ``node.sym`` (and weak
references), never held strongly: the engine's scatter copy-on-write counts node references.

Extension point for AD (and any other engine part that creates a node whose size follows
another node's): set ``new.sym = old.sym`` after creating it, as ``memops.copy`` does.
"""
from __future__ import annotations

import operator
import re
import threading
import weakref

import numpy as np

from ..backend import current_backend
from ..backend.kernel import OUT
from .records import (SlotOrigin, SlotSource, LaunchParam, Launch, Reduce, PrefixSum, Argsort, BlockReduce, Compress, Copy, Fill,
                      FillWidth, Upload, UploadInput, BoundsCheck, SlotOperand, LiteralOperand, Guard)
from ..trace import ops
from ..trace.dtypes import UInt32, Int64
from ..trace.folding import FOLDABLE as _FOLDS
from ..trace.ops import normalize_literal
from ..trace.state import state
from .symbolic import Sym, const, ONE, call, _expr, _ready
from .values import value_key


_MEMOPS = frozenset({"compress", "reduce", "prefix_sum", "argsort", "block_reduce", "copy", "fill"})
_PIN = re.compile(r"^s(\d+) == (\d+)$")
_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge}


class Recorder:
    """Observes one recording in one thread (see module docstring)."""

    def __init__(self, name: str):
        self.name = name
        self.thread = threading.get_ident()
        self.active = True
        self.ops: list = []              # the recorded operations (records.Operation)
        self.buffers: list = []          # slot -> buffer (kept alive while recording)
        self.slot_of: dict = {}          # id(buffer) -> slot
        self.slot_kind: list = []        # slot -> records.SlotSource
        self.slot_size: list = []        # slot -> Sym of its element count
        self.slot_vt: list = []
        self.captured: list = []         # j -> weakref to a node created before the recording
        self.guards: list = []           # records.Guard
        self._guard_set: set = set()
        self.n_counts = 0                # compress counts c0, c1, ...
        self.data_dependent: str | None = None
        self.interfered: str | None = None      # another thread's work mixed in: not kept at all
        self._pending: list = []         # weakrefs to data nodes of unknown origin (uploads)
        self.np_inputs: list = []        # NumPy arrays among the inputs, by input order
        self.n_input_slots = 0
        self.consts: dict = {}           # name -> constant of the expressions (see const_expr)
        self.sym_sizes: dict = {}        # size -> a symbolic size with that value (see sym_of)
        self.pins: dict = {}             # size class -> the size a guard pins it to (s0 == 7)
        self.effects: dict = {}          # id -> weakref of the scatters queued by this recording
        self._const_names: dict = {}     # value_key -> name

    # -- helpers ---------------------------------------------------------------------
    def mine(self) -> bool:
        return self.active and threading.get_ident() == self.thread

    def sym_of(self, node) -> Sym:
        s = node.sym
        if s is None or (s.rec is not None and s.rec is not self):
            s = const(node.size)
        if s.rec is None and node.size != 1:
            # Every size in a recording is symbolic or guarded: a constant size that equals a
            # width of this call may have been computed from it out of sight (a size read from a
            # freed node, NumPy, Python data), so the recording holds only while they agree.
            w = self.sym_sizes.get(node.size)
            if w is not None:
                self.guard_equal(w, s, "an array of constant size equal to a width")
        return s

    def _set_sym(self, node, sym: Sym) -> None:
        if node.size == 1 and not sym.is_const:
            self.guard_equal(sym, ONE, "a size-1 array (size 1 broadcasts, wider sizes do not)")
            sym = ONE
        elif not sym.is_const:
            self.sym_sizes.setdefault(node.size, sym)
        node.sym = sym

    def add_guard(self, expr: str, ready: int, why: str) -> None:
        if expr not in self._guard_set:
            self._guard_set.add(expr)
            self.guards.append(Guard(expr, ready, why))
            m = _PIN.match(expr)
            if m is not None and ready == -1:   # an input size pinned exactly: the cache indexes it
                self.pins[int(m.group(1))] = int(m.group(2))

    def guard_equal(self, a: Sym, b: Sym, why: str) -> None:
        if a.expr != b.expr:
            self.add_guard(f"{a.expr} == {b.expr}", max(a.ready, b.ready), why)

    def guard_value(self, s: Sym, what: str) -> None:
        """``s`` escaped into Python with its value: the replay needs exactly that value."""
        v = s.value
        expr = f"{s.expr} == {v!r}" if type(v) is int else f"same_value({s.expr}, {self.const_expr(v)})"
        self.add_guard(expr, s.ready, f"a width used as a Python value by {what}")

    def guard_compare(self, a, op: str, b, what: str) -> bool:
        """The outcome of ``a <op> b`` (Syms or numbers) seen by Python: guarded, returned."""
        fn = _COMPARE[op]
        result = bool(fn(a.value if type(a) is Sym else a, b.value if type(b) is Sym else b))
        e = f"({_expr(self, a)} {op} {_expr(self, b)})"
        self.add_guard(e if result else f"not {e}", max(_ready(self, a), _ready(self, b)),
                       f"a width used in {what}")
        return result

    def const_expr(self, value) -> str:
        """``value`` in an expression: an ``int`` as a literal, anything else by a name bound
        when the replay is generated (never by its repr: ``np.float64(0.5)``, ``nan``)."""
        if type(value) is int:
            return repr(value) if value >= 0 else f"({value!r})"
        key = value_key(value)
        name = self._const_names.get(key)
        if name is None:
            name = self._const_names[key] = f"_k{len(self.consts)}"
            self.consts[name] = value
        return name

    def wrap(self, expr: str, value, ready: int):
        """A width-derived result: a :class:`Sym` for a number, else the value itself."""
        return Sym(expr, value, self, ready)

    def _op_source(self) -> SlotSource:
        """The source of the slots the next recorded operation writes."""
        return SlotSource(SlotOrigin.OPERATION, len(self.ops))

    def new_slot(self, buf, kind: SlotSource, size: Sym, vt) -> int:
        k = len(self.buffers)
        self.buffers.append(buf)
        self.slot_of[id(buf)] = k
        self.slot_kind.append(kind)
        self.slot_size.append(size)
        self.slot_vt.append(vt)
        return k

    def add_input(self, node, sym: Sym) -> int:
        """Register an input data node (called by the traversal before the function runs)."""
        if not sym.is_const:
            self.sym_sizes.setdefault(node.size, sym)
        k = self.new_slot(node.value, SlotSource(SlotOrigin.INPUT, self.n_input_slots), sym, node.vt)
        self.n_input_slots += 1
        return k

    def slot_for(self, node) -> int:
        """Slot of a data node's buffer; a buffer from before the recording becomes a capture."""
        self._flush()
        buf = node.value
        k = self.slot_of.get(id(buf))
        if k is None:
            j = len(self.captured)
            self.captured.append(weakref.ref(node))
            k = self.new_slot(buf, SlotSource(SlotOrigin.CAPTURED, j), const(node.size), node.vt)
        return k

    def _flush(self, exclude=()) -> None:
        """Turn data nodes of unknown origin (``Float([1, 2])``, ``empty``) into recorded uploads."""
        pending, self._pending = self._pending, []
        for wr in pending:
            node = wr()
            if node is None or node.op != "data" or any(node is e for e in exclude):
                continue
            buf = node.value
            if id(buf) in self.slot_of:
                continue
            snapshot = current_backend().to_numpy(buf, node.size)
            if self.np_inputs and self.data_dependent is None:
                self.data_dependent = ("builds an array from Python data while NumPy arrays are among its "
                                       "inputs (frostjit cannot tell whether that data came from them)")
            out = self.new_slot(buf, self._op_source(), const(node.size), node.vt)
            self.ops.append(Upload(node.vt, snapshot, out))

    # -- engine hooks --------------------------------------------------------------------
    def on_node(self, node) -> None:
        if self.mine():
            self.node_made(node)

    def node_made(self, node) -> None:
        """:meth:`on_node` for a caller that knows the node is this recording's (the calling
        thread's, while it is active: :meth:`Recorders.on_node`).  Every node a recording makes
        passes here: the common cases take no further call (under the read set's trace hook each
        Python call costs ~1 us more, Python 3.11)."""
        if self._pending:
            self._flush()
        op = node.op
        if op == "literal":
            node.sym = ONE if node.size == 1 else const(node.size)
            return
        if op == "data":
            node.sym = ONE if node.size == 1 else const(node.size)
            self._pending.append(weakref.ref(node))
            return
        sym = None
        b = node.a1         # (Node.args without its property call)
        for a in (node.a0 if b is None else (node.a0, b)):
            if a.size == 1:
                continue
            s = a.sym
            # (sym_of's result without the call: a symbol of this recording, or a constant size
            # that equals no width of this call)
            if s is None or (s.rec is not self and (s.rec is not None or a.size in self.sym_sizes)):
                s = self.sym_of(a)
            if sym is None:
                sym = s
            elif s is not sym:
                self.guard_equal(s, sym, f"operands of '{node.op}' with equal sizes")
        if sym is None or node.size == 1:
            sym = ONE if node.size == 1 else const(node.size)
        node.sym = sym
        stand_ins = ops.LITERAL_STAND_INS
        if stand_ins and (op in _FOLDS or op == "cast") \
                and all(a.op == "literal" or a in stand_ins for a in node.args):
            stand_ins.add(node)     # (the plain call folds it into a literal, which divisions treat apart)
        if op == "scatter" or op == "scatter_rmw":
            self.effects[id(node)] = node.size     # launched by this thread (see on_launch, stolen_effects)
        if (op == "gather" or op == "scatter" or op == "scatter_rmw") and node.args[-2].vt.bits == 32:
            # functions/memory._check_index_width: 32-bit indices reach 2^31 elements
            target = self.sym_of(node.extra if op == "gather" else node.extra[0])
            if target._live():
                self.guard_compare(target, "<=", 2**31, "the index width check of gather/scatter")

    def on_upload(self, array, node) -> None:
        """``array`` (NumPy) was copied into the data node ``node``."""
        if not self.mine():
            return
        for k, inp in enumerate(self.np_inputs):
            if array is inp:
                self._pending = [w for w in self._pending if w() is not node]
                sym = self.np_sym[k]
                self._set_sym(node, sym if inp.ndim == 0 or node.size == inp.shape[0] else const(node.size))
                out = self.new_slot(node.value, self._op_source(), node.sym, node.vt)
                self.ops.append(UploadInput(node.vt, k, out))
                return
        for inp in self.np_inputs:
            if isinstance(array, np.ndarray) and np.shares_memory(array, inp):
                self.data_dependent = ("builds an array from a view or slice of a NumPy input "
                                       "(pass the whole array, or a frostjit array)")

    def on_bounds_check(self, who: str, index, active, target) -> None:
        """Debug mode checked the indices of a gather/scatter into ``target``: replays check too."""
        if not self.mine():
            return
        self._flush()

        def operand(n):
            return LiteralOperand(n.value) if n.op == "literal" else SlotOperand(self.slot_for(n))
        self.ops.append(BoundsCheck(who, operand(index), operand(active), self.sym_of(index), self.sym_of(active),
                                    self.sym_of(target)))

    def on_read(self, node, what: str) -> None:
        if not self.mine():
            return
        if self.data_dependent is None:
            self.data_dependent = f"reads array data inside the function ({what})"

    def on_len(self, node) -> int:
        if not self.mine():
            return node.size
        s = self.sym_of(node)
        if not s.is_const:
            self.guard_value(s, "len() / .shape")
        return node.size

    def on_empty(self, node) -> bool:
        """Whether ``node`` is empty, as a guarded fact: engine code that raises for an empty
        array (Dr.Jit's "uninitialized" state of a loop, an empty condition) asks this, so that
        a recording made at another width never replays at width 0, where the plain call
        raises (and a width-0 recording, which raised, is never made)."""
        if not self.mine():
            return node.size == 0
        s = self.sym_of(node)
        if s.is_const:
            return node.size == 0
        return self.guard_compare(s, "==", 0, "an emptiness check (an empty array is an error there)")

    def on_empty_sym(self, sym, size: int) -> bool:
        """:meth:`on_empty` for a width known by its symbol ``sym`` (an AD vertex whose node
        was freed keeps its symbolic size): ``size == 0``, guarded."""
        if not self.mine() or sym is None or sym.is_const:
            return size == 0
        return self.guard_compare(sym, "==", 0, "an emptiness check (an empty array is an error there)")

    def on_width(self, w: int, arrays):
        if not self.mine():
            return w
        sym = None
        for a in arrays:
            n = a._node
            if n.size == 1:
                continue
            s = self.sym_of(n)
            if sym is None:
                sym = s
            elif s is not sym:
                self.guard_equal(s, sym, "arrays passed to width()")
        if sym is None or sym.is_const:
            return w
        return sym

    def on_drop(self, effects) -> None:
        """The scatters ``effects`` left the queue without running (a loop body traced again for
        its derivatives, control/symbolic.py): the recording does not wait for their launch."""
        for e in effects:
            self.effects.pop(id(e), None)

    def on_launch(self, kernel, spec, size: int, buffers, effects=()) -> None:
        if not self.mine():
            return
        self._flush()
        for e in effects:
            if self.effects.pop(id(e), None) is None and self.interfered is None:
                # another thread's pending scatter, evaluated by this one: the recording would
                # contain it (the engine's queue of side effects is shared by all threads)
                self.interfered = "evaluated scatters queued by another thread"
        launch = None
        for n in list(spec.outputs) + list(effects):
            s = self.sym_of(n)
            if launch is None:
                launch = s
            elif s is not launch:
                self.guard_equal(s, launch, "arrays evaluated by one kernel")
        if launch is None:
            launch = const(size)
        source = self._op_source()
        params = []
        for (kind, vt), node, buf in zip(spec.params, spec.bindings, buffers):
            if kind == OUT:
                k = self.new_slot(buf, source, launch, vt)
            else:
                k = self.slot_for(node) if id(buf) not in self.slot_of else self.slot_of[id(buf)]
            params.append(LaunchParam(kind, vt, k))
        self.ops.append(Launch(kernel, launch, tuple(params)))

    def on_memop(self, kind: str, param, inputs, outputs, count=None) -> None:
        if not self.mine():
            return
        self._flush(exclude=outputs)
        ins = [self.slot_for(n) for n in inputs]
        out = outputs[0]
        if kind not in _MEMOPS:
            raise RuntimeError(f"frostjit.freeze: cannot record the memory operation {kind!r}")
        source = self._op_source()
        if kind == "compress":
            c = self.n_counts
            self.n_counts += 1
            self._set_sym(out, Sym(f"c{c}", count, self, source.index))
        elif kind == "reduce":
            out.sym = ONE
        elif kind in ("prefix_sum", "argsort", "copy"):
            out.sym = self.sym_of(inputs[0])
        elif kind == "block_reduce":
            s = param.out_size(self.sym_of(inputs[0]))
            if type(s) is Sym:      # (size 1: guarded, as every size-1 result: it broadcasts)
                self._set_sym(out, s)
            else:                   # (a constant folds to an int)
                out.sym = const(s)
        k = self.new_slot(out.value, source, self.sym_of(out), out.vt)
        if kind == "compress":
            op = Compress(ins[0], self.sym_of(inputs[0]), c, k)
        elif kind == "reduce":
            op = Reduce(param, inputs[0].vt, ins[0], self.sym_of(inputs[0]), k)
        elif kind == "prefix_sum":
            op = PrefixSum(bool(param), inputs[0].vt, ins[0], out.sym, k)
        elif kind == "argsort":
            op = Argsort(inputs[0].vt, ins[0], out.sym, k)
        elif kind == "block_reduce":
            op = BlockReduce(param, inputs[0].vt, ins[0], self.sym_of(inputs[0]), k)
        elif kind == "copy":
            op = Copy(inputs[0].vt, ins[0], out.sym, k)
        else:
            op = Fill(out.vt, param, self.sym_of(out), k)
        self.ops.append(op)

    def stolen_effects(self) -> None:
        """After the recording's last evaluation: scatters it queued that it never saw launched
        were evaluated by another thread, so the recording misses them (never replayed)."""
        if self.effects and self.interfered is None:
            self.interfered = "had its scatters evaluated by another thread"

    # -- symbolic creation (functions/creation.py, trace/ops.py) -------------------------
    def sized_literal(self, vt, value, size):
        if type(value) is Sym:
            return self._broadcast_value(vt, value, size)
        node = ops.literal(vt, value, int(size.value) if type(size) is Sym else int(size))
        if type(size) is Sym:
            self._set_sym(node, size)
        return node

    def _broadcast_value(self, vt, value: Sym, size):
        """A symbolic value broadcast to a (maybe symbolic) size: value + zeros(size)."""
        v = self.symbolic_literal(vt, value, 1)
        z = self.sized_literal(vt, 0, size)
        if z.size == 1:
            return v
        out = ops.make("add", vt, (z, v))
        ops.LITERAL_STAND_INS.add(out)      # (a plain call's literal: divisions take its reciprocal)
        return out

    def sized_counter(self, size):
        n = int(size.value)
        # the index type follows the size, as in functions/creation._counter: guard the choice
        small = self.guard_compare(size, "<=", 2**32, "the index type of arange()") if size._live() \
            else n <= 2**32
        vt = UInt32 if small else Int64
        node = ops.literal(vt, 0, 1) if n == 1 else ops.make("counter", vt, (), size=n)
        self._set_sym(node, size)
        return node

    def symbolic_max(self, a, b):
        return call(max, a, b)

    def symbolic_literal(self, vt, value: Sym, size=1):
        """A width-derived *value* used as an array: a size-1 buffer the replay refills."""
        if type(size) is Sym or int(size) != 1:
            return self._broadcast_value(vt, value, size)
        if not value._live():
            return ops.literal(vt, value.value, 1)
        v = normalize_literal(vt, value.value)
        buf = current_backend().from_numpy(np.array([v], dtype=vt.np_dtype))
        node = ops.data(vt, buf, 1)     # (queued as an upload by on_node; its slot, made next, wins)
        node.sym = ONE
        ops.LITERAL_STAND_INS.add(node)     # (a plain call's literal: divisions take its reciprocal)
        self.ops.append(FillWidth(vt, value, self.new_slot(buf, self._op_source(), ONE, vt)))
        return node

    def release(self) -> None:
        """Drop every buffer and bookkeeping reference (the recording keeps what it needs)."""
        self.active = False
        self.buffers = []
        self.slot_of = {}
        self._pending = []
        self.np_inputs = []


# ------------------------------------------------------------------------------ all threads
class Recorders:
    """``state.recorder`` while any thread records: each hook goes to the calling thread's
    :class:`Recorder`; a thread that is not recording gets the plain behaviour.

    Several threads may record at once (a frozen function waiting for a thread that calls
    another frozen function, or the same one), so no process-wide lock is needed; outside
    recordings ``state.recorder`` is ``None`` and the engine pays one ``is None`` test.
    """

    def __init__(self):
        self.by_thread: dict = {}
        self.lock = threading.Lock()

    def current(self):
        """The calling thread's recorder, or ``None``."""
        return self.by_thread.get(threading.get_ident())

    def push(self, rec) -> None:
        with self.lock:
            self.by_thread[rec.thread] = rec
            state.recorder = self

    def pop(self, rec) -> None:
        with self.lock:
            if self.by_thread.get(rec.thread) is rec:
                del self.by_thread[rec.thread]
            if not self.by_thread:
                state.recorder = None

    def split_effects(self, effects) -> tuple:
        """``(scatters the calling thread may evaluate, scatters it must leave queued)``.

        Side effects are queued process-wide; a scatter queued by a thread that records a frozen
        function is part of that recording, so only that thread evaluates it.  A recording
        thread evaluates only its own scatters (another thread's would enter its recording).
        """
        me = threading.get_ident()
        rec = self.by_thread.get(me)
        if rec is not None:
            own = rec.effects
            return [e for e in effects if id(e) in own], [e for e in effects if id(e) not in own]
        owned = [r.effects for t, r in list(self.by_thread.items()) if t != me]
        if not owned:
            return effects, []
        keep = [e for e in effects if any(id(e) in o for o in owned)]
        if not keep:
            return effects, []
        return [e for e in effects if not any(id(e) in o for o in owned)], keep

    # -- hooks: the calling thread's recorder, or the plain behaviour -------------------------
    def on_node(self, node) -> None:
        r = self.by_thread.get(threading.get_ident())
        if r is not None and r.active:
            r.node_made(node)

    def on_launch(self, kernel, spec, size, buffers, effects=()) -> None:
        r = self.by_thread.get(threading.get_ident())
        if r is not None:
            r.on_launch(kernel, spec, size, buffers, effects)

    def on_drop(self, effects) -> None:
        r = self.by_thread.get(threading.get_ident())
        if r is not None:
            r.on_drop(effects)

    def on_memop(self, kind, param, inputs, outputs, count=None) -> None:
        r = self.by_thread.get(threading.get_ident())
        if r is not None:
            r.on_memop(kind, param, inputs, outputs, count)

    def on_upload(self, array, node) -> None:
        r = self.by_thread.get(threading.get_ident())
        if r is not None:
            r.on_upload(array, node)

    def on_read(self, node, what: str) -> None:
        r = self.by_thread.get(threading.get_ident())
        if r is not None:
            r.on_read(node, what)

    def on_bounds_check(self, who, index, active, target) -> None:
        r = self.by_thread.get(threading.get_ident())
        if r is not None:
            r.on_bounds_check(who, index, active, target)

    def on_len(self, node) -> int:
        r = self.by_thread.get(threading.get_ident())
        return node.size if r is None else r.on_len(node)

    def on_width(self, w: int, arrays):
        r = self.by_thread.get(threading.get_ident())
        return w if r is None else r.on_width(w, arrays)

    def on_empty(self, node) -> bool:
        r = self.by_thread.get(threading.get_ident())
        return node.size == 0 if r is None else r.on_empty(node)

    def on_empty_sym(self, sym, size: int) -> bool:
        r = self.by_thread.get(threading.get_ident())
        return size == 0 if r is None else r.on_empty_sym(sym, size)

    # A width is symbolic only in the thread that records; another thread that got hold of one
    # uses its value.
    def sized_literal(self, vt, value, size):
        r = self.by_thread.get(threading.get_ident())
        if r is not None:
            return r.sized_literal(vt, value, size)
        return ops.literal(vt, _plain(value), int(_plain(size)))

    def sized_counter(self, size):
        r = self.by_thread.get(threading.get_ident())
        if r is not None:
            return r.sized_counter(size)
        n = int(_plain(size))
        vt = UInt32 if n <= 2**32 else Int64
        return ops.literal(vt, 0, 1) if n == 1 else ops.make("counter", vt, (), size=n)

    def symbolic_max(self, a, b):
        r = self.by_thread.get(threading.get_ident())
        return max(_plain(a), _plain(b)) if r is None else r.symbolic_max(a, b)

    def symbolic_literal(self, vt, value, size=1):
        r = self.by_thread.get(threading.get_ident())
        if r is not None:
            return r.symbolic_literal(vt, value, size)
        return ops.literal(vt, _plain(value), int(_plain(size)))


def _plain(x):
    return x.value if type(x) is Sym else x


RECORDERS = Recorders()

