"""A function frozen anew at every call of a program (``fr = fj.freeze(render)`` inside ``main()``,
as the p_sdf_march port does): the globals its code names are read from its code once per code
object (session r16: a ``dis`` pass per ``fj.freeze()`` was ~0.4 ms), and every fresh frozen
function still returns what the plain call returns when those globals change."""
import dis
import sys

import numpy as np

import frostjit as fj
from frostjit.freeze import frozen as frozen_mod
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
