"""Hash-grid encodings' parameter gradients: one backward kernel for all levels, corners and
features (the gathers of the parameters share one gradient buffer, ad/graph.py's
ScatterAdjoint), equal to a NumPy adjoint, and consistent with forward mode."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.hashgrid import HashGridEncoding, PermutoEncoding
from frostjit.llvm.ad import Float, Float64

from test_hashgrid import corners

# (dimension, levels, features, hashmap size, base resolution, per-level scale, align corners)
CONFIGS = [(2, 3, 2, 2 ** 10, 3, 1.5, False), (2, 4, 2, 64, 4, 2.0, False), (3, 3, 2, 128, 2, 1.7, True),
           (2, 3, 4, 48, 3, 1.5, True), (1, 3, 2, 16, 5, 1.3, False), (3, 2, 2, 2 ** 12, 3, 2.0, False)]


def adjoint(coef, x, D, L, F, T, base, pls, align):
    """NumPy gradient of ``sum_k coef[k] * out[k]`` with respect to the parameters (float64)."""
    e = HashGridEncoding(Float64, D, n_levels=L, n_features_per_level=F, hashmap_size=T, base_resolution=base,
                         per_level_scale=pls, align_corners=align)
    grad = np.zeros(e.n_params)
    for row, index, w in corners(x, D, L, F, T, base, pls, align):
        np.add.at(grad, index, w * coef[row])
    return grad


def _loss(enc, x, coef, dtype):
    out = enc([dtype(r) for r in x])
    return fj.sum(sum(dtype(coef[k]) * out[k] for k in range(len(out))))


@settings(max_examples=5)
@given(config=st.sampled_from(CONFIGS), width=st.sampled_from([1, 5, 300]), seed=st.integers(0, 2 ** 16))
def test_parameter_gradients_match_numpy_adjoint(config, width, seed):
    D, L, F, T, base, pls, align = config
    e = HashGridEncoding(Float64, D, n_levels=L, n_features_per_level=F, hashmap_size=T, base_resolution=base,
                         per_level_scale=pls, align_corners=align)
    rng = np.random.default_rng(seed)
    x = rng.random((D, width))
    coef = rng.standard_normal((L * F, width))
    fj.enable_grad(e.data)
    fj.backward(_loss(e, x, coef, Float64))
    np.testing.assert_allclose(fj.grad(e.data).numpy(), adjoint(coef, x, *config), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind,D", [(HashGridEncoding, 2), (HashGridEncoding, 3), (PermutoEncoding, 3)])
def test_backward_is_one_kernel_and_agrees_with_forward_mode(kind, D):
    L, F = 4, 2
    e = kind(Float, D, n_levels=L, n_features_per_level=F, hashmap_size=256, base_resolution=4)
    rng = np.random.default_rng(D)
    x = rng.random((D, 200)).astype(np.float32)
    coef = rng.standard_normal((L * F, 200)).astype(np.float32)
    fj.enable_grad(e.data)
    loss = _loss(e, x, coef, Float)
    fj.eval(loss)
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory):
        fj.kernel_history()
        fj.backward(loss)
        grad = fj.grad(e.data)
        fj.eval(grad)
        launches = fj.kernel_history((fj.KernelType.JIT,))
    # (one kernel for all L * corners * F gathers of the parameters; there were 32-64 before)
    assert len(launches) == 1, len(launches)
    # forward mode along a direction gives <gradient, direction> (the encoding is linear in its parameters)
    direction = rng.standard_normal(e.n_params).astype(np.float32)
    fj.set_grad(e.data, Float(direction))
    loss = _loss(e, x, coef, Float)
    fj.forward_to(loss)
    want = float(np.dot(grad.numpy().astype(np.float64), direction))
    assert abs(fj.grad(loss).numpy()[0] - want) <= 1e-4 * (1 + abs(want))
