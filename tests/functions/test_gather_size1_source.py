"""Gathers from a source of size 1 broadcast its value, as Dr.Jit's (drjit-core elides such a
gather and never reads the index): ``source[0]`` where active, 0 elsewhere, whatever the index.

Found by the session-r10 sweep of Dr.Jit's documented examples: ``gather(MyStruct, x, i)`` of a
``DRJIT_STRUCT`` whose ``Array3f`` holds a literal component (``Array3f(x, 5, z)``) read 0 for
that component at every index but 0.  The expected values are NumPy's; the derivatives are
checked against their definition (forward: the tangent wherever active; reverse: the sum of
the active lanes' cotangents).
"""
import numpy as np
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Array3f, Bool, Float, Int32, UInt32, UInt64
from frostjit.llvm.ad import Float as FloatD

INDEX = {"UInt32": (UInt32, 2**32), "Int32": (Int32, 2**31), "UInt64": (UInt64, 2**40)}


def _expect(v, active) -> np.ndarray:
    return np.where(active, np.float32(v), np.float32(0))


@given(v=st.floats(-1e6, 1e6, width=32), n=st.integers(1, 70), kind=st.sampled_from(sorted(INDEX)),
       literal=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_size1_source_broadcasts(v, n, kind, literal, seed):
    rng = np.random.default_rng(seed)
    itype, hi = INDEX[kind]
    idx = rng.integers(0, min(hi, 2**31), n)            # mostly far out of bounds of size 1
    act = rng.random(n) < 0.7
    src = Float(v)
    if not literal:
        fj.make_opaque(src)                             # an evaluated array of size 1 too
    got = fj.gather(Float, src, itype(idx), Bool(act))
    assert np.array_equal(got.numpy(), _expect(v, act))
    assert np.array_equal(fj.gather(Float, src, itype(idx)).numpy(), np.full(n, np.float32(v)))


def test_nested_source_with_a_literal_component():
    src = Array3f(Float(1, 2, 3), 5, Float(7, 8, 9))    # y is a literal of size 1
    got = fj.gather(Array3f, src, UInt32(2, 0, 1), Bool(True, True, False))
    assert got.numpy().tolist() == [[3, 1, 0], [5, 5, 0], [9, 7, 0]]


def test_struct_source_with_a_literal_component():
    class S:
        DRJIT_STRUCT = {"a": Array3f, "b": UInt32}

        def __init__(self, a=None, b=None):
            self.a, self.b = a, b
    s = S(Array3f(Float(1, 2, 3), 5, Float(7, 8, 9)), UInt32(10, 20, 30))
    g = fj.gather(S, s, UInt32(2, 0), Bool(True, False))
    assert g.a.numpy().tolist() == [[3, 0], [5, 0], [9, 0]]
    assert g.b.numpy().tolist() == [30, 0]


def test_wider_sources_still_read_out_of_bounds_as_zero():
    # only size 1 broadcasts: a size-2 source reads 0 out of bounds (frostjit's rule, unchanged)
    assert fj.gather(Float, Float(5, 6), UInt32(3, 1, 0)).numpy().tolist() == [0, 6, 5]


def test_debug_mode_does_not_flag_a_size1_source():
    with fj.scoped_set_flag(fj.JitFlag.Debug, True):
        assert fj.gather(Float, Float(5), UInt32(7, 1)).numpy().tolist() == [5, 5]


@given(n=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_size1_source_derivatives(n, seed):
    rng = np.random.default_rng(seed)
    idx = UInt32(rng.integers(0, 50, n))
    act = rng.random(n) < 0.6
    w = rng.standard_normal(n).astype(np.float32)
    x = FloatD(2.5)
    fj.enable_grad(x)
    y = fj.gather(FloatD, x, idx, Bool(act))
    fj.backward(y * FloatD(w))
    assert np.allclose(x.grad.numpy(), [w[act].sum(dtype=np.float64)], rtol=1e-5, atol=1e-5)
    x = FloatD(2.5)
    fj.enable_grad(x)
    y = fj.gather(FloatD, x, idx, Bool(act))
    fj.set_grad(x, 3.0)
    fj.forward_to(y)
    assert np.array_equal(y.grad.numpy(), _expect(3.0, act))


def test_frozen_replay_matches_plain():
    def f(src, idx):
        return fj.gather(Float, src, idx) * 2

    ff = fj.freeze(f)
    for v, n in [(1.5, 4), (2.5, 9), (-3.0, 17)]:
        idx = UInt32(np.arange(n) * 3)
        assert np.array_equal(ff(Float(v), idx).numpy(), f(Float(v), idx).numpy())
    # a wide source after size-1 ones: another layout (size 1 broadcasts), read at the indices
    src, idx = Float(np.arange(30, dtype=np.float32)), UInt32(np.arange(5) * 3)
    assert np.array_equal(ff(src, idx).numpy(), f(src, idx).numpy())
    assert ff(src, idx).numpy().tolist() == [0, 6, 12, 18, 24]
