"""A list or tuple operand of a tensor operator is a tensor of the other operand's type (Dr.Jit).

``TensorXf([1, 2]) + [1, 3]`` and ``TensorXf([1, 2]) == [1, 3]`` raised ``TypeError``.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit import llvm

small = st.integers(-1000, 1000)


@given(st.lists(small, min_size=1, max_size=12), st.data())
def test_tensor_with_a_list_matches_numpy(xs, data):
    ys = data.draw(st.lists(small, min_size=len(xs), max_size=len(xs)))
    t = llvm.TensorXf(np.float32(xs))
    np.testing.assert_array_equal((t + ys).numpy(), np.float32(xs) + np.float32(ys))
    np.testing.assert_array_equal((tuple(ys) * t).numpy(), np.float32(ys) * np.float32(xs))
    np.testing.assert_array_equal((t == ys).numpy(), np.float32(xs) == np.float32(ys))


def test_list_broadcasts_along_the_last_axis():
    r = llvm.TensorXf([[1, 2], [3, 4]]) + [10, 20]
    np.testing.assert_array_equal(r.numpy(), [[11, 22], [13, 24]])


def test_python_float_in_the_list_makes_an_integer_tensor_float():
    r = llvm.TensorXi([1, 2]) + [0.5, 1]
    assert type(r) is llvm.TensorXf and r.numpy().tolist() == [1.5, 3]


def test_list_beside_a_mask_takes_the_value_tensors_type():
    r = fj.select(llvm.TensorXb([True, False]), [1, 2], llvm.TensorXf([5, 6]))
    assert type(r) is llvm.TensorXf and r.numpy().tolist() == [1, 6]
    with pytest.raises(TypeError):
        fj.select(llvm.TensorXb([True, False]), [1, 2], 0)
