"""Which array class stores which element type, per backend and AD status.

The array classes are created once per backend (``frostjit.llvm``) and per AD
status (``frostjit.llvm.ad``); operations find the class of their result here.
Every class is also registered by its :class:`~.meta.ArrayMeta` (:func:`register_type`), so
the type traits find "this type with another element type / shape / kind / AD status"
(:func:`find_type`) whatever family the class belongs to.
"""
from __future__ import annotations

from .meta import ArrayMeta, meta_of

_flat: dict = {}      # (backend, vt, ad) -> 1-D array class
_vector: dict = {}    # (backend, vt, ad, n) -> static vector class
_by_meta: dict = {}   # ArrayMeta -> class


def register_flat(backend, vt, ad: bool, cls) -> None:
    _flat[(backend, vt, ad)] = cls


def register_vector(backend, vt, ad: bool, n: int, cls) -> None:
    _vector[(backend, vt, ad, n)] = cls


def register_type(cls) -> None:
    """Make ``cls`` findable by its ``__meta__`` (every array class of every family)."""
    _by_meta[meta_of(cls)] = cls


def find_type(meta: ArrayMeta):
    """The class described by ``meta``, or ``None``.

    An AD integer or mask type is the plain one (frostjit's ``llvm.ad.UInt32`` is
    ``llvm.UInt32``), so a differentiable description of one finds the plain class.
    """
    cls = _by_meta.get(meta)
    if cls is None and meta.is_diff and not meta.vt.is_float:
        cls = _by_meta.get(meta.with_(is_diff=False))
    return cls


def flat_type(backend, vt, ad: bool = False):
    """The 1-D array class for element type ``vt`` (AD variant when ``ad`` and ``vt`` is a float)."""
    cls = _flat.get((backend, vt, ad and vt.is_float))
    if cls is None:
        raise TypeError(f"frostjit: no array type for {vt.name} on backend {backend}")
    return cls


def vector_type(backend, vt, n: int, ad: bool = False):
    """The static vector class with ``n`` components of type ``vt``, or ``None``."""
    return _vector.get((backend, vt, ad and vt.is_float, n))


_arrays: dict = {}    # (family, component class, n) -> static/dynamic array class (families.py)


def register_array(family: str, elem, n, cls) -> None:
    """Record ``cls`` as the ``family`` array with ``n`` components of class ``elem``
    (``n`` None: a dynamic array)."""
    _arrays[(family, elem, n)] = cls


def array_type(elem, n, family: str = "array"):
    """The array class of ``family`` (``"array"``, ``"matrix"``, ``"complex"``,
    ``"quaternion"``, ``"dynamic"``) with ``n`` components of class ``elem``, or ``None``."""
    return _arrays.get((family, elem, n))
