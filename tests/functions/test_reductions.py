"""Reductions: Dr.Jit 1.5's ``axis`` semantics, NaN handling of ``min``/``max`` and of
``scatter_reduce(Min/Max)``, against NumPy and against values measured with Dr.Jit 1.5
(LLVM backend) side by side; plain, frozen and differentiated."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.errors import AxisError
from frostjit.llvm import Float, Float64, UInt32, Int32, Bool, Array3f, Array3f64, Array3u, Array3i, Array3b
from frostjit.llvm import ad

NAN = float("nan")
WIDTHS = [1, 7, 1000, 100003]
VEC = {"Float32": (Array3f, Float, np.float32), "Float64": (Array3f64, Float64, np.float64),
       "UInt32": (Array3u, UInt32, np.uint32), "Int32": (Array3i, Int32, np.int32)}


def vec(V, a):
    return V(*[a[k] for k in range(a.shape[0])])


# -- axis semantics -------------------------------------------------------------

def test_axis_results_and_types_match_drjit():
    # The values Dr.Jit 1.5 prints for these calls (drjit.llvm types), side by side.
    v = Array3f([1, 2], [3, 4], [5, 6])
    f = Float(1, 2, 3)
    cases = [
        (fj.sum(v), Float, [9, 12]), (fj.sum(v, axis=None), Float, [21]), (fj.sum(v, axis=0), Float, [9, 12]),
        (fj.sum(v, axis=1), Array3f, [[3], [7], [11]]), (fj.sum(v, axis=-1), Array3f, [[3], [7], [11]]),
        (fj.sum(v, axis=-2), Float, [9, 12]), (fj.sum(v, axis=(0, 1)), Float, [21]),
        (fj.sum(v, axis=()), Array3f, [[1, 2], [3, 4], [5, 6]]), (fj.sum(v, axis=np.int64(1)), Array3f, [[3], [7], [11]]),
        (fj.sum(f, axis=None), Float, [6]), (fj.sum(f, axis=-1), Float, [6]), (fj.sum(f, axis=()), Float, [1, 2, 3]),
        (fj.prod(v, axis=None), Float, [720]), (fj.prod(v, axis=1), Array3f, [[2], [12], [30]]),
        (fj.min(v, axis=None), Float, [1]), (fj.max(v, axis=1), Array3f, [[2], [4], [6]]),
        (fj.mean(v, axis=None), Float, [3.5]), (fj.mean(v, axis=1), Array3f, [[1.5], [3.5], [5.5]]),
        (fj.mean(v), Float, [3, 4]),
        (fj.sum(Array3f(Float(1, 2), Float(3), Float(5, 6)), axis=None), Float, [20]),   # size 1 broadcasts
        (fj.sum(Array3f(Float(1, 2), Float(3), Float(5, 6)), axis=1), Array3f, [[3], [3], [11]]),
        (fj.mean(Array3f(Float(1, 2), Float(3), Float(5, 6)), axis=None), Float, [20 / 6]),
        (fj.sum(Array3f(), axis=None), Float, [0]), (fj.min(Array3f(), axis=None), Float, [np.inf]),
    ]
    for got, T, expected in cases:
        assert type(got) is T
        np.testing.assert_allclose(got.numpy(), np.array(expected, np.float32), rtol=1e-6)


def test_mask_reductions_follow_drjit_axes():
    b = Array3b([True, False], [True, True], [True, False])
    assert fj.all(b).numpy().tolist() == [True, False]
    assert fj.all(b, axis=None).numpy().tolist() == [False]
    assert fj.any(b, axis=None).numpy().tolist() == [True]
    assert fj.none(b, axis=None).numpy().tolist() == [False]
    r = fj.all(b, axis=1)
    assert type(r) is Array3b
    np.testing.assert_array_equal(r.numpy()[:, 0], [False, True, False])
    np.testing.assert_array_equal(fj.none(b, axis=1).numpy()[:, 0], [False, False, False])
    c = fj.count(b, axis=1)
    assert type(c) is Array3u
    np.testing.assert_array_equal(c.numpy()[:, 0], [1, 2, 1])
    assert fj.count(b, axis=None).numpy().tolist() == [4]
    assert type(fj.count(b)) is UInt32 and fj.count(b).numpy().tolist() == [3, 1]
    assert fj.all(Array3b(), axis=None).numpy().tolist() == [True]
    assert fj.count([True, False, True]) == 2 and fj.all([]) is True and fj.count([]) == 0


@pytest.mark.parametrize("tname", list(VEC))
@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "mean"])
@given(w=st.sampled_from([0, 1, 7, 33]), seed=st.integers(0, 2**31 - 1),
       axis=st.sampled_from([..., 0, 1, -1, -2, None, (0, 1), (1,), ()]))
def test_vector_reductions_match_numpy_along_every_axis(tname, name, w, seed, axis):
    V, F, dt = VEC[tname]
    rng = np.random.default_rng(seed)
    if np.dtype(dt).kind == "f":
        a = rng.standard_normal((3, w)).astype(dt)
        a[rng.random((3, w)) < 0.2] = np.nan
    else:
        a = rng.integers(0, 5, (3, w)).astype(dt)
    if name == "mean" and np.dtype(dt).kind != "f":
        a = a.astype(np.float64)
        V, F, dt = Array3f64, Float64, np.float64
    got = getattr(fj, name)(vec(V, a), axis=axis)
    axes = {0} if axis is ... else {0, 1} if axis is None else {k % 2 for k in (axis if isinstance(axis, tuple) else (axis,))}
    np_axis = tuple(sorted(axes))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # NumPy: "mean of empty slice"
        if name in ("min", "max"):
            uf = np.fmin if name == "min" else np.fmax
            start = np.inf if name == "min" else -np.inf
            if np.dtype(dt).kind != "f":
                start = np.iinfo(dt).max if name == "min" else np.iinfo(dt).min
            if axes == {0}:     # over components, lane by lane: NaN-ignoring, all-NaN lanes stay NaN
                ref = uf.reduce(a, axis=0) if w else np.zeros(0, dt)
            elif not axes:
                ref = a
            else:
                ref = uf.reduce(a, axis=np_axis, initial=start)
        else:
            f = {"sum": np.sum, "prod": np.prod, "mean": np.mean}[name]
            ref = a if not axes else f(a, axis=np_axis, dtype=dt)
    ref = np.asarray(ref, dtype=dt)
    if axes == {1}:
        assert type(got) is V
        ref = ref.reshape(3, 1)
    elif axes:
        assert type(got) is F
        ref = ref.reshape(-1)
    rtol = 1e-5 if dt == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(got.numpy(), dtype=dt), ref, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "mean", "all", "any", "none", "count"])
def test_invalid_axes_raise_naming_the_axis_and_the_array(name):
    fn = getattr(fj, name)
    flat = Bool(True, False) if name in ("all", "any", "none", "count") else Float(1, 2)
    vector = Array3b(True, False, True) if name in ("all", "any", "none", "count") else Array3f(1, 2, 3)
    for x, bad, ndim in [(flat, 1, 1), (flat, -2, 1), (flat, (0, 1), 1), (vector, 2, 2), (vector, -3, 2)]:
        with pytest.raises(AxisError, match=rf"frostjit.{name}\(\): axis -?\d is out of bounds for .*"
                                            rf"{type(x).__name__}.* {ndim} ax"):
            fn(x, axis=bad)
        with pytest.raises(ValueError):     # AxisError is a ValueError (and an IndexError), as in NumPy
            fn(x, axis=bad)
    for bad in ("x", 1.0, [0, 1]):
        with pytest.raises(TypeError, match="'axis' must be an int"):
            fn(flat, axis=bad)
    with pytest.raises(AxisError, match="Python list"):
        fn([flat, flat], axis=1)


def test_mode_is_checked_and_keepdims_only_where_it_changes_nothing():
    f = Float(1, 2, 3)
    v = Array3f([1, 2], [3, 4], [5, 6])
    for mode in (None, "evaluated", "symbolic"):
        assert fj.sum(f, mode=mode)[0] == 6
    with pytest.raises(ValueError, match="'mode' must be"):
        fj.sum(f, mode="bogus")
    assert fj.sum(f, keepdims=True)[0] == 6 and fj.sum(f, axis=None, keepdims=True)[0] == 6
    np.testing.assert_array_equal(fj.sum(v, axis=1, keepdims=True).numpy()[:, 0], [3, 7, 11])
    for axis in (0, None, (0, 1)):
        with pytest.raises(ValueError, match="keepdims=True is only supported"):
            fj.sum(v, axis=axis, keepdims=True)


def test_python_inputs_follow_drjit():
    assert fj.sum([1, 2, 3]) == 6 and fj.prod((1.0, 2.0)) == 2.0 and fj.min([3, 1, 2]) == 1
    assert fj.mean([1, 2, 3]) == 2.0 and fj.mean((1.0, 2.0)) == 1.5     # mean(list) was sum(list) / 1
    assert fj.min([]) == math.inf and fj.max([]) == -math.inf and fj.sum([]) == 0
    assert fj.sum(5, axis=1) == 5 and fj.mean(5) == 5.0
    assert fj.min([NAN, 1.0]) == 1.0 and fj.min([1.0, NAN]) == 1.0
    np.testing.assert_array_equal(fj.min([Float(1, 5), Float(3, 2)]).numpy(), [1, 2])
    assert fj.sum([Float(1, 5), Float(3, 2)], axis=None).numpy().tolist() == [11]
    np.testing.assert_allclose(fj.mean([Float(1, 5), Float(3, 2)], axis=None).numpy(), [11 / 4])
    with pytest.raises(TypeError, match="not defined for Bool arrays"):
        fj.sum(Bool(True, False))
    with pytest.raises(TypeError, match="got bool"):
        fj.sum(True)
    with pytest.raises(TypeError, match="Bool array or bool"):
        fj.all([1, 2, 3])       # Dr.Jit: bitwise AND of the ints (0); frostjit asks for masks
    assert fj.dot([1, 2], [3, 4]) == 11 and fj.norm([3.0, 4.0]) == 5.0


def test_norm_and_squared_norm_take_axes():
    v = Array3f([3, 0], [4, 0], [0, 0])
    np.testing.assert_array_equal(fj.norm(v).numpy(), [5, 0])
    np.testing.assert_allclose(fj.norm(v, axis=None).numpy(), [5])
    np.testing.assert_allclose(fj.norm(v, axis=1).numpy()[:, 0], [3, 4, 0])
    np.testing.assert_array_equal(fj.squared_norm(v, axis=0).numpy(), [25, 0])
    assert fj.squared_norm(Float(3, 4), axis=None).numpy().tolist() == [25]


def test_prefix_sum_takes_drjit_axis_and_reverse():
    x = Float(1, 2, 3)
    np.testing.assert_array_equal(fj.prefix_sum(x, 0).numpy(), [0, 1, 3])    # positional axis, not 'exclusive'
    np.testing.assert_array_equal(fj.prefix_sum(x, reverse=True).numpy(), [5, 3, 0])
    np.testing.assert_array_equal(fj.cumsum(x, reverse=True).numpy(), [6, 5, 3])
    v = Array3f([1, 2], [3, 4], [5, 6])
    np.testing.assert_array_equal(fj.prefix_sum(v).numpy(), [[0, 0], [1, 2], [4, 6]])
    np.testing.assert_array_equal(fj.cumsum(v).numpy(), [[1, 2], [4, 6], [9, 12]])
    np.testing.assert_array_equal(fj.cumsum(v, axis=1).numpy(), [[1, 3], [3, 7], [5, 11]])
    assert fj.prefix_sum([1, 2, 3]) == [0, 1, 3]
    with pytest.raises(AxisError):
        fj.prefix_sum(x, 1)


# -- NaN: min/max reductions and scatter_reduce ignore it (Dr.Jit) ---------------

def test_min_max_ignore_nan_as_measured_with_drjit():
    assert fj.min(Float(NAN, 1, -2, NAN))[0] == -2 and fj.max(Float(NAN, 1, -2, NAN))[0] == 1
    assert fj.min(Float(1.0, NAN))[0] == 1 and fj.max(Float64(NAN, NAN, NAN))[0] == -np.inf
    assert fj.min(Float([NAN] * 5000 + [1.0]))[0] == 1
    assert fj.min(Float(NAN, NAN))[0] == np.inf
    assert fj.sum(Float(NAN, 1))[0] != fj.sum(Float(NAN, 1))[0]          # sums still propagate NaN
    np.testing.assert_array_equal(fj.min(Array3f([NAN, 1, NAN], [NAN, NAN, 2], [NAN, 3, NAN])).numpy(),
                                  [NAN, 1, 2])
    np.testing.assert_array_equal(fj.max(Array3f([NAN, 1, NAN], [NAN, NAN, 2], [NAN, 3, NAN]), axis=1).numpy()[:, 0],
                                  [1, 2, 3])
    # the element-wise operations propagate NaN (Dr.Jit too), also on Python scalars
    np.testing.assert_array_equal(fj.minimum(Float(NAN, 1, NAN), Float(1, NAN, NAN)).numpy(), [NAN] * 3)
    assert math.isnan(fj.minimum(1.0, NAN)) and math.isnan(fj.maximum(NAN, 1.0))
    assert fj.minimum(1, 2.5) == 1.0 and isinstance(fj.minimum(1, 2.5), float)
    with pytest.raises(TypeError, match="expects arrays or numbers"):
        fj.minimum([1, 5], [3, 2])      # was Python's min of two lists: [1, 5]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["min", "max"])
@given(n=st.sampled_from(WIDTHS + [0, 2, 17]), seed=st.integers(0, 2**31 - 1),
       nan_fraction=st.sampled_from([0.0, 0.3, 0.9, 1.0]))
def test_min_max_reductions_ignore_nan_against_numpy(dt, name, n, seed, nan_fraction):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(dt)
    a[rng.random(n) < nan_fraction] = np.nan
    T = Float if dt == np.float32 else Float64
    uf, start = (np.fmin, np.inf) if name == "min" else (np.fmax, -np.inf)
    got = getattr(fj, name)(T(a))
    np.testing.assert_array_equal(got.numpy(), [uf.reduce(a, initial=start)])


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["Min", "Max"])
@given(n_dst=st.sampled_from([1, 4, 100, 2000]), n=st.sampled_from([1, 7, 1000, 100003]),
       seed=st.integers(0, 2**31 - 1), nan_fraction=st.sampled_from([0.0, 0.5, 1.0]))
def test_scatter_reduce_min_max_ignore_nan_against_numpy(dt, op, n_dst, n, seed, nan_fraction):
    # Sizes cover a launch on one thread, atomic updates from several, and per-thread private copies.
    rng = np.random.default_rng(seed)
    T = Float if dt == np.float32 else Float64
    vals = rng.standard_normal(n).astype(dt)
    vals[rng.random(n) < nan_fraction] = np.nan
    dst = rng.standard_normal(n_dst).astype(dt)
    dst[rng.random(n_dst) < 0.3] = np.nan
    idx = rng.integers(0, n_dst, n).astype(np.uint32)
    t = T(dst)
    fj.scatter_reduce(getattr(fj.ReduceOp, op), t, T(vals), UInt32(idx))
    ref = dst.copy()
    (np.fmin if op == "Min" else np.fmax).at(ref, idx, vals)
    np.testing.assert_array_equal(t.numpy(), ref)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("n", [7, 100003])
def test_scatter_add_into_a_small_target_of_every_float_width(dt, n):
    # A large launch adding into a small target privatizes per-thread copies (threads.py); a
    # Float16 target crashed there (ctypes has no half type: a Float16 network's weight
    # gradients). Sums of zeros and ones stay exact in float16 below 2048, in any order.
    rng = np.random.default_rng(n)
    vals = rng.integers(0, 2, n).astype(dt)
    idx = rng.integers(0, 100, n).astype(np.uint32)
    t = fj.zeros(ad.Float16 if dt == np.float16 else Float if dt == np.float32 else Float64, 100)
    fj.scatter_add(t, type(t)(vals), UInt32(idx))
    ref = np.zeros(100, dt)
    np.add.at(ref, idx, vals)
    np.testing.assert_array_equal(t.numpy(), ref)


def test_scatter_reduce_nan_cases_measured_with_drjit():
    for op, expected in (("Min", [[1, 5], [1, 5], [-1], [3]]), ("Max", [[1, 5], [1, 5], [3], [10]])):
        got = []
        for target, value, index in (([1.0, 5.0], [NAN, NAN], [0, 1]), ([NAN, NAN], [1.0, 5.0], [0, 1]),
                                     ([0.0], [NAN, 3.0, NAN, -1.0], [0, 0, 0, 0]), ([10.0], [3.0, NAN], [0, 0])):
            t = Float(target)
            fj.scatter_reduce(getattr(fj.ReduceOp, op), t, Float(value), UInt32(index))
            got.append(t.numpy().tolist())
        assert got == expected


# -- frozen and differentiated ---------------------------------------------------

@pytest.mark.parametrize("w", WIDTHS)
def test_frozen_reductions_match_plain_calls(w):
    def f(x, v):
        return (fj.min(x), fj.max(x), fj.sum(v, axis=None), fj.max(v, axis=1), fj.min(v),
                fj.mean(v, axis=None), fj.count(x > 0, axis=None), fj.all(v > -10, axis=None))
    frozen = fj.freeze(f)
    for seed in range(3):
        rng = np.random.default_rng(seed + w)
        a = rng.standard_normal(w).astype(np.float32)
        a[rng.random(w) < 0.5] = np.nan
        if seed == 2:
            a[:] = np.nan
        m = rng.standard_normal((3, w)).astype(np.float32)
        m[rng.random((3, w)) < 0.3] = np.nan
        plain = f(Float(a), vec(Array3f, m))
        got = frozen(Float(a), vec(Array3f, m))
        for p, g in zip(plain, got):
            np.testing.assert_array_equal(g.numpy(), p.numpy())
        assert np.array_equal(plain[0].numpy(), [np.fmin.reduce(a, initial=np.inf)], equal_nan=True)


def test_gradients_of_nan_ignoring_min_max_and_of_axis_reductions():
    x = ad.Float(3.0, NAN, 1.0, 5.0)
    fj.enable_grad(x)
    fj.backward(fj.min(x) * 2 + fj.max(x))
    np.testing.assert_array_equal(fj.grad(x).numpy(), [0, 0, 2, 1])
    v = ad.Array3f([1, 2], [3, 4], [5, 6])
    fj.enable_grad(v)
    fj.backward(fj.sum(fj.sum(v * v, axis=1), axis=None) + fj.mean(v, axis=None))
    np.testing.assert_allclose(fj.grad(v).numpy(), 2 * v.numpy() + 1 / 6, rtol=1e-6)
    w = ad.Array3f([1, 7], [3, 4], [NAN, 6])
    fj.enable_grad(w)
    fj.backward(fj.max(w, axis=None) + fj.sum(fj.min(w)))
    # max over everything is 7 (w.x lane 1); min over components per lane: 1 (x), 4 (y)
    np.testing.assert_array_equal(fj.grad(w).numpy(), [[1, 1], [0, 1], [0, 0]])


def test_one_frozen_function_replays_nan_ignoring_reductions_at_every_width():
    def f(x):
        return fj.min(x), fj.max(x, axis=None), fj.sum(x, axis=0)
    frozen = fj.freeze(f)
    for w in WIDTHS + [7, 1, 100003]:
        rng = np.random.default_rng(w)
        a = rng.standard_normal(w).astype(np.float32)
        a[rng.random(w) < 0.6] = np.nan
        for p, g in zip(f(Float(a)), frozen(Float(a))):
            np.testing.assert_array_equal(g.numpy(), p.numpy())
        assert frozen(Float(a))[0].numpy().tolist() == [np.fmin.reduce(a, initial=np.inf)]
        allnan = Float(np.full(w, np.nan, np.float32))
        assert frozen(allnan)[0].numpy().tolist() == [np.inf]


def test_sums_of_opposite_infinities_are_nan_without_a_numpy_warning():
    """NumPy warned "invalid value encountered in reduce" from the backend's reductions; a
    kernel computing inf + -inf gives NaN silently (IEEE), and so must the reductions."""
    x = Float(np.inf, -np.inf, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(fj.sum(x)[0])
        assert np.isnan(fj.cumsum(x)[2]) and np.isnan(fj.prefix_sum(x)[2])
