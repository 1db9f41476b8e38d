"""Fixtures shared by the plan-cache tests."""
import pytest

from frostjit.schedule import plans


@pytest.fixture(params=[10**9, 0], ids=["interpreted", "generated"])
def checker(request, monkeypatch):
    """Reuses checked by plan_check.check, or by checkers generated with the plans."""
    monkeypatch.setattr(plans, "COMPILE_AFTER", request.param)
    plans.clear()
    return request.param
