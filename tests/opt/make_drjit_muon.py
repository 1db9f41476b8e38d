"""Record Dr.Jit 1.5's Muon trajectories on tests/opt/muon_problem.py (the test data of
tests/opt/test_muon.py).

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so python tests/opt/make_drjit_muon.py [OUT.npz]

Imports drjit only (never frostjit: two LLVMs in one process clash).  Writes
tests/opt/data/drjit_muon.npz by default: ``<config>/W`` and ``<config>/V``, one matrix per step.
"""
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if "DRJIT_LIBLLVM_PATH" not in os.environ:
    found = sorted(glob.glob("/usr/lib/*/libLLVM-19.so*"))
    if found:
        os.environ["DRJIT_LIBLLVM_PATH"] = found[0]

import numpy as np          # noqa: E402
import drjit as dr          # noqa: E402
import drjit.opt            # noqa: E402
from drjit.llvm.ad import TensorXf   # noqa: E402

sys.path.insert(0, HERE)
import muon_problem as problem    # noqa: E402


def main(out: str) -> None:
    data = {"drjit_version": np.array(dr.__version__)}
    for name in problem.CONFIGS:
        for key, traj in problem.run(dr, drjit.opt, TensorXf, name).items():
            data[f"{name}/{key}"] = traj
    np.savez_compressed(out, **data)
    print(f"wrote {out}: {len(problem.CONFIGS)} configurations, {problem.STEPS} steps, Dr.Jit {dr.__version__}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "data", "drjit_muon.npz"))
