"""frostjit.scalar's tensors (TensorXf, ..., over the scalar ArrayXf): the same code as
frostjit.llvm's tensors, checked against them and against NumPy on hypothesis shapes.
(Dr.Jit 1.5's recorded answers for single cases: scalar_cases.py / test_scalar_anchor.py.)"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as s

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tensor"))
from tensor_strategies import basic_keys, broadcastable, shapes, values  # noqa: E402

SCALAR_OF = {np.dtype(np.float32): s.TensorXf, np.dtype(np.float64): s.TensorXf64, np.dtype(np.int32): s.TensorXi,
             np.dtype(np.uint32): s.TensorXu, np.dtype(np.int64): s.TensorXi64, np.dtype(np.uint64): s.TensorXu64,
             np.dtype(np.bool_): s.TensorXb, np.dtype(np.int8): s.TensorXi8, np.dtype(np.uint8): s.TensorXu8,
             np.dtype(np.float16): s.TensorXf16}
LLVM_OF = {np.dtype(k): getattr(L, v.__name__) for k, v in SCALAR_OF.items()}
_DTYPES = st.sampled_from([np.float32, np.float64, np.int32, np.uint32, np.int64])


def both(a: np.ndarray):
    """The scalar and the llvm tensor of ``a``."""
    return SCALAR_OF[a.dtype](a), LLVM_OF[a.dtype](a)


def same(got, want, numpy=None) -> None:
    """``got`` (a scalar tensor) equals ``want`` (the llvm one) in type name, shape, values and
    printing; and ``numpy`` if given."""
    assert type(got).__module__ == "frostjit.scalar" and type(got).__name__ == type(want).__name__
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert repr(got) == repr(want)
    if numpy is not None:
        np.testing.assert_array_equal(got.numpy(), numpy)


@pytest.mark.parametrize("dtype", list(SCALAR_OF))
def test_every_tensor_type_holds_a_scalar_dynamic_array(dtype):
    a = values((2, 3), dtype)
    t = SCALAR_OF[dtype](a)
    assert type(t.array).__name__ == "ArrayX" + type(t).__name__[len("TensorX"):]     # TensorXf: ArrayXf
    assert type(t.array).__module__ == "frostjit.scalar" and not t.IsJIT and not fj.is_jit_v(t)
    assert t.numpy().dtype == dtype and t.shape == (2, 3) and fj.width(t) == 6
    np.testing.assert_array_equal(t.numpy(), a)
    assert fj.backend_v(t) is fj.JitBackend.Invalid and fj.is_tensor_v(t)


def test_reads_return_tensors_and_python_numbers():
    t = s.TensorXf([[1, 2, 3], [4, 5, 6]])
    assert type(t[0, 1]) is s.TensorXf and t[0, 1].shape == () and t[0, 1].item() == 2.0
    assert type(t.array[0]) is float and type(t.item() if t.ndim == 0 else t[1, 2].item()) is float
    assert type(fj.sum(t)) is s.TensorXf and float(fj.sum(t)) == 21.0
    assert isinstance(s.TensorXf(s.ArrayXf([1, 2, 3, 4]), (2, 2)).array, s.ArrayXf)


@given(shapes(), _DTYPES)
def test_construction_and_printing_match_llvm(shape, dtype):
    a = values(shape, dtype)
    ts, tl = both(a)
    same(ts, tl, a)


@given(st.data())
def test_basic_indexing_matches_llvm_and_numpy(data):
    shape = data.draw(shapes(min_dims=1))
    key = data.draw(basic_keys(shape))
    a = values(shape)
    ts, tl = both(a)
    try:
        want = a[key]
    except IndexError:          # (an int into an empty axis: every side raises)
        for t in (ts, tl):
            with pytest.raises(IndexError):
                t[key]
        return
    same(ts[key], tl[key], want)


@given(st.data())
def test_index_arrays_match_numpy(data):
    shape = data.draw(shapes(min_dims=1, min_side=1))
    idx = data.draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=0, max_size=6))
    a = values(shape)
    ts, tl = both(a)
    got = ts[s.ArrayXi(idx)] if idx else ts[np.array(idx, dtype=np.int32)]
    same(got, tl[np.array(idx, dtype=np.int32)], a[np.array(idx, dtype=np.int64)])


@given(st.data())
def test_slice_assignment_matches_llvm_and_numpy(data):
    shape = data.draw(shapes(min_dims=1))
    key = data.draw(basic_keys(shape))
    a = values(shape)
    ts, tl = both(a)
    try:
        a[key] = 7.0
    except IndexError:          # (an int into an empty axis: every side raises)
        for t in (ts, tl):
            with pytest.raises(IndexError):
                t[key] = 7.0
        return
    ts[key] = 7.0
    tl[key] = 7.0
    same(ts, tl, a)


@given(st.data())
def test_broadcasting_arithmetic_matches_llvm_and_numpy(data):
    shape = data.draw(shapes(max_dims=3))
    other = broadcastable(shape, data.draw)
    op = data.draw(st.sampled_from(["add", "sub", "mul", "truediv", "lt", "maximum"]))
    a, b = values(shape), values(other, seed=1) + 10.0
    (xs, xl), (ys, yl) = both(a), both(b)
    f = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
         "truediv": lambda x, y: x / y, "lt": lambda x, y: x < y, "maximum": fj.maximum}[op]
    want = {"maximum": np.maximum}.get(op, f)(a, b)
    same(f(xs, ys), f(xl, yl), want)


@given(shapes(min_dims=1, max_dims=3), st.sampled_from(["sum", "max", "min", "prod"]), st.data())
def test_reductions_over_axes_match_llvm_and_numpy(shape, name, data):
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    a = values(shape, np.int32)
    ts, tl = both(a)
    if name in ("max", "min") and (0 in shape):
        return          # (NumPy raises on an empty max; frostjit gives the identity, as Dr.Jit)
    kw = {} if axis is None else {"axis": axis}
    got, want = getattr(fj, name)(ts, **kw), getattr(fj, name)(tl, **kw)
    ref = getattr(np, name)(a, axis=axis).astype(np.int32)
    same(got, want, ref)


@given(shapes(min_dims=1, max_dims=3), st.data())
def test_prefix_sums_and_shape_functions_match_llvm(shape, data):
    a = values(shape)
    ts, tl = both(a)
    axis = data.draw(st.integers(0, len(shape) - 1))
    same(fj.prefix_sum(ts, axis=axis), fj.prefix_sum(tl, axis=axis))
    same(fj.transpose(ts), fj.transpose(tl), a.T)
    same(fj.reshape(ts, (-1,)), fj.reshape(tl, (-1,)), a.reshape(-1))
    same(fj.moveaxis(ts, 0, -1), fj.moveaxis(tl, 0, -1), np.moveaxis(a, 0, -1))
    same(fj.expand_dims(ts, 0), fj.expand_dims(tl, 0), a[None])
    same(fj.concat([ts, ts], axis=axis), fj.concat([tl, tl], axis=axis), np.concatenate([a, a], axis=axis))
    same(fj.stack([ts, ts]), fj.stack([tl, tl]), np.stack([a, a]))


@given(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4))
def test_matmul_matches_llvm_and_numpy(n, k, m):
    # (Dr.Jit 1.5's scalar matmul crashes; frostjit.llvm's is the reference)
    a, b = values((n, k)), values((k, m), seed=2)
    (xs, xl), (ys, yl) = both(a), both(b)
    same(xs @ ys, xl @ yl, a @ b)
    same(xs.T, xl.T, a.T)


def test_creation_functions_match_llvm():
    for f in (lambda m: fj.zeros(m.TensorXf, (2, 3)), lambda m: fj.ones(m.TensorXi, 4),
              lambda m: fj.full(m.TensorXu, 7, (2, 2)), lambda m: fj.arange(m.TensorXf, 5),
              lambda m: fj.linspace(m.TensorXf64, 0, 1, 7), lambda m: fj.sort(m.TensorXf([3, 1, 2, 1])),
              lambda m: fj.argsort(m.TensorXf([3, 1, 2, 1]))):
        same(f(s), f(L))


def test_dynamic_arrays_of_one_component_broadcast():
    # Dr.Jit 1.5: drjit.scalar.ArrayXf([1]) + ArrayXf([1, 2, 3]) is [2, 3, 4] (frostjit raised);
    # the tensors' reductions over a leading axis need it.
    assert list(s.ArrayXf([1]) + s.ArrayXf([1, 2, 3])) == [2, 3, 4]
    assert list(s.ArrayXf([1, 2, 3]) >= s.ArrayXf([2])) == [False, True, True]
    assert list(s.ArrayXf([1]) + s.ArrayXf([])) == []          # one against none: none (as a JIT width)
    with pytest.raises(ValueError, match="incompatible sizes"):
        s.ArrayXf([1, 2]) + s.ArrayXf([1, 2, 3])
    assert list(fj.max(s.TensorXf([[1, 2, 3], [4, 5, 6]]), axis=0).array) == [4, 5, 6]


def test_width_of_a_scalar_tensor_is_its_number_of_elements():
    # Dr.Jit 1.5: dr.width(drjit.scalar.TensorXf([[1,2,3],[4,5,6]])) is 6 (frostjit said 1).
    assert fj.width(s.TensorXf([[1, 2, 3], [4, 5, 6]])) == 6


def test_memory_functions_on_scalar_dynamic_arrays():
    # Dr.Jit 1.5's drjit.scalar: gather/scatter/block_sum work on ArrayXf (frostjit raised or
    # returned the input); out-of-bounds and inactive lanes read 0 and write nothing, as on the JIT.
    a = s.ArrayXf([1, 2, 3, 4])
    assert list(fj.gather(s.ArrayXf, a, s.ArrayXu([3, 0, 9]))) == [4, 1, 0]
    assert list(fj.block_sum(a, 3)) == [6, 4]
    assert list(fj.block_prefix_sum(s.ArrayXu([1, 2, 3, 4, 5, 6]), 3)) == [0, 1, 3, 0, 4, 9]
    fj.scatter(a, 9.0, s.ArrayXu([1, 7]))
    fj.scatter_add(a, s.ArrayXf([1, 1]), s.ArrayXu([0, 0]))
    fj.scatter_reduce(fj.ReduceOp.Max, a, 2.5, 2, s.ArrayXb([False]))
    assert list(a) == [3, 9, 3, 4]
    with pytest.raises(TypeError, match="does not match"):
        fj.gather(s.ArrayXu, a, 0)
    with pytest.raises(TypeError, match="value type"):
        fj.scatter(a, s.ArrayXi([1]), 0)
