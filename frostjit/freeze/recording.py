"""A finished recording: what the recorder wrote down, and its generated replay.

A :class:`Recording` holds the operations the recorder wrote down (kernel launches and memory
operations over *slots*, :mod:`.records`), the guards, and how to rebuild the function's
outputs and write back its mutated inputs.  At construction it generates one Python function,
the *replay* (:mod:`.replay_code`), that runs everything in straight-line code: sizes are
Python expressions over the size-class symbols (``s0``, ``s1``) and ``compress`` counts
(``c0``), and the backend's replay emitter writes each launch and memory operation.

With ``JitFlag.KernelHistory`` set (JIT flags are part of the key) the replay adds an entry to
``fj.kernel_history()`` for every launch and memory operation, as the plain call does.
"""
from __future__ import annotations

import threading

from .._dump import release_source
from ..backend import current_backend
from ..trace.state import state, JitFlag
from .records import Launch
from .replay_code import generate_replay, GuardFailed, ReplayFailed, OutOfBounds  # noqa: F401 (re-exported)


class Recording:
    """One recorded configuration of a frozen function (see module docstring).

    Attributes
    ----------
    run : callable
        ``run(flat, captured_nodes)`` replays the recording for the inputs ``flat`` and returns
        the function's outputs (raises :class:`GuardFailed` or :class:`ReplayFailed`).
    source : str
        The generated replay's Python source (``filename`` is where tracebacks find it).
    """

    def __init__(self, rec, n_classes: int, node_table: list, out_desc, actions: list, sym_outputs: list,
                 key, paths, dispatch_deps, name: str = "?"):
        self.backend = current_backend()
        self.key = key
        self.paths = paths
        self.ops = rec.ops
        self.guards = rec.guards
        self.captured = rec.captured
        self.out_desc = out_desc
        self.node_table = node_table
        self.actions = actions
        self.n_kernels = sum(1 for o in rec.ops if type(o) is Launch)
        self.dispatch_deps = dispatch_deps
        self.subscriptions = []
        self.valid = True
        # outputs differentiable through the call: the replay's hub (.through), or None
        self.through = getattr(rec, "through", None)
        self.pins = dict(rec.pins)      # size class -> exact size (the cache indexes recordings by them)
        # The launches share this recording's argument arrays, scratch buffers and slab: one
        # thread at a time (the write-backs and outputs after them run unlocked).
        self.lock = threading.Lock()
        history = bool(state.flags & JitFlag.KernelHistory)     # (JIT flags are part of the key)
        self.slot_kind = rec.slot_kind
        # what a variant of the replay is generated from (kept intermediates, .kept)
        self._generate = (name, rec, n_classes, node_table, sym_outputs, actions, out_desc, history)
        self.keep_out = ()          # slots whose buffers the replay hands to its hub (.kept)
        self.run, self.source, self.filename = generate_replay(
            name, self.backend, rec, n_classes, node_table, sym_outputs, actions, out_desc, self.lock, history)
        self._sources = [self.filename]

    def variant(self, kept_in=None, keep_out=()):
        """A replay function of this recording that reads the slots ``kept_in`` (``{slot: k}``)
        from ``flat.kept`` instead of computing them, or hands the slots ``keep_out`` to its hub
        (:mod:`.kept`); the same signature and locking as :attr:`run`."""
        name, rec, n_classes, node_table, sym_outputs, actions, out_desc, history = self._generate
        run, _source, filename = generate_replay(name, self.backend, rec, n_classes, node_table, sym_outputs,
                                                 actions, out_desc, self.lock, history, kept_in, keep_out)
        self._sources.append(filename)
        return run

    def captured_nodes(self):
        """The captured nodes, or ``None`` when one of them is gone (the recording is stale)."""
        out = []
        for wr in self.captured:
            n = wr()
            if n is None or n.op != "data":
                return None
            out.append(n)
        return out

    def close(self) -> None:
        """Drop dispatch subscriptions and the replay's registered source (the recording is no
        longer cached)."""
        self.valid = False
        for s in self.subscriptions:
            s.close()
        self.subscriptions = []
        for filename in self._sources:
            release_source(filename)
