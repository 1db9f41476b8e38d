"""The evaluation of one operation over evaluated operands (schedule/single_op.py): a repeat of a
shape reuses its spec, and shapes that differ in anything the kernel depends on never share one."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, Float64, Int32, UInt32, Bool
from frostjit.schedule import single_op


def values(a):
    return np.asarray(a.numpy())


def evaluated(T, a):
    x = T(np.asarray(a, dtype=T._vt.np_dtype))
    fj.eval(x)
    return x


def same(a, b):
    a, b = values(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("n", [1, 7, 1000, 100003])
def test_x_times_x_and_x_times_y_are_different_shapes(n):
    x = evaluated(Float, np.linspace(-2, 2, n))
    y = evaluated(Float, np.full(n, 3))
    a, b = x * x, x * y
    fj.eval(a)
    fj.eval(b)
    xn = values(x)
    assert same(a, xn * xn) and same(b, xn * np.float32(3))


def test_signed_zero_and_nan_literals_are_different_shapes():
    # Regression guard: -0.0 == 0.0, so a key by value would run x * 0.0's kernel for x * -0.0.
    x = evaluated(Float64, [1.0, -1.0])
    for c in (0.0, -0.0, math.nan, 0.0, -0.0, math.nan):
        z = x * c
        fj.eval(z)
        want = np.array([1.0, -1.0]) * c
        got = values(z)
        assert np.array_equal(np.signbit(got), np.signbit(want)) and np.array_equal(np.isnan(got), np.isnan(want)), c


def test_a_size_one_operand_broadcasts_and_is_a_shape_of_its_own():
    x = evaluated(Int32, np.arange(5))
    one = evaluated(Int32, [4])
    five = evaluated(Int32, [4, 4, 4, 4, 4])
    a, b = x - one, x - five
    fj.eval(a)
    fj.eval(b)
    assert same(a, np.arange(5, dtype=np.int32) - 4) and same(b, np.arange(5, dtype=np.int32) - 4)
    assert single_op.shape_key((x - one)._node) != single_op.shape_key((x - five)._node)


def test_a_repeat_reuses_the_spec_and_a_pending_operand_takes_the_general_path():
    x = evaluated(UInt32, np.arange(10))
    k1 = single_op.shape_key((x + 1)._node)
    y = x + 1
    fj.eval(y)
    plan = single_op._plans[k1]
    z = x + 1
    fj.eval(z)
    assert single_op._plans[k1] is plan and same(z, np.arange(1, 11, dtype=np.uint32))
    assert single_op.shape_key(((x + 1) * 2)._node) is None       # an operand is pending


def test_history_and_frozen_functions_see_the_single_operation_launch():
    x = evaluated(Float, np.arange(4))
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        y = x * 2
        fj.eval(y)
        (h,) = fj.kernel_history()
    assert h["type"] == "jit" and h["size"] == 4 and h["operation_count"] == 4

    def f(a):
        b = a * 2
        fj.eval(b)
        return b
    ff = fj.freeze(f)
    for n in (3, 5, 9):
        assert same(ff(evaluated(Float, np.arange(n))), np.arange(n, dtype=np.float32) * 2)
    assert ff.n_recordings == 1


OPS = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - a, lambda a, b: fj.minimum(a, b),
       lambda a, b: fj.select(a > b, a, b), lambda a, b: fj.fma(a, b, a), lambda a, b: a / 3.5,
       lambda a, b: -a, lambda a, b: b * -0.0]


@given(st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.sampled_from([1, 7, 1000])), min_size=1, max_size=12))
def test_single_operations_give_what_the_general_path_gives(steps):
    # The general path (build the spec every time) is what a frozen function's recording takes.
    for k, n in steps:
        a = evaluated(Float, np.linspace(-3, 3, n))
        b = evaluated(Float, np.linspace(2, -1, n))
        fast = OPS[k](a, b)
        fj.eval(fast)
        with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):      # (history takes the general path)
            slow = OPS[k](a, b)
            fj.eval(slow)
            fj.kernel_history()
        assert same(fast, values(slow)), (k, n)
