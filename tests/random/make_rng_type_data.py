"""Record Dr.Jit 1.5's answers for ``rng_type_cases.py`` (needs drjit; runs it in a subprocess).

    python tests/random/make_rng_type_data.py      # rewrite data/drjit_1_5_rng_types.json
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "drjit_1_5_rng_types.json"

CHILD = """
import json, sys
sys.path.insert(0, {here!r})
import drjit, drjit.llvm
import rng_type_cases
print(json.dumps(rng_type_cases.run(drjit, drjit.llvm)))
"""


def main() -> None:
    env = dict(os.environ)
    if "DRJIT_LIBLLVM_PATH" not in env:     # Debian's default LLVM crashes Dr.Jit on this CPU
        found = glob.glob("/usr/lib/*/libLLVM-19.so*")
        if found:
            env["DRJIT_LIBLLVM_PATH"] = found[0]
    r = subprocess.run([sys.executable, "-c", CHILD.format(here=str(HERE))], capture_output=True, text=True,
                       env=env, check=True)
    data = {"drjit_version": "1.5", "cases": json.loads(r.stdout)}
    DATA.write_text(json.dumps(data, indent=0) + "\n")
    print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
