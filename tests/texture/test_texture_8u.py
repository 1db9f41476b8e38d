"""8-bit unsigned normalized textures (``Texture{D}f8u``): lookups against Dr.Jit 1.5 itself (the
cases stored by ``drjit_reference_8u.py``), against the NumPy reference of the filtering applied
to ``t * (1/255)``, storage and conversions, sRGB decoding, AD (no gradient into the texels,
gradients into the positions) and frozen == plain."""
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit import llvm
from frostjit.backend import current_backend
from frostjit.llvm import ad
from frostjit.texture import FilterMode, WrapMode

import texture_reference as ref
from drjit_reference_8u import CASES

# fj.upsample is deprecated (a DeprecationWarning, as Dr.Jit 1.5's): these tests still check what it does
pytestmark = pytest.mark.filterwarnings("ignore:frostjit.upsample\\(\\) is deprecated:DeprecationWarning")

DATA = np.load(os.path.join(os.path.dirname(__file__), "data", "drjit_texture8u_reference.npz"))
INV_255 = np.float32(1 / 255)
FLOAT = {"f32": llvm.Float, "f64": llvm.Float64, "f16": llvm.Float16}


def _arr(x) -> np.ndarray:
    return np.array([np.array(c) for c in x]) if isinstance(x, (list, tuple)) else np.array(x)


def _channels(v) -> np.ndarray:
    """(N, C) from what eval returns (a static vector or a list of arrays)."""
    return np.stack([np.array(c) for c in v], axis=-1)


@pytest.mark.parametrize("ci", range(len(CASES)), ids=lambda i: "D{}-{}x{}ch-{}-{}-{}{}".format(
    CASES[i][0], "x".join(map(str, CASES[i][1])), CASES[i][2], CASES[i][3], CASES[i][4], CASES[i][5],
    "-srgb" if CASES[i][6] else ""))
def test_lookups_agree_with_drjit(ci):
    D, res, C, prec, filt, wrap, srgb = CASES[ci]
    key = f"case{ci}"
    tex = getattr(llvm, f"Texture{D}f8u")(llvm.TensorXu8(DATA[key + "_data"]), filter_mode=FilterMode[filt],
                                          wrap_mode=WrapMode[wrap], srgb=srgb)
    flt = FLOAT[prec]
    pos = DATA[key + "_pos"]
    p = [flt(pos[k]) for k in range(D)]
    act = llvm.Bool(DATA[key + "_active"])
    ev = tex.eval(p, act)
    fetch = tex.eval_fetch(p, act) if filt == "Linear" else None
    cubic = tex.eval_cubic_hessian(p, act) if D > 1 else tex.eval_cubic_grad(p, act)
    fj.eval(ev, fetch, cubic)
    assert type(ev[0]) is flt           # results in the positions' precision
    if srgb:
        # Dr.Jit's textures decode sRGB with an approximation of the curve (up to 2.5e-6 relative
        # error; frostjit's srgb_to_linear: 4e-7, test below)
        np.testing.assert_allclose(_arr(ev), DATA[key + "_eval"], rtol=3e-6, atol=1e-9)
        if fetch is not None:
            np.testing.assert_allclose(np.array([_arr(c) for c in fetch]), DATA[key + "_fetch"], rtol=3e-6,
                                       atol=1e-9)
    else:
        np.testing.assert_array_equal(_arr(ev), DATA[key + "_eval"])
        if fetch is not None:
            np.testing.assert_array_equal(np.array([_arr(c) for c in fetch]), DATA[key + "_fetch"])
    # the cubic B-spline within a few ULP of Dr.Jit's (a weighted sum of linear lookups there)
    rtol = {"f32": 2e-5, "f64": 1e-12, "f16": 8e-3}[prec]
    gscale = max(res) ** 2
    np.testing.assert_allclose(_arr(cubic[0]), DATA[key + "_cubic"], rtol=rtol, atol=rtol)
    np.testing.assert_allclose(np.array([_arr(x) for x in cubic[1]]), DATA[key + "_grad"], rtol=rtol,
                               atol=rtol * gscale)
    if D > 1:
        hh = np.array([[[np.array(e) for e in row] for row in m] for m in cubic[2]])
        np.testing.assert_allclose(hh, DATA[key + "_hess"], rtol=rtol, atol=rtol * gscale)


@st.composite
def textures8u(draw, max_channels: int = 5, max_res: int = 6):
    D = draw(st.integers(1, 3))
    res = tuple(draw(st.integers(1, max_res)) for _ in range(D))
    C = draw(st.integers(1, max_channels if D < 3 else 2))
    mode = draw(st.sampled_from(["Clamp", "Repeat", "Mirror"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    data = rng.integers(0, 256, res[::-1] + (C,)).astype(np.uint8)
    n = draw(st.integers(1, 40))
    pos = [rng.uniform(-1.2, 2.2, n).astype(np.float32) for _ in range(D)]
    return D, data, mode, pos


@settings(max_examples=25)
@given(textures8u())
def test_lookups_equal_those_of_a_float_texture_of_the_texels_over_255(case):
    D, data, mode, pos = case
    p = [llvm.Float(x) for x in pos]
    scaled = data.astype(np.float32) * INV_255
    for filt in ("Nearest", "Linear"):
        t8 = getattr(llvm, f"Texture{D}f8u")(llvm.TensorXu8(data), filter_mode=FilterMode[filt],
                                             wrap_mode=WrapMode[mode])
        tf = getattr(llvm, f"Texture{D}f")(llvm.TensorXf(scaled), filter_mode=FilterMode[filt],
                                           wrap_mode=WrapMode[mode])
        got, want = t8.eval(p), tf.eval(p)
        fj.eval(got, want)
        np.testing.assert_array_equal(_channels(got), _channels(want))
    ref_eval = ref.eval_linear(scaled.astype(np.float64), [x.astype(np.float64) for x in pos], mode)
    np.testing.assert_allclose(_channels(got), ref_eval, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(_channels(getattr(llvm, f"Texture{D}f8u")(
        llvm.TensorXu8(data), filter_mode=FilterMode.Nearest, wrap_mode=WrapMode[mode]).eval(p)),
        ref.eval_nearest(scaled, pos, mode))


def test_storage_is_uint8_and_tensor_and_value_return_it():
    img = np.array([[[0], [64]], [[128], [255]]], np.uint8)
    for mod in (llvm, ad):
        tex = mod.Texture2f8u(mod.TensorXu8(img))
        assert type(tex.tensor()) is llvm.TensorXu8 and type(tex.value()) is llvm.UInt8
        assert tex.value().numpy().tolist() == [0, 64, 128, 255]
        # Dr.Jit 1.5: eval at x = (0.1, 0.5, 0.9), y = (0.2, 0.5, 0.8) -> [0, 0.438235, 1]
        got = tex.eval(llvm.Array2f([0.1, 0.5, 0.9], [0.2, 0.5, 0.8]))[0].numpy()
        np.testing.assert_array_equal(got, np.float32([0, np.float32(447) * INV_255 / 4, 1]))
        assert type(tex.eval(llvm.Array2f64([0.3], [0.6]))[0]) is llvm.Float64
        # Dr.Jit 1.5 (float64 positions: texels times 1/255 in float64) -> 0.3937647058823529
        assert tex.eval(llvm.Array2f64([0.3], [0.6]))[0].numpy()[0] == 0.3937647058823529
    # Dr.Jit 1.5: eval([0.5, 0.5]) of plain numbers -> Array1f [[0.438235]]
    plain = llvm.Texture2f8u(llvm.TensorXu8(img)).eval([0.5, 0.5])
    assert type(plain) is llvm.Array1f and plain[0].numpy()[0] == np.float32(447) * INV_255 / 4
    shaped = llvm.Texture2f8u([3, 4], 2)
    assert shaped.shape == (3, 4, 2) and type(shaped.tensor()) is llvm.TensorXu8


def test_float_contents_convert_as_uint8_conversion_truncating():
    # Dr.Jit 1.5: set_tensor(TensorXf([255.9, 17.7, 0.5, -0.5])) -> [255, 17, 0, 0];
    # set_value(Float([0.1, 0.5, 0.7, 1.2])) -> [0, 0, 0, 1]
    tex = llvm.Texture2f8u([1, 4], 1)
    tex.set_tensor(llvm.TensorXf(np.array([[[255.9], [17.7], [0.5], [-0.5]]], np.float32)))
    assert type(tex.tensor()) is llvm.TensorXu8 and tex.value().numpy().tolist() == [255, 17, 0, 0]
    tex.set_value(llvm.Float([0.1, 0.5, 0.7, 1.2]))
    assert tex.value().numpy().tolist() == [0, 0, 0, 1]
    tex.set_value(llvm.UInt8([1, 2, 3, 4]))
    assert tex.value().numpy().tolist() == [1, 2, 3, 4]


@pytest.mark.skipif(current_backend().name != "LLVM", reason="out-of-range conversions are the hardware's answer "
                    "(unspecified, docs/engine.md); the reference backend gives 0")
def test_out_of_range_float_contents_convert_as_drjit_on_the_llvm_backend():
    # Dr.Jit 1.5: set_tensor(TensorXf([256, 300, -1])) -> [0, 44, 255] on an AVX-512 CPU (the
    # conversion keeps the low byte), [255, 255, 0] on an AVX2 one (it saturates): LLVM's
    # float -> UInt8 conversion is the vector instruction's answer on both systems.
    import llvmlite.binding as llvm_binding
    avx512 = "+avx512f" in llvm_binding.get_host_cpu_features().flatten()
    tex = llvm.Texture1f8u([3], 1)
    tex.set_tensor(llvm.TensorXf(np.array([[256.0], [300.0], [-1.0]], np.float32)))
    assert tex.value().numpy().tolist() == ([0, 44, 255] if avx512 else [255, 255, 0])


def test_srgb_decodes_every_channel_but_alpha_and_only_8bit_textures_take_it():
    # Dr.Jit 1.5: five channels of 128 with srgb=True -> [0.21586, 0.21586, 0.21586, 0.501961, 0.21586]
    tex = llvm.Texture2f8u(llvm.TensorXu8(np.full((1, 1, 5), 128, np.uint8)), srgb=True,
                           filter_mode=FilterMode.Nearest)
    assert tex.srgb() and not llvm.Texture2f8u([1, 1], 1).srgb()
    got = np.array([c.numpy()[0] for c in tex.eval(llvm.Array2f([0.5], [0.5]))])
    lin = fj.srgb_to_linear(llvm.Float([128 * INV_255])).numpy()[0]
    np.testing.assert_array_equal(got, [lin, lin, lin, np.float32(128) * INV_255, lin])
    np.testing.assert_allclose(got, [0.21586, 0.21586, 0.21586, 0.501961, 0.21586], rtol=2e-5)
    with pytest.raises(ValueError, match="8-bit"):
        llvm.Texture2f(llvm.TensorXf(np.zeros((2, 2, 1), np.float32)), srgb=True)
    with pytest.raises(ValueError, match="8-bit"):
        llvm.Texture1f16([4], 1, srgb=True)


def test_srgb_texels_are_within_4e7_of_the_exact_curve():
    v = np.arange(256, dtype=np.uint8)
    tex = llvm.Texture1f8u(llvm.TensorXu8(v[:, None]), srgb=True, filter_mode=FilterMode.Nearest)
    got = tex.eval(llvm.Float((np.arange(256, dtype=np.float32) + 0.5) / 256))[0].numpy()
    c = (v.astype(np.float32) * INV_255).astype(np.float64)
    exact = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    np.testing.assert_allclose(got, exact, rtol=4.5e-7, atol=0)


def test_no_gradient_reaches_the_texels_but_positions_get_theirs():
    img = np.array([[[0], [64]], [[128], [255]]], np.uint8)
    t = ad.TensorXf(img.astype(np.float32))
    fj.enable_grad(t)
    tex = ad.Texture2f8u(t)             # converted to UInt8: the texels hold no gradient (as Dr.Jit)
    assert not fj.grad_enabled(tex.tensor())
    p = ad.Array2f([0.3], [0.6])
    fj.enable_grad(p)
    y = tex.eval(p)[0]
    fj.backward(y)
    # Dr.Jit 1.5: dr.grad(p) -> [[0.847843, 1.05333]]
    np.testing.assert_allclose([p.x.grad.numpy()[0], p.y.grad.numpy()[0]], [0.847843, 1.05333], rtol=5e-6)
    assert fj.grad(t).numpy().tolist() == [[[0.0], [0.0]], [[0.0], [0.0]]]


def test_upsampling_an_8bit_texture_raises_as_drjit():
    # Dr.Jit 1.5: TypeError (its linspace needs a floating point type)
    tex = llvm.Texture2f8u(llvm.TensorXu8(np.zeros((2, 2, 1), np.uint8)))
    with pytest.raises(TypeError, match="8-bit"):
        fj.upsample(tex, scale_factor=(2, 2))


@pytest.mark.parametrize("srgb", [False, True])
def test_frozen_lookups_equal_plain_ones_at_several_widths(srgb):
    def lookup(tex, x, y):
        return tex.eval(llvm.Array2f(x, y))

    frozen = fj.freeze(lookup)
    rng = np.random.default_rng(5)
    for n in (1, 7, 1000, 100003):
        for res in ((3, 4), (5, 4)):
            data = rng.integers(0, 256, res + (4,)).astype(np.uint8)
            tex = llvm.Texture2f8u(llvm.TensorXu8(data), srgb=srgb, wrap_mode=WrapMode.Mirror)
            x, y = (llvm.Float(rng.uniform(-0.5, 1.5, n).astype(np.float32)) for _ in range(2))
            got, want = frozen(tex, x, y), lookup(tex, x, y)
            np.testing.assert_array_equal(_channels(got), _channels(want))
    assert frozen.n_recordings <= 4


def test_frozen_function_traces_again_when_srgb_changes():
    frozen = fj.freeze(lambda t, x, y: t.eval(llvm.Array2f(x, y)))
    data = np.full((2, 2, 1), 128, np.uint8)
    x, y = llvm.Float([0.3, 0.6]), llvm.Float([0.2, 0.9])
    plain = np.float32(128) * INV_255
    decoded = fj.srgb_to_linear(llvm.Float([plain])).numpy()[0]
    for srgb in (False, True, False, True):
        got = frozen(llvm.Texture2f8u(llvm.TensorXu8(data), srgb=srgb), x, y)[0].numpy()
        np.testing.assert_array_equal(got, [decoded if srgb else plain] * 2)
    assert frozen.n_recordings == 2
