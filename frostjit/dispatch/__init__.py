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

class _PackageDispatcher(Dispatcher):
    """The global dispatcher, which also answers for this package's namespace.

    ``from frostjit import dispatch`` binds this object to the name ``frostjit.dispatch``
    (as ``plum.dispatch`` is a dispatcher), which hides the subpackage of the same name;
    attribute lookups that the dispatcher does not know fall back to the package, so
    ``frostjit.dispatch.DispatchCache`` or ``frostjit.dispatch.observe_calls`` still work.
    """

    def __getattr__(self, name):
        import sys
        package = sys.modules[__name__]
        try:
            return getattr(package, name)
        except AttributeError:
            raise AttributeError(f"'Dispatcher' object has no attribute {name!r}") from None


#: The global dispatcher.
dispatch = _PackageDispatcher()

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
