"""Loop-invariant state (Dr.Jit 1.5 drops it from a symbolic loop): a state array that the body
gathers from, scatters into, or returns unchanged with another size than the loop's; and the
write-back of results that are the body's (or both branches') own arguments into the caller's
objects.  Expected values: Dr.Jit 1.5's, printed side by side, and a plain Python loop's."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.control.errors import StateValueError
from frostjit.llvm import Float, UInt32
from frostjit.llvm.ad import Float as FloatAD, UInt32 as UInt32AD

MODES = ["symbolic", "evaluated"]


def _python_histogram(starts, n, end):
    buf = np.zeros(n)
    for s in starts:
        for i in range(s, end):
            buf[i] += 1
    return buf


@pytest.mark.parametrize("mode", MODES)
@given(starts=st.lists(st.integers(0, 6), min_size=1, max_size=9), extra=st.integers(0, 3))
def test_scatter_add_into_a_state_array_of_another_size_writes_every_iteration(mode, starts, extra):
    n = 7 + extra
    buf = fj.zeros(Float, n)
    i, out = fj.while_loop((UInt32(starts), buf), lambda i, b: i < 7,
                           lambda i, b: (i + 1, (fj.scatter_add(b, Float(1), i), b)[1]), mode=mode)
    assert out is buf                                   # Dr.Jit: the caller's object, updated
    np.testing.assert_array_equal(buf.numpy(), _python_histogram(starts, n, 7))
    assert i.numpy().tolist() == [max(s, 7) for s in starts]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", [1, 7, 1000])
def test_gather_from_a_state_array_equals_python_loop(mode, n):
    table = Float(np.arange(10, dtype=np.float32) * 10)        # 10 entries, the loop has n lanes
    start = np.arange(n) % 10
    i, acc, t = fj.while_loop((UInt32(start), fj.zeros(Float, n), table), lambda i, a, t: i < 10,
                              lambda i, a, t: (i + 1, a + fj.gather(Float, t, i), t), mode=mode)
    assert t is table
    expect = [sum(range(10 * s, 100, 10)) for s in start]
    np.testing.assert_array_equal(acc.numpy(), expect)


@pytest.mark.parametrize("mode", MODES)
def test_scatter_into_a_state_array_of_the_loops_size_is_not_merged_per_lane(mode):
    # Dr.Jit 1.5: [1, 2, 3] in both modes (a retired lane's entry keeps the others' writes)
    buf = fj.zeros(Float, 3)
    alias = Float(buf)
    i, out = fj.while_loop((UInt32(0, 1, 2), buf), lambda i, b: i < 3,
                           lambda i, b: (i + 1, (fj.scatter_add(b, Float(1), i), b)[1]), mode=mode)
    assert out is buf and buf.numpy().tolist() == [1, 2, 3]
    assert alias.numpy().tolist() == [0, 0, 0]          # another handle keeps its value (copy-on-write)


def test_symbolic_state_array_gathered_from_and_modified_raises():
    def body(i, b):
        b = b + 1
        return i + 1, b + fj.gather(Float, b, i)
    with pytest.raises(RuntimeError):
        i, b = fj.while_loop((UInt32(0, 1, 2), Float(1, 2, 3)), lambda i, b: i < 3,
                             lambda i, b: (i + 1, b + fj.gather(Float, b, i)), mode="symbolic")
        fj.eval(b)


def test_modified_state_of_another_size_raises_a_runtime_and_value_error():
    with pytest.raises(StateValueError) as info:
        fj.while_loop((UInt32(0, 1, 2), Float(1, 2, 3, 4)), lambda i, b: i < 3, lambda i, b: (i + 1, b + 1),
                      mode="symbolic")
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)
    with pytest.raises(StateValueError):
        fj.while_loop((UInt32(0, 1, 2), Float(1, 2, 3, 4)), lambda i, b: i < 3, lambda i, b: (i + 1, b + 1),
                      mode="evaluated")


@pytest.mark.parametrize("n", [1, 7, 1000, 100003])
def test_frozen_loop_with_a_gathered_and_scattered_state_table_equals_plain(n):
    def f(i, buf, table):
        def body(i, acc, buf, table):
            fj.scatter_add(buf, Float(1), i % 5)
            return i + 1, acc + fj.gather(Float, table, i % 4), buf, table
        i, acc, buf, table = fj.while_loop((i, fj.zeros(Float, fj.width(i)), buf, table), lambda i, *_: i < 6,
                                           body)
        return acc, buf
    frozen = fj.freeze(f)
    start = np.arange(n) % 6
    for _ in range(2):
        got = frozen(UInt32(start), fj.zeros(Float, 5), Float(1, 2, 3, 4))
        want = f(UInt32(start), fj.zeros(Float, 5), Float(1, 2, 3, 4))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("mode", MODES)
def test_forward_derivative_through_a_gathered_state_table(mode):
    # Dr.Jit 1.5: [3000, 2900, 2500] and tangents [100, 80, 80] in both modes
    buf = FloatAD(10, 20, 30, 40)
    fj.enable_grad(buf)

    def body(i, acc, b):
        v = fj.gather(FloatAD, b, i)
        return i + 1, acc + v * v, b
    i, acc, out = fj.while_loop((UInt32AD(0, 1, 2), FloatAD(0, 0, 0), buf), lambda i, a, b: i < 4, body, mode=mode)
    assert out is buf
    fj.set_grad(buf, FloatAD(1, 0, 0, 1))
    assert acc.numpy().tolist() == [3000, 2900, 2500]
    assert fj.forward_to(acc).numpy().tolist() == [100, 80, 80]


@pytest.mark.parametrize("mode", MODES)
def test_loop_results_that_are_the_bodys_arguments_are_the_callers_objects(mode):
    # Dr.Jit 1.5: in place (x += 1, a list entry set) -> the caller's object with the final value;
    # unchanged (even as a new handle) -> the caller's object; swapped or new -> new objects
    x, s, lst = Float(0, 0, 0), Float(5, 6, 7), [Float(0, 0, 0)]

    def body(i, x, s, lst):
        x += 1
        lst[0] = lst[0] + 2
        return i + 1, x, Float(s), lst
    i0 = UInt32(0, 1, 2)
    i, xo, so, lo = fj.while_loop((i0, x, s, lst), lambda i, *_: i < 3, body, mode=mode)
    assert xo is x and so is s and lo is lst and i is not i0
    assert x.numpy().tolist() == [3, 2, 1] and lst[0].numpy().tolist() == [6, 4, 2]
    a, b = Float(1, 2, 3), Float(4, 5, 6)
    _, ao, bo = fj.while_loop((UInt32(0, 1, 2), a, b), lambda i, a, b: i < 3, lambda i, a, b: (i + 1, b, a),
                              mode=mode)
    assert ao is not a and bo is not b and a.numpy().tolist() == [1, 2, 3]


@pytest.mark.parametrize("mode", MODES)
def test_if_stmt_results_that_both_branches_return_as_arguments_are_the_callers_objects(mode):
    c = fj.llvm.Bool(True, False, True)
    x, y = Float(1, 2, 3), Float(4, 5, 6)
    xo, yo = fj.if_stmt((x, y), c, lambda x, y: (x + 1, y), lambda x, y: (x - 1, y), mode=mode)
    assert yo is y and xo is not x and x.numpy().tolist() == [1, 2, 3]
    xo, yo = fj.if_stmt((x, y), c, lambda x, y: (y, x), lambda x, y: (y, x), mode=mode)
    assert xo is y and yo is x
    one = fj.if_stmt((x,), c, lambda x: x, lambda x: x + 1, mode=mode)
    assert one is not x                                  # one branch returns a new object
    buf = fj.zeros(Float, 3)

    def t(b):
        fj.scatter(b, 1.0, UInt32(0, 1, 2))
        return b
    out = fj.if_stmt((buf,), c, t, lambda b: b, mode=mode)
    assert out is buf and buf.numpy().tolist() == [1, 0, 1]


@pytest.mark.parametrize("mode", MODES)
def test_branch_replacing_an_entry_of_a_list_argument_keeps_the_merged_entry(mode):
    # regression: an entry a branch put into its list argument counted as an argument it had
    # received, so the write-back replaced the merged entry by the caller's old one
    x = Float(1, 2, 3)
    w = [x]

    def t(w, x):
        w[0] = x + 1
        return w, x
    out, xo = fj.if_stmt((w, x), x > 1, t, lambda w, x: (w, x), mode=mode)
    assert out is w and xo is x and w[0].numpy().tolist() == [1, 3, 4]

    @fj.syntax
    def f(x):
        box = [x]
        if x > 1:
            box[0] = x + 1
        return box[0]
    assert f(Float(1, 2, 3)).numpy().tolist() == [1, 3, 4]          # Dr.Jit 1.5: the same


@pytest.mark.parametrize("mode", MODES)
def test_branches_scattering_into_an_argument_write_its_memory_not_a_lane_select(mode):
    # Dr.Jit 1.5 (side by side): one branch scattering -> [1, 0, 1] of a size-4 buffer; both
    # branches scattering -> both branches' writes
    c = fj.llvm.Bool(True, False, True)
    buf = fj.zeros(Float, 4)

    def t(b):
        fj.scatter(b, 1.0, UInt32(0, 1, 2))
        return b
    out = fj.if_stmt((buf,), c, t, lambda b: b, mode=mode)
    assert out is buf and buf.numpy().tolist() == [1, 0, 1, 0]
    buf2 = fj.zeros(Float, 4)

    def f(b):
        fj.scatter(b, 2.0, UInt32(0, 1, 2))
        return b
    out = fj.if_stmt((buf2,), c, t, f, mode=mode)
    assert out is buf2 and buf2.numpy().tolist() == [1, 2, 1, 0]


def test_syntax_loop_with_a_branch_scattering_into_a_queue_state_equals_python():
    @fj.syntax
    def split(w):
        n = fj.width(w)
        count = UInt32(0)
        queue = fj.zeros(Float, 2 * n)
        i = UInt32(0)
        while i < 3:
            w = w * 1.5
            if w > 2:
                w = w / 2
                fj.scatter_add(count, UInt32(1), UInt32(0))
                fj.scatter(queue, w, fj.arange(UInt32, n) + n * (i & 1))
            i += 1
        return w, queue, count

    w0 = np.array([1.0, 1.5, 2.5, 3.0], dtype=np.float32)
    w, queue, count = split(Float(w0))
    ww, q, cnt = w0.copy(), np.zeros(8, np.float32), 0
    for it in range(3):
        ww = ww * np.float32(1.5)
        big = ww > 2
        ww = np.where(big, ww / 2, ww)
        cnt += int(big.sum())
        q[np.arange(4)[big] + 4 * (it & 1)] = ww[big]
    np.testing.assert_allclose(w.numpy(), ww, rtol=1e-6)
    np.testing.assert_allclose(queue.numpy(), q, rtol=1e-6)
    assert count.numpy().tolist() == [cnt]
