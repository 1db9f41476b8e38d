"""fj.switch: a per-lane call of one of several targets, against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Bool, Float, UInt32

from control_programs import WIDTHS, lanes, run_fj, run_np, steps


def _target(program):
    """A switch target running ``program`` (it accepts and ignores the mask argument)."""
    def target(x, active=None):
        return run_fj(program, x)
    return target


@pytest.mark.parametrize("n", WIDTHS)
@given(progs=st.lists(steps, min_size=1, max_size=4), seed=st.integers(0, 2**31 - 1),
       masked=st.booleans(), keyword=st.booleans())
def test_evaluated_switch_matches_numpy_with_masks_and_out_of_range_lanes(n, progs, seed, masked, keyword):
    rng = np.random.default_rng(seed)
    x0 = lanes(seed, n)
    idx = rng.integers(0, len(progs) + 2, n).astype(np.uint32)      # some lanes out of range
    act = rng.random(n) < 0.7 if masked else np.ones(n, bool)
    targets = [_target(p) for p in progs]
    if not masked:
        out = fj.switch(UInt32(idx), targets, Float(x0), mode="evaluated")
    elif keyword:
        out = fj.switch(UInt32(idx), targets, Float(x0), active=Bool(act), mode="evaluated")
    else:
        out = fj.switch(UInt32(idx), targets, Float(x0), Bool(act), mode="evaluated")
    expect = np.zeros(n, np.float32)
    for k, p in enumerate(progs):
        sel = (idx == k) & act
        expect[sel] = run_np(p, x0[sel])
    assert np.array_equal(out.numpy(), expect)


def test_masked_lanes_and_out_of_range_lanes_return_zero():
    # Dr.Jit 1.5 (evaluated): [1, 2, 30, 0], [1, 0, 30, 4], [2, 0, 30, 5]
    t = [lambda x: x, lambda x: x * 10]
    assert fj.switch(UInt32(0, 0, 1, 5), t, UInt32(1, 2, 3, 4)).numpy().tolist() == [1, 2, 30, 0]
    t2 = [lambda x, m: x, lambda x, m: x * 10]
    out = fj.switch(UInt32(0, 1, 1, 0), t2, UInt32(1, 2, 3, 4), Bool(True, False, True, True))
    assert out.numpy().tolist() == [1, 0, 30, 4]
    t3 = [lambda x, active: x + active, lambda x, active: x * 10]
    out = fj.switch(UInt32(0, 1, 1, 0), t3, UInt32(1, 2, 3, 4), active=Bool(True, False, True, True))
    assert out.numpy().tolist() == [2, 0, 30, 5]


def test_python_int_index_calls_one_target():
    assert fj.switch(1, [lambda x: x, lambda x: x * 10], UInt32(1, 2)).numpy().tolist() == [10, 20]


def test_python_int_index_out_of_range_raises_index_error():
    with pytest.raises(IndexError, match="out of range"):
        fj.switch(5, [lambda x: x], UInt32(1))


def test_debug_flag_reports_an_active_out_of_range_lane():
    with fj.scoped_set_flag(fj.JitFlag.Debug, True):
        with pytest.raises(IndexError, match="position 2"):
            fj.switch(UInt32(0, 1, 7), [lambda x: x, lambda x: x], UInt32(1, 2, 3), mode="evaluated")
        # a masked-out lane may hold any index
        out = fj.switch(UInt32(0, 1, 7), [lambda x, m: x, lambda x, m: x], UInt32(1, 2, 3), Bool(True, True, False),
                        mode="evaluated")
        assert out.numpy().tolist() == [1, 2, 0]


def test_each_target_runs_once_on_its_lanes_only():
    seen = []

    def make(k):
        def target(x):
            seen.append((k, x.numpy().tolist()))
            return x
        return target
    fj.switch(UInt32(1, 0, 1, 3), [make(0), make(1), make(2)], UInt32(10, 20, 30, 40), mode="evaluated")
    assert seen == [(0, [20]), (1, [10, 30])]


def test_pytree_results_and_size_one_arguments():
    out = fj.switch(UInt32(0, 1, 0), [lambda x, s: {"a": x + s, "b": (x,)}, lambda x, s: {"a": x * s, "b": (x,)}],
                    UInt32(1, 2, 3), UInt32(5))
    assert out["a"].numpy().tolist() == [6, 10, 8] and out["b"][0].numpy().tolist() == [1, 2, 3]


def test_no_lane_calls_a_target_gives_zeros_of_the_result_type():
    out = fj.switch(UInt32(9, 9), [lambda x: x * 2], Float(1, 2))
    assert out.numpy().tolist() == [0, 0]


def test_switch_inside_a_loop_body_calls_targets_on_the_active_lanes_only():
    # regression: the gathers of the targets' arguments took the loop's mask, widening a call on
    # one lane to the loop's lanes
    sizes = []

    def t0(a):
        sizes.append(fj.width(a))
        return a + 1

    def body(i, acc):
        return i + 1, fj.switch(i & 1, [t0, lambda a: a * 2], acc, mode="evaluated")
    i, acc = fj.while_loop((UInt32(0, 2), UInt32(1, 1)), lambda i, a: i < 4, body, mode="evaluated")
    # lane0: i=0:+1->2, i=1:*2->4, i=2:+1->5, i=3:*2->10; lane1: i=2:+1->2, i=3:*2->4
    assert acc.numpy().tolist() == [10, 4]
    assert sizes == [2, 1]


def test_targets_with_different_lane_counts_are_consistent():
    # regression: the targets' results were compared for size although each ran on its own lanes
    out = fj.switch(UInt32(0, 0, 1, 1, 1), [lambda x: x + 1, lambda x: x * 2], Float(1, 2, 3, 4, 5))
    assert out.numpy().tolist() == [2, 3, 6, 8, 10]


def test_target_returning_a_size_one_result_broadcasts_over_its_lanes():
    out = fj.switch(UInt32(0, 1, 1), [lambda x: Float(7), lambda x: x * 2], Float(1, 2, 3))
    assert out.numpy().tolist() == [7, 4, 6]


def test_target_returning_an_array_of_other_width_raises():
    other = Float(1, 2, 3, 4, 5)
    with pytest.raises(fj.control.StateValueError, match="a target returned an array of 5 lanes"):
        fj.switch(UInt32(0, 1, 1), [lambda x: other, lambda x: x], Float(1, 2, 3), mode="evaluated")


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
def test_size_mismatch_inside_a_target_is_a_runtime_error_and_a_value_error(mode):
    # Dr.Jit 1.5 raises RuntimeError for both (a target reading an array of another size, and
    # arguments of incompatible sizes); frostjit's error is both
    z = Float(1, 2, 3, 4)
    with pytest.raises(RuntimeError) as info:
        fj.switch(UInt32(0, 1, 0), [lambda x: x + z, lambda x: x * 2], Float(1, 2, 3), mode=mode)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)
    with pytest.raises(RuntimeError):
        fj.switch(UInt32(0, 1, 0), [lambda x, y: x + y, lambda x, y: x], Float(1, 2, 3), Float(1, 2), mode=mode)


def test_scalar_switch_with_a_false_mask_calls_nothing():
    # Dr.Jit 1.5: None
    targets = [lambda x, active=True: x + 1, lambda x, active=True: x * 10]
    assert fj.switch(1, targets, x=5, active=False) is None
    assert fj.switch(1, targets, active=True, x=5) == 50
    assert fj.switch(1, targets, 5, Bool(False)) is None


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
def test_a_runtime_error_of_a_target_is_the_cause(mode):
    def boom(x):
        raise RuntimeError("foobar")
    with pytest.raises(RuntimeError) as info:
        fj.switch(UInt32(0, 0, 1, 1), [lambda x: x, boom], UInt32(1, 2, 3, 4), mode=mode)
    assert "foobar" in str(info.value.__cause__)                    # Dr.Jit 1.5: the same
