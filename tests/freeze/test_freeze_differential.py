"""Differential tests: random programs run plain and frozen at several widths agree exactly."""
import numpy as np
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, UInt32

from freeze_helpers import same

UNARY = [lambda a: a * 2, lambda a: a + 1.5, lambda a: -a, lambda a: fj.abs(a), lambda a: fj.sqrt(fj.abs(a)),
         lambda a: fj.sin(a), lambda a: a * a]
BINARY = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: fj.maximum(a, b),
          lambda a, b: fj.select(a > b, a, b)]
SPECIAL = [
    lambda a, b: a + fj.width(a),
    lambda a, b: a - fj.mean(b),
    lambda a, b: a + fj.sum(b),
    lambda a, b: fj.gather(Float, a, fj.arange(UInt32, fj.width(a))[::1] if False else fj.arange(UInt32, fj.width(a))),
    lambda a, b: fj.cumsum(a),
    lambda a, b: a + fj.linspace(Float, 0, 1, fj.width(a)),
    lambda a, b: a + Float(fj.arange(UInt32, fj.width(a))),
    lambda a, b: _scatter_sum(a, b),
]


def _scatter_sum(a, b):
    t = fj.zeros(Float, fj.width(a))
    fj.scatter_add(t, b, fj.arange(UInt32, fj.width(a)) // 2)
    return t + a

op_strategy = st.one_of(
    st.tuples(st.just("u"), st.integers(0, len(UNARY) - 1), st.integers(0, 7)),
    st.tuples(st.just("b"), st.integers(0, len(BINARY) - 1), st.integers(0, 7), st.integers(0, 7)),
    st.tuples(st.just("s"), st.integers(0, len(SPECIAL) - 1), st.integers(0, 7), st.integers(0, 7)),
    st.tuples(st.just("e"),),
)


def make_program(ops):
    def program(x, y):
        vals = [x, y]
        for op in ops:
            if op[0] == "u":
                vals.append(UNARY[op[1]](vals[op[2] % len(vals)]))
            elif op[0] == "b":
                vals.append(BINARY[op[1]](vals[op[2] % len(vals)], vals[op[3] % len(vals)]))
            elif op[0] == "s":
                vals.append(SPECIAL[op[1]](vals[op[2] % len(vals)], vals[op[3] % len(vals)]))
            else:
                fj.eval(vals[-1])
        return vals[2:]
    return program


@given(st.lists(op_strategy, min_size=1, max_size=8), st.lists(st.integers(2, 40), min_size=3, max_size=4),
       st.integers(0, 2**31))
def test_random_programs_agree_with_plain_calls(ops, widths, seed):
    prog = make_program(ops)
    fz = fj.freeze(prog)
    rng = np.random.default_rng(seed)
    for n in widths:
        xs = rng.standard_normal(n).astype(np.float32)
        ys = rng.standard_normal(n).astype(np.float32)
        ref = prog(Float(xs), Float(ys))
        got = fz(Float(xs), Float(ys))
        assert len(ref) == len(got)
        for r, g in zip(ref, got):
            assert same(g, r), (ops, n)
    # every width replays one recording (size 1 never appears here)
    assert fz.n_recordings == 1
