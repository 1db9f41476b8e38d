"""The ``__doc__`` of a dispatched function, in plum's layout.

The docstring of the function's first definition (or of its ``@dispatch.abstract`` stub) comes
first; then, for every other implementation, a rule, its signature line and its docstring::

    Multiply two numbers.

    --------------------

    f(x: int, y: int)

    Multiply two ints.

The rule is as wide as the longest line (at least 11 characters, as plum's). With
``PLUM_SIMPLE_DOC=1`` in the environment the docstring is the first definition's alone.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Sequence

from ._signature import Registration

_MIN_RULE = 11


def function_doc(head: Any, registrations: Sequence[Registration]) -> str | None:
    """The docstring of a function whose first definition is ``head`` (a callable or ``None``)."""
    raw = getattr(head, "__doc__", None) if head is not None else None
    if os.environ.get("PLUM_SIMPLE_DOC") == "1":
        return raw
    head_doc = inspect.cleandoc(raw) if raw else ""
    entries = []
    seen = set()
    for r in registrations:
        impl = r.implementation
        if impl is head or id(impl) in seen:
            continue
        seen.add(id(impl))
        entries.append(r.doc_entry())
    if not entries:
        return head_doc or None
    width = max([_MIN_RULE] + [len(line) for text in [head_doc, *entries] for line in text.splitlines()])
    rule = "-" * width
    parts = [head_doc] if head_doc else []
    for e in entries:
        parts += [rule, e]
    return "\n\n".join(parts)
