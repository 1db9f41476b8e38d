"""Union aliases (plum's ``activate_union_aliases``, ``set_union_alias``): print a large
``Union`` by a name.

Cosmetic only: an alias changes how ``typing.Union`` objects print (so the docs and error
messages of dispatched functions show ``Union[Scalar]`` rather than twenty NumPy types), never
how anything dispatches; no decision or JIT-cache recording depends on it. Activation patches
``typing.Union``'s ``__repr__``/``__str__`` (Python <= 3.13, as plum).
"""

from __future__ import annotations

import types
import typing
from typing import Any

from ._function import refresh_all_docs

__all__ = ["activate_union_aliases", "deactivate_union_aliases", "set_union_alias"]

_UnionAlias = getattr(typing, "_UnionGenericAlias", None)
_PipeUnion = getattr(types, "UnionType", None)
#: Frozen set of a union's members -> its alias (plum's private name for the registry).
_ALIASED_UNIONS: dict[frozenset, str] = {}
_aliases = _ALIASED_UNIONS
_original: dict[str, Any] = {}


def _union_repr(self: Any) -> str:
    members = list(typing.get_args(self))
    names = []
    for group, alias in sorted(_aliases.items(), key=lambda kv: -len(kv[0])):
        if group <= set(members):
            names.append(alias)
            members = [m for m in members if m not in group]
    if not names:
        return _original["__repr__"](self)
    return "typing.Union[" + ", ".join(names + [typing._type_repr(m) for m in members]) + "]"


def activate_union_aliases() -> None:
    """Print aliased unions by their aliases (patches ``typing.Union``'s ``__repr__``/``__str__``)."""
    if _UnionAlias is None or _original:
        return
    _original["__repr__"] = _UnionAlias.__repr__
    _original["__str__"] = _UnionAlias.__dict__.get("__str__")
    _UnionAlias.__repr__ = _union_repr
    _UnionAlias.__str__ = _union_repr
    refresh_all_docs()


def deactivate_union_aliases() -> None:
    """Undo :func:`activate_union_aliases`."""
    if _UnionAlias is None or not _original:
        return
    _UnionAlias.__repr__ = _original.pop("__repr__")
    s = _original.pop("__str__")
    if s is None:
        del _UnionAlias.__str__
    else:
        _UnionAlias.__str__ = s
    refresh_all_docs()


def set_union_alias(union: Any, alias: str) -> Any:
    """Print ``union`` (and unions containing all its members) with the name ``alias``.

    Returns ``union`` unchanged. ``Union[int, str]`` and ``int | str`` are the same union;
    a single type counts as a union of one.

    Raises
    ------
    RuntimeError
        ``union`` already has a different alias.
    """
    origin = typing.get_origin(union)
    if origin is typing.Union or (_PipeUnion is not None and origin is _PipeUnion):
        group = frozenset(typing.get_args(union))  # ``Union[int, str]`` and ``int | str`` alike
    else:
        group = frozenset([union])  # a single type is a union of one (as plum)
    old = _aliases.get(group)
    if old is not None and old != alias:
        raise RuntimeError(f"`{union!r}` already has alias `{old}`.")
    _aliases[group] = alias
    refresh_all_docs()
    return union
