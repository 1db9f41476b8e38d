"""block_reduce / block_sum / block_prefix_reduce / block_prefix_sum against NumPy, frozen == plain,
and their derivatives (Dr.Jit 1.5's results where printed in the comments)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frostjit as fj
from frostjit.llvm import Array3f, Bool, Float, Int32, UInt32, ad

WIDTHS = [1, 7, 1000, 100003]
OPS = {"add": np.add, "mul": np.multiply, "min": np.fmin, "max": np.fmax}
INT_OPS = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or}


def _blocks(a, b):
    return [a[k:k + b] for k in range(0, len(a), b)]


def ref_reduce(op, a, b, table):
    return np.array([table[op].reduce(c, dtype=a.dtype) for c in _blocks(a, b)], a.dtype)


def ref_prefix(op, a, b, table, exclusive, reverse):
    out = []
    for c in _blocks(a, b):
        c = c[::-1] if reverse else c
        s = table[op].accumulate(c, dtype=a.dtype)
        if exclusive:
            ident = {"add": 0, "mul": 1, "min": np.inf, "max": -np.inf}[op] if a.dtype.kind == "f" else \
                {"add": 0, "min": np.iinfo(a.dtype).max, "max": np.iinfo(a.dtype).min, "and": -1, "or": 0}[op]
            s = np.concatenate([np.array([ident]).astype(a.dtype), s[:-1]])
        out.append(s[::-1] if reverse else s)
    return np.concatenate(out).astype(a.dtype)


def _floats(n, seed):
    return np.random.default_rng(seed).uniform(-2, 2, n).astype(np.float32)


@settings(max_examples=30)
@given(n=st.sampled_from(WIDTHS), b=st.sampled_from([1, 2, 3, 16, 64, 4096]), op=st.sampled_from(sorted(OPS)),
       seed=st.integers(0, 2**16))
def test_block_reduce_of_floats_matches_numpy(n, b, op, seed):
    a = _floats(n, seed)
    if op == "mul":
        a = (1 + a / 64).astype(np.float32)
    got = fj.block_reduce(op, Float(a), b).numpy()
    np.testing.assert_allclose(got, ref_reduce(op, a, b, OPS), rtol=2e-5, atol=1e-3)


@settings(max_examples=30)
@given(n=st.sampled_from(WIDTHS), b=st.sampled_from([1, 2, 5, 64, 1000]), op=st.sampled_from(sorted(INT_OPS)),
       seed=st.integers(0, 2**16))
def test_block_reduce_of_integers_is_exact(n, b, op, seed):
    a = np.random.default_rng(seed).integers(-1000, 1000, n).astype(np.int32)
    got = fj.block_reduce(op, Int32(a), b).numpy()
    np.testing.assert_array_equal(got, ref_reduce(op, a, b, INT_OPS))


@settings(max_examples=30)
@given(n=st.sampled_from(WIDTHS), b=st.sampled_from([1, 2, 3, 17, 256]), op=st.sampled_from(["add", "min", "max"]),
       exclusive=st.booleans(), reverse=st.booleans(), seed=st.integers(0, 2**16))
def test_block_prefix_reduce_matches_numpy(n, b, op, exclusive, reverse, seed):
    a = np.random.default_rng(seed).integers(-1000, 1000, n).astype(np.int32)
    got = fj.block_prefix_reduce(op, Int32(a), b, exclusive=exclusive, reverse=reverse).numpy()
    np.testing.assert_array_equal(got, ref_prefix(op, a, b, INT_OPS, exclusive, reverse))
    f = _floats(n, seed)
    got = fj.block_prefix_reduce(op, Float(f), b, exclusive=exclusive, reverse=reverse).numpy()
    np.testing.assert_allclose(got, ref_prefix(op, f, b, OPS, exclusive, reverse), rtol=1e-5, atol=1e-3)


def test_a_shorter_last_block_is_reduced_as_dr_jit_does():
    # Dr.Jit 1.5: block_sum(Float([1, 2, 3, 4, 5]), 2) -> [3, 7, 5]
    assert fj.block_sum(Float([1, 2, 3, 4, 5]), 2).numpy().tolist() == [3, 7, 5]
    assert fj.block_sum(Float([1, 2, 3, 4, 5]), 2, mode="symbolic").numpy().tolist() == [3, 7, 5]


def test_block_prefix_sum_examples_of_dr_jit():
    x = Float([1, 2, 3, 4, 5, 6])
    assert fj.block_prefix_sum(x, 3).numpy().tolist() == [0, 1, 3, 0, 4, 9]
    assert fj.block_prefix_sum(x, 3, exclusive=False).numpy().tolist() == [1, 3, 6, 4, 9, 15]
    assert fj.block_prefix_sum(x, 3, reverse=True).numpy().tolist() == [5, 3, 0, 11, 6, 0]
    m = fj.block_prefix_reduce(fj.ReduceOp.Max, Float([1, 3, 2, 4, 6, 5]), 3).numpy().tolist()
    assert m == [-np.inf, 1, 3, -np.inf, 4, 6]


def test_block_sum_threads_through_vectors_and_pytrees():
    v = fj.block_sum(Array3f([1, 2], [3, 4], [5, 6]), 2)
    assert type(v) is Array3f and [c.numpy().tolist() for c in v] == [[3], [7], [11]]
    out = fj.block_sum({"a": Float([1, 2, 3, 4]), "b": 5.0, "c": [UInt32([1, 2])]}, 2)
    assert out["a"].numpy().tolist() == [3, 7] and out["b"] == 5.0 and out["c"][0].numpy().tolist() == [3]


@pytest.mark.parametrize("b", [0, -1])
def test_a_block_size_below_one_is_an_error_naming_it(b):
    with pytest.raises(ValueError, match="block_size"):
        fj.block_sum(Float([1, 2]), b)


def test_bitwise_reductions_of_floats_are_an_error():
    with pytest.raises(TypeError, match="And"):
        fj.block_reduce("and", Float([1, 2]), 2)


@settings(max_examples=10)
@given(b=st.sampled_from([1, 4, 100]), prefix=st.booleans())
def test_frozen_block_reductions_equal_plain_ones_at_new_widths(b, prefix):
    def fn(x):
        y = x * 2.0 + 1.0
        return fj.block_prefix_sum(y, b) if prefix else fj.block_sum(y, b)

    frozen = fj.freeze(fn)
    for n in [1000, 7, 100003, 1000]:
        a = _floats(n, n)
        np.testing.assert_array_equal(frozen(Float(a)).numpy(), fn(Float(a)).numpy())
    assert frozen.n_recordings == 1         # replayed at every new width
    a = _floats(1, 1)                       # (a width of 1 is another layout: recorded again)
    np.testing.assert_array_equal(frozen(Float(a)).numpy(), fn(Float(a)).numpy())


def test_block_sum_gradient_repeats_the_output_gradient():
    # Dr.Jit 1.5: backward(block_sum(x, 2) * [1, 10, 100]) -> x.grad = [1, 1, 10, 10, 100, 100]
    x = ad.Float([1, 2, 3, 4, 5, 6])
    fj.enable_grad(x)
    fj.backward(fj.block_sum(x, 2) * ad.Float([1, 10, 100]))
    assert x.grad.numpy().tolist() == [1, 1, 10, 10, 100, 100]


@pytest.mark.parametrize("op, grad", [("max", [0, 1, 0, 1, 0, 1]), ("min", [1, 0, 1, 0, 1, 0]),
                                      ("mul", [2, 1, 4, 3, 6, 5])])
def test_block_reduce_gradients_as_dr_jit(op, grad):
    x = ad.Float([1, 2, 3, 4, 5, 6])
    fj.enable_grad(x)
    fj.backward(fj.block_reduce(op, x, 2))
    assert x.grad.numpy().tolist() == grad


def test_block_prefix_sum_gradient_and_forward_mode():
    # Dr.Jit 1.5: backward(block_prefix_sum(x, 3)) -> [2, 1, 0, 2, 1, 0]
    x = ad.Float([1, 2, 3, 4, 5, 6])
    fj.enable_grad(x)
    fj.backward(fj.block_prefix_sum(x, 3))
    assert x.grad.numpy().tolist() == [2, 1, 0, 2, 1, 0]
    x = ad.Float([1, 2, 3, 4, 5])
    fj.enable_grad(x)
    y = fj.block_sum(x * 2.0, 2)
    fj.forward(x)
    assert y.grad.numpy().tolist() == [4, 4, 2]


def test_large_block_sums_shared_by_threads_match_one_thread():
    a = _floats(1 << 21, 3)
    old = fj.thread_count()
    try:
        fj.set_thread_count(1)
        one = fj.block_sum(Float(a), 4096).numpy()
        fj.set_thread_count(4)
        four = fj.block_sum(Float(a), 4096).numpy()
    finally:
        fj.set_thread_count(old)
    np.testing.assert_array_equal(one, four)
    np.testing.assert_allclose(one, a.reshape(-1, 4096).sum(axis=1, dtype=np.float64), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("op", ["add", "mul", "min", "max"])
def test_symbolic_mode_equals_evaluated_mode_on_integers_and_floats(op):
    a = np.array([3, -1, 4, 1, -5, 9, 2], np.int32)
    for cls, arr in ((Int32, a), (Float, a.astype(np.float32))):
        got = fj.block_reduce(op, cls(arr), 3, mode="symbolic").numpy()
        np.testing.assert_array_equal(got, fj.block_reduce(op, cls(arr), 3).numpy())


@pytest.mark.parametrize("op", ["and", "or"])
def test_symbolic_mode_takes_bitwise_reductions_as_drjit(op):
    # Dr.Jit 1.5: block_reduce(And, UInt32(1..7), 3, mode='symbolic') == [0, 4, 7] (Or: [3, 7, 7])
    a = np.array([1, 2, 3, 4, 5, 6, 7], np.int32)
    got = fj.block_reduce(op, Int32(a), 3, mode="symbolic").numpy()
    assert got.tolist() == ([0, 4, 7] if op == "and" else [3, 7, 7])
    np.testing.assert_array_equal(got, fj.block_reduce(op, Int32(a), 3).numpy())
    m = Bool([True, False, True, True, True])
    np.testing.assert_array_equal(fj.block_reduce(op, m, 2, mode="symbolic").numpy(),
                                  fj.block_reduce(op, m, 2).numpy())


def test_bool_arrays_take_and_or_only():
    m = Bool([True, False, True, True])
    assert fj.block_reduce("and", m, 2).numpy().tolist() == [False, True]
    assert fj.block_reduce("or", m, 2).numpy().tolist() == [True, True]
    with pytest.raises(TypeError, match="Bool"):
        fj.block_sum(m, 2)
