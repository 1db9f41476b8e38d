"""reduce, prefix_reduce, ReduceOp.And/Or, ReduceMode, argmin/argmax, sort/argsort, median,
var/std and binary_search: Dr.Jit 1.5's answers (recorded side by side with drjit), NumPy
differentials (hypothesis), tensors, and frozen functions at several widths."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import (Array3f, Bool, Float, Float16, Float64, Int, Int8, Int64, TensorXf, TensorXi, TensorXu,
                           UInt, UInt8, UInt64)
from frostjit.llvm.ad import Float as FloatAD

R = fj.ReduceOp
nan, inf = math.nan, math.inf


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got, want)
    if got.dtype.kind == "f":
        same = (got.view(f"u{got.itemsize}") == want.astype(got.dtype).view(f"u{got.itemsize}")) | \
            (np.isnan(got) & np.isnan(want))
        assert same.all(), (got, want)
    else:
        assert (got == want).all(), (got, want)


# -- Dr.Jit 1.5's answers ----------------------------------------------------------------------------

def test_reduce_gives_drjits_values():
    assert fj.reduce(R.Add, Float(1, 2, 3)).numpy().tolist() == [6]
    assert fj.reduce(R.Max, Array3f([1, 5], [2, 0], [3, 1])).numpy().tolist() == [3, 5]
    assert fj.reduce(R.Add, [1, 2, 3]) == 6
    assert fj.reduce(R.Max, TensorXf([1, 2, 3, 4, 5, 6], shape=(2, 3)), axis=1).numpy().tolist() == [3, 6]
    assert fj.reduce(R.Or, UInt(1, 2, 4), mode="symbolic").numpy().tolist() == [7]
    with pytest.raises(ValueError, match="Identity"):
        fj.reduce(R.Identity, Float(1, 2))
    with pytest.raises(TypeError, match="Float"):
        fj.reduce(R.And, Float(1, 2))


def test_and_or_reductions_are_bitwise_on_integers_and_logical_on_masks():
    assert fj.reduce(R.And, UInt(7, 3, 6)).numpy().tolist() == [2]
    assert fj.reduce(R.Or, Int(1, 2, -8)).numpy().tolist() == [-5]
    assert fj.reduce(R.And, UInt()).numpy().tolist() == [2**32 - 1]
    assert fj.reduce(R.And, Int64()).numpy().tolist() == [-1]
    assert fj.reduce(R.Or, UInt8()).numpy().tolist() == [0]
    assert fj.reduce(R.And, Bool(True, False)).numpy().tolist() == [False]
    assert fj.reduce(R.Or, Bool(True, False)).numpy().tolist() == [True]
    assert fj.reduce(R.Or, TensorXu([1, 2, 4, 8], shape=(2, 2)), axis=1).numpy().tolist() == [3, 12]
    assert fj.reduce(R.And, [7, 3, 6]) == 2


def test_scatter_reduce_and_or_are_bitwise_and_reject_floats():
    t = UInt(15, 3)
    fj.scatter_reduce(R.And, t, UInt(6, 1, 12), UInt(0, 1, 0))
    assert t.numpy().tolist() == [4, 1]
    t = Int(0, 0)
    fj.scatter_reduce(R.Or, t, Int(6, 1, 8), Int(0, 1, 0), mode=fj.ReduceMode.Local)
    assert t.numpy().tolist() == [14, 1]
    with pytest.raises(TypeError, match="integer target"):
        fj.scatter_reduce(R.And, Float(1, 2), Float(1), UInt(0))
    with pytest.raises(TypeError, match="ReduceMode"):
        fj.scatter_add(Float(1, 2), Float(1), UInt(0), mode="fast")


@pytest.mark.parametrize("op", [R.And, R.Or])
@pytest.mark.parametrize("T", [UInt, Int64, UInt8])
def test_wide_scatter_reduce_and_or_agree_with_numpy_under_threads(op, T):
    """Many lanes hitting few targets from several threads: atomics or private copies."""
    rng = np.random.default_rng(7)
    n = 300_000
    dt = T(0).numpy().dtype
    values = rng.integers(0, 256, n).astype(dt) | (rng.integers(0, 2, n).astype(dt) << dt.type(5))
    index = rng.integers(0, 37, n).astype(np.uint32)
    start = np.full(37, 0xFF if op is R.And else 0, dt)
    t = T(start)
    fj.scatter_reduce(op, t, T(values), UInt(index))
    want = start.copy()
    (np.bitwise_and if op is R.And else np.bitwise_or).at(want, index, values)
    _same(t.numpy(), want)


def test_prefix_reduce_gives_drjits_values():
    assert fj.prefix_reduce(R.Add, Float(1, 2, 3)).numpy().tolist() == [0, 1, 3]
    assert fj.prefix_reduce(R.Add, Float(1, 2, 3), exclusive=False).numpy().tolist() == [1, 3, 6]
    assert fj.prefix_reduce(R.Mul, Float(1, 2, 3)).numpy().tolist() == [1, 1, 2]
    assert fj.prefix_reduce(R.Min, Float(3, 1, 2)).numpy().tolist() == [inf, 3, 1]
    assert fj.prefix_reduce(R.Max, Float(3, 1, 2, 0), exclusive=False, reverse=True).numpy().tolist() == [3, 2, 2, 0]
    assert fj.prefix_reduce(R.And, UInt(7, 3, 6)).numpy().tolist() == [2**32 - 1, 7, 3]
    assert fj.prefix_reduce(R.Or, UInt(1, 2, 4)).numpy().tolist() == [0, 1, 3]
    assert fj.prefix_reduce(R.Min, Int(3, 1, 2)).numpy().tolist() == [2**31 - 1, 3, 1]
    assert fj.prefix_reduce(R.Max, Float(1, nan, 3), exclusive=False).numpy().tolist() == [1, 1, 3]
    v = fj.prefix_reduce(R.Mul, Array3f([1, 5], [2, 0], [3, 1]))
    assert [c.numpy().tolist() for c in v] == [[1, 1], [1, 5], [2, 0]]
    assert fj.prefix_reduce(R.Add, [1, 2, 3]) == [0, 1, 3]
    t = fj.prefix_reduce(R.Add, TensorXf([1, 2, 3, 4, 5, 6], shape=(2, 3)), axis=1)
    assert t.shape == (2, 3) and t.numpy().tolist() == [[0, 1, 3], [0, 4, 9]]
    t = fj.prefix_reduce(R.Max, TensorXf([1, 5, 3, 4, 2, 6], shape=(2, 3)), axis=1, exclusive=False)
    assert t.numpy().tolist() == [[1, 5, 5], [4, 4, 6]]


def test_argmin_argmax_follow_drjits_total_order_and_first_index():
    assert fj.argmin(Float(3, 1, 2, 1)).numpy().tolist() == [1]
    assert fj.argmax(Float(3, 1, 3, 1)).numpy().tolist() == [0]
    assert fj.argmax(Float(3, nan, 1)).numpy().tolist() == [1]
    assert fj.argmin(Float(nan, 3, 1)).numpy().tolist() == [2]
    assert fj.argmin(Float(0.0, -0.0)).numpy().tolist() == [1]
    assert fj.argmin(Int(3, -1, 2)).numpy().tolist() == [1]
    t = TensorXf([3, 2, 1, 4, 5, 0], shape=(2, 3))
    assert fj.argmin(t, axis=1).numpy().tolist() == [2, 2]
    r = fj.argmin(t)
    assert type(r) is UInt and r.numpy().tolist() == [5]
    assert fj.argmax(t, axis=0).numpy().tolist() == [1, 1, 0]
    with pytest.raises(ValueError, match="empty"):
        fj.argmin(Float())


def test_sort_and_argsort_give_drjits_values():
    _same(fj.sort(Float(3, 1, 2, -0.0, 0.0)).numpy(), np.array([-0.0, 0.0, 1, 2, 3], np.float32))
    _same(fj.sort(Float(3, nan, 1, -inf)).numpy(), np.array([-inf, 1, 3, nan], np.float32))
    _same(fj.sort(Float(3, nan, 1, -0.0, 0.0), descending=True).numpy(), np.array([nan, 3, 1, 0.0, -0.0], np.float32))
    assert fj.argsort(Float(3, 1, 2, 1)).numpy().tolist() == [1, 3, 2, 0]
    assert fj.argsort(Float(3, 1, 2, 1), descending=True).numpy().tolist() == [0, 2, 1, 3]
    assert fj.argsort(Float(1, 2, 1, 2), descending=True).numpy().tolist() == [1, 3, 0, 2]
    assert fj.argsort(Float(3, nan, 1)).numpy().tolist() == [2, 0, 1]
    for T, v in ((Int, [3, -1, 2]), (UInt64, [3, 1, 2]), (Float64, [3, 1, 2]), (Float16, [3, 1, 2]), (Int8, [3, -1, 2])):
        r = fj.sort(T(v))
        assert type(r) is T and r.numpy().tolist() == sorted(v)
    assert fj.sort(Bool(True, False)).numpy().tolist() == [False, True]
    t = TensorXf([3, 2, 1, 4, 5, 0], shape=(2, 3))
    assert fj.sort(t).numpy().tolist() == [[1, 2, 3], [0, 4, 5]]
    assert fj.sort(t, axis=0).numpy().tolist() == [[3, 2, 0], [4, 5, 1]]
    assert fj.argsort(t).numpy().tolist() == [[2, 1, 0], [2, 0, 1]]
    assert fj.sort(TensorXi([3, -2, 1, 4, -5, 0], shape=(3, 2)), descending=True).numpy().tolist() == \
        [[3, -2], [4, 1], [0, -5]]


def test_median_gives_drjits_values():
    assert fj.median(Float(3, 1, 2, 4)).numpy().tolist() == [2]
    assert fj.median(Float(4, 1, 3, 2, 5, 6)).numpy().tolist() == [3]
    assert fj.median(Float(4, nan, 3)).numpy().tolist() == [4]
    v, i = fj.median(Float(3, 1, 2, 4), return_index=True)
    assert v.numpy().tolist() == [2] and i.numpy().tolist() == [2]
    assert type(fj.median(Int(3, 1, 2, 4))) is Int
    t = TensorXf([3, 2, 1, 4, 5, 0], shape=(2, 3))
    assert fj.median(t).numpy().tolist() == [2, 4]
    assert fj.median(t, axis=None).numpy().tolist() == 2
    v, i = fj.median(t, axis=0, return_index=True)
    assert v.numpy().tolist() == [3, 2, 0] and i.numpy().tolist() == [0, 0, 1]


def test_var_and_std_give_drjits_values():
    np.testing.assert_allclose(fj.var(Float(1, 2, 3, 4)).numpy(), [1.25])
    np.testing.assert_allclose(fj.var(Float(1, 2, 3, 4), ddof=1).numpy(), [5 / 3], rtol=1e-6)
    np.testing.assert_allclose(fj.std(Float(1, 2, 3, 4)).numpy(), [math.sqrt(1.25)], rtol=1e-6)
    v = fj.var(Array3f([1, 5], [2, 0], [3, 1]), axis=1)
    assert type(v) is Array3f and [c.numpy().tolist() for c in v] == [[4], [1], [1]]
    np.testing.assert_allclose(fj.var(TensorXf([3, 2, 1, 4, 5, 0], shape=(2, 3)), axis=1).numpy(), [2 / 3, 14 / 3],
                               rtol=1e-6)
    assert fj.var([1.0, 2.0, 4.0]) == pytest.approx(1.5555555555555554)
    assert fj.var(3.0) == 0.0
    np.testing.assert_allclose(fj.var(Int(1, 2, 3, 4)).numpy(), [1.25])       # Dr.Jit raises for integers


def test_binary_search_gives_drjits_values():
    data = Float(0, 1, 2, 3, 4)
    r = fj.binary_search(0, 4, lambda i: fj.gather(Float, data, i) < Float(-1, 0.5, 2, 10))
    assert r.numpy().tolist() == [0, 1, 2, 4]
    assert fj.binary_search(0, 10, lambda i: i < 3) == 3
    assert fj.binary_search(2, 5, lambda i: i < 100) == 5


def test_sort_is_differentiable_through_its_gather():
    x = FloatAD([3.0, 1.0, 2.0])
    fj.enable_grad(x)
    s = fj.sort(x)
    fj.backward(s * FloatAD([1.0, 10.0, 100.0]))
    assert fj.grad(x).numpy().tolist() == [100, 1, 10]


# -- NumPy differentials --------------------------------------------------------------------------------

def _order_key(a: np.ndarray) -> np.ndarray:
    """The IEEE total order as unsigned keys (what radix sorts order floats by)."""
    u = a.view(f"u{a.itemsize}")
    top = np.array(1 << (8 * a.itemsize - 1), u.dtype)
    return np.where(u >= top, ~u, u | top)


_floats = st.floats(width=32, allow_nan=True) | st.sampled_from([0.0, -0.0, 1.0, -1.0, inf, -inf, nan])


@settings(max_examples=30, deadline=None)
@given(values=st.lists(_floats, min_size=1, max_size=200), descending=st.booleans())
def test_argsort_is_numpys_stable_argsort_of_the_total_order(values, descending):
    a = np.array(values, np.float32)
    key = _order_key(a)
    want = np.argsort(~key if descending else key, kind="stable")
    assert fj.argsort(Float(a), descending=descending).numpy().tolist() == want.tolist()
    _same(fj.sort(Float(a), descending=descending).numpy(), a[want])


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=100))
def test_int64_sort_argmin_argmax_median_match_numpy(values):
    a = np.array(values, np.int64)
    assert fj.sort(Int64(a)).numpy().tolist() == np.sort(a, kind="stable").tolist()
    assert fj.argmin(Int64(a)).numpy().tolist() == [int(np.argmin(a))]
    assert fj.argmax(Int64(a)).numpy().tolist() == [int(np.argmax(a))]
    assert fj.median(Int64(a)).numpy().tolist() == [int(np.sort(a)[(len(a) - 1) // 2])]


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=300),
       op=st.sampled_from(["Add", "Mul", "Min", "Max"]), exclusive=st.booleans(), reverse=st.booleans())
def test_prefix_reduce_matches_numpy_accumulate(values, op, exclusive, reverse):
    a = np.array(values, np.float32)
    if op == "Mul":
        a = np.clip(a, -2, 2)
    src = a[::-1] if reverse else a
    uf = {"Add": np.add, "Mul": np.multiply, "Min": np.fmin, "Max": np.fmax}[op]
    acc = uf.accumulate(src, dtype=np.float32)
    if exclusive:
        ident = {"Add": 0, "Mul": 1, "Min": inf, "Max": -inf}[op]
        acc = np.concatenate([[ident], acc[:-1]]).astype(np.float32)
    want = acc[::-1] if reverse else acc
    got = fj.prefix_reduce(getattr(R, op), Float(a), exclusive=exclusive, reverse=reverse).numpy()
    if op in ("Add", "Mul"):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    else:       # (which zero a -0/+0 tie keeps is unspecified, as for fj.min/fj.max)
        np.testing.assert_array_equal(got, want)


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.integers(0, 2**32 - 1), min_size=0, max_size=300), op=st.sampled_from(["And", "Or"]))
def test_bitwise_reduce_and_prefix_reduce_match_numpy(values, op):
    a = np.array(values, np.uint32)
    uf = np.bitwise_and if op == "And" else np.bitwise_or
    ident = np.uint32(0xFFFFFFFF if op == "And" else 0)
    assert fj.reduce(getattr(R, op), UInt(a)).numpy().tolist() == [int(uf.reduce(a, initial=ident))]
    if len(a):
        want = uf.accumulate(a)
        assert fj.prefix_reduce(getattr(R, op), UInt(a), exclusive=False).numpy().tolist() == want.tolist()


@settings(max_examples=20, deadline=None)
@given(values=st.lists(st.floats(-1e3, 1e3, width=32), min_size=2, max_size=200), ddof=st.integers(0, 1))
def test_var_and_std_match_numpy(values, ddof):
    a = np.array(values, np.float32)
    np.testing.assert_allclose(fj.var(Float(a), ddof=ddof).numpy(), [np.var(a.astype(np.float64), ddof=ddof)],
                               rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(fj.std(Float(a), ddof=ddof).numpy(), [np.std(a.astype(np.float64), ddof=ddof)],
                               rtol=1e-3, atol=1e-3)


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 9), seed=st.integers(0, 2**31 - 1), axis=st.sampled_from([0, 1, -1]))
def test_tensor_sort_argmin_median_match_numpy(rows, cols, seed, axis):
    a = np.random.default_rng(seed).integers(-5, 5, (rows, cols)).astype(np.float32)
    t = TensorXf(a)
    assert fj.sort(t, axis=axis).numpy().tolist() == np.sort(a, axis=axis, kind="stable").tolist()
    assert fj.argsort(t, axis=axis).numpy().tolist() == np.argsort(a, axis=axis, kind="stable").tolist()
    assert fj.argmin(t, axis=axis).numpy().tolist() == np.argmin(a, axis=axis).tolist()
    assert fj.argmax(t, axis=axis).numpy().tolist() == np.argmax(a, axis=axis).tolist()
    n = a.shape[axis]
    assert fj.median(t, axis=axis).numpy().tolist() == np.take(np.sort(a, axis=axis), (n - 1) // 2, axis=axis).tolist()


# -- frozen functions: recorded once, replayed at new widths ------------------------------------------

def _program(x, k):
    s = fj.sort(x)
    p = fj.argsort(x, descending=True)
    m = fj.median(x) + fj.var(x) + fj.std(x)
    pr = fj.prefix_reduce(R.Max, x, exclusive=False) + fj.prefix_reduce(R.Mul, x * 0 + 1)
    bits = fj.reduce(R.Or, k) + fj.prefix_reduce(R.And, k)
    return s, p, m, pr, bits, fj.argmin(x), fj.argmax(x)


@pytest.mark.parametrize("width", [1, 7, 1000, 100_003])
def test_reductions_and_sorting_inside_freeze_equal_plain(width):
    frozen = fj.freeze(_program)
    rng = np.random.default_rng(width)
    for w in (width, 5, width):         # record, replay at another width, replay again
        xv = rng.integers(-50, 50, w).astype(np.float32)
        kv = rng.integers(0, 2**32, w, dtype=np.uint64).astype(np.uint32)
        want = _program(Float(xv), UInt(kv))
        got = frozen(Float(xv), UInt(kv))
        for g, wv in zip(got, want):
            _same(g.numpy(), wv.numpy())
