"""Python values in a frozen function's layout key: exact keys, weak identities.

A Python value among the inputs is part of the layout key, so two calls share a recording only
when their values are *interchangeable*.  ``==`` is not that test for numbers: ``-0.0 == 0.0``
although ``1 / -0.0`` and ``copysign`` tell them apart, ``nan != nan`` so a NaN would never find
its own recording, and ``True == 1 == 1.0`` mixes types that promote differently.  :func:`value_key`
gives each value a key that is equal exactly when the values are: numbers by type and bits,
hashable objects by type and ``==`` (their own definition of equality), everything else by
identity (:class:`Ident`).

:class:`Ident` holds its object by weak reference where the type allows it, so a recording
cache keyed by an object does not keep the object (and the arrays it holds) alive; when the
object dies, the key can never match again (``on_death`` lets the cache drop the entry).
"""
from __future__ import annotations

import array
import collections
import ctypes
import decimal
import types
import weakref

import numpy as np


class Ident:
    """Key token for an object compared by identity (equal only to a token of the same object).

    The object is held by weak reference when its type supports it (else strongly); a token
    whose object died equals no other token.
    """

    __slots__ = ("ref", "oid", "strong", "__weakref__")

    def __init__(self, obj):
        self.oid = id(obj)
        try:
            self.ref = weakref.ref(obj)
            self.strong = None
        except TypeError:       # not weak-referenceable (builtins such as set, bytearray)
            self.ref = None
            self.strong = obj

    @property
    def obj(self):
        """The object, or ``None`` once it died."""
        return self.strong if self.ref is None else self.ref()

    @property
    def alive(self) -> bool:
        return self.ref is None or self.ref() is not None

    def __eq__(self, other):
        if type(other) is not Ident or other.oid != self.oid:
            return False
        a = self.obj
        return a is not None and a is other.obj

    def __hash__(self):
        return self.oid

    def __repr__(self):
        o = self.obj
        if o is None:
            return f"<dead object at {self.oid:#x}>"
        return f"<{type(o).__name__} object at {self.oid:#x}>"


def value_key(o):
    """The layout-key token of a Python value ``o`` (see module docstring).

    >>> value_key(-0.0) == value_key(0.0), value_key(float("nan")) == value_key(float("nan"))
    (False, True)
    """
    t = type(o)
    if t is int or t is str or t is bool or o is None:
        return (t, o)
    if t is float:
        return (t, float.hex(o))
    if isinstance(o, (np.floating, np.complexfloating)):
        return (t, o.tobytes())                     # bits: sign of zero, NaN
    if isinstance(o, float):                        # a float subclass
        return (t, float.hex(o))
    if isinstance(o, complex):
        return (t, float.hex(o.real), float.hex(o.imag))
    if isinstance(o, decimal.Decimal):
        return (t, o.as_tuple())                    # sign, digits, exponent ('n' for NaN)
    if isinstance(o, (frozenset, set)):
        # (a set is keyed by its contents, as a frozenset: a set mutated between calls is a
        # different input, not the same object)
        try:
            return (t, frozenset(value_key(e) for e in o))
        except TypeError:
            return (t, Ident(o))
    if isinstance(o, (bytearray, memoryview)):
        return (t, bytes(o), getattr(o, "format", None), getattr(o, "shape", None))
    if t.__eq__ is object.__eq__:                   # equality is identity: key by (weak) identity
        return (t, Ident(o))
    try:
        hash(o)
    except TypeError:
        return (t, Ident(o))
    return (t, o)


def needs_key(t) -> bool:
    """Whether values of type ``t`` must be compared through :func:`value_key` (``==`` is not
    exact for them): floating point, complex, Decimal, sets and byte buffers (by contents)."""
    return issubclass(t, (float, complex, np.floating, np.complexfloating, decimal.Decimal, frozenset, set,
                          bytearray, memoryview))


def same_value(a, b) -> bool:
    """``a`` and ``b`` are interchangeable (by :func:`value_key`): guards on width-derived
    numbers use it instead of ``==``."""
    if type(a) is int and type(b) is int:
        return a == b
    return value_key(a) == value_key(b)


def idents_in(key) -> list:
    """The :class:`Ident` tokens of a layout key (to drop the key when one of them dies)."""
    out = []
    stack = [key]
    while stack:
        k = stack.pop()
        if type(k) is Ident:
            out.append(k)
        elif type(k) is tuple:
            stack.extend(k)
    return out


# ------------------------------------------------------------------------------ guard pictures
# Mutable objects whose data lives in C: read through subscripts and attributes that no chain
# can follow (``a[1]`` of an ``array.array``, ``c.value`` of a ``ctypes.c_double``, a live view
# of a dict or a buffer), so any read is a read of the whole (guarded by its contents).
C_BUFFERS = (array.array, ctypes.Array, ctypes.Structure, ctypes.Union, ctypes.c_int.__mro__[1],
             types.MappingProxyType, memoryview, type({}.keys()), type({}.values()), type({}.items()))
_ATOM_TYPES = (int, float, complex, str, bytes, bool, type(None), np.generic, range, slice, type(Ellipsis))


def snap(v):
    """A comparable picture of ``v``: numbers and strings by type and bits, tuples and frozensets
    element by element, everything else by (weak) identity."""
    t = type(v)
    if t is tuple:
        return ("tuple", tuple(snap(x) for x in v))
    if isinstance(v, _ATOM_TYPES) or t is frozenset:
        try:
            return value_key(v)
        except TypeError:
            return ("id", Ident(v))
    return ("id", Ident(v))


def contents(c):
    """The picture of a mutable container's contents (list, deque, dict, set, bytearray), or of
    a mutable object whose data lives in C (``array.array``, a ``ctypes`` object, a
    ``mappingproxy``: see :data:`C_BUFFERS`)."""
    if isinstance(c, (dict, types.MappingProxyType)):
        return (type(c), tuple((snap(k), snap(v)) for k, v in c.items()))
    if isinstance(c, (set, frozenset)):
        return (type(c), frozenset(snap(x) for x in c))
    if isinstance(c, (bytearray, bytes)):
        return (type(c), bytes(c))
    if isinstance(c, memoryview):
        return (type(c), c.format, c.shape, c.tobytes())
    if isinstance(c, array.array):
        return (type(c), c.typecode, c.tobytes())
    if isinstance(c, C_BUFFERS[1:5]):
        return (type(c), bytes(memoryview(c).cast("B")))
    return (type(c), tuple(snap(x) for x in c))


DEEP_MAX = 10000        # items a deep picture (below) covers at most
_DEEP_DEPTH = 8


class TooBig(Exception):
    """A container too large (or too deep) to picture deeply."""


def deep_contents(c):
    """The picture of a container and of the mutable containers inside it, at any depth (up to
    :data:`DEEP_MAX` items): what C code that reads it whole sees (``np.array(rows)``,
    ``sorted(rows)``, ``copy.deepcopy(rows)``).  Raises :class:`TooBig` past the bounds."""
    count = [0]

    def pic(v, depth):
        t = type(v)
        if t in (list, tuple, dict, set, collections.deque) or isinstance(v, (list, dict, set, collections.deque)):
            if depth > _DEEP_DEPTH:
                raise TooBig
            count[0] += len(v)
            if count[0] > DEEP_MAX:
                raise TooBig
            if isinstance(v, dict):
                return (t, tuple((snap(k), pic(x, depth + 1)) for k, x in v.items()))
            if isinstance(v, set):
                return (t, frozenset(snap(x) for x in v))
            return (t, tuple(pic(x, depth + 1) for x in v))
        if t is bytearray:
            return (t, bytes(v))
        return snap(v)
    return pic(c, 0)
