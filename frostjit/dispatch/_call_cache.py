"""The resolution cache of one dispatched function, and the misses that fill it.

A function whose methods share one arity ``n >= 2`` keeps its decisions in a dict nested ``n``
deep (``decisions[type(a0)][type(a1)]...``); others key one dict by ``type(a0)`` or a tuple of
types. A decision is the implementation itself (or a return-converting wrapper, a
:class:`~._resolution.Deferred` that checks the value-dependent methods, or a
:class:`~._fallback.Fallback` to a parent class). Soundness: resolution classifies each hint
against each argument *type* (always / never / depends on the value), so a cached decision is
right for every value of those types.

While a hook (an observer, a ``DispatchCache``) is active the function publishes an empty
read-only mapping instead of its decisions, so every call misses into :meth:`Decisions.call_slowly`,
which notifies the hooks: the call path itself has no test for hooks.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable

from . import _jax
from ._observers import ACTIVE, CallObserver, sync_lock
from ._resolution import Candidate, Deferred, beats, best, classify_candidates
from ._returns import no_return_check

class _NotPassed:
    """Type of the default of generated positional parameters ("not passed").

    No decision is ever keyed on this private type, so a call with too few arguments misses
    (``decisions[_NotPassed]`` raises ``KeyError``) and :meth:`Decisions.resolve` sends it to
    the slow path: the call path needs no ``a_last is NOT_PASSED`` test.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not passed>"


NOT_PASSED = _NotPassed()
#: What every function publishes as its decisions while a hook is active: empty and read-only.
DIVERTED = types.MappingProxyType({})


def key_of(args: tuple) -> Any:
    """The flat cache key of positional arguments: ``type(a)`` for one, a tuple of types otherwise."""
    if len(args) == 1:
        return type(args[0])
    return tuple(map(type, args))


def key_types(key: Any) -> tuple[type, ...]:
    return (key,) if isinstance(key, type) else key


class Decisions:
    """The decisions of one function (``live``; ``returning`` for the return-converting call
    path; ``tracer`` for jax tracer types, kept apart so every traced call is seen)."""

    def __init__(self, function: Any):   # a _function.FunctionState (which imports this module)
        self.function = function
        self.live: dict = {}
        self.returning: dict = {}
        self.tracer: dict = {}
        #: The arity ``n >= 2`` of the nested layout, else 0 (flat: ``type(a0)`` or a tuple).
        self.nested = 0
        #: ``_jax.trace_mark()`` when the first decision since the last invalidation was
        #: stored (``None``: none): an invalidation then asks whether jax may have traced
        #: through a cached decision with static arguments since.
        self.live_mark: int | None = None

    # -- the published dicts -----------------------------------------------------------------
    def publish(self) -> None:
        """Publish the live decisions, or empty ones while a hook is active (``ACTIVE``).

        Called under ``_observers.sync_lock`` (never held around user code), by ``_observers``
        when the first hook opens or the last closes, and by :meth:`invalidate`.
        """
        ns = self.function.ns
        if ACTIVE:
            ns["decisions"] = ns["decisions_returning"] = DIVERTED
        else:
            ns["decisions"], ns["decisions_returning"] = self.live, self.returning

    def invalidate(self) -> None:
        """Drop every decision (under the function's lock): fresh dicts, so a miss in flight
        cannot write back into the published ones (plum#316)."""
        with sync_lock:
            self.live, self.returning = {}, {}
            self.publish()
        self.tracer = {}

    def get(self, cache: dict, args: tuple) -> Any:
        """The decision stored in ``cache`` (``live`` or ``returning``) for ``args``, or ``None``."""
        n = self.nested
        if not n:
            return cache.get(key_of(args))
        if len(args) != n:
            return None
        for a in args:
            cache = cache.get(type(a))
            if cache is None:
                return None
        return cache

    def put(self, cache: dict, args: tuple, entry: Any) -> None:
        """Store a decision in ``cache`` in the layout the call path reads (under the lock)."""
        n = self.nested
        if not n:
            cache[key_of(args)] = entry
        elif len(args) == n:
            for a in args[:-1]:
                cache = cache.setdefault(type(a), {})
            cache[type(args[-1])] = entry

    # -- misses --------------------------------------------------------------------------------
    def resolve(self, args: tuple, kw: Any = None) -> Any:
        """Miss of the call path (``resolve`` in the generated code): while a hook is active
        (every call lands here) or with too few arguments for the fixed-arity path, the slow
        path; else the decision for ``args``."""
        if ACTIVE:
            return self.slow_entry
        for a in args:
            if a is NOT_PASSED:
                return self.slow_entry
        return self.miss(args)

    def resolve_returning(self, args: tuple, kw: Any = None) -> tuple:
        """:meth:`resolve` of the return-converting call path (the slow path converts itself)."""
        if ACTIVE:
            return no_return_check(self.slow_entry)
        for a in args:
            if a is NOT_PASSED:
                return no_return_check(self.slow_entry)
        return self.miss_returning(args)

    def miss(self, args: tuple) -> Any:
        """Resolve, store the decision unless an invalidation raced us, return it."""
        fn = self.function
        key = key_of(args)
        traced = False
        if "jax" in sys.modules:
            traced = _jax.has_tracer(key_types(key))
            if traced:
                _jax.note_traced(fn)
                entry = self.tracer.get(key)
                if entry is not None:
                    return entry
            elif _jax.tracing():  # static arguments inside a jax trace
                _jax.note_traced(fn)
        with fn.lock:
            version, cache = fn.version, self.live
            entry = self.decide(args)
            if version == fn.version and cache is self.live:
                # Every decision depends on the argument types only (a fallback on the owner,
                # which is fixed), so it may be stored whatever the call went through.
                if traced:
                    self.tracer[key] = entry
                else:
                    if self.live_mark is None:
                        self.live_mark = _jax.trace_mark()
                    self.put(cache, args, entry)
        return entry

    def miss_returning(self, args: tuple) -> tuple:
        """Miss of the return-converting call path: ``(implementation, classes, unchanged
        types, ReturnTypes)``."""
        returning = self.returning
        entry = self.miss(args)
        ok = getattr(entry, "_return_ok", None)
        quad = no_return_check(entry) if ok is None else (entry.__wrapped__, ok.fast, ok.types, ok)
        with self.function.lock:
            # cacheable (not a tracer), and no invalidation raced us
            if self.get(self.live, args) is entry and returning is self.returning:
                self.put(returning, args, quad)
        return quad

    def decide(self, args: tuple) -> Any:
        """The decision for the types of ``args`` (under the lock)."""
        fn = self.function
        fn.resolve_pending()
        types_ = tuple(map(type, args))
        cands = fn.table.candidates(len(args))
        sure, maybe = classify_candidates(cands, types_)
        if maybe:
            w = best(sure) if sure else None
            if not (isinstance(w, Candidate) and all(beats(w, m) for m, _ in maybe)):
                # The fixed-arity call path calls decisions with exactly ``shape`` positional
                # arguments (calls with keywords or other arities go through ``select``).
                shape = fn.shape[0]
                fixed = shape if shape is not None and len(args) == shape else None
                return Deferred(sure, maybe, types_, fn.pick).entry(fixed)
        return fn.pick(sure, args)

    def final_target(self, args: tuple) -> Callable:
        """The callable that handles these arguments, value-dependent decisions included."""
        entry = self.get(self.live, args)
        if entry is None:
            entry = self.miss(args)
        select = getattr(entry, "_dispatch_select", None)
        if select is not None:
            entry = select(args)
        return entry

    # -- the slow path (hooks, DispatchCache, keywords, other arities) -------------------------
    def slow_entry(self, *packed: Any, **kw: Any) -> Any:
        """What :meth:`resolve` returns on the slow path: drop missing arguments, dispatch."""
        return self.call_slowly(packed, (), kw)

    def call_slowly(self, packed: tuple, extra: tuple, kw: dict) -> Any:
        """Slow path of the fixed-arity call path (``call_slowly`` in the generated code)."""
        args = tuple(a for a in packed if a is not NOT_PASSED) + extra
        return self.call(args, kw)

    def call(self, args: tuple, kw: dict) -> Any:
        """Notify observers, consult an active DispatchCache, then dispatch normally."""
        recorder = None
        if ACTIVE:
            f = self.function.fn
            for h in tuple(ACTIVE):
                if type(h) is CallObserver:
                    h.callback(f)
                else:
                    recorder = h  # innermost DispatchCache wins
        if recorder is not None:
            key = key_of(args)
            t = recorder.lookup(self.function, key)
            if t is None:
                t = self.final_target(args)
                recorder.record(self.function, key, t)
            return t(*args, **kw)
        return self.final_target(args)(*args, **kw)
