"""Whole-array reductions of large arrays: a threaded compiled block reduction, then NumPy.

From ``REDUCE_ROWS_FROM`` elements, ``fj.sum``/``prod``/``min``/``max`` reduce rows of
``REDUCE_ROW`` elements in a compiled fused-reduction kernel (a load and a ``reduce``) whose rows
the thread pool shares, and combine the partials with NumPy (``count`` counts the mask's bytes).  Differential tests against NumPy (exact for integers, min and max,
NaN-ignoring as Dr.Jit; a tight tolerance for float sums), frozen against plain (the same bits:
replays reduce through the same function), at several thread counts.
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.backend.llvm.reduction import REDUCE_ROW, REDUCE_ROWS_FROM
from frostjit.llvm import Float, Float16, Float64, Int32, UInt32, UInt64

pytestmark = pytest.mark.llvm_only("the LLVM backend's reduction path")

SIZES = [REDUCE_ROWS_FROM - 1, REDUCE_ROWS_FROM, REDUCE_ROWS_FROM + REDUCE_ROW // 2 + 7, 3 * REDUCE_ROWS_FROM + 13]
TYPES = [(Float, np.float32), (Float64, np.float64), (UInt32, np.uint32), (Int32, np.int32), (UInt64, np.uint64)]


def _data(n, dt, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dt).kind == "f":
        return (rng.random(n) * 4 - 1).astype(dt)
    return rng.integers(0, 1 << 20, n).astype(dt) - dt(1 << 19) if np.dtype(dt).kind == "i" \
        else rng.integers(0, 1 << 20, n).astype(dt)


@pytest.fixture(params=[1, 2])
def threads(request):
    old = fj.thread_count()
    fj.set_thread_count(request.param)
    yield request.param
    fj.set_thread_count(old)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("T,dt", TYPES)
def test_large_reductions_match_numpy(T, dt, n, threads):
    a = _data(n, dt)
    x = T(a)
    assert fj.max(x)[0] == a.max() and fj.min(x)[0] == a.min()
    with np.errstate(over="ignore"):
        want = a.sum(dtype=dt)
    if np.dtype(dt).kind == "f":
        np.testing.assert_allclose(fj.sum(x)[0], want, rtol=1e-5 if dt == np.float32 else 1e-12)
    else:
        assert fj.sum(x)[0] == want


@pytest.mark.parametrize("n", SIZES)
def test_large_float_min_max_ignore_nan(n, threads):
    a = _data(n, np.float32)
    a[::3] = np.nan
    x = Float(a)
    assert fj.max(x)[0] == np.nanmax(a) and fj.min(x)[0] == np.nanmin(a)
    a[:] = np.nan
    x = Float(a)
    assert fj.max(x)[0] == -np.inf and fj.min(x)[0] == np.inf


@pytest.mark.parametrize("n", SIZES)
def test_large_count_matches_numpy(n, threads):
    a = _data(n, np.float32)
    assert fj.count(Float(a) > 0.5)[0] == np.count_nonzero(a > 0.5)


@pytest.mark.parametrize("n", [7, REDUCE_ROWS_FROM + 5, 2 * REDUCE_ROWS_FROM + 1])
def test_frozen_large_sums_give_the_plain_bits(n, threads):
    frozen = fj.freeze(lambda x: (fj.sum(x), fj.max(x), fj.sum(x * x)))
    for k in range(3):
        x = Float(_data(n + k, np.float32, seed=k))
        for f, p in zip(frozen(x), (fj.sum(x), fj.max(x), fj.sum(x * x))):
            assert f.numpy().tobytes() == p.numpy().tobytes()


def test_large_reductions_run_as_compiled_fused_reductions():
    """A large evaluated array is reduced by the kernel of a fused reduction over a load of it
    (codegen/reductions.py), so that it gives the bits of a fused reduction of the same values."""
    backend = current_backend()
    x = Float(_data(REDUCE_ROWS_FROM, np.float32))
    backend._load_reduction.pop(("add", x._vt), None)
    fj.sum(x)
    assert ("add", x._vt) in backend._load_reduction


def test_large_float16_sums_keep_numpy():
    """Float16 partials would round each row's sum to half precision: NumPy reduces directly."""
    backend = current_backend()
    a = (np.random.default_rng(0).random(REDUCE_ROWS_FROM) * 1e-3).astype(np.float16)
    x = Float16(a)
    backend._load_reduction.pop(("add", x._vt), None)
    assert fj.sum(x)[0] == a.sum(dtype=np.float16)
    assert fj.sum(x * 1)[0] == a.sum(dtype=np.float16)
    assert ("add", x._vt) not in backend._load_reduction
