"""``fj.eval``/``fj.schedule`` say whether one of the given arrays was unevaluated (Dr.Jit 1.5's
bool result, measured side by side)."""
from __future__ import annotations

import frostjit as fj
from frostjit.llvm import Float, UInt32


def test_schedule_reports_unevaluated_arguments_only():
    x = Float(1, 2) + 1
    assert fj.schedule(x) is True
    assert fj.schedule(Float(1, 2)) is False        # already in memory
    assert fj.schedule(Float(3)) is False           # a literal
    assert fj.schedule() is False
    assert fj.eval() is False                       # evaluates x, but no argument counted
    assert fj.eval(x) is False and x.numpy().tolist() == [2, 3]


def test_eval_reports_whether_a_given_array_was_evaluated():
    y = Float(1, 2) * 3
    assert fj.eval({"a": [y, 3]}) is True
    assert fj.eval(y) is False
    assert fj.eval(1.0) is False and fj.eval() is False


def test_pending_scatters_run_but_do_not_count():
    y = fj.zeros(Float, 3)
    fj.eval(y)
    fj.scatter(y, Float(1), UInt32(0))
    assert fj.eval() is False
    assert y.numpy().tolist() == [1, 0, 0]
