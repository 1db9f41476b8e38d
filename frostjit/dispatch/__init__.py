"""Multiple dispatch whose caches JIT caches can trust, with plum's public API.

``frostjit.dispatch`` is at once this package and the global :class:`Dispatcher` (as
``plum.dispatch`` is): ``from frostjit import dispatch`` and ``import frostjit.dispatch`` give
the same object, which decorates (``@dispatch``, ``@dispatch(precedence=1)``,
``@dispatch.multi(...)``, ``@dispatch.abstract``) and holds every public name
(``frostjit.dispatch.Dispatcher``, ``.parametric``, ``.convert``, ...). The implementation lives
in private modules.

This package imports nothing else from frostjit, and never imports jax by itself.
"""

import sys as _sys
import types as _pytypes

import typing as _typing

from ._alias import activate_union_aliases, deactivate_union_aliases, set_union_alias
from ._autoreload import activate_autoreload, deactivate_autoreload
from ._dispatch_cache import DispatchCache
from ._dispatcher import Dispatcher, clear_all_cache
from ._errors import AmbiguousLookupError, MethodRedefinitionWarning, NotFoundLookupError
from ._function import Function, is_dispatched
from ._jax import jit
from ._method_table import MethodList
from ._observers import observe_calls, on_register
from ._parametric import (CovariantMeta, Kind, kind, parametric, type_nonparametric, type_parameter,
                          type_unparametrized)
from ._promotion import add_conversion_method, add_promotion_rule, conversion_method, convert, promote
from ._signature import Method, Missing, Signature, append_default_args, extract_return_type, inspect_signature
from ._types import (ModuleType, PromisedType, is_faithful, isinstance, issubclass, resolve_type_hint,
                     type_mapping)
from ._util import Comparable, argsort, get_class, get_context, is_in_class, wrap_lambda
from . import repr  # noqa: A004 - plum's public module name

#: ``typing.overload`` (plum's): overloads with bodies, then a body-less ``@dispatch`` def
#: registers them all.
overload = _typing.overload
get_overloads = getattr(_typing, "get_overloads", None)
#: plum's names for annotations: a type hint, and ``typing.Callable``.
TypeHint = object
Callable = _typing.Callable
#: plum compiled with mypyc; frostjit.dispatch is plain Python (its hot path is generated code).
COMPILED = False

__all__ = [
    "dispatch",
    "Dispatcher",
    "Function",
    "is_dispatched",
    "Method",
    "MethodList",
    "Signature",
    "Missing",
    "NotFoundLookupError",
    "AmbiguousLookupError",
    "MethodRedefinitionWarning",
    "clear_all_cache",
    "parametric",
    "type_parameter",
    "type_unparametrized",
    "type_nonparametric",
    "CovariantMeta",
    "Kind",
    "kind",
    "PromisedType",
    "ModuleType",
    "resolve_type_hint",
    "type_mapping",
    "is_faithful",
    "convert",
    "add_conversion_method",
    "conversion_method",
    "add_promotion_rule",
    "promote",
    "overload",
    "get_overloads",
    "activate_union_aliases",
    "deactivate_union_aliases",
    "set_union_alias",
    "activate_autoreload",
    "deactivate_autoreload",
    "get_class",
    "get_context",
    "is_in_class",
    "wrap_lambda",
    "argsort",
    "Comparable",
    "extract_return_type",
    "inspect_signature",
    "append_default_args",
    "TypeHint",
    "Callable",
    "COMPILED",
    "DispatchCache",
    "observe_calls",
    "on_register",
    "jit",
]


# Public classes show their public home in reprs and tracebacks.
for _cls in (DispatchCache, Dispatcher, AmbiguousLookupError, MethodRedefinitionWarning, NotFoundLookupError,
             Function, MethodList, Method, Missing, Signature, PromisedType, ModuleType, CovariantMeta):
    _cls.__module__ = __name__


class _DispatchPackage(_pytypes.ModuleType, Dispatcher):
    """The class of this package's module object: the module is the global dispatcher.

    ``dispatch(...)``, ``dispatch.multi``, ``dispatch.abstract``, ``dispatch.functions`` work
    on the module itself, so there is one object whichever way it is imported.
    """

    def __repr__(self) -> str:
        return f"<frostjit.dispatch: the global Dispatcher, {len(self._scopes)} function(s)>"


_module = _sys.modules[__name__]
_module.__class__ = _DispatchPackage
Dispatcher.__init__(_module)
#: The global dispatcher: this module itself.
dispatch = _module
