"""Array creation against NumPy: ``linspace`` and ``arange`` bit for bit (float steps too), and
every size or count argument is an integer >= 0 (Dr.Jit)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, Float64, UInt32, Int32, Int64, Array3f

FLOATS = [(Float, np.float32), (Float64, np.float64)]
WIDTHS = [0, 1, 2, 7, 800, 1000, 100003]


def test_linspace_ends_exactly_at_stop():
    x = fj.linspace(Float, -2.2, 1.0, 800)
    assert x[799] == 1.0            # was 0.99999976 (start + 799 * step in float32)
    assert fj.linspace(Float64, -2.2, 1.0, 800)[799] == 1.0      # was 1.0000000000000002
    assert fj.linspace(Float, 1.0, -2.2, 800)[799] == np.float32(-2.2)


@pytest.mark.parametrize("T,dt", FLOATS)
@given(start=st.floats(-1e6, 1e6), stop=st.floats(-1e6, 1e6), num=st.sampled_from(WIDTHS),
       endpoint=st.booleans())
def test_linspace_matches_numpy_bit_for_bit(T, dt, start, stop, num, endpoint):
    ref = np.linspace(start, stop, num, endpoint=endpoint).astype(dt)
    got = fj.linspace(T, start, stop, num, endpoint=endpoint).numpy()
    np.testing.assert_array_equal(got, ref)


def test_linspace_endpoint_semantics_and_argument_checks():
    np.testing.assert_array_equal(fj.linspace(Float64, 0, 1, 5, endpoint=False).numpy(), np.linspace(0, 1, 5, False))
    np.testing.assert_array_equal(fj.linspace(Float, 0, 1, 5, False).numpy(), np.linspace(0, 1, 5, False, dtype=np.float32))
    assert fj.linspace(Float, 0, 1, 1).numpy().tolist() == [0]   # NumPy; Dr.Jit gives NaN (0 / 0)
    assert len(fj.linspace(Float, 0, 1, 0)) == 0
    for dtype in (UInt32, Int32, Array3f):
        with pytest.raises(TypeError, match="floating point"):
            fj.linspace(dtype, 0, 10, 4)
    with pytest.raises(TypeError, match="integer"):
        fj.linspace(Float, 0, 1, 2.5)           # was truncated to 2
    with pytest.raises(ValueError, match=">= 0"):
        fj.linspace(Float, 0, 1, -1)


@pytest.mark.parametrize("T,dt", FLOATS)
@given(start=st.sampled_from([0, 0.5, -2.2, 1.1, 3]) | st.floats(-10, 10),
       step=st.sampled_from([1, 0.1, 0.25, 0.3, -0.7]) | st.floats(-2, 2).filter(lambda s: abs(s) > 1e-2),
       count=st.floats(-1, 60))
def test_arange_with_float_steps_matches_numpy_bit_for_bit(T, dt, start, step, count):
    stop = start + step * count
    np.testing.assert_array_equal(fj.arange(T, start, stop, step).numpy(), np.arange(start, stop, step, dtype=dt))


def test_arange_counts_like_numpy_for_float_bounds():
    np.testing.assert_array_equal(fj.arange(Float, 0.5, 2.6).numpy(), [0.5, 1.5, 2.5])   # was [0.5, 1.5]
    np.testing.assert_array_equal(fj.arange(Float, size=3).numpy(), [0, 1, 2])           # Dr.Jit's keyword


def test_arange_of_integer_types_needs_integers_that_fit():
    np.testing.assert_array_equal(fj.arange(UInt32, 5, 0, -2).numpy(), [5, 3, 1])
    np.testing.assert_array_equal(fj.arange(Int32, -3, 1).numpy(), [-3, -2, -1, 0])
    assert len(fj.arange(UInt32, 3, 1)) == 0 and len(fj.arange(Float, -3)) == 0    # NumPy: empty
    with pytest.raises(OverflowError, match="-3 is out of range for UInt32"):
        fj.arange(UInt32, -3, 1)                # was 4294967293, 4294967294, ...
    with pytest.raises(OverflowError, match="out of range for Int32"):
        fj.arange(Int32, 0, 2**31 + 5)
    with pytest.raises(TypeError, match="integer start/stop/step"):
        fj.arange(UInt32, 0, 1, 0.25)           # was a Float32 array
    with pytest.raises(ValueError, match="non-zero"):
        fj.arange(Int32, 0, 5, 0)
    with pytest.raises(ValueError, match="finite"):
        fj.arange(Float, 0, float("inf"))
    assert fj.arange(Int64, 2**33, 2**33 + 2).numpy().tolist() == [2**33, 2**33 + 1]


@pytest.mark.parametrize("fn", [lambda s: fj.zeros(Float, s), lambda s: fj.ones(Int32, s),
                                lambda s: fj.full(Float, 1.0, s), lambda s: fj.empty(Float, s),
                                lambda s: fj.opaque(Float, 2.0, s), lambda s: fj.arange(UInt32, s)])
def test_sizes_must_be_integers(fn):
    for bad in (2.5, 2.0, "3"):
        with pytest.raises(TypeError, match="integer"):
            fn(bad)                             # 2.5 used to give 2 elements
    assert len(fn(np.int64(3))) == 3 and len(fj.zeros(Float, (3,))) == 3


def test_negative_sizes_raise():
    for fn in (fj.zeros, fj.ones, fj.empty):
        with pytest.raises(ValueError, match="the size must be >= 0, got -2"):
            fn(Float, -2)


def test_static_vector_shapes_follow_drjit():
    assert fj.zeros(Array3f, (3, 2)).numpy().shape == (3, 2)
    for bad in ((2,), (2, 2), (3, 2, 1)):
        with pytest.raises(ValueError, match="does not fit Array3f"):
            fj.zeros(Array3f, bad)
    with pytest.raises(ValueError, match="does not fit Float"):
        fj.zeros(Float, (2, 3))


def test_frozen_linspace_and_arange_match_plain_calls_at_every_width():
    def f(x):
        n = fj.width(x)
        return (x + fj.linspace(Float, -2.2, 1.0, n), fj.linspace(Float64, 0, 1, n, endpoint=False),
                fj.arange(Float, 0.5, 3.7, 0.3))
    frozen = fj.freeze(f)
    for w in WIDTHS[1:] + [3, 1]:
        x = fj.zeros(Float, w) + 0.0
        for p, g in zip(f(x), frozen(x)):
            np.testing.assert_array_equal(g.numpy(), p.numpy())
        np.testing.assert_array_equal(frozen(x)[0].numpy(), np.linspace(-2.2, 1.0, w).astype(np.float32))


@pytest.mark.parametrize("make", [fj.zeros, fj.ones, lambda t, n: fj.full(t, 3, n)])
@pytest.mark.parametrize("cls", [fj.llvm.ad.Complex2f, fj.llvm.ad.Quaternion4f])
def test_complex_and_quaternion_creation_gives_every_part_all_lanes(make, cls):
    # (the imaginary parts had one lane, Dr.Jit's have the requested width: after enable_grad a
    # one-lane part's gradient summed the lanes)
    v = make(cls, 3)
    assert [len(c) for c in v] == [3] * len(v)
    real = list(v)[0 if cls.IsComplex else -1]
    assert all(np.all(c.numpy() == 0) for c in v if c is not real)
    fj.enable_grad(v)
    fj.backward(fj.sum(fj.sum(v * 2)))
    assert all(np.all(g.numpy() == 2) for g in v.grad)
