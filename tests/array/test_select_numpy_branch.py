"""select() with a NumPy array (0-d or 1-D) or a Python list as one branch and a static array or a
scalar-backend dynamic array (``ArrayXf``) as the other: the NumPy branch takes the type of the
other *branch*, never the mask's, as in Dr.Jit 1.5 (checked side by side).  Before r14,
``select(Array3b, np.array(7), Array3i)`` gave ``[1, 2, 1]`` (7 converted to the mask's ``True``),
``select(Array3b, Array3f, np.array(5.5))`` a 3x3 ``Array33f``, and ``select(ArrayXb, ArrayXf,
ndarray)`` raised."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as S

# (mask class, float class, int class, width: None for a dynamic array of any width)
FAMILIES = [(L.Array3b, L.Array3f, L.Array3i, 3), (S.Array3b, S.Array3f, S.Array3i, 3),
            (S.ArrayXb, S.ArrayXf, S.ArrayXi, None)]


def values(x):
    return np.asarray(x.numpy(), dtype=np.float64).ravel()


@settings(max_examples=40)
@given(family=st.sampled_from(FAMILIES), data=st.data(), integral=st.booleans(),
       kind=st.sampled_from(["0d-int", "0d-float", "1d-f32", "1d-f64", "1d-i32", "list"]),
       numpy_first=st.booleans())
def test_a_numpy_branch_selects_like_numpy_where(family, data, integral, kind, numpy_first):
    mcls, fcls, icls, n = family
    n = n or data.draw(st.integers(1, 6), label="width")
    mask = data.draw(st.lists(st.booleans(), min_size=n, max_size=n), label="mask")
    arr = data.draw(st.lists(st.integers(-50, 50), min_size=n, max_size=n), label="array")
    other = data.draw(st.lists(st.integers(-50, 50), min_size=n, max_size=n), label="other")
    cls = icls if integral else fcls
    a = cls(*arr)
    half = [v + 0.5 for v in other]         # (exact in float32)
    if kind == "0d-int":
        branch, ref = np.array(other[0]), np.full(n, float(other[0]))
    elif kind == "0d-float":
        # a 0-d array is an element of the other branch's type: 7.5 beside integers is 7
        branch = np.array(half[0])
        ref = np.full(n, float(int(half[0])) if integral else half[0])
    elif kind == "1d-f32":
        branch, ref = np.array(half, dtype=np.float32), np.array(half)
    elif kind == "1d-f64":
        branch, ref = np.array(half), np.array(half)
    elif kind == "1d-i32":
        branch, ref = np.array(other, dtype=np.int32), np.array(other, dtype=np.float64)
    else:
        branch, ref = list(other), np.array(other, dtype=np.float64)
    m = mcls(*mask)
    if numpy_first:
        got, want = fj.select(m, branch, a), np.where(mask, ref, np.array(arr, dtype=np.float64))
    else:
        got, want = fj.select(m, a, branch), np.where(mask, np.array(arr, dtype=np.float64), ref)
    assert np.array_equal(values(got), want)
    assert fj.width(got) == fj.width(a) and len(got) == n
    if kind.startswith("0d") or kind == "list" or kind == "1d-i32" and not integral:
        assert type(got) is cls


@pytest.mark.parametrize("M, F, I", [(L.Array3b, L.Array3f, L.Array3i), (S.Array3b, S.Array3f, S.Array3i)])
def test_static_arrays_with_a_zero_dim_branch(M, F, I):
    m = M(True, False, True)
    r = fj.select(m, np.array(7), I(1, 2, 3))
    assert type(r) is I and values(r).tolist() == [7, 2, 7]
    r = fj.select(m, F(1, 2, 3), np.array(5.5))
    assert type(r) is F and values(r).tolist() == [1, 5.5, 3]
    r = fj.select(m, I(1, 2, 3), np.array([7.5, 8, 9], dtype=np.float32))
    assert type(r) is F and values(r).tolist() == [1, 8, 3]


def test_scalar_dynamic_arrays_with_a_numpy_branch():
    m = S.ArrayXb(True, False)
    r = fj.select(m, S.ArrayXf(1, 2), np.array([5, 6], dtype=np.float32))
    assert type(r) is S.ArrayXf and values(r).tolist() == [1, 6]
    r = fj.select(m, S.ArrayXf(1, 2), np.array([5.0, 6.0]))
    assert type(r) is S.ArrayXf64 and values(r).tolist() == [1, 6]
    r = fj.select(m, np.array(5.5), S.ArrayXf(1, 2))
    assert type(r) is S.ArrayXf and values(r).tolist() == [5.5, 2]
    r = fj.select(True, S.ArrayXf(1, 2), np.array([5, 6], dtype=np.float32))
    assert type(r) is S.ArrayXf and values(r).tolist() == [1, 2]
