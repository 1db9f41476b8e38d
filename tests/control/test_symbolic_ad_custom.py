"""Custom operations (``fj.CustomOp``/``fj.custom``) inside loop bodies, branches and call targets,
symbolic and evaluated, differentiated forward and reverse: checked against central finite
differences (float64), against Dr.Jit 1.5's numbers where Dr.Jit computes them, and frozen
against plain."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm.ad import Float64, UInt32

WIDTHS = (1, 7, 1000)
MODES = ("symbolic", "evaluated")
H = 1e-6


class Cube(fj.CustomOp):
    """``s x^3`` with its own derivative rules (``s`` a Python number)."""

    def eval(self, x, s):
        self.x, self.s = x, s
        return x * x * x * s

    def forward(self):
        self.set_grad_out(3 * self.x * self.x * self.s * self.grad_in("x"))

    def backward(self):
        self.set_grad_in("x", 3 * self.x * self.x * self.s * self.grad_out())


class Scale(fj.CustomOp):
    """``x p`` (two differentiable inputs)."""

    def eval(self, x, p):
        self.x, self.p = x, p
        return x * p

    def forward(self):
        self.set_grad_out(self.grad_in("x") * self.p + self.x * self.grad_in("p"))

    def backward(self):
        self.set_grad_in("x", self.grad_out() * self.p)
        self.set_grad_in("p", self.grad_out() * self.x)


def shift(x, p):
    """``x + sin(p)`` by a custom operation that reads ``p`` from its closure: an implicit input
    (``add_input``; an argument would arrive detached)."""
    class Shift(fj.CustomOp):
        def eval(self, x):
            self.add_input(p)
            return x + fj.sin(fj.detach(p))

        def forward(self):
            self.set_grad_out(self.grad_in("x") + fj.cos(fj.detach(p)) * fj.grad(p))

        def backward(self):
            self.set_grad_in("x", self.grad_out())
            g = fj.cos(fj.detach(p)) * self.grad_out()
            fj.accum_grad(p, fj.sum(g) if fj.width(p) == 1 else g)
    return fj.custom(Shift, x)


def in_loop(x, p, trips, mode):
    _, y = fj.while_loop((UInt32(0), Float64(x)), lambda i, y: i < trips,
                         lambda i, y: (i + 1, shift(fj.custom(Cube, y, 0.5) + fj.custom(Scale, y, p), p)),
                         mode=mode, max_iterations=5)
    return y


def in_if(x, p, trips, mode):
    return fj.if_stmt((x,), x > 0, lambda v: fj.custom(Cube, v, 2.0), lambda v: fj.custom(Scale, v, p), mode=mode)


def in_switch(x, p, trips, mode):
    return fj.switch(trips % 3, [lambda v: fj.custom(Cube, v, 2.0), lambda v: fj.custom(Scale, v, p), lambda v: v * p],
                     x, mode=mode)


def wrapping_a_loop(x, p, trips, mode):
    """A custom operation whose ``eval`` runs a loop (inside a conditional)."""
    class Op(fj.CustomOp):
        def eval(self, x, p):
            self.x, self.p = x, p
            _, y = fj.while_loop((UInt32(0), Float64(x)), lambda i, y: i < trips, lambda i, y: (i + 1, y * p),
                                 mode=mode)
            self.y = y
            return y

        def forward(self):     # y = x p^n
            n = Float64(trips)
            self.set_grad_out(self.y / self.x * self.grad_in("x") + n * self.y / self.p * self.grad_in("p"))

        def backward(self):
            n = Float64(trips)
            g = self.grad_out()
            self.set_grad_in("x", self.y / self.x * g)
            self.set_grad_in("p", n * self.y / self.p * g)
    return fj.if_stmt((x, p), x > -0.5, lambda v, w: fj.custom(Op, v, w), lambda v, w: v * 2.0, mode=mode)


PROGRAMS = [in_loop, in_if, in_switch, wrapping_a_loop]


def _inputs(n: int):
    rng = np.random.default_rng(n + 11)
    x = rng.uniform(-0.9, 0.9, n)
    x[np.abs(x) < 0.05] = 0.3           # (wrapping_a_loop divides by x)
    return x, 0.8, rng.integers(0, 4, n).astype(np.uint32)


def _values(prog, x0, p0, trips, mode):
    return prog(Float64(x0), Float64(p0), UInt32(trips), mode).numpy()


def _difference(prog, x0, p0, trips, mode, dx=0.0, dp=0.0):
    hi = _values(prog, x0 + H * dx, p0 + H * dp, trips, mode)
    lo = _values(prog, x0 - H * dx, p0 - H * dp, trips, mode)
    return (hi - lo) / (2 * H)


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda f: f.__name__)
def test_reverse_mode_through_custom_operations_in_control_flow(prog, mode, n):
    x0, p0, trips = _inputs(n)
    x, p = Float64(x0), Float64(p0)
    fj.enable_grad(x, p)
    fj.backward(prog(x, p, UInt32(trips), mode))
    np.testing.assert_allclose(fj.grad(x).numpy(), _difference(prog, x0, p0, trips, mode, dx=1.0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fj.grad(p).numpy(), [_difference(prog, x0, p0, trips, mode, dp=1.0).sum()],
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda f: f.__name__)
def test_forward_mode_through_custom_operations_in_control_flow(prog, mode, n):
    x0, p0, trips = _inputs(n)
    x, p = Float64(x0), Float64(p0)
    fj.enable_grad(x, p)
    y = prog(x, p, UInt32(trips), mode)
    fj.set_grad(x, 1.5)
    fj.set_grad(p, -0.5)
    fj.enqueue(fj.ADMode.Forward, x, p)
    fj.traverse(fj.ADMode.Forward)
    np.testing.assert_allclose(fj.grad(y).numpy(), _difference(prog, x0, p0, trips, mode, dx=1.5, dp=-0.5),
                               rtol=1e-5, atol=1e-6)


def _drjit_program(kind, x, p, mode):
    """The programs Dr.Jit 1.5 ran (Cube and Scale only: x = (0.5, -0.7, 0.9), p = 0.8)."""
    if kind == "loop":
        _, y = fj.while_loop((UInt32(0), Float64(x)), lambda i, y: i < UInt32(0, 1, 3),
                             lambda i, y: (i + 1, fj.custom(Cube, y, 0.5) + fj.custom(Scale, y, p)),
                             mode=mode, max_iterations=5)
        return y
    if kind == "if":
        return in_if(x, p, None, mode)
    return in_switch(x, p, UInt32(0, 1, 2), mode)


# Dr.Jit 1.5 (same programs, float64): forward from x, forward from p, reverse (grad x, grad p).
# Where Dr.Jit's symbolic mode fails (an error, or zeros/a sign that differ from its own evaluated
# mode and from finite differences: custom operations reading a closure inside a symbolic loop
# or conditional) its evaluated mode's numbers are the reference; docs/control_symbolic.md.
DRJIT = {
    "loop": ([1, 1.535, 21.6966], [0, -0.7, 15.7502], ([1, 1.535, 21.6966], [15.0502])),
    "if": ([1.5, 0.8, 4.86], [0, -0.7, 0], ([1.5, 0.8, 4.86], [-0.7])),
    "switch": ([1.5, 0.8, 0.8], [0, -0.7, 0.9], ([1.5, 0.8, 0.8], [0.2])),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", sorted(DRJIT))
def test_custom_operations_in_control_flow_equal_drjit(kind, mode):
    fwd_x, fwd_p, (rev_x, rev_p) = DRJIT[kind]
    for src, want in (("x", fwd_x), ("p", fwd_p)):
        x, p = Float64(0.5, -0.7, 0.9), Float64(0.8)
        fj.enable_grad(x if src == "x" else p)
        y = _drjit_program(kind, x, p, mode)
        fj.forward(x if src == "x" else p)
        np.testing.assert_allclose(fj.grad(y).numpy(), want, rtol=1e-5)
    x, p = Float64(0.5, -0.7, 0.9), Float64(0.8)
    fj.enable_grad(x, p)
    fj.backward(_drjit_program(kind, x, p, mode))
    np.testing.assert_allclose(fj.grad(x).numpy(), rev_x, rtol=1e-5)
    np.testing.assert_allclose(fj.grad(p).numpy(), rev_p, rtol=1e-5)


@pytest.mark.parametrize("n", (7, 1000))
def test_frozen_custom_operation_in_a_symbolic_loop_equals_plain(n):
    def step(x, p, trips):
        x, p = Float64(x), Float64(p)
        fj.enable_grad(x, p)
        y = in_loop(x, p, trips, "symbolic")
        fj.backward(y)
        return fj.detach(y), fj.grad(x), fj.grad(p)
    frozen = fj.freeze(step)
    warnings.simplefilter("error", fj.FreezeWarning)        # (pytest restores the filters)
    for k in range(3):
        x0, p0, trips = _inputs(n + k)
        args = (Float64(x0), Float64(p0 + 0.05 * k), UInt32(trips))
        for got, want in zip(frozen(*args), step(*args)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
