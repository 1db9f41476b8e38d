"""Derivatives of scatters (``scatter``, ``scatter_add``, ``scatter_reduce`` with ``ReduceOp.Add``)
made inside loop bodies and branches, to arrays outside the state: forward and reverse mode,
symbolic and evaluated, checked against central finite differences (float64) at several widths;
the writes happen once whatever the derivatives do."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm.ad import Float as Float32, Float64, UInt32

WIDTHS = (1, 7, 1000)
MODES = ("symbolic", "evaluated")
H = 1e-6


def _loop(body, x, trips, mode, extra=()):
    return fj.while_loop((UInt32(0), Float64(x)) + tuple(extra), lambda i, y, *e: i < trips, body, mode=mode,
                         max_iterations=8)


def accumulate(x, p, trips, mode):
    """``scatter_add`` of a value of the state, every iteration, at the lane's own entry."""
    t = fj.zeros(Float64, fj.width(x))
    lane = fj.arange(UInt32, fj.width(x))

    def body(i, y):
        fj.scatter_add(t, y * y + p, lane)
        return i + 1, fj.sin(y) * p
    _, y = _loop(body, x, trips, mode)
    return t, y


def overwrite(x, p, trips, mode):
    """``scatter`` (the last iteration's write wins) into a target that depends on ``p`` before
    the loop, some of whose entries no lane writes: their derivative is the target's own."""
    n = fj.width(x)
    t = Float64(np.linspace(-1, 1, 2 * n)) * p
    before = Float64(t)
    lane = fj.arange(UInt32, n) * 2

    def body(i, y):
        fj.scatter(t, y * p, lane)
        return i + 1, y * 0.5 + p
    _, y = _loop(body, x, trips, mode)
    return t * 1.0, y, before * 1.0


def closure_value(x, p, trips, mode):
    """A grad-free state; the scattered value depends only on arrays read from outside."""
    t = fj.zeros(Float64, 3)
    idx = fj.arange(UInt32, fj.width(x)) % 3

    def body(i):
        fj.scatter_reduce(fj.ReduceOp.Add, t, fj.cos(x * p), idx)
        return (i + 1,)
    fj.while_loop((UInt32(0),), lambda i: i < trips, body, mode=mode, max_iterations=8)
    return (t,)


def in_a_branch(x, p, trips, mode):
    """Scatters of each branch of a conditional inside the body (colliding indices: adds)."""
    t = fj.zeros(Float64, 5)
    idx = fj.arange(UInt32, fj.width(x)) % 5

    def body(i, y):
        def hi(y):
            fj.scatter_add(t, y * p, idx)
            return y * 0.9
        def lo(y):
            fj.scatter_add(t, y * y, idx)
            return y + p
        return i + 1, fj.if_stmt((y,), y > 0.2, hi, lo, mode=mode)
    _, y = _loop(body, x, trips, mode)
    return t, y


def branch_alone(x, p, trips, mode):
    """Scatters in the branches of a conditional (no loop)."""
    t = fj.zeros(Float64, fj.width(x))
    lane = fj.arange(UInt32, fj.width(x))

    def hi(x, lane):
        fj.scatter_add(t, x * p, lane)
        return x * 3.0
    def lo(x, lane):
        fj.scatter(t, fj.exp(x), lane)
        return x
    y = fj.if_stmt((x, lane), x > 0.1, hi, lo, mode=mode)
    return t, y


def call_targets(x, p, trips, mode):
    """Scatters in the targets of a switch (the index array passed as an argument)."""
    t = fj.zeros(Float64, fj.width(x))
    lane = fj.arange(UInt32, fj.width(x))

    def first(x, lane):
        fj.scatter_add(t, x * x * p, lane)
        return x * 2.0

    def second(x, lane):
        fj.scatter_add(t, fj.sin(x), lane)
        return x * p
    return t, fj.switch(trips % 2, [first, second], x, lane, mode=mode)


PROGRAMS = [accumulate, overwrite, closure_value, in_a_branch, branch_alone, call_targets]


def _inputs(n: int):
    rng = np.random.default_rng(n + 5)
    return rng.uniform(-1, 1, n), 0.7, rng.integers(0, 4, n).astype(np.uint32), rng.uniform(-1, 1, n)


def _values(prog, x0, p0, trips, mode):
    return [a.numpy() for a in prog(Float64(x0), Float64(p0), UInt32(trips), mode)]


def _difference(prog, x0, p0, trips, mode, dx, dp):
    hi = _values(prog, x0 + H * dx, p0 + H * dp, trips, mode)
    lo = _values(prog, x0 - H * dx, p0 - H * dp, trips, mode)
    return [(a - b) / (2 * H) for a, b in zip(hi, lo)]


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda f: f.__name__)
def test_forward_mode_through_scatters_in_loop_bodies(prog, mode, n):
    x0, p0, trips, dx = _inputs(n)
    x, p = Float64(x0), Float64(p0)
    fj.enable_grad(x, p)
    outs = prog(x, p, UInt32(trips), mode)
    fj.set_grad(x, Float64(dx))
    fj.set_grad(p, -0.5)
    fj.enqueue(fj.ADMode.Forward, x, p)
    fj.traverse(fj.ADMode.Forward)
    for got, want in zip(outs, _difference(prog, x0, p0, trips, mode, dx, -0.5)):
        np.testing.assert_allclose(fj.grad(got).numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda f: f.__name__)
def test_reverse_mode_through_scatters_in_loop_bodies(prog, mode, n):
    # <gradient, direction> equals the finite difference of the loss along the direction
    x0, p0, trips, dx = _inputs(n)
    weights = [np.random.default_rng(7).uniform(-1, 1, len(a)) for a in _values(prog, x0, p0, trips, mode)]
    x, p = Float64(x0), Float64(p0)
    fj.enable_grad(x, p)
    outs = prog(x, p, UInt32(trips), mode)
    loss = sum(fj.sum(a * Float64(w)) for a, w in zip(outs, weights))
    fj.backward(loss)
    got = float(np.dot(fj.grad(x).numpy(), dx)) + float(fj.grad(p).numpy()[0]) * -0.5
    want = sum(float(np.dot(d, w)) for d, w in zip(_difference(prog, x0, p0, trips, mode, dx, -0.5), weights))
    assert got == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_forward_mode_through_a_scattering_symbolic_loop_equals_drjit():
    # Dr.Jit 1.5, the same program: grad(t) = [2, 5, 9.5], grad(y) = [1.5, 2.25, 3.375]
    p = Float32(1, 2, 3)
    fj.enable_grad(p)
    t = fj.zeros(Float32, 3)

    def body(i, y):
        fj.scatter_add(t, y * 2, fj.arange(UInt32, 3))
        return i + 1, y * 1.5
    _, y = fj.while_loop((UInt32(0), Float32(p)), lambda i, y: i < UInt32(1, 2, 3), body, mode="symbolic")
    fj.forward_from(p)
    assert fj.grad(t).numpy().tolist() == [2.0, 5.0, 9.5]
    assert fj.grad(y).numpy().tolist() == [1.5, 2.25, 3.375]
    assert t.numpy().tolist() == [2.0, 10.0, 28.5]


@pytest.mark.parametrize("direction", ["forward", "reverse"])
def test_scatters_run_once_whatever_the_derivatives_do(direction):
    x0, p0, trips, _ = _inputs(7)
    plain = _values(accumulate, x0, p0, trips, "symbolic")
    x, p = Float64(x0), Float64(p0)
    fj.enable_grad(x, p)
    t, y = accumulate(x, p, UInt32(trips), "symbolic")
    if direction == "forward":
        fj.forward(x)
        fj.eval(fj.grad(t), fj.grad(y))
    else:
        fj.backward(fj.sum(t) + fj.sum(y))
        fj.eval(fj.grad(x))
    np.testing.assert_allclose(t.numpy(), plain[0], rtol=1e-15)


def test_scatters_of_a_loop_nested_in_a_differentiated_symbolic_loop_raise_when_differentiated():
    t = fj.zeros(Float64, 3)
    x = Float64(1, 2, 3)
    fj.enable_grad(x)

    def outer(i, y):
        def inner(j, z):
            fj.scatter_add(t, z, fj.arange(UInt32, 3))
            return j + 1, z * 0.5
        _, z = fj.while_loop((UInt32(0), y), lambda j, z: j < 2, inner, mode="symbolic")
        return i + 1, z
    _, y = fj.while_loop((UInt32(0), x), lambda i, y: i < 2, outer, mode="symbolic", max_iterations=3)
    assert y.numpy().tolist() == [0.0625, 0.125, 0.1875]          # the primal values are right
    with pytest.raises(NotImplementedError, match="nested"):
        fj.forward(x)


@pytest.mark.parametrize("n", (7, 1000, 100003))
@pytest.mark.parametrize("direction", ["forward", "reverse"])
def test_frozen_derivatives_of_scatters_in_a_symbolic_loop_equal_plain(direction, n):
    def step(x, p, trips):
        x, p = Float64(x), Float64(p)
        fj.enable_grad(x, p)
        t, y = accumulate(x, p, trips, "symbolic")
        if direction == "forward":
            fj.forward(p)
            return fj.detach(t), fj.detach(y), fj.grad(t), fj.grad(y)
        fj.backward(fj.sum(t * t) + fj.sum(y))
        return fj.detach(t), fj.detach(y), fj.grad(x), fj.grad(p)
    frozen = fj.freeze(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fj.FreezeWarning)       # a recording kept and replayed
        for k in range(3):
            x0, p0, trips, _ = _inputs(n + k)
            args = (Float64(x0), Float64(p0 + 0.1 * k), UInt32(trips))
            for got, want in zip(frozen(*args), step(*args)):
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


@given(coeffs=st.lists(st.floats(-1.5, 1.5), min_size=3, max_size=3), n=st.sampled_from([1, 7, 33]),
       seed=st.integers(0, 1000), overwrite_first=st.booleans())
def test_symbolic_and_evaluated_scatter_derivatives_agree(coeffs, n, seed, overwrite_first):
    rng = np.random.default_rng(seed)
    x0, trips = rng.uniform(-1, 1, n), rng.integers(0, 4, n).astype(np.uint32)
    slots = rng.integers(0, max(1, n // 2), n).astype(np.uint32)
    a, b, c = coeffs
    results = {}
    for mode in MODES:
        x, p = Float64(x0), Float64(a)
        fj.enable_grad(x, p)
        t = fj.zeros(Float64, max(1, n // 2))
        u = fj.zeros(Float64, n)
        idx, lane = UInt32(slots), fj.arange(UInt32, n)

        def body(i, y):
            if overwrite_first:
                fj.scatter(u, y * p, lane)
            fj.scatter_add(t, fj.sin(y) * b, idx)             # colliding indices: adds
            y = fj.if_stmt((y,), y > c, lambda v: v * p, lambda v: v * v - p, mode=mode)
            if not overwrite_first:
                fj.scatter(u, y + p, lane)
            return i + 1, y
        _, y = fj.while_loop((UInt32(0), x), lambda i, y: i < UInt32(trips), body, mode=mode, max_iterations=8)
        fj.backward(fj.sum(t * t) + fj.sum(u * y) + fj.sum(y))
        results[mode] = [fj.grad(x).numpy(), fj.grad(p).numpy(), t.numpy(), u.numpy()]
    for s, e in zip(results["symbolic"], results["evaluated"]):
        np.testing.assert_allclose(s, e, rtol=1e-10, atol=1e-12)
