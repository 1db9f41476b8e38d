"""Gradient scaling for mixed-precision training (Dr.Jit's ``drjit.opt.GradScaler``).

>>> scaler = fj.opt.GradScaler()
>>> for i in range(1000):
...     loss = f(opt["x"])
...     fj.backward(scaler.scale(loss))     # gradients scaled up: no underflow
...     scaler.step(opt)                     # unscaled step; skipped if a gradient overflowed
"""
from __future__ import annotations

import logging

from ..array import registry
from ..array.flat import ArrayBase
from ..functions import math as fm
from ..functions.evaluation import eval as _eval
from ..functions.memory import scatter
from ..trace.dtypes import Bool, UInt32
from ..tree import leaves
from ..ad import api as ad
from ..errors import OptimizerArgumentError

log = logging.getLogger("frostjit")


class GradScaler:
    """Scale the loss up before the backward pass and the gradients back down in the step.

    A gradient with an infinite or NaN entry (an overflow) skips the step and multiplies the
    scale by ``backoff_factor``; after ``growth_interval`` steps without one, each step
    multiplies it by ``growth_factor``.  The scale and the step counter start as Python
    numbers and become one-element arrays at the first step (as in Dr.Jit); nothing reads
    them back to Python, so the checks run in the kernels.

    Parameters
    ----------
    init_scale : float
        The first scale factor.
    growth_factor : float
        Multiplies the scale once ``growth_interval`` steps passed without overflow (>= 1).
    backoff_factor : float
        Multiplies the scale after an overflow (< 1).
    growth_interval : int
        Steps without overflow before the scale grows.
    debug : bool
        Log (``logging``, logger ``"frostjit"``, level INFO) each change of the scale; this
        reads values back at every step.
    """

    def __init__(self, init_scale: float = 65536.0, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, debug: bool = False):
        if backoff_factor >= 1:
            raise OptimizerArgumentError(f"GradScaler(): 'backoff_factor' must be < 1, got {backoff_factor}")
        if growth_factor < 1:
            raise OptimizerArgumentError(f"GradScaler(): 'growth_factor' must be >= 1, got {growth_factor}")
        self.scale_factor = init_scale
        self.it = 0
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self.debug = debug

    def scale(self, arg):
        """``arg`` multiplied by the current scale factor."""
        return arg * self.scale_factor

    def unscale(self, arg):
        """``arg`` divided by the current scale factor (:meth:`step` does this itself)."""
        return arg / self.scale_factor

    def step(self, opt, **kwargs) -> None:
        """Take a step of ``opt`` with the scale removed from the gradients, unless one of them
        has an infinite or NaN entry; then update the scale.  ``kwargs`` go to ``opt.step``."""
        good = None
        for value, *_ in opt.state.values():
            for c in leaves(value):
                if good is None:
                    good = registry.flat_type(c._backend, Bool, False)(True)
                # good[0] = False where a gradient entry is infinite or NaN (no reduction needed)
                scatter(good, False, _zero_index(c), active=~fm.isfinite(ad.grad(c)))
        if good is None:
            return                                  # no parameters
        scale, it = self.scale_factor, self.it
        grow = it >= self.growth_interval
        next_scale = fm.select(good, fm.select(grow, scale * self.growth_factor, scale),
                               scale * self.backoff_factor)
        next_it = fm.select(good, it + 1, 0)
        grad_scale = fm.rcp(scale) if isinstance(scale, ArrayBase) else 1.0 / scale
        _eval(good, grad_scale, next_scale, next_it)
        if self.debug:
            if not good.numpy()[0]:
                log.info("GradScaler: detected overflow/NaN, reducing the scale to %s", next_scale)
            elif (grow.numpy()[0] if isinstance(grow, ArrayBase) else grow):
                log.info("GradScaler: increasing the scale to %s", next_scale)
        opt.step(grad_scale=grad_scale, active=good, **kwargs)
        self.scale_factor, self.it = next_scale, next_it

    def __repr__(self) -> str:
        return (f"GradScaler(scale_factor={self.scale_factor}, growth_factor={self.growth_factor}, "
                f"backoff_factor={self.backoff_factor}, growth_interval={self.growth_interval})")

    # A PyTree (frostjit.tree's traversal protocol), so that a frozen training step carries the
    # scale and the counter: the hyper-parameters are Python values, the scale and the counter
    # arrays after the first step.
    __fj_traverse_attrs__ = ("growth_factor", "backoff_factor", "growth_interval", "scale_factor", "it")


def _zero_index(like):
    """Index 0 (a ``UInt32`` literal of ``like``'s backend)."""
    return registry.flat_type(like._backend, UInt32, False)(0)
