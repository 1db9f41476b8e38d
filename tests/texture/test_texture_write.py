"""Texture.write (Dr.Jit 1.5's texture store): integer texel coordinates x first, one value per
channel, 8-bit textures quantized (round half up after clipping, sRGB-encoded but alpha),
masks, errors; inside frozen functions the store replays like a scatter."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import (Array2u, Bool, Float, Float16, TensorXf, Texture1f, Texture1f8u, Texture1f16,
                           Texture2f, Texture2f8u, Texture3f, UInt32)
from frostjit import scalar


def _srgb_encode(v):
    v = np.clip(np.float64(v), 0, 1)
    return np.where(v <= 0.0031308, 12.92 * v, 1.055 * v ** (1 / 2.4) - 0.055)


@given(st.lists(st.floats(-0.5, 1.5, width=32), min_size=1, max_size=40))
def test_an_8bit_store_rounds_half_up_after_clipping(values):
    tex = Texture1f8u([len(values)], channels=1, writable=True)
    tex.write([fj.arange(UInt32, len(values))], [Float(values)])
    v32 = np.clip(np.float32(values), 0, 1)
    expect = np.floor(v32 * np.float32(255) + np.float32(0.5))
    assert np.array_equal(tex.tensor().numpy().ravel(), expect.astype(np.uint8))


def test_an_srgb_texture_encodes_colour_channels_not_alpha():
    tex = Texture1f8u([3], channels=4, writable=True, srgb=True)
    v = [0.2, 0.5, 0.75]
    tex.write([UInt32(0, 1, 2)], [Float(v)] * 4)
    got = tex.tensor().numpy()
    colour = np.floor(_srgb_encode(v) * 255 + 0.5)
    assert np.allclose(got[:, 0], colour, atol=1)          # (float32 vs float64 encoding)
    assert got[:, 3].tolist() == [51, 128, 191]             # alpha: linear


def test_coordinates_are_x_first_and_inactive_lanes_do_not_write():
    tex = Texture2f([2, 3], channels=1, writable=True)
    tex.write(Array2u(UInt32(0, 2, 1), UInt32(1, 1, 0)), [Float(7, 8, 9)], Bool(True, False, True))
    assert tex.tensor().numpy()[..., 0].tolist() == [[0, 9, 0], [7, 0, 0]]


def test_three_dimensional_and_multichannel_stores():
    t3 = Texture3f([2, 3, 4], channels=2, writable=True)
    t3.write([UInt32(3), UInt32(2), UInt32(1)], [Float(5), 6.0])
    want = np.zeros((2, 3, 4, 2), np.float32)
    want[1, 2, 3] = (5, 6)
    assert np.array_equal(t3.tensor().numpy(), want)
    t1 = Texture1f16([2], channels=1, writable=True)
    t1.write([UInt32(0, 1)], [Float16(1.5, 2.5)])
    assert t1.tensor().numpy().ravel().tolist() == [1.5, 2.5]


def test_a_written_texture_is_sampled_with_the_new_texels():
    tex = Texture1f([4], channels=1, writable=True, filter_mode=fj.FilterMode.Nearest)
    tex.write([UInt32(0, 1, 2, 3)], [Float(1, 2, 3, 4)])
    assert tex.eval(fj.llvm.Array1f(Float(0.1, 0.9)))[0].numpy().tolist() == [1, 4]


def test_refusals_name_the_problem():
    with pytest.raises(RuntimeError, match="writable=True"):
        Texture2f(TensorXf(fj.zeros(Float, 6), shape=(2, 3, 1))).write([UInt32(0), UInt32(0)], [Float(1)])
    tex = Texture2f([2, 2], channels=1, writable=True)
    with pytest.raises(RuntimeError, match="expected 1 channel values, got 2"):
        tex.write([UInt32(0), UInt32(0)], [Float(1), Float(2)])
    with pytest.raises(TypeError, match="2 integer coordinate arrays"):
        tex.write([UInt32(0)], [Float(1)])
    with pytest.raises(RuntimeError, match="JIT backend"):
        scalar.Texture1f([2], channels=1, writable=True).write([0], [1.0])


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_frozen_stores_equal_plain_ones(n):
    def paint(tex, x, v):
        tex.write([x % 30, x // 30], [v, v * 2])     # one lane per texel

    frozen = fj.freeze(paint)
    for w in (n, n + 5):
        x = fj.arange(UInt32, w)
        v = fj.arange(Float, w) * 0.01
        a = Texture2f8u([40, 30], channels=2, writable=True)
        b = Texture2f8u([40, 30], channels=2, writable=True)
        paint(a, x, v)
        frozen(b, x, v)
        assert np.array_equal(a.tensor().numpy(), b.tensor().numpy())
