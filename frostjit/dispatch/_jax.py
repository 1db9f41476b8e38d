"""Keeping ``jax.jit`` caches honest when a dispatched function gains a method.

jax is never imported here unless the user already imported it (``"jax" in sys.modules``).

Two levels, documented in docs/dispatch.md:

* **Plain ``jax.jit``.** When a dispatched function ``F`` is called with a jax tracer
  argument outside a :func:`jit` wrapper's trace, ``F`` is marked as *traced by jax*. The next
  registration on ``F`` calls ``jax.clear_caches()`` (all of jax's compilation caches) and
  clears the mark. A cache miss with static arguments while jax traces marks ``F`` too; a
  cache hit during a trace is invisible, so a registration on ``F`` after it cached decisions
  also clears jax's caches when jax reported a trace since (:func:`trace_mark`).
* **:func:`jit`**, a thin wrapper around ``jax.jit``: while jax traces the wrapped function,
  every dispatched function it calls is recorded; a registration on any of them clears only
  that wrapper's cache (``jitted.clear_cache()``).
"""

from __future__ import annotations

import functools
import sys
import threading
from typing import Any, Callable

from ._observers import observe_calls, on_register

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


def tracing() -> bool:
    """Whether jax is tracing right now (a ``jax.jit``/``grad``/``vmap`` trace is active).

    Asked on cache misses whose arguments hold no tracer (static arguments), only when jax is
    imported. Reads jax's current trace; ``False`` when jax's internals are not as expected.
    """
    core = sys.modules.get("jax._src.core")
    ctx = getattr(core, "trace_ctx", None)
    trace = getattr(ctx, "trace", None)
    evaluating = getattr(core, "EvalTrace", None)
    return trace is not None and evaluating is not None and not isinstance(trace, evaluating)


#: Plain (non-:func:`jit`-wrapper) jax traces seen since the listener was installed, and
#: whether it is installed (``_traces[1]``).
_traces = [0, False]
_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"


def _on_event(event: str, *args: Any, **kw: Any) -> None:
    if event == _TRACE_EVENT:
        # The event right after a jit wrapper's traced function returned is that wrapper's
        # trace (tracked precisely, not counted). The expectation is one-shot: a leftover
        # (the wrapper's event never came) cannot swallow a later plain trace of that name.
        expected = getattr(_tls, "expected_wrapper_trace", None)
        _tls.expected_wrapper_trace = None
        if expected is None or kw.get("fun_name") != expected:
            _traces[0] += 1


def trace_mark() -> int:
    """A mark to compare with later: the count of jax traces so far, or -1 when unknown.

    Called when a function stores its first decision since its last registration (a cache
    miss, so it costs the hot path nothing). When jax is imported, installs a listener on
    jax's trace events (once), so a later registration can tell whether jax may have traced
    through a cached decision (a cache *hit* during a trace is invisible otherwise).
    """
    if not _traces[1]:
        jax = sys.modules.get("jax")
        if jax is None:
            return -1
        try:
            jax.monitoring.register_event_duration_secs_listener(_on_event)
        except Exception:  # pragma: no cover - no monitoring API: always assume a trace
            return -1
        _traces[1] = True  # the decision is stored now: earlier traces cannot have used it
    return _traces[0]


def may_have_traced(mark: int) -> bool:
    """Whether a plain jax trace may have happened since ``mark`` (from :func:`trace_mark`)."""
    return mark < 0 or not _traces[1] or _traces[0] > mark


def on_cached_registration(state: Any, mark: int) -> None:
    """A registration on a function that held cached decisions since ``mark``, never seen
    traced: a jax trace may still have hit those decisions (static arguments), so clear
    jax's caches when one may have happened since they were stored."""
    jax = sys.modules.get("jax")
    if jax is not None and may_have_traced(mark):
        jax.clear_caches()


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
                out = fun(*args, **kwargs)
        finally:
            _tls.depth -= 1
        if not _tls.depth and _traces[1]:  # jax reports this trace next: not a plain one
            _tls.expected_wrapper_trace = getattr(fun, "__name__", None)
        return out

    jitted = jax.jit(traced, **jit_kwargs)
    jitted_ref[0] = jitted
    try:
        jitted.dispatch_dependencies = deps.keys()
    except AttributeError:
        pass
    return jitted
