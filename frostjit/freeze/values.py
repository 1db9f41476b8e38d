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
import struct
import sys
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


class Eq:
    """Key token for a hashable object compared by its own ``==``.

    A result that is not a ``bool`` (an element-wise ``==`` returning an array, which has no
    truth value) or an exception counts as *different*: the call traces again rather than
    fail where the plain call does not compare anything.
    """

    __slots__ = ("obj", "h")

    def __init__(self, obj):
        self.obj = obj
        self.h = hash(obj)

    def __eq__(self, other):
        if type(other) is not Eq:
            return False
        a, b = self.obj, other.obj
        if a is b:
            return True
        if type(a) is not type(b) or self.h != other.h:
            return False
        try:
            r = a == b
        except Exception:  # noqa: BLE001  (incomparable: not the same input)
            return False
        return r if type(r) is bool else False

    def __hash__(self):
        return self.h

    def __repr__(self):
        return repr(self.obj)


def eq_differs(a, b) -> bool:
    """``not (Eq(a) == Eq(b))`` without making the tokens (the binder's test of an object keyed
    by its own ``==``; the hashes are not compared, the walk's token compares them)."""
    if type(a) is not type(b):
        return True
    try:
        r = a == b
    except Exception:  # noqa: BLE001
        return True
    return type(r) is not bool or not r


_PACK_D = struct.Struct("<d").pack


def float_bits(v: float) -> str:
    """``float.hex(v)``, except that a NaN is written with its sign and payload (``float.hex``
    writes every NaN as ``'nan'``, but ``copysign`` and ``struct`` see them: r14, ``-nan`` and a
    NaN with a payload replayed the recording of ``nan``).  The engine's keys use
    ``trace/dtypes.float_bits``, the same function: the read set's modules (this one) import
    nothing from outside ``freeze/``, so that other Python versions can load them alone
    (tests/freeze/readset_probe.py)."""
    h = float.hex(v)
    return h if h != "nan" else "nan:" + _PACK_D(v).hex()


def float_of_bits(h: str) -> float:
    """The float :func:`float_bits` wrote."""
    return float.fromhex(h) if not h.startswith("nan:") else struct.unpack("<d", bytes.fromhex(h[4:]))[0]


def value_key(o):
    """The layout-key token of a Python value ``o`` (see module docstring).

    >>> value_key(-0.0) == value_key(0.0), value_key(float("nan")) == value_key(float("nan"))
    (False, True)
    """
    t = type(o)
    if t is int or t is str or t is bool or o is None:
        return (t, o)
    if t is float:
        return (t, float_bits(o))
    k = _value_key(o, t)
    if t.__flags__ & _HEAPTYPE and len(k) == 2 and type(k[1]) is not Ident:
        # a Python subclass of a value type (``class Tag(str)``, ``class F(float)``) may carry
        # attributes its == and bits leave out (r14: ``s.scale`` of a str subclass argument
        # replayed the first call's scale)
        st = attribute_snaps(o)
        if st:
            return k + (st,)
    return k


def user_eq(t) -> bool:
    """Whether ``t``'s ``==`` is written in Python (it may say anything: a key compares more)."""
    for c in t.__mro__:
        if "__eq__" in c.__dict__:
            return bool(c.__flags__ & _HEAPTYPE)
    return False


def _value_key(o, t):
    if isinstance(o, (np.floating, np.complexfloating)):
        return (t, o.tobytes())                     # bits: sign of zero, NaN
    if isinstance(o, (np.integer, np.bool_)):
        return (t, o.item())                        # (their == gives np.bool_, which Eq rejects)
    if isinstance(o, float):                        # a float subclass
        return (t, float_bits(o))
    if isinstance(o, complex):
        return (t, float_bits(o.real), float_bits(o.imag))
    if isinstance(o, decimal.Decimal):
        return (t, o.as_tuple())                    # sign, digits, exponent ('n' for NaN)
    if isinstance(o, (frozenset, set)):
        # (a set is keyed by its contents, as a frozenset: a set mutated between calls is a
        # different input, not the same object; in iteration order, which ``next(iter(s))``,
        # a float ``sum(s)`` see and which depends on the insertion history: r14, an equal set
        # iterated in another order replayed the first one's recording)
        try:
            return (t, tuple(value_key(e) for e in o))
        except TypeError:
            return (t, Ident(o))
    if isinstance(o, (bytearray, memoryview)):
        return (t, bytes(o), getattr(o, "format", None), getattr(o, "shape", None))
    if isinstance(o, tuple):
        # element by element: ``(0.0,) == (-0.0,)`` and ``(1,) == (1.0,)`` (a tuple in a set,
        # a dict key), so == would hand one the other's recording
        return (t, tuple(value_key(e) for e in o))
    if t.__eq__ is object.__eq__:                   # equality is identity: key by (weak) identity
        return (t, Ident(o))
    try:
        hash(o)
    except TypeError:
        return (t, Ident(o))
    if coarse_eq(t):
        st = attribute_snaps(o) if t.__flags__ & _HEAPTYPE else ()
        return (t, Eq(o), exact_state(o, t), st) if st else (t, Eq(o), exact_state(o, t))
    if t.__flags__ & _HEAPTYPE:
        # a Python class: its == may leave out attributes the program reads (``Key.__eq__``
        # comparing a name, a dataclass field with ``compare=False``), and as a dict key, a set
        # element or inside a tuple nobody walks them: they are part of the key
        st = attribute_snaps(o)
        if st:
            return (t, Eq(o), st)
    return (t, Eq(o))


def attribute_snaps(o) -> tuple:
    """The attributes of ``o`` (instance dict, then set slots) as ``(name, snap(value))``
    pairs: numbers and strings by type and bits, tuples element by element, objects by
    identity.  (Not :func:`.outputs.instance_state`, which returns the values themselves.)"""
    out = []
    try:        # (past a user __getattr__ / __getattribute__, which may raise anything)
        d = object.__getattribute__(o, "__dict__")
    except (AttributeError, TypeError):
        d = None
    if type(d) is dict:
        out.extend((n, snap(v)) for n, v in d.items())
    t = type(o)
    for n, get in _slot_readers(t):
        try:
            v = get(o, t)
        except AttributeError:      # (a slot never set)
            continue
        out.append((n, snap(v)))
    return tuple(out)


_READERS: dict = {}      # type -> ((slot name, its member descriptor's __get__), ...), resolved once


def _slot_readers(t: type) -> tuple:
    """The slots of ``t`` (as ``tree.kinds.slot_names`` lists them: this module imports nothing
    of frostjit, tests/freeze/readset_probe.py loads it alone) with the ``__get__`` of the member
    descriptor that declares each (the first class along the MRO), so a read runs no user code
    (a property of the same name in a subclass is not called)."""
    r = _READERS.get(t)
    if r is None:
        out, seen = [], set()
        for c in t.__mro__:
            sl = c.__dict__.get("__slots__", ())
            for n in (sl,) if isinstance(sl, str) else sl:
                if n in ("__dict__", "__weakref__") or n in seen:
                    continue
                seen.add(n)
                get = getattr(c.__dict__.get(n), "__get__", None)
                if get is not None:
                    out.append((n, get))
        r = _READERS[t] = tuple(out)
    return r


_NO = object()


# Types whose == tells interchangeable values apart (besides the numbers handled above).
_EXACT_EQ = {int, str, bytes, bool, type(None), type(Ellipsis), type(NotImplemented)}
_HEAPTYPE = 1 << 9          # Py_TPFLAGS_HEAPTYPE: a class written in Python
_coarse: dict = {}


def _c_base(t):
    """The first class in ``t``'s MRO that is written in C (``object`` for a plain class)."""
    for b in t.__mro__:
        if not b.__flags__ & _HEAPTYPE:
            return b
    return object


def coarse_eq(t) -> bool:
    """Whether ``==`` of type ``t`` may call values equal that a program tells apart, because
    their state lives in C where freeze's walk does not see it: ``range(0, 0) == range(5, 5)``
    (``r.start`` differs), a datetime equals the same instant in another time zone (``d.hour``
    differs), ``timezone.utc`` equals a named UTC offset (``tzname()`` differs), a NumPy dtype
    equals one with metadata, ``np.datetime64`` values of different units.  A class written in
    Python has its instance state walked (attributes are part of the key), so its own ``==``
    is trusted unless a C base other than ``object`` holds state.  A Python subclass of ``int``,
    ``str`` or ``bytes`` that overrides ``==`` is coarse too: its C value is state its ``==``
    may leave out (``class Tag(str): __eq__ = lambda s, o: True``; r13, a stale replay)."""
    c = _coarse.get(t)
    if c is None:
        b = _c_base(t)
        c = _coarse[t] = not (b is object or (b in _EXACT_EQ and t.__eq__ is b.__eq__)
                              or issubclass(b, (np.integer, np.bool_, np.str_, np.bytes_)))
    return c


def exact_state(o, t=None):
    """What tells apart values of a :func:`coarse_eq` type that compare equal: the ``repr`` of
    their C base (C code, deterministic; ``range(5, 5)``, ``datetime(..., tzinfo=...)``,
    ``dtype('float32', metadata={...})``); of a torch tensor (compared by identity: its hash),
    its version counter, which every in-place change bumps (its ``repr`` elides the middle of
    large tensors and costs a formatting per call)."""
    try:
        if is_torch_tensor(t or type(o)):
            return ("_version", o._version)
        if isinstance(o, np.dtype):     # (its repr leaves out the metadata)
            return (repr(o), o.byteorder, repr(o.metadata))
        return _c_base(t or type(o)).__repr__(o)
    except Exception:  # noqa: BLE001  (no exact picture: identity, never a shared recording)
        return Ident(o)


_TORCH: dict = {}       # type -> whether it is a torch.Tensor (once torch is imported)


def is_torch_tensor(t) -> bool:
    """Whether type ``t`` is a ``torch.Tensor`` (without importing torch: ``False`` until the
    program has)."""
    r = _TORCH.get(t)
    if r is None:
        torch = sys.modules.get("torch")
        if torch is None:
            return False
        r = _TORCH[t] = isinstance(t, type) and issubclass(t, torch.Tensor)
    return r


def needs_key(t) -> bool:
    """Whether values of type ``t`` must be compared through :func:`value_key` (``==`` is not
    exact for them): floating point, complex, Decimal, sets and byte buffers (by contents),
    tuples (element by element) and the types :func:`coarse_eq` names."""
    return issubclass(t, (float, complex, np.floating, np.complexfloating, decimal.Decimal, frozenset, set,
                          bytearray, memoryview, tuple)) or coarse_eq(t)


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
        return (type(c), tuple(snap(x) for x in c))     # (in iteration order, as value_key)
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
                return (t, tuple(snap(x) for x in v))          # (iteration order: see value_key)
            return (t, tuple(pic(x, depth + 1) for x in v))
        if t is bytearray:
            return (t, bytes(v))
        return snap(v)
    return pic(c, 0)
