"""Which tensor class holds which 1-D array class (``Float`` -> ``TensorXf``).

Filled by :func:`frostjit.tensor.types.make_types` when a backend module creates its types;
read by every operation that builds a tensor from the flat array it computed.
"""
from __future__ import annotations

_by_array: dict = {}      # 1-D array class -> tensor class


def register(array_type: type, tensor_type: type) -> None:
    _by_array[array_type] = tensor_type


def lookup(array_type: type):
    """The tensor class of ``array_type``, or None."""
    return _by_array.get(array_type)


def tensor_of(array_type: type) -> type:
    """The tensor class whose flat array has class ``array_type``; ``TypeError`` if none."""
    cls = _by_array.get(array_type)
    if cls is None:
        raise TypeError(f"frostjit: no tensor type holds {array_type.__name__} arrays")
    return cls
