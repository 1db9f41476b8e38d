"""Gradients of arrays that a loop body, a branch or a call target reads from outside its state
(closures, an outer loop's state): propagated through symbolic and evaluated loops, conditionals
and switches, forward and reverse, as Dr.Jit 1.5 does.  Checked against central finite
differences (float64) at several widths, against Dr.Jit's numbers for the same programs
(``anchor_symbolic_ad.py``), symbolic against evaluated mode, and frozen against plain."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm.ad import Float64, UInt32

from symbolic_ad_programs import (ANCHOR_P, ANCHOR_Q, ANCHOR_TRIPS, ANCHOR_X, PROGRAMS, loop_closure,
                                  nested_loops)

WIDTHS = (1, 7, 1000)
MODES = ("symbolic", "evaluated")
H = 1e-6


def _inputs(n: int):
    rng = np.random.default_rng(n)
    return rng.uniform(-1, 1, n), 0.8, rng.uniform(-1, 1, n), rng.integers(0, 4, n).astype(np.uint32)


def _run(prog, x, p, q, trips, mode):
    return prog(fj, Float64, UInt32, x, p, q, UInt32(trips), mode)


def _values(prog, x0, p0, q0, trips, mode):
    return _run(prog, Float64(x0), Float64(p0), Float64(q0), trips, mode).numpy()


def _difference(prog, x0, p0, q0, trips, mode, dx=0.0, dp=0.0, dq=0.0):
    """Central finite difference in the direction (dx, dp, dq)."""
    hi = _values(prog, x0 + H * dx, p0 + H * dp, q0 + H * dq, trips, mode)
    lo = _values(prog, x0 - H * dx, p0 - H * dp, q0 - H * dq, trips, mode)
    return (hi - lo) / (2 * H)


def _grad_enabled(x0, p0, q0):
    x, p, q = Float64(x0), Float64(p0), Float64(q0)
    fj.enable_grad(x, p, q)
    return x, p, q


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda f: f.__name__)
def test_reverse_mode_reaches_arrays_read_from_outside_the_state(prog, mode, n):
    x0, p0, q0, trips = _inputs(n)
    x, p, q = _grad_enabled(x0, p0, q0)
    # (AllowNoGrad: a lane running no iteration of closure_only's loop leaves it grad-free)
    fj.backward(_run(prog, x, p, q, trips, mode), fj.ADFlag.Default | fj.ADFlag.AllowNoGrad)
    # lanes are independent: one difference per input gives every lane's derivative
    np.testing.assert_allclose(fj.grad(x).numpy(), _difference(prog, x0, p0, q0, trips, mode, dx=1.0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fj.grad(q).numpy(), _difference(prog, x0, p0, q0, trips, mode, dq=1.0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fj.grad(p).numpy(), [_difference(prog, x0, p0, q0, trips, mode, dp=1.0).sum()],
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda f: f.__name__)
def test_forward_mode_carries_tangents_of_arrays_read_from_outside_the_state(prog, mode, n):
    x0, p0, q0, trips = _inputs(n)
    x, p, q = _grad_enabled(x0, p0, q0)
    y = _run(prog, x, p, q, trips, mode)
    fj.set_grad(x, 0.5)
    fj.set_grad(p, -1.0)
    fj.set_grad(q, 2.0)
    fj.enqueue(fj.ADMode.Forward, x, p, q)
    fj.traverse(fj.ADMode.Forward)
    np.testing.assert_allclose(fj.grad(y).numpy(),
                               _difference(prog, x0, p0, q0, trips, mode, dx=0.5, dp=-1.0, dq=2.0),
                               rtol=1e-5, atol=1e-6)


# Dr.Jit 1.5's derivatives of the same programs on the inputs ANCHOR_* (tests/control/
# anchor_symbolic_ad.py prints them): reverse mode (grad of x, p, q) and forward mode from p.
# Symbolic mode except nested_loops, whose symbolic derivatives Dr.Jit 1.5 gets wrong (forward:
# values that differ from its own evaluated mode and from finite differences; reverse: the
# process aborts); switch_in_loop has no reverse entry (Dr.Jit raises "jit_var_schedule(): not
# permitted").  docs/control_symbolic.md lists these differences.
DRJIT = {
    "loop_closure": ([[1.0, 0.6536622262252358, 0.7498763722588774, 6.517693081676928], [2.8833451204360596],
                      [0.0, -0.6816387600233341, 1.6928045231182458, 1.0404006985149792]],
                     [0.0, -0.75, 2.5826020651577237, 1.050743055278336]),
    "closure_only": ([[0.0, -0.13205369838554853, 0.4538539369292374, 1.535074627706034], [1.0248314471516395],
                      [0.0, -0.5646424733950355, 1.2622064772118446, 0.13985071444605224]],
                     [0.0, 0.12380034223645174, 0.7091467764519334, 0.19188432846325426]),
    "nested_loops": ([[1.0, 1.3, 1.885, 2.874625], [12.630875], [0.0, 1.0, 2.45, 4.73625]],
                     [0.0, -0.75, 5.3, 8.080875]),
    "if_in_loop": ([[1.0, 1.3, 0.64, 1.93386070748168], [2.0], [0.0, 0.5625, 0.0, 0.04706195323327001]],
                   [0.0, 0.0, 2.0, 0.0]),
    "switch_in_loop": (None, [0.0, -0.75, -1.0518387310098707, 2.2994493838635943]),
    "if_closure": ([[0.64, -0.2, 0.64, 1.1], [4.8], [0.0, -0.75, 0.0, 0.1]], [0.8, 1.0, 2.0, 1.0]),
    "switch_closure": ([[0.8, -0.09447331054820295, 1.0, 0.8], [1.3], [0.0, 0.4723665527410147, 0.8, 0.0]],
                       [0.5, 0.0, 0.7, 0.1]),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda f: f.__name__)
def test_closure_derivatives_equal_drjit(prog, mode):
    reverse, forward_p = DRJIT[prog.__name__]
    if reverse is not None:
        x, p, q = _grad_enabled(ANCHOR_X, ANCHOR_P, ANCHOR_Q)
        fj.backward(_run(prog, x, p, q, ANCHOR_TRIPS, mode))
        for a, want in zip((x, p, q), reverse):
            np.testing.assert_allclose(fj.grad(a).numpy(), want, rtol=1e-12, atol=1e-14)
    p = Float64(ANCHOR_P)
    fj.enable_grad(p)
    y = _run(prog, Float64(ANCHOR_X), p, Float64(ANCHOR_Q), ANCHOR_TRIPS, mode)
    fj.forward(p)
    np.testing.assert_allclose(fj.grad(y).numpy(), forward_p, rtol=1e-12, atol=1e-14)


def test_reverse_mode_through_a_symbolic_loop_reading_a_closure_still_needs_max_iterations():
    # Dr.Jit 1.5: "reverse-mode differentiation of this loop requires a 'max_iterations' hint"
    p = Float64(2.0)
    fj.enable_grad(p)
    _, y = fj.while_loop((UInt32(0), Float64(1, 1, 1)), lambda i, y: i < UInt32(1, 2, 3),
                         lambda i, y: (i + 1, y * p), mode="symbolic")
    with pytest.raises(RuntimeError, match="max_iterations"):
        fj.backward(y)


def test_closure_of_a_symbolic_loop_does_not_warn_and_forward_mode_is_one_kernel(recwarn):
    p = Float64(2.0)
    fj.enable_grad(p)
    _, y = fj.while_loop((UInt32(0), Float64(1, 1, 1)), lambda i, y: i < UInt32(1, 2, 3),
                         lambda i, y: (i + 1, y * p), mode="symbolic")
    fj.forward(p)
    g = fj.grad(y)
    fj.eval()
    fj.set_flag(fj.JitFlag.KernelHistory, True)
    try:
        fj.kernel_history()
        fj.eval(g)
        kernels = [h for h in fj.kernel_history() if h["type"] == "jit"]
    finally:
        fj.set_flag(fj.JitFlag.KernelHistory, False)
    assert g.numpy().tolist() == [1.0, 4.0, 12.0]
    assert len(kernels) == 1
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_a_closure_of_a_grad_free_loop_traces_the_body_again_once():
    # a loop over grad-free state that finds a grad-enabled closure is traced again as a
    # differentiable operation: the body's Python code runs once per trace (two), no more
    calls = []
    p = Float64(2.0)
    fj.enable_grad(p)

    def body(i, y):
        calls.append(1)
        return i + 1, y * p
    fj.while_loop((UInt32(0), Float64(1, 1, 1)), lambda i, y: i < UInt32(1, 2, 3), body, mode="symbolic")
    assert len(calls) == 2


def test_backward_to_a_subset_leaves_the_other_closures_alone():
    # backward_to(x): the loop's implicit input p is not a target, so it receives nothing
    x0, p0, q0, trips = _inputs(7)
    x, p, q = _grad_enabled(x0, p0, q0)
    y = loop_closure(fj, Float64, UInt32, x, p, q, UInt32(trips), "symbolic")
    fj.set_grad(y, 1.0)
    gx = fj.backward_to(x)
    np.testing.assert_allclose(gx.numpy(), _difference(loop_closure, x0, p0, q0, trips, "symbolic", dx=1.0),
                               rtol=1e-5, atol=1e-6)
    assert fj.grad(p).numpy().tolist() == [0.0]
    assert np.all(fj.grad(q).numpy() == 0)


@pytest.mark.parametrize("n", (7, 1000, 100003))
def test_frozen_gradients_through_closures_of_symbolic_loops_equal_plain(n):
    def step(x, p, q, trips):
        x, p, q = Float64(x), Float64(p), Float64(q)
        fj.enable_grad(x, p, q)
        y = nested_loops(fj, Float64, UInt32, x, p, q, trips, "symbolic")
        fj.backward(y)
        return fj.detach(y), fj.grad(x), fj.grad(p), fj.grad(q)

    frozen = fj.freeze(step)
    warnings.simplefilter("error", fj.FreezeWarning)        # (pytest restores the filters)
    for k in range(3):
        x0, p0, q0, trips = _inputs(n + k)
        args = (Float64(x0), Float64(p0 + 0.1 * k), Float64(q0), UInt32(trips))
        for got, want in zip(frozen(*args), step(*args)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


def test_backward_through_a_frozen_symbolic_loop_reaches_its_closure():
    def f(x, p):
        _, y = fj.while_loop((UInt32(0), Float64(x)), lambda i, y: i < UInt32(3),
                             lambda i, y: (i + 1, y * p + 1.0), mode="symbolic", max_iterations=4)
        return y
    frozen = fj.freeze(f)
    for k in range(3):
        x, p = Float64(1.0, 2.0, 3.0), Float64(0.5 + k)
        fj.enable_grad(x, p)
        fj.backward(frozen(x, p))
        pv = 0.5 + k
        assert fj.grad(p).numpy().tolist() == pytest.approx([sum(3 * pv * pv * x0 + 2 * pv + 1 for x0 in (1, 2, 3))])
        assert fj.grad(x).numpy().tolist() == pytest.approx([pv ** 3] * 3)


@given(coeffs=st.lists(st.floats(-1.5, 1.5), min_size=3, max_size=3), n=st.sampled_from([1, 7, 33]),
       seed=st.integers(0, 1000))
def test_symbolic_and_evaluated_closure_gradients_agree(coeffs, n, seed):
    rng = np.random.default_rng(seed)
    x0, q0 = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    trips = rng.integers(0, 4, n).astype(np.uint32)
    a, b, c = coeffs
    grads = {}
    for mode in MODES:
        x, q, p = Float64(x0), Float64(q0), Float64(a)
        fj.enable_grad(x, q, p)

        def body(i, y):
            _, z = fj.while_loop((UInt32(0), Float64(y)), lambda j, z: j < i,
                                 lambda j, z: (j + 1, z * b + fj.sin(y * p)), mode=mode, max_iterations=8)
            z = fj.if_stmt((z, q), z > c, lambda z, q: z * q, lambda z, q: z - p * q, mode=mode)
            return i + 1, z
        _, y = fj.while_loop((UInt32(0), x), lambda i, y: i < UInt32(trips), body, mode=mode, max_iterations=8)
        fj.backward(y)
        grads[mode] = [fj.grad(v).numpy() for v in (x, q, p)]
    for s, e in zip(grads["symbolic"], grads["evaluated"]):
        np.testing.assert_allclose(s, e, rtol=1e-10, atol=1e-12)
