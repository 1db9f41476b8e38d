"""Reductions that Dr.Jit's ``test_reduction.py`` (0ce49a06) found different in session r15.

* ``fj.count`` of the scalar backend's ``TensorXb`` summed the mask as a mask: ``True`` (a
  ``TensorXb``) for ``[True, False, True]`` where Dr.Jit gives the ``TensorXu`` 2 (a wrong
  value; the ``llvm`` tensor was right).  Expected: NumPy's ``count_nonzero``.
* ``fj.norm``/``fj.squared_norm`` of a tensor over axes that leave one entry is a 0-d tensor in
  Dr.Jit (shape ``(1, 1, 5)`` over axis 2: ``()``), where ``fj.sum`` keeps ``(1, 1)``.
* ``keepdims=True`` over a static axis raises a ``RuntimeError`` (Dr.Jit's type) as well as the
  ``ValueError`` it was.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as S


@settings(max_examples=25)
@given(bits=st.lists(st.booleans(), min_size=0, max_size=12), backend=st.sampled_from(["scalar", "llvm"]))
def test_count_of_a_mask_tensor_is_the_number_of_true_entries(bits, backend):
    m = S if backend == "scalar" else L
    got = fj.count(m.TensorXb(np.array(bits, dtype=bool)))
    assert type(got) is m.TensorXu and got.shape == ()
    assert int(got.array[0]) == np.count_nonzero(bits)


@settings(max_examples=20)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data())
def test_tensor_norm_over_axes_that_leave_one_entry_is_0d(shape, data):
    x = np.arange(1, np.prod(shape) + 1, dtype=np.float32).reshape(shape)
    axis = data.draw(st.sampled_from(range(len(shape))))
    got = fj.norm(L.TensorXf(x), axis=axis)
    want = np.sqrt(np.sum(x * x, axis=axis))
    assert got.shape == (() if want.size == 1 else want.shape)
    np.testing.assert_allclose(np.asarray(got.numpy()).reshape(want.shape), want, rtol=1e-5)
    keep = fj.squared_norm(L.TensorXf(x), axis=axis, keepdims=True)
    assert keep.shape == np.sum(x * x, axis=axis, keepdims=True).shape       # keepdims keeps its axes


def test_keepdims_over_a_static_axis_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="keepdims=True"):
        fj.sum(L.Array3f([1, 2], [3, 4], [5, 6]), axis=0, keepdims=True)
    with pytest.raises(ValueError, match="keepdims=True"):
        fj.sum([1.0, 2.0], keepdims=True)
