"""``fj.allclose`` of a 1-D array and a sequence of sequences (a nested list, a 2-D NumPy array)
compares the array with each row, as Dr.Jit's does (its ``a - b`` has the deeper ``ArrayXf``
type, the array broadcast to each component).

Found in session r15 by Dr.Jit's ``test_switch.py`` test15: ``dr.allclose(r, [[1.1, 4.2, 4.3,
123]])`` raised "Could not construct from sequence (invalid type in input)".  Expected values:
NumPy's ``allclose`` of the array broadcast against the rows (the array's width matches the
rows', or one of them is 1); Dr.Jit 1.5.0 gives the same on the probes listed in
docs/types.md.
"""
import numpy as np
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Bool, Float, Float64


@settings(max_examples=25)
@given(data=st.data(), n=st.integers(1, 6), rows=st.integers(1, 3), f64=st.booleans(),
       as_numpy=st.booleans(), swap=st.booleans())
def test_rows_compared_with_the_array(data, n, rows, f64, as_numpy, swap):
    base = np.array(data.draw(st.lists(st.integers(-50, 50), min_size=n, max_size=n)), float)
    delta = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.0, 1e-9, 0.5]), min_size=n * rows,
                                        max_size=n * rows))).reshape(rows, n)
    other = base + delta
    arr = (Float64 if f64 else Float)(base)
    b = other if as_numpy else other.tolist()
    got = fj.allclose(b, arr) if swap else fj.allclose(arr, b)
    assert type(got) is Bool and len(got) == 1
    want = np.allclose(other, base, rtol=1e-5 if f64 else 1e-3, atol=1e-8 if f64 else 1e-5) if swap else \
        np.allclose(base, other, rtol=1e-5 if f64 else 1e-3, atol=1e-8 if f64 else 1e-5)
    assert bool(got) == bool(want)


def test_a_column_broadcasts_against_the_array():
    # [[1], [2]] against Float(1, 2): each row (one number) against both lanes (Dr.Jit: False)
    assert not bool(fj.allclose(Float(1, 2), [[1], [2]]))
    assert bool(fj.allclose(Float(4), [[4, 4], (4,)]))
