"""tests/conftest.py's backend markers: ``backend_independent`` tests are skipped on the reference
backend, and fail on the LLVM backend if they call a backend (the claim is checked, not trusted)."""
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The suite itself (in a subprocess) chooses each backend explicitly: the same on both runs.
pytestmark = pytest.mark.backend_independent("starts pytest on each backend itself")

PROBE = '''
import pytest
import frostjit as fj

@pytest.mark.backend_independent("probe")
def test_evaluates_an_array():
    fj.eval(fj.llvm.Float([1, 2, 3]) + 1)

@pytest.mark.backend_independent("probe")
def test_pure_python():
    assert sorted([3, 1, 2]) == [1, 2, 3]

def test_unmarked_evaluates_an_array():
    fj.eval(fj.llvm.Float([1, 2, 3]) + 1)
'''


def _pytest(folder, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    env.pop("FROSTJIT_BACKEND", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(folder), *args],
                          capture_output=True, text=True, cwd=str(folder), env=env, timeout=300)


@pytest.fixture(scope="module")
def probe_suite(tmp_path_factory):
    folder = tmp_path_factory.mktemp("markers")
    shutil.copy(os.path.join(REPO, "tests", "conftest.py"), folder / "conftest.py")
    (folder / "test_probe.py").write_text(PROBE)
    return folder


def test_backend_independent_test_that_calls_the_backend_fails_on_llvm(probe_suite):
    r = _pytest(probe_suite, "--backend", "llvm")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "3 passed, 1 error" in r.stdout, r.stdout       # the error: the marked test that evaluated
    assert "marked backend_independent (probe) but called the backend: LLVMBackend." in r.stdout


def test_backend_independent_tests_are_skipped_on_reference(probe_suite):
    r = _pytest(probe_suite, "--backend", "reference")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed, 2 skipped" in r.stdout, r.stdout
    assert "backend-independent, run with the LLVM backend: probe" in r.stdout
