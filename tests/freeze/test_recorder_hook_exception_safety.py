"""An exception while a frozen function sets up its recording leaves no recorder installed.

The recorder hook (``state.recorder``) observes every operation while a call is recorded.  If
it stayed installed after an exception (a Ctrl-C landing in the set-up), every later plain
operation would be recorded into a dead recording.
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit.freeze import frozen
from frostjit.llvm import Float
from frostjit.trace.state import state


def test_exception_entering_the_ad_scope_uninstalls_the_recorder(monkeypatch):
    real_enter = frozen._ad.enter

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt("Ctrl-C while the recording starts")

    monkeypatch.setattr(frozen._ad, "enter", interrupted)

    @fj.freeze
    def f(x):
        return x * 2 + 1

    with pytest.raises(KeyboardInterrupt):
        f(Float(1, 2, 3))
    assert state.recorder is None
    monkeypatch.setattr(frozen._ad, "enter", real_enter)
    np.testing.assert_array_equal((Float(1, 2) + 1).numpy(), [2, 3])
    np.testing.assert_array_equal(f(Float(1, 2, 3)).numpy(), [3, 5, 7])
