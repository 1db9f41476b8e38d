"""Fixtures of the dispatch tests: plum's output for a module's reference programs."""

import pytest

from plum_reference import PLUM_AVAILABLE, run_plum


@pytest.fixture(scope="module")
def plum_outputs(request):
    """``{case name: output}`` of the test module's ``CASES`` run under plum (one subprocess)."""
    if not PLUM_AVAILABLE:
        pytest.skip("plum is not installed")
    return run_plum({name: case.source for name, case in request.module.CASES.items()})
