"""The compiler's per-kernel code generator options (loop strength reduction off for symbolic-loop
kernels on targets with mask registers): switched per compile and back, results unchanged."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.backend.kernel import IN, OUT, Instr, KernelSpec
from frostjit.backend.llvm import compiler as C
from frostjit.backend.llvm.codegen import KERNEL_PLACEHOLDER, generate_ir
from frostjit.llvm import Float, UInt32
from frostjit.trace.dtypes import Float32

pytestmark = pytest.mark.llvm_only("the LLVM compiler's code generator options")


def _ir(compiler) -> str:
    spec = KernelSpec(instrs=[Instr("load", Float32, (), 0), Instr("literal", Float32, (), 1.5),
                              Instr("fma", Float32, (0, 1, 1)), Instr("store", Float32, (2,), 1)],
                      params=[(IN, Float32), (OUT, Float32)])
    return generate_ir(spec, compiler.width, compiler.mask_registers).replace(KERNEL_PLACEHOLDER, "@fj_opt_test")


def test_the_option_is_switched_per_kernel_and_back():
    compiler = current_backend().compiler
    ir = _ir(compiler)
    plain = compiler.compile_ir(ir)
    assert C._lsr_off is False
    compiler.compile_ir(ir, symbolic_loop=True)
    assert C._lsr_off is compiler.mask_registers
    assert compiler.compile_ir(ir) == plain          # the next kernel is compiled as before
    assert C._lsr_off is False


@pytest.mark.parametrize("n", [1, 31, 33, 1000])
def test_loop_kernels_after_plain_kernels_agree_with_numpy(n):
    """Loop and plain kernels compiled alternately (the option switched each time)."""
    x = np.linspace(0.1, 3.0, n, dtype=np.float32)
    for bound in (5, 9):
        plain = fj.fma(Float(x), 2.0, 1.0 + bound)
        i, y = fj.while_loop((UInt32(0), Float(x)), lambda i, y: (i < bound) & (y < 50.0),
                             lambda i, y: (i + 1, y * 1.5 + 0.25), mode="symbolic")
        fj.eval(plain, i, y)
        ref_y, ref_i = x.copy(), np.zeros(n, np.uint32)
        for _ in range(bound):
            run = ref_y < 50.0
            ref_y = np.where(run, ref_y * np.float32(1.5) + np.float32(0.25), ref_y).astype(np.float32)
            ref_i += run
        assert np.array_equal(i.numpy(), ref_i)
        np.testing.assert_allclose(y.numpy(), ref_y, rtol=1e-6)
        np.testing.assert_allclose(plain.numpy(), x * 2.0 + 1.0 + bound, rtol=1e-6)
