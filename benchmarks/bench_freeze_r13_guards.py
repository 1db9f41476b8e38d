"""Cost per frozen call of what session r13's lane redteam changed: Python opcodes per call
(``sys.settrace`` with ``f_trace_opcodes``, minimum of three calls after 50 warm-up calls: exact
and load-independent, C work not counted) and CPU time (median of 15 batches of 500 calls).
Run it under two trees (PYTHONPATH=<tree>) and compare:

  x+1                  the trivial frozen call (no guard: the baseline)
  x*np.pi              a library module's number (r13: one guard on numpy's dict entry)
  np.sin, math.sqrt    library functions (r13 redteam: taken as constant, no guard; r13 libfn:
                       guarded by identity, one test per module)
  5 np./math. fns      np.sin, np.cos, np.tan, math.sqrt, math.exp: two modules, five entries
  fj.sqrt              a frostjit function read by the function (guarded since r13 libfn)
  loss-like, 6 fj.     fj.sqrt/exp/maximum/abs/sum/log and math.pi: a loss's mix of names
  np.linalg.norm       a NumPy function written in Python (r13 libfn: the module entries of the
                       library functions that ran inside it are guarded too)
  x*json.<setting>     a package's module-level setting absent, read with getattr(m, k, default)
  int subclass arg     an argument of an int subclass with its own == (r13: keyed by its C value too)
  IntEnum arg          an IntEnum argument (int's ==: unchanged)
  (lr, mom) tuple      a training-step-like call f(x, (lr, 0.9)) with a new lr every call: r13 makes
                       the numbers in the tuple parameters (before: one trace per call)

Rows added by session r14, lane redteam:

  len+float builtins   x * float(len(...)): the builtins the code called are guarded by identity
                       (``mock.patch("builtins.round")`` was a stale replay): one module group
  5 builtins           float, len, int, abs, min: one itemgetter pass over builtins' dict
  inherited attr       x * o.s with s on o's base class: the class's MRO tuple is guarded
                       (``Cls.__bases__ = ...`` was a stale replay)
  set arg              a set argument: keyed in iteration order (was: as a frozenset)
  mode is MODE         a str argument compared by identity with a global: the identities of the
                       inputs' Python values are guarded (an equal string made at run time was a
                       stale replay)
  str subclass arg     a ``class Tag(str)`` argument: keyed with its attributes, the binder compares
                       keys (``Tag.scale`` was a stale replay)
  helper reads o.s     a helper reads an attribute of a hidden object: its ``__dict__`` is guarded
                       by identity too (``o.__dict__ = {...}`` was a stale replay)

Rows added by session r15, lane redteam:

  nn arg / nn hidden   a packed Linear-LeakyReLU-Linear network evaluated on a CoopVec, passed in /
                       held in a closure: frostjit.nn's layer code is watched (its settings, e.g.
                       ``negative_slope``, changed between calls were stale replays)
  syntax helper        an ``@fj.syntax`` helper with an ``if``/``else`` reading a global list (its
                       rewritten code was not watched: stale)
  (record nn)          CPU time of recording the nn call once (a fresh frozen function; kernels
                       cached): watching the layers' code costs per-instruction events while recording

Rows added by session r16, lane redteam2:

  struct arg           an argument of a user ``DRJIT_STRUCT`` class (two array fields): its
                       ``DRJIT_STRUCT`` is guarded (entry and contents) and each binder compares
                       its names (reassigned or changed in place after first use was stale)
  dataclass arg        the same as a dataclass (nothing new per replay: its non-field attributes
                       are compared while recording only)
  float param          a Python float argument that became a parameter: the binder rejects a NaN
                       (a NaN is keyed by its bits, a literal as in the plain call)
"""
import dataclasses
import enum
import itertools
import warnings
import json
import math
import statistics
import sys

import numpy as np

import frostjit as fj
import frostjit.nn as nn
from frostjit.llvm import Float, TensorXf
from _harness import time_calls

warnings.simplefilter("ignore", fj.FreezeWarning)     # (the tuple row traces every call before r13)


class Count(int):
    def __eq__(self, other):
        return int(self) == int(other)

    def __hash__(self):
        return int.__hash__(self)


class E(enum.IntEnum):
    A = 2


class Base:
    s = 2.0


class Derived(Base):
    pass


obj = Derived()
MODE = "train"


class Tag(str):
    pass


hidden = Derived()
hidden.t = 3.0


def read_hidden():
    return hidden.t


NET = nn.pack(nn.Sequential(nn.Linear(2, 4), nn.LeakyReLU(0.1), nn.Linear(4, 1)).alloc(TensorXf, 2),
              layout="inference")
BOX = [2.0]


@fj.syntax
def syntax_helper(x):
    if x > 3:
        x = x * BOX[0]
    else:
        x = x + 1
    return x


def nn_call(x, n):
    return n(nn.CoopVec(x, x * 0.5))[0]


class Pair:
    DRJIT_STRUCT = {"a": Float, "b": Float}

    def __init__(self, a=None, b=None):
        self.a, self.b = a, b


@dataclasses.dataclass
class PairDC:
    a: Float
    b: Float


x = Float(np.arange(16, dtype=np.float32))
cases = {
    "x+1": (fj.freeze(lambda x: x + 1), ()),
    "x*np.pi": (fj.freeze(lambda x: x * np.pi), ()),
    "np.sin, math.sqrt": (fj.freeze(lambda x: x * math.sqrt(2.0) + float(np.sin(1.0))), ()),
    "5 np./math. fns": (fj.freeze(lambda x: x * (math.sqrt(2.0) + math.exp(1.0))
                                  + float(np.sin(1.0) + np.cos(1.0) + np.tan(1.0))), ()),
    "fj.sqrt": (fj.freeze(lambda x: fj.sqrt(x)), ()),
    "loss-like, 6 fj.": (fj.freeze(lambda x: fj.sum(fj.log(fj.maximum(fj.abs(fj.exp(-x)), 1e-3))
                                                  + fj.sqrt(x) * math.pi)), ()),
    "np.linalg.norm": (fj.freeze(lambda x: x * float(np.linalg.norm(np.ones(3)))), ()),
    "x*json.<setting>": (fj.freeze(lambda x: x * getattr(json, "_bench_scale", 2.0)), ()),
    "int subclass arg": (fj.freeze(lambda x, n: x * n), (Count(3),)),
    "IntEnum arg": (fj.freeze(lambda x, n: x * n), (E.A,)),
    "len+float builtins": (fj.freeze(lambda x: x * float(len("ab"))), ()),
    "5 builtins": (fj.freeze(lambda x: x * float(len("ab") + int(abs(min(2, 3))))), ()),
    "inherited attr": (fj.freeze(lambda x: x * obj.s), ()),
    "set arg": (fj.freeze(lambda x, s: x * len(s)), ({1, 2, 3},)),
    "mode is MODE": (fj.freeze(lambda x, m: x * (2.0 if m is MODE else 3.0)), (MODE,)),
    "str subclass arg": (fj.freeze(lambda x, t: x * len(t)), (Tag("ab"),)),
    "helper reads o.s": (fj.freeze(lambda x: x * read_hidden()), ()),
    "nn arg": (fj.freeze(nn_call), (NET,)),
    "nn hidden": (fj.freeze(lambda x: nn_call(x, NET)), ()),
    "syntax helper": (fj.freeze(lambda x: syntax_helper(x)), ()),
    "struct arg": (fj.freeze(lambda x, s: x * s.a + s.b), (Pair(Float(1.0), Float(2.0)),)),
    "dataclass arg": (fj.freeze(lambda x, s: x * s.a + s.b), (PairDC(Float(1.0), Float(2.0)),)),
    "float param": (fj.freeze(lambda x, p: x * p), (0.5,)),
}
cases["float param"][0](x, 0.25)        # (a second value: the number becomes a parameter)


def opcodes(f, extra):
    n = [0]

    def tr(frame, event, arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            n[0] += 1
        return tr
    best = None
    for _ in range(3):
        n[0] = 0
        sys.settrace(tr)
        f(x, *extra)
        sys.settrace(None)
        best = n[0] if best is None else min(best, n[0])
    return best


def batch(f, extra):
    def run():
        for _ in range(500):
            f(x, *extra)
    return run


for name, (f, extra) in cases.items():
    t = time_calls(batch(f, extra), repeats=15, warmup=1)
    cpu = statistics.median(t.cpus) / 500 * 1e6
    print(f"{name}\topcodes {opcodes(f, extra)}\tcpu {cpu:.2f} us\t(recordings: {f.n_recordings})")

step = fj.freeze(lambda x, h: x * h[0] + h[1])
lr = itertools.count(1)
t = time_calls(lambda: step(x, (0.001 * next(lr), 0.9)), repeats=250, warmup=50)
print(f"(lr, mom) tuple\tcpu {statistics.median(t.cpus) * 1e6:.2f} us\t(recordings: {step.n_recordings} for 300 calls)")


def record_nn():
    fz = fj.freeze(nn_call)
    fz(x, NET)


t = time_calls(record_nn, repeats=15, warmup=2)
print(f"(record nn)\tcpu {statistics.median(t.cpus) * 1e3:.2f} ms per recording")
