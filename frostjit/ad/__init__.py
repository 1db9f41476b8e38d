"""Automatic differentiation (Dr.Jit's API): reverse and forward mode over traced arrays.

Importing this package installs the hook through which the engine reports
operations on grad-enabled arrays (``state.ad_hook``).  Files:

* ``graph.py``: vertices, edges, gradient accumulation, scopes, traversal;
* ``rules.py``: the derivative of each operation;
* ``api.py``: the public functions (``enable_grad``, ``backward``, ...);
* ``custom.py``: custom operations (``CustomOp``, ``custom``);
* ``introspect.py``: labels, ``graphviz_ad``, ``whos_ad``;
* ``interop.py``: ``wrap`` (PyTorch and JAX, gradients both ways).
"""
from ..trace.state import state as _state
from .graph import ADFlag, ADMode
from .api import (
    enable_grad, disable_grad, set_grad_enabled, grad_enabled, grad, set_grad, accum_grad, clear_grad, detach,
    backward, backward_from, backward_to, forward, forward_from, forward_to, replace_grad, suspend_grad,
    resume_grad, isolate_grad, enqueue, traverse,
)
from .api import relative_grad
from .custom import CustomOp, custom
from .introspect import set_label, graphviz_ad, whos_ad
from .interop import wrap, wrap_ad
from .rules import Hook as _RulesHook


class _Hook(_RulesHook):
    """The installed hook: the derivative rules, and what the arrays' ``grad`` property asks."""

    grad = staticmethod(grad)
    set_grad = staticmethod(set_grad)


_state.ad_hook = _Hook()
