"""trace/state.py: JitFlag carries every name of Dr.Jit 1.5's enum a program may set."""
import pytest

import frostjit as fj

# Dr.Jit 1.5's JitFlag members that are not status flags (SymbolicScope, FreezingScope and
# Recording report where the JIT is; frostjit does not have them)
DRJIT_FLAGS = ["Debug", "ReuseIndices", "ConstantPropagation", "ValueNumbering", "FastMath", "SymbolicLoops",
               "OptimizeLoops", "CompressLoops", "SymbolicCalls", "OptimizeCalls", "MergeFunctions", "PacketOps",
               "ForceOptiX", "PrintIR", "KernelHistory", "LaunchBlocking", "ForbidSynchronization",
               "ScatterReduceLocal", "SymbolicConditionals", "ShaderExecutionReordering", "KernelFreezing",
               "EnableObjectTraversal", "SpillToSharedMemory", "Default", "VCallRecord", "VCallOptimize",
               "VCallDeduplicate", "LoopRecord", "LoopOptimize"]


@pytest.mark.parametrize("name", DRJIT_FLAGS)
def test_drjit_flag_names_exist_and_can_be_set(name):
    # (VCallRecord, the name Dr.Jit's switch tests set, FastMath, PrintIR, ... were missing)
    f = getattr(fj.JitFlag, name)
    if name != "Default":
        before = fj.flag(f)
        with fj.scoped_set_flag(f, not before):
            assert fj.flag(f) == (not before)
        assert fj.flag(f) == before


def test_former_names_are_aliases_of_the_current_flags():
    assert fj.JitFlag.VCallRecord is fj.JitFlag.SymbolicCalls
    assert fj.JitFlag.LoopRecord is fj.JitFlag.SymbolicLoops
    assert fj.JitFlag.VCallOptimize is fj.JitFlag.OptimizeCalls
    with fj.scoped_set_flag(fj.JitFlag.VCallRecord, False):
        assert not fj.flag(fj.JitFlag.SymbolicCalls)
