"""tools/api_coverage.py: docs/api_coverage.md is up to date and every gap has a reason."""
from __future__ import annotations

import importlib.util
import os

import pytest

pytestmark = pytest.mark.backend_independent("the API coverage report")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tool():
    spec = importlib.util.spec_from_file_location("api_coverage", os.path.join(ROOT, "tools", "api_coverage.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_api_coverage_doc_is_up_to_date():
    tool = _tool()
    assert tool.main(["--check"]) == 0, "docs/api_coverage.md is stale: run python tools/api_coverage.py"


def test_every_missing_drjit_name_has_a_recorded_reason():
    tool = _tool()
    names, reasons = tool.load()
    cov = tool.coverage(names, reasons)
    unexplained = {m: c["missing"][tool.NO_REASON] for m, c in cov.items() if tool.NO_REASON in c["missing"]}
    assert not unexplained, f"add these to tools/data/api_gap_reasons.json: {unexplained}"


def test_coverage_counts_present_names_from_the_package():
    tool = _tool()
    names = {"drjit_version": "x", "modules": {"drjit": {"pi": "constant", "no_such_name": "function"},
                                               "drjit.nothere": {"A": "class"}}}
    reasons = [{"modules": ["drjit"], "names": ["no_*"], "reason": "R"}]
    cov = tool.coverage(names, reasons)
    assert cov["drjit"]["present"] == ["pi"] and cov["drjit"]["missing"] == {"R": ["no_such_name"]}
    assert cov["drjit.nothere"]["module"] is False
    assert cov["drjit.nothere"]["missing"] == {tool.NO_REASON: ["A"]}
    assert "| `drjit` | `frostjit` | 1 of 2 | 1 |" in tool.render(cov, "x")


def test_a_frostjit_subpackage_does_not_count_as_drjits_function_of_the_same_name():
    tool = _tool()
    # (frostjit.tree is a subpackage; fj.trace, once the package frostjit.trace, is the matrix trace now)
    names = {"drjit_version": "x", "modules": {"drjit": {"tree": "function", "llvm": "module"}}}
    cov = tool.coverage(names, [])
    assert cov["drjit"]["present"] == ["llvm"] and cov["drjit"]["missing"] == {tool.NO_REASON: ["tree"]}
