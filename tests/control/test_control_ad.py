"""AD through evaluated loops, conditionals and switches (forward and reverse, as Dr.Jit 1.5
supports them in these modes), checked against central finite differences in float64."""
from __future__ import annotations

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm.ad import Float64, UInt32

WIDTHS = (1, 7, 1000)
H = 1e-6


def _loop(x, trips, compress=False):
    i, y, _ = fj.while_loop((UInt32(0), x, trips), lambda i, y, t: i < t,
                            lambda i, y, t: (i + 1, fj.sin(y) * 1.5 + y * 0.25, t),
                            mode="evaluated", compress=compress)
    return y


def _loop_compressed(x, trips):
    return _loop(x, trips, compress=True)


def _loop_reading_an_outer_variable(x, trips):
    # the body multiplies by 'x', which is not state: its derivative flows through every iteration
    i, y = fj.while_loop((UInt32(0), Float64(1.0)), lambda i, y: i < trips, lambda i, y: (i + 1, y * x + 0.5),
                         mode="evaluated")
    return y


def _branch(x, trips):
    return fj.if_stmt((x,), (trips & 1) == 0, lambda x: fj.exp(x) * x, lambda x: x * x * 3 - x, mode="evaluated")


def _dispatch(x, trips):
    return fj.switch(trips, [lambda x: fj.cos(x), lambda x: x * x, lambda x: fj.sqrt(x * x + 1)], x, mode="evaluated")


@fj.syntax
def _syntax_program(x, trips):
    i = UInt32(0)
    while fj.hint(i < trips, mode="evaluated"):     # (reverse mode through a symbolic loop needs max_iterations)
        if x > 0.3:
            x = x * 0.9 + fj.sin(x)
        else:
            x = x + 0.2
        i += 1
    return x


PROGRAMS = [_loop, _loop_compressed, _loop_reading_an_outer_variable, _branch, _dispatch, _syntax_program]


def _inputs(n):
    rng = np.random.default_rng(n)
    return rng.uniform(-1, 1, n), rng.integers(0, 4, n).astype(np.uint32)


def _finite_difference(fn, x0, trips):
    hi = fn(Float64(x0 + H), UInt32(trips)).numpy()
    lo = fn(Float64(x0 - H), UInt32(trips)).numpy()
    return (hi - lo) / (2 * H)


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_reverse_mode_matches_finite_differences(fn, n):
    x0, trips = _inputs(n)
    x = Float64(x0)
    fj.enable_grad(x)
    y = fn(x, UInt32(trips))
    fj.backward(y)
    assert np.allclose(fj.grad(x).numpy(), _finite_difference(fn, x0, trips), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_forward_mode_matches_finite_differences(fn, n):
    x0, trips = _inputs(n)
    x = Float64(x0)
    fj.enable_grad(x)
    fj.set_grad(x, 1.0)
    y = fn(x, UInt32(trips))
    assert np.allclose(fj.forward_to(y).numpy(), _finite_difference(fn, x0, trips), rtol=1e-5, atol=1e-6)


def test_dr_jit_reference_gradients():
    # Dr.Jit 1.5 (evaluated mode): y = x^(2^trips), dy/dx; an if_stmt; a switch with an out-of-range lane
    x = Float64(1.0, 2.0, 3.0)
    fj.enable_grad(x)
    i, y = fj.while_loop((UInt32(0), x), lambda i, y: i < UInt32(1, 2, 3), lambda i, y: (i + 1, y * y),
                         mode="evaluated")
    fj.backward(y)
    assert y.numpy().tolist() == [1, 16, 6561] and fj.grad(x).numpy().tolist() == [2, 32, 17496]
    x = Float64(1.0, 2.0, 3.0)
    fj.enable_grad(x)
    y = fj.switch(UInt32(0, 1, 5), [lambda x: x * x, lambda x: x * 3], x, mode="evaluated")
    fj.backward(y)
    assert y.numpy().tolist() == [1, 6, 0] and fj.grad(x).numpy().tolist() == [2, 3, 0]


