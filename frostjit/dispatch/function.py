"""One dispatched function: its methods, its resolution cache and its generated call path.

The object users call is a real Python function generated per dispatched function (so it
binds as a method in a class, can be weak-referenced, wrapped by ``jax.jit`` and
``functools.wraps``). For methods that all take two positional arguments its body is::

    def f(a0=M, a1=M, /):
        try:
            return cache[type(a0)][type(a1)](a0, a1)   # the implementation itself
        except KeyError as x:                          # raised here, not by the implementation
            if x.__traceback__.tb_next is not None:
                raise
        return miss((a0, a1))(a0, a1)

There is no test for hooks on that path: while an observer or a ``DispatchCache`` is active,
``ns["cache"]`` is an empty read-only mapping (:meth:`FunctionState.publish`), so every call
misses into the slow path that notifies them. A missing argument (``M``) misses too.

All state lives in a :class:`FunctionState`; the generated function reads it through its
own globals dict (``ns``). The code is regenerated when the shape of the method table
changes (arity, keywords, ABC annotations, return annotations): functions with a single
arity get fixed positional parameters, others take ``*args``.
"""

from __future__ import annotations

import abc
import functools
import sys
import threading
import types
from typing import Any, Callable

from . import errors, hints as H
from . import jax_support
from . import observers
from .observers import ACTIVE, CallObserver
from .fallback import METHOD, Fallback, next_in_mro, owner_from_qualname, owner_in_mros, placement
from .resolution import Candidate, Deferred, beats, best, classify_candidates
from .signature import Method, Signature


class _Missing:
    """Type of the default of generated positional parameters ("not passed").

    No cache is ever keyed on this private type, so a call with too few arguments misses the
    cache (``cache[_Missing]`` raises ``KeyError``) and :meth:`FunctionState.hot_miss` sends it to
    the slow path: the hot path needs no ``a_last is M`` test.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not passed>"


_MISSING = _Missing()
#: What every function publishes as its caches while a hook is active: empty and read-only.
_DIVERTED = types.MappingProxyType({})
_MAX_SPECIALIZED_ARITY = 4


def key_of(args: tuple) -> Any:
    """The cache key of positional arguments: ``type(a)`` for one, a tuple of types otherwise."""
    if len(args) == 1:
        return type(args[0])
    return tuple(map(type, args))


def key_types(key: Any) -> tuple[type, ...]:
    return (key,) if isinstance(key, type) else key


class MethodList(list):
    """The methods of a dispatched function (a live list).

    Reading it first reads pending annotations (as plum does), so a method replaced by a
    redefinition with an equivalent signature is no longer listed.
    """

    __slots__ = ("_sync",)

    def __init__(self, sync: Callable[[], None] | None = None):
        super().__init__()
        self._sync = sync

    def _synced(self) -> None:
        if self._sync is not None:
            try:
                self._sync()
            except Exception:  # an unresolvable annotation raises at the call, not here
                pass

    def __len__(self) -> int:
        self._synced()
        return list.__len__(self)

    def __iter__(self):
        self._synced()
        return list.__iter__(self)

    def __getitem__(self, i: Any) -> Any:
        self._synced()
        return list.__getitem__(self, i)

    def __repr__(self) -> str:
        self._synced()
        lines = [f"List of {list.__len__(self)} method(s):"]
        for i, m in enumerate(list.__iter__(self)):
            lines.append(f"    [{i}] {m.describe()}\n            {m.implementation!r} @ {m.location}")
        return "\n".join(lines)


class ReturnTypes:
    """A method's return annotation and the result types known to satisfy it.

    ``fast``: a class or tuple of classes when the annotation is exactly an ``isinstance``
    test against classes without a custom ``__instancecheck__`` (``int``, ``float | None``),
    else ``()``; the call path tests ``isinstance(r, fast)`` first (a specialized CPython
    instruction). ``types`` is a plain ``set`` of result types seen to satisfy the annotation
    (membership in a ``set`` subclass would cost ~13 ns more), grown as results are seen.
    """

    __slots__ = ("types", "hint", "name", "fast")

    def __init__(self, hint: H.Hint, name: str):
        self.types: set[type] = set()
        self.hint = hint
        self.name = name
        self.fast = _isinstance_classes(hint)


def _isinstance_classes(hint: H.Hint) -> type | tuple[type, ...]:
    """The classes ``c`` with ``hint.match(r) == isinstance(r, c)``, or ``()``."""
    members = hint.members if type(hint) is H.UnionHint else (hint,)
    out = []
    for m in members:
        if type(m) is not H.ClassHint or m._kind != "plain" or m.uses_abc:
            return ()
        out.append(m.cls)
    return out[0] if len(out) == 1 else tuple(out)


def check_return(r: Any, ok: ReturnTypes) -> Any:
    """Slow part of the return check: classify ``type(r)``, remember it when always fine."""
    T = type(r)
    c = ok.hint.classify(T)
    if c == H.ALWAYS:
        ok.types.add(T)
        return r
    if c == H.DEPENDS and ok.hint.match(r):
        return r
    raise TypeError(
        f"`{ok.name}` returned a value of type {H.type_name(T)}, which does not match its return "
        f"annotation {ok.hint!r}"
    )


def _NO_RETURN_CHECK(entry: Callable) -> tuple:
    """A return-checking cache entry for a callable that checks nothing (or checks itself)."""
    return (entry, object, None, None)


def _make_return_checker(impl: Callable, hint: H.Hint, name: str) -> Callable:
    """Wrap ``impl`` so its result is checked against the return annotation ``hint``.

    Result types that always satisfy the hint are remembered, so the steady-state check is
    one set lookup. The generated call path of functions with return annotations inlines this
    check (it reads ``_return_ok``) instead of calling the wrapper.
    """
    ok = ReturnTypes(hint, name)
    seen, fast = ok.types, ok.fast

    def checked(*args: Any, **kw: Any) -> Any:
        r = impl(*args, **kw)
        if isinstance(r, fast) or type(r) in seen:
            return r
        return check_return(r, ok)

    try:
        functools.update_wrapper(checked, impl)  # name, docs; sets ``__wrapped__``
    except (AttributeError, TypeError):  # pragma: no cover - exotic callables
        pass
    checked.__wrapped__ = impl
    checked._return_ok = ok
    return checked


class FunctionState:
    """Everything one dispatched function knows (the generated function reads ``ns``)."""

    def __init__(self, name: str, qualname: str, module: str, doc_hint: str | None = None):
        self.name = name
        self.qualname = qualname
        self.module = module
        parts = qualname.split(".")
        self.in_class = len(parts) > 1 and parts[-2] != "<locals>"
        #: The class whose body defined this function (found at the first fallback).
        self.owner: type | None = None
        self.placement = METHOD
        self.display = qualname.split("<locals>.")[-1]
        self.lock = threading.RLock()
        self.methods = MethodList(self._sync_methods)
        self.pending: list[Method] = []
        self.table: list[tuple[Signature, Method]] = []
        self.version = 0
        self.subscriptions: dict[int, Any] = {}
        self.traced_by_jax = False
        #: ``jax_support.trace_mark()`` when the first decision since the last registration was
        #: cached (``None``: none cached): a registration then asks whether jax may have traced
        #: through a cached decision with static arguments since.
        self.live_mark: int | None = None
        self.by_arity: dict[int, list[Candidate]] = {}
        self.tracer_cache: dict[Any, Any] = {}
        self.doc_hint = doc_hint
        self.uses_abc = False
        self.shape: Any = None
        #: The arity ``n >= 2`` of the nested cache layout (``cache[T0][T1]...``), else 0
        #: (``cache[T0]`` for one argument, ``cache[(T0, T1, ...)]`` for the ``*args`` path).
        self.nested = 0
        # The live caches; the call path reads ``ns["cache"]``/``ns["rcache"]``, which are
        # these, or ``_DIVERTED`` while a hook is active (see :meth:`publish`).
        self.live: dict = {}
        self.rlive: dict = {}
        self.ns: dict[str, Any] = {
            "__builtins__": __builtins__,
            "__name__": module,
            "cache": self.live,
            "miss": self.hot_miss,
            "slow": self.slow_packed,
            "slow_args": self.slow_call,
            "M": _MISSING,
            "abc_token": abc.get_cache_token,
            "tok": [abc.get_cache_token()],
            "refresh_abc": self.refresh_abc,
            "rcache": self.rlive,
            "rmiss": self.hot_rmiss,
            "check_return": check_return,
        }
        self.fn = self._build_function()
        observers.track(self)

    def publish(self) -> None:
        """Publish the live caches, or empty ones while a hook is active (``ACTIVE``).

        Called under ``observers._sync_lock`` (which is never held around user code), by
        ``observers`` when the first hook opens or the last closes, and by :meth:`_invalidate`.
        """
        ns = self.ns
        if ACTIVE:
            ns["cache"] = ns["rcache"] = _DIVERTED
        else:
            ns["cache"], ns["rcache"] = self.live, self.rlive

    # -- the generated call path -------------------------------------------------------------
    def _source(self, shape: int | None, kw: bool, uses_abc: bool, ret: bool) -> str:
        """Source of the call path for a table shape.

        ``shape``: the single arity of every method (fixed positional parameters), or ``None``
        (``*args``). ``kw``: whether some method can take keywords (then ``**kw``, ~26 ns per
        call: CPython allocates its dict). The fixed-arity path has no ``*rest``: it would stop
        CPython 3.11 from specializing calls of the function (``CALL_PY_EXACT_ARGS``), ~8-20 ns
        per call; too many positional arguments raise Python's own ``TypeError``. ``uses_abc``:
        check ``abc``'s cache token. ``ret``: some method has a return annotation (checked
        inline). With two or more fixed parameters the cache is a nested dict,
        ``cache[type(a0)][type(a1)]...``: cheaper than building and hashing a tuple key.
        """
        lines = []
        if shape is None:
            params, call, tup = "*args, **kw", "*args, **kw", "args"
            key = "[type(args[0]) if len(args) == 1 else tuple(map(type, args))]"
        else:
            names = [f"a{i}" for i in range(shape)]
            params = ", ".join(f"{n}=M" for n in names) + ", /, *rest" + (", **kw" if kw else "")
            call = ", ".join(names)
            tup = f"({call},)"
            # More positional arguments than the methods take: no method, maybe a parent
            # class's (the slow path raises NotFoundLookupError or falls back along the MRO).
            if kw:
                lines += ["    if rest or kw:", f"        return slow({tup}, rest, kw)"]
            else:
                lines += ["    if rest:", f"        return slow({tup}, rest, {{}})"]
            key = "".join(f"[type({n})]" for n in names)
        if uses_abc:
            lines += ["    if abc_token() != tok[0]:", "        refresh_abc()"]
        mkw = ", kw" if shape is None else ""
        if ret:
            # Entries are (implementation, classes, seen types, ReturnTypes); a method without
            # a return annotation has classes ``object``.
            lines += ["    try:", f"        e, t, s, rt = rcache{key}", "    except KeyError:",
                      "        e = None", "    if e is None:",  # the miss runs outside the handler
                      f"        e, t, s, rt = rmiss({tup}{mkw})", f"    r = e({call})",
                      "    if isinstance(r, t) or type(r) in s:", "        return r",
                      "    return check_return(r, rt)"]
        else:
            # Lookup and call in one expression: a KeyError raised in *this* frame (no deeper
            # traceback entry) is a cache miss; one from the implementation is re-raised. The
            # miss runs after the handler, so lookup errors carry no "during handling" context.
            lines += ["    try:", f"        return cache{key}({call})", "    except KeyError as x:",
                      "        if x.__traceback__.tb_next is not None:", "            raise",
                      f"    return miss({tup}{mkw})({call})"]
        return f"def __dispatch__({params}):\n" + "\n".join(lines) + "\n"

    def _compile(self, shape: int | None, kw: bool, uses_abc: bool, ret: bool):
        ns: dict[str, Any] = {}
        exec(self._source(shape, kw, uses_abc, ret), self.ns, ns)  # noqa: S102 - fixed templates
        code = ns["__dispatch__"].__code__
        if hasattr(code, "co_qualname"):      # Python >= 3.11
            code = code.replace(co_name=self.name, co_qualname=self.qualname)
        else:
            code = code.replace(co_name=self.name)
        defaults = None if shape is None else (_MISSING,) * shape
        return code, defaults

    def _build_function(self) -> Callable:
        code, defaults = self._compile(None, True, False, False)
        fn = types.FunctionType(code, self.ns, self.name, defaults)
        fn.__qualname__ = self.qualname
        fn.__module__ = self.module
        fn.__dict__.update(
            _dispatch_state=self,
            methods=self.methods,
            version=0,
            invoke=self.invoke,
            clear_cache=self.clear_cache,
            register=self.register,
            dispatch=self.dispatch,
            dispatch_multi=self.dispatch_multi,
            resolve_method=self.resolve_method,
        )
        self._update_doc(fn)
        return fn

    def _reshape(self) -> None:
        """Regenerate the call path when the method table's shape changed (under ``lock``)."""
        methods = list.__iter__(self.methods)
        arities = {m.arity for m in methods}
        shape = None
        if len(arities) == 1:
            (a,) = arities
            if a is not None and 1 <= a <= _MAX_SPECIALIZED_ARITY:
                shape = a
        kw = any(m.takes_keywords for m in list.__iter__(self.methods))
        ret = any(m.return_hint is not None for m in list.__iter__(self.methods))
        key = (shape, kw, self.uses_abc, ret)
        if key != self.shape:
            nested = shape if shape is not None and shape >= 2 else 0
            if nested != self.nested:  # the cache layout changes: start from empty caches
                self.nested = nested
                self._invalidate()
            self.shape = key
            code, defaults = self._compile(*key)
            self.fn.__code__ = code
            self.fn.__defaults__ = defaults

    # -- registration ------------------------------------------------------------------------
    def register(self, implementation: Callable, signature: Any = None, precedence: int = 0) -> Callable:
        """Add a method.

        Parameters
        ----------
        implementation : callable
            The method body; its annotations give the signature unless ``signature`` is given.
        signature : Signature or tuple, optional
            Explicit parameter types (``(int, float)`` or ``Signature(int, varargs=str)``).
        precedence : int
            Tie-breaker between equally specific methods (higher wins).

        Returns
        -------
        callable
            The dispatched function.
        """
        if signature is not None and not isinstance(signature, Signature):
            if not isinstance(signature, tuple):
                raise TypeError(f"a signature must be a tuple of types or a Signature, not {signature!r}")
            signature = Signature(*signature)
        method = Method(implementation, signature, precedence, self.display)
        with self.lock:
            self.methods.append(method)
            self.pending.append(method)
            self.version += 1
            self.fn.version = self.version
            mark, self.live_mark = self.live_mark, None
            self._invalidate()
            self._reshape()
            self._update_doc(self.fn)
        self._notify_registration(mark)
        return self.fn

    def dispatch(self, method: Callable | None = None, *, precedence: int = 0) -> Any:
        """Decorator adding a method to this function (``@f.dispatch`` or ``@f.dispatch(precedence=1)``)."""
        if method is None:
            return lambda m: self.dispatch(m, precedence=precedence)
        return self.register(method, precedence=precedence)

    def dispatch_multi(self, *signatures: Any) -> Callable:
        """Decorator registering one body under several signatures."""
        for s in signatures:
            if not isinstance(s, (tuple, Signature)):
                raise TypeError(f"`multi` takes tuples of types or Signatures, not {s!r}")

        def decorate(method: Callable) -> Callable:
            for s in signatures:
                self.register(method, s)
            return self.fn

        return decorate

    def _notify_registration(self, mark: int | None = None) -> None:
        if self.traced_by_jax:
            jax_support.on_registration(self)
        elif mark is not None and "jax" in sys.modules:
            jax_support.on_cached_registration(self, mark)
        for sub in list(self.subscriptions.values()):
            sub.callback(self.fn)

    def _invalidate(self) -> None:
        """Drop every decision (under ``lock``): a fresh dict, so in-flight misses cannot write back."""
        with observers._sync_lock:
            self.live, self.rlive = {}, {}
            self.publish()
        self.tracer_cache = {}
        self.by_arity = {}

    def clear_cache(self) -> None:
        """Forget every resolution decision of this function (methods stay registered)."""
        with self.lock:
            self._invalidate()

    def refresh_abc(self) -> None:
        """Called by the hot path when ``abc.get_cache_token()`` moved (an ``ABC.register``)."""
        with self.lock:
            token = abc.get_cache_token()
            if token != self.ns["tok"][0]:
                self._invalidate()
                self.ns["tok"][0] = token

    def _process_pending(self) -> None:
        """Read annotations of pending methods and insert their signatures (under ``lock``)."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        try:
            for method in pending:
                method.resolve()
                for sig in method.signatures:
                    # An equivalent signature replaces the previous method (a redefinition).
                    fk = sig.fast_key()
                    if fk is not None:  # cheap tuple comparison against plain-class signatures
                        self.table = [(s, m) for s, m in self.table
                                      if not (s.fast_key() == fk if s.fast_key() is not None
                                              else s.equivalent(sig))]
                    else:
                        self.table = [(s, m) for s, m in self.table if not s.equivalent(sig)]
                    self.table.append((sig, method))
                    if any(h.uses_abc for h in sig.types) or (sig.varargs is not None and sig.varargs.uses_abc):
                        self.uses_abc = True
                if method.return_hint is not None and method.return_hint.uses_abc:
                    self.uses_abc = True
        except Exception:
            self.pending = pending[pending.index(method):] + self.pending
            raise
        live = {id(m) for _, m in self.table}
        live.update(id(m) for m in self.pending)
        if any(id(m) not in live for m in list.__iter__(self.methods)):
            # Methods whose every signature was redefined are gone (as in plum).
            self.methods[:] = [m for m in list.__iter__(self.methods) if id(m) in live]
            self._update_doc(self.fn)
        self._reshape()
        self.by_arity = {}

    def _sync_methods(self) -> None:
        """Read pending annotations, so that ``methods`` drops redefined methods."""
        if self.pending:
            with self.lock:
                self._process_pending()

    def _update_doc(self, fn: Callable) -> None:
        head = f"Multiple-dispatch function `{self.display}` with {list.__len__(self.methods)} method(s)."
        parts = [head]
        if self.doc_hint:
            parts.append(self.doc_hint)
        for m in list.__iter__(self.methods):
            parts.append(m.doc_entry())
        fn.__doc__ = "\n\n".join(parts)

    # -- resolution --------------------------------------------------------------------------
    def candidates(self, n: int) -> list[Candidate]:
        """Signatures that accept ``n`` positional arguments (under ``lock``)."""
        try:
            return self.by_arity[n]
        except KeyError:
            pass
        cands = [Candidate(s, m, s.expand(n)) for s, m in self.table if s.accepts(n)]
        self.by_arity[n] = cands
        return cands

    def target(self, method: Method) -> Callable:
        """What the cache stores for a method: the implementation, or a return-checking wrapper."""
        # Stored on the method itself: a table keyed by ``id(method)`` would hand a new method
        # the target of a freed (redefined) one that happened to live at the same address.
        t = method.target
        if t is None:
            if method.return_hint is None:
                t = method.implementation
            else:
                t = _make_return_checker(method.implementation, method.return_hint, self.display)
            method.target = t
        return t

    def pick(self, matched: list[Candidate], args: tuple) -> Callable:
        """The callable for matched candidates; raises lookup errors, or falls back along the MRO."""
        if matched:
            w = best(matched)
            if isinstance(w, Candidate):
                return self.target(w.method)
            raise errors.ambiguous(self.display, tuple(map(type, args)), [c.method for c in w])
        fallback = self.mro_fallback(args)
        if fallback is not None:
            return fallback
        raise errors.not_found(self.display, tuple(map(type, args)), self.closest(args))

    def closest(self, args: tuple) -> list[Method]:
        """Up to three methods nearest to the call: arity difference plus mismatched positions."""
        scored = []
        n = len(args)
        for s, m in self.table:
            k = len(s.types)
            dist = abs(n - k) if not (s.varargs is not None and n >= k) else 0
            hints = s.expand(n) if s.accepts(n) else s.types
            dist += sum(1 for h, a in zip(hints, args) if not h.match(a))
            scored.append((dist, len(scored), m))
        scored.sort(key=lambda t: (t[0], t[1]))
        out: list[Method] = []
        for _, _, m in scored:
            if m not in out:
                out.append(m)
            if len(out) == 3:
                break
        return out

    def mro_fallback(self, args: tuple) -> Callable | None:
        """For a method defined in a class with no method for ``args``: a :class:`Fallback`
        to the same-named attribute of the next class in the owner's MRO, or ``None``."""
        if not self.in_class:
            return None
        mros = []
        if args:
            mros.append(type(args[0]).__mro__)
            if isinstance(args[0], type):
                mros.append(args[0].__mro__)
        return self._fallback(mros)

    def _mro_fallback_for(self, cls: type) -> Callable | None:
        """:meth:`mro_fallback` for a first argument of class ``cls`` (type level, for ``invoke``)."""
        mro = getattr(cls, "__mro__", None)
        return self._fallback([mro] if mro else [])

    def _fallback(self, mros: list) -> Fallback | None:
        owner = self.owner
        if owner is None:
            owner = (owner_from_qualname(self.module, self.qualname)
                     or owner_in_mros(mros, self.name, self.qualname.rpartition(".")[0], self.fn))
            if owner is None:
                return None
            self.owner = owner
            self.placement = placement(owner.__dict__.get(self.name), self.fn) or METHOD
        if next_in_mro(owner, self.name) is None:
            return None
        return Fallback(owner, self.name, self.placement, self._not_found)

    def _not_found(self, args: tuple) -> errors.NotFoundLookupError:
        return errors.not_found(self.display, tuple(map(type, args)), self.closest(args))

    def entry_for(self, args: tuple) -> Any:
        """Resolve the cache entry for the types of ``args`` (under ``lock``)."""
        self._process_pending()
        types = tuple(map(type, args))
        cands = self.candidates(len(args))
        sure, maybe = classify_candidates(cands, types)
        if maybe:
            w = best(sure) if sure else None
            if not (isinstance(w, Candidate) and all(beats(w, m) for m, _ in maybe)):
                # The fixed-arity call path calls entries with exactly ``shape`` positional
                # arguments (calls with keywords or odd arities go through ``select``).
                shape = self.shape[0]
                fixed = shape if shape is not None and len(args) == shape else None
                return Deferred(sure, maybe, types, self.pick).entry(fixed)
        return self.pick(sure, args)

    def cache_get(self, cache: dict, args: tuple) -> Any:
        """The decision stored in ``cache`` (``live`` or ``rlive``) for ``args``, or ``None``."""
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

    def cache_put(self, cache: dict, args: tuple, entry: Any) -> None:
        """Store a decision in ``cache`` in the layout the call path reads (under ``lock``)."""
        n = self.nested
        if not n:
            cache[key_of(args)] = entry
        elif len(args) == n:
            for a in args[:-1]:
                cache = cache.setdefault(type(a), {})
            cache[type(args[-1])] = entry

    def hot_miss(self, args: tuple, kw: Any = None) -> Any:
        """Miss of the call path: while a hook is active (the caches are diverted, so every call
        lands here), or with too few arguments for the fixed-arity path, the slow path."""
        if ACTIVE:
            return self.slow_entry
        for a in args:
            if a is _MISSING:
                return self.slow_entry
        return self.miss(args)

    def hot_rmiss(self, args: tuple, kw: Any = None) -> tuple:
        """:meth:`hot_miss` of the return-checking call path (the slow path checks returns itself)."""
        if ACTIVE:
            return _NO_RETURN_CHECK(self.slow_entry)
        for a in args:
            if a is _MISSING:
                return _NO_RETURN_CHECK(self.slow_entry)
        return self.rmiss(args)

    def miss(self, args: tuple) -> Any:
        """Cache miss: resolve, store the decision unless a registration raced us, return it."""
        key = key_of(args)
        traced = False
        if "jax" in sys.modules:
            traced = jax_support.has_tracer(key_types(key))
            if traced:
                jax_support.note_traced(self)
                entry = self.tracer_cache.get(key)
                if entry is not None:
                    return entry
            elif jax_support.tracing():  # static arguments inside a jax trace
                jax_support.note_traced(self)
        with self.lock:
            version, cache = self.version, self.live
            entry = self.entry_for(args)
            if version == self.version and cache is self.live:
                # Every entry depends on the argument types only (a fallback on the owner,
                # which is fixed), so it may be cached whatever the call went through.
                if traced:
                    self.tracer_cache[key] = entry
                else:
                    if self.live_mark is None:
                        self.live_mark = jax_support.trace_mark()
                    self.cache_put(cache, args, entry)
        return entry

    def rmiss(self, args: tuple) -> tuple:
        """Miss of the return-checking call path: ``(implementation, classes, seen types, annotation)``."""
        rcache = self.rlive
        entry = self.miss(args)
        ok = getattr(entry, "_return_ok", None)
        pair = _NO_RETURN_CHECK(entry) if ok is None else (entry.__wrapped__, ok.fast, ok.types, ok)
        with self.lock:
            # cacheable (not a tracer, not a classmethod fallback), and no registration raced us
            if self.cache_get(self.live, args) is entry and rcache is self.rlive:
                self.cache_put(rcache, args, pair)
        return pair

    def final_target(self, args: tuple) -> Callable:
        """The callable that handles these arguments, value-dependent decisions included."""
        entry = self.cache_get(self.live, args)
        if entry is None:
            entry = self.miss(args)
        select = getattr(entry, "_dispatch_select", None)
        if select is not None:
            entry = select(args)
        return entry

    # -- slow path (observers, DispatchCache, keywords, odd arities) -------------------------
    def slow_entry(self, *packed: Any, **kw: Any) -> Any:
        """What :meth:`hot_miss` returns: notify hooks, drop missing arguments, dispatch."""
        return self.slow_packed(packed, (), kw)

    def slow_packed(self, packed: tuple, rest: tuple, kw: dict) -> Any:
        """Slow path of the fixed-arity call path: unpack, then :meth:`slow_call`."""
        args = tuple(a for a in packed if a is not _MISSING) + rest
        return self.slow_call(args, kw)

    def slow_call(self, args: tuple, kw: dict) -> Any:
        """Notify observers, consult an active DispatchCache, then dispatch normally."""
        recorder = None
        if ACTIVE:
            fn = self.fn
            for h in tuple(ACTIVE):
                if type(h) is CallObserver:
                    h.callback(fn)
                else:
                    recorder = h  # innermost DispatchCache wins
        if recorder is not None:
            key = key_of(args)
            t = recorder.lookup(self, key)
            if t is None:
                t = self.final_target(args)
                recorder.record(self, key, t)
            return t(*args, **kw)
        return self.final_target(args)(*args, **kw)

    # -- introspection -------------------------------------------------------------------------
    def resolve_method(self, *types: Any) -> Method:
        """The :class:`Method` chosen for arguments of these types (type-level, no values)."""
        with self.lock:
            self._process_pending()
            hs = [H.normalize(t) for t in types]
            cands = [c for c in self.candidates(len(types)) if all(H.le(h, ch) for h, ch in zip(hs, c.hints))]
        if not cands:
            raise errors.not_found(self.display, types, [m for _, m in self.table][:3])
        w = best(cands)
        if isinstance(w, Candidate):
            return w.method
        raise errors.ambiguous(self.display, types, [c.method for c in w])

    def invoke(self, *types: Any) -> Callable:
        """The callable that handles arguments of these types (plum's ``f.invoke``).

        Parameters
        ----------
        *types : type or hint
            One per positional argument. For a method defined in a class, ``self``'s class
            comes first: ``C.m.invoke(C, int)(obj, 1)``.

        Returns
        -------
        callable
            The chosen implementation, with no dispatch. When the method has a return
            annotation, a wrapper that checks the result (as a dispatched call does; plum's
            ``invoke`` likewise applies its return conversion); ``__wrapped__`` is the
            implementation.

        Raises
        ------
        NotFoundLookupError, AmbiguousLookupError
            As a call with arguments of those types would.

        Examples
        --------
        >>> f.invoke(int)(3)                                  # doctest: +SKIP
        """
        try:
            method = self.resolve_method(*types)
        except errors.NotFoundLookupError as e:
            if self.in_class and types and isinstance(types[0], type):
                # As a call would (and plum's invoke): the next class in ``self``'s MRO.
                fallback = self._mro_fallback_for(types[0])
                if fallback is not None:
                    return fallback
            if self.in_class and self._resolves_with_self(types):
                raise errors.NotFoundLookupError(
                    f"{e}\n\n`{self.display}` is a method: pass `self`'s class first, as in "
                    f"`C.{self.name}.invoke(C, ...)`, and call the result with the instance "
                    f"first. (Through an instance, `obj.{self.name}.invoke(...)` cannot see `obj`: "
                    f"a dispatched function binds as a plain Python function.)") from None
            raise
        return self.target(method)

    def _resolves_with_self(self, types: tuple) -> bool:
        try:
            self.resolve_method(object, *types)
        except LookupError:
            return False
        return True
