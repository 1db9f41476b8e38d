"""Re-trace warnings (FreezeWarning, Dr.Jit path notation) and DEBUG logging of every reason."""
import logging
import warnings


import frostjit as fj
from frostjit.llvm import UInt32

from freeze_helpers import F, ramp


def freeze_warnings(record):
    return [str(w.message) for w in record if issubclass(w.category, fj.FreezeWarning)]


def test_warning_class():
    assert issubclass(fj.FreezeWarning, UserWarning)


def test_warn_after_counts_traces_and_names_paths():
    f = fj.freeze(lambda x, k: x * len(k), warn_after=2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f(F(1), "a")
        f(F(1), "bb")
        assert freeze_warnings(w) == []
        f(F(1), "cccc")
        msgs = freeze_warnings(w)
    assert len(msgs) == 1
    assert "traced 3 times" in msgs[0]
    assert "args[1]: Python value changed from 'bb' to 'cccc'" in msgs[0]
    assert w[-1].filename == __file__


def test_type_change_message():
    f = fj.freeze(lambda a, b: a + 1, warn_after=0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f(F(1), F(1))
        f(F(1), UInt32(1))
    assert any("args[1]: type changed from Float to UInt" in m for m in freeze_warnings(w))


def test_size_class_message_for_keyword_object_attribute():
    class Camera:
        pass

    class Scene:
        def __init__(self, n):
            self.camera = ramp(n)

    f = fj.freeze(lambda x, scene: x + 1, warn_after=0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f(ramp(3), scene=Scene(3))
        f(ramp(3), scene=Scene(4))
    assert any('kwargs["scene"].camera: size class changed' in m for m in freeze_warnings(w))


def test_no_warning_below_limit():
    f = fj.freeze(lambda x, k: x * k)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for k in range(10):
            f(F(1), k)
    assert freeze_warnings(w) == []


def test_debug_log_names_every_retrace_reason(caplog):
    f = fj.freeze(lambda x, k: x * k)
    with caplog.at_level(logging.DEBUG, logger="frostjit"):
        f(F(1), 1)
        f(F(1), 2)
        f(F(1, 2, 3), 2.5)
    text = caplog.text
    assert "args[1]: became a parameter of the recording (its value changed)" in text
    assert "args[1]: type changed from int to float" in text


def test_attribute_names_are_not_globals():
    """An attribute ``p.x`` must not make an unrelated global ``x`` an input (a Dr.Jit caveat)."""
    global x
    x = ramp(7)

    class P:
        def __init__(self, v):
            self.x = v
    f = fj.freeze(lambda p: p.x + 1)
    p = P(ramp(3))
    f(p)
    x = ramp(9)
    p.x = ramp(3)
    f(p)
    assert f.n_recordings == 1
