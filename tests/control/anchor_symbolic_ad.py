"""Run the programs of ``symbolic_ad_programs.py`` on Dr.Jit and on frostjit and print both
systems' values and derivatives (forward from ``x``, ``p``, ``q``; reverse to them), mode by mode.

Each system runs in its own subprocess (never drjit and frostjit in one process; see
DEVELOPERS.md).  Not a test (pytest does not collect it: drjit is not a dependency); the numbers
it printed are in ``test_symbolic_ad_closure.py`` (``DRJIT``).  Usage::

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so python tests/control/anchor_symbolic_ad.py
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


PROGRAMS = ("loop_closure", "closure_only", "nested_loops", "if_in_loop", "switch_in_loop", "if_closure",
            "switch_closure")
KEYS = [f"{name} {mode} {direction}" for name in PROGRAMS for mode in ("symbolic", "evaluated")
        for direction in ("forward_x", "forward_p", "forward_q", "reverse")]


def child(system: str, which: str) -> dict:
    """One case (Dr.Jit aborts the process on some: each runs alone)."""
    sys.path.insert(0, HERE)
    import symbolic_ad_programs as P
    if system == "drjit":
        import drjit as dr
        from drjit.llvm.ad import Float64 as Float, UInt32
    else:
        import frostjit as dr
        from frostjit.llvm.ad import Float64 as Float, UInt32
    out = {}
    for prog in P.PROGRAMS:
        for mode in ("symbolic", "evaluated"):
            for direction in ("forward_x", "forward_p", "forward_q", "reverse"):
                key = f"{prog.__name__} {mode} {direction}"
                if key != which:
                    continue
                try:
                    x, q, p = Float(P.ANCHOR_X), Float(P.ANCHOR_Q), Float(P.ANCHOR_P)
                    # (forward: only the source is grad-enabled, Dr.Jit's forward mode through a
                    # symbolic loop raises when another input is)
                    src = {"forward_x": x, "forward_p": p, "forward_q": q}.get(direction)
                    dr.enable_grad(*((x, p, q) if src is None else (src,)))
                    y = prog(dr, Float, UInt32, x, p, q, UInt32(P.ANCHOR_TRIPS), mode)
                    if src is None:
                        dr.backward(y)
                        out[key] = [[float(v) for v in dr.grad(a)] for a in (x, p, q)]
                    else:
                        dr.forward(src)
                        out[key] = [float(v) for v in dr.grad(y)]
                except Exception as e:      # noqa: BLE001  (recorded: which system refuses what)
                    out[key] = f"{type(e).__name__}: {str(e)[:120]}"
    return out


def main() -> None:
    for k in KEYS:
        got = {}
        for system in ("drjit", "frostjit"):
            r = subprocess.run([sys.executable, __file__, system, k], capture_output=True, text=True)
            got[system] = json.loads(r.stdout.strip().splitlines()[-1])[k] if r.returncode == 0 else \
                f"crash (exit status {r.returncode}): {r.stderr.strip().splitlines()[:1]}"
        print(f"{k}:\n  drjit    {got['drjit']}\n  frostjit {got['frostjit']}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(json.dumps(child(sys.argv[1], sys.argv[2])))
    else:
        main()
