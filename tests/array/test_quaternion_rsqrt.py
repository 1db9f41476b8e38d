"""``fj.rsqrt`` of a quaternion is ``1 / sqrt(q)`` in the quaternion sense (Dr.Jit).

It was computed per component (``rsqrt(Quaternion4f(1, 2, 3, 4))`` gave ``1i+0.707j+0.577k+0.5``).
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit import llvm, scalar

component = st.floats(-4, 4, allow_nan=False).filter(lambda v: abs(v) > 0.1)


@given(st.tuples(component, component, component, component))
@pytest.mark.parametrize("cls", [scalar.Quaternion4f, llvm.Quaternion4f])
def test_rsqrt_squared_times_q_is_one(cls, xyzw):
    q = cls(*xyzw)
    r = fj.rsqrt(q)
    one = r * r * q
    np.testing.assert_allclose(np.array(one).ravel(), [0, 0, 0, 1], atol=2e-4)
    np.testing.assert_allclose(np.array(r).ravel(), np.array(fj.rcp(fj.sqrt(q))).ravel(), rtol=1e-6, atol=1e-7)


def test_rsqrt_of_the_anchor_value():
    r = fj.rsqrt(scalar.Quaternion4f(1, 2, 3, 4))
    np.testing.assert_allclose(np.array(r), [-0.0419357, -0.0838714, -0.125807, 0.397434], rtol=1e-5)
