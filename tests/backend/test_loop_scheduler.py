"""Kernels with a symbolic loop are compiled without LLVM's machine scheduler (Compiler._emit).

The LLVM option is process-wide: it must be back on after each such compile, so that every
other kernel (and any other llvmlite user in the process) gets the scheduled code it got before.
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm
from frostjit.backend import current_backend
from frostjit.backend.llvm import compiler as compiler_module
from frostjit.backend.llvm.codegen import generate_ir, KERNEL_PLACEHOLDER
from frostjit.backend.kernel import KernelSpec, Instr, IN, OUT
from frostjit.trace.dtypes import Float32

pytestmark = pytest.mark.llvm_only("machine scheduling of the LLVM code generator")


def _fan_in_ir(comp, n: int) -> str:
    """IR of a kernel with ``n`` inputs all live until a chain of adds sums them: many values
    in flight, so the scheduler reorders its instructions."""
    instrs = [Instr("load", Float32, (), k) for k in range(n)]
    acc = 0
    for k in range(1, n):
        instrs.append(Instr("add", Float32, (acc, k)))
        acc = len(instrs) - 1
    instrs.append(Instr("store", Float32, (acc,), n))
    spec = KernelSpec(instrs=instrs, params=[(IN, Float32)] * n + [(OUT, Float32)])
    return generate_ir(spec, comp.width, comp.mask_registers).replace(KERNEL_PLACEHOLDER, "@fj_sched_test")


def test_the_scheduler_is_back_on_after_an_unscheduled_compile():
    comp = current_backend().compiler
    ir = _fan_in_ir(comp, 24)
    scheduled = comp.compile_ir(ir)
    unscheduled = comp.compile_ir(ir, schedule=False)
    assert comp.compile_ir(ir) == scheduled
    if unscheduled == scheduled:
        pytest.skip("this CPU's scheduling model leaves the test kernel as it is")


def test_only_kernels_with_a_symbolic_loop_skip_the_scheduler(monkeypatch):
    seen = []
    compile_ir = compiler_module.Compiler.compile_ir

    def spy(self, ir, schedule=True):
        seen.append(schedule)
        return compile_ir(self, ir, schedule)

    monkeypatch.setattr(compiler_module.Compiler, "compile_ir", spy)
    n = 1000
    rng = np.random.default_rng(5)
    c = rng.uniform(-0.8, 0.8, n).astype(np.float32)
    bound = 17 + int(rng.integers(1000))          # a new kernel (not found in memory or on disk)
    x = llvm.Float(c) * 0.5 + 0.125               # a kernel without a loop
    fj.eval(x)
    assert seen == [True] or seen == []           # [] when the disk cache had it
    seen.clear()

    i, z = fj.while_loop((llvm.UInt32(0), llvm.Float(0.0)), lambda i, z: (i < bound) & (z * z < 4.0),
                         lambda i, z: (i + 1, z * z + x), mode="symbolic")
    fj.eval(i, z)
    assert False in seen and True not in seen
    ref_i = np.zeros(n, np.uint32)
    ref_z = np.zeros(n, np.float32)
    xs = c * np.float32(0.5) + np.float32(0.125)
    for _ in range(bound):
        act = ref_z * ref_z < 4.0
        if not act.any():
            break
        ref_i = np.where(act, ref_i + 1, ref_i)
        ref_z = np.where(act, ref_z * ref_z + xs, ref_z)
    np.testing.assert_array_equal(i.numpy(), ref_i)
    np.testing.assert_array_equal(z.numpy(), ref_z)
