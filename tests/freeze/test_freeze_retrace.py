"""Arguments that used to make a frozen function trace on every call (session r12, lane retrace):
NumPy scalars become recording parameters like Python numbers.  Each call is compared with the
plain call (checking mode, tests/freeze/conftest.py, and explicitly here); the recording counts are
what the change is about."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Float, UInt32

from freeze_helpers import ramp, same

WIDTHS = (1, 7, 1000)
NP_FLOATS = (np.float16, np.float32, np.float64)
NP_INTS = (np.int32, np.int64, np.uint32)


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("t", NP_FLOATS + NP_INTS)
def test_numpy_scalar_changing_every_call_records_twice(t, n):
    def step(x, k):
        return x * k + 1, k * 2            # (the second output keeps NumPy's scalar type)
    fz = fj.freeze(step)
    for i in (1, 2, 3, 3, 4, 5, 2):        # changed and unchanged values
        k = t(i)
        got, ref = fz(ramp(n), k), step(ramp(n), k)
        assert same(got[0], ref[0]) and got[1] == ref[1] and type(got[1]) is type(ref[1]), (t, i)
    assert fz.n_recordings == 2


def test_mean_of_a_numpy_array_as_a_scale():
    fz = fj.freeze(lambda x, s: x / s)
    for i in range(5):
        s = (np.arange(4, dtype=np.float32) + i).mean()     # an np.float32 (np.float64 for ints)
        assert same(fz(ramp(9), s), ramp(9) / s), i
    assert fz.n_recordings == 2


def test_numpy_scalar_of_another_dtype_is_another_recording():
    def fn(x, k):
        return x + k, k / 3
    fz = fj.freeze(fn)
    seq = [np.float32(0.5), np.float32(1.5), np.float64(1.5), np.float64(2.5), np.float32(2.5),
           np.float64(0.1), 0.1, np.int32(3), np.float32(0.1)]
    for k in seq:
        got, ref = fz(ramp(5), k), fn(ramp(5), k)
        assert same(got[0], ref[0]), k
        assert type(got[1]) is type(ref[1]) and got[1] == ref[1], k      # np.float32(0.1)/3 != 0.1/3
    assert fz.n_recordings <= 7


@pytest.mark.parametrize("arr", [UInt32, Float], ids=["UInt32", "Float"])
def test_numpy_scalar_promotion_matches_plain(arr):
    def fn(x, k):
        return x * k, x + k
    fz = fj.freeze(fn)
    for k in (np.float32(0.5), np.float32(2.0), np.float32(3.25), np.int32(2), np.int32(7), np.uint64(2**40),
              np.uint64(3), np.int64(-2**35), np.int64(5)):
        got, ref = fz(arr(1, 2, 3), k), fn(arr(1, 2, 3), k)
        assert all(same(a, b) for a, b in zip(got, ref)), k


def test_numpy_scalar_in_control_flow_is_guarded():
    def fn(x, k):
        return x * k if k > 0.5 else x - k
    fz = fj.freeze(fn)
    for k in (0.1, 0.2, 0.9, 0.3, 2.0, 0.4, 0.7):
        k = np.float32(k)
        assert same(fz(ramp(7), k), fn(ramp(7), k)), k


def test_numpy_int_as_an_array_size():
    def fn(x, n):
        return x + fj.sum(fj.arange(Float, n))
    fz = fj.freeze(fn)
    for n in (3, 4, 5, 4, 3, 100):
        assert same(fz(ramp(7), np.int64(n)), fn(ramp(7), np.int64(n))), n


def test_numpy_scalar_attribute_written_back():
    class Opt:
        def __init__(self):
            self.lr = np.float32(0.1)

    def fn(o, x, decay):
        o.lr = o.lr * decay
        return x - o.lr * x
    fz = fj.freeze(fn)
    a, b = Opt(), Opt()
    for d in (0.5, 0.9, 0.99, 0.9):
        d = np.float32(d)
        assert same(fz(a, ramp(6), d), fn(b, ramp(6), d))
        assert type(a.lr) is type(b.lr) is np.float32 and a.lr == b.lr
    assert fz.n_recordings <= 3


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(NP_FLOATS + NP_INTS + (np.int8, np.uint64, float, int)), st.integers(-4, 4),
                          st.sampled_from(WIDTHS)), min_size=2, max_size=8))
def test_numpy_scalars_differential(calls):
    def fn(x, k):
        return fj.select(x > k, x * k, x - k), k + 1
    fz = fj.freeze(fn)
    for t, v, n in calls:
        k = t(v) if t not in (np.uint32, np.uint64) else t(abs(v))
        got, ref = fz(ramp(n, -2.0), k), fn(ramp(n, -2.0), k)
        assert same(got[0], ref[0]) and type(got[1]) is type(ref[1]) and got[1] == ref[1], (t, v, n)


@pytest.mark.parametrize("use", ["k * x", "k - x", "k < x", "x * k", "x >= k"])
def test_numpy_scalar_left_of_an_array_matches_plain(use):
    # A NumPy scalar's operator converts a frostjit array through NumPy (an ndarray result): a
    # parameter in its place must give that same result, not the array's reflected operator.
    fn = eval(f"lambda x, k: {use}")
    fz = fj.freeze(fn)
    for k in (0.5, 1.5, 2.5, 1.5):
        k = np.float32(k)
        got, ref = fz(ramp(4), k), fn(ramp(4), k)
        assert type(got) is type(ref) and same(got, ref), (use, k)


@pytest.mark.parametrize("use", ["Float(k) * x", "fj.full(Float, k, 3) + x[0]", "x * np.sqrt(k)", "x * math.sqrt(k)",
                                 "x * (k ** 2)", "x * abs(-k)", "x + (k > 1.0)", "x * float(k)", "x * k.item()",
                                 "fj.select(x > 2, k, -k)", "x * np.float32(2) * k",
                                 "x * k if type(k) is np.float32 else x", "x * k.dtype.itemsize",
                                 "x * np.asarray(k).astype(np.float64)[()]", "x * np.float64(k)",
                                 "x + k.astype(np.float16)", "(x * k, str(k), f'{k:.3f}')",
                                 "x * np.maximum(k, 1.0)", "x * (k if isinstance(k, np.floating) else 0.0)"])
def test_numpy_scalar_parameter_uses(use):
    fn = eval(f"lambda x, k: {use}", {"fj": fj, "np": np, "Float": Float, "math": __import__("math")})
    fz = fj.freeze(fn)
    for k in (0.5, 1.5, 2.5, 1.5, 0.25):
        k = np.float32(k)
        got, ref = fz(ramp(3), k), fn(ramp(3), k)
        if type(ref) is tuple:
            assert got[1:] == ref[1:] and same(got[0], ref[0]), (use, k)
        else:
            assert type(got) is type(ref) and same(got, ref), (use, k)

