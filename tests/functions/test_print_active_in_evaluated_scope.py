"""``fj.print(..., active=mask)`` inside an evaluated loop or branch shows the lanes where the
mask holds *and* the loop or branch is active (Dr.Jit applies its mask stack to an ``active``
array; its test_format test13: ``[1, 2][2]``, frostjit printed ``[1, 2][2, 3]`` before session
r12). With ``active=True`` every lane prints, as before and as in Dr.Jit. Differential: the
printed lines equal a NumPy simulation of the loop for random starts, bounds and masks."""
import io

import numpy as np
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Bool, UInt32


def _loop(i, n, mask, out):
    @fj.syntax
    def f(i, n, mask):
        while fj.hint(i < n, mode="evaluated"):
            fj.print("{}", i, file=out, active=mask)
            i += 1
        return i
    return f(i, n, mask)


def _fmt(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


@given(data=st.data(), width=st.integers(1, 6), literal=st.booleans())
def test_masked_print_in_an_evaluated_loop(data, width, literal):
    start = np.array(data.draw(st.lists(st.integers(0, 4), min_size=width, max_size=width)))
    bound = np.array(data.draw(st.lists(st.integers(0, 5), min_size=width, max_size=width)))
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=width, max_size=width)))
    out = io.StringIO()
    _loop(UInt32(start), UInt32(bound), True if literal else Bool(mask), out)
    want, i = [], start.copy()
    while (i < bound).any():
        alive = i < bound
        shown = np.ones(width, bool) if literal else mask & alive
        if shown.any():
            want.append(_fmt(i[shown]))
        i = np.where(alive, i + 1, i)
    assert out.getvalue().splitlines() == want


def test_masked_print_in_an_evaluated_branch():
    out = io.StringIO()

    @fj.syntax
    def f(x):
        if fj.hint(x > 1, mode="evaluated"):
            fj.print("{}", x, file=out, active=Bool(True, True, True))
        else:
            fj.print("{}", x, file=out, active=Bool(True, True, True))
        return x
    f(UInt32(1, 2, 3))
    assert out.getvalue() == "[2, 3]\n[1]\n"
