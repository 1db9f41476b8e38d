"""Walking PyTrees: arrays inside lists, tuples, dicts, dataclasses and ``DRJIT_STRUCT`` classes."""
from __future__ import annotations

import dataclasses

from .array.flat import ArrayBase
from .array.vector import VectorBase


def arrays_in(obj, out: list | None = None, _seen: set | None = None) -> list:
    """Return every 1-D JIT array reachable from ``obj`` (static vectors give their components)."""
    if out is None:
        out = []
    if _seen is None:
        _seen = set()
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, ArrayBase):
            out.append(o)
            continue
        if isinstance(o, (int, float, str, bytes, bool, type(None))):
            continue
        if id(o) in _seen:
            continue
        _seen.add(id(o))
        if isinstance(o, VectorBase):
            stack.extend(reversed(o._c))
        elif isinstance(o, (list, tuple)):
            stack.extend(reversed(o))
        elif isinstance(o, dict):
            stack.extend(reversed(list(o.values())))
        elif dataclasses.is_dataclass(o) and not isinstance(o, type):
            stack.extend(getattr(o, f.name) for f in reversed(dataclasses.fields(o)))
        elif hasattr(type(o), "DRJIT_STRUCT"):
            stack.extend(getattr(o, k) for k in reversed(list(type(o).DRJIT_STRUCT)))
    return out
