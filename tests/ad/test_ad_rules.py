"""Derivative of every differentiable operation, checked against finite differences (float64),
in reverse and forward mode."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.array.flat import apply
from frostjit.llvm.ad import Float64, Float, Array3f64

from ad_helpers import check_grad

N = 17
rng = np.random.default_rng(1)


def data(lo, hi, n=N, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, n)


def away_from_zero(n=N, seed=0):
    r = np.random.default_rng(seed)
    return r.uniform(0.3, 2.0, n) * r.choice([-1.0, 1.0], n)


UNARY = {
    "neg": (lambda x: -x, away_from_zero()),
    "abs": (fj.abs, away_from_zero()),
    "sqrt": (fj.sqrt, data(0.3, 3)),
    "rsqrt": (fj.rsqrt, data(0.3, 3)),
    "rcp": (fj.rcp, away_from_zero()),
    "cbrt": (fj.cbrt, away_from_zero()),
    "square": (fj.square, data(-2, 2)),
    "sin": (fj.sin, data(-4, 4)),
    "cos": (fj.cos, data(-4, 4)),
    "tan": (fj.tan, data(-1.2, 1.2)),
    "asin": (fj.asin, data(-0.9, 0.9)),
    "acos": (fj.acos, data(-0.9, 0.9)),
    "atan": (fj.atan, data(-3, 3)),
    "exp": (fj.exp, data(-3, 3)),
    "exp2": (fj.exp2, data(-3, 3)),
    "log": (fj.log, data(0.2, 5)),
    "log2": (fj.log2, data(0.2, 5)),
    "sinh": (fj.sinh, data(-3, 3)),
    "cosh": (fj.cosh, data(-3, 3)),
    "tanh": (fj.tanh, data(-3, 3)),
    "erf": (fj.erf, data(-2, 2)),
    "floor": (lambda x: fj.floor(x) * x, data(-3, 3) + 0.01),
    "ceil": (lambda x: fj.ceil(x) * x, data(-3, 3) + 0.01),
    "round": (lambda x: fj.round(x) * x, data(-3, 3) + 0.01),
    "trunc": (lambda x: fj.trunc(x) * x, data(-3, 3) + 0.01),
    "sign": (lambda x: fj.sign(x) * x, away_from_zero()),
    "normal_ops_mix": (lambda x: fj.sqrt(fj.exp(x) + 1) / (x * x + 2), data(-2, 2)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_derivative_matches_finite_differences(name):
    f, x = UNARY[name]
    check_grad(f, [x])


BINARY = {
    "add": (lambda a, b: a + b, data(-2, 2), data(-2, 2, seed=1)),
    "sub": (lambda a, b: a - b, data(-2, 2), data(-2, 2, seed=1)),
    "mul": (lambda a, b: a * b, data(-2, 2), data(-2, 2, seed=1)),
    "truediv": (lambda a, b: a / b, data(-2, 2), away_from_zero(seed=1)),
    # (float mod/floordiv through apply: their operators refuse floats, as Dr.Jit's)
    "mod": (lambda a, b: apply("mod", a, b), data(-5, 5), away_from_zero(seed=1)),
    "pow": (lambda a, b: a ** b, data(0.3, 3), data(-2, 2, seed=1)),
    "minimum": (fj.minimum, data(-2, 2), data(-2, 2, seed=1)),
    "maximum": (fj.maximum, data(-2, 2), data(-2, 2, seed=1)),
    "copysign": (fj.copysign, away_from_zero(), away_from_zero(seed=1)),
    "atan2": (fj.atan2, away_from_zero(), away_from_zero(seed=1)),
    "select": (lambda a, b: fj.select(a > b, a * 2, b * b), data(-2, 2), data(-2, 2, seed=1)),
    "lerp": (lambda a, b: fj.lerp(a, b, 0.3), data(-2, 2), data(-2, 2, seed=1)),
    "clip": (lambda a, b: fj.clip(a, -1.0, b), data(-2, 2), data(0, 2, seed=1)),
    "floordiv": (lambda a, b: apply("floordiv", a, b) * a, data(-5, 5), away_from_zero(seed=1)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_derivative_matches_finite_differences(name):
    f, a, b = BINARY[name]
    check_grad(f, [a, b])


def test_fma_derivative_in_all_three_operands():
    check_grad(fj.fma, [data(-2, 2), data(-2, 2, seed=1), data(-2, 2, seed=2)])


SCALAR_OPERANDS = {
    "x+2": lambda x: x + 2, "2-x": lambda x: 2 - x, "3/x": lambda x: 3.0 / x, "x/3": lambda x: x / 3,
    "x**3": lambda x: x ** 3, "x**2": lambda x: x ** 2, "x**0.5": lambda x: x ** 0.5, "2**x": lambda x: 2.0 ** x,
    "x**1": lambda x: x ** 1, "x**0": lambda x: x ** 0 + x, "x%1.5": lambda x: apply("mod", x, 1.5),
    "min(x,0.5)": lambda x: fj.minimum(x, 0.5), "max(1,x)": lambda x: fj.maximum(1.0, x),
    "atan2(1,x)": lambda x: fj.atan2(1.0, x), "x*int": lambda x: x * 3,
}


@pytest.mark.parametrize("name", sorted(SCALAR_OPERANDS))
def test_operations_with_python_scalars(name):
    check_grad(SCALAR_OPERANDS[name], [data(0.4, 2.5)])


def test_inplace_operators_are_differentiated():
    def f(x):
        y = x * 1
        y += x
        y *= x
        y -= 1.0
        y /= 2.0
        return y
    check_grad(f, [data(-2, 2)])


def test_broadcast_size_one_operand_gets_summed_gradient():
    check_grad(lambda a, b: fj.sin(a * b) + b, [data(-2, 2), np.array([0.7])])


# -- casts ---------------------------------------------------------------------

def test_cast_to_float32_and_back_passes_the_gradient_through():
    x = Float64(1.0, 2.0, 3.0)
    fj.enable_grad(x)
    y = Float64(Float(x)) * 2 + Float64(Float(x) * Float(x))
    fj.backward(fj.sum(y))
    assert np.allclose(fj.grad(x).numpy(), 2 + 2 * np.array([1.0, 2, 3]), rtol=1e-6)
    assert type(fj.grad(x)) is Float64


def test_mixed_precision_operation_gradient_has_each_operand_type():
    a, b = Float(1.0, 2.0), Float64(3.0, 4.0)
    fj.enable_grad(a, b)
    fj.backward(fj.sum(a * b))
    ga, gb = fj.grad(a), fj.grad(b)
    assert type(ga) is Float and type(gb) is Float64
    assert ga.numpy().tolist() == [3, 4] and gb.numpy().tolist() == [1, 2]


def test_cast_to_integer_stops_the_gradient():
    x = Float64(1.5, 2.5)
    fj.enable_grad(x)
    from frostjit.llvm import Int32
    y = Float64(Int32(x)) * x
    fj.backward(fj.sum(y))
    assert fj.grad(x).numpy().tolist() == [1, 2]


# -- reductions and scans --------------------------------------------------------

REDUCTIONS = {
    "sum": lambda x: fj.sum(x * x),
    "mean": lambda x: fj.mean(fj.sin(x)),
    "prod": lambda x: fj.prod(x),
    "min": lambda x: fj.min(x * 2),
    "max": lambda x: fj.max(fj.exp(x)),
    "dot": lambda x: fj.dot(x, fj.cos(x)),
    "prefix_sum": lambda x: fj.prefix_sum(x * x),
    "cumsum": lambda x: fj.cumsum(fj.sin(x)),
    "sum_broadcast": lambda x: x * fj.sum(x),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_derivative_matches_finite_differences(name):
    check_grad(REDUCTIONS[name], [data(0.3, 1.5)])


def test_prod_gradient_with_a_zero_entry():
    x = Float64(2.0, 0.0, 3.0, 4.0)
    fj.enable_grad(x)
    fj.backward(fj.prod(x))
    assert fj.grad(x).numpy().tolist() == [0, 24, 0, 0]


def test_prod_gradient_with_two_zero_entries():
    x = Float64(2.0, 0.0, 3.0, 0.0)
    fj.enable_grad(x)
    fj.backward(fj.prod(x))
    assert fj.grad(x).numpy().tolist() == [0, 0, 0, 0]


# -- static vectors --------------------------------------------------------------

def test_vector_operations_are_differentiated_per_component():
    def f(a, b, c):
        v = Array3f64(a, b, c)
        w = Array3f64(c, a * 2, b + 1)
        return [fj.norm(v), fj.dot(v, w), fj.normalize(v), fj.cross(v, w), fj.squared_norm(v * 2 - w)]
    check_grad(f, [data(0.2, 2), data(0.2, 2, seed=1), data(0.2, 2, seed=2)])


def test_vector_sum_and_select():
    def f(a, b):
        v = Array3f64(a, b, a * b)
        return fj.sum(fj.select(v > 0.5, v * v, -v))
    check_grad(f, [data(-1, 2), data(-1, 2, seed=3)])
