"""CPU time of frozen calls whose inputs are Python values keyed by their own == (session r10,
lane redteam: freeze/values.py keys tuples element by element and compares ==-keyed objects with
eq_differs).  Run it under two trees alternately (PYTHONPATH=<tree>) and compare the medians."""
import statistics
import time

import numpy as np

import frostjit as fj
from frostjit.llvm import Float


class Obj:
    def __init__(s, k): s.k = k
    def __eq__(s, o): return isinstance(o, Obj) and o.k == s.k
    def __hash__(s): return hash(s.k)

x = Float(np.arange(16, dtype=np.float32))
f1 = fj.freeze(lambda x: x + 1)
f2 = fj.freeze(lambda x, o: x * o.k)
f3 = fj.freeze(lambda x, d: x * d[("a", 1)])
cases = {
    "x+1": lambda: f1(x),
    "eq-object (new each call)": lambda: f2(x, Obj(2.0)),
    "tuple dict key": lambda: f3(x, {("a", 1): 2.0}),
}
for c in cases.values():
    for _ in range(50): c()
N, R = 2000, 15
for name, c in cases.items():
    ts = []
    for _ in range(R):
        t0 = time.process_time()
        for _ in range(N): c()
        ts.append((time.process_time() - t0) / N * 1e6)
    print(f"{name}\t{statistics.median(ts):.2f}")
