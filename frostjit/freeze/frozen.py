"""``fj.freeze`` and the frozen-function object: lookup, recording, replay, diagnostics.

A call walks its inputs into a layout key (:mod:`.layout`).  A key seen before maps to one or
more :class:`~.recording.Recording` objects; the first whose guards hold is replayed.  A new
key (or failing guards) runs the function for real under a :class:`~.recorder.Recorder` and
stores what it launched.  A recording that read array data, returned data computed in Python
from NumPy inputs, or scattered into an array it does not know as an input cannot be replayed:
its key falls back to the plain call (with a one-time :class:`FreezeWarning` naming the cause).
"""
from __future__ import annotations

import collections
import dis
import functools
import logging
import os
import sys
import threading
import types
import warnings
import weakref
from operator import is_, itemgetter

import numpy as np

from ..array.flat import ArrayBase
from ..dispatch import is_dispatched, observe_calls, on_register
from ..schedule.evaluate import evaluate
from ..backend import current_backend, on_backend_change
from ..backend.settings import settings as backend_settings
from ..backend.cache_control import on_kernel_cache_flush
from ..trace.state import state, JitBackend, KERNEL_FREEZING
from . import binder, checking, guards, layout
from .checking import FreezeMismatchError
from . import raised as _raised
from .raised import as_runtime_error
from ..tree.kinds import ARRAY_TYPES
from .layout import PARAM_NUMBERS, Walker, entries
from .code import INTERNAL, function_class
from .readset import ReadSet
from .recorder import Recorder, RECORDERS
from .cache import RecordingCache, MISS as _NO_BINDER
from .recording import Recording, GuardFailed, ReplayFailed
from .records import (UploadInput, scatters_into_captured, SetNode, SetEntry, SetDictItem, DelEntry, SetItems,
                      AssignAll)
from .outputs import Describer, build
from .symbolic import Sym, ONE
from ..ad import frozen as _ad
from . import through as _through

log = logging.getLogger("frostjit")

# (schedule/evaluate.py suspends this hook while it evaluates: see TraceState.readset_trace)
state.readset_trace = ReadSet._global

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


_ABSENT = object()      # an unbound global or empty closure cell (_GlobalsView.values)


class _GlobalsView:
    """The globals a function names, read live (a rebinding ``global g`` is written back)."""

    __slots__ = ("g", "names", "_get")
    __fj_path_style__ = "key"

    def __init__(self, g: dict, names: tuple):
        self.g = g
        self.names = names
        self._get = itemgetter(*names) if len(names) > 1 else None     # (values(): one C call)

    def __fj_traverse__(self) -> dict:
        g = self.g
        return {n: g[n] for n in self.names if n in g}

    def __fj_assign__(self, values: dict) -> None:
        self.g.update(values)

    def values(self) -> list:
        """The named globals now, in order (a sequence; ``_ABSENT`` where unbound): what a call read
        (:mod:`.through` puts them back while a call's derivative runs)."""
        g = self.g
        if self._get is not None:
            try:
                return self._get(g)
            except KeyError:
                pass
        return [g.get(n, _ABSENT) for n in self.names]

    @staticmethod
    def same(now, then) -> bool:
        """Whether two :meth:`values` snapshots hold the same objects."""
        return all(map(is_, now, then))

    def put(self, values: list) -> None:
        """Make the named globals ``values`` (from :meth:`values`) again."""
        g = self.g
        for n, v in zip(self.names, values):
            if v is _ABSENT:
                g.pop(n, None)
            else:
                g[n] = v


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

    def values(self) -> list:
        """The cells' contents now, in order (``_ABSENT`` where empty): see :meth:`_GlobalsView.values`."""
        try:
            return [c.cell_contents for c in self.cells]
        except ValueError:      # (an empty cell)
            pass
        out = []
        for c in self.cells:
            try:
                out.append(c.cell_contents)
            except ValueError:
                out.append(_ABSENT)
        return out

    same = staticmethod(_GlobalsView.same)

    def put(self, values: list) -> None:
        """Make the cells' contents ``values`` (from :meth:`values`) again."""
        for c, v in zip(self.cells, values):
            if v is _ABSENT:
                try:
                    del c.cell_contents
                except ValueError:
                    pass
            else:
                c.cell_contents = v


class _InstanceView:
    """The attributes (``__dict__``) of a frozen bound method's or callable object's instance,
    for :mod:`.through` (as :class:`_GlobalsView`: ``values``, ``same``, ``put``)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def values(self) -> dict:
        return self.obj.__dict__.copy()

    @staticmethod
    def same(now: dict, then: dict) -> bool:
        return len(now) == len(then) and all(map(is_, now.values(), then.values())) and now.keys() == then.keys()

    def put(self, values: dict) -> None:
        d = self.obj.__dict__
        d.clear()
        d.update(values)


def _global_names(f) -> tuple:
    """Names the function (and the code nested in it) reads or writes as globals.

    Only real global accesses count (not attribute names, which share ``co_names``), so an
    attribute ``p.x`` never turns an unrelated global ``x`` into an input.
    """
    code = getattr(f, "__code__", None)
    if code is None:
        return ()
    names = _GLOBAL_NAMES.get(code)
    if names is None:
        # (a code object's instructions never change: a program that freezes the same function
        # anew at every call, p_sdf_march's dr.freeze(render) inside main(), read them each time,
        # ~0.4 ms with dis for a 20-line function)
        names = _GLOBAL_NAMES[code] = _code_global_names(code)
    return names


_GLOBAL_NAMES: "weakref.WeakKeyDictionary[types.CodeType, tuple]" = weakref.WeakKeyDictionary()


def _code_global_names(code) -> tuple:
    """:func:`_global_names` of a code object."""
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
    # Called with every call's walked inputs before anything runs (the derivative functions of
    # .through check there that the call's input arrays are still in place).
    _inputs_hook = None

    def __init__(self, f, state_fn=None, limit=None, warn_after: int = 10, backend=None,
                 auto_opaque: bool = True, enabled: bool = True, check=None):
        functools.update_wrapper(self, f)
        self.f = f
        self.state_fn = state_fn
        self.limit = None if limit is None or limit < 0 else int(limit)
        self.warn_after = warn_after
        self.backend = backend
        self.auto_opaque = auto_opaque
        self.enabled = enabled
        self.check = check      # None: FROSTJIT_FREEZE_CHECK decides (the module's CHECK)
        self._cache = RecordingCache(self.limit)
        self._dead = self._cache.dead     # (the list the cache appends dead keys to: checked per call)
        self._n_recordings = 0
        # Guards the cache and the counters, never held while the function runs (a recording
        # may wait for another thread that calls this or another frozen function).
        self._lock = threading.RLock()
        self._opaque_mask: set = set()
        self._param_mask = frozenset()      # Python numbers (walk order) that are parameters
        self._prev_paths = None
        self._bind_code()
        self._bound = None            # (binder, cache entry) of the key replayed last
        # (binder, cache entry) of up to MAX_OLDER_BINDERS keys replayed before it, most recent
        # first: tried when the last key's binder misses (a step whose inputs alternate between
        # two layouts, a literal on one call and an evaluated array on the next, walked every call)
        self._older: list = []
        self._recording: dict = {}    # key -> thread recording it now
        self.name = getattr(f, "__qualname__", getattr(f, "__name__", repr(f)))
        _INSTANCES.add(self)

    def _bind_code(self) -> None:
        """Derive what the code that runs first decides: the globals it names, its closure
        cells (inputs), the function the read set treats as the frozen code, and what
        :meth:`_call` watches to see that code replaced."""
        f = self.f
        code = getattr(f, "__code__", None)
        if code is not None and (is_dispatched(f) or (not code.co_filename.startswith("<")
                                                      and function_class(f) == INTERNAL)):
            # frostjit's own code frozen directly (a dispatched function's generated call path:
            # ``fj.freeze(g)`` for an ``@dispatch`` function): its globals and cells are
            # frostjit's state, not inputs (registrations drop recordings through on_register).
            # r15: walked as inputs, the function's subscription list, which each recording
            # extends, changed the key at every call: traced every call, never replayed.
            # (is_dispatched: the call path, also when FROSTJIT_DUMP compiles it from a dumped
            # file.  Other generated code keeps its inputs: an @fj.syntax function's is the
            # user's, and code_class(code) without a frame cached it as frostjit's, so its
            # top-level reads went unwatched: a stale replay of this branch's first version)
            self._globals, self._global_names, self._cells = None, (), ()
        else:
            self._globals = getattr(f, "__globals__", None)
            self._global_names = _global_names(f)
            self._cells = getattr(f, "__closure__", None) or ()
        self._cell_names = code.co_freevars if code is not None and self._cells else ()
        # The globals/closure views are stateless (read and write live): one of each, reused.
        self._gview = _GlobalsView(self._globals, self._global_names) if self._global_names else None
        self._cview = _CellsView(self._cells, self._cell_names) if self._cells else None
        # A bound method's instance, a callable object or a partial is an input too (path ``self``);
        # the function that runs first is what the read set treats as the frozen code.
        self._top_fn, self._self_obj = _top_of(f)
        # The code that runs first can be replaced after recording (``f.__code__ = ...``, as
        # IPython's autoreload does; ``Cls.__call__ = ...`` or a class swap for a callable
        # object): every call compares it by identity (~40 ns), and a change drops the
        # recordings (they ran the old code).  None: nothing to watch (a derivative's).
        self._watch = self._top_fn
        self._watch_code = getattr(self._top_fn, "__code__", None)
        self._watch_call = self._self_obj is f and not isinstance(f, functools.partial) \
            and self._top_fn is not None

    def _code_replaced(self) -> bool:
        """Whether the code that runs first is no longer the code the recordings ran."""
        w = self._watch
        return w is not None and (w.__code__ is not self._watch_code
                                  or (self._watch_call and type(self._self_obj).__call__ is not w))

    def _rebind_code(self) -> None:
        """The code that runs first was replaced: drop every recording and start over (the
        walk order of globals and cells may differ, so the literal/parameter masks too)."""
        with self._lock:
            if not self._code_replaced():
                return
            log.debug("frostjit.freeze(%s): the function's code was replaced; recordings dropped", self.name)
            self._drop_all()
            self._bind_code()
            self._opaque_mask = set()
            self._param_mask = frozenset()
            self._prev_paths = None

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
            self._param_mask = frozenset()

    def _drop_all(self) -> None:
        with self._lock:
            for r in self._cache.clear():
                r.close()
            self._unbind()

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
        w = Walker(False, self._opaque_mask, not self.auto_opaque, self._param_mask)
        f = w.f
        memo = w.memo
        memo[id(args)] = 0
        f.containers.append(args)
        key = f.key
        key.append((tuple, len(args)))
        at = ARRAY_TYPES
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
        if self._self_obj is not None:
            w.walk(self._self_obj, "self")
        if f.pending:
            return None
        return f, (int(state.flags), _ad.scope_token(f.leaves), tuple(key))

    def _walk_or_bind(self, args, kwargs):
        """The lookup walk of a call that no binder took: ``(flat, key)``; or ``((bound, (binder,
        entry)), None)`` where the walk evaluated inputs and a binder takes them then."""
        if not kwargs and self.state_fn is None and not state.side_effects:
            r = self._walk_fast(args, kwargs)
            if r is not None:
                return r
        return self._walk(args, kwargs, False, True)

    def _bound_hit(self, args, kwargs):
        """``(bound, (binder, entry))`` of the binder (the last key's, then the older ones) that
        takes these inputs, or ``None``."""
        b = self._bound
        if b is None:
            return None
        flat = b[0](args, kwargs)
        if flat is None and self._older:
            flat, b = self._older_hit(args, kwargs, b)
        return None if flat is None else (flat, b)

    def _walk(self, args, kwargs, paths: bool, rebind: bool = False):
        """``(flat, key)`` of the inputs, evaluating the pending ones first (and making literals
        opaque per the masks).  ``rebind``: once inputs were evaluated, a binder that takes them
        ends the walk: ``((bound, (binder, entry)), None)``."""
        if state.side_effects:
            evaluate(())
        for attempt in range(3):
            w = Walker(paths, self._opaque_mask, not self.auto_opaque, self._param_mask)
            w.walk(args, "args")
            w.walk(kwargs, "kwargs")
            if self._gview is not None:
                w.walk(self._gview, "globals")
            if self._cview is not None:
                w.walk(self._cview, "nonlocals")
            if self._self_obj is not None:
                w.walk(self._self_obj, "self")
            if self.state_fn is not None:
                w.walk(self.state_fn(*args, **kwargs), "state_fn")
            flat = w.f
            if not flat.pending:
                if rebind and w.make_opaque:
                    hit = self._bound_hit(args, kwargs)
                    if hit is not None:
                        return hit, None
                break
            evaluate(flat.pending)      # every input is evaluated before the lookup
            if rebind:
                hit = self._bound_hit(args, kwargs)
                if hit is not None:
                    return hit, None
        scope = _ad.scope_token(flat.leaves)
        key = (int(state.flags), scope, tuple(flat.key))
        if paths:
            flat.paths[:0] = [("<JIT flags>", ("flags", int(state.flags))), ("<AD scope>", ("ad scope", scope))]
        return flat, key

    def _call(self, args, kwargs):
        if self._dead:
            self._purge()
        w = self._watch
        if w is not None and (w.__code__ is not self._watch_code
                              or (self._watch_call and type(self._self_obj).__call__ is not w)):
            self._rebind_code()
        why = []
        b = self._bound
        walked = None
        if b is not None:
            # The key replayed last: its generated binder checks and extracts the inputs.
            flat = b[0](args, kwargs)
            if flat is None and self._older:
                flat, b = self._older_hit(args, kwargs, b)
            if flat is None and state.flags & KERNEL_FREEZING:
                # No binder takes the inputs as they are.  Inputs not evaluated yet (a fresh
                # ``x * 2``, a literal made opaque) make every binder miss: the walk evaluates
                # them, and then a binder may take them (the walk's second pass, the key's hash
                # and lookup skipped); else the walk's result is the lookup's below.
                walked = self._walk_or_bind(args, kwargs)
                if walked[1] is None:
                    flat, b = walked[0]
            if flat is not None:
                if self._inputs_hook is not None:
                    self._inputs_hook(flat)
                entry = b[1]
                if VERIFY_BINDERS:
                    self._verify_binder(args, kwargs, flat, entry.key)
                if self.limit is not None:
                    self._cache.touch(entry)
                cands = entry.candidates(flat.sizes) if entry.pinned else entry.general
                if len(cands) == 1:
                    recd = cands[0]
                    if type(recd) is Recording and not recd.captured:
                        g = recd.guard
                        if g is not None:
                            gi = g(flat)
                            if gi is not None:
                                self._guard_failed(recd, flat, gi, why)
                                return self._miss(args, kwargs, why)
                        try:        # the common case, inlined (as in _replay)
                            if self.check or (CHECK and self.check is None):
                                out = self._run_checked(recd, flat, (), args, kwargs)
                            else:
                                out = recd.run(flat, ())
                            if recd.through is not None:
                                _through.claim(flat, args, kwargs)
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
        if not state.flags & KERNEL_FREEZING:
            # (checked here, off the binder's path: a binder holds only keys recorded with the
            # flag set, and it compares the JIT flags)
            return self.f(*args, **kwargs)
        r = walked
        if r is None and not kwargs and self.state_fn is None and not state.side_effects:
            r = self._walk_fast(args, kwargs)
        flat, key = r if r is not None else self._walk(args, kwargs, False)
        if self._inputs_hook is not None:
            self._inputs_hook(flat)
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
                bnd = binder.generate(self, args, kwargs, flat, (self._gview, self._cview, self._self_obj),
                                      leaf_ads=_has_through(entry))
            except binder.Unsupported as e:
                log.debug("frostjit.freeze(%s): no binder for this input structure (%s)", self.name, e)
                bnd = None
            entry.binder = bnd
        b = self._bound
        if bnd is None:
            self._bound = None
        else:
            if b is not None and b[1] is not entry:
                older = [o for o in self._older if o[1] is not entry]
                older.insert(0, b)
                self._older = older[:MAX_OLDER_BINDERS]
            self._bound = (bnd, entry)

    def _older_hit(self, args, kwargs, b):
        """``(flat, (binder, entry))`` of the first older key whose binder takes these inputs (it
        becomes the one tried first, ``b`` the most recent older one), or ``(None, b)``.  At most one
        binder can take them: a hit means the inputs have that binder's key."""
        older = self._older
        for i, o in enumerate(older):
            flat = o[0](args, kwargs)
            if flat is not None:
                # (a new list, never changed in place: another thread may be iterating the old one)
                self._older = [b] + older[:i] + older[i + 1:]
                self._bound = o
                return flat, o
        return None, b

    def _unbind(self) -> None:
        """Forget every generated binder tried first (the masks changed, or the cache was cleared)."""
        self._bound = None
        self._older = []

    def _verify_binder(self, args, kwargs, b, key) -> None:
        """Debug/test mode: a binder hit must be what the full walk finds."""
        flat, k2 = self._walk(args, kwargs, False)
        same = lambda x, y: len(x) == len(y) and all(p is q for p, q in zip(x, y))  # noqa: E731
        if not (k2 == key and same(flat.nodes, b.nodes) and flat.sizes == b.sizes
                and same(flat.leaves, b.leaves) and same(flat.containers, b.containers)
                and same(flat.params, b.params)
                and (b.leaf_ads is None or same([a._ad for a in flat.leaves], b.leaf_ads))):
            raise AssertionError(f"frostjit.freeze({self.name}): binder disagrees with the layout walk")

    def _replay(self, cands, flat, args, kwargs, why):
        """Replay the first of ``cands`` whose guards hold: ``(outputs,)``, or ``_MISS``."""
        for recd in list(cands):
            if type(recd) is _Fallback:
                return (_raised.call(self.f, args, kwargs),)
            capn = ()
            if recd.captured:
                capn = recd.captured_nodes()
                if capn is None:
                    why.append("an array the recording captured (not among the inputs) was freed or rebound")
                    self._drop(recd)
                    continue
            g = recd.guard
            if g is not None:
                gi = g(flat)
                if gi is not None:
                    self._guard_failed(recd, flat, gi, why)
                    continue
            try:
                if self.check or (CHECK and self.check is None):
                    out = self._run_checked(recd, flat, capn, args, kwargs)
                else:
                    out = recd.run(flat, capn)
                if recd.through is not None:
                    _through.claim(flat, args, kwargs)
            except GuardFailed as e:
                why.append(f"guard failed: {e.why}")
                continue
            except ReplayFailed as e:  # a size expression failed: the plain call decides what happens
                self._replay_failed(recd, e, why)
                continue
            _ad.after_call()        # gradients written back to inputs flow on to what they depend on
            return (out,)
        return _MISS

    def _run_checked(self, recd, flat, capn, args, kwargs, run=None):
        """Checking mode: the replay (``run``: a variant of ``recd.run``), then the plain call on
        the same inputs; they must agree bit for bit, so both launch on the calling thread only
        (a multi-threaded float reduction adds in an order that changes from run to run)."""
        with backend_settings.serial():
            return self._compare_checked(recd, flat, capn, args, kwargs, run)

    def _compare_checked(self, recd, flat, capn, args, kwargs, run):
        pre = checking.capture(flat)
        out = (run or recd.run)(flat, capn)
        if recd.through is not None:      # (before the plain call, which may replay other calls)
            _through.claim(flat, args, kwargs)
        post = checking.capture(flat)
        checking.restore(flat, pre)
        # The plain call runs as a real call does: in an isolation scope, so that a backward pass
        # inside stops at the inputs (its postponed part is dropped with the rest of its state).
        n_after = len(_ad.scopes.after_call)
        token = _ad.enter(flat.leaves)
        try:
            ref = self.f(*args, **kwargs)
        finally:
            _ad.leave(token, flat.leaves)
            del _ad.scopes.after_call[n_after:]
            plain = checking.capture(flat)
            checking.restore(flat, post)
        paths = checking.InputPaths(self, args, kwargs, flat, pre, post)
        diff = checking.first_difference(out, ref, "result") or \
            checking.state_difference(flat, post, plain, paths)
        if diff is not None:
            gs = recd.guardset
            lines = "\n    ".join(gs.describe(flat)) if gs is not None else "(none)"
            keys = "\n    ".join(f"{p}: {layout._describe_token(t)}" for p, t in (recd.paths or [])[:12])
            raise FreezeMismatchError(
                f"frozen function {self.name!r}: a replay differs from the plain call at {diff}\n"
                f"  recording key (input paths):\n    {keys or '(no inputs)'}\n"
                f"  guards (what the recording read, and its value now):\n    {lines}")
        return out

    def _guard_failed(self, recd, flat, gi, why) -> None:
        """A guard on the Python state the recording read does not hold: trace again (the new
        recording is kept beside this one), naming the guard and where the value was read."""
        gs = recd.guardset
        text = gs.explain(flat, gi)
        why.append(f"guard failed: {text}")
        log.debug("frostjit.freeze(%s): guard failed: %s", self.name, text)
        if gs.dead():      # an object it expects died: it can never hold again
            self._drop(recd)

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
        entries = self._cache.entries
        b = self._bound
        if b is not None and entries.get(b[1].key) is not b[1]:
            self._bound = None
        if self._older:
            self._older = [o for o in self._older if entries.get(o[1].key) is o[1]]

    def _miss(self, args, kwargs, why):
        pflat, pkey = self._walk(args, kwargs, True)
        if self._inputs_hook is not None:
            self._inputs_hook(pflat)
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
                    self._unbind()
                flat, key = self._walk(args, kwargs, False)
                entry = self._cache.get(key)
                if entry is not None:
                    r = self._replay(entry.candidates(flat.sizes), flat, args, kwargs, why)
                    if r is not _MISS:
                        return r[0]
                pflat, pkey = self._walk(args, kwargs, True)
        # Python numbers as parameters: a number (int, float) of the inputs whose value changed
        # since the last recording becomes a parameter of the next one (a size-1 kernel input
        # refilled by every replay), so a learning rate or time step that changes every call
        # traces twice, not every call.  One that steers Python control flow or a size is guarded
        # exactly during that recording, and goes back to the key (see _trace).
        if self._prev_paths is not None:
            new_params = self._changed_numbers(args, pflat)
            if new_params:
                log.debug("frostjit.freeze(%s): Python numbers changed; made parameters: %s", self.name,
                          ", ".join(pflat.number_locs[i][1] for i in sorted(new_params)))
                with self._lock:
                    self._param_mask = self._param_mask | new_params
                    self._cache.clear_binders()
                    self._unbind()
                flat, key = self._walk(args, kwargs, False)
                entry = self._cache.get(key)
                if entry is not None:
                    r = self._replay(entry.candidates(flat.sizes), flat, args, kwargs, why)
                    if r is not _MISS:
                        return r[0]
                pflat, pkey = self._walk(args, kwargs, True)
        return self._record(args, kwargs, pflat, pkey, why)

    def _changed_numbers(self, args, pflat) -> frozenset:
        """Indices of the Python numbers whose value differs from the previous recording's at the
        same path (same type), and that a recording can replace (not inside a tuple other than
        the arguments, nor a dict key, nor a protocol object that cannot write it back:
        :func:`.layout.writable`)."""
        old = {}
        for p, t in self._prev_paths:
            old.setdefault(p, t)
        new = {}
        for p, t in pflat.paths:
            new.setdefault(p, t)
        out = set()
        for i, (loc, path) in enumerate(pflat.number_locs):
            if i in self._param_mask or loc is None:
                continue
            o, t = old.get(path), new.get(path)
            if not (isinstance(o, tuple) and isinstance(t, tuple) and len(o) == 2 == len(t)):
                continue
            if o[0] is t[0] and t[0] in PARAM_NUMBERS and o[1] != t[1] and t[1] != "param":
                c, k = loc
                if c is not args and not layout.writable(c, k, _get(c, k)) \
                        and _tuple_chain(pflat, c, args) is None:
                    continue
                out.add(i)
        return frozenset(out)

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
            return _raised.call(self.f, args, kwargs)
        reasons = list(dict.fromkeys(why))     # (a guard tried by the binder and by the walk: once)
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
        rkey = key
        try:
            pre = checking.capture(flat) if flat.params else None
            try:
                out, recd = self._trace(args, kwargs, flat, key)        # (no lock held: see __init__)
            except _ParamsRejected:
                # the function looked at type() of a parameter: put the inputs back and trace with
                # the numbers as values (they are keyed by value from now on)
                checking.restore(flat, pre)
                flat, key2 = self._walk(args, kwargs, True)
                out, recd = self._trace(args, kwargs, flat, key2)
                key = key2
        finally:
            with self._lock:
                del self._recording[rkey]
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
        args, kwargs, subs = self._substitute_params(rec, flat, args, kwargs)
        pre_entries = [None if type(c) is tuple else entries(c) for c in flat.containers]
        pre_hidden = [layout.hidden_attrs(c) for c in flat.containers]
        observer = None
        rs = ReadSet(self._top_fn, is_dispatched)
        try:
            # Installed inside the try: an exception here (a Ctrl-C) must not leave the hook on.
            observer = _observe_dispatch()
            RECORDERS.push(rec)
            ad_token = _ad.enter(flat.leaves)       # the call runs in an isolation scope (as in Dr.Jit)
            rec.ad_start = ad_token[0][0]           # (the first vertex number of the call)
            try:
                settings_before = _settings_now()
                np_before = _numpy_contents(flat.numpy)
                classes_before = [type(c) for c in flat.containers]
                rs.start()
                err = None
                try:
                    out = self.f(*args, **kwargs)
                except Exception as e:      # noqa: BLE001 - also a RuntimeError, as in Dr.Jit
                    if subs:
                        # a symbolic parameter may have met code that needs a real number
                        # (Decimal(p), json.dumps(p)): trace again with the numbers as values,
                        # so the plain call decides whether this raises
                        err = _ParamsRejected()
                    else:
                        err = as_runtime_error(e)
                        if err is e:
                            raise
                finally:
                    rs.stop()
                if type(err) is _ParamsRejected:
                    rec.escaped.update(str(j) for j in range(len(subs)))
                    self._restore_params(rec, flat, subs)
                    raise err
                if err is not None:
                    raise err       # (outside the handler: the original is not its context)
            finally:
                ad_reason = _ad.leave(ad_token, flat.leaves)
            if ad_reason is not None and rec.data_dependent is None:
                rec.data_dependent = ad_reason
            if rec.data_dependent is None and np_before:
                rec.data_dependent = _numpy_written(flat, np_before)
            if rec.data_dependent is None:
                rec.data_dependent = _class_changed(flat, classes_before)
            if rec.data_dependent is None and _settings_now() != settings_before:
                # (fj.set_flag / set_thread_count / set_expand_threshold left changed: a replay
                # would not repeat it; a scoped change that is undone is fine)
                rec.data_dependent = "changes frostjit's settings (JIT flags, thread count or expansion " \
                    "threshold), which a replay does not repeat"
            recd, out = self._finish(rec, flat, key, out, pre_entries, observer, rs, pre_hidden)
            if subs:
                if rs.uses_type or rs.uses_is:
                    # type(p) saw a symbolic number, or an identity test may have met one (``p is
                    # Q`` is False for the symbol even when the number is Q: r14, a stale replay)
                    # or a tuple rebuilt around one (``t is CFG``): trace again with values
                    rec.escaped.update(str(j) for j in range(len(subs)))
                    self._restore_params(rec, flat, subs)
                    if recd is not None:
                        recd.close()
                    raise _ParamsRejected
                self._restore_params(rec, flat, subs)
        except BaseException:
            RECORDERS.pop(rec)
            if subs:
                self._restore_params(rec, flat, subs)
            if state.side_effects:      # leave the engine as a plain call would
                evaluate(())
            raise
        finally:
            RECORDERS.pop(rec)
            if observer is not None:
                observer[0].close()
            for node in flat.nodes:
                node.sym = None
            _settle_numbers(flat.containers)
            rec.release()
        return out, recd

    def _substitute_params(self, rec, flat, args, kwargs):
        """Put a symbolic number (``p0``, ``p1``: the replay's parameters) where each parameter
        sits in the inputs while the function runs; returns ``(args, kwargs, substitutions)``."""
        if not flat.params or flat.number_locs is None:
            return args, kwargs, []
        rec.n_params = len(flat.params)
        rec.escaped = set()
        rec.tuple_swaps = []
        subs = []
        items = {}          # id(tuple) -> (tuple, its items with the symbols in place)
        j = 0
        try:
            for i, (loc, _) in enumerate(flat.number_locs):
                if i not in self._param_mask:
                    continue
                c, k = loc
                sym = Sym(f"p{j}", flat.params[j], rec)
                j += 1
                args = _place(args, items, c, k, sym)[0]
                subs.append((c, k, sym))
            # A tuple holding a parameter is rebuilt with the symbol in it, and so is every tuple
            # above it up to the arguments or a mutable container (put back after the call:
            # _restore_params), deepest first.  (_changed_numbers made sure each has one place:
            # reached once, walked.)
            while items:
                c, new = items.pop(max(items, key=lambda t: len(_tuple_chain(flat, items[t][0], args))))
                parent, k = flat.tuple_locs[id(c)]
                t = tuple.__new__(type(c), new)
                args, put = _place(args, items, parent, k, t)
                if put:
                    rec.tuple_swaps.append((parent, k, t, c))
        except (AttributeError, TypeError):
            # a place that cannot take the symbol (a read-only attribute: a frozen partial's
            # ``args``; a slot whose class attribute became a property): trace with the numbers
            # as values (r14: the frozen call raised where the plain call works)
            rec.escaped.update(str(n) for n in range(len(flat.params)))
            self._restore_params(rec, flat, subs)
            raise _ParamsRejected from None
        return args, kwargs, subs

    def _restore_params(self, rec, flat, subs) -> None:
        """After recording: the numbers are back where they were (unless the function replaced
        them), no symbolic number stays in the inputs, and a parameter whose value the recording
        needed exactly (control flow, a size, C code) goes back to the key."""
        for c, k, sym in subs:
            if not isinstance(c, tuple) and _get(c, k) is sym:
                _put(c, k, sym.value)
        for c, k, t, orig in getattr(rec, "tuple_swaps", ()):
            if _get(c, k) is t:
                _put(c, k, orig)
        rec.tuple_swaps = []
        _settle_numbers(flat.containers)
        escaped = getattr(rec, "escaped", ())
        if escaped:
            drop = set()
            j = 0
            for i in sorted(self._param_mask):
                if str(j) in escaped:
                    drop.add(i)
                j += 1
            log.debug("frostjit.freeze(%s): a parameter was used as an exact value (control flow, a size "
                      "or C code); it is keyed by value again", self.name)
            with self._lock:
                self._param_mask = self._param_mask - drop
                self._cache.clear_binders()
                self._unbind()

    def _finish(self, rec, flat, key, out, pre_entries, observer, rs, pre_hidden=None):
        leaf_index = {id(a): i for i, a in enumerate(flat.leaves)}
        cont_index = {id(c): i for i, c in enumerate(flat.containers)}
        # 1. What changed in the inputs (post-call state against the pre-call snapshot).
        changed = []          # (ci, write mode, [(key, value)] now, {key: value} before)
        new_values = []
        for ci, c in enumerate(flat.containers):
            before = pre_entries[ci]
            if before is None:
                continue
            now = entries(c)
            if len(now) == len(before) and all(k1 == k2 and v1 is v2 for (k1, v1), (k2, v2) in zip(now, before)):
                continue
            changed.append((ci, layout.write_mode(c), now, before))
            bmap = {}
            for k, v in before:
                bmap.setdefault(k, v)
            new_values.extend(v for k, v in now if bmap.get(k, _MISS) is not v)
        # (and the attributes of DRJIT_STRUCT objects and dataclasses that are not fields: r16)
        hidden_changed = layout.hidden_changes(flat.containers, pre_hidden)
        for _, now, before in hidden_changed:
            new_values.extend(v for k, v in now.items() if before.get(k, _MISS) is not v)
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
        for _, now, before in hidden_changed:
            for k, v in now.items():
                if before.get(k, _MISS) is not v:
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
                actions.append(SetNode(i, d.node(a._node)))
        for ci, mode, now, before in changed:
            if mode is layout.ITEMS:
                actions.append(SetItems(ci, tuple(d.describe(v) for _, v in now)))
                continue
            if mode is layout.PROTOCOL_ASSIGN:
                values = {k: d.describe(v) for k, v in now}
                actions.append(AssignAll(ci, tuple(values), tuple(values.values())))
                continue
            bmap = dict(before)
            nkeys = set()
            c = flat.containers[ci]
            for k, v in now:
                nkeys.add(k)
                if bmap.get(k, _MISS) is not v:
                    if not layout.writable(c, k, v) and rec.data_dependent is None:
                        rec.data_dependent = (f"changes what {type(c).__name__}.__fj_traverse__() returns "
                                              f"for {k!r}, which is not an attribute: without __fj_assign__ "
                                              "a replay cannot write it back")
                    actions.append((SetDictItem if type(c) is dict else SetEntry)(ci, k, d.describe(v)))
            for k, _ in before:
                if k not in nkeys:
                    actions.append(DelEntry(ci, k))
        for ci, now, before in hidden_changed:
            if layout.write_mode(flat.containers[ci]) is not layout.KEYS and rec.data_dependent is None:
                # (written back through __fj_assign__, which takes the traversed children only)
                rec.data_dependent = (f"changes attributes of a {type(flat.containers[ci]).__name__} that its "
                                      "__fj_traverse_attrs__ does not list, which its __fj_assign__ cannot write back")
            actions.extend(SetEntry(ci, k, d.describe(v)) for k, v in now.items() if before.get(k, _MISS) is not v)
            actions.extend(DelEntry(ci, k) for k in before if k not in now)
        out_desc = d.describe(out)
        real_nodes = list(d.real_nodes)
        sym_values = [s.value for s in d.sym_outputs]
        deps = observer[1] if observer is not None else set()
        deps = set(deps) | set(rs.dispatch.values())
        gs, why, hidden = guards.build(rs, flat, guards.covering(flat, pre_entries), self._globals,
                                       frozenset(self._global_names), self._cells, set(d.counts), self.name,
                                       collections.Counter(op.input for op in rec.ops if type(op) is UploadInput),
                                       pre_entries, (pre_hidden, d.seen))
        if why is not None and rec.data_dependent is None:
            rec.data_dependent = why
        rec.through = None
        if d.through and rec.data_dependent is None:
            rec.through = self._through_info(rec, flat, key, out, out_desc, d.through, actions)
            if rec.through is None:
                rec.data_dependent = _ad.OUTPUT_REASON
        if hidden:
            log.debug("frostjit.freeze(%s): writes state outside its inputs, which replays do not repeat: %s",
                      self.name, "; ".join(hidden[:8]))
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
            recd.guardset = gs
            recd.guard = None if gs is None else gs.check
            if rec.through is not None:
                rec.through.recording = weakref.ref(recd)
            self._subscribe(recd, deps)
        # The caller of this first call sees the same structure a replay builds.
        if (type(recd) is _Fallback and recd.reason in _ad.REASONS) or rec.through is not None:
            return recd, out        # keep the AD graph of this (plain) call's results
        # An output shared with a write-back (described there first) is the object the plain
        # call stored into the input; shares inside the outputs are rebuilt (as a replay does).
        memo = dict(d.shared_objs)
        result = build(out_desc, flat, real_nodes, sym_values, memo)
        return recd, result

    def _through_info(self, rec, flat, key, out, out_desc, arrays, actions):
        """The hub description of a recording whose outputs ``arrays`` depend on grad-enabled
        inputs through the AD graph (:mod:`.through`), or None when a replay cannot stand for
        it: the call also writes into its inputs (a derivative would repeat the writes), an
        output depends on a variable that is not an input, or sits where the derivative cannot
        find it again."""
        if actions:
            return None
        inputs = _through.dependencies(arrays, flat.leaves, rec.ad_start)
        if inputs is None:
            return None
        slots = [None] * len(arrays)
        try:
            _through.match(out_desc, out, slots)
        except _through.Unmatched:
            return None
        if any(a is not b for a, b in zip(slots, arrays)):
            return None
        inst = self._self_obj
        iview = _InstanceView(inst) if type(getattr(inst, "__dict__", None)) is dict else None
        views = tuple(v for v in (self._gview, self._cview, iview) if v is not None)
        return _through.ThroughInfo(self, out_desc, len(arrays), inputs, key, views)

    def _derivative(self, body, info, kind: str) -> "FrozenFunction":
        """The frozen derivative of this function's recording ``info`` (:mod:`.through`): a
        frozen function of the same arguments running ``body`` that walks the same globals,
        closure cells, instance and ``state_fn`` state as this one, in the same order, then
        (backward) the gradients that arrived at the outputs: its walk extends this function's,
        so a replay can bind it from the forward call's walk (``through.bind_derivative``)."""
        fn = FrozenFunction(functools.partial(body, info, self.f), limit=self.limit, warn_after=self.warn_after,
                            backend=self.backend, auto_opaque=self.auto_opaque, check=self.check)
        fn.name = f"{self.name} ({'backward' if kind == 'vjp' else 'forward'} derivative)"
        fn._top_fn, fn._self_obj = self._top_fn, self._self_obj
        fn._watch = None        # (the forward function watches the code; its recordings own this)
        fn._globals, fn._global_names, fn._gview = self._globals, self._global_names, self._gview
        fn._cells, fn._cell_names, fn._cview = self._cells, self._cell_names, self._cview
        fn.state_fn = _through.derivative_state(self.state_fn, kind)
        fn._inputs_hook = _through.check_inputs
        return fn

    # -- for .through: a backward derivative bound from the forward call's walk ----------------
    def _checking(self) -> bool:
        """Whether checking mode is on for this function."""
        return bool(self.check or (CHECK and self.check is None))

    def _replay_bound(self, entry, flat, args, kwargs, variant=None) -> bool:
        """Replay the recording of cache ``entry`` for inputs ``flat`` that the caller bound from
        ``args``/``kwargs`` (:mod:`.through`); False, with nothing run or written back, unless
        exactly one plain recording (nothing captured) applies, its guards hold and it replays
        (the caller then calls the function the usual way, which decides what happens).
        ``variant(recording)`` may return another replay function of the recording to run
        (:meth:`.recording.Recording.variant`).  In checking mode the replay is compared with
        the plain call, as any replay."""
        if self._dead:
            self._purge()
        cands = entry.candidates(flat.sizes) if entry.pinned else entry.general
        if len(cands) != 1:
            return False
        recd = cands[0]
        if type(recd) is not Recording or recd.captured or not recd.valid:
            return False
        g = recd.guard
        if g is not None and g(flat) is not None:
            return False
        if self.limit is not None:
            self._cache.touch(entry)
        run = (variant(recd) if variant is not None else None) or recd.run
        try:
            if self.check or (CHECK and self.check is None):
                self._run_checked(recd, flat, (), args, kwargs, run)
            else:
                run(flat, ())
        except (GuardFailed, ReplayFailed):
            return False
        _ad.after_call()
        return True

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


def _has_through(entry) -> bool:
    """Whether a recording of cache ``entry`` makes a hub (:mod:`.through`): its binder then also
    gives the leaves' ``_ad`` (the hub's snapshot of the inputs)."""
    recds = list(entry.general)
    for table in entry.pinned.values():
        for rs in table.values():
            recds += rs
    return any(getattr(r, "through", None) is not None for r in recds)


def _settings_now() -> tuple:
    """The process settings a frozen function could change: JIT flags, threads, expansion."""
    return int(state.flags), current_backend().thread_count(), backend_settings.expand_threshold


def _numpy_contents(arrays) -> list:
    """What a NumPy input holds before the function runs (its bytes), to find writes into it."""
    return [a.tobytes() for a in arrays]


def _numpy_written(flat, before):
    """Why the recording cannot be replayed when the function wrote into a NumPy input in Python
    (``a[0] = 5``, ``a += 1``, ``np.add(a, 1, out=a)``, through a view): a replay re-reads the
    input but does not repeat the write (r15: it returned the first call's values and left the
    caller's array unwritten, without a warning); ``None`` when no input changed."""
    for k, (a, b) in enumerate(zip(flat.numpy, before)):
        if a.tobytes() != b:
            path = next((p for p, t in (flat.paths or ()) if type(t) is tuple and len(t) > 1
                         and t[0] is np.ndarray and t[1] == k), None)
            return (f"writes into the NumPy array {path or 'among its inputs'} in Python, which a replay "
                    "does not repeat")
    return None


def _class_changed(flat, before):
    """Why the recording cannot be replayed when the function changed the class of an input
    object (``o.__class__ = Other``): write-backs restore attributes and items, not classes
    (r15: a replay left the caller's object of the old class); ``None`` when no class changed."""
    for i, (c, t) in enumerate(zip(flat.containers, before)):
        if type(c) is not t:
            paths = getattr(flat, "cont_paths", None)
            path = paths[i] if paths and i < len(paths) and paths[i] else "among its inputs"
            return (f"changes the class of the object {path} ({t.__qualname__} -> {type(c).__qualname__}), "
                    "which a replay does not repeat")
    return None


class _ParamsRejected(Exception):
    """A recording with Python-number parameters that cannot stand (see FrozenFunction._record)."""


def _tuple_chain(flat, c, args):
    """The tuples from ``c`` up to the arguments or a mutable container holding the top one
    (``[(tuple, parent, key), ...]``), when a number inside ``c`` can become a parameter: each a
    plain tuple or a namedtuple (rebuilt with ``tuple.__new__``), reached once by the walk (an
    aliased tuple would keep the value in its other places), and still where the walk found it;
    else ``None``."""
    chain = []
    while True:
        t = type(c)
        if not (t is tuple or (issubclass(t, tuple) and getattr(t, "_fields", None) is not None
                               and not hasattr(c, "__dict__"))):
            return None
        if id(c) in flat.shared:
            return None
        loc = flat.tuple_locs.get(id(c))
        if loc is None:
            return None
        parent, k = loc
        if parent is args:
            if args[k] is not c:
                return None
            chain.append((c, parent, k))
            return chain
        if _get(parent, k) is not c:
            return None
        chain.append((c, parent, k))
        if not isinstance(parent, tuple):
            return chain if layout.writable(parent, k, c) else None
        c = parent


def _place(args: tuple, items: dict, c, k, v):
    """Put ``v`` at ``c[k]`` for a recording: into the argument tuple ``args`` (rebuilt), into a
    tuple's pending items (``items``: rebuilt by the caller, deepest first), or into a mutable
    container.  Returns ``(args, whether v went into a mutable container)``."""
    if c is args:
        return args[:k] + (v,) + args[k + 1:], False
    if isinstance(c, tuple):
        items.setdefault(id(c), (c, list(c)))[1][k] = v
        return args, False
    _put(c, k, v)
    return args, True


def _settle_numbers(containers) -> None:
    """After a recording: a symbolic number (:class:`Sym`) the function stored into the inputs,
    directly or in a new list/dict/tuple (``state.n = fj.width(x)``, ``state.meta = {"n": ...}``),
    becomes the number it stood for, which is what the plain call stored (``type(n) is int``,
    ``json.dumps``).  Outputs are described by the recording; objects elsewhere (a global list)
    keep the Sym, which still acts as its number."""
    for c in containers:
        if type(c) is tuple:
            continue
        for k, v in entries(c):
            w = _settled(v, 0)
            if w is not v:
                _put(c, k, w)
        for k, v in (layout.hidden_attrs(c) or {}).items():     # (its attributes that are not fields)
            w = _settled(v, 0)
            if w is not v:
                _put(c, k, w)


def _settled(v, depth: int):
    """``v`` with its symbolic numbers replaced by their values (a tuple is rebuilt, a list or
    dict changed in place; other objects are left to the container walk)."""
    t = type(v)
    if t is Sym:
        return v.value
    if depth > 8:
        return v
    if t is list:
        for i, x in enumerate(v):
            y = _settled(x, depth + 1)
            if y is not x:
                v[i] = y
    elif t is dict:
        for k, x in v.items():
            y = _settled(x, depth + 1)
            if y is not x:
                v[k] = y
    elif t is tuple:
        items = tuple(_settled(x, depth + 1) for x in v)
        if any(a is not b for a, b in zip(items, v)):
            return items
    return v


def _put(c, k, v) -> None:
    layout.set_entry(c, k, v)


def _get(c, k):
    for k2, v in entries(c):
        if k2 == k:
            return v
    return None


def _env_on(name: str) -> bool:
    v = os.environ.get(name, "")
    return v.strip().lower() not in ("", "0", "false", "no", "off")


#: FROSTJIT_FREEZE_CHECK=1: every frozen function checks every replay against the plain call.
CHECK = _env_on("FROSTJIT_FREEZE_CHECK")
# Keys besides the last replayed one whose binders a call tries before walking its inputs (a
# binder that misses stops at the first check that differs; the walk, key hash and lookup it
# saves cost ~12 us for a dataclass of 21 arrays, r15).
MAX_OLDER_BINDERS = 3
_MISS = object()
# Tests set this (or FROSTJIT_FREEZE_VERIFY_BINDERS=1): every binder hit is checked against the
# full layout walk.
VERIFY_BINDERS = bool(os.environ.get("FROSTJIT_FREEZE_VERIFY_BINDERS"))
_EMPTY_DICT_TOKEN = (dict, ())


def _top_of(f):
    """``(function that runs first, object walked as the input "self")`` of a frozen callable."""
    if isinstance(f, types.FunctionType):
        return f, None
    if isinstance(f, types.MethodType):
        fn = f.__func__
        return (fn if isinstance(fn, types.FunctionType) else None), f.__self__
    if isinstance(f, functools.partial):
        fn = f.func
        while isinstance(fn, functools.partial):
            fn = fn.func
        return _top_of(fn)[0], f
    if isinstance(f, (type, types.BuiltinFunctionType)) or isinstance(f, FrozenFunction):
        return None, None
    call = getattr(type(f), "__call__", None)  # noqa: B004  (the class's __call__ function, not a callable test)
    return (call if isinstance(call, types.FunctionType) else None), f


def _observe_dispatch():
    seen = set()
    me = threading.get_ident()

    def cb(fn):
        if threading.get_ident() == me:
            seen.add(fn)
    return observe_calls(cb), seen


def freeze(f=None, *, state_fn=None, limit=None, warn_after: int = 10, backend=None, auto_opaque: bool = True,
           enabled: bool = True, check=None):
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
        ``False`` calls the function directly (settable later as ``.enabled``).  Clearing
        ``JitFlag.KernelFreezing`` does the same for every frozen function while it is cleared.
    check : bool, optional
        Checking mode: every replay also runs the plain function on the same inputs and compares
        outputs and written-back inputs exactly (NaN-aware); a difference raises
        :class:`FreezeMismatchError` naming the first differing path.  ``None`` (default) follows
        the environment variable ``FROSTJIT_FREEZE_CHECK``; settable later as ``.check``.

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
                              auto_opaque=auto_opaque, enabled=enabled, check=check)
    if f is None:
        return wrap
    return wrap(f)
