"""``fj.rng().random/normal/uniform(float, shape)``: one Python float, as Dr.Jit 1.5 draws it
(lane 0 of a ``Float64`` draw; the counter advances by one block), a scalar draw that leaves
the generator's seed and counter Python ints (so a JIT draw may follow), and Dr.Jit's
``repr``.  Session r16 (found beside Dr.Jit's ``test_rand.py``): ``dtype=float`` raised
``TypeError``, a JIT draw after a scalar-backend one raised ("the seed is a ArrayXu64"), and
the repr was ``Philox4x32Generator(symbolic=False)``."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as S


def test_recorded_drjit_values():
    # Dr.Jit 1.5.0, run side by side
    r = fj.rng(seed=5)
    assert r.normal(float, 1) == 0.8470560467114343
    assert r.normal(float, (1,)) == -0.8547518880631074
    assert r.uniform(float, 1, low=2, high=4) == 3.079259427303592
    assert repr(r) == "Philox4x32Generator[seed=5, counter=3]"
    r = fj.rng(seed=3)
    a = r.random(float, 1)
    assert type(a) is float and a == 0.21493433252645144
    assert r.random(L.Float, 2).numpy().tolist() == [0.3110877275466919, 0.6742079257965088]
    assert repr(r) == "Philox4x32Generator[seed=3, counter=2]"


@given(st.integers(0, 2**64 - 1), st.integers(0, 3), st.sampled_from(["random", "normal"]))
def test_python_float_is_lane_0_of_a_float64_draw(seed, skip, method):
    a, b = fj.rng(seed=seed), fj.rng(seed=seed)
    for _ in range(skip):               # (earlier scalar draws of one block each move both counters
        a.random(float, 1)              # alike; after a JIT draw the seed is a JIT array, which a
        b.random(S.Array2f, 2)          # scalar draw refuses, as Dr.Jit's)
    x = getattr(a, method)(float, 4)    # ('shape' does not change the one number drawn)
    y = getattr(b, method)(L.Float64, 1)
    assert type(x) is float and x == y[0]
    assert a.random(L.Float, 2).numpy().tolist() == b.random(L.Float, 2).numpy().tolist()


def test_a_jit_draw_may_follow_a_scalar_one():
    a, b = fj.rng(seed=7), fj.rng(seed=7)
    a.random(S.Array3f, 3)              # (one block, Python ints left behind)
    b.random(L.Float, 1)
    assert fj.all(a.random(L.Float, 4) == b.random(L.Float, 4))
    assert repr(a) == repr(b) == "Philox4x32Generator[seed=7, counter=2]"


def test_float_with_a_shape_of_two_dimensions_raises():
    with pytest.raises(RuntimeError, match="parameters are incompatible"):
        fj.rng().random(float, (2, 3))
