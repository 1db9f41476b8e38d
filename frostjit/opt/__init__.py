"""Optimizers (Dr.Jit 1.5's ``drjit.opt``): :class:`SGD`, :class:`RMSProp`, :class:`Adam`,
:class:`AdamW`, and :class:`GradScaler` for mixed-precision training.

>>> opt = fj.opt.Adam(lr=1e-2)
>>> opt["x"] = x
>>> fj.backward(loss(opt["x"])); opt.step()

Files: ``base.py`` (the dictionary interface, learning rates, the step loop, saving and
restoring), ``optimizers.py`` (the update rules), ``scaler.py`` (``GradScaler``).
"""
from .base import Optimizer, LearningRate
from .optimizers import SGD, RMSProp, Adam, AdamW
from .scaler import GradScaler

__all__ = ["Optimizer", "LearningRate", "SGD", "RMSProp", "Adam", "AdamW", "GradScaler"]
