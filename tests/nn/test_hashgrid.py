"""Hash-grid encodings: Dr.Jit's level layout, hashing and interpolation (NumPy reference and
Dr.Jit's recorded numbers), gradients, the nn layer, freezing."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.nn as nn
from frostjit.hashgrid import HashGridEncoding
from frostjit.llvm.ad import Float, Float64, UInt32, TensorXf

PRIMES = [1, 2654435761, 805459861, 3674653429]


def corners(x, D, L, F, T, base, pls, align):
    """NumPy model of the encoding's lookups (float64), written from the measured layout
    (docs/nn.md): for each level, corner and feature, ``(output row, parameter index per
    point, weight per point)``."""
    offset = 0
    for level in range(L):
        scale = base * pls ** level - 1
        res = math.ceil(scale) + 1
        dense = res ** D <= T
        size = -(-res ** D // F) * F if dense else T
        pos = x * scale + (0 if align else 0.5)
        p0 = np.floor(pos)
        fr = pos - p0
        p0 = p0.astype(np.uint64)
        for c in range(2 ** D):
            bits = [(c >> d) & 1 for d in range(D)]
            key = [p0[d] + np.uint64(bits[d]) for d in range(D)]
            w = np.prod([fr[d] if bits[d] else 1 - fr[d] for d in range(D)], axis=0)
            if dense:
                idx = sum(key[d] * np.uint64(res ** d) for d in range(D)) % np.uint64(size)
            else:
                h = np.zeros(x.shape[1], np.uint64)
                for d in range(D):
                    h ^= (key[d] * np.uint64(PRIMES[d])) & np.uint64(0xFFFFFFFF)
                idx = h % np.uint64(size)
            for f in range(F):
                yield level * F + f, (offset + idx.astype(np.int64)) * F + f, w
        offset += size


def reference(params, x, D, L, F, T, base, pls, align):
    """The encoding's output (float64), from :func:`corners`."""
    out = np.zeros((L * F, x.shape[1]))
    for row, index, w in corners(x, D, L, F, T, base, pls, align):
        out[row] += w * params[index]
    return out


CONFIGS = [(2, 3, 2, 2 ** 10, 3, 1.5, False), (2, 4, 2, 64, 4, 2.0, False), (3, 3, 2, 128, 2, 1.7, True),
           (2, 3, 4, 48, 3, 1.5, True), (2, 2, 2, 8, 3, 1.5, False), (1, 3, 2, 16, 5, 1.3, False)]
# Dr.Jit 1.5's level offsets (in vertices, levels + 1 entries) for these configurations
OFFSETS = [[0, 10, 36, 86], [0, 16, 80, 144, 208], [0, 8, 72, 200], [0, 12, 40, 88], [0, 8, 16], [0, 6, 14, 24]]


@pytest.mark.parametrize("config,offsets", list(zip(CONFIGS, OFFSETS)))
def test_level_layout_matches_drjit(config, offsets):
    D, L, F, T, base, pls, align = config
    e = HashGridEncoding(Float, D, n_levels=L, n_features_per_level=F, hashmap_size=T, base_resolution=base,
                         per_level_scale=pls, align_corners=align)
    assert [e.level_offset(i) for i in range(L + 1)] == offsets
    assert e.n_params == offsets[-1] * F and e.n_output_features == L * F


@settings(max_examples=12)
@given(config=st.sampled_from(CONFIGS), width=st.sampled_from([1, 7, 1000]), seed=st.integers(0, 2 ** 16))
def test_encoding_matches_numpy_reference(config, width, seed):
    D, L, F, T, base, pls, align = config
    e = HashGridEncoding(Float, D, n_levels=L, n_features_per_level=F, hashmap_size=T, base_resolution=base,
                         per_level_scale=pls, align_corners=align)
    rng = np.random.default_rng(seed)
    params = rng.standard_normal(e.n_params).astype(np.float32)
    e.set_params(Float(params))
    x = rng.random((D, width)).astype(np.float32)
    got = np.array([np.broadcast_to(c.numpy(), (width,)) for c in e([Float(r) for r in x])])
    np.testing.assert_allclose(got, reference(params.astype(np.float64), x.astype(np.float64), *config),
                               rtol=1e-5, atol=2e-5)


def test_hash_and_indexing_match_drjit():
    e = HashGridEncoding(Float, 2, n_levels=4, n_features_per_level=2, hashmap_size=64, base_resolution=4,
                         per_level_scale=2.0)
    k = [UInt32(0, 1, 0, 1, 5, 7, 123, 9), UInt32(0, 0, 1, 1, 3, 11, 77, 1000)]
    assert e.hash(k).numpy().tolist() == [0, 1, 2654435761, 2654435760, 3668339990, 3428989596, 2528090694,
                                          145972065]
    assert e.indexing_function(k, 0).numpy().tolist() == [0, 1, 4, 5, 1, 3, 15, 9]
    assert e.indexing_function(k, 1).numpy().tolist() == [16, 17, 24, 25, 45, 47, 51, 25]
    assert e.indexing_function(k, 2).numpy().tolist() == [80, 81, 129, 128, 102, 108, 86, 113]


def test_values_and_gradients_equal_drjits_recorded_numbers():
    e = HashGridEncoding(Float, 2, n_levels=2, n_features_per_level=2, hashmap_size=8, base_resolution=3,
                         per_level_scale=1.5)
    # default initialization: fj.rng(seed=0), uniform on [-1e-4, 1e-4] (Dr.Jit's numbers)
    np.testing.assert_allclose(e.params.numpy()[:4], [-3.793017822317779e-05, 1.5105149941518903e-05,
                                                      5.62917921342887e-05, -2.5829984224401414e-05], rtol=1e-6)
    p = Float(np.arange(e.n_params, dtype=np.float32) * 0.01)
    x0 = Float(0.1, 0.55, 0.93)
    fj.enable_grad(p, x0)
    e.set_params(p)
    out = e([x0, Float(0.2, 0.7, 0.05)])
    np.testing.assert_allclose([o.numpy() for o in out], [
        [0.0068000005558133125, 0.025199998170137405, 0.05055999755859375],
        [0.01680000126361847, 0.03519999608397484, 0.06055999919772148],
        [0.17379999160766602, 0.17134998738765717, 0.2419849932193756],
        [0.18380001187324524, 0.1813499927520752, 0.25198498368263245]], rtol=1e-5)
    fj.backward(fj.sum(out[0] + 2 * out[1] + 3 * out[2] + 4 * out[3]))
    np.testing.assert_allclose(fj.grad(p).numpy(), [
        1.24, 2.48, 0.34, 0.68, 0.472, 0.944, 0.948, 1.896, 0, 0, 0, 0, 0, 0, 0, 0, 3.3374996185302734,
        4.449999809265137, 2.0625, 2.75, 0.5861247777938843, 0.7814996838569641, 0.7488750219345093,
        0.9984999895095825, 0.7361250519752502, 0.9815000891685486, 1.5288752317428589, 2.0385003089904785,
        0, 0, 0, 0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fj.grad(x0).numpy(), [-0.38999998569488525, -0.7290001511573792,
                                                     1.1274999380111694], rtol=1e-4)


def test_position_gradients_match_finite_differences_float64():
    e = HashGridEncoding(Float64, 2, n_levels=2, n_features_per_level=2, hashmap_size=16, base_resolution=3,
                         per_level_scale=1.5, rng=fj.rng(seed=2), init_scale=1.0)
    x = np.array([[0.13, 0.42, 0.77], [0.31, 0.58, 0.09]])
    x0 = Float64(x[0])
    fj.enable_grad(x0)
    out = e([x0, Float64(x[1])])
    fj.backward(fj.sum(out[0] - out[1] + 2 * out[3]))

    def f(v):
        o = e([Float64(v), Float64(x[1])])
        return (o[0] - o[1] + 2 * o[3]).numpy()

    h = 1e-7
    np.testing.assert_allclose(fj.grad(x0).numpy(), (f(x[0] + h) - f(x[0] - h)) / (2 * h), rtol=1e-5)


def test_constructor_checks_like_drjit():
    with pytest.raises(ValueError, match="multiple of the number of features 4"):
        HashGridEncoding(Float, 2, n_features_per_level=4, hashmap_size=50)
    with pytest.warns(RuntimeWarning, match="multiple of 2"):
        HashGridEncoding(Float, 1, n_levels=1, n_features_per_level=1, hashmap_size=16)
    e = HashGridEncoding(Float, 2, n_levels=1, torchngp_compat=True, smooth_weight_gradients=True,
                         smooth_weight_lambda=0.25)
    assert (e.torchngp_compat, e.smooth_weight_gradients, e.smooth_weight_lambda) == (True, True, 0.25)


def test_hash_encoding_layer_in_a_frozen_network():
    enc = HashGridEncoding(Float, 2, n_levels=2, n_features_per_level=2, hashmap_size=16, base_resolution=3,
                           per_level_scale=1.5, init_scale=0.5)
    net = nn.Sequential(nn.HashEncodingLayer(enc), nn.Linear(-1, 2)).alloc(TensorXf, 2)
    assert list(net.keys()) == ["layers.1.weights", "layers.1.bias"]
    net = nn.pack(net)
    assert list(net.keys()) == ["weights"]

    def run(net, x, y):
        return net(nn.CoopVec(x, y))

    frozen = fj.freeze(run)
    rng = np.random.default_rng(3)
    for width in (7, 1000, 1, 7):
        x = rng.random((2, width)).astype(np.float32)
        a = run(net, Float(x[0]), Float(x[1]))
        b = frozen(net, Float(x[0]), Float(x[1]))
        np.testing.assert_allclose([c.numpy() for c in b], [c.numpy() for c in a], rtol=1e-6, atol=1e-7)
