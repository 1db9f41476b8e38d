"""Integer // and % are Dr.Jit 1.5's (C's): the quotient rounds toward zero, the remainder has
the dividend's sign (recorded side by side: drjit.llvm.Int32(-7, 7, -7, 7) // Int32(2, -2, -2, 2)
is [-3, -3, 3, 3] and % is [-1, 1, -1, 1]). NumPy and Python round toward -infinity instead."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit import llvm

SIGNED = [(llvm.Int8, np.int8), (llvm.Int32, np.int32), (llvm.Int64, np.int64)]


@pytest.mark.parametrize("T, dt", SIGNED)
def test_signs_follow_drjit(T, dt):
    a, b = T(-7, 7, -7, 7), T(2, -2, -2, 2)
    assert (a // b).numpy().tolist() == [-3, -3, 3, 3]
    assert (a % b).numpy().tolist() == [-1, 1, -1, 1]
    assert (T(-7) // 2).numpy().tolist() == [-3] and (T(-7) % 2).numpy().tolist() == [-1]


@pytest.mark.parametrize("T, dt", SIGNED)
@given(data=st.data())
def test_quotient_times_divisor_plus_remainder_is_the_dividend(T, dt, data):
    info = np.iinfo(dt)
    n = data.draw(st.sampled_from([1, 7, 100]))
    a = np.array(data.draw(st.lists(st.integers(info.min + 1, info.max), min_size=n, max_size=n)), dt)
    b = np.array(data.draw(st.lists(st.integers(info.min + 1, info.max).filter(bool), min_size=n, max_size=n)), dt)
    q, r = (T(a) // T(b)).numpy(), (T(a) % T(b)).numpy()
    toward_zero = [abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(a.tolist(), b.tolist())]
    np.testing.assert_array_equal(q, np.array(toward_zero, dt))
    assert np.all((r == 0) | (np.sign(r) == np.sign(a)))
    np.testing.assert_array_equal((q.astype(object) * b.astype(object) + r.astype(object)).astype(np.int64),
                                  a.astype(np.int64))


def test_frozen_division_matches_plain():
    f = fj.freeze(lambda a, b: (a // b, a % b))
    for n in (1, 7, 1000):
        a = fj.arange(llvm.Int32, n) - n // 2
        q, r = f(a, llvm.Int32(3))
        np.testing.assert_array_equal(q.numpy(), (a // 3).numpy())
        np.testing.assert_array_equal(r.numpy(), np.fmod(a.numpy(), 3))
