"""Python opcodes per frozen call (``sys.settrace`` opcode events: exact, the same on a loaded or
a quiet machine) and recordings, for the arguments session r12's lane retrace made parameters.

  x+1               the trivial frozen call (the guard cost must not grow)
  float lr          ``x * lr`` with a Python float that changes every call (a parameter since r10)
  np.float32 lr     the same with ``np.float32`` (r12: a parameter; before: a recording per value)
  np.int32 k        ``x + k`` with ``np.int32`` (r12: a parameter; before: a recording per call)

Run it under two trees (PYTHONPATH=<tree>) and compare.  ``python benchmarks/bench_freeze_r12_retrace.py``
"""
import sys
import warnings

import numpy as np

import frostjit as fj
from frostjit.llvm import Float


def opcodes(f, *args) -> int:
    n = 0

    def tracer(frame, event, arg):
        nonlocal n
        frame.f_trace_opcodes = True
        if event == "opcode":
            n += 1
        return tracer
    sys.settrace(tracer)
    try:
        f(*args)
    finally:
        sys.settrace(None)
    return n


warnings.simplefilter("ignore")     # (the base tree warns about repeated tracing)
x = Float(np.arange(16, dtype=np.float32))
cases = {"x+1": (fj.freeze(lambda x: x + 1), lambda i: ()),
         "float lr": (fj.freeze(lambda x, lr: x * lr), lambda i: (0.1 + i,)),
         "np.float32 lr": (fj.freeze(lambda x, lr: x * lr), lambda i: (np.float32(0.1 + i),)),
         "np.int32 k": (fj.freeze(lambda x, k: x + k), lambda i: (np.int32(i),))}
for name, (f, arg) in cases.items():
    for i in range(20):
        f(x, *arg(i))
    counts = [opcodes(f, x, *arg(100 + i)) for i in range(5)]
    print(f"{name}\topcodes/call {min(counts)}..{max(counts)}\trecordings after 25 calls: {f.n_recordings}")
