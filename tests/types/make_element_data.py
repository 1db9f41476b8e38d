"""Record (or compare live) Dr.Jit 1.5's results of the element-type cases (``element_cases.py``).

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so python tests/types/make_element_data.py
        # rewrite data/drjit_1_5_elements.npz (needs drjit)
    python tests/types/make_element_data.py --live      # compare frostjit and Dr.Jit now, lane by lane

Each JIT runs in its own subprocess (``--child drjit|frostjit``): they link different LLVMs
and must never share a process.  The ``.npz`` holds, per exact case, the SHA-256 digest of
Dr.Jit's result on every half bit pattern (65,536 lanes) and its full result on a 4,096-lane
sample; per transcendental case the sample results (``test_element_anchor.py`` reads them).
"""
from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = HERE / "data" / "drjit_1_5_elements.npz"
sys.path.insert(0, str(HERE))

import element_cases as C  # noqa: E402
from element_cases import digest, same_bits  # noqa: E402


def run_child(system: str) -> dict:
    """Evaluate every case with ``system`` (in this process) and return the results."""
    if system == "drjit":
        os.environ.setdefault("DRJIT_LIBLLVM_PATH", "/usr/lib/x86_64-linux-gnu/libLLVM-19.so")
        import drjit as J
        import drjit.llvm as T
    else:
        import frostjit as J
        import frostjit.llvm as T
    out = {"all": {}, "sample": {}}
    full = C.inputs("all")
    out["all"] = {k: digest(v) for k, v in C.evaluate(J, T, full, C.EXACT).items()}
    sample = C.inputs("sample")
    out["sample"] = C.evaluate(J, T, sample, {**C.EXACT, **C.MATH, **C.REDUCTIONS})
    # the full results too, for the live comparison (not stored in the data file)
    out["all_values"] = C.evaluate(J, T, full, C.EXACT)
    return out


def spawn(system: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "out.pkl"
        subprocess.run([sys.executable, __file__, "--child", system, "--out", str(path)], check=True, env=env)
        with open(path, "rb") as f:
            return pickle.load(f)


def compare(dj: dict, fj: dict) -> int:
    """Print the cases where frostjit differs from Dr.Jit; the number of failing exact cases."""
    bad = 0
    full = C.inputs("all")
    for name in C.EXACT:
        a, b = dj["all_values"][name], fj["all_values"][name]
        if isinstance(a, str) or isinstance(b, str):
            if not (isinstance(a, str) and isinstance(b, str)):
                print(f"{name}: Dr.Jit {a if isinstance(a, str) else 'ok'}, frostjit {b if isinstance(b, str) else 'ok'}")
                bad += 1
            continue
        ok = same_bits(a, b) if a.shape == b.shape and a.dtype == b.dtype else np.zeros(1, bool)
        if not ok.all():
            bad += 1
            k = int(np.flatnonzero(~ok)[0]) if ok.shape == a.shape else 0
            ins = {n: full[n][k] for n in ("h0", "h1", "h2", "d", "i0", "u0")}
            print(f"{name}: {np.count_nonzero(~ok)} lanes differ (dtypes {a.dtype}/{b.dtype}); first lane {k}: "
                  f"Dr.Jit {a.flat[k]!r}, frostjit {b.flat[k]!r}, inputs {ins}")
    print(f"exact cases: {len(C.EXACT) - bad} of {len(C.EXACT)} identical on all {len(full['h0'])} lanes")
    for name in list(C.MATH) + list(C.REDUCTIONS):
        a, b = dj["sample"][name], fj["sample"][name]
        if isinstance(a, str) or isinstance(b, str):
            print(f"{name}: Dr.Jit {a if isinstance(a, str) else 'ok'}, frostjit {b if isinstance(b, str) else 'ok'}")
            continue
        same = same_bits(a, b)
        print(f"{name}: {same.mean() * 100:.2f}% of lanes identical")
    return bad


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--live", action="store_true", help="compare frostjit and Dr.Jit now")
    p.add_argument("--child", choices=["drjit", "frostjit"], help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        with open(args.out, "wb") as f:
            pickle.dump(run_child(args.child), f)
        return 0
    dj = spawn("drjit")
    if args.live:
        return 1 if compare(dj, spawn("frostjit")) else 0
    arrays = {}
    for name, d in dj["all"].items():
        arrays[f"all/{name}"] = np.array(d)
    for name, v in dj["sample"].items():
        arrays[f"sample/{name}"] = np.array(v) if not isinstance(v, str) else np.array(v)
    DATA.parent.mkdir(exist_ok=True)
    np.savez_compressed(DATA, **arrays)
    print(f"wrote {DATA} ({DATA.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
