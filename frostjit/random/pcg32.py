"""``PCG32``: Melissa O'Neill's permuted congruential generator, bit-exact with Dr.Jit 1.5.

Each lane holds a 64-bit LCG state and an odd increment (its stream).  A step is
``state = state * MULT + inc``; the output is the old state's xorshift, rotated by its top 5 bits
(PCG-XSH-RR).  Everything is built from frostjit's UInt64/UInt32 array operations, so drawing
variates fuses into the kernels that use them.
"""
from __future__ import annotations

import functools
import numbers

from ..array.flat import ArrayBase, is_flat
from ..array.meta import meta_of
from ..functions.creation import arange
from ..freeze import freeze
from ..functions.math import reinterpret_array, select
from ..trace import masks, ops
from ..trace.dtypes import Float16, Float32, Float64, UInt64
from . import variates
from ._types import ArrayTypes, check_mask, new_handle
from .rejection import generator_loop

PCG32_DEFAULT_STATE = 0x853C49E6748FEA9B
PCG32_DEFAULT_STREAM = 0xDA3E39CB94B95BDB
PCG32_MULT = 0x5851F42D4C957F2D
_M64 = (1 << 64) - 1
_MULT_INV = pow(PCG32_MULT, -1, 1 << 64)     # steps the LCG backwards


def _jump_tables():
    """``(M_k, C_k)`` for k = 0..63: ``2^k`` steps multiply the state by ``M_k`` and add
    ``inc * C_k`` (Brown, "Random number generation with arbitrary strides", 1994)."""
    mults, plus = [], []
    m, c = PCG32_MULT, 1
    for _ in range(64):
        mults.append(m)
        plus.append(c)
        c = ((m + 1) * c) & _M64
        m = (m * m) & _M64
    return tuple(mults), tuple(plus)


_JUMP_MULT, _JUMP_PLUS = _jump_tables()


def _jump(delta: int) -> tuple[int, int]:
    """``(a, b)`` such that ``delta`` steps (mod 2^64) map ``state`` to ``a * state + b * inc``."""
    a, b = 1, 0
    d = delta & _M64
    k = 0
    while d:
        if d & 1:
            a = (a * _JUMP_MULT[k]) & _M64
            b = (b * _JUMP_MULT[k] + _JUMP_PLUS[k]) & _M64
        d >>= 1
        k += 1
    return a, b


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


# next_float(dtype) and its relatives: the method for each precision (prev_* replaces "next").
_BY_PRECISION = {Float16: "next_float16", Float32: "next_float32", Float64: "next_float64"}


class _UInt64Field:
    """A ``UInt64`` attribute of :class:`PCG32Base` kept in slot ``slot``, converting what is assigned,
    as Dr.Jit's typed fields do: ``rng.state = 1234 + arange(UInt32, n)`` must not leave a 32-bit
    state (its steps would wrap at 32 bits and the outputs differ from Dr.Jit's)."""

    def __init__(self, slot: str, doc: str):
        self.slot, self.__doc__ = slot, doc

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        return self if obj is None else getattr(obj, self.slot)

    def __set__(self, obj, value) -> None:
        if type(value) is not obj._types.UInt64:
            value = obj._field_u64(value, self.name)
        setattr(obj, self.slot, value)


class PCG32Base:
    """A vector of PCG32 generators (one per lane), as Dr.Jit's ``PCG32``.

    ``PCG32(size=1, initstate=PCG32_DEFAULT_STATE, initseq=PCG32_DEFAULT_STREAM)`` seeds ``size``
    generators with ``initstate + i`` and ``initseq + i`` for lane ``i``; ``PCG32(other)``
    copies another one.  The concrete classes are ``frostjit.llvm.PCG32`` (``Float`` results)
    and ``frostjit.llvm.ad.PCG32`` (AD ``Float`` results, never grad-enabled).

    ``state`` and ``inc`` are ``UInt64`` arrays and form the ``DRJIT_STRUCT``, so a ``PCG32`` is
    a PyTree: ``fj.eval(rng)`` evaluates it, and it can be an input, output or state of frozen
    functions (its state advances on every replay).

    Examples
    --------
    >>> from frostjit.llvm import PCG32
    >>> rng = PCG32(size=4)
    >>> rng.next_float32()      # 4 uniform floats on [0, 1), the same as Dr.Jit's
    [0.10837865, 0.5339087, 0.0068445206, 0.6235827]
    >>> rng += 10               # skip 10 draws in O(64) operations
    """

    __slots__ = ("_state", "_inc")
    _types: ArrayTypes = None           # set on the concrete classes (frostjit.llvm / .ad)
    DRJIT_STRUCT: dict = {}

    state = _UInt64Field("_state", "The 64-bit LCG state of each lane (``UInt64``; an assigned array or "
                                   "int is converted).")
    inc = _UInt64Field("_inc", "The odd increment (stream) of each lane (``UInt64``; an assigned value is "
                               "converted).")

    def _field_u64(self, v, name: str):
        if _is_int(v) or (is_flat(v) and v._backend is self._types.backend):
            return self._types.UInt64(v)
        raise TypeError(f"{type(self).__name__}.{name}: expected a UInt64 array (or an integer "
                        f"or array of the {self._types.backend.name} backend to convert), not "
                        f"{type(v).__name__}")

    def __init__(self, size=1, initstate=PCG32_DEFAULT_STATE, initseq=PCG32_DEFAULT_STREAM):
        if isinstance(size, PCG32Base):
            other = size
            self.state = new_handle(other.state)
            self.inc = new_handle(other.inc)
            return
        who = f"{type(self).__name__}()"
        if type(size) is int and size == 1 and _is_int(initstate) and _is_int(initseq):
            self.seed(initstate, initseq)       # one lane: the seeding folds to two constants
            return
        if not (hasattr(size, "__symbolic_size__") or _is_int(size)):
            raise TypeError(f"{who}: 'size' must be an int, not {type(size).__name__}")
        if _is_int(size) and size < 0:
            raise ValueError(f"{who}: 'size' must be >= 0, got {size}")
        idx = arange(self._types.UInt64, size)
        self.seed(self._as_u64(initstate, "initstate", who) + idx, self._as_u64(initseq, "initseq", who) + idx)

    # -- seeding ----------------------------------------------------------------------------
    def seed(self, initstate=PCG32_DEFAULT_STATE, initseq=PCG32_DEFAULT_STREAM) -> None:
        """Seed with the initial state ``initstate`` and the stream ``initseq`` (``UInt64`` arrays
        or Python ints), as O'Neill's ``pcg32_srandom_r``; unlike the constructor, no lane offset
        is added."""
        who = f"{type(self).__name__}.seed()"
        u64 = self._types.UInt64
        if _is_int(initstate) and _is_int(initseq):
            s = ops.convert_scalar(UInt64, initstate, who)
            q = ops.convert_scalar(UInt64, initseq, who)
            inc = ((q << 1) | 1) & _M64
            self.inc = u64(inc)
            self.state = u64(((inc + s) * PCG32_MULT + inc) & _M64)
            return
        initstate = self._as_u64(initstate, "initstate", who)
        initseq = self._as_u64(initseq, "initseq", who)
        # From state 0: one step (state = inc), add initstate, one more step.  (A Python int stream
        # is shifted in 64 bits, as the arrays are: the default stream's bit 63 is set.)
        self.inc = u64(((initseq << 1) | 1) & _M64) if _is_int(initseq) else (initseq << 1) | 1
        self.state = (self.inc + initstate) * PCG32_MULT + self.inc

    def _as_u64(self, v, name: str, who: str):
        u64 = self._types.UInt64
        if _is_int(v):
            return ops.convert_scalar(UInt64, v, who)
        if is_flat(v) and v._vt.is_integral and v._backend is self._types.backend:
            return v if type(v) is u64 else u64(v)
        raise TypeError(f"{who}: '{name}' must be a Python int or an integer array of the "
                        f"{self._types.backend.name} backend, not {type(v).__name__}")

    # -- the generator ------------------------------------------------------------------------
    def _output(self, old):
        """PCG-XSH-RR: the 32-bit output of the state ``old``: ``xorshifted`` rotated right by
        the top 5 bits of ``old``.

        The rotation shifts the 32-bit value doubled into both halves of a 64-bit word and
        keeps the low half: one variable shift instead of two plus their combination (15%
        faster for the output alone; a rotate operation would be faster still, see docs/random.md)."""
        xorshifted = ((old >> 18) ^ old) >> 27         # low 32 bits are XSH's output
        doubled = (xorshifted & 0xFFFFFFFF) | (xorshifted << 32)
        return self._types.UInt32(doubled >> (old >> 59))

    # (the stepping methods use the slots: their values are UInt64 already, no conversion)
    def _set_state(self, new, mask) -> None:
        if mask is True:
            self._state = new
        elif mask is not False:
            self._state = select(mask, new, self._state)

    def next_uint32(self, mask=True):
        """A uniformly distributed ``UInt32`` per lane; lanes where ``mask`` is false do not
        advance (their value is still returned)."""
        mask = check_mask(mask, "PCG32.next_uint32()", self._types)
        old = self._state
        self._set_state(old * PCG32_MULT + self._inc, mask)
        return self._output(old)

    def prev_uint32(self, mask=True):
        """Step back and return the ``UInt32`` that the matching :meth:`next_uint32` returned
        (lanes where ``mask`` is false stay put and return the output of their current state, as
        in Dr.Jit)."""
        mask = check_mask(mask, "PCG32.prev_uint32()", self._types)
        self._set_state((self._state - self._inc) * _MULT_INV, mask)
        return self._output(self._state)

    def next_uint64(self, mask=True):
        """A uniformly distributed ``UInt64`` per lane (two :meth:`next_uint32`, the first is the
        low half)."""
        lo = self.next_uint32(mask)
        hi = self.next_uint32(mask)
        return self._combine(lo, hi)

    def prev_uint64(self, mask=True):
        """Step back twice and return the ``UInt64`` that the matching :meth:`next_uint64` returned."""
        hi = self.prev_uint32(mask)
        lo = self.prev_uint32(mask)
        return self._combine(lo, hi)

    def _combine(self, lo, hi):
        u64 = self._types.UInt64
        return u64(lo) | (u64(hi) << 32)

    def next_float16(self, mask=True):
        """A uniform ``Float16`` per lane: :meth:`next_float32` rounded to half precision (as
        Dr.Jit; so ``1.0`` is possible, for uniforms above ``1 - 2^-12``)."""
        return self._types.Float16(self.next_float32(mask))

    def prev_float16(self, mask=True):
        """The ``Float16`` that the matching :meth:`next_float16` returned, stepping back."""
        return self._types.Float16(self.prev_float32(mask))

    def next_float32(self, mask=True):
        """A uniform ``Float32`` on ``[0, 1)`` (23 random bits) per lane."""
        return variates.float32_from_uint32(self.next_uint32(mask), self._types.Float32)

    def prev_float32(self, mask=True):
        """The ``Float32`` that the matching :meth:`next_float32` returned, stepping back."""
        return variates.float32_from_uint32(self.prev_uint32(mask), self._types.Float32)

    def next_float64(self, mask=True):
        """A uniform ``Float64`` on ``[0, 1)`` per lane, from one 32-bit draw (as Dr.Jit)."""
        return variates.float64_from_uint32(self.next_uint32(mask), self._types.Float64)

    def prev_float64(self, mask=True):
        """The ``Float64`` that the matching :meth:`next_float64` returned, stepping back."""
        return variates.float64_from_uint32(self.prev_uint32(mask), self._types.Float64)

    def next_float16_normal(self, mask=True):
        """A standard normal ``Float16`` per lane: :meth:`next_float32_normal` rounded (as Dr.Jit)."""
        return self._types.Float16(self.next_float32_normal(mask))

    def prev_float16_normal(self, mask=True):
        """The value of the matching :meth:`next_float16_normal`, stepping back."""
        return self._types.Float16(self.prev_float32_normal(mask))

    def next_float32_normal(self, mask=True):
        """A standard normal ``Float32`` per lane: ``sqrt(2) erfinv(2 u - 1)`` of one uniform."""
        return variates.normal_from_uniform(self.next_float32(mask))

    def prev_float32_normal(self, mask=True):
        """The value of the matching :meth:`next_float32_normal`, stepping back."""
        return variates.normal_from_uniform(self.prev_float32(mask))

    def next_float64_normal(self, mask=True):
        """A standard normal ``Float64`` per lane (from one 32-bit draw)."""
        return variates.normal_from_uniform(self.next_float64(mask))

    def prev_float64_normal(self, mask=True):
        """The value of the matching :meth:`next_float64_normal`, stepping back."""
        return variates.normal_from_uniform(self.prev_float64(mask))

    def _precision(self, dtype, who: str):
        """The element type (``Float16``/``Float32``/``Float64``) of the 1-D float array type ``dtype``."""
        m = meta_of(dtype) if isinstance(dtype, type) else None
        vt = m.vt if m is not None and m.shape == (-1,) and not m.is_tensor else None     # a 1-D float array type
        if vt is Float16 or vt is Float32 or vt is Float64:
            return vt
        raise TypeError(f"{who}: invalid 'dtype' {getattr(dtype, '__name__', dtype)!r} "
                        "(expected a Float16, Float32 or Float64 array type)")

    def next_float(self, dtype, mask=True):
        """:meth:`next_float16`, :meth:`next_float32` or :meth:`next_float64`, as ``dtype`` (a float
        array type) asks."""
        return getattr(self, _BY_PRECISION[self._precision(dtype, "PCG32.next_float()")])(mask)

    def prev_float(self, dtype, mask=True):
        """:meth:`prev_float16`, :meth:`prev_float32` or :meth:`prev_float64`, as ``dtype`` asks."""
        return getattr(self, "prev" + _BY_PRECISION[self._precision(dtype, "PCG32.prev_float()")][4:])(mask)

    def next_float_normal(self, dtype, mask=True):
        """:meth:`next_float16_normal`, :meth:`next_float32_normal` or :meth:`next_float64_normal`,
        as ``dtype`` asks."""
        name = _BY_PRECISION[self._precision(dtype, "PCG32.next_float_normal()")]
        return getattr(self, name + "_normal")(mask)

    def prev_float_normal(self, dtype, mask=True):
        """:meth:`prev_float16_normal`, :meth:`prev_float32_normal` or :meth:`prev_float64_normal`,
        as ``dtype`` asks."""
        name = _BY_PRECISION[self._precision(dtype, "PCG32.prev_float_normal()")]
        return getattr(self, "prev" + name[4:] + "_normal")(mask)

    # -- bounded integers ------------------------------------------------------------------------
    def next_uint32_bounded(self, bound: int, mask=True):
        """A uniform ``UInt32`` on ``[0, bound)`` per lane, unbiased (O'Neill's rejection method:
        draws below ``2^32 mod bound`` are redrawn; masked lanes give 0 and do not advance).

        Raises
        ------
        TypeError
            ``bound`` is not a Python int.
        ValueError
            ``bound`` is not in ``[1, 2^32 - 1]``.
        """
        return self._bounded(bound, 32, mask, "PCG32.next_uint32_bounded()")

    def next_uint64_bounded(self, bound: int, mask=True):
        """A uniform ``UInt64`` on ``[0, bound)`` per lane, unbiased (as :meth:`next_uint32_bounded`
        with 64-bit draws, ``1 <= bound < 2^64``)."""
        return self._bounded(bound, 64, mask, "PCG32.next_uint64_bounded()")

    def _bounded(self, bound, bits: int, mask, who: str):
        if not _is_int(bound):
            raise TypeError(f"{who}: 'bound' must be a Python int, not {type(bound).__name__}")
        if not 1 <= bound < (1 << bits):
            raise ValueError(f"{who}: 'bound' must be in [1, 2^{bits} - 1], got {bound}")
        mask = check_mask(mask, who, self._types)
        draw = self.next_uint32 if bits == 32 else self.next_uint64
        out_cls = self._types.UInt32 if bits == 32 else self._types.UInt64
        threshold = ((1 << bits) - bound) % bound      # draws below it would bias the result
        if threshold == 0 or mask is False:            # bound a power of two: nothing to redraw
            r = draw(mask)
            return r % bound if mask is True else select(mask, r % bound, out_cls(0))
        # Dr.Jit's loop: the state holds a copy of the generator, which each active lane steps
        # once per draw; a lane stops at its first draw >= threshold (masked lanes never run)
        jit = isinstance(self._state, ArrayBase)
        active = mask if mask is not True else (self._types.Bool(True) if jit else True)

        def cond(active, rng, result):
            return active

        def body(active, rng, result):
            v = rng.next_uint32() if bits == 32 else rng.next_uint64()
            return active & (v < threshold), rng, v
        _, rng, result = generator_loop((active, type(self)(self), out_cls(0)), cond, body, who, jit)
        self._state = rng._state
        return result % bound

    # -- jumps ----------------------------------------------------------------------------------
    def _delta(self, delta, who: str):
        """``delta`` as a Python int in the Int64 range, or an integer array (as Int64 bits)."""
        if _is_int(delta):
            if not -(1 << 63) <= delta < (1 << 63):
                raise TypeError(f"{who}: the step count {delta} does not fit in an Int64")
            return int(delta)
        if is_flat(delta) and delta._vt.is_integral and delta._backend is self._types.backend:
            return delta
        return None

    def _advanced(self, delta, back: bool = False):
        """The state after ``delta`` steps (a Python int or an integer array, as Int64 bits;
        negative rewinds), or before them when ``back``."""
        if isinstance(delta, int):
            a, b = _jump(-delta if back else delta)
            if a == 1 and b == 0:
                return self.state
            return self.state * a + self.inc * b
        return _bit_rounds(_jump_rounds, self._types, self._state, (self.state, self.inc, delta), back)

    def _with_state(self, state):
        out = type(self).__new__(type(self))
        out.state = state
        out.inc = new_handle(self.inc)
        return out

    def __add__(self, delta):
        """A copy advanced by ``delta`` steps (``Int64`` array or Python int), in O(64) operations."""
        d = self._delta(delta, "PCG32.__add__()")
        if d is None:
            return NotImplemented
        return self._with_state(self._advanced(d))

    def __iadd__(self, delta):
        d = self._delta(delta, "PCG32.__iadd__()")
        if d is None:
            return NotImplemented
        self.state = self._advanced(d)
        return self

    def __sub__(self, other):
        """``rng - n``: a copy rewound by ``n`` steps.  ``rng - other``: the number of
        :meth:`next_uint32` steps from ``other`` to ``rng`` per lane (an ``Int64``; both must
        have the same ``inc``, i.e. be seeded consistently)."""
        if isinstance(other, PCG32Base):
            return self._distance(other)
        d = self._delta(other, "PCG32.__sub__()")
        if d is None:
            return NotImplemented
        return self._with_state(self._advanced(d, back=True))

    def __isub__(self, delta):
        d = self._delta(delta, "PCG32.__isub__()")
        if d is None:
            return NotImplemented
        self.state = self._advanced(d, back=True)
        return self

    def _distance(self, other):
        """Steps from ``other.state`` to ``self.state`` (:func:`_distance_rounds`)."""
        return _bit_rounds(_distance_rounds, self._types, self._state, (self.state, other.state, self.inc))


# -- the loops over the bits of a count ----------------------------------------------------------
def _jump_rounds(types: ArrayTypes, jit: bool, back: bool, state, inc, delta):
    """The state ``delta`` steps after ``state`` (before it when ``back``): Brown's jump over the
    bits of each lane's count (an integer array, as Int64 bits), as one loop (Dr.Jit's
    ``operator+``), whose trace holds one round instead of 64 (docs/random.md)."""
    u64 = types.UInt64
    if back:
        delta = -types.Int64(delta)

    def cond(mult, plus, acc_mult, acc_plus, d):
        return d != 0

    def body(mult, plus, acc_mult, acc_plus, d):
        take = (d & 1) != 0
        return (mult * mult, (mult + 1) * plus, select(take, acc_mult * mult, acc_mult),
                select(take, acc_plus * mult + plus, acc_plus), d >> 1)
    # (two's complement: a negative count is a jump of 2^64 - |delta|)
    _, _, a, b, _ = generator_loop((u64(PCG32_MULT), u64(1), u64(1), u64(0), u64(delta)), cond, body,
                                   "PCG32.__add__", jit)
    return state * a + inc * b


def _distance_rounds(types: ArrayTypes, jit: bool, target, start, inc):
    """Steps from ``start`` to ``target`` per lane (an ``Int64``), found bit by bit from the lowest:
    bit ``k`` of the distance is set when the states differ in bit ``k`` after the lower jumps
    (Brown's algorithm, as in O'Neill's ``pcg_advance``/``distance``).

    One loop over the bits (Dr.Jit's ``operator-``), ending where a lane reached ``target``, at
    the latest after bit 63 (a lane whose ``inc`` is even may never reach it): 12 traced
    operations instead of 64 unrolled rounds of 10 (docs/random.md)."""
    u64 = types.UInt64

    def cond(cur, plus, mult, dist, bit):
        return (cur != target) & (bit != 0)

    def body(cur, plus, mult, dist, bit):
        differ = (target ^ cur) & bit           # bit k of the distance: 0 or the bit itself
        cur = select(differ != 0, cur * mult + plus, cur)
        return cur, (mult + 1) * plus, mult * mult, dist | differ, bit << 1
    _, _, _, dist, _ = generator_loop((u64(start), u64(inc), u64(PCG32_MULT), u64(0), u64(1)), cond, body,
                                      "PCG32.__sub__", jit)
    return reinterpret_array(types.Int64, dist)


# (rounds function, backend, AD status, static arguments) -> the frozen function replaying it, or
# the number of uses traced so far
_REPLAYED: dict = {}
# Uses traced before a loop is recorded: recording costs ~3-4 ms of CPU, and the replay after it
# ~1 ms more (its code is built), against ~0.25 ms saved per later call (1e3 lanes, r15): a
# program that uses the loop only a few times is better off tracing it.
TRACED_USES = 3


def _bit_rounds(rounds, types: ArrayTypes, probe, arrays: tuple, *static):
    """``rounds(types, jit, *static, *arrays)``: a loop over the bits of a count per lane.

    On evaluated JIT arrays outside any control-flow scope (the common ``rng - other`` of two
    evaluated generators), the loop is replayed by a frozen function kept per ``rounds``, types
    and static arguments, from its ``TRACED_USES + 1``-th use: a steady call costs a replay
    (~0.015 ms) instead of tracing the loop and scheduling its kernel (~0.3 ms), and its result
    is evaluated, with the same values.
    Pending inputs keep the traced loop, which then fuses into the kernel that uses it.  On
    the scalar backend (``probe`` not a JIT array) the same rounds run as a host loop."""
    jit = isinstance(probe, ArrayBase)
    if not jit or masks.in_scope() or not all(a._node.op == "data" for a in arrays):
        return rounds(types, jit, *static, *arrays)
    key = (rounds, types.backend, types.ad, static)     # (hashing the ArrayTypes costs 15 field hashes)
    frozen = _REPLAYED.get(key, 0)
    if type(frozen) is int:
        if frozen < TRACED_USES:
            _REPLAYED[key] = frozen + 1
            return rounds(types, True, *static, *arrays)
        # (bounded: the recent layouts of each; no warning about re-tracing, which the user
        # did not ask for)
        frozen = _REPLAYED[key] = freeze(functools.partial(rounds, types, True, *static), limit=32,
                                         warn_after=1 << 30)
    return frozen(*arrays)


def make_pcg32(types: ArrayTypes, module: str) -> type:
    """The ``PCG32`` class of one backend and AD status."""
    return type("PCG32", (PCG32Base,), {
        "__slots__": (), "_types": types, "__module__": module, "__qualname__": "PCG32",
        "DRJIT_STRUCT": {"state": types.UInt64, "inc": types.UInt64},
    })
