"""``PCG32`` and ``Philox4x32`` of the scalar backend: one generator over Python numbers.

As in Dr.Jit's ``drjit.scalar``, a scalar ``PCG32`` is a single generator: ``state`` and ``inc``
are Python ints, ``next_uint32()`` returns an ``int``, ``next_float32()`` a ``float`` (a float32
value); a ``Philox4x32`` keeps ``seed`` (``Array2u``) and ``counter`` (``Array4u``) and returns
scalar static arrays (``Array4u``, ``Array4f``, ...).

There is no second implementation here.  Each method runs the backend-generic generator of
:mod:`frostjit.random` (:class:`~frostjit.random.PCG32Base`, :class:`~frostjit.random.Philox4x32Base`)
on *one-lane* scalar dynamic arrays (``ArrayXu64([state])``, ...), whose operations are the op
table's eager references in the element type (64-bit products wrap, float32 results round as a
kernel rounds them): so the sequences are bit-exact with lane 0 of ``frostjit.llvm.PCG32`` and
with ``drjit.scalar``.  :func:`lifted` converts between the public form (Python numbers, scalar
static arrays) and the lanes around each call.
"""
from __future__ import annotations

import functools

from ..array import registry
from ..array.dynamic import DynamicBase
from ..random._types import ArrayTypes, register_philox
from ..random.pcg32 import PCG32_DEFAULT_STATE, PCG32_DEFAULT_STREAM, PCG32Base
from ..random.philox import Philox4x32Base
from ..trace.dtypes import Bool, Float32, Float64, Int64, UInt32, UInt64
from ..trace.state import JitBackend
from .arrays import SCALAR_ARRAYS


class Lanes(tuple):
    """A static vector of one-lane arrays (what the generic code builds as ``Array4u``); ``public``
    is the scalar static array class it stands for."""

    __slots__ = ()
    public: type = None

    def __new__(cls, *components):
        return tuple.__new__(cls, components)


def _lanes_of(public: type) -> type:
    return type(f"Lanes{public.__name__}", (Lanes,), {"__slots__": (), "public": public})


def _dynamic(vt) -> type:
    """The scalar ``ArrayX*`` class of element type ``vt``."""
    return registry.array_type(registry.flat_type(JitBackend.Invalid, vt), None, "dynamic")


def lane_types() -> ArrayTypes:
    """The :class:`~frostjit.random._types.ArrayTypes` the generic generators see on the scalar
    backend: one-lane ``ArrayX*`` for the 1-D types, :class:`Lanes` for the static vectors."""
    vec = lambda vt, n: _lanes_of(registry.vector_type(JitBackend.Invalid, vt, n))      # noqa: E731
    return ArrayTypes(SCALAR_ARRAYS, False, _dynamic(Bool), _dynamic(UInt32), _dynamic(UInt64),
                      _dynamic(Int64), _dynamic(Float32), _dynamic(Float64), vec(UInt32, 2), vec(UInt32, 4),
                      vec(UInt64, 2), vec(Float32, 4), vec(Float64, 2))


def to_public(v):
    """A generic generator's result as the scalar backend returns it: one-lane arrays become
    Python numbers, :class:`Lanes` scalar static arrays, lane generators public ones."""
    if isinstance(v, Lanes):
        return v.public(*(to_public(c) for c in v))
    if isinstance(v, DynamicBase):
        return v[0]
    if isinstance(v, (_LanePCG32, _LanePhilox)):
        return v._public._from_lanes(v)
    return v


def lifted(name: str, convert_args=None):
    """The public method ``name``: the generic one run on this generator's lanes, its state
    written back, its result made public (``convert_args`` maps the arguments first)."""
    def method(self, *args, **kwargs):
        lanes = self._lanes()
        if convert_args is not None:
            args, kwargs = convert_args(name, args, kwargs)
        result = getattr(lanes, name)(*args, **kwargs)
        self._store(lanes)
        if result is lanes:                 # rng += n returns the generator itself
            return self
        return to_public(result)
    generic = getattr(PCG32Base if name in vars(PCG32Base) else Philox4x32Base, name)
    functools.update_wrapper(method, generic)
    return method


# -- PCG32 ---------------------------------------------------------------------------------------
class _LanePCG32(PCG32Base):
    """The generic PCG32 on one-lane arrays (never seen by users)."""
    __slots__ = ()
    _public = None


def _pcg32_args(name: str, args, kwargs):
    """Dr.Jit's scalar ``next_float(dtype)`` takes ``float`` (double precision: the scalar
    ``Float`` and ``Float64`` are both Python's ``float``); another ``PCG32`` becomes its lanes."""
    if name.endswith(("_float", "_float_normal")):
        args = list(args)
        dtype = args[0] if args else kwargs.get("dtype")
        if dtype is not float:
            raise TypeError(f"PCG32.{name}(): invalid 'dtype' {getattr(dtype, '__name__', dtype)!r} (the scalar "
                            "backend draws Python floats: pass float)")
        dtype = _LanePCG32._types.Float64
        if args:
            args[0] = dtype
        else:
            kwargs = dict(kwargs, dtype=dtype)
    return tuple(a._lanes() if isinstance(a, PCG32) else a for a in args), kwargs


class PCG32:
    """Dr.Jit's scalar ``PCG32``: one PCG32 generator whose ``state`` and ``inc`` are Python ints.

    ``PCG32(size=1, initstate=PCG32_DEFAULT_STATE, initseq=PCG32_DEFAULT_STREAM)`` (``size`` is
    accepted and ignored, as in ``drjit.scalar``), ``PCG32(other)`` copies.  The methods are those
    of :class:`frostjit.llvm.PCG32` (see :class:`~frostjit.random.PCG32Base`); they return Python
    numbers, the same as lane 0 of the LLVM generator seeded alike.

    Examples
    --------
    >>> from frostjit.scalar import PCG32
    >>> rng = PCG32()
    >>> rng.next_float32()
    0.10837864875793457
    """

    __slots__ = ("state", "inc")
    DRJIT_STRUCT = {"state": int, "inc": int}

    def __init__(self, size=1, initstate=PCG32_DEFAULT_STATE, initseq=PCG32_DEFAULT_STREAM):
        if isinstance(size, PCG32):
            self.state, self.inc = size.state, size.inc
            return
        self._store(_LanePCG32(1, initstate, initseq))

    def _lanes(self) -> _LanePCG32:
        lanes = _LanePCG32.__new__(_LanePCG32)
        u64 = _LanePCG32._types.UInt64
        lanes.state, lanes.inc = u64(self.state), u64(self.inc)
        return lanes

    def _store(self, lanes: _LanePCG32) -> None:
        self.state, self.inc = lanes.state[0], lanes.inc[0]

    @classmethod
    def _from_lanes(cls, lanes: _LanePCG32) -> "PCG32":
        out = cls.__new__(cls)
        out._store(lanes)
        return out

    def __repr__(self) -> str:
        return f"PCG32(state={self.state:#x}, inc={self.inc:#x})"


_PCG32_METHODS = ("seed", "next_uint32", "prev_uint32", "next_uint64", "prev_uint64", "next_float16",
                  "next_float32", "prev_float32", "next_float64", "prev_float64", "next_float32_normal", "prev_float32_normal",
                  "next_float64_normal", "prev_float64_normal", "next_float", "prev_float", "next_float_normal",
                  "prev_float_normal", "next_uint32_bounded", "next_uint64_bounded", "__add__", "__iadd__",
                  "__sub__", "__isub__")


# -- Philox4x32 ----------------------------------------------------------------------------------
class _LanePhilox(Philox4x32Base):
    """The generic Philox4x32 on one-lane arrays (never seen by users)."""
    __slots__ = ()
    _public = None


# The generic code names ``type(self).__name__`` in its error messages: the user's class name.
_LanePCG32.__name__ = _LanePCG32.__qualname__ = "PCG32"
_LanePhilox.__name__ = _LanePhilox.__qualname__ = "Philox4x32"


class Philox4x32:
    """Dr.Jit's scalar ``Philox4x32``: one counter-based generator.

    ``Philox4x32(seed, counter_0, counter_1=0, counter_2=0, iterations=7)`` with Python ints;
    ``seed`` (``Array2u``: high, low word), ``counter`` (``Array4u``) and ``iterations`` as in
    Dr.Jit.  The methods are those of :class:`frostjit.llvm.Philox4x32` and return scalar static
    arrays (``Array4u``, ``Array2u64``, ``Array4f``, ``Array2f64``).
    """

    __slots__ = ("seed", "counter", "iterations")

    def __init__(self, seed, counter_0=None, counter_1=0, counter_2=0, iterations: int = 7):
        if isinstance(seed, Philox4x32):
            self.seed, self.counter = type(seed.seed)(seed.seed), type(seed.counter)(seed.counter)
            self.iterations = seed.iterations
            return
        self._store(_LanePhilox(seed, counter_0, counter_1, counter_2, iterations))

    def _lanes(self) -> _LanePhilox:
        t = _LanePhilox._types
        lanes = _LanePhilox.__new__(_LanePhilox)
        lanes.seed = t.Array2u(*(t.UInt32(c) for c in self.seed))
        lanes.counter = t.Array4u(*(t.UInt32(c) for c in self.counter))
        lanes.iterations = self.iterations
        return lanes

    def _store(self, lanes: _LanePhilox) -> None:
        self.seed, self.counter = to_public(lanes.seed), to_public(lanes.counter)
        self.iterations = lanes.iterations

    # The traversal protocol of the generic class (iterations is a Python value of the key).
    __fj_traverse__ = Philox4x32Base.__fj_traverse__
    __fj_assign__ = Philox4x32Base.__fj_assign__
    __fj_construct__ = classmethod(Philox4x32Base.__fj_construct__.__func__)


_PHILOX_METHODS = ("next_uint32x4", "next_uint64x2", "next_float32x4", "next_float64x2", "next_float32x4_normal",
                   "next_float64x2_normal")


def make_rng_types(module: str) -> dict:
    """Bind the scalar generators to the scalar array types (which must exist) and name them for
    ``module``; returns ``{"PCG32": ..., "Philox4x32": ...}``."""
    types = lane_types()
    _LanePCG32._types = _LanePhilox._types = types
    _LanePCG32._public, _LanePhilox._public = PCG32, Philox4x32
    for name in _PCG32_METHODS:
        setattr(PCG32, name, lifted(name, _pcg32_args))
    for name in _PHILOX_METHODS:
        setattr(Philox4x32, name, lifted(name))
    for cls in (PCG32, Philox4x32):
        cls.__module__ = module
    # fj.rng(...).random(TensorXf, shape) on this backend: the generic Philox over ArrayX* lanes.
    register_philox(SCALAR_ARRAYS, _LanePhilox)
    return {"PCG32": PCG32, "Philox4x32": Philox4x32}
