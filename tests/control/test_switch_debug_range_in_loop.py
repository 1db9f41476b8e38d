"""Debug mode's range check of an evaluated ``fj.switch`` looks only at active lanes: inside an
evaluated loop, a lane that left the loop is not checked (Dr.Jit applies the loop mask to the
call; its test_switch.py test18 puts index 123 in such a lane and expects no error).

Found in session r15 by Dr.Jit's ``test_switch.py`` (08c61a4e): frostjit raised "index 123 (at
position 2) is out of range for 2 targets" for a lane whose loop had already ended.  Expected
values are NumPy's: each lane runs ``iters`` times ``x = targets[index](x)`` while it is in the
loop; lanes with no iteration keep ``x``.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Float, UInt32

TARGETS = (lambda v: v * 2, lambda v: v + 1)
NP_TARGETS = (lambda v: v * 2, lambda v: v + 1)


def _run(idx, iters, x0):
    def body(i, x):
        return i + 1, fj.switch(UInt32(idx), TARGETS, x)

    with fj.scoped_set_flag(fj.JitFlag.Debug, True), fj.scoped_set_flag(fj.JitFlag.SymbolicLoops, False), \
            fj.scoped_set_flag(fj.JitFlag.SymbolicCalls, False):
        _, x = fj.while_loop((UInt32(0), Float(x0)), lambda i, x: i < UInt32(iters), body)
    return x.numpy()


@settings(max_examples=8, deadline=None)
@given(data=st.data(), n=st.integers(2, 9))
def test_lanes_outside_the_loop_are_not_range_checked(data, n):
    iters = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), np.uint32)
    ok = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), np.uint32)
    idx = np.where(iters > 0, ok, 100 + ok)        # out of range only where the lane never loops
    x0 = np.arange(n, dtype=np.float32) + 1
    want = x0.copy()
    for lane in range(n):
        for _ in range(iters[lane]):
            want[lane] = NP_TARGETS[idx[lane]](want[lane])
    assert np.array_equal(_run(idx, iters, x0), want)


def test_an_active_out_of_range_lane_still_raises():
    with pytest.raises(RuntimeError, match=r"out-of-bounds callable ID 8 \(must be < 3\)"):
        _run(np.array([0, 7, 1], np.uint32), np.array([1, 1, 0], np.uint32), np.ones(3, np.float32))
