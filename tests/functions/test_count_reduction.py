"""``fj.count`` of a JIT mask counts the mask's bytes as they are (no ``UInt32`` copy of it).

Differential tests against NumPy over widths from 0 to beyond the threaded path
(``REDUCE_ROWS_FROM``), plain and frozen, for 1-D masks and the axes of static vectors; and the
kernel history of counting an evaluated mask: one reduction, no kernel (a ``UInt32`` cast of the
mask, 4 bytes per lane written and read back, was launched before it).
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Array3b, Bool, Float, UInt32

LARGE = (1 << 20) + (1 << 13) + 5        # beyond the threaded count (REDUCE_ROWS_FROM), odd
WIDTHS = [0, 1, 7, 1000, 100003, LARGE]


def _mask(n, p, seed):
    return np.random.default_rng(seed).random(n) < p


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_count_of_a_mask_matches_numpy(n, p):
    a = _mask(n, p, n)
    c = fj.count(Bool(a))
    assert type(c) is UInt32 and c.numpy().tolist() == [np.count_nonzero(a)]


@given(n=st.integers(0, 3000), p=st.floats(0, 1), seed=st.integers(0, 2**16))
def test_count_of_a_computed_mask_matches_numpy(n, p, seed):
    a = np.random.default_rng(seed).random(n).astype(np.float32)
    assert fj.count(Float(a) < p)[0] == np.count_nonzero(a < np.float32(p)) if n else \
        fj.count(Float(a) < p).numpy().tolist() == [0]


@pytest.mark.parametrize("n", [1, 7, 100003, LARGE])
def test_frozen_count_equals_plain_at_several_widths(n):
    frozen = fj.freeze(lambda x, t: fj.count(x < t))
    for k, t in enumerate((0.25, 0.5, 0.75)):
        a = np.random.default_rng(k).random(n + k).astype(np.float32)
        f, p = frozen(Float(a), t), fj.count(Float(a) < t)
        assert f.numpy().tolist() == p.numpy().tolist() == [np.count_nonzero(a < np.float32(t))]


@pytest.mark.parametrize("threads", [1, 2])
def test_large_count_is_the_same_at_any_thread_count(threads):
    old = fj.thread_count()
    fj.set_thread_count(threads)
    try:
        a = _mask(3 * LARGE, 0.5, 3)
        assert fj.count(Bool(a))[0] == np.count_nonzero(a)
    finally:
        fj.set_thread_count(old)


def test_count_along_the_axes_of_a_static_mask_vector():
    a = _mask(3 * 1001, 0.4, 7).reshape(3, 1001)
    v = Array3b(*[Bool(r) for r in a])
    assert fj.count(v, axis=1).numpy().ravel().tolist() == a.sum(axis=1).tolist()
    assert fj.count(v).numpy().tolist() == a.sum(axis=0).tolist()
    assert fj.count(v, axis=None).numpy().tolist() == [a.sum()]


def test_counting_an_evaluated_mask_launches_no_kernel():
    m = Bool(_mask(100003, 0.5, 1))
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory):
        fj.kernel_history()
        c = fj.count(m)
        history = fj.kernel_history()
    assert [e["type"] for e in history] == [fj.KernelType.Reduce]
    assert c[0] == np.count_nonzero(m.numpy())
