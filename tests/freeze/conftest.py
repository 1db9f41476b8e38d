"""Frozen-function tests: flush pending work after each test; check every binder hit."""
import pytest

import frostjit as fj
from frostjit.freeze import frozen


@pytest.fixture(autouse=True)
def _no_pending_state():
    yield
    fj.eval()


@pytest.fixture(autouse=True)
def _verify_binders(monkeypatch):
    # Every call that a generated binder answers is also walked in full: the binder must find
    # exactly the key, nodes, sizes, leaves and containers the layout walk finds.
    monkeypatch.setattr(frozen, "VERIFY_BINDERS", True)
    yield
