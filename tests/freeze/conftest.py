"""Frozen-function tests: flush pending work after each test."""
import pytest

import frostjit as fj


@pytest.fixture(autouse=True)
def _no_pending_state():
    yield
    fj.eval()
