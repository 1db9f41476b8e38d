"""``Philox4x32``: the counter-based generator of Salmon et al. (SC'11), bit-exact with Dr.Jit 1.5.

A block of four 32-bit outputs is a keyed bijection of a 128-bit counter: ``iterations``
rounds (7 by default, as Dr.Jit) of two 32x32->64-bit multiplications, XORs with the key and a
Weyl-sequence key schedule.  Each ``next_*`` call maps the current counter and then increments
its last word, so lanes with different ``counter_0..2`` (or seeds) are independent streams.
"""
from __future__ import annotations

import numbers

from ..array.flat import is_flat
from ..functions.math import select
from ..trace import ops
from ..trace.dtypes import UInt32, UInt64
from . import variates
from ._types import ArrayTypes, check_mask, new_handle

PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57      # round multipliers
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85      # key schedule (golden ratio, sqrt(3) - 1)


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


class Philox4x32Base:
    """A vector of Philox4x32 generators (one per lane), as Dr.Jit's ``Philox4x32``.

    ``Philox4x32(seed, counter_0, counter_1=0, counter_2=0, iterations=7)``: ``seed`` is the
    64-bit key (``UInt64`` array or Python int), ``counter_0..2`` the first three counter words
    (``UInt32`` arrays or ints; the fourth starts at 0 and counts the calls).
    ``Philox4x32(other)`` copies another one.

    ``seed`` (``Array2u``: high, low word), ``counter`` (``Array4u``) and ``iterations`` are what
    the traversal protocol hands to ``fj.eval``, AD and frozen functions (not a ``DRJIT_STRUCT``,
    as in Dr.Jit: ``fj.is_struct_v(Philox4x32)`` is False); ``iterations`` is a Python int that
    a frozen function treats as part of its key.

    Examples
    --------
    >>> import frostjit as fj
    >>> from frostjit.llvm import Philox4x32, UInt32
    >>> rng = Philox4x32(seed=1, counter_0=fj.arange(UInt32, 1000))
    >>> u = rng.next_float32x4()      # Array4f: 4 uniform floats per lane, as Dr.Jit's
    """

    __slots__ = ("seed", "counter", "iterations")
    _types: ArrayTypes = None

    def __init__(self, seed, counter_0=None, counter_1=0, counter_2=0, iterations: int = 7):
        t = self._types
        if isinstance(seed, Philox4x32Base):
            self.seed = t.Array2u(*(new_handle(c) for c in seed.seed))
            self.counter = t.Array4u(*(new_handle(c) for c in seed.counter))
            self.iterations = seed.iterations
            return
        who = f"{type(self).__name__}()"
        if counter_0 is None:
            raise TypeError(f"{who}: missing the argument 'counter_0' (the first counter word)")
        if not _is_int(iterations) or iterations < 0:
            raise ValueError(f"{who}: 'iterations' must be an int >= 0, got {iterations!r}")
        if _is_int(seed):
            s = ops.convert_scalar(UInt64, seed, who)
            hi, lo = t.UInt32(s >> 32), t.UInt32(s & 0xFFFFFFFF)
        elif is_flat(seed) and seed._vt.is_integral and seed._backend is t.backend:
            s = t.UInt64(seed)
            hi, lo = t.UInt32(s >> 32), t.UInt32(s)
        else:
            raise TypeError(f"{who}: 'seed' must be a Python int or a UInt64 array, not {type(seed).__name__}")
        self.seed = t.Array2u(hi, lo)
        words = [self._word(c, f"counter_{k}", who) for k, c in enumerate((counter_0, counter_1, counter_2))]
        self.counter = t.Array4u(*words, t.UInt32(0))
        self.iterations = int(iterations)

    def _word(self, v, name: str, who: str):
        t = self._types
        if _is_int(v):
            return t.UInt32(ops.convert_scalar(UInt32, v, who))
        if is_flat(v) and v._vt.is_integral and v._backend is t.backend:
            return v if type(v) is t.UInt32 else t.UInt32(v)
        raise TypeError(f"{who}: '{name}' must be a Python int or a UInt32 array, not {type(v).__name__}")

    # -- freeze protocol: iterations is a Python value of the key, not an array ------------------
    def __fj_traverse__(self) -> dict:
        return {"seed": self.seed, "counter": self.counter, "iterations": self.iterations}

    def __fj_assign__(self, values: dict) -> None:
        for name, value in values.items():
            setattr(self, name, value)

    @classmethod
    def __fj_construct__(cls, values: dict):
        out = cls.__new__(cls)
        out.__fj_assign__(values)
        return out

    # -- the bijection ---------------------------------------------------------------------------
    def _block(self, mask):
        """The four output words of the current counter; then the counter's last word counts up
        (where ``mask`` is true)."""
        t = self._types
        u32, u64 = t.UInt32, t.UInt64
        c0, c1, c2, c3 = self.counter
        k0, k1 = self.seed
        for i in range(self.iterations):
            p0 = u64(c0) * PHILOX_M0
            p1 = u64(c2) * PHILOX_M1
            c0, c1, c2, c3 = u32(p1 >> 32) ^ c1 ^ k0, u32(p1), u32(p0 >> 32) ^ c3 ^ k1, u32(p0)
            if i + 1 < self.iterations:
                k0 = k0 + PHILOX_W0
                k1 = k1 + PHILOX_W1
        last = self.counter[3]
        if mask is True:
            last = last + 1
        elif mask is not False:
            last = select(mask, last + 1, last)
        self.counter = t.Array4u(self.counter[0], self.counter[1], self.counter[2], last)
        return c0, c1, c2, c3

    def next_uint32x4(self, mask=True):
        """Four uniform ``UInt32`` per lane (an ``Array4u``); lanes where ``mask`` is false do not
        advance."""
        return self._types.Array4u(*self._block(check_mask(mask, "Philox4x32.next_uint32x4()", self._types)))

    def _uint64x2(self, mask, who):
        t = self._types
        w = self._block(check_mask(mask, who, t))
        u64 = t.UInt64
        return u64(w[0]) | (u64(w[1]) << 32), u64(w[2]) | (u64(w[3]) << 32)

    def next_uint64x2(self, mask=True):
        """Two uniform ``UInt64`` per lane (an ``Array2u64``: words 1:0 and 3:2 of a block)."""
        return self._types.Array2u64(*self._uint64x2(mask, "Philox4x32.next_uint64x2()"))

    def _float32x4(self, mask, who):
        t = self._types
        w = self._block(check_mask(mask, who, t))
        return [variates.float32_from_uint32(x, t.Float32) for x in w]

    def next_float16x4(self, mask=True):
        """Four uniform ``Float16`` per lane (an ``Array4f16``): :meth:`next_float32x4` rounded to
        half precision, as Dr.Jit (so ``1.0`` is possible)."""
        t = self._types
        return t.Array4f16(*(t.Float16(x) for x in self._float32x4(mask, "Philox4x32.next_float16x4()")))

    def next_float32x4(self, mask=True):
        """Four uniform ``Float32`` on ``[0, 1)`` per lane (an ``Array4f``)."""
        return self._types.Array4f(*self._float32x4(mask, "Philox4x32.next_float32x4()"))

    def _float64x2(self, mask, who):
        t = self._types
        return [variates.float64_from_uint64(x, t.Float64) for x in self._uint64x2(mask, who)]

    def next_float64x2(self, mask=True):
        """Two uniform ``Float64`` on ``[0, 1)`` per lane (an ``Array2f64``)."""
        return self._types.Array2f64(*self._float64x2(mask, "Philox4x32.next_float64x2()"))

    def next_float32x4_normal(self, mask=True):
        """Four standard normal ``Float32`` per lane: Box-Muller on the pairs (x, z) and (y, w)
        of :meth:`next_float32x4` (angles from x, y; radii from z, w)."""
        u = self._float32x4(mask, "Philox4x32.next_float32x4_normal()")
        a = variates.box_muller(u[0], u[2])
        b = variates.box_muller(u[1], u[3])
        return self._types.Array4f(a[0], a[1], b[0], b[1])

    def next_float16x4_normal(self, mask=True):
        """Four standard normal ``Float16`` per lane: :meth:`next_float32x4_normal` rounded."""
        t = self._types
        u = self._float32x4(mask, "Philox4x32.next_float16x4_normal()")
        a = variates.box_muller(u[0], u[2])
        b = variates.box_muller(u[1], u[3])
        return t.Array4f16(*(t.Float16(x) for x in (a[0], a[1], b[0], b[1])))

    def next_float64x2_normal(self, mask=True):
        """Two standard normal ``Float64`` per lane: Box-Muller on :meth:`next_float64x2`
        (radius from x, angle from y)."""
        u = self._float64x2(mask, "Philox4x32.next_float64x2_normal()")
        return self._types.Array2f64(*variates.box_muller(u[1], u[0]))


def make_philox4x32(types: ArrayTypes, module: str) -> type:
    """The ``Philox4x32`` class of one backend and AD status."""
    return type("Philox4x32", (Philox4x32Base,), {
        "__slots__": (), "_types": types, "__module__": module, "__qualname__": "Philox4x32",
    })
