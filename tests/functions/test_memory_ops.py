"""gather / scatter / scatter_reduce, reductions, scans and compress against NumPy."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, Float64, UInt32, Int32, Int64, Bool, Array3f

sizes = st.sampled_from([0, 1, 5, 16, 17, 100, 1025])


@given(st.integers(1, 200), sizes, st.integers(0, 2**31 - 1))
def test_gather_matches_numpy_and_is_zero_out_of_bounds(n_src, n_idx, seed):
    rng = np.random.default_rng(seed)
    src = rng.standard_normal(n_src).astype(np.float32)
    idx = rng.integers(0, n_src + 5, n_idx).astype(np.uint32)     # some out of bounds
    active = rng.random(n_idx) < 0.8
    got = fj.gather(Float, Float(src), UInt32(idx), Bool(active)).numpy()
    inb = (idx < n_src) | (n_src == 1)      # a size-1 source broadcasts (Dr.Jit elides the gather)
    ref = np.where(active & inb, src[np.minimum(idx, n_src - 1)], 0)
    np.testing.assert_array_equal(got, ref)


@given(st.integers(1, 100), sizes, st.integers(0, 2**31 - 1), st.sampled_from(["add", "min", "max", "mul"]))
def test_scatter_reduce_matches_numpy_ufunc_at(n_dst, n_idx, seed, op):
    rng = np.random.default_rng(seed)
    dst = rng.integers(-5, 5, n_dst).astype(np.int32)
    val = rng.integers(-3, 4, n_idx).astype(np.int32)
    idx = rng.integers(0, n_dst + 3, n_idx).astype(np.uint32)
    t = Int32(dst)
    fj.scatter_reduce(getattr(fj.ReduceOp, op.capitalize()), t, Int32(val), UInt32(idx))
    ref = dst.copy()
    keep = idx < n_dst
    ufunc = {"add": np.add, "min": np.minimum, "max": np.maximum, "mul": np.multiply}[op]
    ufunc.at(ref, idx[keep], val[keep])
    np.testing.assert_array_equal(t.numpy(), ref)


def test_scatter_add_float_is_atomic_across_threads():
    n = 1 << 20
    t = fj.zeros(Float64, 4)
    fj.scatter_add(t, 1.0, fj.arange(UInt32, n) % 4)
    np.testing.assert_array_equal(t.numpy(), [n / 4] * 4)


def test_scatter_skips_out_of_bounds_and_inactive():
    t = Float([0, 0, 0])
    fj.scatter(t, Float([1, 2, 3, 4]), UInt32([0, 1, 7, 2]), Bool([True, False, True, True]))
    np.testing.assert_array_equal(t.numpy(), [1, 0, 4])


def test_debug_flag_names_the_bad_index():
    with fj.scoped_set_flag(fj.JitFlag.Debug, True):
        with pytest.raises(IndexError, match=r"index 7 .*size 3"):
            fj.gather(Float, Float([1, 2, 3]), UInt32([0, 7]))
        with pytest.raises(IndexError, match=r"index 5"):
            fj.scatter(Float([1, 2, 3]), 1.0, UInt32([5]))
        # inactive lanes are not errors
        fj.gather(Float, Float([1, 2, 3]), UInt32([0, 7]), Bool([True, False]))


def test_gather_and_scatter_vectors():
    src = Float(np.arange(12, dtype=np.float32))
    v = fj.gather(Array3f, src, UInt32([0, 2]))
    np.testing.assert_array_equal(v.numpy(), [[0, 6], [1, 7], [2, 8]])
    t = fj.zeros(Float, 6)
    fj.scatter(t, Array3f([1, 2], [3, 4], [5, 6]), UInt32([1, 0]))
    np.testing.assert_array_equal(t.numpy(), [2, 4, 6, 1, 3, 5])


def test_gather_from_unevaluated_source_evaluates_it():
    src = fj.arange(Float, 10) * 2
    np.testing.assert_array_equal(fj.gather(Float, src, UInt32([9, 0])).numpy(), [18, 0])


@given(sizes, st.integers(0, 2**31 - 1))
def test_reductions_match_numpy(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-1000, 1000, n).astype(np.int32)
    f = rng.standard_normal(n)
    x, y = Int32(a), Float64(f)
    assert fj.sum(x).numpy().tolist() == [int(np.sum(a, dtype=np.int32))]
    assert fj.prod(Int32(a % 3)).numpy().tolist() == [int(np.prod(a % 3, dtype=np.int32))]
    if n:
        assert fj.min(x).numpy()[0] == a.min() and fj.max(x).numpy()[0] == a.max()
        np.testing.assert_allclose(fj.mean(y).numpy(), [f.mean()], rtol=1e-12)
    else:
        assert fj.min(y).numpy()[0] == np.inf and fj.max(y).numpy()[0] == -np.inf
    np.testing.assert_allclose(fj.sum(y).numpy(), [f.sum()], rtol=1e-9, atol=1e-9)
    m = a > 0
    assert fj.count(Bool(m)).numpy().tolist() == [int(m.sum())]
    assert fj.all(Bool(m)).numpy().tolist() == [bool(m.all())]
    assert fj.any(Bool(m)).numpy().tolist() == [bool(m.any())]
    assert fj.none(Bool(m)).numpy().tolist() == [not m.any()]
    np.testing.assert_array_equal(fj.cumsum(x).numpy(), np.cumsum(a, dtype=np.int32))
    ex = np.concatenate([[0], np.cumsum(a, dtype=np.int32)[:-1]]).astype(np.int32) if n else a
    np.testing.assert_array_equal(fj.prefix_sum(x).numpy(), ex)
    np.testing.assert_array_equal(fj.compress(Bool(m)).numpy(), np.flatnonzero(m).astype(np.uint32))


def test_reductions_return_size_one_arrays_and_vector_reductions():
    r = fj.sum(Float([1, 2, 3]))
    assert isinstance(r, Float) and len(r) == 1 and r[0] == 6
    v = Array3f([1, 2], [3, 4], [5, 6])
    s = fj.sum(v)
    assert isinstance(s, Float)
    np.testing.assert_array_equal(s.numpy(), [9, 12])
    np.testing.assert_array_equal(fj.dot(v, v).numpy(), [35, 56])
    np.testing.assert_allclose(fj.norm(v).numpy(), np.sqrt([35, 56]), rtol=1e-6)
    n = fj.normalize(v)
    np.testing.assert_allclose(fj.norm(n).numpy(), [1, 1], rtol=1e-6)
    c = fj.cross(Array3f(1, 0, 0), Array3f(0, 1, 0))
    np.testing.assert_array_equal(c.numpy()[:, 0], [0, 0, 1])
    assert fj.dot(Float([1, 2]), Float([3, 4]))[0] == 11


def test_compress_indices_feed_a_gather():
    x = Float([5, -1, 3, -2, 7])
    idx = fj.compress(x > 0)
    np.testing.assert_array_equal(fj.gather(Float, x, idx).numpy(), [5, 3, 7])


def test_setitem_scatters():
    x = Int64([1, 2, 3])
    x[1] = 20
    x[-1] = 30
    np.testing.assert_array_equal(x.numpy(), [1, 20, 30])


@given(st.integers(0, 300), st.integers(-40, 40), st.sampled_from(["UInt32", "Int32", "Int64"]),
       st.booleans(), st.booleans())
def test_gather_at_lane_offset_matches_numpy(n, c, itype, use_mask, src_is_bool):
    """gather(src, arange + c) is compiled to a contiguous masked load: same results as a gather."""
    from frostjit import llvm
    I = getattr(llvm, itype)
    src_np = (np.arange(n) % 7 > 2) if src_is_bool else np.arange(n, dtype=np.float32) * 1.5
    src = (Bool if src_is_bool else Float)(src_np)
    lanes = fj.arange(I, n)
    idx = lanes + c if c >= 0 or itype != "UInt32" else lanes - (-c)
    mask_np = (np.arange(n) % 3 != 0) if use_mask else np.ones(n, bool)
    got = fj.gather(Bool if src_is_bool else Float, src, idx, Bool(mask_np) if use_mask else True).numpy()
    ref_idx = np.arange(n) + c
    ok = (ref_idx >= 0) & (ref_idx < n) & mask_np
    ref = np.where(ok, src_np[np.clip(ref_idx, 0, max(n - 1, 0))] if n else src_np, 0).astype(got.dtype)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("op", ["Add", "Min", "Max", "Mul"])
@pytest.mark.parametrize("n_dst", [3, 1000, 400_000, 3_000_000])
def test_parallel_scatter_reduce_matches_numpy(op, n_dst):
    """Launches large enough for several threads (targets up to about the launch size are
    reduced into per-thread copies for few threads, those above the expansion threshold
    with atomics) give NumPy's ufunc.at result."""
    n = 1 << 20
    rng = np.random.default_rng(n_dst)
    idx = rng.integers(0, n_dst, n).astype(np.uint32)
    if op == "Mul":
        val = np.where(rng.random(n) < 0.001, -1, 1).astype(np.int64)
        dst = np.ones(n_dst, np.int64)
        T = Int64
    else:
        val = rng.integers(-1000, 1000, n).astype(np.int64)
        dst = rng.integers(-10, 10, n_dst).astype(np.int64)
        T = Int64
    t = T(dst)
    fj.scatter_reduce(getattr(fj.ReduceOp, op), t, T(val), UInt32(idx))
    ref = dst.copy()
    {"Add": np.add, "Min": np.minimum, "Max": np.maximum, "Mul": np.multiply}[op].at(ref, idx, val)
    np.testing.assert_array_equal(t.numpy(), ref)


def test_parallel_mixed_scatter_and_scatter_add_into_one_target():
    n = 1 << 20
    t = fj.zeros(Int64, 8)
    fj.make_opaque(t)
    lanes = fj.arange(UInt32, n)
    fj.scatter_add(t, 1, lanes % 4)          # indices 0..3 get n/4 each
    fj.scatter(t, 7, fj.full(UInt32, 6, n))    # a plain scatter of the same size: the same kernel
    np.testing.assert_array_equal(t.numpy(), [n // 4] * 4 + [0, 0, 7, 0])


def test_mask_reductions_of_static_vectors_combine_components_per_lane():
    # like sum(Array3f) (a Float of the same width), as Dr.Jit's default axis=0 does
    from frostjit.llvm import Array3b
    v = Array3b([True, False, True], [True, True, False], [False, False, False])
    assert fj.all(v).numpy().tolist() == [False, False, False]
    assert fj.any(v).numpy().tolist() == [True, True, True]
    assert fj.none(v).numpy().tolist() == [False, False, False]
    assert fj.count(v).numpy().tolist() == [2, 1, 1]
    assert fj.all(Array3b(True, True, True)).numpy().tolist() == [True]


def test_gather_and_scatter_with_static_vector_source_and_target():
    src = Array3f([1, 2], [3, 4], [5, 6])
    g = fj.gather(Array3f, src, UInt32([1, 0, 7]))
    np.testing.assert_array_equal(g.numpy(), [[2, 1, 0], [4, 3, 0], [6, 5, 0]])
    t = fj.zeros(Array3f, 3)
    fj.scatter(t, Array3f(1, 2, 3), UInt32([2]))
    fj.scatter_add(t, 1.0, UInt32([0, 0]))
    np.testing.assert_array_equal(t.numpy(), [[2, 0, 1], [2, 0, 2], [2, 0, 3]])


def test_prefix_sum_of_a_mask_counts_as_uint32():
    m = Bool([True, False, True, True])
    r = fj.prefix_sum(m)
    assert type(r) is UInt32
    np.testing.assert_array_equal(r.numpy(), [0, 1, 1, 2])
    np.testing.assert_array_equal(fj.cumsum(m).numpy(), [1, 1, 2, 3])


# -- types: no implicit conversion (Dr.Jit) ------------------------------------

def test_gather_with_a_dtype_other_than_the_source_type_raises_type_error():
    src = Float([1.5, -2.5, 3.0])
    with pytest.raises(TypeError, match=r"'dtype' UInt does not match the type of 'source' \(Float\)"):
        fj.gather(UInt32, src, UInt32([0, 1]))
    with pytest.raises(TypeError, match="does not match"):
        fj.gather(Float64, src, UInt32([0, 1]))
    with pytest.raises(TypeError, match="does not match"):
        fj.gather(Array3f, UInt32(np.arange(6, dtype=np.uint32)), UInt32([0, 1]))
    np.testing.assert_array_equal(fj.gather(UInt32, UInt32(src + 3), UInt32([0, 1])).numpy(), [4, 0])


@pytest.mark.parametrize("op", ["scatter", "scatter_add", "min", "max", "mul"])
def test_scatter_of_another_value_type_raises_and_leaves_the_target_alone(op):
    def run(target, value):
        if op in ("scatter", "scatter_add"):
            getattr(fj, op)(target, value, UInt32([0, 1]))
        else:
            fj.scatter_reduce(getattr(fj.ReduceOp, op.capitalize()), target, value, UInt32([0, 1]))
    t = UInt32([5, 5, 5])
    with pytest.raises(TypeError, match="value type Float does not match the target type UInt"):
        run(t, Float([-1.5, 2.5]))      # used to wrap to 4294967295 silently
    with pytest.raises(TypeError, match="does not match"):
        run(t, Int32([-1, 2]))
    f = Float([5, 5, 5])
    with pytest.raises(TypeError, match="does not match"):
        run(f, Float64([1, 2]))
    np.testing.assert_array_equal(t.numpy(), [5, 5, 5])
    np.testing.assert_array_equal(f.numpy(), [5, 5, 5])


def test_scatter_of_a_python_scalar_converts_like_the_constructor():
    t = UInt32([5, 5, 5])
    for bad in (-1.5, -1, 2**40, 1e40):
        with pytest.raises(OverflowError, match="out of range for UInt32"):
            fj.scatter_add(t, bad, UInt32([0, 1]))
        with pytest.raises(OverflowError):
            t[0] = bad
    fj.scatter_add(t, 2.9, UInt32([0, 1]))      # truncates toward zero, as UInt32(2.9)
    np.testing.assert_array_equal(t.numpy(), [7, 7, 5])
    i = Int32([0, 0])
    fj.scatter(i, -1.5, 1)
    np.testing.assert_array_equal(i.numpy(), [0, -1])


def test_gather_and_scatter_accept_sequences_of_indices_and_masks():
    src = Float([10, 20, 30])
    np.testing.assert_array_equal(fj.gather(Float, src, [2, 0], [True, False]).numpy(), [30, 0])
    t = fj.zeros(Float, 3)
    fj.scatter(t, Float([1, 2]), [2, 0])
    np.testing.assert_array_equal(t.numpy(), [2, 0, 1])


def test_python_int_indices_beyond_64_bits_raise_instead_of_wrapping():
    src = Float([10, 20, 30])
    assert fj.gather(Float, src, 2**63 + 1).numpy().tolist() == [0]      # out of bounds: reads 0
    assert fj.gather(Float, src, -1).numpy().tolist() == [0]
    with pytest.raises(IndexError, match="64-bit"):
        fj.gather(Float, src, 2**64 + 1)        # wrapped to 1 before: read 20
    with pytest.raises(IndexError, match="64-bit"):
        fj.scatter(src, 1.0, 2**64)
    np.testing.assert_array_equal(src.numpy(), [10, 20, 30])


def test_gather_from_a_literal_leaves_the_source_a_literal():
    # Dr.Jit reads a literal without materializing the caller's array; frostjit fills a buffer
    # for the gather but keeps the source a literal (a frozen function's key sees its kind).
    from frostjit.llvm import TensorXf
    x = fj.full(Float, 2.5, 6)
    idx = fj.arange(UInt32, 3) * 2
    assert np.array_equal(fj.gather(Float, x, idx).numpy(), np.full(3, 2.5, np.float32))
    assert x._node.op == "literal"
    t = fj.ones(TensorXf, (2, 3))
    assert np.array_equal(fj.sum(t, axis=0).numpy(), np.full(3, 2, np.float32))
    assert t.array._node.op == "literal"
    y = fj.arange(Float, 4) + 1         # an unevaluated source is evaluated once and kept
    fj.gather(Float, y, UInt32(0, 3))
    assert y._node.op == "data"


@pytest.mark.parametrize("queued", [0, 1, 5])
def test_a_target_shared_while_its_scatters_are_queued_is_copied_before_the_next(queued):
    # _prepare_target counts the queued scatters into the target from the newest (stopping once
    # they explain every reference): other targets' scatters interleaved, a sharer made after k
    # queued scatters keeps the values of those k only.
    t = fj.zeros(Float, 4)
    other = fj.zeros(Float, 4)
    for i in range(queued):
        fj.scatter_add(t, 1.0, UInt32(i % 4))
        fj.scatter_add(other, 2.0, UInt32(i % 4))
    shared = Float(t)
    alias = t
    fj.scatter_add(t, 10.0, UInt32(0))
    fj.scatter_add(t, 100.0, UInt32(1))
    before = np.bincount(np.arange(queued) % 4, minlength=4).astype(np.float32)
    assert shared.numpy().tolist() == before.tolist()
    assert t.numpy().tolist() == (before + [10, 100, 0, 0]).tolist() and alias is t
    assert other.numpy().tolist() == (2 * before).tolist()
