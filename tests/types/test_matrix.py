"""Matrices: products, inverse, determinant, decompositions against NumPy; AD against finite
differences (float64); frozen == plain at several widths; gathers and scatters; PyTrees."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as T
import frostjit.llvm.ad as AD
from type_helpers import WIDTHS, assert_same, check_gradient, random_array

MATRICES = {2: T.Matrix2f64, 3: T.Matrix3f64, 4: T.Matrix4f64}
VECTORS = {2: T.Array2f64, 3: T.Array3f64, 4: T.Array4f64}


def _lanes(m) -> np.ndarray:
    """(width, n, n) NumPy matrices of a frostjit matrix."""
    return np.moveaxis(m.numpy(), -1, 0)


@pytest.mark.parametrize("n", [2, 3, 4])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), width=st.sampled_from([1, 7, 33]))
def test_products_inverse_and_determinant_match_numpy(n, seed, width):
    rng = np.random.default_rng(seed)
    a, b = random_array(MATRICES[n], width, rng), random_array(MATRICES[n], width, rng)
    v = random_array(VECTORS[n], width, rng)
    A, B, V = _lanes(a), _lanes(b), np.moveaxis(v.numpy(), -1, 0)
    np.testing.assert_allclose(_lanes(a @ b), A @ B, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_lanes(a * b), A @ B, rtol=1e-12, atol=1e-12)     # * is the matrix product
    np.testing.assert_allclose(np.moveaxis((a @ v).numpy(), -1, 0), np.einsum("wij,wj->wi", A, V), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(np.moveaxis((v @ a).numpy(), -1, 0), np.einsum("wj,wji->wi", V, A), rtol=1e-12,
                               atol=1e-12)
    det = np.linalg.det(A)
    np.testing.assert_allclose(fj.det(a).numpy(), det, rtol=1e-9, atol=1e-12)
    ok = np.abs(det) > 1e-3
    inv = _lanes(fj.rcp(a))[ok]
    np.testing.assert_allclose(inv, np.linalg.inv(A[ok]), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(_lanes(a / b)[np.abs(np.linalg.det(B)) > 1e-3],
                               (A @ np.linalg.inv(B))[np.abs(np.linalg.det(B)) > 1e-3], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fj.frob(a).numpy(), (A * A).sum(axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(fj.trace(a).numpy(), np.trace(A, axis1=1, axis2=2), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(_lanes(fj.transpose(a)), np.swapaxes(A, 1, 2))
    np.testing.assert_array_equal(_lanes(a.T), np.swapaxes(A, 1, 2))


def test_numbers_are_multiples_of_the_identity():
    m = T.Matrix2f(1, 2, 3, 4)
    np.testing.assert_array_equal((m + 1).numpy()[..., 0], [[2, 2], [3, 5]])
    np.testing.assert_array_equal((1 - m).numpy()[..., 0], [[0, -2], [-3, -3]])
    np.testing.assert_array_equal((2 / m).numpy()[..., 0], [[-4, 2], [3, -1]])
    np.testing.assert_array_equal(T.Matrix2f(5).numpy()[..., 0], [[5, 0], [0, 5]])
    np.testing.assert_array_equal((m * 2).numpy()[..., 0], [[2, 4], [6, 8]])        # scaling, not I * 2


def test_matrix_power_is_repeated_products():
    """Dr.Jit 1.5 gives [[22, 32], [22, 32]] for Matrix2f(1, 2, 3, 4) ** 2 (not the square):
    frostjit computes m @ m (docs/types.md, Differences)."""
    m = T.Matrix2f(1, 2, 3, 4)
    np.testing.assert_array_equal((m ** 2).numpy(), (m @ m).numpy())
    np.testing.assert_array_equal((m ** 0).numpy(), T.Matrix2f(1).numpy())
    with pytest.raises(TypeError, match="int exponent"):
        m ** 0.5


def test_inequality_comparisons_of_matrices_raise_and_equality_gives_a_mask():
    m = T.Matrix2f(1, 2, 3, 4)
    with pytest.raises(TypeError, match="inequality"):
        m < m
    assert type(m == m) is T.Array22b


def test_batched_matrices_of_static_entries():
    """Matrix34f is a 3x3 matrix of Array4f entries: four matrices per lane."""
    rng = np.random.default_rng(1)
    a, b = random_array(T.Matrix34f, 5, rng), random_array(T.Matrix34f, 5, rng)
    A = np.moveaxis(a.numpy(), (2, 3), (0, 1))          # (4, width, 3, 3)
    B = np.moveaxis(b.numpy(), (2, 3), (0, 1))
    got = np.moveaxis((a @ b).numpy(), (2, 3), (0, 1))
    np.testing.assert_allclose(got, A @ B, rtol=1e-5, atol=1e-5)
    assert type(fj.diag(a)) is T.Array34f and type(fj.identity(T.Matrix34f)) is T.Matrix34f


def test_polar_decomposition_and_transforms():
    rng = np.random.default_rng(2)
    a = random_array(T.Matrix3f64, 50, rng)
    q, p = fj.polar_decomp(a)
    Q, P, A = _lanes(q), _lanes(p), _lanes(a)
    np.testing.assert_allclose(Q @ P, A, atol=1e-9)
    np.testing.assert_allclose(np.swapaxes(Q, 1, 2) @ Q, np.broadcast_to(np.eye(3), Q.shape), atol=1e-9)
    np.testing.assert_allclose(P, np.swapaxes(P, 1, 2), atol=1e-9)
    # compose(decompose(M)) == M for non-perspective transforms, reflections included
    m = T.Matrix4f64(*[T.Float64(rng.standard_normal(50)) for _ in range(12)], 0, 0, 0, 1)
    s, rot, t = fj.transform_decompose(m)
    assert type(s) is T.Matrix3f64 and type(rot) is T.Quaternion4f64 and type(t) is T.Array3f64
    np.testing.assert_allclose(fj.transform_compose(s, rot, t).numpy(), m.numpy(), atol=1e-9)


@pytest.mark.parametrize("width", WIDTHS)
def test_frozen_matrix_function_equals_plain_calls(width):
    def f(m, v):
        return fj.rcp(m) @ v, fj.det(m), m.T * 2 + 1, fj.frob(m)

    frozen = fj.freeze(f)
    rng = np.random.default_rng(width)
    for w in (width, width + 5):
        m, v = random_array(T.Matrix4f, w, rng), random_array(T.Array4f, w, rng)
        got, want = frozen(m, v), f(m, v)
        assert [type(x) for x in got] == [type(x) for x in want]
        assert_same(got, want)


def test_matrix_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    for n in (2, 3, 4):
        M = getattr(AD, f"Matrix{n}f64")
        V = getattr(AD, f"Array{n}f64")
        a = random_array(M, 3, rng) + M(3.0)       # well conditioned
        b, v = random_array(M, 3, rng), random_array(V, 3, rng)
        check_gradient(lambda x, y: x @ y, (a, b))
        check_gradient(lambda x, y: x @ y, (a, v))
        check_gradient(lambda x: fj.rcp(x), (a,), rtol=1e-5)
        check_gradient(lambda x: fj.det(x), (a,), rtol=1e-5)
        check_gradient(lambda x: fj.frob(x) + fj.trace(x), (a,))


def test_matrix_gather_scatter_and_pytrees():
    src = T.Float(np.arange(16.0))
    g = fj.gather(T.Matrix2f, src, T.UInt32(1, 3))
    assert type(g) is T.Matrix2f
    np.testing.assert_array_equal(g.numpy()[..., 1], [[12, 13], [14, 15]])
    target = fj.zeros(T.Matrix2f, 3)
    fj.scatter(target, T.Matrix2f(9), T.UInt32(1))
    np.testing.assert_array_equal(target.numpy()[..., 1], [[9, 0], [0, 9]])
    assert len(fj.tree.leaves(T.Matrix34f(1))) == 36
    doubled = fj.tree.transform({"m": T.Matrix2f(1, 2, 3, 4)}, lambda x: x * 2)["m"]
    assert type(doubled) is T.Matrix2f and doubled[1][1][0] == 8


def test_inverse_warns_as_deprecated_like_drjit():
    m = T.Matrix2f(1, 2, 3, 4)
    with pytest.warns(DeprecationWarning, match="rcp"):
        inv = fj.inverse(m)
    np.testing.assert_array_equal(inv.numpy(), fj.rcp(m).numpy())


def test_one_matmul_and_transpose_take_matrices_and_tensors():
    """fj.matmul / fj.transpose are one public function each (the tensor module's): a matrix goes to
    the lane-wise matrix product, a tensor to NumPy's matmul; At/Bt transpose a matrix operand."""
    a = np.arange(9, dtype=np.float64).reshape(3, 3) + np.eye(3)
    b = np.arange(9, dtype=np.float64).reshape(3, 3)[::-1] * 0.5
    ma, mb = T.Matrix3f64(a), T.Matrix3f64(b)
    np.testing.assert_allclose(fj.matmul(ma, mb).numpy()[..., 0], a @ b)
    np.testing.assert_allclose(fj.matmul(ma, mb, At=True, Bt=True).numpy()[..., 0], a.T @ b.T)
    np.testing.assert_allclose(fj.transpose(ma).numpy()[..., 0], a.T)
    assert type(fj.transpose(ma)) is T.Matrix3f64
    ta, tb = T.TensorXf64(a), T.TensorXf64(b)
    np.testing.assert_allclose(fj.matmul(ta, tb).numpy(), a @ b)
    np.testing.assert_allclose(fj.transpose(ta).numpy(), a.T)
    with pytest.raises(TypeError, match="tensor"):
        fj.matmul(ma, tb)
    with pytest.raises(TypeError, match="axes"):
        fj.transpose(ma, (1, 0))


@pytest.mark.parametrize("cls", [AD.Matrix3f, AD.Matrix2f64, AD.Complex2f, AD.Quaternion4f])
def test_identity_entries_have_every_lane_so_each_gets_its_own_gradient(cls):
    # (the zeros of identity(Matrix3f, 2) had one lane: after enable_grad, the gradient of an
    # off-diagonal entry summed both lanes, 4 instead of Dr.Jit's 2)
    m = fj.identity(cls, 2)
    entries = [e for row in m for e in row] if fj.is_matrix_v(cls) else list(m)
    assert [len(e) for e in entries] == [2] * len(entries)
    fj.enable_grad(m)
    fj.backward(fj.sum(fj.sum(fj.ravel(m * 2) if fj.is_matrix_v(cls) else m * 2)))
    assert all(np.all(g.numpy() == 2) for g in ([e for row in m.grad for e in row] if fj.is_matrix_v(cls) else m.grad))
    one = np.asarray(fj.identity(cls, 1).numpy())
    assert np.asarray(fj.identity(cls, 2).numpy()).tolist() == np.repeat(one, 2, axis=-1).tolist()


@pytest.mark.parametrize("src_n, dst_n", [(4, 3), (4, 2), (3, 4), (2, 4), (3, 2)])
def test_matrix_of_another_size_converts_by_its_upper_left_block(src_n, dst_n):
    # Dr.Jit: Matrix3f(Matrix4f) drops the last row and column, Matrix4f(Matrix3f) pads with the
    # identity's (frostjit raised TypeError "cannot convert a Matrix4f of 4 components")
    from frostjit import llvm, scalar
    src = np.arange(src_n * src_n, dtype=np.float32).reshape(src_n, src_n) + 1
    want = np.eye(dst_n, dtype=np.float32)
    k = min(src_n, dst_n)
    want[:k, :k] = src[:k, :k]
    for mod in (llvm, scalar):
        m = getattr(mod, f"Matrix{src_n}f")(*src.reshape(-1).tolist())
        got = getattr(mod, f"Matrix{dst_n}f")(m)
        np.testing.assert_array_equal(np.asarray(got).reshape(dst_n, dst_n), want)


def test_matmul_in_place_changes_the_object_as_the_other_operators_do():
    # m @= n made a new object (aliases kept the old value); Dr.Jit changes m in place
    m = T.Matrix2f(1, 2, T.Float(3, 1), 4)
    alias = m
    m @= T.Matrix2f(1, 2, 3, 4)
    assert alias is m
    np.testing.assert_array_equal(np.asarray(m), np.asarray(T.Matrix2f(1, 2, T.Float(3, 1), 4) @ T.Matrix2f(1, 2, 3, 4)))
    t = T.TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3))
    alias = t
    t @= T.TensorXf(np.ones((3, 1), np.float32))
    assert alias is t and t.shape == (2, 1)
    np.testing.assert_array_equal(t.numpy(), [[3], [12]])
    v = T.Array3f(1, 2, 3)
    before = v
    v @= T.Array3f(1, 1, 1)           # a dot product: another type, the name is rebound
    assert type(v) is T.Float and np.asarray(before).reshape(-1).tolist() == [1, 2, 3]


def test_minimum_maximum_clip_with_a_number_use_that_multiple_of_the_identity():
    # Dr.Jit converts the number to a matrix as + and - do (minimum(m, 2) compares with 2 I);
    # fma(0, t, m) (lerp of a matrix toward a number) raised ValueError
    from frostjit import scalar
    for mod in (T, scalar):
        m = mod.Matrix2f(1, 2, 3, 4)
        np.testing.assert_array_equal(np.asarray(fj.minimum(m, 2)).reshape(2, 2), [[1, 0], [0, 2]])
        np.testing.assert_array_equal(np.asarray(fj.maximum(m, 2)).reshape(2, 2), [[2, 2], [3, 4]])
        np.testing.assert_array_equal(np.asarray(fj.clip(m, 0, 2)).reshape(2, 2), [[1, 0], [0, 2]])
        np.testing.assert_array_equal(np.asarray(fj.lerp(m, 0, 0.5)).reshape(2, 2), [[0.5, 1], [1.5, 2]])
        np.testing.assert_array_equal(np.asarray(fj.fma(0.5, 2, m)).reshape(2, 2), [[2, 2], [3, 5]])
        # == and != too: 2 I == 2 everywhere (was only on the diagonal)
        assert np.asarray(mod.Matrix2f(2, 0, 0, 2) == 2).all()
        assert not np.asarray(mod.Matrix2f(2, 0, 0, 2) != 2).any()
        np.testing.assert_array_equal(np.asarray(m == 1).reshape(2, 2), [[True, False], [False, False]])
