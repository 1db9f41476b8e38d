"""Generate (or check live) the Dr.Jit 1.5 reference data of the random-number tests.

    python tests/random/make_anchor_data.py           # rewrite data/drjit_1_5_sequences.npz (needs drjit)
    python tests/random/make_anchor_data.py --live --width 100003 --seeds 20
        # compare frostjit and Dr.Jit now on every program at that width, for random seeds too

Each JIT runs in its own subprocess (``--child drjit|frostjit``): drjit and frostjit link
different LLVMs and must never share a process.  The committed ``.npz`` holds every value the
programs of ``anchor_cases.py`` drew under Dr.Jit, and SHA-256 digests of Dr.Jit's ``log``,
``log2``, ``erfinv`` and ``sincos`` over the inputs the generators use (all 2^23 of them for
Float32), which ``test_anchor_sequences.py`` and ``test_cephes.py`` check frostjit against.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = HERE / "data" / "drjit_1_5_sequences.npz"
sys.path.insert(0, str(HERE))

import anchor_cases  # noqa: E402


def math_inputs():
    """The inputs of the math digests: ``{name: (function, numpy array)}``."""
    k = np.arange(1 << 23, dtype=np.float64)
    u32 = (k * 2.0**-23).astype(np.float32)                      # every Float32 uniform
    rs = np.random.default_rng(20251130)
    u64 = np.floor(rs.random(1 << 20) * 2.0**52) * 2.0**-52        # Float64 uniforms (52 bits)
    u64_32 = np.floor(rs.random(1 << 20) * 2.0**32) * 2.0**-32     # PCG32's Float64 (32 bits)
    u64_32[:2] = 0.0, 0.5                                           # the clamped edge, a zero result
    return {
        "log2_f32": ("log2", (1.0 - u32).astype(np.float32)),     # Box-Muller radius
        "sincos_f32": ("sincos_2pi", u32),                         # Box-Muller angle
        "erfinv_f32": ("erfinv", (1.0 - 2.0 * np.clip(u32, 2.0**-24, 1 - 2.0**-24)).astype(np.float32)),
        "log_f32": ("log", np.concatenate([(1.0 - u32), u32[1:]]).astype(np.float32)),
        "log2_f64": ("log2", 1.0 - u64),
        "sincos_f64": ("sincos_2pi", u64),
        "erfinv_f64": ("erfinv", 1.0 - 2.0 * np.clip(u64_32, 2.0**-53, 1 - 2.0**-53)),
        "log_f64": ("log", np.concatenate([1.0 - u64, u64[1:]])),
    }


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def math_digests(L, math_fns, only: str | None = None) -> dict:
    """SHA-256 of each math function's output bits over :func:`math_inputs`.

    ``math_fns`` maps ``log``/``log2``/``erfinv``/``sincos`` to the implementation under test
    (Dr.Jit's ``dr.*``, or frostjit's ``frostjit.random.cephes``)."""
    out = {}
    for name, (fn, x) in math_inputs().items():
        if only is not None and name != only:
            continue
        T = L.Float if x.dtype == np.float32 else L.Float64
        if fn == "sincos_2pi":
            s, c = math_fns["sincos"](T(x) * (2 * np.pi))
            out[name] = digest(s.numpy(), c.numpy())
        else:
            out[name] = digest(math_fns[fn](T(x)).numpy())
    return out


def child(system: str, out: str, width: int | None, random_seeds: int) -> None:
    if system == "drjit":
        import drjit as dr
        import drjit.llvm as L
        fns = {"log": dr.log, "log2": dr.log2, "erfinv": dr.erfinv, "sincos": dr.sincos}
    else:
        import frostjit as dr
        import frostjit.llvm as L
        from frostjit.random import cephes
        fns = {"log": cephes.log, "log2": cephes.log2, "erfinv": cephes.erfinv, "sincos": cephes.sincos}
    arrays = {}
    cases = anchor_cases.cases()
    if width is not None:
        # The reference programs at the new width, and the same with random seeds.
        rs = np.random.default_rng(width)
        extra = []
        for k in range(random_seeds):
            s, q = (int(v) for v in rs.integers(0, 2**64, size=2, dtype=np.uint64))
            extra += [(f"pcg32-r{k}", "pcg32", (s, q), width), (f"philox-r{k}", "philox", s, width),
                      (f"rng-r{k}", "rng", s, width)]
        names = {}
        for n, family, seed, w in cases:
            if family == "pcg32_edges":         # fixed states, a fixed width
                names.setdefault(n, (family, seed, w))
            else:
                names.setdefault(f"{n.rsplit('-', 1)[0]}-{width}", (family, seed, width))
        cases = [(n, *v) for n, v in names.items()] + extra
    for name, family, seed, w in cases:
        values = anchor_cases.run_case(dr, L, family, seed, w)
        if width is None:
            for i, v in enumerate(values):
                arrays[f"{name}/{i}"] = v
        else:
            arrays[f"{name}/digest"] = np.frombuffer(bytes.fromhex(digest(*values)), dtype=np.uint8)
    if width is None:
        arrays["math_digests"] = np.frombuffer(json.dumps(math_digests(L, fns)).encode(), dtype=np.uint8)
    np.savez_compressed(out, **arrays)


def run_child(system: str, out: str, extra=()) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    if system == "drjit" and not env.get("DRJIT_LIBLLVM_PATH"):
        hits = sorted(glob.glob("/usr/lib/*/libLLVM-19.so*"))
        if hits:
            env["DRJIT_LIBLLVM_PATH"] = hits[0]
    subprocess.run([sys.executable, __file__, "--child", system, "--out", out, *extra], env=env, check=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", choices=("drjit", "frostjit"))
    ap.add_argument("--out")
    ap.add_argument("--live", action="store_true", help="compare frostjit and Dr.Jit now (nothing is written)")
    ap.add_argument("--width", type=int, default=None, help="with --live: the width of every program")
    ap.add_argument("--seeds", type=int, default=0, help="with --live: this many random seeds per family too")
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.out, args.width, args.seeds)
        return 0
    if not args.live:
        DATA.parent.mkdir(exist_ok=True)
        run_child("drjit", str(DATA))
        print(f"wrote {DATA} ({DATA.stat().st_size} bytes)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        extra = ["--width", str(args.width or 100003), "--seeds", str(args.seeds)]
        files = {s: os.path.join(tmp, f"{s}.npz") for s in ("drjit", "frostjit")}
        for s, f in files.items():
            run_child(s, f, extra)
        a, b = np.load(files["drjit"]), np.load(files["frostjit"])
        bad = [k for k in a.files if k not in b.files or not np.array_equal(a[k], b[k])]
        print(f"{len(a.files)} programs at width {args.width or 100003}: "
              + ("all bit-exact" if not bad else f"{len(bad)} differ: {', '.join(bad)}"))
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
