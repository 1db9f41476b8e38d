"""frostjit.scalar's 8-bit textures give lane 0 of frostjit.llvm's, bit for bit (the same texture code
over scalar UInt8 tensors)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as s

VEC = {1: ("Array1f",), 2: ("Array2f",), 3: ("Array3f",)}


@settings(max_examples=25, deadline=None)
@given(dim=st.integers(1, 3), channels=st.integers(1, 4), srgb=st.booleans(),
       filt=st.sampled_from([fj.FilterMode.Nearest, fj.FilterMode.Linear]),
       wrap=st.sampled_from([fj.WrapMode.Clamp, fj.WrapMode.Repeat, fj.WrapMode.Mirror]), data=st.data())
def test_scalar_8bit_lookups_equal_llvm_lane_zero(dim, channels, srgb, filt, wrap, data):
    res = data.draw(st.lists(st.integers(1, 4), min_size=dim, max_size=dim))
    texels = np.array(data.draw(st.lists(st.integers(0, 255), min_size=int(np.prod(res)) * channels,
                                         max_size=int(np.prod(res)) * channels)), np.uint8)
    pos = data.draw(st.lists(st.floats(-0.5, 1.5, width=32), min_size=dim, max_size=dim))
    shape = tuple(res) + (channels,)
    kw = dict(filter_mode=filt, wrap_mode=wrap, srgb=srgb)
    ts = getattr(s, f"Texture{dim}f8u")(s.TensorXu8(texels.reshape(shape)), **kw)
    tl = getattr(L, f"Texture{dim}f8u")(L.TensorXu8(texels.reshape(shape)), **kw)
    ps, pl = getattr(s, VEC[dim][0])(*pos), getattr(L, VEC[dim][0])(*[L.Float(p) for p in pos])
    got = [float(v) for v in ts.eval(ps)]
    want = [float(c.numpy()[0]) for c in tl.eval(pl)]
    assert np.array_equal(np.array(got, np.float32), np.array(want, np.float32), equal_nan=True)
    if filt is fj.FilterMode.Linear:
        for cs, cl in zip(ts.eval_fetch(ps), tl.eval_fetch(pl)):
            assert [float(v) for v in cs] == [float(c.numpy()[0]) for c in cl]


def test_scalar_8bit_storage_types():
    t = s.Texture2f8u([2, 3], 2)
    assert type(t.tensor()).__name__ == "TensorXu8" and t.tensor().shape == (2, 3, 2)
    t.set_tensor(s.TensorXf(np.full((2, 3, 2), 200.0, np.float32)))     # converted as UInt8(x)
    assert int(t.tensor().numpy()[0, 0, 0]) == 200
    with pytest.raises(ValueError):
        s.Texture2f([2, 2], 1, srgb=True)
