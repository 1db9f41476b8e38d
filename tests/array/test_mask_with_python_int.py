"""A mask combined with a Python int counts as 0/1 and gives an ``Int`` (Dr.Jit 1.5).

``Bool(...) * 2``, ``1 - mask`` and ``mask | 1`` raised "arithmetic is not defined for Bool
arrays" or stayed a ``Bool``; two masks still refuse arithmetic, and ``mask & True`` stays a mask.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit import llvm, scalar


@given(st.lists(st.booleans(), min_size=1, max_size=20), st.integers(-100, 100))
def test_mask_arithmetic_with_a_python_int_matches_numpy_int32(bits, k):
    m = llvm.Bool(bits)
    ref = np.array(bits, dtype=np.int32)
    for got, want in ((m * k, ref * k), (m + k, ref + k), (k - m, k - ref), (m | 1, ref | 1)):
        assert type(got) is llvm.Int
        np.testing.assert_array_equal(got.numpy(), want)


def test_mask_with_python_bool_and_with_a_mask_are_unchanged():
    m = llvm.Bool(True, False)
    assert type(m & True) is llvm.Bool and (m & True).numpy().tolist() == [True, False]
    assert type(m == 1) is llvm.Bool and (m == 1).numpy().tolist() == [True, False]
    with pytest.raises(TypeError):
        m + m


def test_static_and_scalar_masks_with_a_python_int():
    assert fj.all(scalar.Array2b(True, False) * 2 == scalar.Array2i(2, 0))
    r = llvm.Array3b(True, False, True) + 1
    assert type(r) is llvm.Array3i and fj.all(r == llvm.Array3i(2, 1, 2), axis=None)
