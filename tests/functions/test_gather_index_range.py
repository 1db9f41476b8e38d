"""Gathers whose Int32 index is provably in [0, 2^31): the AVX2 lowering compares it with the
source size signed (codegen/memory.py: ``int32_range``), so the range analysis must never call
an index non-negative that can be negative; a clamped index must still be bounds-checked."""
from types import SimpleNamespace

import numpy as np
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.backend.llvm.codegen.memory import int32_range
from frostjit.llvm import Bool, Float, Int32
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
    is non-negative), and the clamped index times 2^25 (wraps negative: must read 0)."""
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
    fj.eval(g1, g2)
    for g, idx in ((g1, clamped), (g2, wrapped)):
        # (a source of one element broadcasts it, whatever the index: Dr.Jit's rule)
        ok = active & (((idx >= 0) & (idx < size)) | (size == 1))
        expect = np.where(ok, src[np.where(ok & (size > 1), idx, 0)] if size else 0, 0).astype(np.float32)
        assert np.array_equal(g.numpy(), expect)
