"""fj.if_stmt in scalar and evaluated modes against NumPy's where."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Bool, Float, UInt32

from control_programs import WIDTHS, lanes, run_fj, run_np, steps


@pytest.mark.parametrize("n", WIDTHS)
@given(t_prog=steps, f_prog=steps, seed=st.integers(0, 2**31 - 1), threshold=st.sampled_from([-1.0, 0.0, 0.5, 9.0]))
def test_evaluated_conditional_matches_numpy_where(n, t_prog, f_prog, seed, threshold):
    x0 = lanes(seed, n)
    x = Float(x0)
    out = fj.if_stmt((x,), x > threshold, lambda x: run_fj(t_prog, x), lambda x: run_fj(f_prog, x),
                     mode="evaluated")
    expect = np.where(x0 > np.float32(threshold), run_np(t_prog, x0), run_np(f_prog, x0))
    assert np.array_equal(out.numpy(), expect)


@pytest.mark.parametrize("n", WIDTHS)
@given(seed=st.integers(0, 2**31 - 1))
def test_default_mode_equals_evaluated_mode_with_tuple_results(n, seed):
    x0 = lanes(seed, n)
    x, y = Float(x0), Float(x0 * 2)
    cond = x < 0

    def t(x, y):
        return x + y, UInt32(1)

    def f(x, y):
        return x - y, UInt32(2)
    a = fj.if_stmt((x, y), cond, t, f)
    b = fj.if_stmt((x, y), cond, t, f, mode="evaluated")
    for u, v in zip(a, b):
        assert np.array_equal(u.numpy(), v.numpy())
    assert np.array_equal(a[1].numpy(), np.where(x0 < 0, 1, 2).astype(np.uint32))


@given(c=st.booleans())
def test_scalar_mode_runs_only_the_chosen_branch(c):
    ran = []
    out = fj.if_stmt((Float(1, 2),), c, lambda x: ran.append("t") or x + 1, lambda x: ran.append("f") or x - 1)
    assert ran == (["t"] if c else ["f"])
    assert out.numpy().tolist() == ([2, 3] if c else [0, 1])


def test_scalar_mode_with_one_lane_array_condition():
    out = fj.if_stmt((UInt32(1, 2),), Bool(True), lambda x: x + 1, lambda x: x, mode="scalar")
    assert out.numpy().tolist() == [2, 3]


def test_each_branch_scatters_only_on_its_lanes():
    buf = fj.zeros(UInt32, 3)

    def t(x):
        fj.scatter_add(buf, UInt32(1), x)
        return x + 1

    def f(x):
        fj.scatter_add(buf, UInt32(10), x)
        return x
    out = fj.if_stmt((UInt32(0, 1, 2),), Bool(True, False, True), t, f, mode="evaluated")
    assert out.numpy().tolist() == [1, 1, 3]
    assert buf.numpy().tolist() == [1, 10, 1]           # Dr.Jit 1.5: the same


@pytest.mark.parametrize("mode", ["evaluated", "symbolic"])
def test_branch_updating_its_argument_in_place_leaves_the_other_branch_and_updates_the_caller_after(mode):
    # Dr.Jit 1.5 (side by side): the other branch sees the original; the result is the caller's
    # object, updated in place, since both branches return the argument they received
    x = Float(1, 2)
    seen = []

    def t(x):
        x += 100
        return x

    def f(x):
        seen.append(x + 0)
        return x
    out = fj.if_stmt((x,), Bool(True, False), t, f, mode=mode)
    assert out is x and x.numpy().tolist() == [101, 2]
    assert seen[0].numpy().tolist() == [1, 2]


def test_non_strict_returns_false_branch_python_value():
    out = fj.if_stmt((UInt32(1, 2),), Bool(True, False), lambda x: (x, 1), lambda x: (x, 2), mode="evaluated",
                     strict=False)
    assert out[1] == 2 and out[0].numpy().tolist() == [1, 2]


def test_size_one_result_broadcasts_against_the_other_branch():
    out = fj.if_stmt((UInt32(1, 2),), Bool(True, False), lambda x: UInt32(7), lambda x: x, mode="evaluated")
    assert out.numpy().tolist() == [7, 2]


def test_none_results():
    assert fj.if_stmt((UInt32(1, 2),), Bool(True, False), lambda x: None, lambda x: None, mode="evaluated") is None


def test_conditional_inside_a_loop_body_masks_its_scatters_to_active_lanes():
    buf = fj.zeros(UInt32, 4)

    def body(i):
        def t(i):
            fj.scatter_add(buf, UInt32(1), i)
            return i + 1

        def f(i):
            return i + 1
        return (fj.if_stmt((i,), (i & 1) == 0, t, f, mode="evaluated"),)
    fj.while_loop((UInt32(0, 1, 2, 3),), lambda i: i < 4, body, mode="evaluated")
    # even values visited: lane0: 0,2; lane1: 2; lane2: 2; lane3: none
    assert buf.numpy().tolist() == [1, 0, 3, 0]


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
def test_branch_size_mismatch_is_a_runtime_error_and_read_only_arrays_of_another_size_work(mode):
    c = Bool(True, False, True)
    z = Float(1, 2, 3, 4)
    with pytest.raises(RuntimeError) as info:
        fj.if_stmt((Float(1, 2, 3),), c, lambda x: x + z, lambda x: x, mode=mode)
    assert isinstance(info.value, ValueError)
    x, zo = fj.if_stmt((Float(1, 2, 3), z), c, lambda x, z: (x + fj.gather(Float, z, UInt32(0, 1, 2)), z),
                       lambda x, z: (x, z), mode=mode)
    assert x.numpy().tolist() == [2, 2, 6] and zo is z      # Dr.Jit 1.5: the same


@dataclasses.dataclass
class Z:
    x: object = None
    y: object = None


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
@pytest.mark.parametrize("kind", ["list", "dict", "dataclass", "vector"])
def test_a_container_both_branches_return_is_the_callers_updated_in_place(mode, kind):
    # Dr.Jit 1.5 (side by side): the caller's container, holding the merged entries; an entry
    # updated in place (+=) is the caller's array, a new one (x + 1) a new array
    x, y = UInt32(10, 20), UInt32(30, 40)
    make = {"list": lambda: [x, y], "dict": lambda: {"x": x, "y": y}, "dataclass": lambda: Z(x, y),
            "vector": lambda: fj.llvm.Array2u(x, y)}[kind]
    key = {"list": 0, "dict": "x", "dataclass": "x", "vector": 0}[kind]
    get = (lambda o: o.x) if kind == "dataclass" else (lambda o: o[key])

    def t(z):
        if kind == "dataclass":
            z.x = z.x + 1
        else:
            z[key] = z[key] + 1
        return (z,)
    z = make()
    out, = fj.if_stmt((z,), Bool(True, False), t, lambda z: (z,), mode=mode)
    assert out is z and get(z).numpy().tolist() == [11, 20]
    assert x.numpy().tolist() == [10, 20]


def test_list_mutation_rules_follow_drjit():
    # Dr.Jit 1.5's rules: x[0] += 1 in one branch, x[1] += 1 in the other -> the caller's arrays,
    # updated; y[k] = y[k] + 1 -> new arrays in the caller's list, the old ones unchanged
    def t(x, y):
        x[0] += 1
        y[0] = y[0] + 1
        return x, y

    def f(x, y):
        x[1] += 1
        y[1] = y[1] + 1
        return x, y
    xi0, xi1, yi0, yi1 = UInt32(1, 2), UInt32(3, 4), UInt32(10, 20), UInt32(30, 40)
    xi, yi = [xi0, xi1], [yi0, yi1]
    xo, yo = fj.if_stmt((xi, yi), Bool(True, False), t, f)
    assert xo is xi and yo is yi and xo[0] is xi0 and xo[1] is xi1 and yo[0] is not yi0
    assert [a.numpy().tolist() for a in xo + yo] == [[2, 2], [3, 5], [11, 20], [30, 41]]
    assert yi0.numpy().tolist() == [10, 20]


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
def test_empty_arguments_results_and_condition_raise_drjits_errors(mode):
    c = Bool(True, False)
    with pytest.raises(RuntimeError, match="state variable 'y' of type .* is uninitialized"):
        fj.if_stmt((UInt32(4), UInt32()), c, lambda x, y: (x, y), lambda x, y: (x, y), arg_labels=("x", "y"),
                   mode=mode)
    with pytest.raises(RuntimeError, match="state variable 'y' of type .* is uninitialized"):
        fj.if_stmt((UInt32(4), UInt32(3)), c, lambda x, y: (x, UInt32()), lambda x, y: (x, y),
                   rv_labels=("x", "y"), mode=mode)
    with pytest.raises(RuntimeError, match="'cond' cannot be empty"):
        fj.if_stmt((UInt32(4),), Bool(), lambda x: x, lambda x: x, mode=mode)
    with pytest.raises(RuntimeError, match="incompatible sizes"):
        fj.if_stmt((UInt32(4),), c, lambda _: UInt32(1, 2, 3), lambda _: UInt32(1, 2, 3), mode=mode)
