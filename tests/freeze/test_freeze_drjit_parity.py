"""Dr.Jit-suite parity of frozen functions (sweep of Dr.Jit 1.5's tests/test_freeze.py): the
behaviours a program ported from Dr.Jit relies on, each checked against the plain call."""
import pytest

import frostjit as fj

from freeze_helpers import F, ramp, same


@pytest.mark.no_freeze_check
def test_kernel_freezing_flag_cleared_runs_every_frozen_function_plainly():
    # Dr.Jit: with JitFlag.KernelFreezing cleared, frozen functions neither record nor replay.
    assert fj.flag(fj.JitFlag.KernelFreezing)
    f = fj.freeze(lambda x, c: x + c)
    assert same(f(F(1, 1), 0.5), F(1.5, 1.5)) and f.n_recordings == 1
    with fj.scoped_set_flag(fj.JitFlag.KernelFreezing, False):
        for n in (1, 7, 1000):
            assert same(f(ramp(n), 2.0), ramp(n) + 2)
        assert f.n_recordings == 1 and f.n_cached_recordings == 1
    assert fj.flag(fj.JitFlag.KernelFreezing)
    assert same(f(ramp(7), 0.5), ramp(7) + 0.5)


@pytest.mark.parametrize("name", ["ReuseIndices", "ConstantPropagation", "ValueNumbering",
                                  "OptimizeLoops", "OptimizeCalls", "MergeFunctions",
                                  "ScatterReduceLocal", "ForceOptiX",
                                  "ShaderExecutionReordering", "SpillToSharedMemory"])
def test_drjit_optimization_flags_are_accepted_and_change_no_result(name):
    flag = getattr(fj.JitFlag, name)
    f = fj.freeze(lambda x: fj.sum(x * 2))
    expected = f(ramp(5))
    for value in (False, True):
        with fj.scoped_set_flag(flag, value):
            assert fj.flag(flag) is value
            assert same(f(ramp(5)), expected)
