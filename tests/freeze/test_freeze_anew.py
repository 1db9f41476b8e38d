"""A function frozen anew at every call of a program (``fr = fj.freeze(render)`` inside ``main()``,
as the p_sdf_march port does): the globals its code names are read from its code once per code
object (session r16: a ``dis`` pass per ``fj.freeze()`` was ~0.4 ms), and every fresh frozen
function still returns what the plain call returns when those globals change.  And what a
recording costs: evaluation runs without the read set's trace hook."""
import dis
import sys

import numpy as np
import pytest

import frostjit as fj
from frostjit.freeze import frozen as frozen_mod
from frostjit.freeze.readset import ReadSet
from frostjit.trace.state import state
from frostjit.llvm import Float

SCALE = 2.0


def _render(x):
    return x * SCALE + fj.sin(x)


def test_the_global_names_of_a_code_object_are_read_once(monkeypatch):
    calls = []
    real = dis.get_instructions

    def counting(code, *a, **k):
        calls.append(code)
        return real(code, *a, **k)

    fj.freeze(_render)          # (any earlier analysis of _render's code)
    monkeypatch.setattr(frozen_mod.dis, "get_instructions", counting)
    for _ in range(3):
        f = fj.freeze(_render)
        assert "SCALE" in f._global_names and "fj" in f._global_names
    assert calls == []


def test_fresh_frozen_functions_follow_a_changed_global(monkeypatch):
    x = fj.arange(Float, 5) * 0.25
    for scale in (2.0, 3.0, 3.0, -1.5):
        monkeypatch.setattr(sys.modules[__name__], "SCALE", scale)
        fr = fj.freeze(_render)
        for y in (x, x + 1, x * 2):
            np.testing.assert_array_equal(fr(y).numpy(), _render(y).numpy())
        assert fr.n_recordings == 1


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the read set uses sys.monitoring there, not sys.settrace")
def test_a_recording_evaluates_without_the_read_set_hook(monkeypatch):
    """The read set's trace hook sees every Python frame that starts while a recording runs (~1 us
    each on 3.11); evaluation runs no user code, so it suspends the hook (session r16: ~10,000
    frames of kernel building in p_image_fit's recorded training step).  The hook still sees the
    tracing around it, and the replay equals the plain call."""
    seen = []
    real = ReadSet._global

    def spy(self, frame, event, arg):
        seen.append((frame.f_code.co_filename.replace("\\", "/"), frame.f_code.co_name))
        return real(self, frame, event, arg)

    monkeypatch.setattr(ReadSet, "_global", spy)
    monkeypatch.setattr(state, "readset_trace", spy)

    def f(x):
        y = fj.sin(x) * 2 + x
        fj.eval(y)
        return y * x + SCALE

    fr = fj.freeze(f)
    x = fj.arange(Float, 7) * 0.5
    np.testing.assert_array_equal(fr(x).numpy(), f(x).numpy())
    assert any(s.endswith("frostjit/trace/ops.py") for s, _ in seen)
    # (evaluate's own call is seen: it suspends the hook once it runs)
    assert not [(s, n) for s, n in seen if s.endswith("frostjit/schedule/kernel.py")
                or s.endswith("frostjit/schedule/evaluate.py") and n != "evaluate"]
    for y in (x + 1, fj.arange(Float, 3)):
        np.testing.assert_array_equal(fr(y).numpy(), f(y).numpy())
    assert fr.n_recordings == 1
