"""IPython autoreload support (plum's ``activate_autoreload``): when autoreload replaces a
class by its reloaded version, dispatch maps the old class to the new one (``type_mapping``)
and clears every cache, so methods annotated with the class keep working.

Set ``PLUM_AUTORELOAD=1`` (plum's variable) or ``FROSTJIT_DISPATCH_AUTORELOAD=1`` before
importing ``frostjit.dispatch`` to activate it at import.
"""

from __future__ import annotations

import os
from typing import Any

from ._dispatcher import clear_all_cache
from ._hints import type_mapping

__all__ = ["activate_autoreload", "deactivate_autoreload"]

#: IPython's own ``update_instances``, saved at the first activation (plum's name); ``None``
#: until then.
_update_instances_original: Any = None


def _update_instances(old: type, new: type) -> None:
    """IPython's ``update_instances``, then map ``old`` to ``new`` and clear every cache."""
    if _update_instances_original is not None:
        _update_instances_original(old, new)
    type_mapping[old] = new
    for k, v in list(type_mapping.items()):  # resolve chains A1 -> A2 -> A3
        seen = {k}
        while v in type_mapping and v not in seen:
            seen.add(v)
            v = type_mapping[v]
        type_mapping[k] = v
    clear_all_cache()


def activate_autoreload() -> None:
    """Patch IPython autoreload's ``update_instances`` (IPython must be installed)."""
    global _update_instances_original
    from IPython.extensions import autoreload  # noqa: PLC0415 - optional dependency, on demand

    if autoreload.update_instances is not _update_instances:
        _update_instances_original = autoreload.update_instances
        autoreload.update_instances = _update_instances


def deactivate_autoreload() -> None:
    """Undo :func:`activate_autoreload`.

    Raises
    ------
    RuntimeError
        :func:`activate_autoreload` was never called (as plum).
    """
    if _update_instances_original is None:
        raise RuntimeError("Plum autoreload module was never activated: call `activate_autoreload()` first.")
    from IPython.extensions import autoreload  # noqa: PLC0415 - optional dependency

    autoreload.update_instances = _update_instances_original


if os.environ.get("PLUM_AUTORELOAD") == "1" or os.environ.get("FROSTJIT_DISPATCH_AUTORELOAD") == "1":
    activate_autoreload()
