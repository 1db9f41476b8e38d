"""Fused axis reductions of grad-enabled tensors (``ad/rules.py``: ``_axis_reduce``).

``fj.sum/mean/prod/min/max(t, axis=k)`` of a grad-enabled pending tensor runs as the backend's
``AxisReduction`` (fused into the producing kernel) and is differentiated row by row.  Checked
against the unfused path (gathers and pairwise operations, each differentiated by its own rule),
against central finite differences in float64, forward and reverse, and that the fused path was
taken (else the test would compare the unfused path with itself)."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import frostjit as fj
import frostjit.tensor.reduce as tensor_reduce
from frostjit.llvm.ad import TensorXf64

# lengths that fuse on every backend (the LLVM backend needs rows of a multiple of its width)
ROW = 64
OPS = ("sum", "mean", "prod", "min", "max")
# (shape, axis): the reduced axes last (rows of ROW), or ROW elements after them
SHAPES = [((3, ROW), 1), ((5, 2, ROW), 1), ((4, ROW), 0), ((2, 3, ROW), (0, 1)), ((2, ROW), -1)]


@contextlib.contextmanager
def _path(fused: bool):
    """The fused path (counting its uses) or the unfused one (the fused one switched off)."""
    calls = []
    original_fusable, original_reduce = tensor_reduce._fusable_axis, tensor_reduce.axis_reduce

    def counting(x, red):
        calls.append(red)
        return original_reduce(x, red)

    if fused:
        tensor_reduce.axis_reduce = counting
    else:
        tensor_reduce._fusable_axis = lambda *args: False
    try:
        yield calls
    finally:
        tensor_reduce._fusable_axis, tensor_reduce.axis_reduce = original_fusable, original_reduce


def _data(shape, seed, zeros=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.6, 1.4, size=shape)            # distinct values: no ties for min/max
    flat = a.reshape(-1)
    flat[rng.choice(flat.size, zeros, replace=False)] = 0.5    # 2 * 0.5 - 1 == 0 in the expression
    return a


def _loss(op, x, axis, weights):
    r = getattr(fj, op)(x * 2 - 1, axis=axis)
    return fj.sum(r * weights), r


def _reverse(op, a, axis, fused):
    x = TensorXf64(a)
    fj.enable_grad(x)
    weights = TensorXf64(np.linspace(0.5, 1.5, np.sum(a, axis=axis).size).reshape(np.sum(a, axis=axis).shape))
    with _path(fused) as calls:
        loss, r = _loss(op, x, axis, weights)
    fj.backward(loss)
    return r.numpy(), x.grad.numpy(), calls


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("case", SHAPES)
def test_fused_gradients_equal_the_unfused_path(op, case):
    # (one data set per case: each case compiles its own kernels, so more shapes, not more seeds)
    shape, axis = case
    a = _data(shape, len(shape))
    r_fused, g_fused, calls = _reverse(op, a, axis, fused=True)
    r_plain, g_plain, _ = _reverse(op, a, axis, fused=False)
    assert calls, "the fused path was not taken"
    np.testing.assert_allclose(r_fused, r_plain, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g_fused, g_plain, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("case", SHAPES[1:2])
def test_fused_gradients_match_finite_differences(op, case):
    shape, axis = case
    a = _data(shape, 7, 1 if op == "prod" else 0)
    _, grad, calls = _reverse(op, a, axis, fused=True)
    assert calls
    weights = np.linspace(0.5, 1.5, np.sum(a, axis=axis).size).reshape(np.sum(a, axis=axis).shape)
    f = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "min": np.min, "max": np.max}[op]

    def loss(b):
        return float(np.sum(f(b * 2 - 1, axis=axis) * weights))

    h = 1e-6
    rng = np.random.default_rng(1)
    for k in rng.choice(a.size, 12, replace=False):     # a sample of the entries (each FD is NumPy)
        e = np.zeros(a.size)
        e[k] = h
        fd = (loss(a + e.reshape(a.shape)) - loss(a - e.reshape(a.shape))) / (2 * h)
        np.testing.assert_allclose(grad.reshape(-1)[k], fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", SHAPES[:4])
def test_a_product_with_zeros_gives_the_product_of_the_other_entries(case):
    # exact where a row has one or two zeros, as the flat prod's rule (docs/ad.md); the unfused
    # path's block_reduce rule (Dr.Jit's out / x) gives NaN there, so it is not compared
    shape, axis = case
    a = _data(shape, 5, 3)
    r, grad, calls = _reverse("prod", a, axis, fused=True)
    assert calls
    axes = (axis,) if isinstance(axis, int) else axis
    axes = tuple(k % a.ndim for k in axes)
    weights = np.linspace(0.5, 1.5, np.sum(a, axis=axis).size).reshape(np.sum(a, axis=axis).shape)
    want = np.zeros_like(a)
    b = a * 2 - 1
    for k in np.ndindex(*a.shape):          # d loss / d a_k = 2 w_row prod(the row's others)
        row = tuple(slice(None) if d in axes else k[d] for d in range(a.ndim))
        others = b[row].copy()
        others[tuple(k[d] for d in axes)] = 1.0
        out = tuple(k[d] for d in range(a.ndim) if d not in axes)
        want[k] = 2 * weights[out] * np.prod(others)
    np.testing.assert_allclose(grad, want, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("op", OPS)
def test_forward_mode_through_a_fused_reduction(op):
    shape, axis = (5, 2, ROW), 1
    a = _data(shape, 3, 1 if op == "prod" else 0)
    seed = np.random.default_rng(4).uniform(-1, 1, size=shape)
    out = []
    for fused in (True, False):
        x = TensorXf64(a)
        fj.enable_grad(x)
        with _path(fused) as calls:
            r = getattr(fj, op)(x * 2 - 1, axis=axis)
        assert bool(calls) == fused
        fj.set_grad(x, TensorXf64(seed))
        fj.forward_to(r)
        out.append(fj.grad(r).numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-10, atol=1e-12)


def test_a_tie_passes_the_gradient_to_every_tied_entry():
    # as the flat min/max reductions and block_reduce (Dr.Jit's rule); the unfused pairwise path
    # may split a tie differently, so ties are left out of the comparisons above
    a = np.ones((2, ROW))
    a[0, 5] = a[0, 9] = 3.0
    x = TensorXf64(a)
    fj.enable_grad(x)
    with _path(True) as calls:
        r = fj.max(x * 1, axis=1)
    fj.backward(fj.sum(r))
    assert calls
    g = x.grad.numpy()
    assert g[0, 5] == g[0, 9] == 1.0 and g[0].sum() == 2.0 and g[1].sum() == ROW


@pytest.mark.filterwarnings("error::frostjit.freeze.frozen.FreezeWarning")
@pytest.mark.parametrize("op", ["sum", "max"])
def test_frozen_gradients_of_a_fused_reduction_equal_plain(op):
    """The backward pass inside the frozen function (recorded, replayed at a repeated width);
    the outer size follows the batch, the reduced row is fixed."""
    def f(x):
        z = x + 0
        fj.enable_grad(z)
        y = getattr(fj, op)(fj.sin(z) * z, axis=1)
        fj.backward(fj.sum(y * y))
        return y, fj.grad(z)

    frozen = fj.freeze(f)
    for batch in (3, 1, 7, 3):
        a = _data((batch, ROW), batch)
        with _path(True) as calls:      # (only around the plain call: freeze would guard the list)
            y0, g0 = f(TensorXf64(a))
        assert calls
        y1, g1 = frozen(TensorXf64(a))
        np.testing.assert_array_equal(y1.numpy(), y0.numpy())
        np.testing.assert_array_equal(g1.numpy(), g0.numpy())
    # one recording for every batch size (r16: the derivative's arange over the input follows
    # the batch; it held each recording to its width before, three recordings here)
    assert frozen.n_recordings == 1
