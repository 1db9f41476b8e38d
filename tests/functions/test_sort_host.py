"""sort/argsort as one host sort of the order key (``Backend.argsort``): NumPy differentials over
every element type and widths 0..5000 (and past the 16-bit digit passes' threshold), frozen vs
plain at new widths, the kernel count, and Dr.Jit 1.5's tie order (recorded side by side)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Float, Float64, Int, Int8, Int64, UInt, UInt8, UInt64
from frostjit.trace.numpy_semantics import argsort_keys

nan, inf = math.nan, math.inf


def _order_key(a: np.ndarray) -> np.ndarray:
    """Dr.Jit's order as unsigned keys: floats by the IEEE total order, signed ints offset."""
    if a.dtype.kind == "f":
        u = a.view(f"u{a.itemsize}")
        top = np.array(1 << (8 * a.itemsize - 1), u.dtype)
        return np.where(u >= top, ~u, u | top)
    if a.dtype.kind == "i":
        return (a.view(f"u{a.itemsize}") ^ np.array(1 << (8 * a.itemsize - 1), f"u{a.itemsize}"))
    return a


_TYPES = {np.float32: Float, np.float64: Float64, np.int32: Int, np.uint32: UInt, np.int64: Int64,
          np.uint64: UInt64, np.int8: Int8, np.uint8: UInt8}


@st.composite
def _arrays(draw):
    dt = draw(st.sampled_from(sorted(_TYPES, key=lambda t: t.__name__)))
    n = draw(st.integers(0, 5000))
    seed = draw(st.integers(0, 2**32 - 1))
    distinct = draw(st.sampled_from([1, 3, 50, None]))        # None: few duplicates
    rng = np.random.default_rng(seed)
    info = np.finfo(dt) if np.dtype(dt).kind == "f" else np.iinfo(dt)
    if np.dtype(dt).kind == "f":
        pool = np.concatenate([rng.standard_normal(64) * 1e3, [0.0, -0.0, inf, -inf, nan, -nan, info.max, info.min]])
        pool = pool.astype(dt)
    else:
        pool = rng.integers(info.min, info.max, 64, dtype=dt, endpoint=True)
        pool[:2] = [info.min, info.max]
    if distinct is not None:
        pool = pool[:distinct]
    return rng.choice(pool, n).astype(dt)


@settings(max_examples=40, deadline=None)
@given(a=_arrays(), descending=st.booleans())
def test_sort_and_argsort_are_the_stable_sort_of_the_order_key(a, descending):
    T = _TYPES[a.dtype.type]
    key = _order_key(a)
    want = np.argsort(~key if descending else key, kind="stable")
    got = fj.argsort(T(a), descending=descending)
    assert type(got) is UInt and got.numpy().tolist() == want.tolist()
    s = fj.sort(T(a), descending=descending).numpy()
    assert s.view(np.uint8).tolist() == a[want].view(np.uint8).tolist()      # bit for bit (-0, NaN signs)


@pytest.mark.parametrize("dtype, high", [(np.uint32, 2**32), (np.uint32, 1000), (np.uint64, 2**64), (np.uint64, 2**40),
                                         (np.uint64, 7)])
def test_host_argsort_digit_passes_match_numpys_stable_argsort(dtype, high):
    """Past 65536 keys: 16-bit digit passes, as many as the largest key needs (NumPy, the
    reference backend); the LLVM backend's radix kernel skips the digits every key shares."""
    rng = np.random.default_rng(high % 1000)
    k = (rng.integers(0, 2**63, 70_001, dtype=np.uint64) % np.uint64(high - 1 if high == 2**64 else high)).astype(dtype)
    if high == 2**64:
        k[::5] = np.iinfo(np.uint64).max
    got = argsort_keys(k)
    want = np.argsort(k, kind="stable")
    assert got.dtype == np.uint32 and (got == want).all()
    assert (fj.argsort((UInt if dtype == np.uint32 else UInt64)(k)).numpy() == want).all()


def test_large_float_keys_with_ties_sort_as_numpy():
    rng = np.random.default_rng(3)
    a = (rng.integers(-2000, 2000, 100_000) * 0.25).astype(np.float32)
    a[::7] = -0.0
    want = np.argsort(_order_key(a), kind="stable")
    assert (fj.argsort(Float(a)).numpy() == want).all()


def test_argsort_is_one_host_operation():
    """One kernel for the key and one sort (the 1-bit radix sort launched ~4 kernels per key bit)."""
    x = Float(np.random.default_rng(0).standard_normal(1000).astype(np.float32))
    fj.eval(x)
    fj.set_flag(fj.JitFlag.KernelHistory, True)
    try:
        fj.kernel_history()
        fj.eval(fj.argsort(x))
        hist = fj.kernel_history()
    finally:
        fj.set_flag(fj.JitFlag.KernelHistory, False)
    assert [h["type"] for h in hist] == [fj.KernelType.JIT, fj.KernelType.Argsort], hist


def _program(x, k):
    return fj.sort(x), fj.argsort(x, descending=True), fj.argsort(k), fj.sort(k, descending=True)


@pytest.mark.parametrize("widths", [(1, 0, 9), (1000, 5, 70_000), (70_000, 1, 3000)])
def test_frozen_sort_replays_at_new_widths_as_the_plain_call(widths):
    frozen = fj.freeze(_program)
    rng = np.random.default_rng(widths[0])
    for w in widths + (widths[0],):
        xv = rng.integers(-20, 20, w).astype(np.float64)
        xv[::3] = -0.0
        kv = rng.integers(0, 2**64, w, dtype=np.uint64) >> np.uint64(rng.integers(0, 60))
        want = _program(Float64(xv), UInt64(kv))
        got = frozen(Float64(xv), UInt64(kv))
        for g, wv in zip(got, want):
            assert g.numpy().view(np.uint8).tolist() == wv.numpy().view(np.uint8).tolist()
    if min(widths) > 1:     # (widths 0 and 1 are recorded on their own: broadcasting, empty arrays)
        assert frozen.n_recordings == 1


def test_sort_gives_drjits_ties_and_special_values():
    """Dr.Jit 1.5's answers (drjit.llvm, run side by side)."""
    x = [3, nan, 1, -inf, -0.0, 0.0, 1, -nan, inf, 3]
    assert fj.argsort(Float(x)).numpy().tolist() == [7, 3, 4, 5, 2, 6, 0, 9, 8, 1]
    assert fj.argsort(Float(x), descending=True).numpy().tolist() == [1, 8, 0, 9, 2, 6, 5, 4, 3, 7]
    v = [-3, 5, -3, 0, -2147483648, 2147483647, 5]
    assert fj.argsort(Int(v)).numpy().tolist() == [4, 0, 2, 3, 1, 6, 5]
    assert fj.argsort(Int(v), descending=True).numpy().tolist() == [5, 1, 6, 3, 0, 2, 4]
    u = [2**63, 5, 2**64 - 1, 5, 0, 2**32]
    assert fj.argsort(UInt64(u)).numpy().tolist() == [4, 1, 3, 5, 0, 2]
    assert fj.argsort(UInt64(u), descending=True).numpy().tolist() == [2, 0, 5, 1, 3, 4]
    assert fj.argsort(UInt(1, 1, 1, 0, 0), descending=True).numpy().tolist() == [0, 1, 2, 3, 4]
    assert fj.argsort(Float()).numpy().tolist() == [] and fj.sort(Float(7)).numpy().tolist() == [7]
