"""fj.Local / fj.alloc_local (per-lane scratch buffers) against a NumPy buffer of shape (size, lanes)."""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Array3f, Bool, Float, UInt32
from frostjit.llvm.ad import Float as FloatAD, UInt32 as UInt32AD

SMALL_WIDTHS = (1, 7, 1000)

# One access of a random program: (is_write, seed of its per-lane data, masked?)
accesses = st.lists(st.tuples(st.booleans(), st.integers(0, 2**31 - 1), st.booleans()), min_size=1, max_size=8)


def _lanes(seed: int, n: int, size: int):
    """Per-lane indices (some out of range), values and a mask."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, size + 2, n).astype(np.uint32)
    val = rng.integers(-50, 50, n).astype(np.float32)
    mask = rng.random(n) < 0.6
    return idx, val, mask


@pytest.mark.parametrize("n", SMALL_WIDTHS)
@given(size=st.integers(1, 5), program=accesses, init=st.integers(-3, 3))
def test_per_lane_reads_and_writes_match_a_numpy_buffer(n, size, program, init):
    buf = fj.alloc_local(Float, size, Float(float(init)))
    ref = np.full((size, n), init, np.float32)
    lane = np.arange(n)
    for is_write, seed, masked in program:
        idx, val, mask = _lanes(seed, n, size)
        active = mask if masked else np.ones(n, bool)
        ok = active & (idx < size)       # out-of-range lanes: a read gives 0, a write does nothing
        if is_write:
            if masked:
                buf.write(Float(val), UInt32(idx), Bool(mask))
            else:
                buf[UInt32(idx)] = Float(val)
            ref[idx[ok], lane[ok]] = val[ok]
        else:
            got = buf.read(UInt32(idx), Bool(mask)) if masked else buf[UInt32(idx)]
            want = np.where(ok, ref[np.minimum(idx, size - 1), lane], 0)
            assert np.array_equal(np.broadcast_to(got.numpy(), (n,)), want)
    for k in range(size):
        assert np.array_equal(np.broadcast_to(buf[k].numpy(), (n,)), ref[k])


def test_python_int_index_reads_and_writes_one_entry():
    buf = fj.alloc_local(Float, 3, Float(0))
    buf[0] = Float(1, 2, 3)
    buf[2] = 5.0                    # a Python number is converted to the buffer's type
    buf.write(Float(9), 1, Bool(False, True, False))
    assert buf[0].numpy().tolist() == [1, 2, 3]
    assert np.broadcast_to(buf[1].numpy(), 3).tolist() == [0, 9, 0]
    assert buf[2].numpy().tolist() == [5]
    assert buf.read(0, Bool(True, False, True)).numpy().tolist() == [1, 0, 3]


def test_read_returns_a_new_value_that_does_not_alias_the_buffer():
    buf = fj.alloc_local(Float, 2, Float(1, 2))
    v = buf[0]
    v += 10
    assert buf[0].numpy().tolist() == [1, 2]


def test_python_int_index_out_of_range_raises_index_error():
    buf = fj.alloc_local(Float, 3, Float(0))
    for bad in (3, -1):
        with pytest.raises(IndexError, match=f"index {bad} is out of range for a buffer of 3 entries"):
            buf[bad]
        with pytest.raises(IndexError, match=f"index {bad}"):
            buf[bad] = Float(1)
    # Also a RuntimeError with Dr.Jit's wording
    with pytest.raises(RuntimeError, match=r"out of bounds read \(source size=3, offset=7\)"):
        buf[7]
    with pytest.raises(RuntimeError, match=r"out of bounds write \(target size=3, offset=7\)"):
        buf.write(Float(1), 7)


def test_index_that_is_not_an_integer_raises_type_error():
    buf = fj.alloc_local(Float, 3, Float(0))
    with pytest.raises(TypeError, match="'index' must be a Python int or an integer array.*Float"):
        buf[Float(1)]


def test_out_of_range_per_lane_indices_read_zero_and_write_nothing_silently():
    buf = fj.alloc_local(Float, 2, Float(1, 2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert buf[UInt32(0, 2, 7)].numpy().tolist() == [1, 0, 0]
        buf[UInt32(5, 1, 9)] = Float(4)
    assert buf[1].numpy().tolist() == [1, 4, 3]


def test_debug_mode_warns_about_out_of_range_per_lane_indices():
    buf = fj.alloc_local(Float, 3, Float(1, 2, 3))
    with fj.scoped_set_flag(fj.JitFlag.Debug, True):
        with pytest.warns(RuntimeWarning, match=r"read\(\): out-of-bounds read from position 3 \(lane 1\)") as rec:
            assert buf[UInt32(0, 3, 1)].numpy().tolist() == [1, 0, 3]
        assert rec[0].filename == __file__          # the warning names the caller's line
        with pytest.warns(RuntimeWarning, match=r"write\(\): out-of-bounds write to position 5 \(lane 0\)"):
            buf[UInt32(5, 0, 0)] = Float(9)
        with warnings.catch_warnings():
            warnings.simplefilter("error")           # a masked-off lane is not checked
            buf.read(UInt32(0, 3, 1), Bool(True, False, True))


def test_alloc_local_checks_its_arguments():
    with pytest.raises(TypeError, match="'size' must be a non-negative int"):
        fj.alloc_local(Float, -1)
    with pytest.raises(TypeError, match="'size' must be a non-negative int"):
        fj.alloc_local(Float, 1.5)
    with pytest.raises(TypeError, match="'value' must be of type 'dtype' \\(Float\\), got UInt"):
        fj.alloc_local(Float, 2, UInt32(1))
    with pytest.raises(TypeError, match="cannot make a zero dict.*pass 'value'"):
        fj.alloc_local(dict, 2)
    with pytest.raises(TypeError, match="holds no JIT array"):
        fj.alloc_local(dict, 2, {"a": 1})
    # A static array of no components: Dr.Jit's wording is part of the message
    with pytest.raises(TypeError, match="type does not contain any Jit-tracked arrays"):
        fj.alloc_local(fj.llvm.Array0f, 2)


def test_len_repr_width_and_the_copy_constructor():
    buf = fj.alloc_local(Float, 3, Float(1, 2))
    assert len(buf) == 3 and len(fj.alloc_local(Float, 0)) == 0
    assert repr(buf) == "Local[frostjit.llvm.Float, 3]"
    assert fj.width(buf) == 2
    copy = fj.Local(buf)
    copy[0] = Float(100)
    assert buf[0].numpy().tolist() == [1, 2] and copy[0].numpy().tolist() == [100]
    with pytest.raises(TypeError, match="'arg' must be a Local"):
        fj.Local(Float(1))


def test_uninitialized_entries_read_zero():
    assert fj.alloc_local(Float, 2)[UInt32(1, 0)].numpy().tolist() == [0, 0]
    assert fj.alloc_local(Array3f, 2)[1].numpy().tolist() == [[0], [0], [0]]


class Pair:
    DRJIT_STRUCT = {"a": Float, "b": Array3f}


def test_static_array_and_struct_entries():
    vec = fj.alloc_local(Array3f, 2, Array3f(1, 2, 3))
    vec[UInt32(1, 0)] = Array3f(Float(7, 8), 0, 0)
    assert isinstance(vec[0], Array3f)
    assert vec[0].numpy().tolist() == [[1, 8], [2, 0], [3, 0]]
    pairs = fj.alloc_local(Pair, 2)
    p = Pair()
    p.a, p.b = Float(1, 2), Array3f(4, 5, 6)
    pairs[UInt32(1, 0)] = p
    first = pairs[0]
    assert isinstance(first, Pair)
    assert first.a.numpy().tolist() == [0, 2] and pairs[1].b.numpy().tolist() == [[4, 0], [5, 0], [6, 0]]


def _accumulate_np(trips: np.ndarray, size: int) -> np.ndarray:
    ref = np.zeros((size, len(trips)), np.float32)
    for lane, t in enumerate(trips):
        for i in range(int(t)):
            ref[i % size, lane] += i + 1
    return ref


def _accumulate(trips: UInt32, size: int, mode: str, compress: bool = False):
    buf = fj.alloc_local(Float, size, Float(0))

    def body(i, t, buf):
        k = i % size
        buf[k] = buf[k] + Float(i + 1)
        return i + 1, t, buf
    return fj.while_loop((UInt32(0), trips, buf), lambda i, t, buf: i < t, body, mode=mode, compress=compress)[2]


@pytest.mark.parametrize("n", SMALL_WIDTHS)
@pytest.mark.parametrize("mode,compress", [("symbolic", False), ("evaluated", False), ("evaluated", True)])
@given(seed=st.integers(0, 2**31 - 1), size=st.integers(1, 4))
def test_local_as_while_loop_state_matches_numpy(n, mode, compress, seed, size):
    trips = np.random.default_rng(seed).integers(0, 7, n).astype(np.uint32)
    buf = _accumulate(UInt32(trips), size, mode, compress)
    ref = _accumulate_np(trips, size)
    for k in range(size):
        assert np.array_equal(np.broadcast_to(buf[k].numpy(), (n,)), ref[k])


@fj.syntax
def _fill_syntax(buf, i, offset):
    while i < 4:
        buf[i] = Float(i) * 2 + offset
        i += 1
    return buf


def test_local_in_a_syntax_loop_matches_dr_jit():
    # Dr.Jit 1.5 prints [6, 16, 26] [0, 0, 0] [2, 12, 0] for the same program
    buf = _fill_syntax(fj.alloc_local(Float, 4, Float(0)), UInt32(0, 1, 2), Float(0, 10, 20))
    assert buf[3].numpy().tolist() == [6, 16, 26]
    assert np.broadcast_to(buf[0].numpy(), 3).tolist() == [0, 0, 0]
    assert buf[1].numpy().tolist() == [2, 12, 0]


def test_debug_mode_inside_a_symbolic_loop_traces_without_checks():
    with fj.scoped_set_flag(fj.JitFlag.Debug, True):
        buf = _accumulate(UInt32(3, 0, 5), 2, "symbolic")
        assert buf[0].numpy().tolist() == [4, 0, 9]


def _scratch_program(x, idx):
    buf = fj.alloc_local(Float, 4, Float(-1))

    def body(i, buf):
        buf[i] = x * Float(i)
        return i + 1, buf
    _, buf = fj.while_loop((UInt32(0), buf), lambda i, buf: i < 3, body)
    buf.write(x + 100, idx, x > 2)
    return buf[idx], buf


_frozen_scratch = fj.freeze(_scratch_program)


@pytest.mark.parametrize("n", SMALL_WIDTHS)
def test_frozen_equals_plain(n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 5, n).astype(np.float32)
    idx = rng.integers(0, 6, n).astype(np.uint32)
    plain_read, plain_buf = _scratch_program(Float(x), UInt32(idx))
    frozen_read, frozen_buf = _frozen_scratch(Float(x), UInt32(idx))
    assert isinstance(frozen_buf, fj.Local) and len(frozen_buf) == 4
    assert np.array_equal(frozen_read.numpy(), plain_read.numpy())
    for k in range(4):
        assert np.array_equal(np.broadcast_to(frozen_buf[k].numpy(), (n,)),
                              np.broadcast_to(plain_buf[k].numpy(), (n,)))


def test_frozen_function_writes_into_a_local_argument():
    @fj.freeze
    def put(buf, idx, v):
        buf[idx] = v

    for n in SMALL_WIDTHS:
        buf = fj.alloc_local(Float, 2, Float(-1))
        put(buf, UInt32(np.arange(n) % 2), Float(np.arange(n, dtype=np.float32)))
        want = np.where(np.arange(n) % 2 == 0, np.arange(n), -1)
        assert np.array_equal(np.broadcast_to(buf[0].numpy(), (n,)), want)
    assert put.n_recordings <= 2


@fj.syntax
def _branch_syntax(buf, x):
    if x > 1:
        buf[0] = x * 10
    else:
        buf[1] = x
    return buf


def test_local_written_in_a_syntax_branch_matches_dr_jit():
    # Dr.Jit 1.5 prints [0, 20, 30] [1, 0, 0]
    buf = _branch_syntax(fj.alloc_local(Float, 2, Float(0)), Float(1, 2, 3))
    assert buf[0].numpy().tolist() == [0, 20, 30]
    assert buf[1].numpy().tolist() == [1, 0, 0]


def test_gradients_flow_through_per_lane_writes_and_reads():
    x = FloatAD(1, 2, 3)
    fj.enable_grad(x)
    buf = fj.alloc_local(FloatAD, 2, FloatAD(0))
    buf[UInt32AD(0, 1, 0)] = x * x
    fj.backward(buf[0])
    assert x.grad.numpy().tolist() == [2, 0, 6]      # d(x^2)/dx on the lanes that wrote entry 0


@dataclasses.dataclass
class _Sample:
    value: Float
    index: UInt32


def test_dataclass_entries_start_as_zeros():
    buf = fj.alloc_local(_Sample, 3)
    buf[UInt32(2, 0)] = _Sample(Float(1, 2), UInt32(5, 6))
    assert isinstance(buf[2], _Sample)
    assert buf[2].value.numpy().tolist() == [1, 0] and buf[0].index.numpy().tolist() == [0, 6]
