"""``zeros_like``/``ones_like``/``empty_like`` of a tensor keep its whole shape (Dr.Jit).

They took the width only: ``ones_like(TensorXf([[1, 2]]))`` had shape ``(2,)``.
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm, scalar


@pytest.mark.parametrize("shape", [(), (1,), (1, 2), (3, 1, 2), (2, 0)])
@pytest.mark.parametrize("cls", [llvm.TensorXf, llvm.TensorXi, scalar.TensorXf])
def test_like_functions_keep_the_tensor_shape(cls, shape):
    t = cls(np.ones(shape, dtype=np.float32))
    assert fj.zeros_like(t).shape == shape and fj.ones_like(t).shape == shape and fj.empty_like(t).shape == shape
    np.testing.assert_array_equal(fj.ones_like(t).numpy(), np.ones(shape))
    assert type(fj.zeros_like(t)) is cls


def test_frozen_ones_like_of_a_tensor_replays_at_new_batch_sizes():
    f = fj.freeze(lambda t: fj.ones_like(t) + t)
    for n in (2, 3, 5, 7):
        out = f(llvm.TensorXf(np.full((n, 2), 2.0, dtype=np.float32)))
        assert out.shape == (n, 2)
        np.testing.assert_array_equal(out.numpy(), np.full((n, 2), 3.0))
    assert f.n_recordings <= 2
