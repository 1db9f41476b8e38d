"""Derivatives of a loop whose state array the caller's object carries on: ``fj.while_loop``
writes a loop's results back into the caller's state arrays (as Dr.Jit does), and the
derivatives of a loop run later must still read the variables the loop started from.

Found by Dr.Jit's ``test_while_loop_ad`` test07 (two nested symbolic loops, ``y += ...`` in the
inner body): the second run of the inner loop lost the tangent ``y`` brought in (half the
derivative).  Differential: symbolic vs evaluated loops vs the closed form."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm.ad import Float, UInt32


def _chain(mode, calls, iters, c, inplace, reverse):
    x = fj.opaque(Float, 1.5, 3)
    fj.enable_grad(x)

    def body(i, y):
        if inplace:
            y += x * c          # rebinds the body's argument (and, through write-back, the caller's)
        else:
            y = y + x * c
        return i + 1, y

    y = fj.zeros(Float, 3)
    for _ in range(calls):
        _, y = fj.while_loop((fj.zeros(UInt32, 3), y), lambda i, y: i < iters, body, mode=mode,
                             max_iterations=-1 if reverse else None)
    if reverse:
        fj.backward_from(y)
        return y.numpy(), x.grad.numpy()
    x.grad = 1
    return y.numpy(), fj.forward_to(y).numpy()


@settings(max_examples=12, deadline=None)
@given(calls=st.integers(1, 3), iters=st.integers(1, 4), c=st.sampled_from([1.0, -2.0, 0.5]),
       inplace=st.booleans(), reverse=st.booleans())
def test_derivatives_of_loops_run_one_after_another(calls, iters, c, inplace, reverse):
    expected = np.full(3, calls * iters * c)
    for mode in ("symbolic", "evaluated"):
        value, deriv = _chain(mode, calls, iters, c, inplace, reverse)
        np.testing.assert_allclose(value, 1.5 * expected)
        np.testing.assert_allclose(deriv, expected)


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
def test_forward_derivative_through_nested_loops_with_an_inplace_body(mode):
    @fj.syntax
    def f(x, mode):
        y = fj.zeros(Float, 3)
        j = fj.zeros(UInt32, 3)
        while fj.hint(j < 2, mode=mode):
            i = fj.zeros(UInt32, 3)
            while fj.hint(i < 3, mode=mode):
                y += fj.gather(Float, x, i) * Float(i)
                i += 1
            j += 1
        return y

    x = fj.opaque(Float, 0, 3)
    fj.enable_grad(x)
    y = f(x, mode)
    x.grad = Float(1, 2, 3)
    assert fj.forward_to(y).numpy().tolist() == [16, 16, 16]       # 2 * (0*1 + 1*2 + 2*3)
