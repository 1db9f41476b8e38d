"""Texture lookups against a NumPy implementation of Dr.Jit's documented filtering
(texture_reference.py), on hypothesis-generated textures and positions, in float64."""
import numpy as np
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit import llvm
from frostjit.texture import FilterMode, WrapMode

import texture_reference as ref


@st.composite
def textures(draw, max_channels: int = 6, max_res: int = 6):
    D = draw(st.integers(1, 3))
    res = tuple(draw(st.integers(1, max_res)) for _ in range(D))
    C = draw(st.integers(1, max_channels if D < 3 else 1))
    mode = draw(st.sampled_from(["Clamp", "Repeat", "Mirror"]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(res[::-1] + (C,))
    n = draw(st.integers(1, 40))
    pos = [rng.uniform(-1.2, 2.2, n) for _ in range(D)]
    special = draw(st.lists(st.sampled_from([0.0, 1.0, 0.5, 0.25, -0.5, 1.5]), max_size=4))
    pos = [np.concatenate([p, special]) for p in pos]
    return D, data, mode, pos


def _tex(D, data, mode, filt="Linear"):
    return getattr(llvm, f"Texture{D}f64")(llvm.TensorXf64(data), filter_mode=FilterMode[filt],
                                            wrap_mode=WrapMode[mode])


def _channels(v) -> np.ndarray:
    """(N, C) from what eval returns (a static vector or a list of arrays)."""
    return np.stack([np.array(c) for c in v], axis=-1)


@given(textures())
def test_nearest_and_linear_lookups_match_the_reference(case):
    D, data, mode, pos = case
    p = [llvm.Float64(x) for x in pos]
    got = _channels(_tex(D, data, mode, "Nearest").eval(p))
    np.testing.assert_array_equal(got, ref.eval_nearest(data, pos, mode))
    got = _channels(_tex(D, data, mode).eval(p))
    np.testing.assert_allclose(got, ref.eval_linear(data, pos, mode), rtol=1e-12, atol=1e-12)


@settings(max_examples=12)      # each case compiles a large kernel (a 3-D hessian gathers 64 texels per channel)
@given(textures(max_channels=2, max_res=4))
def test_cubic_value_gradient_and_hessian_match_the_reference(case):
    D, data, mode, pos = case
    tex = _tex(D, data, mode)
    p = [llvm.Float64(x) for x in pos]
    value, grad, hess = tex.eval_cubic_hessian(p)
    cubic = tex.eval_cubic(p)
    fj.eval(value, grad, hess, cubic)
    np.testing.assert_allclose(_channels(value), ref.eval_cubic(data, pos, mode), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(_channels(cubic), _channels(value), rtol=0, atol=0)
    scale = max(data.shape) ** 2
    for ch in range(data.shape[-1]):
        for a in range(D):
            orders = tuple(1 if k == a else 0 for k in range(D))
            g = np.array(grad[ch][a]) if D > 1 else np.array(grad[ch][0])
            np.testing.assert_allclose(g, ref.eval_cubic(data, pos, mode, orders)[:, ch], rtol=1e-9, atol=1e-9 * scale)
            for b in range(D):
                orders = tuple((a == k) + (b == k) for k in range(D))
                np.testing.assert_allclose(np.array(hess[ch][a][b]), ref.eval_cubic(data, pos, mode, orders)[:, ch],
                                           rtol=1e-9, atol=1e-9 * scale)


@given(textures())
def test_fetch_returns_the_corners_a_linear_lookup_combines(case):
    D, data, mode, pos = case
    tex = _tex(D, data, mode)
    p = [llvm.Float64(x) for x in pos]
    corners = tex.eval_fetch(p)
    assert len(corners) == 2 ** D
    res = data.shape[-2::-1]
    x = [q * r - 0.5 for q, r in zip(pos, res)]
    for j, c in enumerate(corners):
        offs = [(j >> k) & 1 for k in range(D)]          # x varies fastest
        idx = [ref.wrap(np.floor(xi).astype(np.int64) + o, r, mode) for xi, o, r in zip(x, offs, res)]
        np.testing.assert_array_equal(_channels(c), data[tuple(idx[::-1])])
