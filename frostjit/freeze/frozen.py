"""``fj.freeze`` and the frozen-function object: lookup, recording, replay, diagnostics.

A call walks its inputs into a layout key (:mod:`.layout`).  A key seen before maps to one or
more :class:`~.recording.Recording` objects; the first whose guards hold is replayed.  A new
key (or failing guards) runs the function for real under a :class:`~.recorder.Recorder` and
stores what it launched.  A recording that read array data, returned data computed in Python
from NumPy inputs, or scattered into an array it does not know as an input cannot be replayed:
its key falls back to the plain call (with a one-time :class:`FreezeWarning` naming the cause).
"""
from __future__ import annotations

import dis
import functools
import logging
import os
import sys
import threading
import types
import warnings
import weakref

from ..array.flat import ArrayBase
from ..dispatch import on_register, observe_calls
from ..schedule.evaluate import evaluate
from ..backend import on_backend_change
from ..backend.cache_control import on_kernel_cache_flush
from ..trace.state import state, JitBackend
from . import binder, layout
from .layout import Walker, entries, kind_of
from .recorder import Recorder, RECORDERS
from .cache import RecordingCache, MISS as _NO_BINDER
from .recording import Recording, GuardFailed, ReplayFailed
from .records import scatters_into_captured
from .outputs import Describer, build
from .symbolic import Sym, ONE
from ..ad import frozen as _ad

log = logging.getLogger("frostjit")

# Every frozen function, so that ``fj.flush_kernel_cache()`` can drop their recordings.
_INSTANCES: "weakref.WeakSet[FrozenFunction]" = weakref.WeakSet()


def drop_all_recordings() -> None:
    """Drop the recordings of every frozen function (counters kept): the next calls trace again.

    Called after ``fj.flush_kernel_cache()`` (as in Dr.Jit, where flushing the kernel cache forces
    frozen functions to re-trace) and ``fj.set_cpu_backend()`` (recordings hold a backend's kernels).
    """
    for ff in list(_INSTANCES):
        ff._drop_all()


on_kernel_cache_flush(drop_all_recordings)
on_backend_change(lambda backend: drop_all_recordings())


class FreezeWarning(UserWarning):
    """Warnings of frozen functions: frequent re-tracing, replays that fall back to plain calls."""


def _warn(message: str) -> None:
    """``warnings.warn`` pointing at the user's call, not at frostjit.freeze internals."""
    f = sys._getframe(1)
    level = 2
    while f is not None and f.f_globals.get("__name__", "").startswith("frostjit.freeze"):
        f = f.f_back
        level += 1
    warnings.warn(FreezeWarning(message), stacklevel=level)


class _Fallback:
    """Cache entry for a key whose recording cannot be replayed: the plain call runs."""

    __slots__ = ("reason", "key", "paths", "warned")

    def __init__(self, reason: str, key, paths):
        self.reason = reason
        self.key = key
        self.paths = paths
        self.warned = True

    def close(self) -> None:
        pass


class _GlobalsView:
    """The globals a function names, read live (a rebinding ``global g`` is written back)."""

    __slots__ = ("g", "names")
    __fj_path_style__ = "key"

    def __init__(self, g: dict, names: tuple):
        self.g = g
        self.names = names

    def __fj_traverse__(self) -> dict:
        g = self.g
        return {n: g[n] for n in self.names if n in g}

    def __fj_assign__(self, values: dict) -> None:
        self.g.update(values)


class _CellsView:
    """The closure cells of a function, read live (``nonlocal y; y += x`` is written back)."""

    __slots__ = ("cells", "names")
    __fj_path_style__ = "key"

    def __init__(self, cells, names):
        self.cells = cells
        self.names = names

    def __fj_traverse__(self) -> dict:
        out = {}
        for n, c in zip(self.names, self.cells):
            try:
                out[n] = c.cell_contents
            except ValueError:
                pass
        return out

    def __fj_assign__(self, values: dict) -> None:
        for n, c in zip(self.names, self.cells):
            if n in values:
                c.cell_contents = values[n]


def _global_names(f) -> tuple:
    """Names the function (and the code nested in it) reads or writes as globals.

    Only real global accesses count (not attribute names, which share ``co_names``), so an
    attribute ``p.x`` never turns an unrelated global ``x`` into an input.
    """
    code = getattr(f, "__code__", None)
    if code is None:
        return ()
    names = []
    stack = [code]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            if ins.opname in ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME") \
                    and ins.argval not in names:
                names.append(ins.argval)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return tuple(names)


class FrozenFunction:
    """A function whose kernel launches are recorded once and replayed (see :func:`freeze`)."""

    # Reached as an input of another frozen function (a global, a closure cell), a frozen
    # function is keyed by identity: its recordings and globals are not inputs.
    __fj_opaque__ = True

    def __init__(self, f, state_fn=None, limit=None, warn_after: int = 10, backend=None,
                 auto_opaque: bool = True, enabled: bool = True):
        functools.update_wrapper(self, f)
        self.f = f
        self.state_fn = state_fn
        self.limit = None if limit is None or limit < 0 else int(limit)
        self.warn_after = warn_after
        self.backend = backend
        self.auto_opaque = auto_opaque
        self.enabled = enabled
        self._cache = RecordingCache(self.limit)
        self._dead = self._cache.dead     # (the list the cache appends dead keys to: checked per call)
        self._n_recordings = 0
        # Guards the cache and the counters, never held while the function runs (a recording
        # may wait for another thread that calls this or another frozen function).
        self._lock = threading.RLock()
        self._opaque_mask: set = set()
        self._prev_paths = None
        self._globals = getattr(f, "__globals__", None)
        self._global_names = _global_names(f)
        code = getattr(f, "__code__", None)
        self._cells = getattr(f, "__closure__", None) or ()
        self._cell_names = code.co_freevars if code is not None and self._cells else ()
        # The globals/closure views are stateless (read and write live): one of each, reused.
        self._gview = _GlobalsView(self._globals, self._global_names) if self._global_names else None
        self._cview = _CellsView(self._cells, self._cell_names) if self._cells else None
        self._bound = None            # (binder, cache entry) of the key replayed last
        self._recording: dict = {}    # key -> thread recording it now
        self.name = getattr(f, "__qualname__", getattr(f, "__name__", repr(f)))
        _INSTANCES.add(self)

    # -- public API --------------------------------------------------------------------
    @property
    def n_recordings(self) -> int:
        """How many times the function was traced (re-traces included; reset by :meth:`clear`)."""
        return self._n_recordings

    @property
    def n_cached_recordings(self) -> int:
        """How many recordings are cached now."""
        return self._cache.n

    def clear(self) -> None:
        """Drop every recording and reset both counters."""
        with self._lock:
            self._drop_all()
            self._n_recordings = 0
            self._prev_paths = None
            self._opaque_mask = set()

    def _drop_all(self) -> None:
        with self._lock:
            for r in self._cache.clear():
                r.close()
            self._bound = None

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def __repr__(self) -> str:
        return f"<frozen function {self.name}: {self.n_cached_recordings} cached recording(s)>"

    # -- calls -------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if not self.enabled or self.limit == 0:
            return self.f(*args, **kwargs)
        rec = state.recorder
        if rec is not None and rec.current() is not None:
            # Called while an outer frozen function records: its work is part of that recording.
            return self.f(*args, **kwargs)
        return self._call(args, kwargs)

    def _walk_fast(self, args, kw):
        """``_walk`` for the common call ``f(array, array, ...)``: the same key, fewer steps.

        Returns ``None`` unless every argument is an evaluated JIT array reached once.
        """
        w = Walker(False, self._opaque_mask, not self.auto_opaque)
        f = w.f
        memo = w.memo
        memo[id(args)] = 0
        f.containers.append(args)
        key = f.key
        key.append((tuple, len(args)))
        at = layout._ARRAY_TYPES
        for v in args:
            if type(v) not in at:
                return None
            node = v._node
            if node.op != "data" or id(v) in memo or node in state.dirty or v._ad is not None:
                return None     # (a grad-enabled array's AD vertex is walked too: the full walk)
            memo[id(v)] = len(memo)
            f.leaves.append(v)
            f.leaf_nodes.append(node)
            key.append(f.data_token(v, node))
        f.has_jit = bool(f.nodes)
        memo[id(kw)] = len(memo)
        f.containers.append(kw)
        key.append(_EMPTY_DICT_TOKEN)
        if self._gview is not None:
            w.walk(self._gview, "globals")
        if self._cview is not None:
            w.walk(self._cview, "nonlocals")
        if f.pending:
            return None
        return f, (int(state.flags), _ad.scope_token(f.leaves), tuple(key))

    def _walk(self, args, kwargs, paths: bool):
        if state.side_effects:
            evaluate(())
        for attempt in range(3):
            w = Walker(paths, self._opaque_mask, not self.auto_opaque)
            w.walk(args, "args")
            w.walk(kwargs, "kwargs")
            if self._gview is not None:
                w.walk(self._gview, "globals")
            if self._cview is not None:
                w.walk(self._cview, "nonlocals")
            if self.state_fn is not None:
                w.walk(self.state_fn(*args, **kwargs), "state_fn")
            flat = w.f
            if not flat.pending:
                break
            evaluate(flat.pending)      # every input is evaluated before the lookup
        scope = _ad.scope_token(flat.leaves)
        key = (int(state.flags), scope, tuple(flat.key))
        if paths:
            flat.paths[:0] = [("<JIT flags>", ("flags", int(state.flags))), ("<AD scope>", ("ad scope", scope))]
        return flat, key

    def _call(self, args, kwargs):
        if self._dead:
            self._purge()
        why = []
        b = self._bound
        if b is not None:
            # The key replayed last: its generated binder checks and extracts the inputs.
            flat = b[0](args, kwargs)
            if flat is not None:
                entry = b[1]
                if VERIFY_BINDERS:
                    self._verify_binder(args, kwargs, flat, entry.key)
                if self.limit is not None:
                    self._cache.touch(entry)
                cands = entry.candidates(flat.sizes) if entry.pinned else entry.general
                if len(cands) == 1:
                    recd = cands[0]
                    if type(recd) is Recording and not recd.captured:
                        try:        # the common case, inlined (as in _replay)
                            out = recd.run(flat, ())
                        except GuardFailed as e:
                            why.append(f"guard failed: {e.why}")
                            return self._miss(args, kwargs, why)
                        except ReplayFailed as e:
                            self._replay_failed(recd, e, why)
                            return self._miss(args, kwargs, why)
                        _ad.after_call()
                        return out
                r = self._replay(cands, flat, args, kwargs, why)
                if r is not _MISS:
                    return r[0]
                return self._miss(args, kwargs, why)
        r = None
        if not kwargs and self.state_fn is None and not state.side_effects:
            r = self._walk_fast(args, kwargs)
        flat, key = r if r is not None else self._walk(args, kwargs, False)
        entry = self._cache.get(key)
        if entry is not None:
            self._bind(args, kwargs, flat, entry)
            r = self._replay(entry.candidates(flat.sizes), flat, args, kwargs, why)
            if r is not _MISS:
                return r[0]
        return self._miss(args, kwargs, why)

    def _bind(self, args, kwargs, flat, entry) -> None:
        """Make ``entry``'s key the one whose binder runs first (generating the binder once)."""
        bnd = entry.binder
        if bnd is _NO_BINDER:
            try:
                bnd = binder.generate(self, args, kwargs, flat, (self._gview, self._cview))
            except binder.Unsupported as e:
                log.debug("frostjit.freeze(%s): no binder for this input structure (%s)", self.name, e)
                bnd = None
            entry.binder = bnd
        self._bound = None if bnd is None else (bnd, entry)

    def _verify_binder(self, args, kwargs, b, key) -> None:
        """Debug/test mode: a binder hit must be what the full walk finds."""
        flat, k2 = self._walk(args, kwargs, False)
        same = lambda x, y: len(x) == len(y) and all(p is q for p, q in zip(x, y))  # noqa: E731
        if not (k2 == key and same(flat.nodes, b.nodes) and flat.sizes == b.sizes
                and same(flat.leaves, b.leaves) and same(flat.containers, b.containers)):
            raise AssertionError(f"frostjit.freeze({self.name}): binder disagrees with the layout walk")

    def _replay(self, cands, flat, args, kwargs, why):
        """Replay the first of ``cands`` whose guards hold: ``(outputs,)``, or ``_MISS``."""
        for recd in list(cands):
            if type(recd) is _Fallback:
                return (self.f(*args, **kwargs),)
            capn = ()
            if recd.captured:
                capn = recd.captured_nodes()
                if capn is None:
                    why.append("an array the recording captured (not among the inputs) was freed or rebound")
                    self._drop(recd)
                    continue
            try:
                out = recd.run(flat, capn)
            except GuardFailed as e:
                why.append(f"guard failed: {e.why}")
                continue
            except ReplayFailed as e:  # a size expression failed: the plain call decides what happens
                self._replay_failed(recd, e, why)
                continue
            _ad.after_call()        # gradients written back to inputs flow on to what they depend on
            return (out,)
        return _MISS

    def _replay_failed(self, recd, e, why) -> None:
        """A replay raised (not a guard): the call traces again, so the plain call decides what
        happens (raise the same error, or record).  The recording is dropped, never retried: a
        recording that cannot replay must not be tried first on every later call."""
        why.append(f"replay failed ({e})")
        log.debug("frostjit.freeze(%s): a replay raised %s; the recording is dropped", self.name, e)
        self._drop(recd)

    def _drop(self, recd) -> None:
        with self._lock:
            self._cache.drop(recd)
            self._forget_dropped_binder()
        recd.close()

    def _purge(self) -> None:
        """Drop the entries whose identity-keyed objects died (cache.RecordingCache.purge)."""
        with self._lock:
            dropped = self._cache.purge()
            self._forget_dropped_binder()
        for r in dropped:
            r.close()

    def _forget_dropped_binder(self) -> None:
        b = self._bound
        if b is not None and self._cache.entries.get(b[1].key) is not b[1]:
            self._bound = None

    def _miss(self, args, kwargs, why):
        pflat, pkey = self._walk(args, kwargs, True)
        # auto_opaque: a literal input whose value or size changed since the last recording
        # becomes opaque (evaluated) from now on: one re-trace, then replays for any value.
        if self.auto_opaque and self._prev_paths is not None:
            old = {p: t for p, t in self._prev_paths}
            new_mask = set()
            li = -1
            for p, t in pflat.paths:
                if isinstance(t, tuple) and len(t) == 5 and t[1] == "L" and isinstance(t[0], type) \
                        and issubclass(t[0], ArrayBase):
                    li = self._leaf_index_of(pflat, p)
                    o = old.get(p)
                    if o is not None and o != t and isinstance(o, tuple) and len(o) == 5 and o[1] == "L":
                        new_mask.add(li)
            new_mask -= self._opaque_mask
            if new_mask:
                log.debug("frostjit.freeze(%s): literal inputs changed; made opaque: %s", self.name,
                          ", ".join(p for p, t in pflat.paths if self._leaf_index_of(pflat, p) in new_mask))
                with self._lock:
                    self._opaque_mask = self._opaque_mask | new_mask     # (a new set: walks may read it)
                    self._cache.clear_binders()     # keys with these literals now walk differently
                    self._bound = None
                flat, key = self._walk(args, kwargs, False)
                entry = self._cache.get(key)
                if entry is not None:
                    r = self._replay(entry.candidates(flat.sizes), flat, args, kwargs, why)
                    if r is not _MISS:
                        return r[0]
                pflat, pkey = self._walk(args, kwargs, True)
        return self._record(args, kwargs, pflat, pkey, why)

    @staticmethod
    def _leaf_index_of(flat, path):
        # paths of array leaves appear in walk order; count them
        i = -1
        for p, t in flat.paths:
            if isinstance(t, tuple) and t and isinstance(t[0], type) and issubclass(t[0], ArrayBase):
                i += 1
                if p == path:
                    return i
        return -1

    # -- recording ---------------------------------------------------------------------
    def _record(self, args, kwargs, flat, key, why):
        if not flat.has_jit and not flat.numpy and self.backend is None:
            # (NumPy arrays are array inputs of the CPU backend, the only one so far.)
            raise RuntimeError(
                f"frostjit.freeze({self.name}): cannot infer the backend: this call has no JIT array "
                "among its inputs; pass backend=fj.JitBackend.LLVM to fj.freeze()")
        if self.backend is not None and self.backend not in (JitBackend.LLVM, "llvm", "LLVM"):
            raise RuntimeError(f"frostjit.freeze({self.name}): backend {self.backend!r} is not available "
                               "(only JitBackend.LLVM exists)")
        with self._lock:
            busy = key in self._recording
            if not busy:
                self._recording[key] = threading.get_ident()
                self._n_recordings += 1
                n = self._n_recordings
                prev = self._prev_paths
        if busy:
            # Another thread is recording this very layout: run plainly rather than record it
            # twice or wait (that thread may be waiting for this one).
            return self.f(*args, **kwargs)
        reasons = list(why)
        if prev is not None:
            reasons += layout.diff(prev, flat.paths)
        if n > 1:
            log.debug("frostjit.freeze(%s): tracing again (trace %d): %s", self.name, n,
                      "; ".join(reasons) or "new input layout")
        if n > self.warn_after and n > 1:
            lines = "\n  ".join(reasons) if reasons else "(no difference in the inputs: guards or evictions)"
            _warn(f"frozen function {self.name!r} was traced {n} times. Tracing repeatedly "
                  f"defeats the purpose of freezing it; it usually means its inputs keep changing in a way no "
                  f"cached recording covers. Inputs that differ from the previous recording:\n  {lines}")
        try:
            out, recd = self._trace(args, kwargs, flat, key)        # (no lock held: see __init__)
        finally:
            with self._lock:
                del self._recording[key]
        _ad.after_call()
        if recd is None:
            return out
        with self._lock:
            self._prev_paths = flat.paths
            evicted = self._cache.add(key, recd)
            self._forget_dropped_binder()
        for r in evicted:
            r.close()
        return out

    def _trace(self, args, kwargs, flat, key):
        rec = Recorder(self.name)
        syms = [Sym(f"s{i}", n, rec) for i, n in enumerate(flat.sizes)]
        for node in flat.nodes:
            s = ONE if node.size == 1 else syms[flat.size_index[node.size]]
            rec.add_input(node, s)
            node.sym = s
        rec.np_inputs = list(flat.numpy)
        rec.np_sym = [ONE if a.ndim == 0 or a.shape[0] == 1 else syms[flat.size_index[a.shape[0]]]
                      for a in flat.numpy]
        pre_entries = [None if type(c) is tuple else entries(c) for c in flat.containers]
        observer = None
        try:
            # Installed inside the try: an exception here (a Ctrl-C) must not leave the hook on.
            observer = _observe_dispatch()
            RECORDERS.push(rec)
            ad_token = _ad.enter(flat.leaves)       # the call runs in an isolation scope (as in Dr.Jit)
            try:
                out = self.f(*args, **kwargs)
            finally:
                ad_reason = _ad.leave(ad_token, flat.leaves)
            if ad_reason is not None and rec.data_dependent is None:
                rec.data_dependent = ad_reason
            recd, out = self._finish(rec, flat, key, out, pre_entries, observer)
        except BaseException:
            RECORDERS.pop(rec)
            if state.side_effects:      # leave the engine as a plain call would
                evaluate(())
            raise
        finally:
            RECORDERS.pop(rec)
            if observer is not None:
                observer[0].close()
            for node in flat.nodes:
                node.sym = None
            rec.release()
        return out, recd

    def _finish(self, rec, flat, key, out, pre_entries, observer):
        leaf_index = {id(a): i for i, a in enumerate(flat.leaves)}
        cont_index = {id(c): i for i, c in enumerate(flat.containers)}
        # 1. What changed in the inputs (post-call state against the pre-call snapshot).
        changed = []          # (ci, kind, [(key, value)] now, {key: value} before)
        new_values = []
        for ci, c in enumerate(flat.containers):
            before = pre_entries[ci]
            if before is None:
                continue
            now = entries(c)
            if len(now) == len(before) and all(k1 == k2 and v1 is v2 for (k1, v1), (k2, v2) in zip(now, before)):
                continue
            changed.append((ci, kind_of(c), now, before))
            bmap = {}
            for k, v in before:
                bmap.setdefault(k, v)
            new_values.extend(v for k, v in now if bmap.get(k, _MISS) is not v)
        # 2. Evaluate every array the caller will see (outputs, mutated and new inputs).
        w = Walker(False)
        w.walk(out, None)
        for v in new_values:
            w.walk(v, None)
        # (the describer reaches all instance state of output objects, which the walk of an
        # input does not: a dataclass's non-field attributes, a dict subclass's attributes)
        d = Describer(rec, flat, leaf_index, cont_index)
        d.count(out)
        for _, _, now, _ in changed:
            for _, v in now:
                d.count(v)
        pending = list(w.f.pending) + d.pending
        for a, n in zip(flat.leaves, flat.leaf_nodes):
            if a._node is not n and a._node.op not in ("data", "literal"):
                pending.append(a._node)
        if state.scheduled:
            pending = state.scheduled + pending
            state.scheduled = []
        evaluate(pending)
        rec._flush()
        rec.stolen_effects()
        for a in w.f.numpy + d.numpy:
            if not any(a is b for b in flat.numpy) and rec.data_dependent is None:
                rec.data_dependent = "returns a NumPy array computed in Python (not recorded)"
        if rec.data_dependent is None and scatters_into_captured(rec.ops, rec.slot_kind):
            rec.data_dependent = ("scatters into an array that is not among its inputs (make it an "
                                  "argument, an attribute of one, or use state_fn)")
        # 3. Describe outputs and write-backs against the node table.
        actions = []
        for i, (a, n) in enumerate(zip(flat.leaves, flat.leaf_nodes)):
            if a._node is not n:
                actions.append(("node", i, d.node(a._node)))
        for ci, kind, now, before in changed:
            if kind == "seq":
                actions.append(("setlist", ci, [d.describe(v) for _, v in now]))
                continue
            if kind == "custom":
                actions.append(("assign", ci, {k: d.describe(v) for k, v in now}))
                continue
            bmap = dict(before)
            nkeys = set()
            for k, v in now:
                nkeys.add(k)
                if bmap.get(k, _MISS) is not v:
                    actions.append(("set", ci, k, d.describe(v)))
            for k, _ in before:
                if k not in nkeys:
                    actions.append(("del", ci, k))
        out_desc = d.describe(out)
        real_nodes = list(d.real_nodes)
        sym_values = [s.value for s in d.sym_outputs]
        deps = observer[1] if observer is not None else set()
        if rec.interfered is not None:
            # not a property of the function: nothing is cached, the next call traces again
            _warn(f"frozen function {self.name!r} {rec.interfered} while it was being recorded; the "
                  "recording is not kept (this call's results are those of a plain call)")
            return None, out
        if rec.data_dependent is not None:
            reason = rec.data_dependent
            _warn(f"frozen function {self.name!r} {reason}: its recording depends on data the layout key does "
                  f"not cover, so calls with this input layout run the plain function (no replay).")
            log.debug("frostjit.freeze(%s): not replayable: %s", self.name, reason)
            recd = _Fallback(reason, key, flat.paths)
        else:
            recd = Recording(rec, len(flat.sizes), d.table, out_desc, actions, d.sym_outputs, key, flat.paths, deps,
                             self.name)
            self._subscribe(recd, deps)
        # The caller of this first call sees the same structure a replay builds.
        if type(recd) is _Fallback and recd.reason in _ad.REASONS:
            return recd, out        # keep the AD graph of this (plain) call's results
        # An output shared with a write-back (described there first) is the object the plain
        # call stored into the input; shares inside the outputs are rebuilt (as a replay does).
        memo = dict(d.shared_objs)
        result = build(out_desc, flat, real_nodes, sym_values, memo)
        return recd, result

    def _subscribe(self, recd, deps) -> None:
        if not deps:
            return
        for fn in deps:
            def invalidate(_fn, recd=recd):
                log.debug("frostjit.freeze(%s): a method was registered on %r; dropping a recording",
                          self.name, _fn)
                self._drop(recd)
            try:
                recd.subscriptions.append(on_register(fn, invalidate))
            except TypeError:
                pass


_MISS = object()
# Tests set this (or FROSTJIT_FREEZE_VERIFY_BINDERS=1): every binder hit is checked against the
# full layout walk.
VERIFY_BINDERS = bool(os.environ.get("FROSTJIT_FREEZE_VERIFY_BINDERS"))
_EMPTY_DICT_TOKEN = (dict, ())


def _observe_dispatch():
    seen = set()
    me = threading.get_ident()

    def cb(fn):
        if threading.get_ident() == me:
            seen.add(fn)
    return observe_calls(cb), seen


def freeze(f=None, *, state_fn=None, limit=None, warn_after: int = 10, backend=None, auto_opaque: bool = True,
           enabled: bool = True):
    """Record a function's kernel launches once and replay them for compatible inputs.

    Usable as ``@fj.freeze``, ``@fj.freeze(limit=2)`` or ``fj.freeze(fn, ...)``.  The first call
    (and any call whose inputs differ in *layout*: types, container structure, Python values,
    size 1 versus wide, which inputs share a size, literal values, JIT flags) runs the function
    for real and records what it launched; later compatible calls replay the recording at the
    inputs' current widths, with no Python run per operation.  Results equal a plain call's at
    every width: widths used as values (``x + fj.width(x)``, ``fj.mean``) are recomputed, widths
    that escape into Python control flow are guarded, and recordings that read array data fall
    back to the plain call.

    Parameters
    ----------
    f : callable, optional
        The function (a method works too: the instance is an input like any other).
    state_fn : callable, optional
        ``state_fn(*args, **kwargs)`` returns extra state treated as another input.
    limit : int, optional
        Most recordings kept (least recently used evicted); ``0`` never records.
    warn_after : int
        Warn (:class:`FreezeWarning`) once the function has been traced more than this often.
    backend : JitBackend, optional
        Needed when a call has no JIT array among its inputs.
    auto_opaque : bool
        Keep literal inputs as literals until their value changes (then make them opaque);
        ``False`` evaluates every literal input on every call.
    enabled : bool
        ``False`` calls the function directly (settable later as ``.enabled``).

    Examples
    --------
    >>> @fj.freeze
    ... def step(x, y):
    ...     return fj.fma(x, y, 1) * 0.5
    >>> step(Float([1, 2]), Float([3, 4]))            # traced and recorded
    >>> step(Float([1, 2, 3]), Float([3, 4, 5]))      # replayed at width 3
    >>> step.n_recordings
    1
    """
    def wrap(fn):
        if not callable(fn):
            raise TypeError(f"freeze(): expected a callable, got {type(fn).__name__}")
        return FrozenFunction(fn, state_fn=state_fn, limit=limit, warn_after=warn_after, backend=backend,
                              auto_opaque=auto_opaque, enabled=enabled)
    if f is None:
        return wrap
    return wrap(f)
