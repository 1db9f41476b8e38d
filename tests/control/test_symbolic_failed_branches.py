"""A symbolic if_stmt or switch whose branch raises after scattering leaves no scatter queued
(Dr.Jit 1.5: the target is unchanged, measured); evaluated mode ran the scatter, as in Dr.Jit."""
from __future__ import annotations

import pytest

import frostjit as fj
from frostjit.llvm import Bool, Float, UInt32


def _target():
    t = fj.zeros(Float, 3)
    fj.eval(t)
    return t


def test_a_raising_symbolic_branch_leaves_its_scatter_out():
    t = _target()

    def true_fn(x):
        fj.scatter(t, Float(1), UInt32(0))
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fj.if_stmt((Float(1, 2, 3),), Bool(True, False, True), true_fn, lambda x: (x,), mode="symbolic")
    assert (t + 1).numpy().tolist() == [1, 1, 1]


def test_inconsistent_symbolic_branches_leave_their_scatters_out():
    t = _target()

    def true_fn(x):
        fj.scatter(t, Float(7), UInt32(2))
        return (x, x)

    with pytest.raises(RuntimeError, match="changed from 2 to 1"):
        fj.if_stmt((Float(1, 2, 3),), Bool(True, False, True), true_fn, lambda x: (x,), mode="symbolic")
    assert t.numpy().tolist() == [0, 0, 0]


def test_a_raising_symbolic_switch_target_leaves_every_scatter_out():
    t = _target()

    def first(x):
        fj.scatter(t, Float(3), UInt32(2))
        return x

    def second(x):
        fj.scatter(t, Float(5), UInt32(1))
        raise KeyError("k")

    with fj.scoped_set_flag(fj.JitFlag.SymbolicConditionals, True):
        with pytest.raises(KeyError):
            fj.switch(UInt32(0, 1, 0), [first, second], Float(1, 2, 3))
    assert t.numpy().tolist() == [0, 0, 0]
    assert (Float(1, 2) * 2).numpy().tolist() == [2, 4]        # later evaluations are unaffected
