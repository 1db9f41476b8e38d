"""Shared test configuration: the hypothesis profiles, and the backend the suite runs on.

``ci`` (the default): bounded examples, no deadline, seeds printed so a failure
reproduces with ``--hypothesis-seed``.  ``dev``: the same, fewer examples, for
quick local runs.  ``stress``: many more examples, for a long hunt before a
release.  Choose with ``HYPOTHESIS_PROFILE``; ``HYPOTHESIS_SCALE`` multiplies the counts that
tests set themselves.

``--backend llvm|reference`` (default: ``$FROSTJIT_BACKEND``, else ``llvm``) chooses the CPU
backend; ``@pytest.mark.llvm_only("why")`` marks tests skipped on the reference backend, and
``@pytest.mark.backend_independent("why")`` tests that never reach a CPU backend (they run once,
in the LLVM run, which checks that they indeed never call one).
"""
import importlib
import os

import pytest
from hypothesis import HealthCheck, settings, Verbosity

settings.register_profile(
    "ci", max_examples=25, deadline=None, print_blob=True, derandomize=False,
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

# ``HYPOTHESIS_SCALE=k`` (a local bug hunt only, never CI): multiplies a test's own
# ``@settings(max_examples=N)`` by k, which no profile reaches (the stress profile leaves those
# ~80 tests at their N).  Set here, before any test module's decorators build their settings.
_SCALE = float(os.environ.get("HYPOTHESIS_SCALE", "1"))
if _SCALE != 1:
    _settings_init = settings.__init__

    def _scaled_init(self, parent=None, **kwargs):
        if "max_examples" in kwargs:
            kwargs["max_examples"] = max(1, round(kwargs["max_examples"] * _SCALE))
        _settings_init(self, parent, **kwargs)

    settings.__init__ = _scaled_init


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
    config.addinivalue_line("markers", "backend_independent(reason): never reaches a CPU backend (dispatch, "
                                       "the scalar arrays, docs, lint): runs once, in the LLVM run, which "
                                       "fails it if it calls a backend; skipped on the reference backend")
    backend = config.getoption("--backend") or os.environ.get("FROSTJIT_BACKEND") or "llvm"
    # Before any test imports frostjit; subprocesses the tests start inherit it.
    os.environ["FROSTJIT_BACKEND"] = backend


def pytest_report_header(config):
    return f"frostjit backend: {os.environ['FROSTJIT_BACKEND']}"


def _reason(mark) -> str:
    return mark.args[0] if mark.args else mark.kwargs.get("reason", "")


# The widest width the freeze, optimizer and control-flow tests run at (above the LLVM backend's
# multi-thread threshold).  On the reference backend, NumPy interprets every kernel op by op:
# those cases took ~4.5 of the reference run's ~27 CPU minutes and exercise no path of the
# interpreter that the narrower widths of the same test do not, so they run in the LLVM run only.
WIDEST = "100003"


def pytest_collection_modifyitems(config, items):
    if os.environ["FROSTJIT_BACKEND"] == "llvm":
        return
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and WIDEST in callspec.id.split("-"):
            item.add_marker(pytest.mark.skip(reason=f"width {WIDEST}: run with the LLVM backend"))
            continue
        mark = item.get_closest_marker("llvm_only")
        if mark is not None:
            item.add_marker(pytest.mark.skip(reason=f"LLVM backend only: {_reason(mark)}"))
            continue
        mark = item.get_closest_marker("backend_independent")
        if mark is not None:
            # The same code runs on either backend: the LLVM run covers it (and checks the claim).
            item.add_marker(pytest.mark.skip(reason=f"backend-independent, run with the LLVM backend: "
                                                    f"{_reason(mark)}"))


# -- backend_independent is checked, not trusted ---------------------------------------------
# In the run where a backend_independent test runs, every method of the backend interface
# (frostjit.backend.base.Backend: memory, compile, launch, reductions, ...) of both backends
# counts its calls; a test that made any fails, so a test that evaluates arrays cannot be
# skipped on the reference backend by mistake.
def _backend_classes() -> list:
    # Imported here, not at the top: frostjit must not be imported before pytest_configure has
    # set FROSTJIT_BACKEND (its backend is chosen from it).
    from frostjit.backend import IMPLEMENTATIONS
    return [getattr(importlib.import_module(module), name) for module, name in IMPLEMENTATIONS.values()]


def _interface_methods() -> list:
    from frostjit.backend.base import Backend
    return [name for name, v in vars(Backend).items() if callable(v) and not name.startswith("_")]


@pytest.fixture(autouse=True)
def _backend_independent_check(request, monkeypatch):
    mark = request.node.get_closest_marker("backend_independent")
    if mark is None:
        yield
        return
    calls = []
    for cls in _backend_classes():
        for name in _interface_methods():
            original = getattr(cls, name)

            def counted(*args, _original=original, _where=f"{cls.__name__}.{name}", **kwargs):
                calls.append(_where)
                return _original(*args, **kwargs)
            monkeypatch.setattr(cls, name, counted)
    yield
    if calls:
        pytest.fail(f"marked backend_independent ({_reason(mark)}) but called the backend: "
                    f"{', '.join(sorted(set(calls)))}", pytrace=False)


@pytest.fixture(autouse=True)
def _no_kernel_history_leak():
    """After each test, the kernel history is off and empty: many tests turn it on, and an entry
    one leaves behind (a launch after its last query) would reach whichever test of the same
    process (pytest-xdist runs several files in one) reads the history next."""
    yield
    import sys
    fj = sys.modules.get("frostjit")
    if fj is not None and hasattr(fj, "kernel_history"):
        fj.set_flag(fj.JitFlag.KernelHistory, False)
        fj.kernel_history()         # (a query empties it)
