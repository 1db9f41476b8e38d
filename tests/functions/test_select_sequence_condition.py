"""select() with a Python list/tuple of bools as the condition: the mask type of the array branch,
as in Dr.Jit 1.5 (checked side by side, session r14; frostjit raised "the condition must be a Bool
array"); a list of masks gives one per component of a static array.  A sequence of numbers raises
(Dr.Jit: "Could not promote type 'list'")."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as S

CLASSES = [S.ArrayXf, L.Float, L.TensorXf]


@settings(max_examples=20)
@given(cls=st.sampled_from(CLASSES), data=st.data(), seq=st.sampled_from([list, tuple]),
       number_branch=st.booleans())
def test_a_bool_sequence_condition_selects_like_numpy_where(cls, data, seq, number_branch):
    n = data.draw(st.integers(1, 6), label="width")
    mask = data.draw(st.lists(st.booleans(), min_size=n, max_size=n), label="mask")
    a = np.arange(1, n + 1, dtype=np.float32)
    b = -a
    x = cls(list(a)) if cls is L.TensorXf else cls(*a)
    y = 5.0 if number_branch else (cls(list(b)) if cls is L.TensorXf else cls(*b))
    got = fj.select(seq(mask), x, y)
    assert type(got) is cls
    assert np.array_equal(np.asarray(got.numpy()).ravel(), np.where(mask, a, 5.0 if number_branch else b))


@pytest.mark.parametrize("cls", [S.Array2f, L.Array2f])
def test_static_arrays_take_the_sequence_as_components(cls):
    r = fj.select([True, False], cls(1, 2), cls(3, 4))
    assert type(r) is cls and np.asarray(r.numpy()).ravel().tolist() == [1, 4]


def test_a_sequence_of_masks_gives_one_per_component():
    m0, m1 = L.Bool(True, False), L.Bool(False, True)
    r = fj.select([m0, m1], L.Array2f(1, 2), L.Array2f(3, 4))
    # one mask per component: component 0 is [1, 3], component 1 [4, 2] (Dr.Jit prints the lanes,
    # [[1, 4], [3, 2]])
    assert type(r) is L.Array2f and np.asarray(r.numpy()).tolist() == [[1, 3], [4, 2]]
    r = fj.select((m0, True), L.Array2f(1, 2), L.Array2f(3, 4))
    assert np.asarray(r.numpy()).tolist() == [[1, 3], [2, 2]]


def test_a_sequence_of_non_bools_raises():
    with pytest.raises(TypeError, match="cannot convert the condition"):
        fj.select([1, 0], L.Float(1, 2), L.Float(3, 4))
