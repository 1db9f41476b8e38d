"""Type traits of tensors: ``tensor_t`` (the tensor type matching an array type) and ``is_tensor_v``."""
from __future__ import annotations

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from . import registry
from .base import TensorBase


def tensor_t(arg):
    """The tensor type compatible with ``arg`` (an array, static vector or tensor, or its type):
    ``tensor_t(Float)`` and ``tensor_t(Array3f)`` are ``TensorXf``, ``tensor_t(UInt32)`` is
    ``TensorXu``; ``None`` for anything else (Dr.Jit)."""
    t = arg if isinstance(arg, type) else type(arg)
    if issubclass(t, TensorBase):
        return t
    if issubclass(t, VectorBase):
        t = t._elem
    if issubclass(t, ArrayBase):
        return registry.lookup(t)
    return None


def is_tensor_v(arg) -> bool:
    """Whether ``arg`` is a tensor or a tensor type."""
    t = arg if isinstance(arg, type) else type(arg)
    return issubclass(t, TensorBase)
