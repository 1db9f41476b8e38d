"""Keeping ``jax.jit`` caches honest when a dispatched function gains a method.

jax is never imported here unless the user already imported it (``"jax" in sys.modules``).

Two levels, documented in docs/dispatch.md:

* **Plain ``jax.jit``.** When a dispatched function ``F`` is called with a jax tracer
  argument outside a :func:`jit` wrapper's trace, ``F`` is marked as *traced by jax*. The next
  registration on ``F`` calls ``jax.clear_caches()`` (all of jax's compilation caches) and
  clears the mark. Functions jax never traced through cost nothing.
* **:func:`jit`**, a thin wrapper around ``jax.jit``: while jax traces the wrapped function,
  every dispatched function it calls is recorded; a registration on any of them clears only
  that wrapper's cache (``jitted.clear_cache()``).
"""

from __future__ import annotations

import functools
import sys
import threading
from typing import Any, Callable

from .observers import observe_calls, on_register

_tls = threading.local()


def _tracer_class() -> type | None:
    core = sys.modules.get("jax._src.core")
    return getattr(core, "Tracer", None)


def has_tracer(types: Any) -> bool:
    """Whether any of the argument types is a jax tracer (only asked when jax is imported)."""
    tracer = _tracer_class()
    if tracer is None:
        return False
    if isinstance(types, type):
        types = (types,)
    return any(issubclass(T, tracer) for T in types)


def note_traced(state: Any) -> None:
    """Record that jax traced through ``state``'s function (called on each traced call)."""
    if getattr(_tls, "depth", 0):
        return  # the enclosing frostjit jit wrapper records the dependency precisely
    state.traced_by_jax = True


def on_registration(state: Any) -> None:
    """Called after a registration on a function jax traced through: clear jax's caches."""
    if not state.traced_by_jax:
        return
    state.traced_by_jax = False
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.clear_caches()


def jit(fun: Callable | None = None, **jit_kwargs: Any) -> Any:
    """``jax.jit`` that forgets exactly the traces that depended on a dispatched function.

    While jax traces ``fun``, every dispatched function called is recorded. When any of them
    gains a method, this jitted function's cache is cleared (``.clear_cache()``), and nothing
    else: other jitted functions keep their compiled code. jax is imported lazily here.

    Parameters
    ----------
    fun : callable
        The function to compile (it may itself be a dispatched function).
    **jit_kwargs
        Passed to ``jax.jit`` (``static_argnums``, ``donate_argnums``, ...).

    Returns
    -------
    The object ``jax.jit`` returns, with an extra attribute ``dispatch_dependencies``
    (the set of dispatched functions the current traces depend on).

    Examples
    --------
    >>> from frostjit.dispatch import jit, dispatch          # doctest: +SKIP
    >>> @jit
    ... def algo(x):
    ...     return 2 * op(x)                                   # op is dispatched
    """
    if fun is None:
        return functools.partial(jit, **jit_kwargs)
    import jax  # the caller asked for a jax wrapper, so importing jax here is intended

    deps: dict[Any, Any] = {}
    jitted_ref: list[Any] = [None]

    def forget(function: Any) -> None:
        for sub in deps.values():
            sub.close()
        deps.clear()
        j = jitted_ref[0]
        if j is not None:
            j.clear_cache()

    def record(function: Any) -> None:
        if function not in deps:
            deps[function] = on_register(function, forget)

    @functools.wraps(fun)
    def traced(*args: Any, **kwargs: Any) -> Any:
        _tls.depth = getattr(_tls, "depth", 0) + 1
        try:
            with observe_calls(record):
                return fun(*args, **kwargs)
        finally:
            _tls.depth -= 1

    jitted = jax.jit(traced, **jit_kwargs)
    jitted_ref[0] = jitted
    try:
        jitted.dispatch_dependencies = deps.keys()
    except AttributeError:
        pass
    return jitted
