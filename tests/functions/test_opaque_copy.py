"""``fj.opaque(arg)``: Dr.Jit 1.5's one-argument form (an opaque copy of an array, tensor or
PyTree), used by Dr.Jit's evaluation guide (``i = dr.opaque(Int(0))`` as a loop counter that
does not recompile kernels).  Found by the session-r10 sweep of Dr.Jit's documented examples
(frostjit had only ``opaque(dtype, value, shape)``)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Array3f, Float, Int, TensorXf
from frostjit.llvm.ad import Float as FloatD


@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=40), st.booleans())
def test_copy_is_evaluated_distinct_and_equal(values, evaluated):
    a = Float(values) * 2
    if evaluated:
        fj.eval(a)
    b = fj.opaque(a)
    assert b.state == fj.VarState.Evaluated and a.state == fj.VarState.Evaluated
    assert b.index != a.index
    np.testing.assert_array_equal(b.numpy(), np.float32(values) * 2)
    b[0] = 7                                  # storage of its own: the argument is unchanged
    np.testing.assert_array_equal(a.numpy(), np.float32(values) * 2)


def test_literal_becomes_opaque_and_pytrees_keep_python_values():
    i = fj.opaque(Int(3))
    assert i.state == fj.VarState.Evaluated and i.numpy().tolist() == [3]
    r = fj.opaque({"a": Float(3), "b": 4, "c": (Int(1),), "v": Array3f(1, 2, 3)})
    assert r["b"] == 4 and r["a"].state == fj.VarState.Evaluated
    assert r["c"][0].state == fj.VarState.Evaluated and r["v"].x.state == fj.VarState.Evaluated
    assert fj.opaque(3) == 3
    t = fj.opaque(TensorXf([1, 2, 3, 4], shape=(2, 2)))
    assert t.shape == (2, 2) and t.array.state == fj.VarState.Evaluated


def test_counter_from_the_evaluation_guide():
    y = Float(1, 2, 3)
    for i in range(5):
        y = y + Float(fj.opaque(Int(i)))
        fj.eval(y)
    i = fj.opaque(Int(0))
    for _ in range(5):
        y = y + Float(i)
        i += 1
        fj.eval(y, i)
    assert y.numpy().tolist() == [21, 22, 23] and i.numpy().tolist() == [5]


def test_grad_tracking_carries_over():
    x = FloatD(1, 2)
    fj.enable_grad(x)
    y = fj.opaque(x)
    assert fj.grad_enabled(y)
    fj.backward(y * 3)
    assert x.grad.numpy().tolist() == [3, 3]


def test_constant_form_unchanged_and_type_alone_refused():
    assert fj.opaque(Int, 4, 3).numpy().tolist() == [4, 4, 4]
    with pytest.raises(TypeError, match="type object"):
        fj.opaque(Float)


def test_frozen_matches_plain():
    def f(x):
        return fj.opaque(x * 2) + 1

    ff = fj.freeze(f)
    for n in (3, 5, 9):
        x = Float(np.arange(n, dtype=np.float32))
        np.testing.assert_array_equal(ff(x).numpy(), f(x).numpy())
