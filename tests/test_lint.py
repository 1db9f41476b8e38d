"""The code passes ruff's checks (pyproject.toml [tool.ruff]: pyflakes, pycodestyle's bug-class errors, bugbear)."""
import pathlib
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.backend_independent("ruff on the sources")

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _ruff() -> list:
    if shutil.which("ruff"):
        return ["ruff"]
    try:
        import ruff  # noqa: F401  (installed by the test extra)
    except ImportError:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    return [sys.executable, "-m", "ruff"]


def test_ruff_finds_nothing():
    result = subprocess.run(_ruff() + ["check", "--no-cache", "--output-format", "concise", str(ROOT)],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
