"""CPU time per frozen call for what session r11's lane redteam changed (run it under two trees
alternately, PYTHONPATH=<tree>, and compare the medians):

  x+1                  the trivial frozen call (pays the check that the function's code is unchanged)
  partial keywords     a global functools.partial with keywords whose instance attribute is set
                       to an equal new float each call (traced every call before r11)
  vars(o) parameter    x * vars(o)["v"] with o.v a new float each call, alternating two values
                       (traced every call before r11)
  slotted key          an ==-keyed object with 5 slots over a 3-class MRO as an argument
"""
import functools
import statistics
import time

import numpy as np

import frostjit as fj
from frostjit.llvm import Float


class M:
    def __init__(self):
        self.k = 2.0

    def m(self, x, s):
        return x * self.k * s


class Plain:
    pass


class A:
    __slots__ = ("a", "b")

    def __eq__(s, o):
        return type(o) is type(s)

    def __hash__(s):
        return 0


class B(A):
    __slots__ = ("c", "d")


class C(B):
    __slots__ = ("e",)


x = Float(np.arange(16, dtype=np.float32))
mm, o = M(), Plain()
o.v = 2.0
p = functools.partial(mm.m, s=2.0)
f1 = fj.freeze(lambda x: x + 1)
f2 = fj.freeze(lambda x: p(x), warn_after=10**9)
f3 = fj.freeze(lambda x: x * vars(o)["v"], warn_after=10**9)
f4 = fj.freeze(lambda x, s: x * s.a)
s = C()
s.a, s.b, s.c, s.d, s.e = 2.0, 3, 4.0, "x", None
state = [0]


def partial_call():
    mm.k = float(repr(2.0))
    return f2(x)


def vars_call():
    state[0] ^= 1
    o.v = float(repr(2.0 + state[0]))
    return f3(x)


cases = {"x+1": lambda: f1(x), "partial keywords": partial_call, "vars(o) parameter": vars_call,
         "slotted key": lambda: f4(x, s)}
for c in cases.values():
    for _ in range(50):
        c()
for name, c in cases.items():
    # (fewer calls where the tree being measured may trace every call: milliseconds each)
    N, R = (500, 15) if name in ("x+1", "slotted key") else (40, 7)
    ts = []
    for _ in range(R):
        t0 = time.process_time()
        for _ in range(N):
            c()
        ts.append((time.process_time() - t0) / N * 1e6)
    print(f"{name}\t{statistics.median(ts):.2f}")
