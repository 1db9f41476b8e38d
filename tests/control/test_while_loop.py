"""fj.while_loop in scalar and evaluated modes against plain Python/NumPy loops."""
from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.control import modes
from frostjit.llvm import Bool, Float, UInt32

from control_programs import WIDTHS, lanes, run_fj, run_np, steps


def _np_loop(trips: np.ndarray, x: np.ndarray, program) -> np.ndarray:
    """Lane by lane: ``program`` applied ``trips[k]`` times to ``x[k]``."""
    out = x.copy()
    for k in range(len(x)):
        v = out[k:k + 1]
        for _ in range(int(trips[k])):
            v = run_np(program, v)
        out[k] = v[0]
    return out


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("compress", [False, True])
@given(program=steps, seed=st.integers(0, 2**31 - 1), max_trips=st.integers(0, 6))
def test_evaluated_loop_matches_a_python_loop_per_lane(n, compress, program, seed, max_trips):
    x0 = lanes(seed, n)
    trips = np.random.default_rng(seed + 1).integers(0, max_trips + 1, n).astype(np.uint32)
    limit = UInt32(trips)
    i, x = fj.while_loop((UInt32(np.zeros(n, np.uint32)), Float(x0), limit),
                         lambda i, x, lim: i < lim,
                         lambda i, x, lim: (i + 1, run_fj(program, x), lim),
                         mode="evaluated", compress=compress)[:2]
    assert np.array_equal(i.numpy(), trips)
    assert np.array_equal(x.numpy(), _np_loop(trips, x0, program))


@pytest.mark.parametrize("n", WIDTHS)
@given(program=steps, seed=st.integers(0, 2**31 - 1))
def test_compressed_and_plain_evaluated_loops_agree(n, program, seed):
    x0 = lanes(seed, n)
    trips = UInt32(np.random.default_rng(seed).integers(0, 5, n).astype(np.uint32))

    def run(compress):
        return fj.while_loop((UInt32(0), Float(x0)), lambda i, x: i < trips,
                             lambda i, x: (i + 1, run_fj(program, x)), mode="evaluated", compress=compress)
    a = run(False)
    # a compressed loop sees the active lanes only, so the per-lane limit travels in the state
    c = fj.while_loop((UInt32(0), Float(x0), trips), lambda i, x, t: i < t,
                      lambda i, x, t: (i + 1, run_fj(program, x), t), mode="evaluated", compress=True)
    assert np.array_equal(a[0].numpy(), c[0].numpy())
    assert np.array_equal(a[1].numpy(), c[1].numpy())


@given(start=st.integers(-5, 20), stop=st.integers(-5, 20), step=st.integers(1, 4))
def test_scalar_mode_is_a_python_loop(start, stop, step):
    out = fj.while_loop((start, Float(1.0)), lambda i, x: i < stop, lambda i, x: (i + step, x * 2))
    trips = max(0, -(-(stop - start) // step))
    assert out[0] == start + trips * step
    assert out[1].numpy()[0] == 2.0 ** trips


def test_scalar_mode_with_array_condition_of_one_lane_uses_its_value():
    i, = fj.while_loop((UInt32(0),), lambda i: i < 3, lambda i: (i + 1,), mode="scalar")
    assert i.numpy().tolist() == [3]


def test_default_mode_is_symbolic_as_in_drjit():
    assert fj.flag(fj.JitFlag.SymbolicLoops) and modes.vector_mode(fj.JitFlag.SymbolicLoops) == "symbolic"
    i, x = fj.while_loop((UInt32(0), Float(1, 1, 1)), lambda i, x: i < UInt32(1, 2, 3),
                         lambda i, x: (i + 1, x * 2))
    assert x.numpy().tolist() == [2, 4, 8] and i.numpy().tolist() == [1, 2, 3]


def test_explicit_symbolic_mode_equals_evaluated_mode():
    args = ((UInt32(0, 1, 5),), lambda i: i < 3, lambda i: (i + 1,))
    (a,), (b,) = fj.while_loop(*args, mode="symbolic"), fj.while_loop(*args, mode="evaluated")
    assert a.numpy().tolist() == b.numpy().tolist() == [3, 3, 5]


def test_flag_off_chooses_evaluated_mode():
    with fj.scoped_set_flag(fj.JitFlag.SymbolicLoops, False):
        i, = fj.while_loop((UInt32(0, 4),), lambda i: i < 3, lambda i: (i + 1,))
    assert i.numpy().tolist() == [3, 4]


def test_size_one_state_widens_to_the_loop():
    i, x = fj.while_loop((UInt32(0, 5, 1), Float(1)), lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
                         mode="evaluated")
    assert i.numpy().tolist() == [3, 5, 3] and x.numpy().tolist() == [8, 1, 4]


def test_compressed_loop_widens_size_one_state():
    i, x = fj.while_loop((UInt32(0, 5, 1), Float(1)), lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
                         mode="evaluated", compress=True)
    assert i.numpy().tolist() == [3, 5, 3] and x.numpy().tolist() == [8, 1, 4]


def test_pytree_state_dict_and_nested_tuple():
    s = {"i": UInt32(0, 2), "acc": (Float(0, 0), Float(1, 1))}

    def body(s):
        return ({"i": s["i"] + 1, "acc": (s["acc"][0] + 1, s["acc"][1] * 3)},)
    s, = fj.while_loop((s,), lambda s: s["i"] < 4, body, mode="evaluated")
    assert s["i"].numpy().tolist() == [4, 4]
    assert s["acc"][0].numpy().tolist() == [4, 2]
    assert s["acc"][1].numpy().tolist() == [81, 9]


def test_python_values_in_state_pass_through_and_non_strict_takes_the_new_value():
    i, k = fj.while_loop((UInt32(0), 1), lambda i, k: i < 3, lambda i, k: (i + 1, k + 1), mode="evaluated",
                         strict=False)
    assert i.numpy().tolist() == [3] and k == 4


def test_retired_lanes_do_not_scatter_in_an_evaluated_loop():
    for compress in (False, True):
        buf = fj.zeros(UInt32, 3)

        def body(i, buf=buf):
            fj.scatter_add(buf, UInt32(1), i)
            return (i + 1,)
        fj.while_loop((UInt32(0, 1, 2),), lambda i: i < 3, body, mode="evaluated", compress=compress)
        assert buf.numpy().tolist() == [1, 2, 3]     # Dr.Jit 1.5: [1, 2, 3] (uncompressed)


def test_body_updating_its_argument_in_place_updates_the_callers_state_after_the_loop():
    # Dr.Jit 1.5 (side by side): the body returned the handle it received, so the result is the
    # caller's object holding the final value; a new object (x + 10) would leave the caller's alone
    x = Float(1, 2)

    def body(i, x):
        x += 10
        return i + 1, x
    _, out = fj.while_loop((UInt32(0), x), lambda i, x: i < 2, body, mode="evaluated")
    assert out is x and x.numpy().tolist() == [21, 22]
    y = Float(1, 2)
    _, out = fj.while_loop((UInt32(0), y), lambda i, y: i < 2, lambda i, y: (i + 1, y + 10), mode="evaluated")
    assert out is not y and y.numpy().tolist() == [1, 2] and out.numpy().tolist() == [21, 22]


def test_nested_loops_inner_trip_count_depends_on_outer_state():
    def outer(i, total):
        j, t = fj.while_loop((UInt32(0), total), lambda j, t: j < i, lambda j, t: (j + 1, t + 1), mode="evaluated")
        return i + 1, t
    i, total = fj.while_loop((UInt32(0, 2), UInt32(0)), lambda i, t: i < 4, outer, mode="evaluated")
    # lane 0: 0+1+2+3 = 6; lane 1: i = 2, 3 -> 5
    assert total.numpy().tolist() == [6, 5]


def test_loop_with_a_false_condition_everywhere_runs_no_body():
    calls = []

    def body(i):
        calls.append(1)
        return (i + 1,)
    i, = fj.while_loop((UInt32(5, 6),), lambda i: i < 3, body, mode="evaluated")
    assert i.numpy().tolist() == [5, 6] and not calls


def test_loop_condition_bool_of_one_lane_broadcasts_over_the_state():
    i, x = fj.while_loop((UInt32(0), Float(1, 2)), lambda i, x: i < 2, lambda i, x: (i + 1, x + 1),
                         mode="evaluated")
    assert i.numpy().tolist() == [2] and x.numpy().tolist() == [3, 4]
    assert Bool(True).numpy().tolist() == [True]


@pytest.mark.parametrize("n", [2, 3, 7])
def test_compressed_loop_inside_an_evaluated_loop_body(n):
    # regression: the compressed loop's own gathers/scatters took the enclosing loop's mask
    # (a 1-lane gather was widened to the outer loop's lanes)
    start = np.arange(n, dtype=np.uint32) * 2

    def outer(i, total):
        j, t, _ = fj.while_loop((UInt32(0), total, i), lambda j, t, i: j < i, lambda j, t, i: (j + 1, t + 1, i),
                                mode="evaluated", compress=True)
        return i + 1, t
    i, total = fj.while_loop((UInt32(start), UInt32(0)), lambda i, t: i < 4, outer, mode="evaluated")
    expect = [sum(range(s, 4)) for s in start.tolist()]
    assert total.numpy().tolist() == expect


def test_compressed_loop_reading_an_array_outside_its_state_raises_instead_of_looping():
    # regression: the condition j < limit (limit not in the state) compared compressed lanes with
    # all lanes, gathered out of range and never terminated
    limit = UInt32(0, 2)
    with pytest.raises(fj.control.StateValueError, match="every array with one entry per lane must be a state"):
        fj.while_loop((UInt32(0),), lambda j: j < limit, lambda j: (j + 1,), mode="evaluated", compress=True)


@given(program=steps, x0=st.sampled_from([-3.0, -0.5, 0.0, 0.75, 2.5]), trips=st.integers(0, 6))
def test_scalar_and_evaluated_modes_agree_on_one_lane(program, x0, trips):
    def run(mode):
        return fj.while_loop((UInt32(0), Float(x0)), lambda i, x: i < trips,
                             lambda i, x: (i + 1, run_fj(program, x)), mode=mode)
    a, b = run("scalar"), run("evaluated")
    assert a[0].numpy().tolist() == b[0].numpy().tolist() == [trips]
    assert np.array_equal(a[1].numpy(), b[1].numpy())


def test_compressed_loop_with_incompatible_state_sizes_raises():
    with pytest.raises(ValueError, match="incompatible sizes 2 and 3"):
        fj.while_loop((UInt32(0, 1, 2), Float(1, 2)), lambda i, x: i < 3, lambda i, x: (i + 1, x),
                      mode="evaluated", compress=True)


@pytest.mark.parametrize("mode", ["evaluated", "symbolic"])
def test_state_the_body_leaves_unchanged_keeps_its_width(mode):
    # Dr.Jit 1.5 measured: a size-1 Float(5) in a 3-lane loop stays size 1 (was widened in evaluated mode)
    i, c = fj.while_loop((UInt32(0, 1, 2), Float(5)), lambda i, c: i < 3, lambda i, c: (i + 1, c), mode=mode)
    assert i.numpy().tolist() == [3, 3, 3] and fj.width(c) == 1 and c.numpy().tolist() == [5]
