"""The LLVM backend's compiled block reductions and block prefix reductions
(frostjit/backend/llvm/block_kernels.py): every operation and element type against NumPy, block
sizes around the vector and unroll boundaries, NaN handling of float min/max, and bit-identical
results at any thread count."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.backend.llvm import backend as llvm_backend
from frostjit.backend.llvm.block_kernels import supported
from frostjit.llvm import Float, Float16, Float64, Int8, Int32, Int64, UInt8, UInt32, UInt64

pytestmark = pytest.mark.skipif(not hasattr(current_backend(), "row_kernels"),
                                reason="the compiled block reductions are the LLVM backend's")

TYPES = [Float16, Float, Float64, Int8, UInt8, Int32, UInt32, Int64, UInt64]
FLOAT_OPS = {"add": np.add, "mul": np.multiply, "min": np.fmin, "max": np.fmax}
INT_OPS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum,
           "and": np.bitwise_and, "or": np.bitwise_or}
# around one register (16 floats / 8 doubles / 64 bytes on AVX-512, fewer elsewhere), the
# unrolled step (4 registers) and the scalar tail
BLOCKS = [1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 4096]


def _reference(op: str, a: np.ndarray, b: int) -> np.ndarray:
    """``op`` over each run of ``b`` elements (wrapping integers; half precision accumulated in
    float32 and rounded once, as Dr.Jit)."""
    if a.dtype == np.float16:
        return _reference(op, a.astype(np.float32), b).astype(np.float16)
    table = FLOAT_OPS if a.dtype.kind == "f" else INT_OPS
    with np.errstate(all="ignore"):
        return np.array([table[op].reduce(a[k:k + b], dtype=a.dtype) for k in range(0, len(a), b)], a.dtype)


_RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


def _identity(op: str, dt: np.dtype):
    if op in ("add", "or"):
        return 0
    if op == "mul":
        return 1
    if op == "and":
        return np.array(-1).astype(dt)[()]
    if dt.kind == "f":
        return np.inf if op == "min" else -np.inf
    info = np.iinfo(dt)
    return info.max if op == "min" else info.min


def _data(cls, op: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = cls._vt.np_dtype
    if dt.kind == "f":
        a = rng.uniform(-2, 2, n)
        return (1 + a / 64).astype(dt) if op == "mul" else a.astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


@settings(max_examples=60)
@given(cls=st.sampled_from(TYPES), n=st.integers(0, 3000), b=st.sampled_from(BLOCKS), seed=st.integers(0, 2**16),
       data=st.data())
def test_block_reduce_matches_numpy_for_every_operation_and_type(cls, n, b, seed, data):
    a = _data(cls, "add", n, seed)
    ops = FLOAT_OPS if a.dtype.kind == "f" else INT_OPS
    op = data.draw(st.sampled_from(sorted(ops)))
    if op == "mul":
        a = _data(cls, "mul", n, seed)
    got = fj.block_reduce(op, cls(a), b).numpy()
    ref = _reference(op, a, b)
    if a.dtype.kind == "f" and op in ("add", "mul"):
        # another summation order than NumPy's: equal to rounding
        np.testing.assert_allclose(got, ref, rtol=_RTOL[a.dtype], atol=1e-4 if a.dtype != np.float16 else 2e-2)
    else:
        np.testing.assert_array_equal(got, ref)


def _prefix_reference(op: str, a: np.ndarray, b: int, exclusive: bool, reverse: bool) -> np.ndarray:
    """The running ``op`` within each run of ``b`` elements (from the run's end with ``reverse``)."""
    if a.dtype == np.float16:
        return _prefix_reference(op, a.astype(np.float32), b, exclusive, reverse).astype(np.float16)
    table = FLOAT_OPS if a.dtype.kind == "f" else INT_OPS
    out = []
    with np.errstate(all="ignore"):
        for k in range(0, len(a), b):
            c = a[k:k + b][::-1] if reverse else a[k:k + b]
            s = table[op].accumulate(c, dtype=a.dtype)
            if exclusive:
                e = np.empty_like(s)
                e[:1] = _identity(op, a.dtype)
                e[1:] = s[:-1]
                s = e
            out.append(s[::-1] if reverse else s)
    return np.concatenate(out).astype(a.dtype) if out else a.copy()


@settings(max_examples=60)
@given(cls=st.sampled_from(TYPES), n=st.integers(0, 3000), b=st.sampled_from(BLOCKS), seed=st.integers(0, 2**16),
       exclusive=st.booleans(), reverse=st.booleans(), data=st.data())
def test_block_prefix_reduce_matches_numpy_for_every_operation_and_type(cls, n, b, seed, exclusive, reverse, data):
    a = _data(cls, "add", n, seed)
    ops = FLOAT_OPS if a.dtype.kind == "f" else INT_OPS
    op = data.draw(st.sampled_from(sorted(ops)))
    if op == "mul":
        a = _data(cls, "mul", n, seed)
    got = fj.block_prefix_reduce(op, cls(a), b, exclusive=exclusive, reverse=reverse).numpy()
    ref = _prefix_reference(op, a, b, exclusive, reverse)
    if a.dtype.kind == "f" and op in ("add", "mul"):
        np.testing.assert_allclose(got, ref, rtol=_RTOL[a.dtype], atol=1e-3 if a.dtype != np.float16 else 4e-2)
    else:
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("cls", [Float, Float64])
@pytest.mark.parametrize("op", ["min", "max"])
def test_float_min_max_blocks_ignore_nan_and_all_nan_blocks_give_the_identity(cls, op):
    nan = float("nan")
    rows = [[nan] * 40, [1.0, nan, -3.0] + [nan] * 30 + [2.5], [nan] * 17 + [4.0], [float("inf")] * 20]
    a = np.concatenate([np.array(r) for r in rows])
    b = 40
    padded = np.concatenate([np.pad(np.array(r), (0, b - len(r)), constant_values=nan) for r in rows])
    got = fj.block_reduce(op, cls(padded), b).numpy()
    ident = np.inf if op == "min" else -np.inf
    expect = [ident, -3.0 if op == "min" else 2.5, 4.0, np.inf]
    assert got.tolist() == expect, (a, got)


def test_integer_sums_and_products_wrap_as_numpy():
    a = np.full(100, 2**31 - 1, np.int32)
    np.testing.assert_array_equal(fj.block_sum(Int32(a), 50).numpy(), _reference("add", a, 50))
    u = np.full(70, 3, np.uint8)
    np.testing.assert_array_equal(fj.block_reduce("mul", UInt8(u), 35).numpy(), _reference("mul", u, 35))


@pytest.mark.parametrize("cls,op", [(Float, "add"), (Float64, "add"), (Float16, "add"), (Float, "mul"), (Float, "max"),
                                    (Int32, "add"), (UInt64, "or")])
@pytest.mark.parametrize("b", [65, 4096, 262144])
@pytest.mark.parametrize("prefix", [False, True])
def test_block_reduce_is_bit_identical_at_any_thread_count(cls, op, b, prefix):
    n = 3 * llvm_backend.ROW_PARALLEL_MIN + 123         # large enough to share rows; a short last row
    a = _data(cls, op, n, b)
    old = fj.thread_count()
    results = []
    try:
        for threads in (1, 2, 3, 5):
            fj.set_thread_count(threads)
            results.append((fj.block_prefix_reduce(op, cls(a), b, reverse=True) if prefix else
                            fj.block_reduce(op, cls(a), b)).numpy())
    finally:
        fj.set_thread_count(old)
    for r in results[1:]:
        np.testing.assert_array_equal(r.view(np.uint8), results[0].view(np.uint8))


def test_bool_blocks_keep_the_numpy_path_and_half_ones_are_compiled():
    from frostjit.trace.dtypes import Bool
    assert not supported("and", Bool) and supported("add", Float16._vt) and not supported("or", Float16._vt)
    assert not supported("and", Float64._vt) and supported("and", UInt32._vt)


@pytest.mark.parametrize("cls", TYPES)
@pytest.mark.parametrize("n", [1, 15, 16, 17, 65, 1000, 100003])
@pytest.mark.parametrize("exclusive", [False, True])
def test_flat_prefix_sums_match_numpy_around_vector_boundaries(cls, n, exclusive):
    a = _data(cls, "add", n, n)
    got = fj.prefix_sum(cls(a), exclusive=exclusive).numpy()
    ref = _prefix_reference("add", a, n, exclusive, False)
    if a.dtype.kind == "f":
        scale = np.abs(a.astype(np.float64)).sum()
        atol = {np.float16: 1e-3 * max(1.0, float(np.abs(ref.astype(np.float64)).max())), np.float32: 3e-6 * scale,
                np.float64: 1e-14 * scale}[a.dtype.type]
        np.testing.assert_allclose(got, ref, rtol=0, atol=atol)
    else:
        np.testing.assert_array_equal(got, ref)
