"""Stream compaction with ``scatter_inc`` inside a frozen function (the pattern of Dr.Jit's
test_freeze.py test53: a counter and an output buffer passed in, lanes above a threshold appended,
at most ``capacity`` of them), frozen vs plain at several widths.  The slot each lane gets depends
on the order the lanes run in, so the comparison is of what does not: the final counter, the slots
handed out (0 .. count-1, each once), and the set of values written."""
import numpy as np
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Float, UInt32


def _append(x, counter, out, capacity, threshold):
    active = x > threshold
    slot = fj.scatter_inc(counter, UInt32(0), active=active)
    fj.scatter(out, x, slot, active=active & (slot < capacity))
    return slot, active


def _run(fn, values, threshold, capacity):
    x = Float(np.asarray(values, dtype=np.float32))
    counter = UInt32(fj.opaque(UInt32, 0))
    out = fj.full(Float, -1.0, capacity)
    cap = UInt32(fj.opaque(UInt32, capacity))
    fj.eval(x, counter, out, cap)
    slot, active = fn(x, counter, out, cap, threshold)
    count = int(counter.numpy()[0])
    slots = np.sort(slot.numpy()[active.numpy()])
    written = np.sort(out.numpy()[out.numpy() >= 0])
    return count, slots, written


@settings(max_examples=12)
@given(st.lists(st.integers(1, 1500), min_size=1, max_size=4), st.integers(0, 1000),
       st.sampled_from([0.25, 0.5, 0.9]), st.sampled_from([4, 10, 64]))
def test_compaction_replays_like_the_plain_call(widths, seed, threshold, capacity):
    rng = np.random.default_rng(seed)
    frozen = fj.freeze(_append)
    for n in widths:
        values = rng.uniform(0, 1, n).astype(np.float32)
        got = _run(frozen, values, threshold, capacity)
        want = _run(_append, values, threshold, capacity)
        expected_count = int(np.sum(values > threshold))
        assert got[0] == want[0] == expected_count
        assert np.array_equal(got[1], np.arange(expected_count))
        assert np.array_equal(want[1], np.arange(expected_count))
        assert len(got[2]) == len(want[2]) == min(expected_count, capacity)
        if expected_count <= capacity:     # every selected value is written (otherwise: which fit varies)
            assert np.array_equal(got[2], want[2])
            assert np.array_equal(got[2], np.sort(values[values > threshold]))
        else:
            assert np.all(np.isin(got[2], values[values > threshold]))
