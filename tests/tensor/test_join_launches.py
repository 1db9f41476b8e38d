"""Joining unevaluated arrays launches one kernel per distinct width of the inputs (Dr.Jit's
grouping), not one per input: ``concat``, ``stack``, ``hstack``/``vstack``/``column_stack``,
tensor ``concat``, gathers from static-vector and PyTree sources, ``meshgrid``.  Values are
compared with NumPy at several widths (empty parts included) and frozen against plain."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Array3f, Float, TensorXf, UInt32


@pytest.fixture
def history():
    fj.eval()
    old = fj.flag(fj.JitFlag.KernelHistory)
    fj.set_flag(fj.JitFlag.KernelHistory, True)
    fj.kernel_history_clear()

    def launched():
        return sorted(k["size"] for k in fj.kernel_history() if str(k["type"]) == "jit")
    yield launched
    fj.set_flag(fj.JitFlag.KernelHistory, old)


def _part(n, k):
    return fj.arange(Float, n) * (k + 1) + 0.5 * k


def _np_part(n, k):
    return np.arange(n, dtype=np.float32) * np.float32(k + 1) + np.float32(0.5 * k)


def test_concat_of_equal_width_parts_evaluates_them_in_one_kernel(history):
    r = fj.concat([_part(5, 0), _part(5, 1), _part(5, 2)])
    assert history() == [5]             # the parts, together; the result is still lazy
    fj.eval(r)
    assert history() == [15]
    np.testing.assert_array_equal(r.numpy(), np.concatenate([_np_part(5, k) for k in range(3)]))


def test_concat_of_unequal_widths_runs_one_kernel_per_width(history):
    r = fj.concat([_part(5, 0), _part(7, 1), _part(0, 2), _part(5, 3)])
    assert history() == [5, 7]
    np.testing.assert_array_equal(r.numpy(), np.concatenate([_np_part(n, k) for k, n in enumerate((5, 7, 0, 5))]))


@pytest.mark.parametrize("join", ["stack", "hstack", "vstack", "column_stack", "concat_axis1"])
def test_tensor_joins_evaluate_their_inputs_in_one_kernel(history, join):
    a = [_part(6, k) for k in range(3)]
    if join == "concat_axis1":
        r = fj.concat([TensorXf(x, (2, 3)) for x in a], axis=1)
        want = np.concatenate([_np_part(6, k).reshape(2, 3) for k in range(3)], axis=1)
    else:
        r = getattr(fj, join)(a)
        want = getattr(np, join)([_np_part(6, k) for k in range(3)])
    assert history() == [6]
    np.testing.assert_array_equal(r.numpy(), want)


def test_gather_from_an_unevaluated_static_vector_evaluates_it_in_one_kernel(history):
    src = Array3f(_part(5, 0), _part(5, 1), _part(5, 2))
    r = fj.gather(Array3f, src, UInt32(4, 0, 2))
    assert history() == [5]
    np.testing.assert_array_equal(r.numpy(), np.array([_np_part(5, k)[[4, 0, 2]] for k in range(3)]))


def test_gather_from_an_unevaluated_pytree_evaluates_it_in_one_kernel(history):
    src = {"a": _part(4, 0), "b": _part(4, 1)}
    r = fj.gather(dict, src, UInt32(3, 1))
    assert history() == [4]
    np.testing.assert_array_equal(r["b"].numpy(), _np_part(4, 1)[[3, 1]])


def test_meshgrid_evaluates_its_inputs_in_one_kernel(history):
    x, y = fj.meshgrid(_part(3, 0), _part(3, 1))
    assert history() == [3]
    gx, gy = np.meshgrid(_np_part(3, 0), _np_part(3, 1))
    np.testing.assert_array_equal(x.numpy(), gx.ravel())
    np.testing.assert_array_equal(y.numpy(), gy.ravel())


@settings(max_examples=10, deadline=None)
@given(widths=st.lists(st.sampled_from([0, 1, 7, 1000]), min_size=1, max_size=4))
def test_concat_matches_numpy_and_frozen_matches_plain(widths):
    def run(parts):
        return fj.concat([p * 2 + 1 for p in parts])

    frozen = fj.freeze(run)
    for scale in (1, 3):        # the second call replays the recording at other widths
        ns = [w * scale if w > 1 else w for w in widths]
        if sum(ns) == 0:
            continue
        parts = [_part(n, k) for k, n in enumerate(ns)]
        want = np.concatenate([_np_part(n, k) * 2 + 1 for k, n in enumerate(ns)])
        np.testing.assert_array_equal(run(parts).numpy(), want)
        np.testing.assert_array_equal(frozen(parts).numpy(), want)
