"""Optimizers (Dr.Jit's ``drjit.opt``): :class:`SGD` and :class:`Adam`.

>>> opt = fj.opt.Adam(lr=1e-2)
>>> opt["x"] = x
>>> fj.backward(loss(opt["x"])); opt.step()
"""
from .optimizers import Optimizer, SGD, Adam

__all__ = ["Optimizer", "SGD", "Adam"]
