"""``fj.format``/``fj.print`` of a tensor print it in its own shape, as ``str(tensor)`` does.

They moved the last axis first (the lane axis of a static array), so a 2x3 tensor printed as
its 3x2 transpose.
"""
import io

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit import llvm, scalar


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_format_of_a_tensor_equals_its_str(shape):
    t = llvm.TensorXf(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
    assert fj.format(t) == str(t)
    assert fj.format("{}", t) == str(t)


@pytest.mark.parametrize("cls", [llvm.TensorXf, scalar.TensorXf, llvm.TensorXi])
def test_print_of_a_tensor(cls):
    out = io.StringIO()
    fj.print("{}", cls([[1, 2, 3], [4, 5, 6]]), file=out)
    assert out.getvalue() == "[[1, 2, 3],\n [4, 5, 6]]\n"
