"""The demos' timing helpers: medians over repeats, interleaving, and ratios that admit noise."""
import pytest
from hypothesis import given, strategies as st

from frostjit.demo import _timing
from frostjit.demo._timing import Samples

times = st.lists(st.floats(1e-6, 1.0, allow_nan=False), min_size=1, max_size=9)


def test_interleaved_runs_warm_up_then_alternates_blocks():
    calls = []
    runners = {"a": lambda k: calls.append(("a", k)), "b": lambda k: calls.append(("b", k))}
    out = _timing.time_interleaved(runners, repeats=3, steps=5, warmup=2)
    assert calls == [("a", 2), ("b", 2)] + [("a", 5), ("b", 5)] * 3
    assert set(out) == {"a", "b"} and all(len(s.values) == 3 for s in out.values())
    assert all(v >= 0 for s in out.values() for v in s.values)


def test_interleaved_rejects_empty_measurements():
    with pytest.raises(ValueError, match="repeats"):
        _timing.time_interleaved({"a": lambda k: None}, repeats=0, steps=5)
    with pytest.raises(ValueError, match="steps"):
        _timing.time_interleaved({"a": lambda k: None}, repeats=3, steps=0)


def test_ratio_is_paired_by_repeat():
    # repeat by repeat, num is 2x den although their ranges overlap (load changed between repeats)
    num, den = Samples((2.0, 4.0, 8.0)), Samples((1.0, 2.0, 4.0))
    assert _timing.ratio(num, den) == (2.0, 2.0, 2.0)
    assert _timing.ratio_text(num, den) == "2.00x (2.00-2.00)"


def test_ratio_whose_range_contains_one_is_reported_as_noise():
    """Regression: the fit demo printed '0.7x faster frozen' from one noisy sample."""
    num, den = Samples((0.7, 1.3, 1.1)), Samples((1.0, 1.0, 1.0))
    assert not _timing.is_clear(num, den)
    assert _timing.ratio_text(num, den) == "~1x (0.70-1.30)"


@given(times, times)
def test_ratio_text_states_a_direction_only_when_every_repeat_agrees(a, b):
    n = min(len(a), len(b))
    num, den = Samples(tuple(a[:n])), Samples(tuple(b[:n]))
    rs = [x / y for x, y in zip(num.values, den.values)]
    text = _timing.ratio_text(num, den)
    if all(r > 1 for r in rs) or all(r < 1 for r in rs):
        assert not text.startswith("~") and text.endswith(f"({min(rs):.2f}-{max(rs):.2f})")
    else:
        assert text.startswith("~1x")


@given(times)
def test_median_is_the_middle_value(v):
    s = Samples(tuple(v))
    below = sum(x < s.median for x in v)
    above = sum(x > s.median for x in v)
    assert below <= len(v) // 2 and above <= len(v) // 2


def test_table_and_note_layout():
    t = _timing.table(["grid", "ms"], [["256 x 256", "0.1"], ["2048 x 2048", "12.5"]])
    lines = t.splitlines()
    assert lines[0].startswith("  grid") and set(lines[1].strip()) <= {"-", " "}
    assert lines[2].endswith(" 0.1") and lines[3].endswith("12.5")
    note = _timing.note("word " * 60, width=40)
    assert all(len(x) <= 40 for x in note.splitlines()) and note.startswith("  word")
    assert _timing.ms(Samples((0.0123456,))) == "12.3" and _timing.ms(2.5) == "2500"
