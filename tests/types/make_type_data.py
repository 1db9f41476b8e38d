"""Record (or compare live) Dr.Jit 1.5's answers to the array-type cases (``type_cases.py``).

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so python tests/types/make_type_data.py
        # rewrite data/drjit_1_5_types.json (needs drjit)
    python tests/types/make_type_data.py --live      # print the cases where frostjit differs now

The JSON holds every case's result and, for every type of ``drjit.llvm`` and
``drjit.llvm.ad`` (but tensors, textures and random generators), its ``value_t``,
``size_v``, ``depth_v``, ``type_v`` and ``is_matrix_v``/``is_complex_v``/
``is_quaternion_v``/``is_dynamic_v``, which ``test_type_anchor.py`` checks frostjit's types
against.  Each JIT runs in its own subprocess (never both LLVMs in one process).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = HERE / "data" / "drjit_1_5_types.json"
sys.path.insert(0, str(HERE))

import type_cases as C  # noqa: E402
from type_compare import differences  # noqa: E402

_SKIP = ("Tensor", "Texture", "PCG32", "Philox4x32", "Event")


def drjit_types(dr) -> dict:
    """Dr.Jit's metadata of every array type of ``drjit.llvm`` / ``drjit.llvm.ad``."""
    import drjit.llvm
    import drjit.llvm.ad
    out = {}
    for modname, mod in (("llvm", drjit.llvm), ("llvm.ad", drjit.llvm.ad)):
        for name in sorted(dir(mod)):
            t = getattr(mod, name)
            if name.startswith("_") or not isinstance(t, type) or name.startswith(_SKIP):
                continue
            out[f"{modname}.{name}"] = {
                "name": t.__name__, "value_t": dr.value_t(t).__name__, "size_v": dr.size_v(t),
                "depth_v": dr.depth_v(t), "type_v": str(dr.type_v(t)).split(".")[-1],
                "matrix": dr.is_matrix_v(t), "complex": dr.is_complex_v(t), "quaternion": dr.is_quaternion_v(t),
                "dynamic": dr.is_dynamic_v(t), "diff": dr.is_diff_v(t),
            }
    return out


def run_child(system: str) -> dict:
    if system == "drjit":
        os.environ.setdefault("DRJIT_LIBLLVM_PATH", "/usr/lib/x86_64-linux-gnu/libLLVM-19.so")
        import drjit as J
        import drjit.llvm as T
    else:
        import frostjit as J
        import frostjit.llvm as T
    ns = C.namespace(J, T)
    out = {"cases": {g: {name: C.run(expr, ns, J) for name, expr in cases.items()} for g, cases in C.GROUPS.items()},
           "random": C.run_random(ns)}
    if system == "drjit":
        out["types"] = drjit_types(J)
        out["drjit_version"] = J.__version__
    return out


def spawn(system: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "out.json"
        subprocess.run([sys.executable, __file__, "--child", system, "--out", str(path)], check=True, env=env)
        return json.loads(path.read_text())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--live", action="store_true", help="compare frostjit and Dr.Jit now")
    p.add_argument("--child", choices=["drjit", "frostjit"], help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        Path(args.out).write_text(json.dumps(run_child(args.child)))
        return 0
    dj = spawn("drjit")
    if args.live:
        fj = spawn("frostjit")
        bad = 0
        for group, cases in C.GROUPS.items():
            for name in cases:
                why = differences(group, name, fj["cases"][group][name], dj["cases"][group][name])
                if why:
                    bad += 1
                    print(f"{group}/{name}: {why}")
        for name, d in dj["random"]["exact"].items():
            if fj["random"]["exact"][name] != d:
                bad += 1
                print(f"random/{name}: not bit-identical")
        for name, d in dj["random"]["close"].items():
            why = differences("random", name, fj["random"]["close"][name], d)
            if why:
                bad += 1
                print(f"random/{name}: {why}")
        print(f"{bad} cases differ")
        return 1 if bad else 0
    DATA.parent.mkdir(exist_ok=True)
    DATA.write_text(json.dumps(dj, indent=0, sort_keys=True))
    print(f"wrote {DATA} ({DATA.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
