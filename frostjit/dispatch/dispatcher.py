"""The ``Dispatcher``: a namespace of dispatched functions and the ``@dispatch`` decorator."""

from __future__ import annotations

import threading
from typing import Any, Callable

from .function import FunctionState
from .signature import Signature


class Dispatcher:
    """A namespace of dispatched functions.

    ``@dispatch`` collects every definition with the same module and qualified name into one
    dispatched function (two ``def f`` in one module or class body extend the same function;
    functions in different modules, or local to different enclosing functions, stay apart).
    Use ``f.dispatch`` to extend a function from elsewhere.

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

    def __init__(self) -> None:
        self.functions: dict[tuple[str, str], Callable] = {}
        self._lock = threading.Lock()

    def _function_for(self, method: Callable, doc: str | None = None) -> FunctionState:
        module = getattr(method, "__module__", None) or "__main__"
        name = getattr(method, "__name__", None) or type(method).__name__
        qualname = getattr(method, "__qualname__", None) or name
        key = (module, qualname)
        with self._lock:
            fn = self.functions.get(key)
            if fn is None:
                fn = FunctionState(name, qualname, module, doc).fn
                self.functions[key] = fn
        return fn._dispatch_state

    def __call__(self, method: Callable | None = None, *, precedence: int = 0) -> Any:
        """Register ``method``: ``@dispatch`` or ``@dispatch(precedence=1)``.

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
        state = self._function_for(method)
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
        """Create a dispatched function with no methods (its docstring is kept)."""
        return self._function_for(method, (method.__doc__ or "").strip() or None).fn

    def clear_cache(self) -> None:
        """Clear the resolution caches of every function of this dispatcher (class methods included)."""
        for fn in list(self.functions.values()):
            fn.clear_cache()

    def __repr__(self) -> str:
        return f"<Dispatcher with {len(self.functions)} function(s)>"
