"""Reductions with ``axis=None`` of nested static arrays (``Array22f``, ``Matrix3f``) reduce every entry.

``fj.sum(Array22f(...), axis=None)`` raised ``AttributeError: 'Array2f' object has no attribute
'_node'`` and ``fj.mean`` divided by the outer size and the width only.
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm


@pytest.mark.parametrize("width", [1, 7, 1000])
@pytest.mark.parametrize("cls, dims", [(llvm.Array22f, (2, 2)), (llvm.Matrix3f, (3, 3)), (llvm.Array33f, (3, 3))])
def test_full_reductions_of_nested_arrays_match_numpy(cls, dims, width):
    ref = np.random.default_rng(width).random(dims + (width,)).astype(np.float32)
    v = cls(ref)
    np.testing.assert_allclose(fj.sum(v, axis=None).numpy(), [ref.sum(dtype=np.float64)], rtol=1e-5)
    np.testing.assert_array_equal(fj.max(v, axis=None).numpy(), [ref.max()])
    np.testing.assert_array_equal(fj.min(v, axis=None).numpy(), [ref.min()])
    np.testing.assert_allclose(fj.mean(v, axis=None).numpy(), [ref.mean(dtype=np.float64)], rtol=1e-5)


def test_count_and_all_of_a_nested_mask():
    m = llvm.Array22b([True, False], [True, True])
    assert fj.count(m, axis=None).numpy().tolist() == [3]
    assert fj.all(m, axis=None).numpy().tolist() == [False]
    assert fj.any(m, axis=None).numpy().tolist() == [True]
