"""Gathers whose Int32 index is provably in [0, 2^31): the AVX2 lowering compares it with the
source size signed (codegen/memory.py: ``int32_range``), so the range analysis must never call
an index non-negative that can be negative; a clamped index must still be bounds-checked."""
from types import SimpleNamespace

import numpy as np
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.backend.llvm.codegen.memory import int32_range
from frostjit.llvm import Bool, Float, Int32
from frostjit.trace.dtypes import Bool as B
from frostjit.trace.dtypes import Float32, Int32 as I32, UInt32


def _spec(*instrs):
    """A spec of ``(op, vt, args, value)`` tuples, as ``int32_range`` reads it."""
    return SimpleNamespace(instrs=[SimpleNamespace(op=op, vt=vt, args=args, value=value)
                                   for op, vt, args, value in instrs])


def test_int32_range_bounds_clamps_and_refuses_what_may_wrap():
    x = ("cast", I32, (), None)                               # 0: a value of any range
    s = _spec(x, ("literal", I32, (), 0), ("literal", I32, (), 1023), ("max", I32, (0, 1), None),
              ("min", I32, (3, 2), None),                      # 4: clip(x, 0, 1023)
              ("literal", I32, (), 1024), ("fma", I32, (4, 5, 4), None),     # 6: a texel index
              ("literal", I32, (), 2 ** 22), ("mul", I32, (4, 7), None),     # 8: 1023 * 2^22 wraps
              ("add", I32, (6, 1), None), ("sub", I32, (4, 2), None),        # 9, 10
              ("min", I32, (0, 2), None),                      # 11: at most 1023, any sign
              ("mul", I32, (3, 1), None),                      # 12: max(x, 0) * 0: unbounded above first
              ("literal", UInt32, (), 5), ("literal", I32, (), True), ("literal", Float32, (), 1.0),
              ("literal", I32, (), 2 ** 32 - 1))                 # 16: emitted as -1
    assert int32_range(s, 0) == (None, None)
    assert int32_range(s, 3) == (0, None)
    assert int32_range(s, 4) == (0, 1023)
    assert int32_range(s, 6) == (0, 1023 * 1024 + 1023)
    assert int32_range(s, 8) == (None, None)
    assert int32_range(s, 9) == (0, 1023 * 1024 + 1023)
    assert int32_range(s, 10) == (-1023, 0)
    assert int32_range(s, 11) == (None, 1023)
    assert int32_range(s, 12) == (None, None)
    assert int32_range(s, 13) == (None, None)    # not Int32
    assert int32_range(s, 14) == (None, None)    # a bool is not a bound
    assert int32_range(s, 15) == (None, None)
    assert int32_range(s, 16) == (-1, -1)
    # floor_mod(x, 64) = select(x % 64 < 0, x % 64 + 64, x % 64), and its Mirror form
    m = _spec(x, ("literal", I32, (), 64), ("mod", I32, (0, 1), None), ("literal", I32, (), 0),
              ("lt", B, (2, 3), None), ("add", I32, (2, 1), None), ("select", I32, (4, 5, 2), None),   # 6
              ("sub", I32, (2, 1), None), ("select", I32, (4, 7, 2), None),     # 8: r - 64 where r < 0
              ("literal", I32, (), 32), ("ge", B, (6, 9), None), ("literal", I32, (), 63),
              ("sub", I32, (11, 6), None), ("select", I32, (10, 12, 6), None),  # 13: mirror of 6 at 32
              ("select", I32, (4, 2, 5), None),                 # 14: r where r < 0, r + 64 elsewhere
              ("mod", I32, (0, 3), None), ("gt", B, (9, 0), None),           # 15: by 0; 16: 32 > x
              ("select", I32, (16, 1, 3), None))                # 17: literal on the left: a plain union
    assert int32_range(m, 2) == (-63, 63)
    assert int32_range(m, 6) == (0, 63)
    assert int32_range(m, 8) == (-127, 63)
    assert int32_range(m, 13) == (0, 31)
    assert int32_range(m, 14) == (-63, 127)
    assert int32_range(m, 15) == (None, None)
    assert int32_range(m, 17) == (0, 64)
    # a chain deeper than the walk goes is unbounded
    chain = [("literal", I32, (), 1)] + [("add", I32, (k, 0), None) for k in range(40)]
    assert int32_range(_spec(*chain), 40) == (None, None)
    assert int32_range(_spec(*chain), 10) == (11, 11)
    # values used twice at every step (x + x, 60 deep): walked once each, not 2^60 times
    doubling = [("literal", I32, (), 1)] + [("add", I32, (k, k), None) for k in range(60)]
    assert int32_range(_spec(*doubling), 20) == (2 ** 20, 2 ** 20)
    assert int32_range(_spec(*doubling), 60) == (None, None)


@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([1, 7, 16, 33, 100]))
def test_clamped_and_wrapping_indices_read_like_numpy(seed, n):
    """clip(i, 0, 99) into sources shorter than 100 (lanes past the end read 0 although the index
    is non-negative), the clamped index times 2^25 (wraps negative: must read 0), Repeat's
    floor_mod, and a select of a remainder that stays negative (must read 0)."""
    rng = np.random.default_rng(seed)
    size = int(rng.choice([0, 1, 50, 99, 100, 150]))
    src = rng.integers(-1000, 1000, size).astype(np.float32)
    raw = rng.integers(-300, 300, n).astype(np.int32)
    active = rng.random(n) < 0.8
    clamped = np.clip(raw, 0, 99)
    wrapped = (clamped.astype(np.int64) * 2 ** 25).astype(np.uint32).view(np.int32)   # Int32 wrap
    i = fj.clip(Int32(raw), 0, 99)
    g1 = fj.gather(Float, Float(src), i, Bool(active))
    g2 = fj.gather(Float, Float(src), i * 2 ** 25, Bool(active))
    # floor_mod as textures' Repeat builds it (in [0, 64)), and a select that goes negative
    r = Int32(raw) % 64
    g3 = fj.gather(Float, Float(src), fj.select(r < 0, r + 64, r), Bool(active))
    g4 = fj.gather(Float, Float(src), fj.select(r < 0, r - 64, r), Bool(active))
    fj.eval(g1, g2, g3, g4)
    c_rem = np.fmod(raw, 64)
    for g, idx in ((g1, clamped), (g2, wrapped), (g3, np.mod(raw, 64)), (g4, np.where(c_rem < 0, c_rem - 64, c_rem))):
        # (a source of one element broadcasts it, whatever the index: Dr.Jit's rule)
        ok = active & (((idx >= 0) & (idx < size)) | (size == 1))
        expect = np.where(ok, src[np.where(ok & (size > 1), idx, 0)] if size else 0, 0).astype(np.float32)
        assert np.array_equal(g.numpy(), expect)
