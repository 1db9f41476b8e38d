"""Narrow hooks through which JIT caches watch dispatch (dispatch never imports the JIT).

* :func:`observe_calls` lets a recording (a frozen function being traced, a jit wrapper)
  learn every dispatched function that ran while it was active.
* :func:`on_register` tells a cache that a function it depends on gained a method.
* Every dispatched function object has an integer ``.version``, bumped on each registration.

The hot path of a dispatched call pays nothing for these hooks: while an observer or a
:class:`~frostjit.dispatch.DispatchCache` is active (``ACTIVE`` non-empty), every dispatched
function publishes an empty, read-only cache instead of its own, so each call misses into the
slow path that notifies them. Activating the first hook (and closing the last one) visits
every dispatched function once; nested activations cost O(1).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable

#: Active observers and active DispatchCaches; only ever mutated in place (never rebound),
#: under ``_lock``.
ACTIVE: list[Any] = []
_lock = threading.Lock()
#: Serializes activations, so that ``_activate`` returns only once every function diverts.
sync_lock = threading.Lock()
#: Every dispatched function's state (weakly): while ``ACTIVE`` is non-empty each of them
#: publishes an empty cache, so its call path misses into the slow path that notifies.
_functions: weakref.WeakSet = weakref.WeakSet()


def track(state: Any) -> None:
    """Register a new function's state; it publishes the cache matching the current hooks."""
    with sync_lock:
        _functions.add(state)
        state.publish()


def _sync_all() -> None:  # under sync_lock
    for state in list(_functions):
        state.publish()


def _activate(obj: Any) -> None:
    with sync_lock:
        with _lock:
            ACTIVE.append(obj)
            first = len(ACTIVE) == 1
        if first:
            _sync_all()


def _deactivate(obj: Any) -> None:
    with sync_lock:
        with _lock:
            for i in range(len(ACTIVE) - 1, -1, -1):
                if ACTIVE[i] is obj:
                    del ACTIVE[i]
                    break
            else:
                return
            last = not ACTIVE
        if last:
            _sync_all()


def notify_call(function: Any) -> None:
    """Tell the active observers that ``function`` was called (for callables that are not
    dispatched functions themselves but stand for one, such as ``promote``)."""
    for h in tuple(ACTIVE):
        if type(h) is CallObserver:
            h.callback(function)


class CallObserver:
    """Handle returned by :func:`observe_calls`; a context manager, also closable by hand."""

    __slots__ = ("callback", "active")

    def __init__(self, callback: Callable[[Any], Any]):
        self.callback = callback
        self.active = True
        _activate(self)

    def close(self) -> None:
        """Stop observing (idempotent)."""
        if self.active:
            self.active = False
            _deactivate(self)

    def __enter__(self) -> CallObserver:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def observe_calls(callback: Callable[[Any], Any]) -> CallObserver:
    """Call ``callback(function)`` for every call of any dispatched function, while active.

    The observer is active from creation until ``.close()`` or the end of its ``with`` block.
    Several observers may be active at once (nested recordings); each sees every call, cache
    hit or miss, in every thread, with the dispatched function object as argument.

    Parameters
    ----------
    callback : callable
        ``callback(function) -> Any``; its return value is ignored. Exceptions propagate into
        the dispatched call.

    Returns
    -------
    CallObserver
        A context manager with ``.close()``.

    Examples
    --------
    >>> seen = set()
    >>> with observe_calls(seen.add):
    ...     f(1)                                          # doctest: +SKIP
    >>> f in seen                                         # doctest: +SKIP
    True
    """
    return CallObserver(callback)


class RegistrationSubscription:
    """Handle returned by :func:`on_register`; ``.close()`` unsubscribes (idempotent)."""

    __slots__ = ("state", "callback", "__weakref__")

    def __init__(self, state: Any, callback: Callable[[Any], Any]):
        self.state = state
        self.callback = callback

    def close(self) -> None:
        state, self.state = self.state, None
        if state is not None:
            state.subscriptions.pop(id(self), None)

    def __enter__(self) -> RegistrationSubscription:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def on_register(function: Any, callback: Callable[[Any], Any]) -> RegistrationSubscription:
    """Call ``callback(function)`` after each method registered on ``function``.

    The callback is held **strongly** until ``.close()`` is called on the returned handle (a
    recording that drops itself must close its handle). It runs after the function's own
    cache was invalidated and its ``.version`` bumped, in the registering thread.

    Parameters
    ----------
    function : dispatched function
        An object made by ``@dispatch``.
    callback : callable
        ``callback(function) -> Any``.

    Returns
    -------
    RegistrationSubscription
        A handle with ``.close()``.
    """
    state = getattr(function, "_dispatch_state", None)
    if state is None:
        raise TypeError(f"{function!r} is not a dispatched function")
    sub = RegistrationSubscription(state, callback)
    state.subscriptions[id(sub)] = sub
    return sub
