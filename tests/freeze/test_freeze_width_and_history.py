"""fj.opaque_width inside frozen functions, and kernel_history()'s recording_mode (Dr.Jit 1.5's
KernelRecordingMode: Inactive for plain launches, Recorded while freeze records, Replayed)."""
import pytest

import frostjit as fj
from frostjit.llvm import Array3f, Float, UInt32
import frostjit.llvm.ad as ad


@pytest.fixture
def history():
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        yield lambda: [(h["type"].value, h["recording_mode"]) for h in fj.kernel_history()]


def test_opaque_width_is_an_evaluated_uint32_of_the_width():
    w = fj.opaque_width(Float(1, 2, 3))
    assert type(w) is UInt32 and w.state == fj.VarState.Evaluated and w.numpy().tolist() == [3]
    assert fj.opaque_width(Array3f([1, 2], [3, 4], [5, 6])).numpy().tolist() == [2]
    assert fj.opaque_width([Float(1, 2, 3), 5]).numpy().tolist() == [3]
    assert type(fj.opaque_width(ad.Float(1, 2))) is ad.UInt32


@pytest.mark.parametrize("bad", [3, [], None, (1.0, 2.0)])
def test_opaque_width_without_an_array_raises(bad):
    with pytest.raises(TypeError, match="holds no JIT array"):
        fj.opaque_width(bad)


def test_opaque_width_follows_the_width_of_each_replay():
    f = fj.freeze(lambda x: x + Float(fj.opaque_width(x)))
    for n in (3, 7, 1000, 3):
        assert f(fj.arange(Float, n)).numpy().tolist() == (fj.arange(Float, n) + n).numpy().tolist()
    assert f.n_recordings == 1
    assert f(Float(5)).numpy().tolist() == [6]      # (width 1 may be recorded apart: it broadcasts)


@pytest.mark.no_freeze_check      # (checking mode adds the plain call's launches, Inactive)
def test_recording_mode_of_plain_recorded_and_replayed_launches(history):
    x = fj.arange(Float, 10)
    fj.eval(x * 2)
    assert history() == [("jit", fj.KernelRecordingMode.Inactive)]
    f = fj.freeze(lambda x: (x * 3 + 1, fj.sum(x)))
    y = fj.arange(Float, 10)
    f(y)
    modes = history()
    assert ("jit", fj.KernelRecordingMode.Recorded) in modes and ("reduce", fj.KernelRecordingMode.Recorded) in modes
    assert all(m is not fj.KernelRecordingMode.Replayed for _, m in modes)
    f(fj.arange(Float, 12) + 0)
    fj.kernel_history()
    f(y)
    replayed = history()
    assert replayed and all(m is fj.KernelRecordingMode.Replayed for _, m in replayed)
    assert [int(m) for m in fj.KernelRecordingMode] == [0, 1, 2]
