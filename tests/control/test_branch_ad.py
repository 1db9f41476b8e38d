"""Traversals started *inside* the branches of an ``if_stmt`` or the targets of a ``switch``
(Dr.Jit 1.5's model, checked side by side): the statement is an ``isolate_grad()`` scope, so a
backward pass inside a branch stops at the variables created before the statement, its
gradient there is limited to the branch's lanes, and it propagates further once, when the
statement ends; a forward pass in one branch does not clear what the other branch still needs.
(An evaluated ``switch`` gathers each target's lanes, which limits the gradient by itself.)"""
from __future__ import annotations

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm.ad import Float, UInt32

MODES = ("evaluated", "symbolic")
WIDTHS = (1, 7, 1000)


def _expected(n, first, second, split):
    lanes = np.arange(n)
    return np.where(lanes < split, first, second).astype(np.float32).tolist()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("through_gather", [False, True])
def test_backward_inside_both_branches_reaches_earlier_variables_on_their_lanes(mode, n, through_gather):
    i = fj.arange(UInt32, n)
    x = fj.arange(Float, n)
    fj.enable_grad(x)
    y = x * 2

    def branch(scale):
        def run(i, y):
            z = (fj.gather(Float, y, i) if through_gather else y) * scale
            fj.backward_from(z)
            return i, y
        return run

    fj.if_stmt((i, y), i < 2, branch(2.0), branch(3.0), mode=mode)
    assert x.grad.numpy().tolist() == _expected(n, 4, 6, 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", WIDTHS)
def test_backward_inside_one_branch_only_gives_its_lanes(mode, n):
    i = fj.arange(UInt32, n)
    x = fj.arange(Float, n)
    fj.enable_grad(x)
    y = x * 2

    def taken(i, y):
        fj.backward_from(y * 3.0)
        return i, y

    fj.if_stmt((i, y), i < 2, lambda i, y: (i, y), taken, mode=mode)
    assert x.grad.numpy().tolist() == _expected(n, 0, 6, 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", WIDTHS)
def test_forward_to_inside_both_branches_sees_the_earlier_gradient_in_each(mode, n):
    i = fj.arange(UInt32, n)
    x = fj.arange(Float, n)
    fj.enable_grad(x)
    y = x * 2
    x.grad = 1
    fj.forward_from(x, fj.ADFlag.ClearEdges)     # y's gradient (2) is left for the branches

    def branch(scale):
        return lambda i, y, z: (i, y, fj.forward_to(y * scale))

    _, _, z = fj.if_stmt((i, y, Float(0.0)), i < 2, branch(2.0), branch(3.0), mode=mode)
    assert z.numpy().tolist() == _expected(n, 4, 6, 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", WIDTHS)
def test_backward_inside_a_switch_target_gives_only_its_lanes(mode, n):
    x = fj.arange(Float, n)
    fj.enable_grad(x)
    y = x * 2
    index = fj.select(fj.arange(UInt32, n) < 2, UInt32(0), UInt32(1))

    def first(a):
        fj.backward_from(a * 3.0)
        return a

    fj.switch(index, [first, lambda a: a], y, mode=mode)
    assert x.grad.numpy().tolist() == _expected(n, 6, 0, 2)


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("n", WIDTHS)
def test_backward_inside_an_evaluated_loop_body_reaches_earlier_variables_every_iteration(compress, n):
    x = fj.arange(Float, n)
    fj.enable_grad(x)
    y = fj.gather(Float, x, fj.arange(UInt32, n))      # created before the loop: its edge is postponed

    def body(i):
        with fj.resume_grad():
            fj.backward(2 * fj.gather(Float, y, fj.arange(UInt32, n)))
        return (i + 1,)

    fj.while_loop((UInt32(0),), lambda i: i < 2, body, mode="evaluated", compress=compress)
    assert x.grad.numpy().tolist() == [4.0] * n


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", WIDTHS)
def test_a_loop_state_entry_the_body_only_reads_keeps_its_gradient(mode, n):
    # the body gathers from x (which evaluates it) and returns it unchanged: the x the loop returns
    # is the same AD variable, so its gradient is the one the backward pass computes
    x = fj.full(Float, 1.0, n)
    fj.enable_grad(x)
    idx = fj.arange(UInt32, n)
    q0 = fj.zeros(Float, n)
    if mode == "symbolic":      # (a symbolic loop cannot gather from its own state: x stays outside)
        i, q = fj.while_loop((UInt32(0), q0), lambda i, q: i < 3,
                             lambda i, q: (i + 1, q + fj.gather(Float, x, idx) * 2), mode=mode, max_iterations=-1)
        x_out = x
    else:
        i, q, x_out = fj.while_loop((UInt32(0), q0, x), lambda i, q, x: i < 3,
                                    lambda i, q, x: (i + 1, q + fj.gather(Float, x, idx) * 2, x), mode=mode)
    fj.backward(q)
    assert x_out.grad.numpy().tolist() == [6.0] * n
    assert x.grad.numpy().tolist() == [6.0] * n
