"""Labels of JIT variables (``x.label``, ``fj.set_label``), shown by ``fj.graphviz_ad``/``fj.whos_ad``.

A label belongs to the variable (the trace node), not to the Python handle: ``Float(x)`` of a
``Float`` (the same node) has ``x``'s label, evaluating ``x`` keeps it, ``x += 1`` (a new
variable) has none (Dr.Jit's behaviour).  Kept beside the nodes, weakly, so a label costs
nothing on the tracing path and goes away with its variable.
"""
from __future__ import annotations

import weakref

_labels: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def label_of(node) -> str | None:
    """The label of trace node ``node`` (``None``: none)."""
    return _labels.get(node)


def set_label_of(node, label: str) -> None:
    """Give trace node ``node`` the label ``label`` (a ``str``; raises ``TypeError`` otherwise)."""
    if not isinstance(label, str):
        raise TypeError(f"label: expected a str, got {type(label).__name__}")
    _labels[node] = label
