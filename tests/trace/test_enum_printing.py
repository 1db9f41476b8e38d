"""The public enums print and number like Dr.Jit 1.5's (a ported program's logs and
``dr.set_flag`` calls by old names depend on it)."""
import pytest

import frostjit as fj

# Dr.Jit 1.5's JitFlag bit values (from its reference documentation and the installed anchor).
DRJIT_JITFLAG_BITS = {
    "Debug": 0, "ReuseIndices": 1, "ConstantPropagation": 2, "FastMath": 3, "ValueNumbering": 4,
    "SymbolicLoops": 5, "OptimizeLoops": 6, "CompressLoops": 7, "SymbolicCalls": 8,
    "OptimizeCalls": 9, "MergeFunctions": 10, "SymbolicConditionals": 11, "PacketOps": 12,
    "ForceOptiX": 13, "PrintIR": 14, "KernelHistory": 15, "LaunchBlocking": 16,
    "ForbidSynchronization": 17, "ScatterReduceLocal": 18, "SymbolicScope": 19,
    "KernelFreezing": 20, "FreezingScope": 21, "EnableObjectTraversal": 22,
    "ShaderExecutionReordering": 23, "SpillToSharedMemory": 24,
}


@pytest.mark.parametrize("name, bit", sorted(DRJIT_JITFLAG_BITS.items()))
def test_jitflag_member_has_drjits_value(name, bit):
    assert int(getattr(fj.JitFlag, name)) == 1 << bit


@pytest.mark.parametrize("old, new", [("LoopRecord", "SymbolicLoops"), ("LoopOptimize", "OptimizeLoops"),
                                      ("VCallRecord", "SymbolicCalls"), ("VCallOptimize", "OptimizeCalls"),
                                      ("VCallDeduplicate", "MergeFunctions"), ("Recording", "SymbolicScope")])
def test_old_flag_names_are_aliases(old, new):
    assert getattr(fj.JitFlag, old) is getattr(fj.JitFlag, new)


def test_setting_a_flag_by_its_old_name_changes_the_new_one():
    assert fj.flag(fj.JitFlag.SymbolicLoops)
    with fj.scoped_set_flag(fj.JitFlag.LoopRecord, False):
        assert not fj.flag(fj.JitFlag.SymbolicLoops)
    assert fj.flag(fj.JitFlag.SymbolicLoops)


def test_default_flags_are_drjits():
    assert int(fj.JitFlag.Default) == 26484606


@pytest.mark.parametrize("member", [fj.JitFlag.Debug, fj.JitFlag.KernelFreezing, fj.ADFlag.ClearEdges,
                                    fj.ADFlag.ClearNone, fj.ADMode.Backward, fj.VarType.Float32,
                                    fj.VarState.Literal, fj.ReduceOp.Add, fj.ReduceMode.Expand,
                                    fj.FilterMode.Linear, fj.WrapMode.Mirror, fj.LogLevel.Info,
                                    fj.JitBackend.LLVM, fj.KernelRecordingMode.Replayed])
def test_enum_members_print_as_class_dot_name(member):
    text = f"{type(member).__name__}.{member.name}"
    assert str(member) == repr(member) == f"{member}" == text
    assert repr([member]) == f"[{text}]"


def test_reduce_mode_values_are_drjits():
    assert [(m.name, m.value) for m in fj.ReduceMode] == [
        ("Auto", 0), ("Direct", 1), ("Local", 2), ("NoConflicts", 3), ("Expand", 4), ("Permute", 5)]
