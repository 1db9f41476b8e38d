"""zeros_like/ones_like/empty_like/copy, allclose and assert_*, runtime controls (threads, log
level, backends) and the diagnostics (set_label, whos, graphviz)."""
from __future__ import annotations

import io
import logging

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Array3f, Bool, Float, Float64, UInt32
import frostjit.llvm.ad as ad

WIDTHS = [1, 7, 1000, 100003]


@pytest.mark.parametrize("width", WIDTHS)
def test_like_helpers_and_copy_inside_freeze_match_plain_calls_at_every_width(width):
    def f(x, v):
        c = fj.copy(v)
        fj.scatter(c.x, 5.0, UInt32(0))          # a copy is independent of v
        e = fj.select(x >= 0, 2.0, fj.empty_like(x))         # (uninitialized contents: never read)
        return fj.zeros_like(x) + 1, fj.ones_like(v) * x, e, c, v.x + 0
    frozen = fj.freeze(f)
    for w in (width, width + 3, width):          # a new width replays the same recording
        x = fj.arange(Float, w)
        v = Array3f(x, x * 2, 3)
        got, want = frozen(x, v), f(x, v)
        for g, e in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
        assert want[4][0] == 0 and want[3].x[0] == 5


@given(st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(float("nan"))), min_size=1, max_size=30),
       st.floats(0, 1e-2), st.floats(0, 1e-2), st.booleans(), st.data())
def test_allclose_of_float64_arrays_matches_numpy(a, rtol, atol, equal_nan, data):
    a = np.array(a)
    noise = np.array(data.draw(st.lists(st.floats(-1e-2, 1e-2), min_size=len(a), max_size=len(a))))
    b = a * (1 + noise) + noise * 1e-3
    got = fj.allclose(Float64(a), b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    assert type(got) is Bool and len(got) == 1
    # Dr.Jit (and frostjit) scale by |b| (NumPy by |b| too) and accept equal infinities
    assert bool(got) == bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def test_assert_allclose_reports_mismatches_in_the_array_precision():
    with pytest.raises(AssertionError) as e:
        fj.assert_allclose(Float(1, 2, 3), [1, 2.5, 3], err_msg="ctx")
    assert str(e.value).splitlines()[:5] == [
        "ctx", "Arrays are not equal to tolerance rtol=0.001, atol=1e-05", "Mismatched elements: 1 / 3 (33.3%)",
        "Max absolute difference: 0.5", "Max relative difference: 0.199999"]
    fj.assert_allclose(ad.Float(1, 2), Float(1, 2))          # detached, no error


def test_assertions_only_check_in_debug_mode_and_show_the_failing_lanes():
    x = Float(1, -4, -2, 3)
    fj.assert_true(x >= 0)                                    # Debug off: not checked
    with fj.scoped_set_flag(fj.JitFlag.Debug, True):
        with pytest.raises(AssertionError, match=r"^Assertion failure: negative \[-4, -2\] at \[1, 2\]$"):
            fj.assert_true(x >= 0, "negative {} at {i}", x, i=fj.arange(UInt32, 4))
        fj.assert_false(x > 3)
        with pytest.raises(AssertionError, match="Assertion failure!"):
            fj.assert_equal(Float(1, 2), Float(1, 3))


def test_set_thread_count_resizes_the_pool_and_results_do_not_change():
    old = fj.thread_count()
    x = fj.arange(Float64, 300_000)
    try:
        results = []
        for n in (1, 2, 3):
            fj.set_thread_count(n)
            assert fj.thread_count() == n
            results.append(float(fj.sum(fj.sqrt(x) * 2)[0]))
        assert results[0] == pytest.approx(results[1]) == pytest.approx(results[2])
        fj.set_thread_count(0)
        assert fj.thread_count() == 1
        for bad in (-1, 2.5, True):
            with pytest.raises(TypeError, match="set_thread_count"):
                fj.set_thread_count(bad)
    finally:
        fj.set_thread_count(old)


def test_log_level_maps_to_the_frostjit_logger(caplog):
    old = fj.log_level()
    logger = logging.getLogger("frostjit")
    try:
        assert old is fj.LogLevel.Warn
        fj.set_log_level(fj.LogLevel.Debug)
        assert fj.log_level() is fj.LogLevel.Debug and logger.getEffectiveLevel() == logging.DEBUG
        fj.set_log_level(3)
        assert fj.log_level() is fj.LogLevel.Info
        fj.set_log_level(fj.LogLevel.Disable)
        assert not logger.isEnabledFor(logging.CRITICAL)
        logger.setLevel(logging.ERROR)                        # set through logging: read back
        assert fj.log_level() is fj.LogLevel.Error
        with pytest.raises(TypeError, match="LogLevel"):
            fj.set_log_level("Warn")
    finally:
        fj.set_log_level(old)
        logger.setLevel(logging.NOTSET)


def test_has_backend():
    assert fj.has_backend(fj.JitBackend.LLVM) == 1 and fj.has_backend(fj.JitBackend.CUDA) == 0
    # Dr.Jit 1.5's members and values (its test_texture compares backend_v(t) with Metal)
    assert [(m.name, m.value) for m in fj.JitBackend] == [("Invalid", 0), ("CUDA", 1), ("LLVM", 2), ("Metal", 3)]
    assert fj.has_backend(fj.JitBackend.Metal) == 0
    with pytest.raises(RuntimeError):
        fj.has_backend(fj.JitBackend.Invalid)
    with pytest.raises(TypeError, match="JitBackend"):
        fj.has_backend("llvm")


def test_labels_live_on_the_variable():
    x = Float(1, 2) + 1
    x.label = "lbl"
    y = Float(x)                     # another handle on the same variable
    fj.eval(x)                       # evaluation keeps the variable (and its label)
    assert y.label == "lbl" and y.index == x.index and (x + 1).label is None
    x += 1                           # a new variable
    assert x.label is None and y.label == "lbl"
    g = ad.Float(1, 2)
    fj.enable_grad(g)
    fj.set_label(g=g)
    assert g.label == "g" and g.index_ad > 0
    v = Array3f(1, 2, 3)
    v.label = "v"                    # a static vector labels its components (and reads them back)
    assert [c.label for c in v] == ["v_0", "v_1", "v_2"] and v.label == "v"
    with pytest.raises(TypeError, match="str"):
        x.label = 3
    with pytest.raises(TypeError, match="set_label"):
        fj.set_label(x, "a", "b")


def test_whos_and_graphviz_show_live_variables_with_labels_and_edges():
    a = fj.arange(Float, 10)
    a.label = "my_input"
    b = fj.sin(a) + 2
    b.label = "my_output"
    table = fj.whos(as_string=True)
    row = next(line for line in table.splitlines() if line.rstrip().endswith("my_output"))
    assert row.split()[:3] == [str(b.index), "LLVM", "f32"] and " 10 " in row
    dot = fj.graphviz(as_string=True)
    assert dot.startswith("digraph {") and 'Label: \\"my_input\\"' in dot
    ids = {line.split()[0] for line in dot.splitlines() if "[label=" in line and "->" not in line}
    assert str(a.index) in ids and str(b.index) in ids
    edges = [line.split() for line in dot.splitlines() if "->" in line]
    assert any(e[2].rstrip(";") == str(b.index) for e in edges)
    out = io.StringIO()
    import contextlib
    with contextlib.redirect_stdout(out):
        assert fj.whos() is None
    assert "my_output" in out.getvalue()


def test_var_state_members_also_equal_frostjits_former_state_words():
    x = Float(1, 2)
    assert x.state is fj.VarState.Evaluated and x.state == "evaluated" and x.state != "literal"
    assert Float(1).state == "literal" and (x + 1).state == "unevaluated"
    assert {fj.VarState.Literal: 1}[fj.VarState.Literal] == 1
