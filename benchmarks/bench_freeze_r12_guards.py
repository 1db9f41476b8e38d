"""CPU time per frozen call for what session r12's lane redteam changed (run it under two trees
alternately, PYTHONPATH=<tree>, and compare the medians):

  x+1               the trivial frozen call (no new guard: the baseline of the run)
  super() method    a frozen method calling a base-class method through zero-argument super()
                    (r12 guards the base class's entry: one more guard)
  local imports     a function with ``import math`` and ``from math import pi`` inside (r12 guards
                    the sys.modules entries: two more guards)
  torch argument    a torch tensor argument (r12 keys it by its version counter, read on every
                    call; before: its repr at the walk, skipped by the binder); needs torch
  backward, held    fj.backward through a frozen result onto an input that already holds a
                    gradient (r12 walks the held gradient after the seeds and accumulates onto it
                    inside the derivative; before: it added the derivative's total after)
"""
import statistics
import sys
import time

import numpy as np

import frostjit as fj
from frostjit.llvm import Float


class Base:
    def scale(self, x):
        return x * 2.0


class Layer(Base):
    def scale(self, x):
        return super().scale(x) + 1.0


def local_imports(x):
    import math
    from math import pi
    return x * pi + math.e


x = Float(np.arange(16, dtype=np.float32))
layer = Layer()
cases = {"x+1": (fj.freeze(lambda x: x + 1), ()),
         "super() method": (fj.freeze(layer.scale), ()),
         "local imports": (fj.freeze(local_imports), ())}
try:
    import torch
    t = torch.ones(16)
    cases["torch argument"] = (fj.freeze(lambda x, t: x * 2.0), (t,))
except ImportError:
    print("torch argument\tn/a (no torch)", file=sys.stderr)

def _loss(x):
    return x * x * 3.0 + fj.sin(x)


_fl = fj.freeze(_loss)
_p = fj.llvm.ad.Float(np.linspace(-1, 1, 16, dtype=np.float32))
fj.enable_grad(_p)


def backward_held(x):
    fj.set_grad(_p, 1.5)
    fj.backward(fj.sum(_fl(_p)))
    return _fl


cases["backward, held"] = (backward_held, ())
for f, extra in cases.values():
    for _ in range(50):
        f(x, *extra)
for name, (f, extra) in cases.items():
    ts = []
    for _ in range(15):
        t0 = time.process_time()
        for _ in range(500):
            f(x, *extra)
        ts.append((time.process_time() - t0) / 500 * 1e6)
    n = (f(x) if name == "backward, held" else f).n_recordings
    print(f"{name}\t{statistics.median(ts):.2f}\t(recordings: {n})")
