"""Every optimizer's trajectory against Dr.Jit 1.5's, 100 steps on the same problem.

The Dr.Jit trajectories are test data (tests/opt/data/drjit_trajectories.npz), recorded by
tests/opt/make_drjit_trajectories.py on tests/opt/trajectory_problem.py; the last test re-runs
that script when drjit is installed and checks the data is current.  Most configurations agree
bit for bit; those marked ``roundoff`` (with the reason) to float32 round-off.
"""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import UInt32
from frostjit.llvm.ad import Float, Array3f

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "drjit_trajectories.npz")
sys.path.insert(0, HERE)
import trajectory_problem as problem    # noqa: E402

TYPES = {"Float": Float, "UInt32": UInt32, "Array3f": Array3f}
EPS32 = float(np.finfo(np.float32).eps)


@pytest.fixture(scope="module")
def recorded():
    with np.load(DATA) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("name", list(problem.CONFIGS))
def test_trajectory_matches_drjit(name, recorded):
    got = problem.run(fj, fj.opt, TYPES, name)
    assert set(got) == {k.split("/")[1] for k in recorded if k.startswith(name + "/")}
    for key, traj in got.items():
        want = recorded[f"{name}/{key}"]
        assert traj.shape == want.shape
        if problem.CONFIGS[name][2].get("roundoff"):
            # float32 round-off: a few ulps of the parameters' scale, over all 100 steps
            np.testing.assert_allclose(traj, want, rtol=0, atol=4 * EPS32 * np.abs(want).max(),
                                       err_msg=f"{name}: {key}")
        else:
            np.testing.assert_array_equal(traj, want, err_msg=f"{name}: {key}")


def _drjit_available() -> bool:
    try:
        found = subprocess.run([sys.executable, "-c", "import drjit"], capture_output=True, timeout=120,
                               env=_drjit_env())
    except (OSError, subprocess.TimeoutExpired):
        return False
    return found.returncode == 0


def _drjit_env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)                 # the child imports drjit, never frostjit
    if "DRJIT_LIBLLVM_PATH" not in env:
        libs = sorted(glob.glob("/usr/lib/*/libLLVM-19.so*"))
        if libs:
            env["DRJIT_LIBLLVM_PATH"] = libs[0]
    return env


def test_recorded_trajectories_are_those_drjit_computes(tmp_path, recorded):
    if not _drjit_available():
        pytest.skip("drjit is not installed (the recorded trajectories are used as they are)")
    out = tmp_path / "fresh.npz"
    subprocess.run([sys.executable, os.path.join(HERE, "make_drjit_trajectories.py"), str(out)], check=True,
                   capture_output=True, timeout=600, env=_drjit_env())
    with np.load(out) as fresh:
        assert set(fresh.files) == set(recorded)
        for k in fresh.files:
            # Recorded on an AVX-512 CPU; elsewhere Dr.Jit's own float32 arithmetic (rsqrt, fused
            # multiply-adds) may round differently: the same tolerance as frostjit's comparison.
            want = recorded[k]
            if want.dtype.kind != "f":
                np.testing.assert_array_equal(fresh[k], want, err_msg=k)
                continue
            np.testing.assert_allclose(fresh[k], want, rtol=0, atol=4 * EPS32 * max(np.abs(want).max(), 1e-30),
                                       err_msg=k)
