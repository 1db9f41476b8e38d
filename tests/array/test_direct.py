"""Static arrays, complex numbers and matrices make their component nodes directly
(frostjit/array/direct.py): the same graph as the general path (operation by operation through
``apply``), so the same kernel and bit-identical results, plain and frozen, at every width; and
the general path whenever the fast case does not hold (gradients, mixed classes)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as T
import frostjit.llvm.ad as AD
from frostjit.array.flat import apply
from frostjit.errors import IncompatibleSizesError
from frostjit.schedule.kernel import build_kernel

WIDTHS = [1, 7, 1000, 100003]


def _key(*arrays):
    """The kernel key of evaluating the 1-D arrays ``arrays`` together (the traced graph's shape)."""
    return build_kernel([a._node for a in arrays], []).key()


def _floats(n, seed, k):
    rng = np.random.default_rng(seed)
    return [T.Float(rng.standard_normal(n).astype(np.float32)) for _ in range(k)]


def _general_dot(xs, ys):
    """Dr.Jit's matmul sum, one ``apply`` per operation (the general path)."""
    acc = apply("mul", xs[0], ys[0])
    for x, y in zip(xs[1:], ys[1:]):
        acc = apply("fma", x, y, acc)
    return acc


def test_complex_product_makes_the_general_formulas_nodes():
    ar, ai, br, bi = _floats(5, 1, 4)
    r = T.Complex2f(ar, ai) * T.Complex2f(br, bi)
    re = apply("fma", ar, br, apply("neg", apply("mul", ai, bi)))
    im = apply("fma", ar, bi, apply("mul", ai, br))
    assert all(type(p) is T.Float for p in r._c)
    assert _key(*r._c) == _key(re, im)
    assert np.array_equal(r.real.numpy(), re.numpy()) and np.array_equal(r.imag.numpy(), im.numpy())


@pytest.mark.parametrize("op", ["add", "sub"])
def test_complex_sum_makes_one_node_per_part(op):
    ar, ai, br, bi = _floats(5, 2, 4)
    f = (lambda x, y: x + y) if op == "add" else (lambda x, y: x - y)
    r = f(T.Complex2f(ar, ai), T.Complex2f(br, bi))
    assert _key(*r._c) == _key(apply(op, ar, br), apply(op, ai, bi))


def test_matrix_vector_product_makes_the_general_fma_chains():
    m = T.Matrix4f(*[float(v) for v in np.arange(16) * 0.25 - 1.5])
    p = T.Array4f(*_floats(6, 3, 3), 1.0)
    r = m @ p
    assert type(r) is T.Array4f and all(type(c) is T.Float for c in r._c)
    want = [_general_dot(list(m[i]), list(p)) for i in range(4)]
    assert _key(*r._c) == _key(*want)
    for i in range(4):
        assert np.array_equal(r[i].numpy(), want[i].numpy())


def test_matrix_product_makes_the_general_fma_chains():
    a = T.Matrix3f(*_floats(4, 4, 9))
    b = T.Matrix3f(*_floats(4, 5, 9))
    r = a @ b
    assert type(r) is T.Matrix3f and type(r[0]) is T.Array3f
    want = [_general_dot(list(a[i]), [b[k][j] for k in range(3)]) for i in range(3) for j in range(3)]
    got = [r[i][j] for i in range(3) for j in range(3)]
    assert _key(*got) == _key(*want)


def test_quaternion_product_makes_the_general_formulas_nodes():
    x1, y1, z1, w1, x2, y2, z2, w2 = _floats(5, 8, 8)
    r = T.Quaternion4f(x1, y1, z1, w1) * T.Quaternion4f(x2, y2, z2, w2)
    assert type(r) is T.Quaternion4f and all(type(c) is T.Float for c in r._c)

    def f(a, b, c):
        return apply("fma", a, b, c)

    def n(a):
        return apply("neg", a)

    def m(a, b):
        return apply("mul", a, b)
    want = [apply("add", f(w1, x2, n(m(z1, y2))), f(x1, w2, m(y1, z2))),
            apply("add", f(w1, y2, n(m(x1, z2))), f(y1, w2, m(z1, x2))),
            apply("add", f(w1, z2, n(m(y1, x2))), f(z1, w2, m(x1, y2))),
            apply("add", f(w1, w2, n(m(z1, z2))), f(n(x1), x2, n(m(y1, y2))))]
    assert _key(*r._c) == _key(*want)
    for got, w in zip(r._c, want):
        assert np.array_equal(got.numpy(), w.numpy())
    s = T.Quaternion4f(x1, y1, z1, w1) - T.Quaternion4f(x2, y2, z2, w2)
    assert _key(*s._c) == _key(*[apply("sub", a, b) for a, b in zip((x1, y1, z1, w1), (x2, y2, z2, w2))])


def test_static_array_sum_makes_one_node_per_component():
    xs, ys = _floats(3, 6, 3), _floats(3, 7, 3)
    r = T.Array3f(*xs) * T.Array3f(*ys)
    assert type(r) is T.Array3f
    assert _key(*r._c) == _key(*[apply("mul", x, y) for x, y in zip(xs, ys)])
    assert type(T.Array3f(*xs) < T.Array3f(*ys)) is T.Array3b      # (a comparison: the general path)


def test_gradients_take_the_general_path():
    m = AD.Matrix2f(1.0, 2.0, 3.0, 4.0)
    v = AD.Array2f(AD.Float([1.0, 2.0]), AD.Float([0.5, -1.0]))
    fj.enable_grad(v)
    r = m @ v
    fj.backward(fj.sum(r[0] + r[1]))
    assert fj.grad(v)[0].numpy().tolist() == [4.0, 4.0] and fj.grad(v)[1].numpy().tolist() == [6.0, 6.0]
    w = AD.Array2f(AD.Float([1.0, 2.0]), AD.Float([0.5, -1.0]))
    fj.enable_grad(w)
    s = w + w
    fj.backward(fj.sum(s[0]))
    assert fj.grad(w)[0].numpy().tolist() == [2.0, 2.0]


@settings(max_examples=8, deadline=None)
@given(n=st.sampled_from(WIDTHS), seed=st.integers(0, 2**16))
def test_transform_matches_numpy_plain_and_frozen(n, seed):
    """bench_types' transform, plain, frozen (recording and a replay) and float64 NumPy."""
    rng = np.random.default_rng(seed)
    mat = rng.standard_normal((4, 4)).astype(np.float32)
    pts = rng.standard_normal((3, n)).astype(np.float32)
    m = T.Matrix4f(*[float(v) for v in mat.ravel()])
    p = T.Array4f(T.Float(pts[0]), T.Float(pts[1]), T.Float(pts[2]), 1.0)

    def transform(m, p):
        r = m @ p
        fj.eval(r)
        return r

    want = mat.astype(np.float64) @ np.vstack([pts, np.ones((1, n), np.float32)]).astype(np.float64)
    plain = np.array([c.numpy() for c in transform(m, p)])
    np.testing.assert_allclose(plain, want, rtol=1e-4, atol=1e-4)
    frozen = fj.freeze(transform)
    for _ in range(2):
        r = frozen(m, p)
        assert np.array_equal(np.array([c.numpy() for c in r]), plain)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "lt"])
@pytest.mark.parametrize("n", WIDTHS[:3])
def test_vector_beside_its_element_array_makes_the_general_nodes(op, n):
    """``Array3f op Float`` and ``Float op Array3f`` (normalize's ``v * rsqrt(d)``): the direct
    broadcast builds the componentwise path's graph, with its values and result class (``lt``,
    ``truediv``: not kit operations, the general path)."""
    xs = _floats(n, 11, 4)
    v, s = T.Array3f(*xs[:3]), xs[3]
    left = [apply(op, c, s) for c in xs[:3]]
    if op == "truediv":     # (Dr.Jit 1.5: one reciprocal of the lower-depth divisor, r16)
        recip = apply("rcp", s)
        left = [apply("mul", c, recip) for c in xs[:3]]
    for r, want in ((apply(op, v, s), left),
                    (apply(op, s, v), [apply(op, s, c) for c in xs[:3]])):
        assert type(r) is (T.Array3b if op == "lt" else T.Array3f)
        assert _key(*r._c) == _key(*want)
        for got, w in zip(r._c, want):
            assert np.array_equal(got.numpy(), w.numpy())


def test_vector_beside_its_element_array_keeps_the_general_rules():
    """Sizes that differ broadcast or raise the nested error; a gradient takes the AD path;
    a nested static array is not an element array (``Array2f + Array22f``)."""
    v = T.Array3f(T.Float(1, 2, 3), 1.0, T.Float(4, 5, 6))
    assert np.array_equal((v * T.Float(2, 3, 4)).numpy(), [[2, 6, 12], [2, 3, 4], [8, 15, 24]])
    with pytest.raises(IncompatibleSizesError, match="nested operation failed"):
        v * T.Float(1, 2)
    with pytest.raises(IncompatibleSizesError, match="nested operation failed"):
        T.Float(1, 2) - v
    x = AD.Float(1, 2, 3)
    fj.enable_grad(x)
    y = AD.Array3f(AD.Float(1, 1, 1), 2.0, 3.0) * x
    fj.backward(fj.sum(y.x + y.y + y.z))
    assert np.array_equal(x.grad.numpy(), [6, 6, 6])
    r = T.Array2f(10, 20) + T.Array22f(T.Array2f(1, 2), T.Array2f(3, 4))
    assert type(r) is T.Array22f and np.array_equal(r.numpy()[..., 0], [[11, 22], [13, 24]])


@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv"])
@pytest.mark.parametrize("num", [1.5, 2, -0.0, 0.1, 1e40, float("nan")])
@pytest.mark.parametrize("cls", [T.Array3f, T.Array4f64, T.Array2f16])
def test_vector_beside_a_python_number_makes_the_general_nodes(op, num, cls):
    """``Array3f * 1.5`` and ``1.5 - v`` (components' own operators, session r13): the graph of
    the componentwise path (``apply`` per component), its values and class, at several widths."""
    for n in WIDTHS[:3]:
        xs = [cls._elem(c) for c in _floats(n, 12, cls._n)]
        v = cls(*xs)
        for r, want in ((apply(op, v, num), [apply(op, c, num) for c in xs]),
                        (apply(op, num, v), [apply(op, num, c) for c in xs])):
            assert type(r) is cls
            assert _key(*r._c) == _key(*want)
            for got, w in zip(r._c, want):
                assert np.array_equal(got.numpy(), w.numpy(), equal_nan=True)


def test_vector_beside_a_python_number_keeps_the_general_rules():
    """An integer vector times a float promotes; a gradient takes the AD path; bools are masks."""
    r = T.Array3i(1, 2, 3) * 1.5
    assert type(r) is T.Array3f and np.array_equal(r.numpy().ravel(), [1.5, 3, 4.5])
    x = AD.Float(1, 2, 3)
    fj.enable_grad(x)
    y = 2.0 * AD.Array3f(x, x, 1.0) - 1
    fj.backward(fj.sum(y.x + y.y + y.z))
    assert np.array_equal(x.grad.numpy(), [4, 4, 4])
