"""The ``__doc__`` of a dispatched function, in plum's layout.

The docstring of the function's first definition (or of its ``@dispatch.abstract`` stub) comes
first; then, for every other implementation, a rule, its signature line and its docstring::

    Multiply two numbers.

    --------------------

    f(x: int, y: int)

    Multiply two ints.

The rule is as wide as the longest line (at least 11 characters, as plum's). With
``PLUM_SIMPLE_DOC=1`` in the environment the docstring is the first definition's alone.

A registration adds one entry (:meth:`FunctionDoc.add`: no pass over the earlier entries, so
registering ``n`` methods stays linear); resolving annotations, which may reorder entries
(a redefinition takes the place of the method it replaced), rebuilds the whole text.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Iterable

from ._signature import Registration

_MIN_RULE = 11


class FunctionDoc:
    """The docstring of one dispatched function, built entry by entry."""

    def __init__(self, head: Any = None):
        self.head = head
        self._entries: list[str] = []
        self._documented: dict[int, Any] = {}  # id -> implementation (held: ids stay unique)
        self._head_doc = ""
        self._width = _MIN_RULE
        self.set_head(head)

    def set_head(self, head: Any) -> None:
        self.head = head
        raw = getattr(head, "__doc__", None) if head is not None else None
        self._head_doc = inspect.cleandoc(raw) if raw else ""
        self._width = max([_MIN_RULE] + [len(line) for line in self._head_doc.splitlines()]
                          + [self._entry_width(e) for e in self._entries])

    @staticmethod
    def _entry_width(entry: str) -> int:
        return max((len(line) for line in entry.splitlines()), default=0)

    def add(self, registration: Registration) -> None:
        """Document one more implementation (a registration of one already documented, or of
        the head, adds nothing)."""
        impl = registration.implementation
        if impl is self.head or id(impl) in self._documented:
            return
        self._documented[id(impl)] = impl
        entry = registration.doc_entry()
        self._entries.append(entry)
        self._width = max(self._width, self._entry_width(entry))

    def rebuild(self, registrations: Iterable[Registration]) -> None:
        """Start again from these registrations, in this order."""
        self._entries, self._documented = [], {}
        self.set_head(self.head)
        for r in registrations:
            self.add(r)

    def text(self) -> str | None:
        if os.environ.get("PLUM_SIMPLE_DOC") == "1":
            return getattr(self.head, "__doc__", None) if self.head is not None else None
        if not self._entries:
            return self._head_doc or None
        rule = "-" * self._width
        parts = [self._head_doc] if self._head_doc else []
        for e in self._entries:
            parts += [rule, e]
        return "\n\n".join(parts)
