"""``DispatchCache``: record dispatch decisions once, replay them without resolving.

This is the context manager proposed in plum#154::

    with DispatchCache() as c:
        f(args)          # decisions taken inside are recorded in c
    with c:
        f(args)          # replayed: no resolution, no value checks

Decisions are keyed by the dispatched function and the argument *types*; replay never looks
at values, so a decision that depended on a value (``Literal``, a container's elements, a
jaxtyping shape) is replayed for every value of the same types. That is the point (it
compiles the dispatch away), and the caller's responsibility. A registration on a recorded
function drops that function's decisions (other functions' decisions stay).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from ._observers import _activate, _deactivate, on_register


class DispatchCache:
    """Remember dispatch decisions taken inside ``with`` blocks and replay them.

    Examples
    --------
    >>> with DispatchCache() as c:                         # doctest: +SKIP
    ...     f(1.0)
    >>> with c:
    ...     f(2.0)                                         # the recorded method, not resolved
    """

    def __init__(self) -> None:
        self._decisions: dict[Any, dict[Any, Callable]] = {}
        self._subscriptions: dict[Any, Any] = {}
        self._lock = threading.Lock()
        self.hits = 0

    def __enter__(self) -> DispatchCache:
        _activate(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _deactivate(self)

    def lookup(self, state: Any, key: Any) -> Callable | None:
        """The recorded decision for a function and argument-type key, or ``None``."""
        d = self._decisions.get(state)
        if d is None:
            return None
        t = d.get(key)
        if t is not None:
            self.hits += 1
        return t

    def record(self, state: Any, key: Any, target: Callable) -> None:
        """Record a decision; subscribe to the function's registrations on first use."""
        with self._lock:
            d = self._decisions.get(state)
            if d is None:
                d = self._decisions[state] = {}
                self._subscriptions[state] = on_register(state.fn, self._forget)
            d[key] = target

    def _forget(self, function: Any) -> None:
        state = function._dispatch_state
        with self._lock:
            self._decisions.pop(state, None)
            sub = self._subscriptions.pop(state, None)
        if sub is not None:
            sub.close()

    def functions(self) -> list[Callable]:
        """The dispatched functions with recorded decisions."""
        return [s.fn for s in self._decisions]

    def __len__(self) -> int:
        return sum(len(d) for d in self._decisions.values())

    def clear(self) -> None:
        """Drop every decision."""
        with self._lock:
            subs = list(self._subscriptions.values())
            self._decisions.clear()
            self._subscriptions.clear()
        for s in subs:
            s.close()

    def __repr__(self) -> str:
        return f"<DispatchCache with {len(self)} decision(s) for {len(self._decisions)} function(s)>"
