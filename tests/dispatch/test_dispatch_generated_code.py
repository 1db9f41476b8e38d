"""The generated call paths are code you can read: linecache, readable names, FROSTJIT_DUMP."""

import linecache
import os
import traceback
from typing import Literal

import pytest

from frostjit.dispatch import Dispatcher

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")


def test_tracebacks_show_the_lines_of_the_generated_call_path():
    d = Dispatcher()

    @d
    def boom(x: int):
        raise ValueError("boom")

    for _ in range(2):  # the miss, then the cached path
        try:
            boom(1)
        except ValueError:
            text = traceback.format_exc()
        assert "frostjit.dispatch: the call path of" in text
        assert "return resolve((a0,))(a0)" in text or "return decisions[type(a0)](a0)" in text


def test_generated_code_is_named_after_the_dispatched_function():
    d = Dispatcher()

    @d
    def area(x: int, y: int):
        return x * y

    area(2, 3)
    code = area.__code__
    assert code.co_name == "area"
    assert code.co_qualname.endswith("area")
    lines = linecache.getlines(code.co_filename)
    assert any("decisions[type(a0)][type(a1)](a0, a1)" in line for line in lines)


def test_value_decisions_are_generated_code_with_source_lines():
    d = Dispatcher()

    @d
    def mode(x: Literal["fast"], y: int):
        return "fast"

    @d
    def mode(x: str, y: int):
        return "other"

    assert mode("fast", 1) == "fast" and mode("slow", 1) == "other"
    entry = mode._dispatch_state.decisions.live[str][int]
    assert any("decided_by_value[a0]" in line for line in linecache.getlines(entry.__code__.co_filename))


def test_frostjit_dump_writes_the_generated_source(tmp_path, monkeypatch):
    monkeypatch.setenv("FROSTJIT_DUMP", str(tmp_path))
    d = Dispatcher()

    @d
    def dumped(x: int, y: int):
        raise KeyError("from the method")

    files = sorted((tmp_path / "dispatch").glob("*.py"))
    assert files, "nothing dumped"
    assert dumped.__code__.co_filename in {str(f) for f in files}
    src = open(dumped.__code__.co_filename).read()
    assert "def dumped(" in src and "decisions[type(a0)][type(a1)](a0, a1)" in src
    with pytest.raises(KeyError):
        dumped(1, 2)
    try:
        dumped(1, 2)
    except KeyError:
        assert dumped.__code__.co_filename in traceback.format_exc()
    assert os.environ["FROSTJIT_DUMP"] == str(tmp_path)


def test_same_shape_reuses_one_linecache_entry():
    before = set(linecache.cache)
    for _ in range(20):
        d = Dispatcher()

        @d
        def same(x: int):
            return x

        same(1)
    new = [k for k in set(linecache.cache) - before if "same" in k]
    assert len(new) <= 3  # one per shape the function went through, not one per function
