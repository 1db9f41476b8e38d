"""frostjit.llvm.Event: Dr.Jit's stream events (record, wait, query, elapsed_time)."""
import time

import pytest

import frostjit as fj
from frostjit import llvm


def test_a_recorded_event_is_complete_and_times_the_work_between_two_events():
    # (frostjit.llvm.Event did not exist: AttributeError for programs timing their kernels)
    start, end = llvm.Event(enable_timing=True), llvm.Event()
    start.record()
    fj.eval(fj.sqrt(fj.arange(llvm.Float, 1000)))
    time.sleep(0.01)
    end.record()
    end.wait()
    assert end.query() is True
    assert start.elapsed_time(end) >= 10.0 and end.elapsed_time(start) == 0.0
    assert llvm.ad.Event is llvm.Event


def test_elapsed_time_needs_timing_and_recorded_events():
    a, b = llvm.Event(enable_timing=False), llvm.Event(enable_timing=False)
    a.record()
    b.record()
    with pytest.raises(RuntimeError, match="timing"):
        a.elapsed_time(b)
    with pytest.raises(RuntimeError, match="recorded"):
        llvm.Event().elapsed_time(llvm.Event())
    with pytest.raises(TypeError, match="'end_event' must be an Event"):
        llvm.Event().elapsed_time(3)
