"""Shared test configuration: the hypothesis profiles, and the backend the suite runs on.

``ci`` (the default): bounded examples, no deadline, seeds printed so a failure
reproduces with ``--hypothesis-seed``.  ``dev``: the same, fewer examples, for
quick local runs.  ``stress``: many more examples, for a long hunt before a
release.  Choose with ``HYPOTHESIS_PROFILE``.

``--backend llvm|reference`` (default: ``$FROSTJIT_BACKEND``, else ``llvm``) chooses the CPU
backend; ``@pytest.mark.llvm_only("why")`` marks tests skipped on the reference backend.
"""
import os

import pytest
from hypothesis import HealthCheck, settings, Verbosity

settings.register_profile(
    "ci", max_examples=40, deadline=None, print_blob=True, derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    verbosity=Verbosity.normal,
)
settings.register_profile(
    "dev", max_examples=15, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "stress", max_examples=400, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# -- the backend the suite runs on ------------------------------------------------------------
# ``pytest --backend reference`` (or FROSTJIT_BACKEND=reference) runs the whole suite on the NumPy
# reference backend; the README's test command runs it once per backend.  Tests of what only
# the LLVM backend has (its IR, kernel caches, code generation, thread pool, vectorized math)
# carry ``@pytest.mark.llvm_only("why")`` and are skipped there, with that reason.
BACKENDS = ("llvm", "reference")


def pytest_addoption(parser):
    parser.addoption("--backend", choices=BACKENDS, default=None,
                     help="the CPU backend to run the tests on (default: $FROSTJIT_BACKEND, else llvm)")


def pytest_configure(config):
    config.addinivalue_line("markers", "llvm_only(reason): tests a part only the LLVM backend has; "
                                       "skipped on the reference backend")
    backend = config.getoption("--backend") or os.environ.get("FROSTJIT_BACKEND") or "llvm"
    # Before any test imports frostjit; subprocesses the tests start inherit it.
    os.environ["FROSTJIT_BACKEND"] = backend


def pytest_report_header(config):
    return f"frostjit backend: {os.environ['FROSTJIT_BACKEND']}"


def pytest_collection_modifyitems(config, items):
    if os.environ["FROSTJIT_BACKEND"] == "llvm":
        return
    for item in items:
        mark = item.get_closest_marker("llvm_only")
        if mark is not None:
            why = mark.args[0] if mark.args else mark.kwargs.get("reason", "")
            item.add_marker(pytest.mark.skip(reason=f"LLVM backend only: {why}"))
