"""Permutohedral encodings and the hash-grid options ``torchngp_compat`` and
``smooth_weight_gradients``: Dr.Jit 1.5's recorded numbers (``drjit_hashgrid_reference.py``),
a NumPy model, finite differences, masks, the nn layer and freezing."""
import json
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.nn as nn
from frostjit.hashgrid import HashGridEncoding, PermutoEncoding
from frostjit.llvm import Int32, UInt32
from frostjit.llvm.ad import Bool, Float, Float64, TensorXf

from drjit_hashgrid_reference import CASES, KEYS, D3

with open(os.path.join(os.path.dirname(__file__), "data", "drjit_hashgrid_reference.json")) as _f:
    DRJIT = json.load(_f)

P = 2531011
M32 = np.uint64(0xFFFFFFFF)


def _build(name, dtype=Float):
    cls, D, xs, kw = CASES[name]
    return {"PermutoEncoding": PermutoEncoding, "HashGridEncoding": HashGridEncoding}[cls](dtype, D, **kw), xs


def _vertex_index(key, D, res, size, dense):
    """Dr.Jit's vertex index within a level (``key``: uint64 arrays holding 32-bit values)."""
    if dense:
        idx = np.zeros_like(key[0])
        for d in range(D):
            idx = (idx + key[d] * np.uint64(res ** d)) & M32
    else:
        idx = np.zeros_like(key[0])
        for d in range(D):
            idx = ((idx + key[d]) * np.uint64(P)) & M32
    return idx % np.uint64(size)


def permuto_reference(params, x, D, L, F, T, base, pls, align):
    """NumPy model of the permutohedral encoding (weights and sums in float64, positions in
    float32 as the encoding computes them), written from the documented algorithm."""
    N = x.shape[1]
    out = np.zeros((L * F, N))
    offset = 0
    for level in range(L):
        scale = base * pls ** level - 1
        res = math.ceil(scale) + 1
        dense = res ** D <= T
        size = -(-res ** D // F) * F if dense else T
        # fma(x, scale, offset) in float32: the double product and sum are exact, one rounding
        xs = (x.astype(np.float64) * np.float64(np.float32(scale)) + (0.0 if align else 0.5)).astype(np.float32)
        b = np.floor(xs)
        f = xs - b
        b = b.astype(np.int64)
        xk, xki = [f[d].copy() for d in range(D)], [np.full(N, d) for d in range(D)]
        for i in range(D):                      # Dr.Jit's compare-and-swap network
            for j in range(i + 1, D):
                s = xk[i] > xk[j]
                xk[i], xk[j] = np.where(s, xk[j], xk[i]), np.where(s, xk[i], xk[j])
                xki[i], xki[j] = np.where(s, xki[j], xki[i]), np.where(s, xki[i], xki[j])
        for rank in range(D + 1):
            if rank < D:
                w = xk[rank].astype(np.float64) - (xk[rank - 1].astype(np.float64) if rank else 0.0)
                key = [b[d] + ((f[d] > xk[rank]) | ((f[d] == xk[rank]) & (d >= xki[rank]))) for d in range(D)]
            else:
                w, key = 1.0 - xk[D - 1].astype(np.float64), list(b)
            key = [(k & 0xFFFFFFFF).astype(np.uint64) for k in key]
            idx = _vertex_index(key, D, res, size, dense).astype(np.int64) + offset
            for ft in range(F):
                out[level * F + ft] += w * params[idx * F + ft]
        offset += size
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_equal_drjits_recorded_numbers(name):
    ref = DRJIT[name]
    e, xs = _build(name)
    assert e.n_params == ref["n_params"]
    assert [e.level_offset(i) for i in range(e.n_levels + 1)] == ref["offsets"]
    # default initialization: fj.rng(seed=0) uniform on [-init_scale, init_scale], as Dr.Jit
    np.testing.assert_allclose(e.params.numpy()[:6], ref["init"], rtol=1e-6)
    p = Float(np.arange(e.n_params) * 0.01)
    x0 = Float(xs[0])
    fj.enable_grad(p, x0)
    e.set_params(p)
    out = e([x0] + [Float(x) for x in xs[1:]])
    np.testing.assert_allclose([o.numpy() for o in out], ref["out"], rtol=1e-6, atol=1e-7)
    fj.backward(fj.sum(sum((k + 1) * c for k, c in enumerate(out))))
    np.testing.assert_allclose(fj.grad(p).numpy(), ref["grad_p"], rtol=1e-5, atol=2e-6)
    # (float32 sums of many terms in another order: the hash-grid tests allow 1e-4 too)
    np.testing.assert_allclose(fj.grad(x0).numpy(), ref["grad_x0"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["permuto2", "permuto2_smooth", "grid2_torchngp"])
def test_repr_lists_drjits_fields(name):
    e, _ = _build(name)
    assert repr(e) == DRJIT[name]["repr"].replace("drjit.llvm.ad.Float", "frostjit.llvm.ad.Float")


def test_permuto_hash_and_indexing_match_drjit():
    e = PermutoEncoding(Float, 3, **D3)
    key = [fj.reinterpret_array(UInt32, Int32(k)) for k in KEYS]
    assert e.hash(key).numpy().tolist() == DRJIT["permuto3_hash"]
    assert [e.indexing_function(key, lv).numpy().tolist() for lv in range(3)] == DRJIT["permuto3_index"]


PERMUTO_CONFIGS = [(2, 3, 2, 2 ** 10, 3, 1.5, False), (2, 4, 2, 64, 4, 2.0, True), (3, 3, 2, 128, 2, 1.7, False),
                   (3, 2, 4, 48, 3, 1.5, True), (1, 3, 2, 16, 5, 1.3, False), (4, 2, 2, 256, 2, 1.5, False)]


@settings(max_examples=12, deadline=None)
@given(config=st.sampled_from(PERMUTO_CONFIGS), width=st.sampled_from([1, 7, 1000]), seed=st.integers(0, 2 ** 16))
def test_permuto_matches_numpy_model(config, width, seed):
    D, L, F, T, base, pls, align = config
    e = PermutoEncoding(Float, D, n_levels=L, n_features_per_level=F, hashmap_size=T, base_resolution=base,
                        per_level_scale=pls, align_corners=align)
    rng = np.random.default_rng(seed)
    params = rng.standard_normal(e.n_params).astype(np.float32)
    e.set_params(Float(params))
    x = rng.random((D, width)).astype(np.float32)
    if width > 1:
        x[:, 0] = 0.5           # ties between the fractional parts: the network's tie rule
    got = np.array([np.broadcast_to(c.numpy(), (width,)) for c in e([Float(r) for r in x])])
    np.testing.assert_allclose(got, permuto_reference(params.astype(np.float64), x, *config), rtol=1e-5, atol=3e-5)


def test_permuto_weights_are_a_partition_of_unity():
    e = PermutoEncoding(Float64, 3, n_levels=2, n_features_per_level=2, hashmap_size=512, base_resolution=4)
    e.set_params(Float64(np.ones(e.n_params)))
    x = np.random.default_rng(1).random((3, 50))
    for c in e([Float64(r) for r in x]):
        np.testing.assert_allclose(c.numpy(), 1.0, rtol=1e-12)


@pytest.mark.parametrize("cls", [PermutoEncoding, HashGridEncoding])
@pytest.mark.parametrize("smooth", [False, True])
def test_position_gradients_match_finite_differences_float64(cls, smooth):
    # The straight-through estimator's gradient is that of w + lambda * r(w): finite
    # differences of the encoding with the weights replaced by that.
    e = cls(Float64, 2, n_levels=2, n_features_per_level=2, hashmap_size=16, base_resolution=3,
            per_level_scale=1.5, rng=fj.rng(seed=2), init_scale=1.0, smooth_weight_gradients=smooth,
            smooth_weight_lambda=0.7)
    x = np.array([[0.13, 0.42, 0.77], [0.31, 0.58, 0.09]])
    x0 = Float64(x[0])
    fj.enable_grad(x0)
    out = e([x0, Float64(x[1])])
    fj.backward(fj.sum(out[0] - out[1] + 2 * out[3]))
    if smooth:
        assert not np.allclose(fj.grad(x0).numpy(), _fd_grad(e, x, smooth=False), rtol=1e-3)
    np.testing.assert_allclose(fj.grad(x0).numpy(), _fd_grad(e, x, smooth), rtol=1e-5)


def _fd_grad(e, x, smooth):
    """Central differences of ``out[0] - out[1] + 2 out[3]`` w.r.t. the first coordinate, with
    each weight w replaced by ``w + lambda (1 - cos(pi w)) / 2`` where ``smooth``."""
    original = type(e)._accumulate

    def accumulate(self, acc, weight, vertex, active, pos_t):
        if smooth:
            weight = weight + self.smooth_weight_lambda * 0.5 * (1 - fj.cos(math.pi * weight))
        saved, self._smooth_weight_gradients = self._smooth_weight_gradients, False
        try:
            original(self, acc, weight, vertex, active, pos_t)
        finally:
            self._smooth_weight_gradients = saved

    def f(v):
        o = e([Float64(v), Float64(x[1])])
        return (o[0] - o[1] + 2 * o[3]).numpy()
    h = 1e-7
    type(e)._accumulate = accumulate
    try:
        return (f(x[0] + h) - f(x[0] - h)) / (2 * h)
    finally:
        type(e)._accumulate = original


@pytest.mark.parametrize("cls", [PermutoEncoding, HashGridEncoding])
def test_smooth_weight_gradients_keep_values_and_parameter_gradients(cls):
    x = [Float(0.1, 0.55, 0.93), Float(0.2, 0.7, 0.05)]
    res = []
    for smooth in (False, True):
        e = cls(Float, 2, n_levels=2, n_features_per_level=2, hashmap_size=8, base_resolution=3,
                per_level_scale=1.5, smooth_weight_gradients=smooth)
        fj.enable_grad(e.data)
        out = e(x)
        fj.backward(fj.sum(out[0] + 3 * out[3]))
        res.append(([o.numpy() for o in out], fj.grad(e.data).numpy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-6, atol=1e-7)


def test_torchngp_compat_keeps_the_half_cell_offset_with_align_corners():
    kw = dict(n_levels=2, n_features_per_level=2, hashmap_size=8, base_resolution=3, per_level_scale=1.5,
              init_scale=1.0)
    x = [Float(0.1, 0.55, 0.93), Float(0.2, 0.7, 0.05)]
    plain = HashGridEncoding(Float, 2, **kw)(x)
    compat = HashGridEncoding(Float, 2, align_corners=True, torchngp_compat=True, **kw)(x)
    aligned = HashGridEncoding(Float, 2, align_corners=True, **kw)(x)
    np.testing.assert_array_equal([c.numpy() for c in compat], [c.numpy() for c in plain])
    assert not np.allclose([c.numpy() for c in aligned], [c.numpy() for c in plain])
    # a permutohedral encoding accepts the option and ignores it (Dr.Jit 1.5)
    a = PermutoEncoding(Float, 2, torchngp_compat=True, align_corners=True, **kw)
    b = PermutoEncoding(Float, 2, align_corners=True, **kw)
    assert a.torchngp_compat and not b.torchngp_compat
    np.testing.assert_array_equal([c.numpy() for c in a(x)], [c.numpy() for c in b(x)])


@pytest.mark.parametrize("cls", [PermutoEncoding, HashGridEncoding])
def test_inactive_lanes_are_zero(cls):
    e = cls(Float, 2, n_levels=2, n_features_per_level=2, hashmap_size=8, base_resolution=3, init_scale=1.0)
    x = [Float(0.1, 0.55, 0.93), Float(0.2, 0.7, 0.05)]
    full = np.array([c.numpy() for c in e(x)])
    masked = np.array([c.numpy() for c in e(x, Bool(True, False, True))])
    np.testing.assert_array_equal(masked[:, [0, 2]], full[:, [0, 2]])
    np.testing.assert_array_equal(masked[:, 1], 0)


def test_constructor_checks_and_scalar_dtype():
    with pytest.raises(ValueError, match="multiple of the number of features 4"):
        PermutoEncoding(Float, 2, n_features_per_level=4, hashmap_size=50)
    with pytest.raises(ValueError, match="expected 3 coordinates, got 2"):
        PermutoEncoding(Float, 3, n_levels=1, hashmap_size=16)([Float(0.5), Float(0.5)])
    with pytest.raises(TypeError, match="JIT array type"):
        PermutoEncoding(fj.scalar.ArrayXf, 2)       # (Dr.Jit 1.5's scalar encodings fail when called)
    assert nn.PermutoEncoding is PermutoEncoding and fj.hashgrid.PermutoEncoding is PermutoEncoding


def test_permuto_frozen_matches_plain_at_several_widths():
    e = PermutoEncoding(Float, 3, n_levels=3, n_features_per_level=2, hashmap_size=64, base_resolution=3,
                        per_level_scale=1.6, init_scale=0.5)

    def run(enc, x, y, z):
        return enc([x, y, z])

    frozen = fj.freeze(run)
    rng = np.random.default_rng(4)
    for width in (7, 1, 1000, 100003, 7):
        x = rng.random((3, width)).astype(np.float32)
        a = run(e, *(Float(r) for r in x))
        b = frozen(e, *(Float(r) for r in x))
        for u, v in zip(a, b):
            np.testing.assert_array_equal(np.broadcast_to(v.numpy(), (width,)), np.broadcast_to(u.numpy(), (width,)))


def test_permuto_layer_in_a_frozen_network():
    enc = PermutoEncoding(Float, 2, n_levels=2, n_features_per_level=2, hashmap_size=16, base_resolution=3,
                          per_level_scale=1.5, init_scale=0.5)
    net = nn.pack(nn.Sequential(nn.HashEncodingLayer(enc), nn.Linear(-1, 2)).alloc(TensorXf, 2))
    assert "PermutoEncoding(" in repr(net)

    def run(net, x, y):
        return net(nn.CoopVec(x, y))

    frozen = fj.freeze(run)
    rng = np.random.default_rng(3)
    for width in (7, 1000, 1, 7):
        x = rng.random((2, width)).astype(np.float32)
        a = run(net, Float(x[0]), Float(x[1]))
        b = frozen(net, Float(x[0]), Float(x[1]))
        np.testing.assert_allclose([c.numpy() for c in b], [c.numpy() for c in a], rtol=1e-6, atol=1e-7)
