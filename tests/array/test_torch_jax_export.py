"""``.torch()`` / ``.jax()`` of 1-D arrays and static arrays (nested arrays, matrices, complex
numbers), as Dr.Jit 1.5's interoperability guide uses them (``Array3f(a).torch()``): the same
values, shape and dtype as ``.numpy()``.  Found by the session-r10 sweep of Dr.Jit's documented
examples (frostjit had them on tensors only)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Array3f, Array2i, Complex2f, Float, Float64, Matrix2f, UInt32
from frostjit.llvm.ad import Float as FloatD

torch = pytest.importorskip("torch")

widths = st.integers(1, 40)


def _values(n, seed):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def _cases(n, seed):
    v = _values(n, seed)
    return [Float(v), Float64(v), UInt32(np.arange(n)), FloatD(v) * 2, Array3f(v, 1, v * 3),
            Array2i(np.arange(n), -np.arange(n)), Complex2f(v, -v), Matrix2f(v, 1, 2, v)]


@given(widths, st.integers(0, 2**32 - 1))
def test_torch_matches_numpy(n, seed):
    for a in _cases(n, seed):
        t = a.torch()
        ref = a.numpy()
        assert isinstance(t, torch.Tensor) and tuple(t.shape) == ref.shape, type(a).__name__
        np.testing.assert_array_equal(t.numpy(), ref)


@given(widths, st.integers(0, 2**32 - 1))
def test_jax_matches_numpy(n, seed):
    pytest.importorskip("jax")
    for a in _cases(n, seed)[:5]:       # (JAX's default config narrows 64-bit types: left out)
        j = a.jax()
        ref = a.numpy()
        assert j.shape == ref.shape
        np.testing.assert_array_equal(np.asarray(j), ref.astype(np.asarray(j).dtype))


def test_guide_example_and_copy_semantics():
    a = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    b = Array3f(a)
    t = b.torch()
    assert t.shape == (3, 2) and t.tolist() == a.tolist()
    t[0, 0] = 100                           # a copy, as .numpy() is (documented difference)
    assert b.x.numpy().tolist() == [1, 2]
    assert Complex2f(1, 2).torch().tolist() == [1 + 2j]
    assert fj.zeros(Float, 0).torch().shape == (0,)


@given(widths, st.integers(0, 2**32 - 1), st.sampled_from([Float, Float64, UInt32, FloatD]))
def test_torch_of_a_1d_array_shares_its_buffer(n, seed, cls):
    # Dr.Jit 1.5 (checked side by side, session r13): Float(...).torch() shares the memory, as a
    # tensor's .torch() does in both; frostjit's 1-D arrays copied.  A write through the PyTorch
    # tensor is seen by the array (and static arrays' .torch() stays a copy, as in Dr.Jit).
    v = _values(n, seed)
    a = cls(np.abs(v) * 10) if cls is UInt32 else cls(v)
    fj.eval(a)
    t = a.torch()
    t[n - 1] = 7
    want = np.asarray(t.numpy(), dtype=np.float64)
    assert np.asarray(a.numpy(), dtype=np.float64)[n - 1] == 7
    np.testing.assert_array_equal(np.asarray(a.numpy(), dtype=np.float64), want)
    b = Array3f(v, 1, v)
    fj.eval(b)
    tb = b.torch()
    tb[0, 0] = 99
    assert b.numpy()[0, 0] == v[0]
