"""Large kernels: the loop body is cut into basic blocks, and they survive LLVM.

LLVM's machine instruction scheduler is quadratic in the size of a basic block: one
30,000-operation block took ~10 s to compile (Dr.Jit: ~2 s).  codegen cuts the body into
blocks of about BLOCK_INSTRS instructions at operation boundaries, and takes their addresses so
LLVM cannot merge them back.  The results must not change: differential tests against NumPy
(plain and frozen, several widths) on kernels long enough to be cut, with gathers and scatters
(whose own branches must never be cut).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.backend.llvm.codegen import BLOCK_INSTRS, KERNEL_PLACEHOLDER, generate_ir
from frostjit.llvm import Float, UInt32
from frostjit.schedule.kernel import build_kernel

import llvmlite.binding as llvm

pytestmark = pytest.mark.llvm_only("the LLVM backend's code generation (IR text, basic blocks)")

WIDTHS = [1, 7, 1000, 100003]

# Integer operations, exact in NumPy (uint32 wraps the same way).
OPS = {
    "mul3_add": (lambda z, x: z * 3 + x, lambda z, x: z * np.uint32(3) + x),
    "xor_shr": (lambda z, x: z ^ (z >> 3), lambda z, x: z ^ (z >> np.uint32(3))),
    "add_shl": (lambda z, x: z + (x << 1), lambda z, x: z + (x << np.uint32(1))),
    "sub_and": (lambda z, x: (z - x) & 0x7FFFFFFF, lambda z, x: (z - x) & np.uint32(0x7FFFFFFF)),
}


def chain(ops, x, lib):
    z = x
    for name in ops:
        z = OPS[name][lib](z, x)
    return z


def spec_of(z):
    return build_kernel([z._node], [])


def test_a_long_body_is_cut_into_blocks_of_bounded_size():
    x = fj.arange(Float, 10)
    z = x
    for _ in range(1000):
        z = fj.fma(z, z, x) * 0.5 + 0.25
    be = current_backend()
    ir = generate_ir(spec_of(z), be.width)
    body = ir[ir.index("body:"):ir.index("latch:")].splitlines()
    sizes, n = [], 0
    for line in body[1:]:
        if line.endswith(":"):
            sizes.append(n)
            n = 0
        else:
            n += 1
    sizes.append(n)
    assert len(sizes) >= 3000 // BLOCK_INSTRS
    assert max(sizes) <= BLOCK_INSTRS + 10
    assert "blockaddress(" in ir and "@llvm.compiler.used" in ir


def test_the_blocks_survive_llvm():
    """Without the taken addresses LLVM merges the blocks back into one (and compile time is quadratic)."""
    x = fj.arange(Float, 10)
    z = x
    for _ in range(700):
        z = fj.fma(z, z, x) * 0.5 + 0.25
    be = current_backend()
    ir = generate_ir(spec_of(z), be.width).replace(KERNEL_PLACEHOLDER, "@k")
    n_split = ir.count("blockaddress(")
    assert n_split >= 3
    compiler = be.compiler
    mod = llvm.parse_assembly(ir)
    pb = llvm.create_pass_builder(compiler.tm, llvm.create_pipeline_tuning_options(speed_level=0))
    pm = llvm.create_new_module_pass_manager()
    pm.add_always_inliner_pass()
    pm.add_simplify_cfg_pass()
    pm.run(mod, pb)
    asm = compiler.tm.emit_assembly(mod)
    # Each block whose address is taken gets a label of its own in the machine code.
    labels = [line for line in asm.splitlines() if line.startswith((".LBB", ".Ltmp")) and line.endswith(":")]
    assert len(labels) >= n_split


def test_small_kernels_are_not_cut():
    x = fj.arange(Float, 10)
    ir = generate_ir(spec_of(fj.sin(x) * 2 + 1), current_backend().width)
    assert "blockaddress(" not in ir and "body.1:" not in ir


@pytest.mark.parametrize("n", WIDTHS)
def test_long_integer_chain_matches_numpy(n):
    ops = list(OPS) * 150        # 600 steps, ~2,000 operations: several blocks
    a = (np.arange(n, dtype=np.uint64) * 2654435761 % 2**32).astype(np.uint32)
    got = chain(ops, UInt32(a), 0).numpy()
    with np.errstate(over="ignore"):
        want = chain(ops, a, 1)
    np.testing.assert_array_equal(got, want)


@settings(max_examples=8)
@given(ops=st.lists(st.sampled_from(sorted(OPS)), min_size=150, max_size=400),
       n=st.sampled_from(WIDTHS), seed=st.integers(0, 2**32 - 1))
def test_random_long_chains_match_numpy(ops, n, seed):
    a = np.random.default_rng(seed).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    got = chain(ops, UInt32(a), 0).numpy()
    with np.errstate(over="ignore"):
        want = chain(ops, a, 1)
    np.testing.assert_array_equal(got, want)


def _gather_scatter_program(x, src, idx, tgt_size, lib):
    """A long body with gathers (each a small diamond of branches) and scatter_adds spread through it."""
    z = x
    for k in range(120):
        g = src[idx] if lib == 1 else fj.gather(UInt32, src, idx)
        z = z * 3 + g + k
        z = z ^ (z >> 5)
    if lib == 1:
        t = np.zeros(tgt_size, np.uint32)
        np.add.at(t, idx % tgt_size, z)
        return z, t
    t = fj.zeros(UInt32, tgt_size)
    fj.scatter_add(t, z, idx % tgt_size)
    return z, t


@pytest.mark.parametrize("n", WIDTHS)
def test_long_body_with_gathers_and_scatters_matches_numpy(n):
    rng = np.random.default_rng(n)
    src = rng.integers(0, 2**32, 257, dtype=np.uint64).astype(np.uint32)
    idx = rng.integers(0, 257, n).astype(np.uint32)
    x = np.arange(n, dtype=np.uint32)
    z, t = _gather_scatter_program(UInt32(x), UInt32(src), UInt32(idx), 31, 0)
    with np.errstate(over="ignore"):
        zw, tw = _gather_scatter_program(x, src, idx, 31, 1)
    np.testing.assert_array_equal(z.numpy(), zw)
    np.testing.assert_array_equal(t.numpy(), tw)


def test_frozen_long_kernel_matches_plain_at_every_width():
    ops = list(OPS) * 150

    @fj.freeze
    def f(x):
        return chain(ops, x, 0)

    for n in WIDTHS + [1000, 7]:
        a = (np.arange(n, dtype=np.uint64) * 40503 % 2**32).astype(np.uint32)
        with np.errstate(over="ignore"):
            want = chain(ops, a, 1)
        np.testing.assert_array_equal(f(UInt32(a)).numpy(), want)
