"""The texture classes' API: constructors, contents, modes, result types (Dr.Jit's)."""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm
from frostjit.llvm import Array1f, Array2f, Array3f, Array4f, ArrayXf, Float, Matrix2f, TensorXf, TensorXf64, \
    Texture1f, Texture2f, Texture3f

# fj.upsample is deprecated (a DeprecationWarning, as Dr.Jit 1.5's): these tests still check what it does
pytestmark = pytest.mark.filterwarnings("ignore:frostjit.upsample\\(\\) is deprecated:DeprecationWarning")

DATA = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)


def test_texture_types_exist_per_dimension_and_precision():
    for d in (1, 2, 3):
        for sfx, tensor in (("f", TensorXf), ("f64", TensorXf64)):
            cls = getattr(llvm, f"Texture{d}{sfx}")
            assert cls.Dimension == d and cls._tensor_type is tensor
            assert getattr(llvm.ad, f"Texture{d}{sfx}")._tensor_type is getattr(llvm.ad, tensor.__name__)


def test_construction_from_a_tensor_and_from_a_shape():
    tex = Texture2f(TensorXf(DATA))
    assert tex.shape == (2, 3, 2) and tex.channel_count() == 2
    assert tex.filter_mode() is fj.FilterMode.Linear and tex.wrap_mode() is fj.WrapMode.Clamp
    np.testing.assert_array_equal(tex.tensor().numpy(), DATA)
    np.testing.assert_array_equal(tex.value().numpy(), DATA.ravel())
    blank = Texture3f([2, 3, 4], 5, filter_mode=fj.FilterMode.Nearest, wrap_mode=fj.WrapMode.Mirror)
    assert blank.shape == (2, 3, 4, 5) and blank.filter_mode() is fj.FilterMode.Nearest
    np.testing.assert_array_equal(blank.value().numpy(), np.zeros(120))
    # GPU-only settings are reported as given, as Dr.Jit's LLVM backend does (measured)
    assert tex.use_accel() and not tex.migrated() and not tex.srgb() and not tex.writable()
    assert not Texture2f(TensorXf(DATA), use_accel=False).use_accel()
    assert Texture3f([2, 3, 4], 1, writable=True).writable()
    assert "Texture2f(shape=(2, 3, 2)" in repr(tex)


def test_construction_errors():
    with pytest.raises(ValueError, match="3 dimensions"):
        Texture2f(TensorXf(np.zeros((2, 3), np.float32)))
    with pytest.raises(ValueError, match="2 entries"):
        Texture2f([4], 1)
    with pytest.raises(ValueError, match="channels"):
        Texture2f([4, 4], 0)
    with pytest.raises(TypeError, match="FilterMode"):
        Texture2f(TensorXf(DATA), filter_mode="linear")
    with pytest.raises(ValueError, match="8-bit"):
        Texture2f(TensorXf(DATA), srgb=True)


def test_set_value_and_set_tensor():
    tex = Texture2f(TensorXf(DATA))
    tex.set_value(Float(np.ones(12, np.float32)))
    np.testing.assert_array_equal(tex.tensor().numpy(), np.ones((2, 3, 2)))
    with pytest.raises(ValueError, match="expected 12 elements"):
        tex.set_value(Float(np.ones(10, np.float32)))
    tex.set_tensor(TensorXf(np.ones((3, 3, 1), np.float32)))           # new resolution and channels
    assert tex.shape == (3, 3, 1)
    tex.set_tensor(TensorXf64(np.full((1, 2, 4), 2.0)))                 # converted to the texture's type
    assert type(tex.tensor()) is TensorXf and tex.shape == (1, 2, 4)
    t = tex.tensor()
    t[0, 0, 0] = 7.0                                                   # the texture reads its tensor
    tex.update_inplace()
    assert tex.eval_fetch(Array2f(0.0, 0.0))[0][0][0] == 7
    assert type(tex.eval_fetch(Array2f(0.0, 0.0))) is tuple       # as Dr.Jit


def test_result_types_follow_the_channel_count():
    pos = Array2f([0.1, 0.5], [0.2, 0.7])
    assert isinstance(Texture2f(TensorXf(np.ones((2, 2, 2), np.float32))).eval(pos), Array2f)
    assert isinstance(Texture2f(TensorXf(np.ones((2, 2, 3), np.float32))).eval(pos), Array3f)
    assert isinstance(Texture2f(TensorXf(np.ones((2, 2, 4), np.float32))).eval(pos), Array4f)
    one = Texture2f(TensorXf(np.ones((2, 2, 1), np.float32))).eval(pos)
    assert isinstance(one, Array1f) and isinstance(one[0], Float)      # as Dr.Jit
    five = Texture2f(TensorXf(np.ones((2, 2, 5), np.float32))).eval(pos)
    assert isinstance(five, ArrayXf) and len(five) == 5


def test_cubic_derivatives_are_drjit_vectors_and_matrices():
    """Dr.Jit 1.5: the gradient of each channel is an ``Array{D}f``, the hessian a ``Matrix{D}f``."""
    pos = Array2f([0.1, 0.5], [0.2, 0.7])
    value, grad, hess = Texture2f(TensorXf(np.ones((2, 2, 5), np.float32))).eval_cubic_hessian(pos)
    assert isinstance(value, ArrayXf) and len(grad) == len(hess) == 5
    assert all(isinstance(g, Array2f) for g in grad) and all(isinstance(h, Matrix2f) for h in hess)
    value1, grad1 = Texture1f(TensorXf(np.ones((2, 2), np.float32))).eval_cubic_grad(Array1f([0.1]))
    assert isinstance(value1, Array2f) and all(isinstance(g, Array1f) for g in grad1)


def test_position_forms_precision_and_active_mask():
    tex = Texture2f(TensorXf(DATA))
    a = tex.eval(Array2f(0.3, 0.6)).numpy()
    np.testing.assert_array_equal(tex.eval([Float(0.3), Float(0.6)]).numpy(), a)
    np.testing.assert_array_equal(tex.eval((0.3, 0.6)).numpy(), a)
    r = tex.eval(llvm.Array2f64(0.3, 0.6))
    assert type(r) is llvm.Array2f64                      # computed in the positions' precision
    r = llvm.Texture2f64(TensorXf64(DATA.astype(np.float64))).eval(Array2f(0.3, 0.6))
    assert type(r) is Array2f
    m = tex.eval(Array2f([0.1, 0.5], [0.2, 0.5]), active=llvm.Bool(True, False)).numpy()
    np.testing.assert_array_equal(m[:, 1], [0, 0])
    t1 = Texture1f(TensorXf(np.array([[1], [2], [4], [8]], np.float32)))
    np.testing.assert_array_equal(t1.eval(Float(0.0, 0.5, 1.0))[0].numpy(), [1, 3, 8])
    with pytest.raises(ValueError, match="2 components"):
        tex.eval(Array3f(0, 0, 0))
    with pytest.raises(TypeError, match="floating point"):
        tex.eval([llvm.UInt32(0), llvm.UInt32(0)])


def test_wrap_modes_match_drjit_examples():
    # drjit 1.5 prints these for the same texture and positions (side by side)
    x = Float(-1.3, -0.6, -0.1, 0.05, 0.95, 1.1, 1.6, 2.3)
    data = TensorXf(np.array([[1], [2], [4], [8]], np.float32))
    near = {"Repeat": [4, 2, 8, 1, 8, 1, 4, 2], "Clamp": [1, 1, 1, 1, 8, 8, 8, 8], "Mirror": [4, 4, 1, 1, 8, 8, 2, 2]}
    lin = {"Repeat": [5.2, 2.2, 7.3, 3.1, 5.9, 1.7, 3.8, 1.7], "Clamp": [1, 1, 1, 1, 8, 8, 8, 8],
           "Mirror": [5.2, 3.8, 1, 1, 8, 8, 2.2, 1.7]}
    for mode in ("Repeat", "Clamp", "Mirror"):
        w = fj.WrapMode[mode]
        got = Texture1f(data, wrap_mode=w, filter_mode=fj.FilterMode.Nearest).eval(x)[0].numpy()
        np.testing.assert_array_equal(got, near[mode])
        got = Texture1f(data, wrap_mode=w).eval(x)[0].numpy()
        np.testing.assert_allclose(got, lin[mode], rtol=1e-6)


def test_upsample_a_texture_samples_the_new_texel_centers():
    tex = Texture2f(TensorXf(DATA))
    up = fj.upsample(tex, shape=(4, 5))
    assert type(up) is Texture2f and up.shape == (4, 5, 2)
    # drjit 1.5: first row [[0, 1], [0.8, 1.8], [2, 3], [3.2, 4.2], [4, 5]]
    np.testing.assert_allclose(up.tensor().numpy()[0], [[0, 1], [0.8, 1.8], [2, 3], [3.2, 4.2], [4, 5]], rtol=1e-6)
    assert fj.upsample(tex, scale_factor=(2, 2)).shape == (4, 6, 2)
    t1 = Texture1f(TensorXf(np.array([[1], [2], [4], [8]], np.float32)), filter_mode=fj.FilterMode.Nearest)
    np.testing.assert_array_equal(fj.upsample(t1, shape=[8]).tensor().numpy()[:, 0], [1, 1, 2, 2, 4, 4, 8, 8])


def test_texture_is_a_pytree():
    tex = Texture2f(TensorXf(DATA) * 2)
    assert tex.tensor().state == "unevaluated"
    fj.eval(tex)
    assert tex.tensor().state == "evaluated"
    assert len(fj.tree.leaves(tex)) == 1
