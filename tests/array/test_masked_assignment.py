"""x[mask] = v and x[mask] op= v on 1-D arrays, static and nested vectors and tensors: Dr.Jit 1.5's
answers (recorded side by side with drjit); x[mask] reads x's value as a new handle."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Array3f, Array33f, Bool, Float, Int, TensorXb, TensorXf
from frostjit.llvm.ad import Float as FloatAD


def _rows(v):
    return [c.numpy().tolist() for c in v]


def test_masked_assignment_of_1d_arrays():
    x = Float(1, 2, 3, 4)
    x[x > 2] = 0
    assert x.numpy().tolist() == [1, 2, 0, 0]
    x = Float(1, 2, 3, 4)
    x[x > 2] += 10
    assert x.numpy().tolist() == [1, 2, 13, 14]
    x = Float(1, 2, 3, 4)
    x[x > 2] = Float(9, 8, 7, 6)
    assert x.numpy().tolist() == [1, 2, 7, 6]
    i = Int(1, 2, 3)
    i[i > 1] -= 1
    assert type(i) is Int and i.numpy().tolist() == [1, 1, 2]
    x = Float(1, 2, 3, 4)
    m = x > 2
    x[m] *= 2
    assert x.numpy().tolist() == [1, 2, 6, 8]


def test_masked_assignment_is_in_place_on_the_handle_only():
    x = Float(1, 2, 3)
    alias = x
    other = Float(x)
    x[x > 1] = 0
    assert alias is x and alias.numpy().tolist() == [1, 0, 0]
    assert other.numpy().tolist() == [1, 2, 3]


def test_masked_assignment_of_static_and_nested_vectors():
    v = Array3f([1, 2], [3, 4], [5, 6])
    v[v.x > 1] = Array3f(0, 0, 0)
    assert _rows(v) == [[1, 0], [3, 0], [5, 0]]
    v = Array3f([1, 2], [3, 4], [5, 6])
    v[Bool(True, False)] += 1
    assert _rows(v) == [[2, 2], [4, 4], [6, 6]]
    v = Array3f([1, 2], [3, 4], [5, 6])
    v[v > 3] = 0
    assert _rows(v) == [[1, 2], [3, 0], [0, 0]]
    n = fj.zeros(Array33f, 2)
    n[Bool(True, False)] = Array33f(1)
    assert [_rows(r) for r in n] == [[[1, 0], [1, 0], [1, 0]]] * 3


def test_masked_assignment_of_tensors():
    t = TensorXf([1, 2, 3, 4], shape=(2, 2))
    t[t > 2] = 0
    assert t.numpy().tolist() == [[1, 2], [0, 0]]
    t = TensorXf([1, 2, 3, 4], shape=(2, 2))
    t[t > 2] += 5
    assert t.numpy().tolist() == [[1, 2], [8, 9]]
    t = TensorXf([1, 2, 3, 4], shape=(2, 2))
    t[TensorXb([True, False])] = 9
    assert t.numpy().tolist() == [[9, 2], [9, 4]]


def test_masked_assignment_is_differentiable():
    a = FloatAD(1, 2, 3)
    fj.enable_grad(a)
    b = FloatAD(a)
    b[a > 1.5] = a * a
    fj.backward(b)
    assert b.numpy().tolist() == [1, 4, 9] and fj.grad(a).numpy().tolist() == [1, 4, 6]


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.floats(-100, 100, width=32), min_size=1, max_size=50), c=st.floats(-10, 10, width=32))
def test_masked_update_matches_numpy(values, c):
    a = np.array(values, np.float32)
    x = Float(a)
    x[x > c] += c
    want = a.copy()
    want[a > np.float32(c)] += np.float32(c)
    assert x.numpy().tolist() == want.tolist()


def test_masked_assignment_inside_freeze_equals_plain():
    def f(x):
        y = Float(x)
        y[y > 3] = y * 2
        y[y < 1] += 100
        return y
    frozen = fj.freeze(f)
    for w in (1, 7, 1000, 100_003, 7):
        xv = (np.arange(w) % 9).astype(np.float32)
        assert frozen(Float(xv)).numpy().tolist() == f(Float(xv)).numpy().tolist()
