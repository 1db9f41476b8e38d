"""Optimizers (Dr.Jit 1.5's ``drjit.opt``): :class:`SGD`, :class:`RMSProp`, :class:`Adam`,
:class:`AdamW`, :class:`Muon` (2-D parameters), and :class:`GradScaler` for mixed-precision training.

>>> opt = fj.opt.Adam(lr=1e-2)
>>> opt["x"] = x
>>> fj.backward(loss(opt["x"])); opt.step()

Files: ``base.py`` (the dictionary interface, learning rates, the step loop, saving and
restoring), ``optimizers.py`` (the update rules), ``muon.py`` (Muon), ``scaler.py`` (``GradScaler``).
"""
from .base import Optimizer, LearningRate
from .optimizers import SGD, RMSProp, Adam, AdamW
from .muon import Muon
from .scaler import GradScaler

__all__ = ["Optimizer", "LearningRate", "SGD", "RMSProp", "Adam", "AdamW", "Muon", "GradScaler"]
