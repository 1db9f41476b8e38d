"""Gathers of one source share one gradient buffer in a backward traversal (ad/graph.py's
ScatterEdge): the gradients stay those of a NumPy model (``np.add.at``), whatever the graph
around the gathers (interior sources, masks, earlier gradients, ``backward_to``, isolation
scopes, forward mode), and K gathers of one source launch one kernel, not K."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm.ad import Float, Float64, UInt32, Bool


def _setup(n_src, width, k, seed):
    rng = np.random.default_rng(seed)
    src = rng.standard_normal(n_src)
    idx = rng.integers(0, n_src, (k, width))
    act = rng.random((k, width)) < 0.7
    coef = rng.standard_normal((k, width))
    return src, idx, act, coef


def _expected(n_src, idx, act, coef, scale=1.0):
    want = np.zeros(n_src)
    for i in range(len(idx)):
        np.add.at(want, idx[i][act[i]], scale * coef[i][act[i]])
    return want


@settings(max_examples=10)
@given(n_src=st.sampled_from([1, 5, 64]), width=st.sampled_from([1, 3, 100]), k=st.integers(1, 6),
       interior=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_gather_gradients_match_numpy(n_src, width, k, interior, seed):
    src, idx, act, coef = _setup(n_src, width, k, seed)
    a = Float64(src)
    fj.enable_grad(a)
    s = a * 3.0 if interior else a          # an interior source: its gradient flows on to a
    y = 0
    for i in range(k):
        y = y + Float64(coef[i]) * fj.gather(Float64, s, UInt32(idx[i]), Bool(act[i]))
    fj.backward(fj.sum(y))
    np.testing.assert_allclose(fj.grad(a).numpy(), _expected(n_src, idx, act, coef, 3.0 if interior else 1.0),
                               rtol=1e-12, atol=1e-12)


def test_gathers_mixed_with_other_edges_and_an_earlier_gradient():
    src, idx, act, coef = _setup(10, 8, 3, 4)
    a = Float64(src)
    fj.enable_grad(a)
    fj.set_grad(a, Float64(np.full(10, 0.5)))             # accumulates onto an earlier gradient
    y = fj.sum(a * a)                                     # an elementwise edge into the same source
    for i in range(3):
        y = y + fj.sum(Float64(coef[i]) * fj.gather(Float64, a, UInt32(idx[i]), Bool(act[i])))
    fj.backward(y)
    np.testing.assert_allclose(fj.grad(a).numpy(), 0.5 + 2 * src + _expected(10, idx, act, coef), rtol=1e-12)


def test_two_sources_backward_to_and_isolation():
    src, idx, act, coef = _setup(6, 5, 4, 9)
    a, b = Float64(src), Float64(src[::-1].copy())
    fj.enable_grad(a, b)
    ga = [fj.gather(Float64, a, UInt32(idx[i]), Bool(act[i])) for i in range(2)]
    with fj.isolate_grad():
        gb = [fj.gather(Float64, b, UInt32(idx[i]), Bool(act[i])) for i in range(2, 4)]
        y = fj.sum(Float64(coef[0]) * ga[0] + Float64(coef[1]) * ga[1]
                   + Float64(coef[2]) * gb[0] + Float64(coef[3]) * gb[1])
        fj.backward(y)
    np.testing.assert_allclose(fj.grad(a).numpy(), _expected(6, idx[:2], act[:2], coef[:2]), rtol=1e-12)
    np.testing.assert_allclose(fj.grad(b).numpy(), _expected(6, idx[2:], act[2:], coef[2:]), rtol=1e-12)

    c = Float64(src)
    fj.enable_grad(c)
    mid = c * 2.0
    fj.enable_grad(mid)
    z = fj.sum(Float64(coef[0]) * fj.gather(Float64, mid, UInt32(idx[0]))
               + Float64(coef[1]) * fj.gather(Float64, mid, UInt32(idx[1])))
    fj.enable_grad(z)
    fj.set_grad(z, 1.0)
    fj.backward_to(mid)                                    # a traversal restricted to targets
    every = np.ones_like(act[:2])
    np.testing.assert_allclose(fj.grad(mid).numpy(), _expected(6, idx[:2], every, coef[:2]), rtol=1e-12)


def test_forward_mode_through_gathers():
    src, idx, act, coef = _setup(7, 9, 3, 2)
    a = Float64(src)
    fj.enable_grad(a)
    y = 0
    for i in range(3):
        y = y + Float64(coef[i]) * fj.gather(Float64, a, UInt32(idx[i]), Bool(act[i]))
    direction = np.random.default_rng(3).standard_normal(7)
    fj.set_grad(a, Float64(direction))
    fj.forward_to(y)
    want = sum(np.where(act[i], coef[i] * direction[idx[i]], 0) for i in range(3))
    np.testing.assert_allclose(fj.grad(y).numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("k", [2, 16])
def test_gathers_of_one_source_launch_one_backward_kernel(k):
    src, idx, act, coef = _setup(32, 50, k, 5)
    a = Float(src.astype(np.float32))
    fj.enable_grad(a)
    y = 0
    for i in range(k):
        y = y + Float(coef[i].astype(np.float32)) * fj.gather(Float, a, UInt32(idx[i]), Bool(act[i]))
    loss = fj.sum(y)
    fj.eval(loss)
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory):
        fj.kernel_history()
        fj.backward(loss)
        fj.eval(fj.grad(a))
        launches = fj.kernel_history((fj.KernelType.JIT,))
    assert len(launches) == 1, [e.get("size") for e in launches]
    np.testing.assert_allclose(fj.grad(a).numpy(), _expected(32, idx, act, coef), rtol=1e-5, atol=1e-5)
