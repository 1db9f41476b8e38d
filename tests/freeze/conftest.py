"""Frozen-function tests: flush pending work after each test; check every binder hit; every
replay runs in checking mode (compared with the plain call), except in tests marked
``no_freeze_check`` (they count what a replay does, and the checking call would add to it)."""
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


def pytest_configure(config):
    config.addinivalue_line("markers", "no_freeze_check: run frozen functions without checking mode")


@pytest.fixture(autouse=True)
def _check_every_replay(request, monkeypatch):
    # Checking mode (FROSTJIT_FREEZE_CHECK): each replay is compared with a plain call, so a stale
    # replay anywhere in these tests raises FreezeMismatchError.
    if request.node.get_closest_marker("no_freeze_check") is None:
        monkeypatch.setattr(frozen, "CHECK", True)
    yield
