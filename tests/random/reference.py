"""Plain NumPy reference implementations of PCG32 and Philox4x32 (integer outputs only), from
the published algorithms, for differential tests at arbitrary seeds and widths."""
from __future__ import annotations

import numpy as np

MULT = np.uint64(0x5851F42D4C957F2D)
U64 = np.uint64


def _u64(v, n):
    return np.broadcast_to(np.asarray(v, dtype=np.uint64), (n,)).copy()


class RefPCG32:
    """O'Neill's pcg32 (XSH-RR) per lane, seeded as Dr.Jit's constructor does."""

    def __init__(self, n, initstate, initseq):
        lane = np.arange(n, dtype=np.uint64)
        with np.errstate(over="ignore"):
            s, q = _u64(initstate, n) + lane, _u64(initseq, n) + lane
            self.inc = (q << U64(1)) | U64(1)
            self.state = np.zeros(n, dtype=np.uint64)
            self.next_uint32()
            self.state = self.state + s
            self.next_uint32()

    @staticmethod
    def output(old):
        xorshifted = (((old >> U64(18)) ^ old) >> U64(27)).astype(np.uint32)
        rot = (old >> U64(59)).astype(np.uint32)
        return (xorshifted >> rot) | (xorshifted << ((np.uint32(0) - rot) & np.uint32(31)))

    def next_uint32(self, mask=None):
        old = self.state
        with np.errstate(over="ignore"):
            new = old * MULT + self.inc
        self.state = new if mask is None else np.where(mask, new, old)
        return self.output(old)

    def next_uint64(self, mask=None):
        lo = self.next_uint32(mask).astype(np.uint64)
        hi = self.next_uint32(mask).astype(np.uint64)
        return lo | (hi << U64(32))

    def advance(self, delta):
        """``delta`` steps per lane (int64 array), one step at a time (slow, obviously right)."""
        delta = np.asarray(delta, dtype=np.int64)
        for lane in range(self.state.shape[0]):
            d = int(delta[lane])
            one = RefPCG32.__new__(RefPCG32)
            one.state, one.inc = self.state[lane:lane + 1].copy(), self.inc[lane:lane + 1].copy()
            if d >= 0:
                for _ in range(d):
                    one.next_uint32()
            else:
                inv = U64(pow(int(MULT), -1, 1 << 64))
                for _ in range(-d):
                    with np.errstate(over="ignore"):
                        one.state = (one.state - one.inc) * inv
            self.state[lane] = one.state[0]


def distance(target, start, inc):
    """Steps from ``start`` to ``target`` per lane (uint64 arrays; ``inc`` the stream), Brown's
    algorithm as 64 rounds over the bits, lowest first: bit ``k`` is set where the states still
    differ in bit ``k`` (for an even ``inc``, whatever those 64 rounds give)."""
    target, cur, inc = (np.asarray(x, dtype=np.uint64) for x in np.broadcast_arrays(target, start, inc))
    cur, dist = cur.copy(), np.zeros_like(cur)
    mult, plus = MULT, inc.copy()
    with np.errstate(over="ignore"):
        for k in range(64):
            bit = U64(1 << k)
            differ = ((target ^ cur) & bit) != 0
            cur = np.where(differ, cur * mult + plus, cur)
            dist |= np.where(differ, bit, U64(0))
            plus = (mult + U64(1)) * plus
            mult = mult * mult
    return dist.view(np.int64)


def jump(state, inc, delta):
    """The state after ``delta`` steps per lane (int64 array, two's complement for negative
    counts), from Python integers: ``a * state + b * inc`` with ``(a, b)`` composed bit by bit."""
    out = []
    for s, c, d in zip(*(np.broadcast_arrays(np.asarray(state, np.uint64), np.asarray(inc, np.uint64),
                                             np.asarray(delta, np.int64)))):
        d, s, c = int(d) % (1 << 64), int(s), int(c)
        a, b, m, p = 1, 0, int(MULT), 1
        while d:
            if d & 1:
                a, b = (a * m) % (1 << 64), (b * m + p) % (1 << 64)
            m, p, d = (m * m) % (1 << 64), ((m + 1) * p) % (1 << 64), d >> 1
        out.append((a * s + b * c) % (1 << 64))
    return np.array(out, dtype=np.uint64)


PHILOX_M = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
PHILOX_W = (np.uint32(0x9E3779B9), np.uint32(0xBB67AE85))


def philox4x32(counter, key, rounds=7):
    """Salmon et al.'s Philox4x32-R: ``counter`` (4 uint32 arrays), ``key`` (2 uint32 arrays)."""
    c = [np.asarray(x, dtype=np.uint32) for x in counter]
    k0, k1 = (np.asarray(x, dtype=np.uint32) for x in key)
    for _ in range(rounds):
        p0 = c[0].astype(np.uint64) * PHILOX_M[0]
        p1 = c[2].astype(np.uint64) * PHILOX_M[1]
        c = [(p1 >> U64(32)).astype(np.uint32) ^ c[1] ^ k0, p1.astype(np.uint32),
             (p0 >> U64(32)).astype(np.uint32) ^ c[3] ^ k1, p0.astype(np.uint32)]
        with np.errstate(over="ignore"):
            k0, k1 = k0 + PHILOX_W[0], k1 + PHILOX_W[1]
    return c
