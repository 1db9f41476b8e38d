"""``fj.print`` inside a target of ``fj.switch`` shows the lanes that call that target, in
symbolic mode as in evaluated mode (Dr.Jit's test_format test10: ``in f1: x=[1, 2, 3]``; the
symbolic switch traced each target over every lane and printed all of them before session
r12). Differential: the symbolic switch's output equals the evaluated switch's and the one
computed with NumPy, for random indices, masks and widths. Also Dr.Jit's ``mode="evaluate"``."""
import io

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import UInt32


def _run(idx, vals, active, mode):
    out = io.StringIO()

    def target(k):
        def f(x, active=True):
            fj.print("t{k}: x={x}", k=k, x=x, file=out)
            return x + k
        return f
    r = fj.switch(UInt32(idx), [target(0), target(1), target(2)], UInt32(vals),
                  active=fj.llvm.Bool(active), mode=mode)
    return out.getvalue(), r.numpy().tolist()


@given(data=st.data(), n=st.integers(1, 9))
def test_symbolic_switch_prints_the_lanes_of_each_target(data, n):
    idx = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    active = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    vals = list(range(10, 10 + n))
    sym = _run(idx, vals, active, "symbolic")
    ev = _run(idx, vals, active, "evaluated")
    assert sym == ev
    lines = [f"t{k}: x={[v for v, i, a in zip(vals, idx, active) if i == k and a]}".replace("'", "")
             for k in range(3)]
    want = "".join(line + "\n" for line, k in zip(lines, range(3))
                   if any(i == k and a for i, a in zip(idx, active)))
    assert sym[0] == want
    assert sym[1] == [v + i if a else 0 for v, i, a in zip(vals, idx, active)]


@pytest.mark.parametrize("mode", ["evaluate", "evaluated", "symbolic", "auto"])
def test_print_takes_dr_jits_mode_names(mode):
    out = io.StringIO()
    fj.print("{}", UInt32(1, 2), file=out, mode=mode)
    assert out.getvalue() == "[1, 2]\n"
    with pytest.raises(ValueError, match="'auto', 'evaluate' or 'symbolic'"):
        fj.print("{}", UInt32(1), mode="bogus")


def test_numpy_reference_of_the_lane_lists():
    # the expected lines above list the lanes in order (NumPy's boolean indexing gives the same)
    vals, idx = np.arange(5), np.array([0, 1, 0, 2, 0])
    assert vals[idx == 0].tolist() == [0, 2, 4]
