"""Red team (r10): a frozen function whose plain call raises for empty arrays (Dr.Jit's
"uninitialized" loop state, an empty ``if_stmt`` condition or ``switch`` index, ``argmax`` or
``median`` of nothing) must raise at width 0 too, not replay a recording made at another
width.  The emptiness check is a guarded fact of the recording (``not (s0 == 0)``), so a
width-0 call traces again and raises as the plain call; other widths still replay."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float, UInt32


def _while(x):
    i = fj.zeros(UInt32, fj.width(x))
    return fj.while_loop((i, x), lambda i, x: i < 3, lambda i, x: (i + 1, x * 2))[1]


BODIES = {
    "while_loop": _while,
    "if_stmt": lambda x: fj.if_stmt((x,), x > 2, lambda x: x + 1, lambda x: x - 1),
    "switch": lambda x: fj.switch(fj.arange(UInt32, fj.width(x)) % 2, [lambda v: v + 1, lambda v: v * 2], x),
    "argmax": lambda x: fj.argmax(x),
    "argmin": lambda x: fj.argmin(x),
    "median": lambda x: fj.median(x),
}


def _outcome(fn, n):
    x = Float(np.arange(n, dtype=np.float32) - 2)
    try:
        return "ok", fn(x).numpy().tolist()
    except Exception as e:  # noqa: BLE001
        return "raised", type(e).__name__      # (a frozen call raises a subclass of the same name)


@pytest.mark.no_freeze_check      # (checking mode's plain call would raise for the replay)
@pytest.mark.parametrize("name", list(BODIES))
def test_width_zero_raises_as_the_plain_call(name):
    fn = BODIES[name]
    frozen = fj.freeze(fn)
    for n in (1, 7, 1000, 0, 5, 0, 300):
        assert _outcome(frozen, n) == _outcome(fn, n), (name, n)
    assert _outcome(fn, 0)[0] == "raised"


@pytest.mark.no_freeze_check
def test_other_widths_still_replay():
    frozen = fj.freeze(BODIES["while_loop"])
    for n in (7, 1000, 5, 300):
        frozen(Float(np.arange(n, dtype=np.float32)))
    assert frozen.n_recordings == 1
