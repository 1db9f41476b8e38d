"""Evaluation: turn pending nodes and side effects into kernel launches.

Pending nodes are grouped by size, and every group becomes one kernel, so any
number of elementwise operations of one size fuse into a single launch.  Side
effects (scatters) run in program order: consecutive scatters of one size share
a kernel, a change of size starts a new one.  Size-1 pending nodes used by a
wider kernel are computed inline (they are loop invariant).
"""
from __future__ import annotations

import enum
import logging
import sys
import time

from ..trace.state import JitBackend, state, KERNEL_HISTORY
from ..backend import current_backend
from ..backend.kernel import OUT
from .kernel import build_kernel
from .plans import ENABLED, shape_of, plan_of, match as match_plan, remember as remember_plan
from .single_op import shape_key, plan_of as single_op_plan

log = logging.getLogger("frostjit")
_DEBUG = logging.DEBUG


class KernelType(str, enum.Enum):
    """The ``type`` of a :func:`kernel_history` entry (a ``str``: ``KernelType.JIT == "jit"``;
    ``str()`` and ``repr()`` are Dr.Jit's ``KernelType.JIT``)."""

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``KernelType.Member``

    JIT = "jit"
    Reduce = "reduce"
    PrefixSum = "prefix_sum"
    Argsort = "argsort"     # (frostjit's sort: Dr.Jit sorts with kernels of its own)
    BlockReduce = "block_reduce"
    Compress = "compress"
    Copy = "copy"
    Fill = "fill"
    Other = "other"
    # Dr.Jit's names: aliases of the operations above, or kinds frostjit does not report (so
    # that a Dr.Jit program filtering kernel_history() by them runs).
    Memcpy = "copy"
    Memset = "fill"
    BlockPrefixReduce = "block_prefix_reduce"
    Dot = "dot"
    BatchedGemm = "batched_gemm"
    MkPerm = "mkperm"
    Poke = "poke"
    Aggregate = "aggregate"
    LLVMHostFunc = "llvm_host_func"

    # Dr.Jit's str() and format(): ``KernelType.JIT`` (the value stays a str: == "jit")
    __str__ = enum.Enum.__str__

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    # Not a number, as Dr.Jit's (a plain Enum): int() and float() raise TypeError, where the str
    # base would parse "jit" and raise ValueError (session r12; complex() parses a str before it
    # looks for __complex__, so it still raises ValueError).
    def __int__(self):
        raise TypeError("int() argument must be a string, a bytes-like object or a real number, not 'KernelType'")

    def __float__(self):
        raise TypeError("float() argument must be a string or a real number, not 'KernelType'")


class KernelRecordingMode(enum.IntEnum):
    """The ``recording_mode`` of a :func:`kernel_history` entry (Dr.Jit 1.5's values): a launch
    of a plain evaluation, one made while :func:`frostjit.freeze` records, or one of a replay."""

    __repr__ = enum.Enum.__str__  # Dr.Jit's repr: ``KernelRecordingMode.Member``

    Inactive = 0
    Recorded = 1
    Replayed = 2

    __str__ = enum.Enum.__str__      # ``KernelRecordingMode.Recorded``, as Dr.Jit prints it
    __format__ = enum.Enum.__format__


def _recording_mode() -> KernelRecordingMode:
    return KernelRecordingMode.Inactive if state.recorder is None else KernelRecordingMode.Recorded


def _plan(pending: list, effects: list) -> list:
    """Order launches: side-effect runs in program order, then the remaining sizes."""
    groups = []            # [(size, outputs, effects)]
    by_size = {}
    for eff in effects:
        if groups and groups[-1][0] == eff.size and groups[-1][2]:
            groups[-1][2].append(eff)
        else:
            groups.append((eff.size, [], [eff]))
            by_size.setdefault(eff.size, groups[-1])
    for n in pending:
        g = by_size.get(n.size)
        if g is None:
            g = by_size[n.size] = (n.size, [], [])
            groups.append(g)
        g[1].append(n)
    return groups


def evaluate(nodes) -> None:
    """Evaluate the pending nodes among ``nodes`` and every pending side effect.

    If a group fails before its kernel starts (a compile error, out of memory, a
    ``KeyboardInterrupt``), its side effects and those of every later group go back to
    the front of the queue, in program order, and the next evaluation runs them.  The
    side effects of a kernel interrupted while it ran count as done: their targets'
    contents are then undefined (logged as a warning).
    """
    if state.recorder is not None and state.readset_trace is not None:
        hook = sys.gettrace()
        if hook is not None and getattr(hook, "__func__", None) is state.readset_trace:
            # A frozen function's recording runs under the read set's trace hook
            # (freeze/readset.py), called for every Python frame that starts, ~1 us each on
            # Python 3.11 even for frostjit's own: evaluation runs no user code, so its frames
            # (the kernel's spec, the launch: ~10,000 in p_image_fit's recorded training step)
            # run without it.  (Only that hook: a debugger's or coverage's stays.)
            sys.settrace(None)
            try:
                return evaluate(nodes)
            finally:
                sys.settrace(hook)
    with state.lock:
        if len(nodes) == 1 and not state.side_effects:
            # The common fj.eval(y) of one array, no scatters queued: nothing to put back on
            # failure, so none of the bookkeeping below.
            n = nodes[0]
            op = n.op
            if op != "data" and op != "literal":
                backend = current_backend()
                if n.size >= backend.wake_from:
                    backend.wake_threads()      # (their wake-up overlaps the lookup and binding)
                key = None
                if state.recorder is None and not state.flags & KERNEL_HISTORY and ENABLED[0]:
                    key = shape_key(n)
                if key is not None:
                    _run_single_op(backend, n, key)
                elif state.recorder is not None or not _run_planned(backend, n.size, [n]):
                    run_group(backend, n.size, [n], _NO_EFFECTS)
            return
        seen = set()       # (of nodes: a Node hashes and compares by identity, no id() call)
        pending = []
        for n in nodes:
            if n.op != "data" and n.op != "literal" and n not in seen:
                seen.add(n)
                pending.append(n)
        if pending and not state.side_effects and state.recorder is None:
            # (fj.eval of a static array, an optimizer's step: no scatters queued, nothing to put
            # back on failure)
            backend = current_backend()
            if _one_size(pending):
                if pending[0].size >= backend.wake_from:
                    backend.wake_threads()
                if _run_planned(backend, pending[0].size, pending):
                    return
            else:
                _run_sizes(backend, pending)
                return
        effects = state.side_effects
        held = []
        if effects and state.recorder is not None:
            # a scatter queued by a thread that records a frozen function runs in that thread only
            effects, held = state.recorder.split_effects(effects)
        if not pending and not effects:
            return
        backend = current_backend()
        if max(n.size for n in (*pending, *effects)) >= backend.wake_from:
            backend.wake_threads()
        started = _Started()
        try:
            state.side_effects = held
            if not effects and len(pending) == 1:
                run_group(backend, pending[0].size, pending, effects, started)
            elif state.recorder is None and ENABLED[0]:
                # (scatters into evaluated targets, with or without outputs: from their plans too)
                for size, outputs, effs in _plan(pending, effects):
                    if not _run_planned_effects(backend, size, outputs, effs, started):
                        run_group(backend, size, outputs, effs, started)
            else:
                for size, outputs, effs in _plan(pending, effects):
                    run_group(backend, size, outputs, effs, started)
        except BaseException:
            if started.launching:
                log.warning("frostjit: a kernel with %d scatter(s) was interrupted while it ran; the contents "
                            "of their targets are undefined", started.launching)
            # Scatters not launched yet go back in front of any queued meanwhile.
            state.side_effects = effects[started.effects:] + state.side_effects
            raise
        finally:
            # Scatters still queued (not launched, or queued meanwhile by another thread) keep
            # their targets dirty.
            if state.dirty or state.side_effects:
                state.dirty = {e.extra[0] for e in state.side_effects}


class _Started:
    """How far an evaluation got: the side effects whose kernels have started (a prefix of the
    queue, as groups run in program order), and those of the kernel running now."""

    __slots__ = ("effects", "launching")

    def __init__(self):
        self.effects = 0
        self.launching = 0


_NO_EFFECTS: list = []


def _run_single_op(backend, n, key) -> None:
    """Evaluate ``n``, one operation over data and literal nodes, from its cached plan
    (:mod:`.single_op`): what run_group does, without building a spec."""
    plan = single_op_plan(n, key)
    kernel, status = backend.compile(plan.spec)
    b = n.a1        # (Node.args without its property call: a1 is None unless two operands)
    args = n.a0 if b is None else (n.a0, b)
    inputs = []
    for i in plan.operands:
        inputs.append(args[i].value)
    size = n.size
    out = backend.launch_new_output(kernel, size, plan.spec, inputs, n.vt)
    n.op = "data"           # n.set_data(out), inlined
    n.a0 = ()               # (drops the operands: see Node)
    n.a1 = None
    n.value = out
    if log.isEnabledFor(_DEBUG):
        log.debug("launch kernel %s size=%d (%d instructions, %s)", kernel.hash[:16], size, plan.n_instrs, status)


def _one_size(nodes: list) -> bool:
    size = nodes[0].size
    for n in nodes:
        if n.size != size:
            return False
    return True


def _run_sizes(backend, pending: list) -> None:
    """Evaluate ``pending`` (nodes of several sizes, no scatters, not recording): one kernel per
    size, in the order of :func:`_plan`, each from the plan of its graph's shape where the walk
    covers it.  (An optimizer's step evaluates its parameters and moments with a size-1 bias
    correction or step count: before plans were used here, such an evaluation built every spec
    again at every step.)"""
    if max(n.size for n in pending) >= backend.wake_from:
        backend.wake_threads()
    for size, outputs, _effects in _plan(pending, _NO_EFFECTS):
        if not _run_planned(backend, size, outputs):
            run_group(backend, size, outputs, _NO_EFFECTS)


def _run_planned(backend, size: int, outputs: list) -> bool:
    """Evaluate ``outputs`` (pending nodes of one size, no scatters, not recording) from the plan
    of their graph's shape (:mod:`.plans`: no spec built when the shape was seen before); False
    if the walk does not cover the graph, or the plan caches are off (:data:`.plans.ENABLED`:
    nothing was done, the caller builds the spec)."""
    if not ENABLED[0]:
        return False
    hit = match_plan(outputs)
    if hit is not None:
        plan, inputs = hit
    else:
        shape = shape_of(outputs)
        if shape is None:
            return False
        key, data = shape
        plan = plan_of(outputs, key, data)
        if plan is None:
            return False
        remember_plan(outputs, plan)
        inputs = [data[i].value for i in plan.inputs]
    _launch_plan(backend, size, outputs, plan, inputs, None, 0)
    return True


def _launch_plan(backend, size: int, outputs: list, plan, inputs: list, started, n_effects: int) -> None:
    """launch() for a plan, with the allocation of the outputs, the binding of the buffers and
    the launch in one backend call (launch_new_outputs); a group's ``n_effects`` scatters are
    counted in ``started`` as :func:`launch` counts them."""
    spec = plan.spec
    kernel, status = backend.compile(spec)
    history = state.flags & KERNEL_HISTORY
    t0 = time.perf_counter() if history else 0.0
    if n_effects:
        started.effects += n_effects
        started.launching = n_effects
        outs = backend.launch_new_outputs(kernel, size, spec, inputs, plan.out_vts)
        started.launching = 0
    else:
        outs = backend.launch_new_outputs(kernel, size, spec, inputs, plan.out_vts)
    t1 = time.perf_counter() if history else 0.0
    _become_data(outputs, outs)
    if history:
        _record_launch(backend, kernel, status, spec, size, len(outs), t1 - t0)
    if log.isEnabledFor(_DEBUG):
        log.debug("launch kernel %s size=%d (%d instructions, %s)", kernel.hash[:16], size, plan.n_instrs, status)


def _run_planned_effects(backend, size: int, outputs: list, effects: list, started: _Started) -> bool:
    """:func:`_run_planned` of a group with scatters (``effects``, possibly no ``outputs``; not
    recording): the plan of the graph's shape, whose spec scatters into the targets' buffers
    and stores the outputs; False if the walk does not cover the graph (a symbolic loop's
    scatter...: nothing was done, the caller builds the spec).  ``started`` counts the
    scatters as :func:`launch` does (a failure before the launch puts them back in the queue)."""
    if not effects:
        return bool(outputs) and _run_planned(backend, size, outputs)
    hit = match_plan(outputs, effects)
    if hit is not None:
        plan, inputs = hit
    else:
        shape = shape_of(outputs, effects)
        if shape is None:
            return False
        key, data = shape
        plan = plan_of(outputs, key, data, effects)
        if plan is None:
            return False
        remember_plan(outputs, plan, effects)
        inputs = [data[i].value for i in plan.inputs]
    _launch_plan(backend, size, outputs, plan, inputs, started, len(effects))
    return True


def run_group(backend, size: int, outputs: list, effects: list, started: _Started | None = None) -> None:
    """Compile (or fetch) and launch the kernel computing one size group."""
    spec = build_kernel(outputs, effects)
    launch(backend, size, spec, spec.bindings, spec.outputs, effects, started)


def launch(backend, size: int, spec, bindings: list, outs: list, effects: list,
           started: _Started | None = None) -> None:
    """Compile (or fetch) the kernel of ``spec`` and launch it on ``size`` lanes: ``bindings`` are
    the nodes bound to its parameters (data nodes, then the pending ``outs`` that its OUT
    parameters store, in order), which become data nodes holding the results."""
    kernel, status = backend.compile(spec)
    buffers = []
    alloc = backend.alloc
    for (kind, vt), node in zip(spec.params, bindings):
        buffers.append(alloc(vt, size) if kind == OUT else node.value)
    rec = state.recorder
    if rec is not None:
        rec.on_launch(kernel, spec, size, buffers, effects)
    history = state.flags & KERNEL_HISTORY
    t0 = time.perf_counter() if history else 0.0
    if started is not None:
        started.effects += len(effects)
        started.launching = len(effects)
    if size > 0:
        backend.launch(kernel, size, spec, buffers)
    if started is not None:
        started.launching = 0
    t1 = time.perf_counter() if history else 0.0
    # The OUT parameters come last, in the order of outs (schedule.kernel.build_kernel).
    _become_data(outs, buffers[len(buffers) - len(outs):])
    if history:
        _record_launch(backend, kernel, status, spec, size, len(outs), t1 - t0)
    if log.isEnabledFor(logging.DEBUG):
        log.debug("launch kernel %s size=%d (%d instructions, %s)", kernel.hash[:16], size, len(spec.instrs), status)


def _become_data(nodes, buffers) -> None:
    """Each launched node becomes a data node holding its buffer: ``node.set_data(buf)``
    inlined (one frame per launch, not one per output)."""
    for node, buf in zip(nodes, buffers):
        node.op = "data"
        node.a0 = ()            # (drops the operands: see Node)
        node.a1 = None
        node.value = buf
        node.extra = None


def _record_launch(backend, kernel, status: str, spec, size: int, n_out: int, seconds: float) -> None:
    """Add a kernel launch to the kernel history (:attr:`JitFlag.KernelHistory`)."""
    state.history.append({
        "type": KernelType.JIT, "backend": JitBackend.LLVM, "cpu_backend": backend.name, "size": size,
        "hash": kernel.hash, "ir": kernel.ir,
        "cache_hit": status == "memory", "cache_disk": status == "disk", "uses_optix": False,
        "input_count": len(spec.params) - n_out, "output_count": n_out,
        "recording_mode": _recording_mode(), "operation_count": len(spec.instrs),
        # milliseconds, as in Dr.Jit: IR generation, and LLVM compilation (or disk load)
        "codegen_time": 0.0 if status == "memory" else kernel.codegen_time * 1e3,
        "backend_time": 0.0 if status == "memory" else kernel.compile_time * 1e3,
        "execution_time": seconds * 1e3,
    })


# The trace flushes pending scatters through this hook (it must not import the scheduler).
state.evaluate = evaluate


def record_operation(entry: dict) -> None:
    """Add a non-kernel operation (reduction, prefix sum, ...) to the kernel history."""
    if state.flags & KERNEL_HISTORY:
        try:
            entry["type"] = KernelType(entry["type"])
        except ValueError:
            pass
        entry.setdefault("backend", JitBackend.LLVM)     # (the array backend, as Dr.Jit's entries)
        entry.setdefault("recording_mode", _recording_mode())
        state.history.append(entry)


def kernel_history(types=()) -> list:
    """Return and clear the list of launches since the last call.

    Requires :attr:`JitFlag.KernelHistory`.  Each entry is a dict with at least
    ``type`` (``"jit"`` for compiled kernels, ``"reduce"``, ``"prefix_sum"``,
    ``"compress"``, ... for other operations), ``size``, ``recording_mode``
    (:class:`KernelRecordingMode`: a plain launch, recorded or replayed by a frozen function), and for kernels
    ``hash``, ``ir`` (the LLVM IR), ``cache_hit`` (found in memory) and
    ``cache_disk`` (loaded from the disk cache).

    Parameters
    ----------
    types : sequence of KernelType, optional
        Return only the entries of these types (as Dr.Jit's ``kernel_history(types)``); the
        whole history is cleared either way.  Empty (default): every entry.

    Examples
    --------
    >>> with fj.scoped_set_flag(fj.JitFlag.KernelHistory):
    ...     fj.eval(x + 1)
    ...     jit_only = fj.kernel_history((fj.KernelType.JIT,))
    """
    if isinstance(types, (str, KernelType)) or not isinstance(types, (list, tuple, set, frozenset)):
        raise TypeError(f"kernel_history(): 'types' must be a sequence of KernelType, got "
                        f"{type(types).__name__}")
    h = state.history
    state.history = []
    if types:
        wanted = {KernelType(t) for t in types}
        h = [e for e in h if e.get("type") in wanted]
    for e in h:
        ir = e.get("ir")
        if type(ir) is str:
            e["ir"] = KernelIR(ir)
    return h


class KernelIR(str):
    """A kernel's IR in a :func:`kernel_history` entry: a ``str``, with ``getvalue()`` as the
    ``io.StringIO`` Dr.Jit stores there (``entry['ir'].getvalue()``)."""

    __slots__ = ()

    def getvalue(self) -> str:
        """The IR text (``io.StringIO.getvalue``)."""
        return str(self)
