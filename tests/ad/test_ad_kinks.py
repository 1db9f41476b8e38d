"""Derivatives at kinks, ties and domain edges, table-driven, in reverse and forward mode.

The expected values are hand-derived and equal Dr.Jit 1.5's (measured side by side, each system in
its own process): ``abs'(0) = 0``; ``maximum`` sends ties and NaNs to its second operand,
``minimum`` ties to its first; a zero gradient times an infinite or NaN partial derivative is
zero, so ``select`` does not leak NaN from the branch it did not take; the ``safe_*`` functions
have finite derivatives at the edges of their domain; ``hypot`` has a zero derivative at the
origin.  Where Dr.Jit's numbers are artifacts of its implementation (its ``pow`` goes through
``exp2(log2(x) * y)``), the table gives the exact derivative and docs/ad.md lists the difference.
"""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import UInt32
from frostjit.llvm.ad import Float, Float64, Array3f

INF, NAN = math.inf, math.nan
EPS32 = 2.0 ** -24          # Dr.Jit's epsilon(Float32): half the spacing of the floats above 1
EPS64 = 2.0 ** -53
U = [-INF, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, INF]


def derivatives(f, cols, cls=Float):
    """Reverse-mode gradients of ``sum(f(*args))`` and forward-mode derivatives along each argument."""
    args = [cls(c) for c in cols]
    fj.enable_grad(*args)
    fj.backward(f(*args))
    reverse = [fj.grad(a).numpy() for a in args]
    forward = []
    for i in range(len(cols)):
        args = [cls(c) for c in cols]
        fj.enable_grad(*args)
        out = f(*args)
        fj.forward(args[i])
        forward.append(fj.grad(out).numpy())
    return reverse, forward


def assert_close(got, expected, rtol=2e-6):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(expected, np.float64), rtol=rtol, atol=0)


# name: (function, argument values, expected derivative along each argument)
UNARY = {
    "abs_zero_is_zero": (fj.abs, [U], [[-1, -1, -1, -1, 0, 0, 1, 1, 1, 1]]),
    "abs_nan_is_minus_one": (fj.abs, [[NAN, 1e-45, -1e-45]], [[-1, 1, -1]]),
    "relu_tie_goes_to_constant": (lambda x: fj.maximum(x, 0.0), [U], [[0, 0, 0, 0, 0, 0, 1, 1, 1, 1]]),
    "min_tie_goes_to_first": (lambda x: fj.minimum(x, 0.0), [U], [[1, 1, 1, 1, 1, 1, 0, 0, 0, 0]]),
    "clip_edges": (lambda x: fj.clip(x, 0.0, 1.0), [U], [[0, 0, 0, 0, 0, 0, 1, 1, 0, 0]]),
    "clip_unit_edges": (lambda x: fj.clip(x, -1.0, 1.0), [[-1.0000001, -1.0, 0.0, 1.0, 1.0000001]],
                        [[0, 0, 1, 1, 0]]),
    "sqrt_at_zero": (fj.sqrt, [[-0.0, 0.0, 4.0]], [[-INF, INF, 0.25]]),
    "rsqrt_at_zero": (fj.rsqrt, [[-0.0, 0.0, 4.0]], [[INF, -INF, -1 / 16]]),
    "cbrt_at_zero": (fj.cbrt, [[-0.0, 0.0, 8.0, -INF, INF]], [[INF, INF, 1 / 12, 0, 0]]),
    "log_at_zero": (fj.log, [[-0.0, 0.0, 2.0, INF]], [[-INF, INF, 0.5, 0]]),
    "asin_at_one": (fj.asin, [[-1.0, 0.0, 1.0]], [[INF, 1, INF]]),
    "acos_at_one": (fj.acos, [[-1.0, 0.0, 1.0]], [[-INF, -1, -INF]]),
    "safe_sqrt_finite_at_zero": (fj.safe_sqrt, [[-1.0, -0.0, 0.0, 1e-30, EPS32, 2 * EPS32, 1e-6, 0.25]],
                                 [[0, 0, 0, 0, 0, 0.5 / math.sqrt(2 * EPS32), 500, 1]]),
    "safe_asin_finite_at_edges": (
        fj.safe_asin, [[-2.0, -1.0, -1 + EPS32, -1 + 2 * EPS32, 0.0, 1 - EPS32, 1.0, 2.0]],
        [[0, 0, 0, 1 / math.sqrt(1 - (1 - 2 * EPS32) ** 2), 1, 1 / math.sqrt(1 - (1 - EPS32) ** 2), 0, 0]]),
    "safe_acos_finite_at_edges": (
        fj.safe_acos, [[-2.0, -1.0, -1 + EPS32, -1 + 2 * EPS32, 0.0, 1 - EPS32, 1.0, 2.0]],
        [[0, 0, 0, -1 / math.sqrt(1 - (1 - 2 * EPS32) ** 2), -1, -1 / math.sqrt(1 - (1 - EPS32) ** 2), 0, 0]]),
    "hypot_x0_at_origin": (lambda x: fj.hypot(x, 0.0), [U], [[-1, -1, -1, -1, 0, 0, 1, 1, 1, 1]]),
    "pow_int_at_zero": (lambda x: x ** 3, [[-0.0, 0.0, -2.0]], [[0, 0, 12]]),
    "pow_minus_three_at_zero": (lambda x: x ** -3, [[-0.0, 0.0, 1.0]], [[-INF, -INF, -3]]),
    "pow_half_at_zero": (lambda x: x ** 1.5, [[0.0, 4.0]], [[0, 3]]),
    "zero_base_pow": (lambda x: 0.0 ** x, [[-1.0, 0.0, 1.0, 2.0]], [[-INF, -INF, 0, 0]]),
    "division_by_python_zero": (lambda x: x / 0.0, [[1.0, 0.0, -1.0]], [[INF, INF, INF]]),
    "atan2_at_origin_is_nan": (lambda x: fj.atan2(x, x), [[0.0, 1.0]], [[NAN, 0]]),
    "fma_with_infinite_factor": (lambda x: fj.fma(x, Float(INF, 0.0, 2.0), 1.0), [[0.0, 5.0, 1.0]],
                                 [[INF, 0, 2]]),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_derivative_at_kink_matches_table(name):
    f, cols, expected = UNARY[name]
    reverse, forward = derivatives(f, cols)
    for got in (reverse, forward):
        for g, e in zip(got, expected):
            assert_close(g, e)


PAIRS = [(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0), (1.0, 1.0), (1.0, 2.0), (2.0, 1.0), (NAN, 1.0), (1.0, NAN),
         (NAN, NAN), (INF, INF)]
A = [p[0] for p in PAIRS]
B = [p[1] for p in PAIRS]

BINARY = {
    "maximum_ties_and_nans_go_to_second": (fj.maximum, [A, B], [[0, 0, 0, 0, 0, 1, 0, 0, 0, 0],
                                                                 [1, 1, 1, 1, 1, 0, 1, 1, 1, 1]]),
    "minimum_ties_go_to_first_nans_to_second": (fj.minimum, [A, B], [[1, 1, 1, 1, 1, 0, 0, 0, 0, 1],
                                                                     [0, 0, 0, 0, 0, 1, 1, 1, 1, 0]]),
    "hypot_zero_at_origin": (fj.hypot, [[0.0, -0.0, 3.0, 3e-30, 1e30, INF, NAN],
                                        [0.0, 0.0, -4.0, 4e-30, 1e30, 1.0, 1.0]],
                             [[0, 0, 0.6, 0.6, math.sqrt(0.5), 1, -1], [0, 0, -0.8, 0.8, math.sqrt(0.5), 1, 1]]),
    # x ** y with an array exponent: 0 where y == 0 (not 0 * inf), 0 along y where x ** y == 0.
    "pow_at_zero_base_and_exponent": (lambda a, b: a ** b, [[0.0, 0.0, 0.0, 0.0, 2.0, -2.0],
                                                            [0.0, 1.0, 2.0, 0.5, 0.5, 2.0]],
                                      [[0, 1, 0, INF, 0.5 / math.sqrt(2), -4],
                                       [-INF, 0, 0, 0, math.sqrt(2) * math.log(2), NAN]]),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_derivative_at_kink_matches_table(name):
    f, cols, expected = BINARY[name]
    reverse, forward = derivatives(f, cols)
    for got in (reverse, forward):
        for g, e in zip(got, expected):
            assert_close(g, e, rtol=1e-5)


def test_safe_functions_threshold_follows_the_precision():
    (g,), _ = derivatives(fj.safe_sqrt, [[EPS64 / 2, EPS64, 2 * EPS64]], Float64)
    assert_close(g, [0, 0, 0.5 / math.sqrt(2 * EPS64)])
    (g,), _ = derivatives(fj.safe_asin, [[-1 + EPS64, 1 - EPS64, 1.0]], Float64)
    assert_close(g, [0, 1 / math.sqrt(1 - (1 - EPS64) ** 2), 0])


def test_safe_functions_work_on_static_vectors():
    v = Array3f(0.0, 0.25, -1.0)
    fj.enable_grad(v)
    fj.backward(fj.safe_sqrt(v))
    assert [fj.grad(v)[i][0] for i in range(3)] == [0, 1, 0]


def test_safe_functions_work_on_nested_static_arrays():
    # (a nested array's components are static arrays: the safe path recurses into them)
    v = fj.llvm.ad.Array22f(fj.llvm.ad.Array2f(0.0, 0.25), fj.llvm.ad.Array2f(-1.0, 4.0))
    fj.enable_grad(v)
    fj.backward(fj.sum(fj.sum(fj.safe_sqrt(v))))
    assert [[fj.grad(v)[i][j][0] for j in range(2)] for i in range(2)] == [[0, 1], [0, 0.25]]


def test_safe_function_values_unchanged_under_ad():
    x = [-2.0, -1.0, -0.5, 0.0, 1e-9, 0.5, 1.0, 2.0]
    for f, ref in ((fj.safe_sqrt, lambda v: np.sqrt(np.maximum(v, 0))),
                   (fj.safe_asin, lambda v: np.arcsin(np.clip(v, -1, 1))),
                   (fj.safe_acos, lambda v: np.arccos(np.clip(v, -1, 1)))):
        a = Float(x)
        fj.enable_grad(a)
        np.testing.assert_allclose(f(a).numpy(), ref(np.float32(x)), rtol=2e-6, atol=1e-7)
        np.testing.assert_array_equal(f(a).numpy(), f(fj.llvm.Float(x)).numpy())


def test_hypot_neither_overflows_nor_underflows():
    out = fj.hypot(Float(1e30, 3e-30, 0.0, INF, 0.0, NAN), Float(1e30, 4e-30, 0.0, 1.0, -INF, 1.0)).numpy()
    assert_close(out[:2], [math.sqrt(2) * 1e30, 5e-30], rtol=1e-6)
    assert out[2] == 0 and out[3] == INF and out[4] == INF and math.isnan(out[5])


def test_normalize_of_zero_vector_has_infinite_not_nan_derivative():
    v = Array3f(Float(0.0, 3.0), Float(0.0, 4.0), Float(0.0, 0.0))
    fj.enable_grad(v)
    fj.backward(fj.normalize(v))
    g = np.array([fj.grad(v)[i].numpy() for i in range(3)])
    assert np.all(g[:, 0] == INF)
    assert_close(g[:, 1], [0.032, -0.024, 0.2], rtol=1e-5)


def test_select_does_not_leak_nan_from_the_branch_not_taken():
    # issue 8 item 15
    x = Float(1, 2, 30, 40)
    fj.enable_grad(x)
    fj.backward(fj.select(x < 20, x, x * (Float(0) / Float(0))))
    g = fj.grad(x).numpy()
    assert g[:2].tolist() == [1, 1] and np.isnan(g[2:]).all()


@pytest.mark.parametrize("branch", [fj.sqrt, fj.log, fj.rsqrt, lambda v: 1.0 / v, fj.asin, lambda v: v ** 0.5])
def test_zero_gradient_times_infinite_partial_is_zero(branch):
    x = Float(0.0, -1.0, 0.25, 0.0)
    fj.enable_grad(x)
    taken = fj.select(x > 0.1, branch(x), 0.0)
    fj.backward(taken * taken)
    g = fj.grad(x).numpy()
    assert g[0] == 0 and g[1] == 0 and g[3] == 0 and np.isfinite(g[2])
    # forward mode: a zero tangent through an infinite partial stays zero
    x = Float(0.0, -1.0, 0.25, 0.0)
    fj.enable_grad(x)
    y = branch(x) * 2
    fj.set_grad(x, Float(0.0, 0.0, 1.0, 0.0))
    g = fj.forward_to(y).numpy()
    assert g[0] == 0 and g[1] == 0 and g[3] == 0 and np.isfinite(g[2])


@given(st.lists(st.sampled_from([-2.0, -1.0, -0.0, 0.0, 1e-30, 0.5, 1.0, 3.0, INF, NAN]), min_size=1, max_size=40),
       st.sampled_from([1, 7, 1000]))
def test_select_gradient_matches_numpy_with_singular_branches(values, repeat):
    xs = np.array(values * repeat, np.float32)
    x = Float(xs)
    fj.enable_grad(x)
    y = fj.select(x > 0.25, fj.sqrt(x) + fj.log(x), x * 3.0)
    fj.backward(y)
    with np.errstate(all="ignore"):
        expected = np.where(xs > 0.25, 0.5 / np.sqrt(xs) + 1 / xs, 3.0)
    np.testing.assert_allclose(fj.grad(x).numpy(), expected, rtol=1e-6)


def test_pow_zero_is_a_constant_one_and_pow_one_keeps_sign_and_identity():
    x = Float(-INF, -0.0, NAN, 2.0)
    fj.enable_grad(x)
    y = x ** 0
    assert y.numpy().tolist() == [1, 1, 1, 1] and not fj.grad_enabled(y)
    z = x ** 1
    assert z is not x and math.copysign(1, z.numpy()[1]) == -1
    fj.backward(z)
    assert fj.grad(x).numpy().tolist() == [1, 1, 1, 1]
    w = Float(1, 2)
    p = w ** 1
    p += 1
    assert w.numpy().tolist() == [1, 2]         # in-place on the result leaves w alone


def test_pow_zero_keeps_symbolic_width_in_frozen_function():
    f = fj.freeze(lambda x: x ** 0)
    for n in (3, 5, 7):
        assert f(fj.arange(fj.llvm.Float, n)).numpy().tolist() == [1] * n


def test_float_of_same_type_is_the_same_variable():
    a = Float(1.0, 2.0)
    fj.enable_grad(a)
    k = Float(a)
    assert k._ad is a._ad
    fj.backward(k * 3)
    assert fj.grad(a).numpy().tolist() == [3, 3]


def test_second_forward_through_a_scatter_after_clear_vertices_is_not_doubled():
    # issue 8 item 21
    x = Float(1.0)
    fj.enable_grad(x)
    buf = fj.zeros(Float, 4)
    fj.scatter(buf, x * 8, UInt32(2))
    fj.forward(x, flags=fj.ADFlag.ClearVertices)
    assert fj.grad(buf).numpy().tolist() == [0, 0, 8, 0]
    fj.scatter(buf, 5.0, UInt32(0))
    fj.forward(x)
    assert fj.grad(buf).numpy().tolist() == [0, 0, 8, 0]


def test_forward_scatter_overwrites_only_written_entries():
    x = Float(1.0)
    fj.enable_grad(x)
    buf = fj.zeros(Float, 4)
    fj.scatter(buf, x * 4, UInt32(2))
    fj.forward(x, flags=fj.ADFlag.ClearVertices)
    fj.scatter(buf, x * 3, UInt32(0))
    fj.forward(x)
    assert fj.grad(buf).numpy().tolist() == [3, 0, 4, 0]
    # scatter_add accumulates, as in Dr.Jit
    x = Float(1.0)
    fj.enable_grad(x)
    buf = fj.zeros(Float, 4)
    fj.scatter_add(buf, x * 4, UInt32(2))
    fj.forward(x, flags=fj.ADFlag.ClearVertices)
    fj.scatter_add(buf, 5.0, UInt32(0))
    fj.forward(x)
    assert fj.grad(buf).numpy().tolist() == [0, 0, 8, 0]
