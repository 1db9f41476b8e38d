"""matvec: A @ x + b against NumPy, gradients against finite differences and Dr.Jit's numbers."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.nn as nn
from frostjit.llvm.ad import TensorXf, TensorXf64, Float, Float64

WIDTHS = (1, 7, 1000)


@settings(max_examples=12)
@given(n_out=st.integers(1, 4), n_in=st.integers(1, 4), width=st.sampled_from(WIDTHS),
       transpose=st.booleans(), bias=st.booleans(), layout=st.sampled_from(["inference", "training"]),
       seed=st.integers(0, 2**16))
def test_matvec_matches_numpy(n_out, n_in, width, transpose, bias, layout, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n_out, n_in)).astype(np.float32)
    b = rng.standard_normal(n_in if transpose else n_out).astype(np.float32)
    x = rng.standard_normal((n_out if transpose else n_in, width)).astype(np.float32)
    Av, bv = nn.pack(TensorXf(A), TensorXf(b), layout=layout)
    y = nn.matvec(Av, nn.CoopVec(*[Float(r) for r in x]), bv if bias else None, transpose=transpose)
    ref = (A.T if transpose else A).astype(np.float64) @ x + (b[:, None] if bias else 0)
    got = np.array([np.broadcast_to(c.numpy(), (width,)) for c in y])
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    # A.T (the view's flag) and transpose=True are the same product
    if not bias:
        y2 = Av.T @ nn.CoopVec(*[Float(r) for r in x]) if transpose else None
        if y2 is not None:
            np.testing.assert_allclose(np.array([c.numpy() for c in y2]), got, rtol=1e-6, atol=1e-6)


def test_matvec_checks_shapes_and_types():
    Av = nn.pack(TensorXf(np.ones((3, 3), np.float32)))
    with pytest.raises(ValueError, match="3x3 matrix times a vector of 2"):
        nn.matvec(Av, nn.CoopVec(Float(1), Float(2)))
    with pytest.raises(TypeError, match="incompatible input types"):
        nn.matvec(Av, nn.CoopVec(Float64(1), Float64(2), Float64(3)))
    with pytest.raises(TypeError, match="'x' must be a CoopVec"):
        nn.matvec(Av, Float(1))


def _mlp64(seed=3):
    net = nn.Sequential(nn.Linear(-1, 3), nn.Tanh(), nn.Linear(-1, 2))
    net = nn.pack(net.alloc(TensorXf64, 2, rng=fj.rng(seed=seed)), layout="training")
    # non-zero biases, so their gradients are tested with something to differentiate
    net["weights"] = net["weights"] + Float64(np.linspace(0.1, 0.5, len(net["weights"])))
    return net


def _loss(net, buf, x0, x1):
    net["weights"] = buf
    y = net(nn.CoopVec(x0, x1))
    return fj.sum(y[0] * y[0] + 3 * y[1])


def test_mlp_reverse_gradients_match_finite_differences_float64():
    net = _mlp64()
    w0 = np.asarray(net["weights"].numpy())
    xs = np.array([[0.1, 0.5, -0.3, 0.8, -0.9, 0.2, 0.4], [0.2, -1, 0.25, 0.3, 0.0, -0.5, 0.6]])
    buf = Float64(w0)
    x0 = Float64(xs[0])
    fj.enable_grad(buf, x0)
    loss = _loss(net, buf, x0, Float64(xs[1]))
    fj.backward(loss)
    g_w, g_x = np.asarray(fj.grad(buf).numpy()), np.asarray(fj.grad(x0).numpy())

    def f(w, x):
        return _loss(net, Float64(w), Float64(x), Float64(xs[1])).numpy().item()

    h = 1e-6
    fd_w = [(f(w0 + h * e, xs[0]) - f(w0 - h * e, xs[0])) / (2 * h) for e in np.eye(len(w0))]
    fd_x = [(f(w0, xs[0] + h * e) - f(w0, xs[0] - h * e)) / (2 * h) for e in np.eye(len(xs[0]))]
    np.testing.assert_allclose(g_w, fd_w, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g_x, fd_x, rtol=1e-6, atol=1e-8)


def test_mlp_forward_mode_matches_finite_differences_float64():
    net = _mlp64(seed=5)
    w0 = np.asarray(net["weights"].numpy())
    rng = np.random.default_rng(0)
    direction = rng.standard_normal(len(w0))
    dx = rng.standard_normal(7)
    xs = rng.standard_normal((2, 7))
    buf, x0 = Float64(w0), Float64(xs[0])
    fj.enable_grad(buf, x0)
    fj.set_grad(buf, Float64(direction))
    fj.set_grad(x0, Float64(dx))
    loss = _loss(net, buf, x0, Float64(xs[1]))
    fj.forward_to(loss)
    h = 1e-6

    def f(t):
        return _loss(net, Float64(w0 + t * direction), Float64(xs[0] + t * dx), Float64(xs[1])).numpy().item()

    np.testing.assert_allclose(fj.grad(loss).numpy().item(), (f(h) - f(-h)) / (2 * h), rtol=1e-6)


def test_mlp_gradients_equal_drjits_recorded_numbers():
    # Dr.Jit 1.5 (LLVM), same network, alloc seed (default) and inputs:
    #   Sequential(Linear(-1, 3), ReLU(), Linear(-1, 2, bias=False), prefix='mlp').alloc(TensorXf, 2),
    #   packed for training; loss = sum(y0 * y0 + 3 * y1).
    net = nn.Sequential(nn.Linear(-1, 3), nn.ReLU(), nn.Linear(-1, 2, bias=False), prefix="mlp")
    net = nn.pack(net.alloc(TensorXf, 2), layout="training")
    buf = net["mlp.weights"]
    x0 = Float(0.1, 0.5, -0.3)
    fj.enable_grad(buf, x0)
    y = net(nn.CoopVec(x0, Float(0.2, -1, 0.25)))
    fj.backward(fj.sum(y[0] * y[0] + 3 * y[1]))
    np.testing.assert_allclose(y[0].numpy(), [-0.04232876, 0.0124765, -0.119012], rtol=1e-5)
    np.testing.assert_allclose(y[1].numpy(), [-0.003317, 0.07268339, 0.04151339], rtol=1e-5)
    np.testing.assert_allclose(fj.grad(buf).numpy(), [
        0.3598933, -0.7197866, -0.27686268, 0.61793244, 0.16194823, -0.40811524, 0.7197866, 2.745057,
        -1.8252785, 0.00756999, -0.05237272, -0.04156445, 0.9101094, 0.7313602, 0.6376591], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(fj.grad(x0).numpy(), [-0.33547, -0.108492, -0.359324], rtol=1e-5)


def test_gradients_reach_a_separate_bias_buffer_and_the_weights():
    A = Float(1.0, 2.0, 3.0, 4.0)
    b = Float(0.5, -0.5)
    fj.enable_grad(A, b)
    Av = nn.MatrixView(A, "row_major", (2, 2), 2, 0)
    bv = nn.view(b)
    y = nn.matvec(Av, nn.CoopVec(Float(1, 2, 3), Float(-1, 0, 1)), bv)
    fj.backward(fj.sum(y[0] + 2 * y[1]))
    assert fj.grad(b).numpy().tolist() == [3, 6]
    assert fj.grad(A).numpy().tolist() == [6, 0, 12, 0]


def test_float16_matvec_rounds_like_drjit():
    # Dr.Jit 1.5 (LLVM): [0.8, 2.6, 4.4] in float16 for arange(9).reshape(3, 3) @ (0.1, 0.2, 0.3)
    from frostjit.llvm.ad import TensorXf16, Float16
    Av = nn.pack(TensorXf16(np.arange(9, dtype=np.float16).reshape(3, 3)))
    y = nn.matvec(Av, nn.CoopVec(Float16(0.1), Float16(0.2), Float16(0.3)))
    assert [float(c.numpy()[0]) for c in y] == [float(np.float16(v)) for v in (0.8, 2.6, 4.4)]


def test_input_gradients_without_trainable_weights():
    Av = nn.pack(TensorXf(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)))
    x0 = Float(1.0, 2.0)
    fj.enable_grad(x0)
    y = nn.matvec(Av, nn.CoopVec(x0, Float(0.5, 0.5)))
    fj.backward(fj.sum(y[0] + y[1]))
    assert fj.grad(x0).numpy().tolist() == [4, 4]
    assert not fj.grad_enabled(Av.buffer)
