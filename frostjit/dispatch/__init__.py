"""Multiple dispatch whose caches JIT caches can trust.

Public API (``from frostjit import dispatch, Dispatcher, ...``):

* :data:`dispatch`, the global :class:`Dispatcher`: ``@dispatch``, ``@dispatch(precedence=n)``,
  ``@dispatch.multi((int,), (float,))``, ``@dispatch.abstract``;
* :class:`NotFoundLookupError`, :class:`AmbiguousLookupError` (both ``LookupError``);
* :class:`DispatchCache`: record decisions, replay them without resolving;
* hooks for JIT caches: :func:`observe_calls`, :func:`on_register`, and ``f.version``;
* :func:`jit`: ``jax.jit`` that forgets exactly the traces depending on a function that
  gained a method.

This package imports nothing else from frostjit, and never imports jax by itself.
"""

from .cache import DispatchCache
from .dispatcher import Dispatcher
from .errors import AmbiguousLookupError, NotFoundLookupError
from .jax_support import jit
from .observers import observe_calls, on_register
from .signature import Signature

#: The global dispatcher.
dispatch = Dispatcher()

__all__ = [
    "dispatch",
    "Dispatcher",
    "NotFoundLookupError",
    "AmbiguousLookupError",
    "DispatchCache",
    "observe_calls",
    "on_register",
    "Signature",
    "jit",
]
