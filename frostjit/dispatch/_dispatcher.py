"""The ``Dispatcher``: a namespace of dispatched functions and the ``@dispatch`` decorator."""

from __future__ import annotations

import threading
import typing
from typing import Any, Callable

from . import _hints as H
from ._function import FunctionState, all_functions
from ._signature import Signature

_get_overloads = getattr(typing, "get_overloads", None)


class Dispatcher:
    """A namespace of dispatched functions (plum's ``Dispatcher``).

    ``@dispatch`` collects every definition with the same module and qualified name into one
    dispatched function (two ``def f`` in one module or class body extend the same function;
    functions in different modules, or local to different enclosing functions, stay apart).
    Use ``f.dispatch`` to extend a function from elsewhere.

    Parameters
    ----------
    warn_redefinition : bool
        Warn (:class:`MethodRedefinitionWarning`) when a method replaces an earlier one with an
        equivalent signature (at the first call after it, as plum).

    Attributes
    ----------
    functions : dict
        Function name -> dispatched function, for functions outside classes (plum's layout; two
        modules defining ``f`` on one dispatcher are two functions, the later one is listed).
    classes : dict
        Fully qualified class name (``module.Class``) -> {name -> dispatched function}.

    Examples
    --------
    >>> dispatch = Dispatcher()
    >>> @dispatch
    ... def f(x: int): return "int"
    >>> @dispatch
    ... def f(x: str): return "str"
    >>> f(1), f("a")
    ('int', 'str')
    """

    def __init__(self, warn_redefinition: bool = False) -> None:
        self.warn_redefinition = warn_redefinition
        self.functions: dict[str, Callable] = {}
        self.classes: dict[str, dict[str, Callable]] = {}
        self._scopes: dict[tuple[str, str], Callable] = {}
        self._lock = threading.Lock()

    def _function_for(self, method: Callable, head: Any = None, abstract: bool = False) -> FunctionState:
        module = getattr(method, "__module__", None) or "__main__"
        name = getattr(method, "__name__", None) or type(method).__name__
        qualname = getattr(method, "__qualname__", None) or name
        key = (module, qualname)
        with self._lock:
            fn = self._scopes.get(key)
            if fn is None:
                state = FunctionState(name, qualname, module, head=head,
                                      warn_redefinition=self.warn_redefinition)
                if abstract:
                    state.head_fixed = True
                fn = state.fn
                self._scopes[key] = fn
                parts = qualname.split(".")
                if len(parts) > 1 and parts[-2] != "<locals>":
                    self.classes.setdefault(f"{module}.{'.'.join(parts[:-1])}", {})[name] = fn
                else:
                    self.functions[name] = fn
        return fn._dispatch_state

    def __call__(self, method: Callable | None = None, *, precedence: int = 0) -> Any:
        """Register ``method``: ``@dispatch`` or ``@dispatch(precedence=1)``.

        When ``method`` has ``typing.overload`` definitions (``frostjit.dispatch.overload``),
        those are registered instead and ``method``'s body is not (plum's mypy-friendly pattern).

        Parameters
        ----------
        method : callable
            The implementation; its positional parameters' annotations are the signature.
        precedence : int
            Breaks ties between equally specific methods (higher wins).

        Returns
        -------
        The dispatched function (the same object for every method of one name and scope).
        """
        if method is None:
            return lambda m: self(m, precedence=precedence)
        if isinstance(method, (staticmethod, classmethod)):
            raise TypeError("apply @dispatch below @staticmethod/@classmethod (it must be innermost)")
        overloads = list(_get_overloads(method)) if _get_overloads is not None else []
        state = self._function_for(method)
        if overloads:
            for o in overloads:
                state.register(o, precedence=precedence)
            return state.fn
        return state.register(method, precedence=precedence)

    def multi(self, *signatures: Any) -> Callable[[Callable], Callable]:
        """Register one body under several signatures: ``@dispatch.multi((int,), (float,))``.

        Each signature is a tuple of types or a :class:`Signature` (which may carry
        ``varargs`` and ``precedence``).
        """
        for s in signatures:
            if not isinstance(s, (tuple, Signature)):
                raise TypeError(f"`multi` takes tuples of types or Signatures, not {s!r}")

        def decorate(method: Callable) -> Callable:
            state = self._function_for(method)
            for s in signatures:
                state.register(method, s)
            return state.fn

        return decorate

    def abstract(self, method: Callable) -> Callable:
        """Create a dispatched function with no methods; ``method``'s docstring heads its docs."""
        return self._function_for(method, head=method, abstract=True).fn

    def clear_cache(self) -> None:
        """Clear the resolution caches of every function of this dispatcher (class methods
        included; plum's clears module-level functions only)."""
        for fn in list(self._scopes.values()):
            fn.clear_cache()

    def __repr__(self) -> str:
        return f"<Dispatcher with {len(self._scopes)} function(s)>"


def clear_all_cache() -> None:
    """Clear the resolution caches of every dispatched function, everywhere (plum's name).

    Every function also reads its annotations again, so ``type_mapping``, promised types and
    module types are looked up afresh; frozen recordings and ``DispatchCache`` decisions that
    depended on any dispatched function are dropped (each function's ``version`` moves).
    """
    H.clear_caches()
    for state in all_functions():
        state.clear_cache(reregister=True)
