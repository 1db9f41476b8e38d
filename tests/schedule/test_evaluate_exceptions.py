"""An exception in the middle of an evaluation leaves the pending scatters queued, not lost.

An evaluation takes the queue of pending scatters and launches them group by group.  When a
group fails before its kernel starts (a compile error, out of memory, a Ctrl-C), that group and
every later one must stay pending, in program order, so the next evaluation runs them.
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.llvm import Float, UInt32


class FailOnce:
    """Wraps ``backend.compile``: raises ``exc`` on call number ``at`` (0-based), once."""

    def __init__(self, backend, at, exc):
        self.real = backend.compile
        self.at = at
        self.exc = exc
        self.calls = 0

    def __call__(self, spec):
        k = self.calls
        self.calls += 1
        if k == self.at:
            raise self.exc
        return self.real(spec)


@pytest.mark.parametrize("exc", [KeyboardInterrupt("Ctrl-C"), MemoryError("out of memory")])
def test_scatter_stays_pending_when_its_launch_fails_before_starting(monkeypatch, exc):
    be = current_backend()
    t = fj.zeros(Float, 10)
    fj.eval(t)
    fj.scatter(t, Float(5.0, 6.0), UInt32(3, 4))
    monkeypatch.setattr(be, "compile", FailOnce(be, 0, exc))
    with pytest.raises(type(exc)):
        fj.eval()
    monkeypatch.undo()
    np.testing.assert_array_equal(t.numpy(), [0, 0, 0, 5, 6, 0, 0, 0, 0, 0])


def test_later_groups_stay_pending_in_program_order(monkeypatch):
    """Scatters of two sizes (two kernels): the first runs, the second fails, then runs later."""
    be = current_backend()
    t = fj.zeros(Float, 8)
    u = fj.zeros(Float, 8)
    fj.eval(t, u)
    fj.scatter(t, Float(1.0, 2.0), UInt32(0, 1))
    fj.scatter(u, Float(3.0, 4.0, 5.0), UInt32(2, 3, 4))
    fj.scatter_add(t, Float(10.0, 20.0, 30.0), UInt32(0, 0, 7))
    monkeypatch.setattr(be, "compile", FailOnce(be, 1, KeyboardInterrupt("Ctrl-C")))
    with pytest.raises(KeyboardInterrupt):
        fj.eval()
    monkeypatch.undo()
    np.testing.assert_array_equal(t.numpy(), [31, 2, 0, 0, 0, 0, 0, 30])
    np.testing.assert_array_equal(u.numpy(), [0, 0, 3, 4, 5, 0, 0, 0])


def test_pending_outputs_are_recomputed_after_a_failed_evaluation(monkeypatch):
    be = current_backend()
    x = fj.arange(Float, 5)
    y = x * 2 + 1
    monkeypatch.setattr(be, "compile", FailOnce(be, 0, KeyboardInterrupt("Ctrl-C")))
    with pytest.raises(KeyboardInterrupt):
        fj.eval(y)
    monkeypatch.undo()
    np.testing.assert_array_equal(y.numpy(), [1, 3, 5, 7, 9])
