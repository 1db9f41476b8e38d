"""Arrays of other frameworks as constructor arguments (frostjit/array/foreign.py): a PyTorch
tensor that requires gradients converts like any other (as Dr.Jit; PyTorch refuses to export
it through DLPack), without carrying derivative tracking into frostjit."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import ad

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("requires_grad", [False, True])
def test_flat_array_from_a_torch_tensor(requires_grad):
    t = torch.tensor([1.5, -2.0, 3.25], requires_grad=requires_grad)
    x = ad.Float(t)
    assert x.numpy().tolist() == [1.5, -2.0, 3.25]
    assert not fj.grad_enabled(x)


def test_static_and_dynamic_arrays_from_a_torch_tensor_requiring_grad():
    t = torch.arange(6, dtype=torch.float32).reshape(3, 2).requires_grad_()
    v = ad.Array3f(t)
    assert np.array_equal(v.numpy(), t.detach().numpy())
    d = ad.ArrayXf(t)
    assert len(d) == 3 and d[2].numpy().tolist() == [4.0, 5.0]


def test_tensor_and_texture_from_a_torch_tensor_requiring_grad():
    t = torch.rand(4, 5, 2, dtype=torch.float32, requires_grad=True)
    x = ad.TensorXf(t)
    assert x.shape == (4, 5, 2)
    assert np.array_equal(x.numpy(), t.detach().numpy())
    tex = ad.Texture2f(x)
    assert tex.tensor().shape == (4, 5, 2)


def test_the_conversion_does_not_detach_the_callers_tensor():
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    ad.Float(t)
    assert t.requires_grad
