"""Scratch buffers of a replay (freeze/scratch.py): intermediates share buffers by liveness, and
two values alive at the same time never share one."""
import numpy as np
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Float, UInt32

from freeze_helpers import same

WIDTHS = (1, 7, 1000, 100003)


def _read_twice_then_two_outputs(x, idx):
    y = x * 2
    fj.eval(y)                                  # kernel 1: y, an intermediate
    z = y + fj.gather(Float, y, idx)            # kernel 2 reads y twice: elementwise and by gather
    fj.eval(z)
    a = z + 1
    b = z + 2
    fj.eval(a, b)                               # kernel 3: two intermediates of one dtype
    return a * b


def test_a_slot_read_twice_by_one_launch_frees_its_scratch_buffer_once():
    # Regression: y's scratch register was freed twice (once per parameter bound to it), so a
    # and b got the same buffer and the replay returned b * b.
    ff = fj.freeze(_read_twice_then_two_outputs)
    for n in (3,) + WIDTHS:
        x, idx = fj.arange(Float, n), fj.arange(UInt32, n)
        assert same(ff(x, idx), _read_twice_then_two_outputs(x, idx)), n
    assert ff.n_recordings == 2          # width 1 is a layout of its own (size 1 broadcasts)


# A random chain of kernels: each step evaluates one or two new values computed from earlier ones,
# read elementwise and/or through gathers (reversed, so a read by gather is not the lane's own).
step = st.tuples(st.integers(0, 9), st.integers(0, 9), st.booleans(), st.booleans())


def _chain(steps):
    def f(x):
        n = fj.width(x)
        rev = n - 1 - fj.arange(UInt32, n)
        vals = [x]
        for i, j, gather, two in steps:
            a = vals[i % len(vals)]
            b = vals[j % len(vals)]
            if gather:
                b = fj.gather(Float, b, rev)
            new = [a * 0.5 + b]
            if two:
                new.append(a - b * 0.25)
            fj.eval(*new)
            vals.extend(new)
        return vals[-1] + vals[len(vals) // 2]
    return f


@given(st.lists(step, min_size=1, max_size=8))
def test_chains_of_kernels_replay_like_plain_calls(steps):
    f = _chain(steps)
    ff = fj.freeze(f)
    for n in WIDTHS:
        x = Float(np.linspace(-1, 1, n, dtype=np.float32))
        assert same(ff(x), f(x)), (n, steps)
