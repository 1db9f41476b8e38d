"""A texture takes its texels as a NumPy array or a nested list too (Dr.Jit's implicit conversion).

``Texture2f(np.ones((2, 2, 1)))`` and ``Texture2f([[[1], [2]], [[3], [4]]])`` raised
``TypeError`` (read as a resolution without a channel count).
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm, scalar


@pytest.mark.parametrize("mod", [llvm, scalar])
def test_texture_from_numpy_and_nested_list_equals_texture_from_tensor(mod):
    ref = mod.Texture2f(mod.TensorXf([1, 2, 3, 4], shape=(2, 2, 1)))
    for data in (np.array([1, 2, 3, 4]).reshape(2, 2, 1), [[[1], [2]], [[3], [4]]]):
        tex = mod.Texture2f(data)
        assert tex.tensor().shape == (2, 2, 1)
        np.testing.assert_array_equal(tex.tensor().numpy(), ref.tensor().numpy())


def test_texture_from_numpy_keeps_the_keyword_options_and_a_resolution_still_works():
    tex = llvm.Texture3f(np.ones((2, 3, 4, 2), dtype=np.float32), filter_mode=fj.FilterMode.Nearest)
    assert tex.filter_mode() == fj.FilterMode.Nearest and tex.tensor().shape == (2, 3, 4, 2)
    assert llvm.Texture2f((3, 4), 2).tensor().shape == (3, 4, 2)
    assert llvm.Texture2f([3, 4], 1).tensor().shape == (3, 4, 1)


def test_matrix_mt_is_its_transpose():
    m = llvm.Matrix4f(*range(16))
    assert fj.all(m.mT == m.T, axis=None)
    assert fj.all(scalar.Matrix2f(1, 2, 3, 4).mT == scalar.Matrix2f(1, 3, 2, 4), axis=None)
