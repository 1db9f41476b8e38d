"""Python cost of tracing an operation and of evaluating: re-traced elementwise programs at
1000 lanes (issue 11, the ports' steady-state gap; Session r12, lane trace).

    python benchmarks/bench_trace_ops.py [--reps 300]                 # CPU us per call, each row
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=functools_reduce \\
        python benchmarks/bench_trace_ops.py --callgrind float trace --reps 20
                                                                      # instructions of 20 calls

Rows: ``float`` (50 operations on ``Float``: ``*``, ``+``, ``-`` with arrays and literals,
``fma``), ``vec`` (125 operations on ``Array3f``: ``normalize``, ``cross``, ``+``, ``*``) and
``lookup`` (a bilinear ``Texture2f`` lookup into 1024 x 1024 texels: 52 nodes, 4 gathers),
each ``trace`` (the graph only) and ``eval`` (traced and evaluated; the kernel and the plan
are cached after the warm-up calls).  Under load, count instructions (``--callgrind``: the
calls run inside ``functools.reduce``, the one function callgrind collects) rather than time.
"""
from __future__ import annotations

import argparse
import functools
import time

import numpy as np

import frostjit as fj
from frostjit.auto import Array2f, Array3f, Float, TensorXf, Texture2f

N = 1000


def expr_float(x):
    """50 operations (10 times: ``*``, ``+``, ``fma``, ``*``, ``-``)."""
    y = x
    for _ in range(10):
        y = y * 1.0001 + x
        y = fj.fma(y, x, 0.5)
        y = y - x * 0.25
    return y


def expr_vec(v):
    """125 operations (5 times: ``normalize``, ``+``, ``*``, ``cross``, ``+``)."""
    w = v
    for _ in range(5):
        w = fj.normalize(w + v) * 1.5
        w = fj.cross(w, v) + w
    return w


def _inputs():
    x = fj.arange(Float, N) * 0.001
    v = Array3f(x, x + 1, x * 2)
    rng = np.random.default_rng(0)
    pos = Array2f(Float(rng.random(N, dtype=np.float32)), Float(rng.random(N, dtype=np.float32)))
    tex = Texture2f(TensorXf(rng.random((1024, 1024, 1), dtype=np.float32)))
    fj.eval(x, v, pos)
    return {"float": (expr_float, x), "vec": (expr_vec, v), "lookup": (lambda p: tex.eval(p)[0], pos)}


def run(inputs, kind: str, mode: str, reps: int):
    f, a = inputs[kind]
    for _ in range(reps):
        r = f(a)
        if mode == "eval":
            fj.eval(r)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reps", type=int, default=300)
    p.add_argument("--callgrind", nargs=2, metavar=("KIND", "MODE"),
                   help="run only KIND (float, vec, lookup) MODE (trace, eval) inside functools.reduce")
    args = p.parse_args()
    inputs = _inputs()
    rows = [tuple(args.callgrind)] if args.callgrind else \
        [(k, m) for k in ("float", "vec", "lookup") for m in ("trace", "eval")]
    for kind, mode in rows:
        run(inputs, kind, mode, 3)      # warm-up: compiles, fills the plan cache
        if args.callgrind:
            functools.reduce(lambda acc, _: run(inputs, kind, mode, 1), range(args.reps), None)
            continue
        t = time.process_time()
        run(inputs, kind, mode, args.reps)
        print(f"{kind:5} {mode:5} {(time.process_time() - t) / args.reps * 1e6:8.1f} us CPU per call")


if __name__ == "__main__":
    main()
