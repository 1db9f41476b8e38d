"""The replay of a recording, as one generated Python function.

:func:`generate_replay` writes straight-line code that binds the input buffers the recording
reads, checks the guards as soon as their symbols are known, runs every recorded operation
(the backend's :class:`~frostjit.backend.replay.ReplayEmitter` writes each one), wraps the
outputs in fresh nodes, applies the write-backs and rebuilds the outputs
(:func:`.outputs.generate_finish`).  No trace is built and no kernel compiled.

The generated function is registered with :mod:`linecache` (tracebacks show its lines) and
written to ``$FROSTJIT_DUMP`` when that is set (:mod:`frostjit._dump`).  Its local names:
``s0, s1, ...`` the widths of the inputs' size classes, ``p0, p1, ...`` the Python numbers
passed as parameters (:mod:`.frozen`), ``c0, ...`` the counts of
``compress`` operations, ``buffer_<k>`` the buffer of slot ``k``, ``launch_size`` the size of
the launch being run, ``node_<k>`` the output nodes (node table entry ``k``).
"""
from __future__ import annotations

import time

import numpy as np

from .._dump import register_source
from ..backend.kernel import GATHER_SRC, IN, IN_SCALAR, OUT, SCATTER_DST
from ..backend.replay import ReplayCode, LaunchArg
from ..functions.memory import check_bounds
from ..schedule.evaluate import KernelRecordingMode, KernelType, record_operation
from ..trace import ops as trace_ops
from ..trace.node import Node
from ..trace.ops import normalize_literal
from ..trace.state import JitBackend, state
from .outputs import generate_finish
from .records import (SlotOrigin, Launch, Reduce, PrefixSum, Argsort, BlockReduce, Compress, Copy, Fill, FillWidth, Upload,
                      UploadInput, BoundsCheck, SlotOperand, BufferEntry, LiteralEntry, InputEntry)
from .records import (ArrayOut, DictOut, InputAlias, InputArray, InputContainer, PythonValue, SequenceOut, SharedOut,
                      SharedRef, VectorOut, WidthOut)
from .scratch import plan_scratch, dead_operations
from .through import new_through
from .values import same_value


class ReplayFailed(Exception):
    """A replay operation raised (a size expression, an allocation): the call is traced again."""

    def __init__(self, exc: BaseException):
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.exc = exc


class GuardFailed(Exception):
    """A recorded guard does not hold for this call: it must be traced again."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class OutOfBounds(Exception):
    """A Debug-mode bounds check failed during a replay (re-raised as IndexError)."""


# What a replay may raise for a call the recording cannot serve (a size expression dividing by
# zero or going negative at this width, memory running out): the plain call then decides what
# happens.  Anything else is a bug and propagates.
REPLAY_ERRORS = (ArithmeticError, ValueError, TypeError, MemoryError)

_OPS_INDENT = " " * 12          # inside "with replay_lock:" and "try:"


def generate_replay(name: str, backend, rec, n_classes: int, node_table: list, sym_outputs: list,
                    actions: list, out_desc, lock, history: bool, kept_in=None, keep_out=()):
    """Generate the replay of one recording; return ``(replay function, source, file name)``.

    Parameters
    ----------
    name : str
        The frozen function's name (for the file name and the docstring).
    backend : Backend
        The backend the recording ran on (its emitter writes the operations).
    rec : Recorder
        The recorder, released or not: its ``ops``, ``guards``, ``slot_kind``, ``slot_size``,
        ``buffers`` (captured buffers) and ``consts`` are read.
    n_classes : int
        The number of size classes of the inputs (``s0 .. s<n-1>``).
    node_table : list[records.NodeEntry]
        The nodes the outputs and write-backs refer to.
    sym_outputs : list[Sym]
        Width-derived numbers among the outputs (``width_<k>``).
    actions : list[records.WriteBack]
        The write-backs into the inputs (:class:`~.records.SetEntry`, ...).
    out_desc : records.OutputDesc
        The output descriptor (:mod:`.outputs`).
    lock : threading.Lock
        Serializes replays of this recording (they share argument arrays and scratch buffers).
    history : bool
        Whether ``JitFlag.KernelHistory`` was set (part of the key): report every launch.
    kept_in : dict, optional
        A backward derivative replayed after its forward call (:mod:`.kept`): ``{slot: k}``,
        slots whose buffers are the forward replay's ``k``-th kept buffer (``flat.kept``); the
        operations that wrote them are left out.
    keep_out : tuple
        A forward call's slots whose buffers its replay hands to its hub (``through.kept``).

    The function is ``replay(flat, captured_nodes)``; it raises :class:`GuardFailed`,
    :class:`ReplayFailed`, or ``IndexError`` (a Debug-mode bounds check).
    """
    code = ReplayCode(_OPS_INDENT)
    ns = code.namespace
    ns.update({"data_node": trace_ops.data, "literal_node": trace_ops.stored_literal,
               "GuardFailed": GuardFailed, "ReplayFailed": ReplayFailed, "OutOfBounds": OutOfBounds,
               "REPLAY_ERRORS": REPLAY_ERRORS, "replay_lock": lock, "jit_state": state,
               "normalize_literal": normalize_literal, "input_array": _input_array, "check_bounds": _check_bounds,
               "record_history_op": _record_history_op, "perf_counter": time.perf_counter,
               "same_value": same_value})
    ns.update(rec.consts)           # the named constants of the size expressions and guards
    emitter = backend.replay_emitter(code)
    ops = rec.ops
    through = getattr(rec, "through", None)     # outputs differentiable through the call (.through)
    head = ["def replay(flat, captured_nodes):",
            f'    """Replay of the frozen function {name!r}: {len(ops)} recorded operations."""',
            "    input_nodes = flat.nodes; numpy_inputs = flat.numpy",
            "    with replay_lock:",
            "        try:"]
    code.lines.extend(head)
    if n_classes:
        code.line("".join(f"s{i}, " for i in range(n_classes)) + "= flat.sizes")
    n_params = getattr(rec, "n_params", 0)      # Python numbers as parameters (freeze/frozen.py)
    if n_params:
        code.line("".join(f"p{i}, " for i in range(n_params)) + "= flat.params")
    emitter.prologue()
    kept_in = kept_in or {}
    skip = frozenset(i for i, op in enumerate(ops) if type(op) is not BoundsCheck
                     and _written(op) and all(s in kept_in for s in _written(op)))
    _bind_inputs(code, rec, kept_in, skip)
    guards_at: dict = {}
    for g, guard in enumerate(rec.guards):
        guards_at.setdefault(guard.ready, []).append((g, guard))

    def check_guards(after: int) -> None:
        if after in guards_at:
            emitter.join()      # (a guard may read values: a deferred launch ends first)
        for g, guard in guards_at.get(after, ()):
            why = code.bind(f"guard_{g}", guard.why)
            code.line(f"if not ({guard.expr}): raise GuardFailed({why} + ': ' + {guard.expr!r})")

    check_guards(-1)
    scratch = plan_scratch([op for i, op in enumerate(ops) if i not in skip], node_table, keep_out)
    sources = rec.slot_kind
    # (kept with JitFlag.KernelHistory: the history lists what the plain call launched)
    dead = set(skip) if history else dead_operations(ops, node_table, keep_out, skip)
    fills = []      # consecutive fills not written yet (emitter.fill_many)
    live = [i for i in range(len(ops)) if i not in dead]
    following = dict(zip(live, live[1:]))      # the next operation that runs
    finish_defers = through is None and not actions and _pure_output(out_desc)
    deferred = False
    for i, op in enumerate(ops):
        t = type(op)
        if i in dead:
            check_guards(i)
            continue
        if t is not Launch:
            emitter.join()      # (every host operation reads or writes buffers: see _defers)
        if t is Fill:
            fills.append((i, op.vt, op.value, op.size, op.out))
            nxt = next((j for j in range(i + 1, len(ops)) if j not in dead), None)
            if nxt is None or type(ops[nxt]) is not Fill or i in guards_at:
                emitter.fill_many(fills)
                fills = []
            check_guards(i)
            continue
        if t is Launch:
            args = []
            for p in op.params:
                if p.kind == OUT:
                    args.append(LaunchArg(p.kind, p.vt, p.slot, op.size, scratch.get(p.slot)))
                else:
                    fixed = rec.buffers[p.slot] if sources[p.slot].origin is SlotOrigin.CAPTURED else None
                    args.append(LaunchArg(p.kind, p.vt, p.slot, rec.slot_size[p.slot], None, fixed))
            code.line(f"launch_size = {op.size.expr}")
            if history:
                code.line("launch_start = perf_counter()")
            nxt = following.get(i)
            defer = (not history and i not in guards_at and _defers(op)
                     and (type(ops[nxt]) is Launch if nxt is not None else True))
            deferred |= defer
            emitter.launch(i, op.kernel, op.size, args, defer)
            if history:     # the entry schedule.evaluate.run_group makes, from a template
                template = code.bind(f"history_entry_{i}", _history_template(backend, op))
                code.line(f"entry = {template}.copy(); entry['size'] = launch_size; "
                          f"entry['execution_time'] = (perf_counter() - launch_start) * 1e3; jit_state.history.append(entry)")
        elif t is Reduce:
            emitter.reduce(i, op.op, op.vt, op.src, op.size, op.out)
        elif t is PrefixSum:
            emitter.prefix_sum(i, op.exclusive, op.vt, op.src, op.size, op.out)
        elif t is Argsort:
            emitter.argsort(i, op.vt, op.src, op.size, op.out)
        elif t is BlockReduce:
            emitter.block_reduce(i, op.block, op.vt, op.src, op.size, op.out)
        elif t is Compress:
            emitter.compress(i, op.src, op.size, f"c{op.count}", op.out)
        elif t is Copy:
            emitter.copy(i, op.vt, op.src, op.size, op.out)
        elif t is FillWidth:
            emitter.fill_value(i, op.vt, f"normalize_literal({code.type_name(op.vt)}, {op.value.expr})", op.out)
        elif t is Upload:
            emitter.upload(i, op.vt, code.bind(f"snapshot_{i}", op.snapshot), op.out)
        elif t is UploadInput:
            emitter.upload(i, op.vt, f"input_array(numpy_inputs[{op.input}], {code.dtype_name(op.vt)})", op.out)
        elif t is BoundsCheck:
            def values(operand, size, what, i=i):
                if type(operand) is SlotOperand:
                    return emitter.host_values(operand.slot, size)
                return code.bind(f"{what}_{i}", np.full(1, operand.value))   # one value for every lane
            code.line(f"check_bounds({op.who!r}, {values(op.index, op.index_size, 'index_value')}, "
                      f"{values(op.active, op.active_size, 'active_value')}, {op.target_size.expr})")
        else:  # pragma: no cover
            raise AssertionError(op)
        if history and t in _HISTORY_PARAMS:       # as schedule.memops reports them
            code.line(f"record_history_op({t.history_type!r}, {op.size.expr}, {_HISTORY_PARAMS[t](op)!r})")
        check_guards(i)
    _wrap_outputs(code, node_table, sym_outputs)
    if not finish_defers:
        emitter.join()      # (the write-backs and outputs below may run code that reads arrays)
    code.line("pass")               # (a recording of nothing)
    code.indent = "    "
    code.lines.extend([
        "        except GuardFailed:",
        "            raise",
        "        except OutOfBounds as e:",
        "            raise IndexError(*e.args) from None     # (JitFlag.Debug, as in a plain call)",
        "        except REPLAY_ERRORS as e:",
        "            raise ReplayFailed(e) from e",
        "    # write-backs and outputs (errors here are the function's, not the replay's)",
        "    leaves = flat.leaves; containers = flat.containers"])
    if through is not None:
        ns["new_through"] = new_through
    finish, result = generate_finish(actions, out_desc, ns, through)
    if keep_out:
        at = finish.index("through = new_through(through_info, flat)") + 1
        finish.insert(at, f"through.kept = ({''.join(f'buffer_{s}, ' for s in keep_out)})")
    for line in finish:
        code.line(line)
    if deferred and finish_defers:
        # the last launch may still run (its outputs reached only through this call's result)
        code.line(f"result = {result}")
        emitter.join()
        code.line("return result")
    else:
        code.line(f"return {result}")
    source = code.source()
    filename = register_source(f"freeze replay {name}", source)
    exec(compile(source, filename, "exec"), ns)
    return ns["replay"], source, filename


# What a deferred launch may have among its parameters: elementwise and gathered inputs, fresh
# outputs.  Not scatter targets (arrays the caller holds, written in place) nor partials.
_DEFERRABLE_KINDS = frozenset((IN, IN_SCALAR, OUT, GATHER_SRC))


def _defers(op) -> bool:
    """Whether launch ``op`` may still run while the replay's next lines run (the backend's
    ``launch(defer=True)``; the LLVM pool publishes a large launch and returns).

    The lines a deferred launch overlaps are the next launch's preparation (sizes, allocations,
    argument arrays) or the outputs' wrapping and, when :func:`_pure_output`, their build: none
    reads or writes a buffer.  Every host operation (reduction, fill, upload, bounds check,
    ...), a guard, and anything that may run user code joins first, so does the next launch
    and the end of the replay.  What a deferred launch uses stays alive until it is joined (the
    pool holds its buffers), so nothing it reads or writes is freed or handed out meanwhile,
    and the replay's first line joins a launch an exception left pending.  Its only writes go to
    fresh outputs that the caller sees no earlier than the replay's return, after the join:
    hence no scatters (their targets are the caller's arrays) and no private copies (combined
    on the host after the join).
    """
    # (private copies are of scatter targets: excluded with them)
    return all(p.kind in _DEFERRABLE_KINDS for p in op.params)


def _pure_output(d) -> bool:
    """Whether building the output ``d`` runs no code but frostjit's own object construction
    (no user constructor, ``__setitem__``, hash, copy protocol, AD hook or hub), so that a
    deferred launch may still run while it is built: arrays without gradients, inputs passed
    through, Python values, widths, exact tuples, lists and dicts with str or int keys, and
    frostjit's static vectors."""
    t = type(d)
    if t is ArrayOut:
        return not d.grad_enabled and d.hub_slot is None
    if t in (InputArray, InputAlias, InputContainer, PythonValue, WidthOut, SharedRef):
        return True
    if t is SharedOut:
        return _pure_output(d.desc)
    if t is SequenceOut:
        return all(_pure_output(x) for x in d.items)
    if t is DictOut:
        return all(type(k) in (str, int) for k in d.keys) and all(_pure_output(x) for x in d.items)
    if t is VectorOut:
        build = getattr(d.cls, "_from_components", None)
        own = getattr(getattr(build, "__func__", None), "__module__", "") or ""
        return own.startswith("frostjit.") and all(_pure_output(x) for x in d.items)
    return False


def _written(op) -> list:
    """The slots an operation writes (its outputs and scatter targets)."""
    if type(op) is Launch:
        return [p.slot for p in op.params if p.kind == OUT or p.kind == SCATTER_DST]
    out = getattr(op, "out", None)
    return [] if out is None else [out]


def _bind_inputs(code: ReplayCode, rec, kept_in: dict, skip) -> None:
    """``buffer_<k> = ...`` for the input, captured and kept slots some operation reads."""
    used = set()
    for i, op in enumerate(rec.ops):
        if i not in skip:
            used.update(op.reads())
    if kept_in:
        code.line("kept_buffers = flat.kept")
    for slot, source in enumerate(rec.slot_kind):
        if slot not in used:
            continue
        if slot in kept_in:
            code.line(f"buffer_{slot} = kept_buffers[{kept_in[slot]}]")
        elif source.origin is SlotOrigin.INPUT:
            code.line(f"buffer_{slot} = input_nodes[{source.index}].value")
        elif source.origin is SlotOrigin.CAPTURED:
            code.line(f"buffer_{slot} = captured_nodes[{source.index}].value")


def _wrap_outputs(code: ReplayCode, node_table: list, sym_outputs: list) -> None:
    """``node_<k> = ...``: fresh data nodes around this replay's buffers, literals, inputs (made
    through the trace's one door, :mod:`frostjit.trace.ops`)."""
    # Data nodes made inline (a call of trace_ops.data costs as much as the node's stores) when
    # no recorder is listening (one records on another thread: it is told of each node).
    inline = sum(type(e) is BufferEntry for e in node_table) >= 2
    if inline:
        code.namespace.update({"NODE_NEW": object.__new__, "Node": Node})
        code.line("if jit_state.recorder is None:")
        indent = code.indent
        code.indent = indent + "    "
        for k, entry in enumerate(node_table):
            if type(entry) is BufferEntry:
                code.line(trace_ops.data_source(f"node_{k}", code.type_name(entry.vt), f"buffer_{entry.slot}",
                                                entry.size.expr))
            else:
                code.line(f"node_{k} = {_node_expr(code, k, entry)}")
        code.indent = indent
        code.line("else:")
        code.indent = indent + "    "
    for k, entry in enumerate(node_table):
        code.line(f"node_{k} = {_node_expr(code, k, entry)}")
    if inline:
        code.indent = indent
    for k, sym in enumerate(sym_outputs):
        code.line(f"width_{k} = {sym.expr}")


def _node_expr(code: ReplayCode, k: int, entry) -> str:
    t = type(entry)
    if t is BufferEntry:
        return f"data_node({code.type_name(entry.vt)}, buffer_{entry.slot}, {entry.size.expr})"
    if t is LiteralEntry:
        return f'literal_node({code.type_name(entry.vt)}, {code.bind(f"literal_{k}", entry.value)}, {entry.size.expr})'
    if t is InputEntry:
        return f"input_nodes[{entry.index}]"
    return f"captured_nodes[{entry.index}]"


def _input_array(a: np.ndarray, dtype) -> np.ndarray:
    """A NumPy input of the call as a contiguous 1-D array of ``dtype`` (what the plain call uploads)."""
    if a.ndim == 0:
        a = a.reshape(1)
    if a.dtype != dtype:
        a = a.astype(dtype)
    return np.ascontiguousarray(a)


def _check_bounds(who, idx, active, size):
    try:
        check_bounds(who, idx, active, size)
    except IndexError as e:
        raise OutOfBounds(*e.args) from None


_HISTORY_PARAMS = {Reduce: lambda op: op.op, PrefixSum: lambda op: op.exclusive, Argsort: lambda op: None, BlockReduce: lambda op: op.block.op,
                   Compress: lambda op: None, Copy: lambda op: None}


def _history_template(backend, op: Launch) -> dict:
    """A replayed launch in ``fj.kernel_history()``: the entry a plain call's launch makes
    (schedule.evaluate.launch) when the kernel is in the memory cache."""
    kernel, n_out = op.kernel, len(op.writes())
    return {"type": KernelType.JIT, "backend": JitBackend.LLVM, "cpu_backend": backend.name, "size": 0, "hash": kernel.hash, "ir": kernel.ir,
            "cache_hit": True, "cache_disk": False, "uses_optix": False,
            "input_count": len(op.params) - n_out, "output_count": n_out,
            "recording_mode": KernelRecordingMode.Replayed, "operation_count": kernel.n_instrs,
            "codegen_time": 0.0, "backend_time": 0.0, "execution_time": 0.0}


def _record_history_op(kind, size, param):
    """A replayed memory operation in ``fj.kernel_history()`` (as schedule.memops reports it)."""
    record_operation({"type": kind, "size": size, "operation": param, "recording_mode": KernelRecordingMode.Replayed})
