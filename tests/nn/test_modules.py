"""Modules: Dr.Jit's constructors, alloc (seeded uniform initialization), the parameter mapping,
activations and encodings against NumPy."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.nn as nn
from frostjit.llvm.ad import TensorXf, TensorXf16, Float, Float16


def net3():
    return nn.Sequential(nn.Linear(-1, 3, bias=True), nn.ReLU(), nn.Linear(-1, 2, bias=False), nn.Tanh())


def test_alloc_draws_drjits_weights_for_the_default_seed():
    # Dr.Jit 1.5: net3().alloc(TensorXf, 4), default rng (seed 0x100000000)
    n = net3().alloc(TensorXf, 4)
    assert repr(n) == ("Sequential(\n  Linear(in_features=4, out_features=3),\n  ReLU(),\n"
                       "  Linear(in_features=3, out_features=2, bias=False),\n  Tanh()\n)")
    assert list(n.keys()) == ["layers.0.weights", "layers.0.bias", "layers.2.weights"]
    np.testing.assert_allclose(np.asarray(n["layers.0.weights"]).ravel()[:6],
                               [-0.15072733, -0.37873346, -0.37843022, 0.3735571, -0.18847454, 0.3885736], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(n["layers.2.weights"]).ravel(),
                               [0.04112639, -0.07684045, -0.67092943, 0.23958679, 0.453377, -0.34029585], rtol=1e-6)
    assert np.asarray(n["layers.0.bias"]).tolist() == [0, 0, 0]
    w = np.asarray(net3().alloc(TensorXf, 4, rng=fj.rng(seed=1))["layers.0.weights"])
    assert np.abs(w).max() <= 1 / math.sqrt(3) and not np.allclose(w.ravel()[:6], -0.15072733)


def test_alloc_float16_rounds_the_float32_draws():
    n = net3().alloc(TensorXf16, 4)
    w = n["layers.0.weights"]
    assert type(w) is TensorXf16
    np.testing.assert_array_equal(np.asarray(w.numpy()).ravel()[:4],
                                  np.float16([-0.15072733, -0.37873346, -0.37843022, 0.3735571]))


def test_alloc_needs_the_input_size_of_auto_sized_layers():
    with pytest.raises(RuntimeError, match="unspecified size"):
        nn.Sequential(nn.Linear(-1, 3)).alloc(TensorXf)
    assert repr(nn.Sequential(nn.Linear(4, -1)).alloc(TensorXf)) == "Sequential(\n  Linear(in_features=4, out_features=4)\n)"
    with pytest.raises(TypeError, match="tensor type"):
        net3().alloc(Float, 4)


def test_packed_module_maps_weights_to_the_shared_buffer_with_prefix():
    n = nn.Sequential(nn.Linear(-1, 3), nn.ReLU(), nn.Linear(-1, 2, bias=False), prefix="mlp").alloc(TensorXf, 2)
    assert list(n.keys()) == ["mlp.layers.0.weights", "mlp.layers.0.bias", "mlp.layers.2.weights"]
    p = nn.pack(n, layout="training")
    assert list(p.keys()) == ["mlp.weights"] and len(p["mlp.weights"]) == 6 + 3 + 6
    assert p.layers[0].weights.layout == "training" and p.layers[0].bias.layout == "row_major"
    assert n.layers[0].weights is not None and not isinstance(n.layers[0].weights, nn.MatrixView)  # a copy
    new = p["mlp.weights"] * 2
    p["mlp.weights"] = new
    assert all(v.buffer is new for v in (p.layers[0].weights, p.layers[0].bias, p.layers[2].weights))
    with pytest.raises(ValueError, match="expected a buffer of 15"):
        p["mlp.weights"] = Float(1, 2)
    with pytest.raises(KeyError):
        p["weights"]
    u = nn.unpack(p)
    assert u.layers[0].weights.layout == "row_major" and u.layers[0].weights.buffer is not new


def test_module_and_optimizer_exchange_parameters_through_the_mapping():
    p = nn.pack(net3().alloc(TensorXf, 4), layout="training")
    opt = fj.opt.Adam(lr=1e-3)
    opt.update(p)
    assert list(opt.keys()) == ["weights"]
    p.update(opt)
    assert p["weights"] is not None and len(p["weights"]) == 21


def test_linear_needs_packed_weights_for_coopvecs():
    n = net3().alloc(TensorXf, 4)
    with pytest.raises(RuntimeError, match="requires packed weights"):
        n(nn.CoopVec(Float(1), Float(2), Float(3), Float(4)))


def test_packed_mlp_forward_matches_numpy_and_drjit():
    p = nn.pack(net3().alloc(TensorXf, 4), layout="training")
    x = nn.CoopVec(Float(0.1, 0.5), Float(0.2, -1), Float(0.3, 2), Float(0.4, 0.7))
    y = p(x)
    # Dr.Jit 1.5: [[-0.00657577, 0], [0.0387797, 0]]
    np.testing.assert_allclose([c.numpy() for c in y], [[-0.00657577, 0], [0.0387797, 0]], atol=1e-6)


@settings(max_examples=10)
@given(width=st.sampled_from([1, 7, 1000]), hidden=st.integers(1, 5), seed=st.integers(0, 1000))
def test_mlp_forward_matches_numpy(width, hidden, seed):
    net = nn.Sequential(nn.Linear(-1, hidden), nn.LeakyReLU(0.1), nn.Linear(-1, 2), nn.Tanh())
    u = net.alloc(TensorXf, 3, rng=fj.rng(seed=seed))
    W0, b0, W1, b1 = (np.asarray(u[k].numpy(), np.float64) for k in
                      ("layers.0.weights", "layers.0.bias", "layers.2.weights", "layers.2.bias"))
    p = nn.pack(u)
    x = np.random.default_rng(seed).standard_normal((3, width)).astype(np.float32)
    y = p(nn.CoopVec(*[Float(r) for r in x]))
    h = W0 @ x + b0[:, None]
    h = np.where(h >= 0, h, 0.1 * h)
    ref = np.tanh(W1 @ h + b1[:, None])
    np.testing.assert_allclose(np.array([c.numpy() for c in y]), ref, rtol=1e-5, atol=1e-6)


def test_activations_on_coopvecs_and_tensors():
    x = nn.CoopVec(Float(-1.0, 0.5), Float(2.0, -0.25))
    t = TensorXf(np.array([[-1.0, 0.5], [2.0, -0.25]], np.float32))
    ref = np.array([[-1.0, 0.5], [2.0, -0.25]])
    cases = [(nn.ReLU(), np.maximum(ref, 0)), (nn.LeakyReLU(0.1), np.where(ref >= 0, ref, 0.1 * ref)),
             (nn.Exp(), np.exp(ref)), (nn.Exp2(), np.exp2(ref)), (nn.Tanh(), np.tanh(ref)),
             (nn.ScaleAdd(2.0, 1.0), ref * 2 + 1), (nn.ScaleAdd(), ref)]
    for layer, expected in cases:
        y = layer(x)
        assert isinstance(y, nn.CoopVec), layer
        np.testing.assert_allclose([c.numpy() for c in y], expected, rtol=1e-6, err_msg=repr(layer))
        np.testing.assert_allclose(layer(t).numpy(), expected, rtol=1e-6, err_msg=repr(layer))
    c = nn.Cast(Float16)(x)
    assert c.type is Float16 and repr(nn.Cast(Float16)) == "Cast(dtype=Float16)"
    assert type(nn.Cast(Float16)(t)).__name__ == "TensorXf16"


def _encode_numpy(x, octaves, shift, tri):
    out = []
    for row in x:
        for i in range(octaves):
            t = row * 2.0 ** i + i * shift
            if tri:
                def cos_tri(u):
                    return 1 - 4 * np.abs(u - np.round(u))
                out += [cos_tri(t - 0.25), cos_tri(t)]
            else:
                out += [np.sin(2 * np.pi * t), np.cos(2 * np.pi * t)]
    return np.array(out)


@pytest.mark.parametrize("tri", [False, True])
def test_sin_and_tri_encodings_match_numpy_and_drjit(tri):
    layer = (nn.TriEncode if tri else nn.SinEncode)(2, 0.25)
    x = np.array([[0.1, 0.3], [0.7, 0.9]], np.float32)
    y = layer(nn.CoopVec(Float(x[0]), Float(x[1])))
    np.testing.assert_allclose([c.numpy() for c in y], _encode_numpy(x.astype(np.float64), 2, 0.25, tri),
                               atol=2e-6)
    if tri:     # Dr.Jit 1.5's numbers
        np.testing.assert_allclose([c.numpy() for c in y][:4], [[0.4, 0.8], [0.6, -0.2], [0.2, -0.6], [-0.8, 0.4]],
                                   atol=1e-6)
    t = layer(TensorXf(x))
    assert t.shape == (8, 2)
    np.testing.assert_allclose(t.numpy(), _encode_numpy(x.astype(np.float64), 2, 0.25, tri), atol=2e-6)
    assert repr(layer.alloc(TensorXf, 3)) == \
        f"{'TriEncode' if tri else 'SinEncode'}(octaves=2, shift=0.25, in_channels=3, out_features=12)"


def test_linear_on_tensors_is_a_matrix_product_with_unpacked_weights():
    # (tensor mode raised "requires packed weights"; Dr.Jit evaluates W @ x + b[:, None])
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(-1, 2, bias=False))
    u = net.alloc(TensorXf, 3, rng=fj.rng(seed=7))
    u["layers.0.bias"] = TensorXf(np.float32([0.1, -0.2, 0.3, -0.4]))
    W0, b0, W1 = (np.asarray(u[k].numpy(), np.float64) for k in ("layers.0.weights", "layers.0.bias", "layers.2.weights"))
    x = np.random.default_rng(3).standard_normal((3, 5)).astype(np.float32)
    xt = TensorXf(x)
    fj.enable_grad(xt)
    y = u(xt)
    assert type(y) is TensorXf and y.shape == (2, 5)
    np.testing.assert_allclose(y.numpy(), W1 @ np.maximum(W0 @ x + b0[:, None], 0), rtol=1e-5, atol=1e-6)
    xs = [Float(r) for r in x]
    fj.enable_grad(xs)
    yc = nn.pack(fj.copy(u), layout="training")(nn.CoopVec(*xs))
    np.testing.assert_allclose([c.numpy() for c in yc], y.numpy(), rtol=1e-5, atol=1e-6)
    fj.backward(fj.sum(y.array))
    fj.backward(fj.sum(fj.sum(yc)))
    np.testing.assert_allclose(xt.grad.numpy(), [g.grad.numpy() for g in xs], rtol=1e-5, atol=1e-6)


def test_linear_names_what_is_missing_uninitialized_packed_or_unpacked():
    x = nn.CoopVec(Float(1, 2), Float(3, 4))
    with pytest.raises(RuntimeError, match=r"^frostjit.nn.Linear: uninitialized network. Call 'net = net.alloc"):
        nn.Linear(2, 4)(x)
    packed = nn.pack(nn.Sequential(nn.Linear(2, 4)).alloc(TensorXf, 2))
    with pytest.raises(RuntimeError, match="tensor-mode evaluation requires unpacked 2D weights"):
        packed(TensorXf(np.ones((2, 3), np.float32)))
    with pytest.raises(TypeError, match="expected a CoopVec or a tensor, got Float"):
        nn.Sequential(nn.Linear(2, 4)).alloc(TensorXf, 2)(Float(1, 2))


def test_setting_a_parameter_of_another_type_converts_it_to_the_slot_type():
    net = nn.Sequential(nn.Linear(2, 4)).alloc(TensorXf16, 2)
    net["layers.0.weights"] = fj.full(TensorXf, 2.5, (4, 2))
    w = net["layers.0.weights"]
    assert type(w) is TensorXf16 and w.shape == (4, 2) and np.all(w.numpy() == 2.5)


def test_float16_sin_encoding_rounds_as_drjits_double_angle_recurrence():
    # Dr.Jit 1.5 computes octave i from octave i-1 (double angle + a fixed rotation); the direct
    # sincos of each octave differs from it in the last float16 digits.  Dr.Jit's numbers:
    data = [[0.1 + 0.15 * i + 0.07 * j for j in range(4)] for i in range(3)]
    y = nn.SinEncode(octaves=3, shift=0.3)(TensorXf16(data))
    assert y.shape == (18, 4)
    assert y.numpy()[2:4].tolist() == [[0.0008382797241210938, -0.77099609375, -0.98291015625, -0.4833984375],
                                       [-1.0, -0.63671875, 0.1871337890625, 0.87646484375]]
    assert y.numpy()[16:18].tolist() == [[0.94921875, 0.13330078125, -0.99755859375, 0.23779296875],
                                         [0.314453125, -0.990234375, 0.062744140625, 0.97119140625]]
    c = nn.SinEncode(octaves=3, shift=0.3)(nn.CoopVec(*[Float16(r) for r in data]))
    assert np.array([v.numpy() for v in c]).tolist() == y.numpy().tolist()
