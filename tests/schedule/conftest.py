"""Fixtures shared by the plan-cache tests."""
import pytest

from frostjit.schedule import evaluate as ev, plans


@pytest.fixture(params=[10**9, 0], ids=["interpreted", "generated"])
def checker(request, monkeypatch):
    """Reuses checked by plan_check.check, or by checkers generated with the plans."""
    monkeypatch.setattr(plans, "COMPILE_AFTER", request.param)
    plans.clear()
    return request.param


@pytest.fixture
def builds(monkeypatch):
    """Counts the specs built (by the plan cache, or by the evaluation for a graph it does not cover)."""
    count = [0]
    real = plans.build_kernel

    def counting(outputs, effects):
        count[0] += 1
        return real(outputs, effects)
    monkeypatch.setattr(plans, "build_kernel", counting)
    monkeypatch.setattr(ev, "build_kernel", counting)
    plans.clear()
    return count
