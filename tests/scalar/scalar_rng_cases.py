"""The generator sequences recorded from Dr.Jit 1.5's ``drjit.scalar`` (``PCG32``, ``Philox4x32``).

``run(s)`` draws the same calls from the module ``s`` (``drjit.scalar`` or ``frostjit.scalar``)
and returns them as JSON-able lists.  Record Dr.Jit's answers with (needs drjit, its own process)::

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so python tests/scalar/scalar_rng_cases.py \\
        > tests/scalar/data/drjit_1_5_scalar_rng.json
"""
from __future__ import annotations

import json
import sys


def run(s) -> dict:
    """Every case's outputs, keyed by the seed (PCG32) or ``philox_<seed>_<counter>_<iterations>``."""
    out = {}
    for seed in [(0x853C49E6748FEA9B, 0xDA3E39CB94B95BDB), (0, 0), (5, 7), (2**64 - 1, 2**63 + 11), (123456789, 42)]:
        k = f"{seed[0]}_{seed[1]}"
        r = s.PCG32(1, *seed)
        seq = [r.next_uint32() for _ in range(4)]
        seq += [r.next_float32(), r.next_float64(), r.next_uint64(), r.next_float32_normal(), r.next_float64_normal()]
        seq += [r.next_uint32_bounded(7), r.next_uint32_bounded(2**31 + 5), r.next_uint64_bounded(10**15), r.next_uint64_bounded(2**63 + 3)]
        seq += [r.prev_uint32(), r.prev_float32(), r.prev_uint64(), r.prev_float64()]
        seq += [r.next_float(float), r.next_float_normal(float), r.prev_float(float)]
        r2 = r + 1000
        seq += [r2.state, r2.inc, r2 - r, r - r2, (r - 77).state]
        r += -5
        seq += [r.state]
        r.seed(seed[1], seed[0])
        seq += [r.state, r.inc, r.next_uint32()]
        seq += [[type(x).__name__ for x in (r.next_uint32(), r.next_float32(), r.state, r - r2)]]
        seq += [r.next_float16(), r.next_float16_normal(), r.prev_float16(), r.prev_float16_normal(),
                r.next_float16(False), type(r.next_float16()).__name__]
        out[k] = seq
    for seed, c, it in [(1, (0, 0, 0), 7), (2**40 + 7, (5, 6, 7), 10), (2**64 - 1, (2**32 - 1, 1, 2), 0), (99, (3, 0, 0), 1)]:
        p = s.Philox4x32(seed, *c, iterations=it)
        seq = [list(p.seed), list(p.counter)]
        for _ in range(2):
            seq += [list(p.next_uint32x4()), list(p.next_uint64x2()), list(p.next_float32x4()), list(p.next_float64x2()),
                    list(p.next_float32x4_normal()), list(p.next_float64x2_normal())]
        seq += [list(p.counter), type(p.next_float32x4()).__name__, type(p.next_uint64x2()).__name__]
        seq += [list(p.next_float16x4()), list(p.next_float16x4_normal()), list(p.next_float16x4(False)),
                list(p.counter), type(p.next_float16x4()).__name__]
        out[f"philox_{seed}_{c}_{it}"] = seq
    return out


if __name__ == "__main__":
    import drjit.scalar
    json.dump(run(drjit.scalar), sys.stdout, indent=0)
    sys.stdout.write("\n")
