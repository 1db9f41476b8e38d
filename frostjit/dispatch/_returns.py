"""Return annotations: results are converted to the annotation, as plum does (``convert``).

A result that already satisfies the annotation is returned as is when no conversion method
would apply to its type (the common case, decided once per result type and remembered, so the
steady-state check is ``isinstance`` or one set lookup on the call path). Otherwise the
conversion that ``convert(result, annotation)`` would choose is looked up once per result
type and applied; with none, a ``TypeError`` ("Cannot convert ...").

Conversion itself lives in ``_promotion``, which registers its planner here (:data:`planner`)
when it is imported: this module does not import it.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from . import _hints as H
from .repr import repr_short


class _Planner:
    """What ``_promotion`` provides: how to turn results of a type into the annotation."""

    #: ``plan(T, hint, annotation) -> IDENTITY | callable | None``; ``None`` when it depends on
    #: the value (the conversion is then resolved per call with ``convert``).
    plan: Callable[[type, H.Hint, Any], Any] | None = None
    #: ``may_convert(hint) -> bool``: whether some conversion method (besides identities)
    #: could apply to results for this annotation.
    may_convert: Callable[[H.Hint], bool] | None = None
    #: ``convert(obj, annotation)``.
    convert: Callable[[Any, Any], Any] | None = None


planner = _Planner()
#: A plan meaning "return the result unchanged".
IDENTITY = object()


class ReturnTypes:
    """A method's return annotation and what is known about results of each type.

    ``fast``: a class or tuple of classes when the annotation is exactly an ``isinstance`` test
    against plain classes (``int``, ``float | None``) and no conversion method could apply to
    its results, else ``()``; the call path tests ``isinstance(r, fast)`` first (a specialized
    CPython instruction). ``types``: a plain ``set`` of result types returned unchanged
    (membership in a ``set`` subclass would cost ~13 ns more). ``converters``: result type ->
    the conversion to apply.
    """

    __slots__ = ("types", "hint", "annotation", "name", "fast", "converters")

    def __init__(self, hint: H.Hint, annotation: Any, name: str):
        self.types: set[type] = set()
        self.hint = hint
        self.annotation = annotation
        self.name = name
        may_convert = planner.may_convert
        self.fast = () if may_convert is not None and may_convert(hint) else _isinstance_classes(hint)
        self.converters: dict[type, Callable[[Any], Any]] = {}


def _isinstance_classes(hint: H.Hint) -> type | tuple[type, ...]:
    """The classes ``c`` with ``hint.match(r) == isinstance(r, c)``, or ``()``."""
    members = hint.members if type(hint) is H.UnionHint else (hint,)
    out = []
    for m in members:
        if type(m) is not H.ClassHint or m._kind != "plain" or m.uses_abc:
            return ()
        out.append(m.cls)
    return out[0] if len(out) == 1 else tuple(out)


def check_return(r: Any, ok: ReturnTypes) -> Any:
    """Slow part of the return check: convert ``r`` to the annotation (remembering the plan
    for its type) or raise ``TypeError``."""
    T = type(r)
    conv = ok.converters.get(T)
    if conv is not None:
        return conv(r)
    plan = planner.plan(T, ok.hint, ok.annotation) if planner.plan is not None else IDENTITY
    if plan is IDENTITY:
        c = ok.hint.classify(T)
        if c == H.ALWAYS:
            ok.types.add(T)
            return r
        if c == H.DEPENDS and ok.hint.match(r):
            return r
        raise TypeError(
            f"Cannot convert `{r}` to `{repr_short(ok.annotation)}`. (`{ok.name}` returned a value "
            f"of type {H.type_name(T)}, which does not match its return annotation, and no "
            f"conversion method applies: see `add_conversion_method`.)"
        )
    if plan is None:  # depends on the value: convert this one
        return planner.convert(r, ok.annotation)
    ok.converters[T] = plan
    return plan(r)


def make_return_checker(impl: Callable, hint: H.Hint, annotation: Any, name: str) -> Callable:
    """Wrap ``impl`` so its result is converted to the return annotation.

    The generated call path of functions with return annotations inlines the fast part of
    this (it reads ``_return_ok``) instead of calling the wrapper.
    """
    ok = ReturnTypes(hint, annotation, name)
    seen, fast = ok.types, ok.fast

    def checked(*args: Any, **kw: Any) -> Any:
        r = impl(*args, **kw)
        if isinstance(r, fast) or type(r) in seen:
            return r
        return check_return(r, ok)

    try:
        functools.update_wrapper(checked, impl)  # name, docs; sets ``__wrapped__``
    except (AttributeError, TypeError):  # pragma: no cover - exotic callables
        pass
    checked.__wrapped__ = impl
    checked._return_ok = ok
    return checked


def no_return_check(entry: Callable) -> tuple:
    """A return-checking cache entry for a callable that checks nothing (or checks itself)."""
    return (entry, object, None, None)
