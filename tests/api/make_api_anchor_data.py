"""Record Dr.Jit 1.5's answers to the cases of ``api_anchor_cases.py`` in ``data/drjit_1_5_api.json``.

Run it from a checkout where ``drjit`` is installed::

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so python tests/api/make_api_anchor_data.py

The cases run in a child process that imports drjit and never frostjit (two LLVMs must not
share a process); this process only writes the file.  The tests (``test_api_anchor.py``)
evaluate the same cases with frostjit and compare.
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "drjit_1_5_api.json")


def child() -> dict:
    """Run every case with drjit (in this process) and return the results."""
    sys.path.insert(0, HERE)
    import drjit as dr
    import drjit.llvm
    import drjit.llvm.ad
    import drjit.scalar  # noqa: F401
    import api_anchor_cases as C

    ns = C.namespace(dr)
    # Trait results as a table: one row per type / object, one column per trait of C.TRAITS.
    out: dict = {"drjit_version": dr.__version__, "columns": list(C.TRAITS), "types": {}, "objects": {}}
    type_paths = []
    for name in sorted(dir(dr.llvm)):
        # aliases (Float32 of Float) once, under the name describe() gives them
        if not name.startswith("_") and isinstance(getattr(dr.llvm, name), type) \
                and C.type_name(getattr(dr.llvm, name), dr) == f"T:llvm.{name}":
            type_paths.append(f"llvm.{name}")
    type_paths += [f"llvm.ad.{n}" for n in C.AD_TYPES] + [f"scalar.{n}" for n in C.SCALAR_TYPES]
    for path in type_paths:
        ns["T"] = C.resolve(path, dr)
        out["types"][path] = [C.run(f"dr.{t}(T)", ns, dr) for t in C.TRAITS]
    for key, expr in C.OBJECTS.items():
        ns["O"] = eval(expr, ns)
        out["objects"][key] = [C.run(f"dr.{t}(O)", ns, dr) for t in C.TRAITS]
    out["traits2"] = {}
    for path in C.TYPES2:
        ns["T"] = C.resolve(path, dr)
        out["traits2"][path] = {f"{t}({vt})": C.run(f"dr.{t}(T, dr.VarType.{vt})", ns, dr)
                                for t in C.TRAITS2 for vt in C.VARTYPES2}
    out["traits2"]["objects"] = {f"{t}({o})": C.run(f"dr.{t}({o}, dr.VarType.Float32)", ns, dr)
                                 for t in C.TRAITS2 for o in ("1", "1.5", "'a'", "llvm.UInt(1)")}
    out["expr_t"] = {k: C.run(e, ns, dr) for k, e in C.EXPR_T.items()}
    out["more_traits"] = {k: C.run(e, ns, dr) for k, e in C.MORE_TRAITS.items()}
    out["constants"] = {k: C.run(f"dr.{k}", ns, dr) for k in C.CONSTANTS}
    out["properties"] = {k: C.run(e, ns, dr) for k, e in C.PROPERTIES.items()}
    out["printing"] = {k: C.run(e, ns, dr) for k, e in C.PRINTING.items()}
    out["helpers"] = {k: C.run(e, ns, dr) for k, e in C.HELPERS.items()}
    out["numeric"] = {k: C.run(e, ns, dr) for k, e in C.NUMERIC.items()}
    return out


def main() -> int:
    env = dict(os.environ)
    if "DRJIT_LIBLLVM_PATH" not in env:
        found = sorted(glob.glob("/usr/lib/*/libLLVM-19.so*"))
        if found:
            env["DRJIT_LIBLLVM_PATH"] = found[0]
    env.pop("PYTHONPATH", None)       # the child must not find frostjit by accident
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "raw.json")
        # (the cases print on stdout: whos(), print(); the results travel through a file)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", raw], env=env,
                           stdout=subprocess.DEVNULL, cwd=HERE)
        if r.returncode != 0:
            return r.returncode
        with open(raw) as f:
            data = json.load(f)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        # one line per type / case: diffs of a regenerated file stay readable
        f.write("{\n")
        sections = list(data.items())
        for k, (section, value) in enumerate(sections):
            f.write(f"  {json.dumps(section)}: ")
            if isinstance(value, dict) and value:
                f.write("{\n")
                items = list(value.items())
                for j, (key, v) in enumerate(items):
                    f.write(f"    {json.dumps(key)}: {json.dumps(v, sort_keys=True)}")
                    f.write(",\n" if j + 1 < len(items) else "\n")
                f.write("  }")
            else:
                f.write(json.dumps(value))
            f.write(",\n" if k + 1 < len(sections) else "\n")
        f.write("}\n")
    print(f"wrote {OUT} ({os.path.getsize(OUT) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        result = child()
        with open(sys.argv[2], "w") as f:
            json.dump(result, f)
        sys.exit(0)
    sys.exit(main())
