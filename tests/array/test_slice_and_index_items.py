"""x[slice] and x[integer array] on 1-D arrays are gathers, their assignments scatters, as in
Dr.Jit 1.5 (values recorded side by side: Float(1, 2, 3, 4)[1:3] is [2, 3], [::2] is [1, 3],
[Int32(3, 0)] is [4, 1]; x[UInt32(0, 2)] = 9 gives [9, 2, 9, 4], x[1:3] = 9 gives [1, 9, 9, 4])."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, Int32, UInt32
from frostjit.llvm.ad import Float as FloatAD


def test_drjits_examples():
    x = Float(1, 2, 3, 4)
    assert x[1:3].numpy().tolist() == [2, 3] and x[::2].numpy().tolist() == [1, 3]
    assert x[-1:].numpy().tolist() == [4] and x[Int32(3, 0)].numpy().tolist() == [4, 1]
    y = Float(1, 2, 3, 4)
    y[UInt32(0, 2)] = 9
    assert y.numpy().tolist() == [9, 2, 9, 4]
    z = Float(1, 2, 3, 4)
    z[1:3] = 9
    assert z.numpy().tolist() == [1, 9, 9, 4]


@given(n=st.integers(0, 40), start=st.integers(-50, 50) | st.none(), stop=st.integers(-50, 50) | st.none(),
       step=st.sampled_from([None, 1, 2, 3, -1, -2]))
def test_slices_read_and_write_like_numpy(n, start, stop, step):
    a = np.arange(n, dtype=np.float32)
    s = slice(start, stop, step)
    np.testing.assert_array_equal(Float(a)[s].numpy(), a[s])
    x, b = Float(a), a.copy()
    x[s] = -1.0
    b[s] = -1.0
    np.testing.assert_array_equal(x.numpy(), b)


def test_gradients_flow_through_slices():
    x = FloatAD(1, 2, 3, 4)
    fj.enable_grad(x)
    fj.backward(fj.sum(x[1:3] * x[1:3]))
    assert fj.grad(x).numpy().tolist() == [0, 4, 6, 0]


def test_frozen_slices_follow_the_width():
    f = fj.freeze(lambda x: x[1:] * 2)
    for n in (3, 5, 1000, 3):
        np.testing.assert_array_equal(f(fj.arange(Float, n)).numpy(), np.arange(1, n) * 2)


@pytest.mark.parametrize("bad", [1.5, "a", Float(1.0), (1, 2)])
def test_other_indices_raise_naming_what_is_accepted(bad):
    with pytest.raises(TypeError, match="integers, slices, masks or integer arrays"):
        Float(1, 2)[bad]
