"""frostjit.scalar's textures: frostjit.texture's code over a scalar tensor, one position per
lookup, giving frostjit.llvm's numbers bit for bit (Dr.Jit 1.5's recorded scalar answers for
single cases: scalar_cases.py / test_scalar_anchor.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as s

_MODES = st.sampled_from([fj.WrapMode.Clamp, fj.WrapMode.Repeat, fj.WrapMode.Mirror])
_FILTERS = st.sampled_from([fj.FilterMode.Linear, fj.FilterMode.Nearest])


def _textures(dim: int, res: tuple, channels: int, suffix: str, seed: int, **modes):
    data = np.random.default_rng(seed).uniform(-2, 2, res + (channels,))
    dtype = {"f": np.float32, "f64": np.float64, "f16": np.float16}[suffix]
    data = data.astype(dtype)
    ts, tl = getattr(s, f"TensorX{suffix}")(data), getattr(L, f"TensorX{suffix}")(data)
    return getattr(s, f"Texture{dim}{suffix}")(ts, **modes), getattr(L, f"Texture{dim}{suffix}")(tl, **modes)


def _same(got, want) -> None:
    """A scalar lookup result equals lane 0 of the llvm one (same type name, same bits)."""
    if isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert type(got).__module__ == "frostjit.scalar" and type(got).__name__ == type(want).__name__
    np.testing.assert_array_equal(np.asarray(got.numpy()), want.numpy()[..., 0])


@settings(max_examples=6)          # (each configuration compiles LLVM kernels for the reference side)
@given(st.integers(1, 3), st.integers(1, 5), st.sampled_from(["f", "f64"]), _MODES, _FILTERS, st.data())
def test_lookups_match_llvm_lane_zero(dim, channels, suffix, wrap, filt, data):
    res = tuple(data.draw(st.integers(1, 4)) for _ in range(dim))
    ts, tl = _textures(dim, res, channels, suffix, data.draw(st.integers(0, 99)), wrap_mode=wrap, filter_mode=filt)
    pos = [data.draw(st.floats(-0.5, 1.5, width=32)) for _ in range(dim)]
    vs = getattr(s, f"Array{dim}{'f' if suffix == 'f' else 'f64'}")(*pos)
    vl = getattr(L, f"Array{dim}{'f' if suffix == 'f' else 'f64'}")(*pos)
    _same(ts.eval(vs), tl.eval(vl))
    _same(ts.eval_fetch(vs), tl.eval_fetch(vl))
    _same(ts.eval_cubic(vs), tl.eval_cubic(vl))
    _same(ts.eval_cubic_grad(vs), tl.eval_cubic_grad(vl))
    if dim > 1:
        _same(ts.eval_cubic_hessian(vs), tl.eval_cubic_hessian(vl))


def test_half_precision_textures_match_llvm():
    ts, tl = _textures(2, (3, 2), 2, "f16", 5)
    _same(ts.eval(s.Array2f16(0.3, 0.8)), tl.eval(L.Array2f16(0.3, 0.8)))


def test_texture_state_and_results_are_scalar_types():
    tex = s.Texture2f(s.TensorXf([[[1], [2]], [[3], [4]]]))
    r = tex.eval(s.Array2f(0.3, 0.6))
    assert type(r) is s.Array1f and type(r[0]) is float and r[0] == 2.5
    assert type(tex.tensor()) is s.TensorXf and type(tex.value()) is s.ArrayXf
    assert type(tex.eval_fetch(s.Array2f(0.3, 0.6))) is tuple
    assert s.Texture1f(s.TensorXf([[1], [2], [5]])).eval(0.5)[0] == 2.0      # a number as a 1-D position
    assert type(s.Texture2f(s.TensorXf(np.ones((2, 2, 6), np.float32))).eval([0.5, 0.5])) is s.ArrayXf
    tex.set_value(s.ArrayXf([4, 3, 2, 1]))
    assert tex.eval(s.Array2f(0.3, 0.6))[0] == pytest.approx(2.5) and list(tex.value()) == [4, 3, 2, 1]


def test_inactive_lookups_give_zero_as_on_llvm():
    # (Dr.Jit 1.5's scalar textures ignore 'active'; its LLVM ones give 0: frostjit follows those)
    tex = s.Texture2f(s.TensorXf([[[1], [2]], [[3], [4]]]))
    assert tex.eval(s.Array2f(0.3, 0.6), active=False)[0] == 0.0


def test_position_errors_name_the_argument():
    tex = s.Texture2f(s.TensorXf([[[1], [2]], [[3], [4]]]))
    with pytest.raises(ValueError, match="2 components"):
        tex.eval(s.Array3f(0.1, 0.2, 0.3))
    with pytest.raises(TypeError, match="pos"):
        tex.eval(0.5)
