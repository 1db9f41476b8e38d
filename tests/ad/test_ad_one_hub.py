"""The backward pass through one custom operation whose inputs are leaves (ad/graph.py:
``_through_one_hub``, the common ``fj.backward(frozen_loss(params))``) does what the general
walk does: the same gradients and the same state left behind (seed, hub and edges cleared per
flags), and it is not taken where the graph is anything else."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.ad import graph
from frostjit.llvm.ad import Float

WIDTHS = (1, 7, 1000, 100003)


def arr(n, seed, lo=-1.5, hi=1.5):
    return Float(np.random.default_rng(seed).uniform(lo, hi, n).astype(np.float32))


def loss_fn(x, w):
    return fj.mean(fj.square(fj.sin(x) * w - 0.25))


@pytest.fixture
def taken(monkeypatch):
    """Counts the backward passes that took the shortcut (and lets a test switch it off)."""
    calls = []
    orig = graph._through_one_hub

    def counted(v, flags):
        r = orig(v, flags)
        calls.append(r)
        return r
    monkeypatch.setattr(graph, "_through_one_hub", counted)
    return calls


def general_walk(monkeypatch):
    monkeypatch.setattr(graph, "_through_one_hub", lambda v, flags: False)


def run(f, n, flags=fj.ADFlag.Default, repeats=3):
    """Gradients of x and w after ``repeats`` backward passes through ``f``, and what is left on
    the last loss (its gradient, whether it still has edges)."""
    out = []
    for i in range(repeats):
        x, w = arr(n, i), arr(n, i + 10)
        fj.enable_grad(x, w)
        loss = f(x, w)
        fj.backward(loss, flags)
        out.append((fj.grad(x).numpy(), fj.grad(w).numpy()))
    left = (None if loss._ad.grad is None else loss._ad.grad.numpy(), bool(loss._ad.parents))
    return out, left


@pytest.mark.parametrize("n", WIDTHS)
def test_backward_through_a_frozen_loss_takes_the_shortcut_and_equals_the_plain_gradient(n, taken):
    f = fj.freeze(loss_fn)
    got, _ = run(f, n)
    want, _ = run(loss_fn, n)
    assert any(taken)
    for (gx, gw), (rx, rw) in zip(got, want):
        assert np.allclose(gx, rx, rtol=2e-5, atol=1e-6) and np.allclose(gw, rw, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("flags", [fj.ADFlag.Default, fj.ADFlag.ClearNone, fj.ADFlag.ClearEdges,
                                   fj.ADFlag.ClearInput, fj.ADFlag.ClearInterior])
def test_the_shortcut_leaves_what_the_general_walk_leaves_for_every_flag(flags, taken, monkeypatch):
    got, got_left = run(fj.freeze(loss_fn), 7, flags)
    assert taken and all(taken[2:])
    general_walk(monkeypatch)
    want, want_left = run(fj.freeze(loss_fn), 7, flags)
    for (gx, gw), (rx, rw) in zip(got, want):
        assert np.array_equal(gx, rx) and np.array_equal(gw, rw)
    assert (got_left[0] is None) == (want_left[0] is None) and got_left[1] == want_left[1]
    if got_left[0] is not None:
        assert np.array_equal(got_left[0], want_left[0])


def test_a_second_backward_pass_without_cleared_edges_accumulates_as_the_general_walk(taken, monkeypatch):
    def twice():
        f = fj.freeze(loss_fn)
        for _ in range(3):
            x, w = arr(5, 1), arr(5, 2)
            fj.enable_grad(x, w)
            loss = f(x, w)
            fj.backward(loss, fj.ADFlag.ClearNone)
            fj.backward(loss, fj.ADFlag.ClearNone)
        return fj.grad(x).numpy(), fj.grad(w).numpy()
    got = twice()
    general_walk(monkeypatch)
    want = twice()
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_not_taken_when_an_input_depends_on_another_variable(taken):
    f = fj.freeze(loss_fn)
    for i in range(3):
        u, w = arr(9, i), arr(9, i + 1)
        fj.enable_grad(u, w)
        x = u * 2.0                 # an input with a parent: the walk continues to u
        fj.backward(f(x, w))
        gu = fj.grad(u).numpy()
        u2, w2 = arr(9, i), arr(9, i + 1)
        fj.enable_grad(u2, w2)
        fj.backward(loss_fn(u2 * 2.0, w2))
        assert np.allclose(gu, fj.grad(u2).numpy(), rtol=2e-5, atol=1e-6)
    assert not any(taken)


def test_not_taken_for_a_loss_with_another_path_or_inside_an_isolation_scope(taken):
    f = fj.freeze(loss_fn)
    for i in range(3):
        x, w = arr(6, i), arr(6, i + 1)
        fj.enable_grad(x, w)
        fj.backward(f(x, w) + fj.sum(x))       # the loss has two parents
        x2, w2 = arr(6, i), arr(6, i + 1)
        fj.enable_grad(x2, w2)
        fj.backward(loss_fn(x2, w2) + fj.sum(x2))
        assert np.allclose(fj.grad(x).numpy(), fj.grad(x2).numpy(), rtol=2e-5, atol=1e-6)
    assert not any(taken)
    x, w = arr(6, 0), arr(6, 1)
    fj.enable_grad(x, w)
    with fj.isolate_grad():
        fj.backward(f(x, w))
    assert not any(taken)
    assert np.isfinite(fj.grad(x).numpy()).all()
