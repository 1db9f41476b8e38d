"""Kernels with many live values are generated one register wide (Compiler.kernel_width).

The choice must never change a result: every lane computes the same thing at either chunk
width, launches split work at multiples of the wider one, and kernels that reduce keep the
wide chunks (their partial sums' order depends on the width).
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm
from frostjit.backend import current_backend
from frostjit.backend.kernel import KernelSpec, Instr, IN, OUT
from frostjit.backend.llvm import compiler as compiler_module
from frostjit.trace.dtypes import Float32

pytestmark = pytest.mark.llvm_only("chunk widths of the LLVM code generator")


def _fan_in(n: int) -> KernelSpec:
    """n loads, all live until a chain of adds at the end sums them."""
    instrs = [Instr("load", Float32, (), k) for k in range(n)]
    acc = 0
    for k in range(1, n):
        instrs.append(Instr("add", Float32, (acc, k)))
        acc = len(instrs) - 1
    instrs.append(Instr("store", Float32, (acc,), n))
    return KernelSpec(instrs=instrs, params=[(IN, Float32)] * n + [(OUT, Float32)])


def _chain(n: int) -> KernelSpec:
    """One load and n dependent multiplications: two values live at a time."""
    instrs = [Instr("load", Float32, (), 0), Instr("literal", Float32, (), 1.5)]
    for _ in range(n):
        instrs.append(Instr("mul", Float32, (len(instrs) - 1, 1)))
    instrs.append(Instr("store", Float32, (len(instrs) - 1,), 1))
    return KernelSpec(instrs=instrs, params=[(IN, Float32), (OUT, Float32)])


def test_live_values_count_definitions_to_last_uses():
    assert compiler_module.max_live_values(_chain(300)) == 1
    assert compiler_module.max_live_values(_fan_in(100)) == 100
    assert compiler_module.max_live_values(KernelSpec()) == 0


def test_width_follows_the_live_values_and_reductions_keep_the_wide_chunks():
    comp = current_backend().compiler
    assert comp.kernel_width(_chain(400)) == comp.width
    assert comp.kernel_width(_fan_in(40)) == comp.width             # too short to look at
    assert comp.kernel_width(_fan_in(300)) == comp.simd_lanes
    spec = _fan_in(300)
    spec.instrs.insert(-1, Instr("reduce", Float32, (len(spec.instrs) - 2,), "add"))
    assert comp.kernel_width(spec) == comp.width


def _cubic_lookups(n: int, frozen: bool):
    rng = np.random.default_rng(n)
    tex = llvm.Texture2f(llvm.TensorXf(rng.random((5, 7, 4), dtype=np.float32)),
                         wrap_mode=fj.WrapMode.Repeat)

    def f(x, y):
        return tex.eval_cubic_hessian([x, y])

    f = fj.freeze(f) if frozen else f
    x = llvm.Float(rng.uniform(-0.5, 1.5, n).astype(np.float32))
    y = llvm.Float(rng.uniform(-0.5, 1.5, n).astype(np.float32))
    out = f(x, y)
    fj.eval(out)
    leaves = []

    def walk(v):
        if isinstance(v, (list, tuple)) or (hasattr(v, "__len__") and type(v).__name__.startswith(
                ("Array", "Matrix"))):
            for e in v:
                walk(e)
        else:
            leaves.append(np.array(v))
    walk(out)
    return leaves


@pytest.mark.parametrize("frozen", [False, True])
def test_narrow_and_wide_kernels_give_identical_results(monkeypatch, frozen):
    comp = current_backend().compiler
    chosen = []
    choose = compiler_module.Compiler.kernel_width
    monkeypatch.setattr(compiler_module.Compiler, "kernel_width",
                        lambda self, spec: chosen.append(choose(self, spec)) or chosen[-1])
    results = {}
    for mode, live in (("wide", 10**9), ("narrow", 1)):
        monkeypatch.setattr(compiler_module, "NARROW_LIVE", live)
        monkeypatch.setattr(compiler_module, "NARROW_MIN_INSTRS", 0)
        fj.flush_kernel_cache()
        chosen.clear()
        results[mode] = [_cubic_lookups(n, frozen) for n in (1, 17, 33, 1000, 70001)]
        assert set(chosen) == {comp.width if mode == "wide" else comp.simd_lanes}
    fj.flush_kernel_cache()
    for wide, narrow in zip(results["wide"], results["narrow"]):
        assert len(wide) == len(narrow) > 10
        for a, b in zip(wide, narrow):
            np.testing.assert_array_equal(a, b)
