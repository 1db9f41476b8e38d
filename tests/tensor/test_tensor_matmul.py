"""fj.matmul / @ on tensors with NumPy's semantics (batches, vectors, At/Bt)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, TensorXb, TensorXf, TensorXf64, TensorXi


@st.composite
def operands(draw):
    m, k, n = (draw(st.integers(1, 5)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    a_batch = [1 if draw(st.booleans()) else b for b in batch][draw(st.integers(0, len(batch))):]
    b_batch = [1 if draw(st.booleans()) else b for b in batch][draw(st.integers(0, len(batch))):]
    a_shape = tuple(a_batch) + (m, k) if draw(st.booleans()) else (k,)
    b_shape = tuple(b_batch) + (k, n) if draw(st.booleans()) else (k,)
    return a_shape, b_shape


@given(operands(), st.booleans(), st.booleans())
def test_matmul_matches_numpy(shapes, at, bt):
    sa, sb = shapes
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    at, bt = at and a.ndim > 1, bt and b.ndim > 1
    a_in = np.swapaxes(a, -1, -2).copy() if at else a
    b_in = np.swapaxes(b, -1, -2).copy() if bt else b
    got = fj.matmul(TensorXf64(a_in), TensorXf64(b_in), At=at, Bt=bt)
    want = np.matmul(a, b)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("k", [64, 65, 100, 257])
def test_long_inner_dimension_runs_in_chunks(k):
    rng = np.random.default_rng(k)
    a, b = rng.standard_normal((3, k)), rng.standard_normal((k, 4))
    np.testing.assert_allclose((TensorXf64(a) @ TensorXf64(b)).numpy(), a @ b, rtol=1e-12)


def test_matmul_forms_and_errors():
    a = TensorXf(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal((a @ TensorXf([0, 1, 2])).numpy(), [5, 14])
    assert fj.matmul(TensorXf([1, 2, 3]), TensorXf([1, 2, 3])).item() == 14       # 0-d, as NumPy
    np.testing.assert_array_equal(fj.matmul(Float(1, 2), TensorXf(np.eye(2, dtype=np.float32))).numpy(), [1, 2])
    np.testing.assert_array_equal((TensorXi([[1, 2]]) @ TensorXi([[3], [4]])).numpy(), [[11]])
    with pytest.raises(ValueError, match="inner dimensions differ"):
        a @ a
    with pytest.raises(ValueError, match="at least one dimension"):
        fj.matmul(TensorXf(1.0), a)
    with pytest.raises(TypeError, match="one element type"):
        fj.matmul(a, TensorXf64(np.ones((3, 1))))
    with pytest.raises(TypeError, match="Bool"):
        fj.matmul(TensorXb([[True]]), TensorXb([[True]]))
    with pytest.raises(ValueError, match="batch|incompatible"):
        fj.matmul(TensorXf(np.ones((2, 2, 2), np.float32)), TensorXf(np.ones((3, 2, 2), np.float32)))


@pytest.mark.parametrize("sa, sb", [((1,) * 6 + (3, 4), (1,) * 6 + (4, 5)), ((2, 1, 2, 1, 1, 2, 2, 3), (3, 1)),
                                    ((3, 4), (1,) * 6 + (4, 2))])
def test_six_batch_axes_match_numpy(sa, sb):
    rng = np.random.default_rng(len(sa))
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    got = fj.matmul(TensorXf64(a), TensorXf64(b))
    np.testing.assert_allclose(got.numpy(), np.matmul(a, b), rtol=1e-12)


@pytest.mark.parametrize("sa, sb", [((1,) * 7 + (3, 4), (1,) * 7 + (4, 5)), ((3, 4), (1,) * 7 + (4, 5)),
                                    ((2,) * 7 + (3, 4), (4,)), ((1,) * 7 + (3, 4), (1,) * 6 + (4, 5))])
def test_seven_batch_axes_raise_as_drjit(sa, sb):
    # Dr.Jit 1.5: "tensor matmul: batch rank 7 exceeds the maximum of 6." (ValueError), the
    # batch rank counted after broadcasting (r16, side by side).
    with pytest.raises(ValueError, match="batch rank 7 exceeds the maximum of 6"):
        fj.matmul(fj.zeros(TensorXf, sa), fj.zeros(TensorXf, sb))
