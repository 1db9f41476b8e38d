"""One dispatched function: the object users call, and the state behind it.

The object users call is a real Python function generated per dispatched function
(``_call_path``), so it binds as a method in a class, can be weak-referenced, wrapped by
``jax.jit`` and ``functools.wraps``. Its globals dict (``FunctionState.ns``) holds the
decisions it reads (``_call_cache.Decisions``) and the misses it calls. The pieces:

* :class:`~._method_table.MethodTable`: registrations, the methods they resolve to, redefinitions;
* :class:`~._call_cache.Decisions`: the resolution cache and the misses that fill it;
* ``_call_path``: the generated code, regenerated when the table's shape changes;
* ``_fallback``: falling back to a parent class's method;
* ``_returns``: converting results to return annotations.

:class:`Function` is plum's name for a dispatched function: ``Function(f)`` makes one,
``isinstance(g, Function)`` recognises one.
"""

from __future__ import annotations

import abc
import inspect
import sys
import threading
import weakref
from types import FunctionType, MethodType
from typing import Any, Callable

from . import _call_path, _errors, _jax, _observers
from . import _hints as H
from ._call_cache import NOT_PASSED, Decisions
from ._docs import FunctionDoc
from ._fallback import (METHOD, Fallback, class_from_name, next_in_mro, owner_from_qualname, owner_in_mros,
                        placement)
from ._method_table import MethodList, MethodTable
from ._resolution import Candidate, best
from ._returns import check_return, make_return_checker
from ._signature import Method, Registration, Signature

#: Every live function's state (weakly), for ``clear_all_cache`` and display refreshes.
_all_states: weakref.WeakSet = weakref.WeakSet()

_NEUTRAL_SIGNATURE = inspect.Signature([
    inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
    inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
])


def all_functions() -> list[FunctionState]:
    """The states of every live dispatched function."""
    return list(_all_states)


def refresh_all_docs() -> None:
    """Recompute every function's ``__doc__`` (union aliases changed how types print)."""
    for state in all_functions():
        state.refresh_doc()


class FunctionState:
    """Everything one dispatched function knows (the generated function reads ``ns``).

    Parameters
    ----------
    name, qualname, module : str
        Of the dispatched function.
    head : callable, optional
        The definition whose docstring heads the function's ``__doc__`` (the first one
        registered when not given).
    warn_redefinition : bool
        Warn (``MethodRedefinitionWarning``) when a method replaces one of the same signature.
    """

    def __init__(self, name: str, qualname: str, module: str, head: Any = None,
                 warn_redefinition: bool = False, owner: Any = None):
        self.name = name
        self.qualname = qualname
        self.module = module
        parts = qualname.split(".")
        self.in_class = len(parts) > 1 and parts[-2] != "<locals>"
        self.display = qualname.split("<locals>.")[-1]
        self.lock = threading.RLock()
        self.table = MethodTable(self.display, warn_redefinition, self.lock)
        self.table.after_resolve = self._after_resolve
        self.head_fixed = head is not None
        self.doc = FunctionDoc(head)
        self.version = 0
        self.subscriptions: dict[int, Any] = {}
        self.traced_by_jax = False
        #: The class whose body defined this function (found at the first fallback).
        self.owner: type | None = owner if isinstance(owner, type) else None
        self.owner_name: str | None = owner if isinstance(owner, str) else None
        self.placement = METHOD
        self.shape: Any = None
        self.decisions = Decisions(self)
        self.ns: dict[str, Any] = {
            "__builtins__": __builtins__,
            "__name__": module,
            "decisions": self.decisions.live,
            "decisions_returning": self.decisions.returning,
            "resolve": self.decisions.resolve,
            "resolve_returning": self.decisions.resolve_returning,
            "call_slowly": self.decisions.call_slowly,
            "NOT_PASSED": NOT_PASSED,
            "abc_token": abc.get_cache_token,
            "token": [abc.get_cache_token()],
            "abc_registered": self.abc_registered,
            "convert_result": check_return,
        }
        self.fn = self._build_function()
        _all_states.add(self)
        _observers.track(self)

    # -- the function object -----------------------------------------------------------------
    def _build_function(self) -> Callable:
        code = _call_path.compile_source(_call_path.source(self.name, None, True, False, False),
                                         self.module, self.qualname, self.ns)
        fn = FunctionType(code, self.ns, self.name)
        fn.__qualname__ = self.qualname
        fn.__module__ = self.module
        fn.__signature__ = _NEUTRAL_SIGNATURE
        fn.__dict__.update(
            _dispatch_state=self,
            methods=self.table.methods,
            version=0,
            owner=self.owner,
            invoke=self.invoke,
            clear_cache=self.clear_cache,
            register=self.register,
            dispatch=self.dispatch,
            dispatch_multi=self.dispatch_multi,
            resolve_method=self.resolve_method,
            _resolve_pending_registrations=self.resolve_pending_registrations,
        )
        fn.__doc__ = self.doc.text()
        return fn

    def publish(self) -> None:
        """Publish the decisions (or empty ones while a hook is active); see ``_observers``."""
        self.decisions.publish()

    def _reshape(self) -> None:
        """Regenerate the call path when the method table's shape changed (under ``lock``)."""
        arity, kw, ret = self.table.shape()
        shape = arity if arity is not None and 1 <= arity <= _call_path.MAX_SPECIALIZED_ARITY else None
        key = (shape, kw, self.table.uses_abc, ret)
        if key != self.shape:
            nested = shape if shape is not None and shape >= 2 else 0
            if nested != self.decisions.nested:  # the layout changes: start from empty dicts
                self.decisions.nested = nested
                self.decisions.invalidate()
            self.shape = key
            src = _call_path.source(self.name, *key)
            self.fn.__code__ = _call_path.compile_source(src, self.module, self.qualname, self.ns)
            self.fn.__defaults__ = None if shape is None else (NOT_PASSED,) * shape

    @property
    def head(self) -> Any:
        """The definition whose docstring heads ``__doc__``."""
        return self.doc.head

    def refresh_doc(self, reprint: bool = True) -> None:
        """Rebuild ``__doc__`` from the registrations (after resolution reordered them; with
        ``reprint``, also their signature lines: union aliases changed how types print)."""
        regs = self.table.documented()
        if reprint:
            for r in regs:
                try:
                    del r._doc
                except AttributeError:
                    pass
        self.doc.rebuild(regs)
        self.fn.__doc__ = self.doc.text()

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
        reg = Registration(implementation, signature, precedence, self.display)
        with self.lock:
            if not self.head_fixed:
                self.doc.set_head(implementation)
                self.head_fixed = True
            self.table.add(reg)
            self.doc.add(reg)
            self.fn.__doc__ = self.doc.text()
        self.changed()
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

    # -- change notification -----------------------------------------------------------------
    def changed(self, reregister: bool = False) -> None:
        """Resolution may have changed (a registration, a conversion method, a promised type
        delivered, ``clear_cache``): forget every decision, bump ``version``, tell the
        subscribers (``on_register``: frozen recordings, ``DispatchCache``, jit wrappers) and
        jax. ``reregister``: also read every registration's annotations again."""
        with self.lock:
            self.version += 1
            self.fn.version = self.version
            mark, self.decisions.live_mark = self.decisions.live_mark, None
            if reregister:
                self.table.reset()
            for m in self.table.active:
                m.target = None
            self.decisions.invalidate()
            self._reshape()
        self._notify(mark)

    def _notify(self, mark: int | None) -> None:
        if self.traced_by_jax:
            _jax.on_registration(self)
        elif mark is not None and "jax" in sys.modules:
            _jax.on_cached_registration(self, mark)
        for sub in list(self.subscriptions.values()):
            sub.callback(self.fn)

    def clear_cache(self, reregister: bool = True) -> None:
        """Forget every resolution decision (methods stay registered).

        Parameters
        ----------
        reregister : bool
            Also read every method's annotations again (plum's default), so promised types,
            module types and ``type_mapping`` are looked up afresh.

        Like a registration, this bumps ``version`` and tells ``on_register`` subscribers
        (frozen recordings, ``DispatchCache``, jit wrappers): the types may have changed.
        """
        self.changed(reregister=reregister)

    def abc_registered(self) -> None:
        """Called by the call path when ``abc.get_cache_token()`` moved (an ``ABC.register``)."""
        with self.lock:
            token = abc.get_cache_token()
            if token != self.ns["token"][0]:
                self.decisions.invalidate()
                self.ns["token"][0] = token

    def resolve_pending_registrations(self) -> None:
        """Read the annotations of registrations not read yet (plum's
        ``f._resolve_pending_registrations()``): errors in them (an unresolvable forward
        reference, a default that does not match its annotation) raise now, not at the
        first call."""
        with self.lock:
            self.resolve_pending()

    def resolve_pending(self) -> None:
        """Read annotations of pending registrations (under ``lock``)."""
        if self.table.pending:
            self.table.resolve_pending()

    def _after_resolve(self) -> None:
        self._reshape()
        self.refresh_doc(reprint=False)
        # Promised and module types this function's signatures mention: delivering one
        # re-resolves the function (``_types.PromisedType.deliver``).
        for m in self.table.active:
            sig = m.signature
            hs = sig.hints + ((sig.varargs_hint,) if sig.varargs_hint is not None else ())
            if m.return_hint is not None:
                hs += (m.return_hint,)
            for h in hs:
                for sub in H.walk(h):
                    if type(sub) is H.LazyHint:
                        sub.cls._dependents().add(self)

    # -- decisions -------------------------------------------------------------------------------
    def target(self, method: Method) -> Callable:
        """What the cache stores for a method: the implementation, or a return-converting wrapper."""
        t = method.target
        if t is None:
            if method.return_hint is None:
                t = method.implementation
            else:
                t = make_return_checker(method.implementation, method.return_hint, method.return_type,
                                        self.display)
            method.target = t
        return t

    def pick(self, matched: list[Candidate], args: tuple) -> Callable:
        """The callable for matched candidates; raises lookup errors, or falls back along the MRO."""
        if matched:
            w = best(matched)
            if isinstance(w, Candidate):
                return self.target(w.method)
            raise _errors.ambiguous(self.display, tuple(map(type, args)), [c.method for c in w])
        fallback = self.mro_fallback(args)
        if fallback is not None:
            return fallback
        raise self._not_found(args)

    def _not_found(self, args: tuple) -> _errors.NotFoundLookupError:
        return _errors.not_found(self.display, tuple(map(type, args)), self.table.closest(args))

    # -- falling back to a parent class ------------------------------------------------------
    def mro_fallback(self, args: tuple) -> Callable | None:
        """For a method defined in a class with no method for ``args``: a :class:`Fallback`
        to the same-named attribute of the next class in the owner's MRO, or ``None``."""
        if not self.in_class and self.owner is None and self.owner_name is None:
            return None
        mros = []
        if args:
            mros.append(type(args[0]).__mro__)
            if isinstance(args[0], type):
                mros.append(args[0].__mro__)
        return self._fallback(mros)

    def _mro_fallback_for(self, cls: Any) -> Callable | None:
        """:meth:`mro_fallback` for a first argument of class ``cls`` (type level, for ``invoke``)."""
        mro = getattr(cls, "__mro__", None)
        return self._fallback([mro] if mro else [])

    def find_owner(self, mros: list = ()) -> type | None:
        """The class whose body defined this function (from the qualified name, else from the
        MROs of the call's first argument); ``None`` outside classes."""
        owner = self.owner
        if owner is None:
            if self.owner_name is not None:
                owner = class_from_name(self.owner_name)
            elif self.in_class:
                owner = (owner_from_qualname(self.module, self.qualname)
                         or owner_in_mros(list(mros), self.name, self.qualname.rpartition(".")[0], self.fn))
            if owner is None:
                return None
            # The name may now refer to a subclass of the defining class (``@parametric``
            # returns one): the owner is the class whose body holds this function.
            for C in owner.__mro__:
                if placement(C.__dict__.get(self.name), self.fn) is not None:
                    owner = C
                    break
            self.owner = owner
            self.fn.owner = owner
            self.placement = placement(owner.__dict__.get(self.name), self.fn) or METHOD
        return owner

    def adopt_owner(self, cls: type) -> None:
        """``cls``'s body defined this function: record it as the owner now (``@parametric``
        knows the class before any call; otherwise the owner is found at the first fallback)."""
        if self.owner is None and self.owner_name is None and self.in_class:
            self.owner = cls
            self.fn.owner = cls
            self.placement = placement(cls.__dict__.get(self.name), self.fn) or METHOD

    def _fallback(self, mros: list) -> Fallback | None:
        owner = self.find_owner(mros)
        if owner is None or next_in_mro(owner, self.name, self.fn) is None:
            return None
        return Fallback(owner, self.name, self.placement, self._not_found, self.fn)

    # -- introspection -----------------------------------------------------------------------
    @property
    def methods(self) -> MethodList:
        return self.table.methods

    def method_for_types(self, *types: Any) -> Method:
        """The :class:`Method` chosen for arguments of these types (type level, no values)."""
        with self.lock:
            self.resolve_pending()
            hs = [H.normalize(t) for t in types]
            cands = [c for c in self.table.candidates(len(types))
                     if all(H.le(h, ch) for h, ch in zip(hs, c.hints))]
        if not cands:
            raise _errors.not_found(self.display, types, self.table.active[:3])
        w = best(cands)
        if isinstance(w, Candidate):
            return w.method
        raise _errors.ambiguous(self.display, types, [c.method for c in w])

    def resolve_method(self, target: Any) -> tuple[Callable, Any]:
        """The implementation and return type for a call (plum's ``resolve_method``).

        Parameters
        ----------
        target : tuple or Signature
            The positional argument *values* of a call, or a :class:`Signature` of types.

        Returns
        -------
        (callable, return type)
            ``return type`` is ``typing.Any`` for a method without a return annotation.
        """
        if isinstance(target, Signature):
            m = self.method_for_types(*target.types)
            return m.implementation, m.return_type
        args = tuple(target)
        with self.lock:
            self.resolve_pending()
        t = self.decisions.final_target(args)
        t = getattr(t, "__wrapped__", t) if hasattr(t, "_return_ok") else t
        for m in self.table.active:
            if m.implementation is t:
                return t, m.return_type
        return t, Any

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
            annotation, a wrapper that converts the result (as a call does); ``__wrapped__``
            is the implementation.

        Raises
        ------
        NotFoundLookupError, AmbiguousLookupError
            As a call with arguments of those types would.

        Examples
        --------
        >>> f.invoke(int)(3)                                  # doctest: +SKIP
        """
        try:
            method = self.method_for_types(*types)
        except _errors.NotFoundLookupError as e:
            if self.in_class or self.owner is not None:
                # As a call would (and plum's invoke): the next class in the owner's MRO.
                fallback = self._mro_fallback_for(types[0] if types else None)
                if fallback is not None:
                    return fallback
            if self.in_class and self._resolves_with_self(types):
                raise _errors.NotFoundLookupError(
                    f"{e}\n\n`{self.display}` is a method: pass `self`'s class first, as in "
                    f"`C.{self.name}.invoke(C, ...)`, and call the result with the instance "
                    f"first. (Through an instance, `obj.{self.name}.invoke(...)` cannot see `obj`: "
                    f"a dispatched function binds as a plain Python function.)") from None
            raise
        return self.target(method)

    def _resolves_with_self(self, types: tuple) -> bool:
        try:
            self.method_for_types(object, *types)
        except LookupError:
            return False
        return True

    def __repr__(self) -> str:
        n, p = len(self.table.active), len(self.table.pending)
        return (f"<multiple-dispatch function {self.display} (with {n} registered and {p} "
                f"pending method(s))>")


def is_dispatched(obj: Any) -> bool:
    """Whether ``obj`` is a dispatched function (what ``@dispatch`` or :class:`Function` returns)
    or a method bound from one.

    Reads no attribute through the object's own code (no ``__getattr__``, no descriptors), so
    it is safe on any object, e.g. while observing what a traced program reads.

    Examples
    --------
    >>> @dispatch
    ... def f(x: int): return x
    >>> is_dispatched(f), is_dispatched(print)
    (True, False)
    """
    if type(obj) is MethodType:
        obj = obj.__func__
    return type(obj) is FunctionType and "_dispatch_state" in obj.__dict__


class _FunctionType(type):
    """Metaclass of :class:`Function`: ``Function(f)`` returns a dispatched function (a real
    Python function object), and ``isinstance(g, Function)`` recognises one."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(getattr(obj, "__dict__", None), dict) and "_dispatch_state" in obj.__dict__

    @property
    def _instances(cls) -> list[Callable]:
        """Every live dispatched function (plum's ``Function._instances``; held weakly)."""
        return [state.fn for state in all_functions()]

    def __call__(cls, f: Callable, owner: Any = None, warn_redefinition: bool = False) -> Callable:
        name = getattr(f, "__name__", None) or type(f).__name__
        state = FunctionState(name, getattr(f, "__qualname__", None) or name,
                              getattr(f, "__module__", None) or "__main__", head=f,
                              warn_redefinition=warn_redefinition, owner=owner)
        return state.fn


class Function(metaclass=_FunctionType):
    """A dispatched function (plum's ``Function``), made directly rather than by a dispatcher.

    ``Function(f)`` takes its name, module and docstring from ``f`` (which is *not* registered
    as a method); add methods with ``register``/``dispatch``. The result is a real Python
    function object (like every dispatched function); ``isinstance(g, Function)`` is true for
    any dispatched function.

    Parameters
    ----------
    f : callable
        Gives the name, qualified name, module and head docstring.
    owner : type or str, optional
        The class the function belongs to (for falling back to a parent class's method).
    warn_redefinition : bool
        Warn when a method replaces one with an equivalent signature.

    Examples
    --------
    >>> def area(shape):
    ...     "Area of a shape."
    >>> area = Function(area)
    >>> area.register(lambda r: 3.14159 * r * r, (float,))       # doctest: +ELLIPSIS
    <function area at ...>
    >>> area(1.0)
    3.14159
    """
