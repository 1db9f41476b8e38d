"""Record Dr.Jit 1.5's answers to the scalar-backend cases (``scalar_cases.py``).

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so python tests/scalar/make_scalar_data.py
        # rewrite data/drjit_1_5_scalar.json (needs drjit)
    python tests/scalar/make_scalar_data.py --live     # print the cases where frostjit differs now

Each system runs in its own subprocess (never both LLVMs in one process).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "drjit_1_5_scalar.json"

_CHILD = """
import json, sys, warnings
import numpy as np
sys.path.insert(0, {here!r})
warnings.simplefilter("ignore")
import {pkg} as dr
import {pkg}.scalar as s
import scalar_cases
print(json.dumps(scalar_cases.run(dr, s, np)))
"""


def answers(pkg: str) -> list:
    """The answers of ``pkg`` (``drjit`` or ``frostjit``), computed in a subprocess."""
    code = _CHILD.format(here=str(HERE), pkg=pkg)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                       check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--live", action="store_true", help="compare frostjit with the recorded answers")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    import scalar_cases
    if args.live:
        recorded = json.loads(DATA.read_text())
        mine = answers("frostjit")
        for case, got in zip(scalar_cases.CASES, mine):
            want = recorded.get(case)
            if want is not None and want != got:
                print(f"{case}\n    drjit:    {want}\n    frostjit: {got}")
        return
    DATA.write_text(json.dumps(dict(zip(scalar_cases.CASES, answers("drjit"))), indent=1) + "\n")
    print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
