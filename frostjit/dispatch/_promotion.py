"""Conversion and promotion (plum's ``convert``, ``add_conversion_method``, ``promote``, ...).

* ``convert(obj, T)`` runs the conversion method registered for ``(type(obj), T)``: the most
  specific one whose source type ``obj`` is an instance of and whose target ``T`` is a sub-hint
  of (``convert(Rational(1, 2), float)`` uses a ``Rational -> Number`` method). With none,
  ``obj`` is returned when it already is a ``T``, else ``TypeError("Cannot convert ...")``.
  It is a dispatched function underneath (``_convert``), so its decisions are cached.
* Results of methods with a return annotation are converted the same way (``_returns``); the
  plan for a result type is found once and remembered.
* ``promote(*objs)`` finds a common type with the promotion rules (``add_promotion_rule``,
  symmetric; a type promotes with its subclasses to itself) and converts every object to it.
  The plan for a tuple of argument types is found once and remembered.

Adding a conversion method or a promotion rule changes the answers of ``convert``, of
``promote`` and of every function whose return annotation the new target covers: they forget
their decisions and tell their subscribers (frozen recordings, ``DispatchCache``, jit
wrappers), as a registration does.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from . import _hints as H
from . import _returns
from ._function import FunctionState, all_functions
from ._observers import ACTIVE, notify_call
from ._resolution import Candidate, best
from ._signature import Signature
from ._types import resolve_type_hint
from .repr import repr_short

__all__ = ["convert", "add_conversion_method", "conversion_method", "add_promotion_rule", "promote"]

_lock = threading.RLock()


def _cannot_convert(obj: Any, type_to: Any) -> TypeError:
    return TypeError(f"Cannot convert `{obj}` to `{repr_short(type_to)}`.")


# -- convert ----------------------------------------------------------------------------------
def _convert_default(obj: Any, type_to: Any) -> Any:
    """No conversion method applies: ``obj`` itself when it already is a ``type_to``."""
    if H.normalize(type_to).match(obj):
        return obj
    raise _cannot_convert(obj, type_to)


_convert_state = FunctionState("_convert", "_convert", __name__, head=_convert_default)
_convert_fn = _convert_state.fn
#: plum's private name: the dispatched function behind :func:`convert`.
_convert = _convert_fn
_convert_state.register(_convert_default, Signature(Any, Any))


def _is_identity(impl: Callable) -> bool:
    """Whether a conversion method returns its argument unchanged (the fallback, plum's
    tuple->tuple and list->list defaults). A mark on the function, not a set of ``id()``s: a
    freed method's address can be reused by a new one."""
    return impl is _convert_default or getattr(impl, "_dispatch_identity", False)


def convert(obj: Any, type_to: Any) -> Any:
    """Convert ``obj`` to the type (or type hint) ``type_to``.

    Examples
    --------
    >>> convert([1, 2], tuple)
    (1, 2)
    >>> convert(1, object)
    1
    """
    return _convert_fn(obj, resolve_type_hint(type_to))


def add_conversion_method(type_from: Any, type_to: Any, f: Callable[[Any], Any]) -> None:
    """Convert instances of ``type_from`` to ``type_to`` with ``f(obj)``.

    Functions whose return annotation is a sub-hint of ``type_to``, ``convert`` and ``promote``
    re-resolve (their JIT-cache subscribers are told, as on a registration).
    """
    def perform_conversion(obj: Any, _: Any) -> Any:
        return f(obj)

    perform_conversion._dispatch_convert = f  # a plan calls ``f`` directly
    _register_conversion(perform_conversion, type_from, type_to)


def _register_conversion(impl: Callable, type_from: Any, type_to: Any) -> None:
    with _lock:
        _convert_state.register(impl, Signature(type_from, H.SubhintHint(type_to)))
        _forget_plans()
    target = H.SubhintHint(type_to)
    for state in all_functions():
        if state is _convert_state or state is _promote_state or state is _rule_state:
            continue
        if any(m.return_hint is not None and target.match(m.return_type) for m in state.table.active):
            state.changed()
    _promote_state.changed()


def conversion_method(type_from: Any, type_to: Any) -> Callable[[Callable], Callable]:
    """Decorator form of :func:`add_conversion_method`; returns the function unchanged."""
    def decorate(f: Callable) -> Callable:
        add_conversion_method(type_from, type_to, f)
        return f

    return decorate


def _conversion_candidates(T: type, type_to: Any) -> list[Candidate] | None:
    """The conversion methods that apply to a ``T`` converted to ``type_to`` (type level), or
    ``None`` when that depends on the value."""
    with _convert_state.lock:
        _convert_state.resolve_pending()
        cands = _convert_state.table.candidates(2)
    matched = []
    for c in cands:
        k = c.hints[0].classify(T)
        if k == H.NEVER:
            continue
        if not c.hints[1].match(type_to):
            continue
        if k == H.DEPENDS:
            return None
        matched.append(c)
    return matched


def plan_conversion(T: type, hint: H.Hint, type_to: Any) -> Any:
    """How results of type ``T`` become ``type_to``: ``_returns.IDENTITY`` (unchanged, when no
    conversion method applies), a callable, or ``None`` (depends on the value)."""
    matched = _conversion_candidates(T, type_to)
    if matched is None:
        return None
    w = best(matched)
    if not isinstance(w, Candidate):
        return None  # ambiguous: let ``convert`` raise at the call
    impl = w.method.implementation
    if _is_identity(impl):
        return _returns.IDENTITY
    direct = getattr(impl, "_dispatch_convert", None)
    return direct if direct is not None else (lambda r: impl(r, type_to))


def may_convert(type_to: Any) -> bool:
    """Whether a conversion method other than the identities could apply to ``type_to``."""
    with _convert_state.lock:
        _convert_state.resolve_pending()
        methods = list(_convert_state.table.active)
    for m in methods:
        if _is_identity(m.implementation):
            continue
        if m.signature.hints[1].match(type_to):
            return True
    return False


_returns.planner.plan = plan_conversion
_returns.planner.may_convert = may_convert
_returns.planner.convert = convert


# -- promotion rules ----------------------------------------------------------------------------
def _rule_default(t1: Any, t2: Any) -> Any:
    """No rule: a type promotes with its subclasses to itself (promised and module types
    stand for what they resolve to)."""
    t1, t2 = resolve_type_hint(t1), resolve_type_hint(t2)
    h1, h2 = H.normalize(t1), H.normalize(t2)
    if H.le(h1, h2):
        return t2
    if H.le(h2, h1):
        return t1
    raise TypeError(f"No promotion rule for `{repr_short(t1)}` and `{repr_short(t2)}`.")


_rule_state = FunctionState("_promotion_rule", "_promotion_rule", __name__, head=_rule_default)
_rule_fn = _rule_state.fn
#: plum's private name: the dispatched function giving the type two types promote to.
_promotion_rule = _rule_fn
_rule_state.register(_rule_default, Signature(Any, Any))


def add_promotion_rule(type1: Any, type2: Any, type_to: Any) -> None:
    """Objects of ``type1`` and ``type2`` (in either order) promote to ``type_to``."""
    def rule(t1: Any, t2: Any) -> Any:
        return type_to

    with _lock:
        _rule_state.register(rule, Signature(H.SubhintHint(type1), H.SubhintHint(type2)))
        if type1 is not type2:
            _rule_state.register(rule, Signature(H.SubhintHint(type2), H.SubhintHint(type1)))
        _forget_plans()
    _promote_state.changed()


# -- promote ------------------------------------------------------------------------------------
#: Argument types -> how to promote them (found once).
_promoters: dict[tuple, Callable[[tuple], tuple]] = {}


def _forget_plans() -> None:
    _promoters.clear()


def _unchanged(x: Any) -> Any:
    return x


def _promoter(types: tuple) -> Callable[[tuple], tuple]:
    """How to promote objects of these types: each converted to the common type (a plan per
    position, found once; ``_unchanged`` where the object already is one and no conversion
    method applies)."""
    common = types[0]
    for t in types[1:]:
        common = _rule_fn(common, t)
    hint = H.normalize(common)
    plans = []
    remember = True
    for t in types:
        p = plan_conversion(t, hint, common)
        if p is None:
            remember = False
            p = (lambda c: lambda x: convert(x, c))(common)
        elif p is _returns.IDENTITY:
            k = hint.classify(t)
            # Already of the common type: unchanged. Otherwise ``_convert_default`` checks
            # each object (and raises "Cannot convert" when it is not one).
            p = _unchanged if k == H.ALWAYS else (lambda c: lambda x: _convert_default(x, c))(common)
        plans.append(p)
    if len(plans) == 2:
        p0, p1 = plans
        if p0 is _unchanged and p1 is _unchanged:
            promoter = _unchanged
        elif p0 is _unchanged:
            def promoter(objs: tuple) -> tuple:
                return objs[0], p1(objs[1])
        elif p1 is _unchanged:
            def promoter(objs: tuple) -> tuple:
                return p0(objs[0]), objs[1]
        else:
            def promoter(objs: tuple) -> tuple:
                return p0(objs[0]), p1(objs[1])
    else:
        def promoter(objs: tuple) -> tuple:
            return tuple([p(x) for p, x in zip(plans, objs)])
    if remember:
        _promoters[types] = promoter
    return promoter


def promote(*objs: Any) -> tuple:
    """Promote objects to a common type (plum's ``promote``).

    The common type comes from the promotion rules (:func:`add_promotion_rule`; a type
    promotes with its subclasses to itself); every object is converted to it with
    :func:`convert`. How to promote a tuple of argument types is found once and remembered.

    JIT caches see calls of ``promote`` as calls of a dispatched function (``promote.rules``,
    whose ``version`` moves when a promotion rule or a conversion method is added).

    Examples
    --------
    >>> add_promotion_rule(int, float, float)                     # doctest: +SKIP
    >>> add_conversion_method(int, float, float)                  # doctest: +SKIP
    >>> promote(1, 2.0)                                           # doctest: +SKIP
    (1.0, 2.0)
    """
    if ACTIVE:
        notify_call(_promote_fn)
    n = len(objs)
    if n < 2:
        return objs
    types = (type(objs[0]), type(objs[1])) if n == 2 else tuple(map(type, objs))
    try:
        p = _promoters[types]
    except KeyError:
        with _lock:
            p = _promoter(types)
    return p(objs)


def _rules_changed(*objs: Any) -> tuple:
    """Stands for ``promote`` to JIT caches (no methods: never called)."""
    return objs


_promote_state = FunctionState("promote", "promote", "frostjit.dispatch", head=_rules_changed)
_promote_fn = _promote_state.fn
promote.rules = _promote_fn


def _install_defaults() -> None:
    """plum's default conversions: to tuples and lists, between them, bytes to str."""
    def to_tuple(obj: Any, _: Any) -> tuple:
        return (obj,)

    def to_list(obj: Any, _: Any) -> list:
        return [obj]

    def as_tuple(obj: Any, _: Any) -> tuple:
        return tuple(obj)

    def as_list(obj: Any, _: Any) -> list:
        return list(obj)

    def decode(obj: bytes, _: Any) -> str:
        return obj.decode("utf-8")

    def identity_tuple(obj: Any, _: Any) -> Any:
        return obj

    def identity_list(obj: Any, _: Any) -> Any:
        return obj

    identity_tuple._dispatch_identity = identity_list._dispatch_identity = True
    for impl, src, dst in [(to_tuple, object, tuple), (identity_tuple, tuple, tuple), (as_tuple, list, tuple),
                           (to_list, object, list), (identity_list, list, list), (as_list, tuple, list),
                           (decode, bytes, str)]:
        _convert_state.register(impl, Signature(src, H.SubhintHint(dst)))


_install_defaults()
