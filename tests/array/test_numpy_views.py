"""``.numpy()`` / ``np.asarray`` share the array's memory, as in Dr.Jit 1.5's LLVM backend.

Dr.Jit's semantics (run side by side, session r14): the result is a writable view (not owning
its data) of the evaluated buffer, for every flat type and for tensors; a literal or pending
array is evaluated into memory first; a write into the view changes the array; two views of one
array share memory; a view outlives the array; a later ``scatter`` into the array leaves an
earlier view as it was (copy-on-write); a replay of a frozen function returns a new buffer each
call.  Static arrays (``Array3f``) stay copies, as there.
"""
import gc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import (Array3f, Bool, Float, Float16, Float64, Int32, Int64, TensorXf, UInt32,
                           UInt64)
from frostjit.llvm.ad import Float as FloatAD

TYPES = {"Float": (Float, np.float32), "Float16": (Float16, np.float16), "Float64": (Float64, np.float64),
         "Int32": (Int32, np.int32), "UInt32": (UInt32, np.uint32), "Int64": (Int64, np.int64),
         "UInt64": (UInt64, np.uint64), "Bool": (Bool, np.bool_), "FloatAD": (FloatAD, np.float32)}


def _pending(x, dt):
    """A pending copy of ``x`` (an identity operation of any width)."""
    return ~(~x) if dt is np.bool_ else 0 - (0 - x)


def _make(T, dt, state, values):
    """An array of ``values`` that is evaluated, a literal (all equal), or pending."""
    if state == "literal":
        return fj.full(T, values[0] if len(values) else 0, len(values)), np.full(len(values), values[0] if
                                                                                 len(values) else 0, dt)
    ref = np.array(values, dt)
    x = T(ref)
    if state == "evaluated":
        fj.eval(x)
    else:
        x = _pending(x, dt)     # (any width): evaluated by .numpy()
        assert x.state == fj.VarState.Unevaluated or not values
    return x, ref


@settings(max_examples=40)
@given(st.sampled_from(sorted(TYPES)), st.sampled_from(["evaluated", "literal", "pending"]),
       st.lists(st.integers(0, 100), max_size=9), st.data())
def test_numpy_is_a_writable_view_that_writes_through(tname, state, values, data):
    T, dt = TYPES[tname]
    x, ref = _make(T, dt, state, values)
    v = x.numpy()
    assert v.dtype == dt and v.shape == (len(values),)
    np.testing.assert_array_equal(v, ref)
    assert v.flags.writeable and not v.flags.owndata
    if not values:
        return
    assert x.state == fj.VarState.Evaluated           # a literal / pending array now is memory
    assert np.shares_memory(v, x.numpy()) and np.shares_memory(v, np.asarray(x))
    i = data.draw(st.integers(0, len(values) - 1))
    new = not ref[i] if dt is np.bool_ else ref[i] + 7
    v[i] = new
    ref[i] = new
    np.testing.assert_array_equal(x.numpy(), ref)     # the array sees the write
    assert x[i] == ref[i]
    np.testing.assert_array_equal(_pending(x, dt).numpy(), ref)   # kernels read the write
    c = np.asarray(x, copy=True)
    c[i] = ref[(i + 1) % len(ref)] if len(ref) > 1 else (not ref[i] if dt is np.bool_ else ref[i] + 1)
    np.testing.assert_array_equal(x.numpy(), ref)     # a copy does not write through


def test_a_view_outlives_the_array_and_the_buffer_pool():
    n = 1 << 12
    x = fj.arange(Float, n) * 2
    v = x.numpy()
    del x
    gc.collect()
    # same-sized buffers cycle through the pool: none may be the view's
    kept = [fj.full(Float, -1.0, n) + 0 for _ in range(8)]
    fj.eval(kept)
    fj.flush_malloc_cache()
    np.testing.assert_array_equal(v, np.arange(n, dtype=np.float32) * 2)
    assert all((k.numpy() == -1).all() for k in kept)


def test_a_later_scatter_copies_and_leaves_the_view_as_it_was():
    x = Float([1, 2, 3])
    v = x.numpy()
    fj.scatter(x, Float(20.0), UInt32(2))
    fj.scatter_add(x, Float(1.0), UInt32(0))
    np.testing.assert_array_equal(v, [1, 2, 3])         # Dr.Jit: the view keeps its values
    np.testing.assert_array_equal(x.numpy(), [2, 2, 20])
    del v
    gc.collect()
    w = x.numpy()
    fj.scatter(x, Float(5.0), UInt32(1))     # a dead view no longer counts
    np.testing.assert_array_equal(w, [2, 2, 20])
    y = x
    y += 1                                       # a new variable: earlier views keep theirs
    np.testing.assert_array_equal(w, [2, 2, 20])


def test_tensor_numpy_is_a_view_of_its_shape():
    t = fj.zeros(TensorXf, (2, 3))              # a literal: made memory, as Dr.Jit does
    v = t.numpy()
    assert v.shape == (2, 3) and not v.flags.owndata
    v[1, 2] = 9
    assert t[1, 2] == 9
    assert np.shares_memory(v, np.asarray(t)) and np.shares_memory(v, t.array.numpy())
    np.testing.assert_array_equal((t + 1).numpy(), [[1, 1, 1], [1, 1, 10]])


def test_static_arrays_stay_copies_as_in_drjit():
    a = Array3f(1, 2, 3)
    v = a.numpy()
    assert v.shape == (3, 1)
    v[0, 0] = 9
    assert a.x[0] == 1


def test_writes_through_a_view_reach_frozen_and_plain_calls_alike():
    @fj.freeze
    def f(x):
        return x * 2 + 1

    for n in (0, 1, 5, 5, 7):
        x = fj.arange(Float, n) + 0
        fj.eval(x)
        v = x.numpy()
        v[:] = np.arange(n)[::-1] * 3
        want = (np.arange(n)[::-1] * 3 * 2 + 1).astype(np.float32)
        np.testing.assert_array_equal(f(x).numpy(), want)
        np.testing.assert_array_equal((x * 2 + 1).numpy(), want)


def test_views_of_frozen_outputs_survive_later_replays():
    @fj.freeze
    def g(x):
        return x * 2

    x = Float([1, 2, 3])
    views = [g(x).numpy() for _ in range(4)]      # outputs die at once: only the views hold them
    views[-1][0] = 100
    for v in views[:-1]:
        np.testing.assert_array_equal(v, [2, 4, 6])
    np.testing.assert_array_equal(g(x).numpy(), [2, 4, 6])
    for a, b in zip(views, views[1:]):
        assert not np.shares_memory(a, b)


@pytest.mark.parametrize("who", ["numpy", "asarray", "dlpack"])
def test_every_export_holds_the_array_for_copy_on_write(who):
    x = Float([1, 2, 3])
    v = {"numpy": lambda: x.numpy(), "asarray": lambda: np.asarray(x),
         "dlpack": lambda: np.from_dlpack(x)}[who]()
    x[0] = 5                # frostjit: copies under a live view (Dr.Jit writes this one in place)
    assert x[0] == 5 and v[0] == 1
