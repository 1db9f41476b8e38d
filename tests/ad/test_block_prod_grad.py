"""The derivative of ``fj.block_reduce(Mul, x, b)`` is the product of the block's other entries,
also where the block holds zeros (Dr.Jit 1.5 computes ``out / x``: NaN at a zero, also for
blocks of one entry, where its derivative is 1); ``out / x`` where the block holds no zero.  The
fused tensor axis reduction and ``prod`` already had this rule, so a tensor's ``prod`` along an
axis now has the same gradient whichever path computes it.  Reference: NumPy, entry by entry."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm.ad import Float, TensorXf

VALUES = st.sampled_from([0.0, 0.0, 1.0, 2.0, -1.5, 3.0, 0.5])


def _others(x, b):
    """d out_k / d x_i: the product of the other entries of i's block (float64)."""
    g = np.zeros(len(x))
    for i in range(len(x)):
        s = (i // b) * b
        blk = np.delete(x[s:s + b].astype(np.float64), i - s)
        g[i] = np.prod(blk)
    return g


@given(st.lists(VALUES, min_size=1, max_size=24), st.integers(1, 5))
def test_block_product_gradient_matches_numpy(xs, b):
    a = np.array(xs, dtype=np.float32)
    x = Float(a)
    fj.enable_grad(x)
    y = fj.block_reduce(fj.ReduceOp.Mul, x, b)
    fj.backward(y)
    got = fj.grad(x).numpy()
    assert not np.isnan(got).any()
    assert np.allclose(got, _others(a, b), rtol=1e-6, atol=0)


@pytest.mark.parametrize("b", [1, 2, 3])
def test_block_product_forward_mode(b):
    a = np.array([1, 0, 3, 2, 0, 0, 5], dtype=np.float32)
    x = Float(a)
    fj.enable_grad(x)
    y = fj.block_reduce(fj.ReduceOp.Mul, x, b)
    fj.set_grad(x, Float(np.ones(len(a), dtype=np.float32)))
    fj.forward_to(y)
    blocks = [_others(a, b)[s:s + b].sum() for s in range(0, len(a), b)]
    assert np.allclose(fj.grad(y).numpy(), blocks)


def test_block_of_one_has_derivative_one():
    x = Float(1, 0, 3)
    fj.enable_grad(x)
    fj.backward(fj.block_reduce(fj.ReduceOp.Mul, x, 1))
    assert fj.grad(x).numpy().tolist() == [1, 1, 1]         # (Dr.Jit 1.5 agrees here)


@pytest.mark.parametrize("cols", [3, 19, 64])
def test_tensor_prod_gradient_is_the_same_fused_or_not(cols):
    # row lengths that take the fused axis reduction and ones that take block_reduce
    a = (np.arange(4 * cols, dtype=np.float32).reshape(4, cols) % 4) - 1.0     # zeros in every row
    a[0] = 2.0
    a[1, 1:] = 1.5                                                           # one zero in row 1
    t = TensorXf(a)
    fj.enable_grad(t)
    fj.backward(fj.prod(t, axis=1))
    want = np.stack([_others(r, cols) for r in a])
    assert np.allclose(fj.grad(t).numpy(), want, rtol=1e-5, atol=0)


def test_frozen_block_product_gradient_equals_plain():
    fn = lambda x: fj.block_reduce(fj.ReduceOp.Mul, x, 2)     # noqa: E731
    frozen = fj.freeze(fn)
    for n in (1, 4, 7):
        grads = []
        for f in (frozen, fn):
            x = Float(np.array([0, 2, 3, 0, 5, 1, 0], dtype=np.float32)[:n])
            fj.enable_grad(x)
            fj.backward(f(x))
            grads.append(fj.grad(x).numpy().tolist())
        assert grads[0] == grads[1]
