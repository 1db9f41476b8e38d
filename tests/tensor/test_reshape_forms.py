"""fj.reshape's two forms, as Dr.Jit 1.5 (answers recorded side by side): reshape(value, shape)
and reshape(dtype, value, shape, order=..., shrink=...) converting to a tensor, 1-D or static
array type; PyTrees entry by entry; shrink=True keeps the first elements."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Array2f, Array3f, Float, TensorXf, TensorXi


def rows(x):
    return x.numpy().tolist()


def test_dtype_first_form_makes_tensors():
    v = Float(0, 1, 2, 3, 4, 5)
    assert rows(fj.reshape(TensorXf, v, (2, 3))) == [[0, 1, 2], [3, 4, 5]]
    t = fj.reshape(TensorXf, v, shape=(3, -1))
    assert t.shape == (3, 2) and rows(t) == [[0, 1], [2, 3], [4, 5]]
    assert fj.reshape(TensorXf, fj.reshape(TensorXf, v, (2, 3)), 6).shape == (6,)
    i = fj.reshape(TensorXi, Float(0, 1, 2, 3), (2, 2))
    assert type(i) is TensorXi and rows(i) == [[0, 1], [2, 3]]


def test_dtype_first_form_ravels_and_unravels_static_arrays():
    value = Array2f([1, 2, 3], [4, 5, 6])
    # (Dr.Jit 1.5 measured: "C" keeps each component's entries together, "F"/"A" interleave)
    assert rows(fj.reshape(Array3f, value, shape=(3, -1), order="C")) == rows(Array3f([1, 2], [3, 4], [5, 6]))
    assert rows(fj.reshape(Array3f, value, shape=(3, -1), order="F")) == rows(Array3f([1, 5], [4, 3], [2, 6]))
    assert rows(fj.reshape(Array3f, value, shape=(3, -1))) == rows(Array3f([1, 5], [4, 3], [2, 6]))
    assert rows(fj.reshape(Float, value, -1)) == [1, 4, 2, 5, 3, 6]
    assert rows(fj.reshape(Float, value, -1, order="C")) == [1, 2, 3, 4, 5, 6]
    assert rows(fj.reshape(Array3f, Float(1, 2, 3, 4, 5, 6), (3, 2))) == rows(Array3f([1, 4], [2, 5], [3, 6]))
    assert rows(fj.reshape(Float, TensorXf(Float(0, 1, 2, 3), shape=(2, 2)), -1)) == [0, 1, 2, 3]


def test_pytrees_reshape_entry_by_entry():
    out = fj.reshape([TensorXf(Float(0, 1, 2, 3), shape=(2, 2))], (4,))
    assert isinstance(out, list) and out[0].shape == (4,)
    d = fj.reshape({"a": Float(1, 2, 3, 4)}, (2, 2))
    assert rows(d["a"]) == [[1, 2], [3, 4]]


def test_shrink_keeps_the_first_elements():
    assert rows(fj.reshape(Float, Float(1, 2, 3, 4, 5), 3, shrink=True)) == [1, 2, 3]
    assert rows(fj.reshape(Float(1, 2, 3, 4, 5), 3, shrink=True)) == [1, 2, 3]
    assert rows(fj.reshape(Float(1, 2), 0, shrink=True)) == []
    with pytest.raises(ValueError, match="between 0 and the width 2"):
        fj.reshape(Float(1, 2), 3, shrink=True)


@pytest.mark.parametrize("call, error, match", [
    (lambda: fj.reshape(Array3f, Float(1, 2, 3, 4, 5, 6), (2, 3)), ValueError, "must be 3"),
    (lambda: fj.reshape(Float, Array2f([1, 2], [3, 4]), (2, 2)), ValueError, "has shape"),
    (lambda: fj.reshape(TensorXf, Float(1, 2, 3), (2, 2)), ValueError, "cannot reshape 3 elements"),
    (lambda: fj.reshape(TensorXf, Float(1, 2, 3, 4), (2, 2), "F"), ValueError, "order 'A' or 'C'"),
    (lambda: fj.reshape(int, Float(1, 2), 2), TypeError, "'dtype' must be"),
])
def test_bad_arguments_raise_naming_them(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_reshape_in_frozen_functions_replays_at_new_widths():
    f = fj.freeze(lambda v: fj.reshape(TensorXf, v, (2, -1)))
    for n in (4, 10, 1000):
        v = fj.arange(Float, n)
        np.testing.assert_array_equal(f(v).numpy(), np.arange(n, dtype=np.float32).reshape(2, -1))
