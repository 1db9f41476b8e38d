"""With mask registers, a kernel without a symbolic loop writes its outputs in groups behind one
branch per group and chunk (codegen/frame.py, ``_flush_stores``): the non-temporal stores of a
full chunk of a launch whose outputs all qualify, else masked stores.

The results must not depend on the grouping: many outputs of every element size (more than one
group, Bool stored as bytes), at launch widths around the chunk size and above the non-temporal
threshold, on one and two threads, plain and frozen at new widths, in both chunk shapes
(``FROSTJIT_MASKED_CHUNKS``), against NumPy.
"""
import llvmlite.binding as llvm
import pytest

from frostjit.backend.kernel import IN, OUT, Instr, KernelSpec
from frostjit.backend.llvm.codegen import KERNEL_PLACEHOLDER, generate_ir
from frostjit.backend.llvm.codegen.frame import STORE_GROUP
from frostjit.trace.dtypes import Bool, Float32
from test_frame_chunks import run_in_chunk_shape

pytestmark = pytest.mark.llvm_only("the LLVM backend's kernel frame (IR text)")


def _spec(n_out):
    """out_j = x * (j + 1) for j < n_out - 1, and a Bool x > 0 last."""
    instrs = [Instr("load", Float32, (), 0)]
    params = [(IN, Float32)]
    for j in range(n_out - 1):
        instrs.append(Instr("literal", Float32, (), float(j + 1)))
        instrs.append(Instr("mul", Float32, (0, len(instrs) - 1)))
        instrs.append(Instr("store", Float32, (len(instrs) - 1,), len(params)))
        params.append((OUT, Float32))
    instrs.append(Instr("literal", Float32, (), 0.0))
    instrs.append(Instr("gt", Bool, (0, len(instrs) - 1)))
    instrs.append(Instr("store", Bool, (len(instrs) - 1,), len(params)))
    params.append((OUT, Bool))
    return KernelSpec(instrs=instrs, params=params)


@pytest.mark.parametrize("n_out", [1, 4, STORE_GROUP, STORE_GROUP + 1, 2 * STORE_GROUP + 3])
def test_one_branch_per_group_of_stores(n_out):
    ir = generate_ir(_spec(n_out), 32, masked_chunks=True)
    llvm.parse_assembly(ir.replace(KERNEL_PLACEHOLDER, "@k")).verify()
    groups = -(-n_out // STORE_GROUP)
    assert ir.count("br i1 %nt.chunk,") == groups
    assert ir.count("!nontemporal !0") == n_out and ir.count("call void @llvm.masked.store") == n_out
    assert ".nt = and i1 %full" not in ir            # (the per-output choice of before)
    # every group's non-temporal block holds its stores and nothing else
    for g in range(1, groups + 1):
        block = ir[ir.index(f"sg{g}.nt:"):ir.index(f"sg{g}.masked:")]
        assert block.count("store ") == min(STORE_GROUP, n_out - (g - 1) * STORE_GROUP)


_PROGRAM = """
import numpy as np, frostjit as fj
from frostjit.llvm import Float, Float64, Bool, UInt8, UInt32
from frostjit.backend.llvm.codegen.frame import NONTEMPORAL_BYTES, STORE_GROUP
W = fj.backend.current_backend().width

def program(lib, a, u):
    if lib is np:
        x, w = a, u
        outs = [x * np.float32(k + 1) for k in range(STORE_GROUP + 1)]
        outs += [x > 0, (w + np.uint8(3)).astype(np.uint8), x.astype(np.float64) * 0.5, w.astype(np.uint32) * np.uint32(7)]
        return outs
    x, w = Float(a), UInt8(u)
    outs = [x * float(k + 1) for k in range(STORE_GROUP + 1)]
    outs += [x > 0, w + 3, Float64(x) * 0.5, UInt32(w) * 7]
    return outs

big = NONTEMPORAL_BYTES // (4 * (STORE_GROUP + 1) + 14) + 37      # the outputs above the threshold
rng = np.random.default_rng(3)
frozen = fj.freeze(lambda a, u: program(fj, a, u))
for threads in (1, 2):
    fj.set_thread_count(threads)
    for n in [0, 1, W // 2 - 1, W // 2, W // 2 + 1, W - 1, W, W + 1, 1000, 100003, big]:
        a = rng.standard_normal(n).astype(np.float32)
        u = rng.integers(0, 250, n).astype(np.uint8)
        want = program(np, a, u)
        got = program(fj, a, u)
        fj.eval(*got)
        for k, (g, w) in enumerate(zip(got, want)):
            assert np.array_equal(g.numpy(), w), (threads, n, k)
        for k, (g, w) in enumerate(zip(frozen(Float(a), UInt8(u)), want)):
            assert np.array_equal(g.numpy(), w), ("frozen", threads, n, k)
print("ok")
"""


@pytest.mark.parametrize("masked", ["0", "1"])
def test_many_outputs_of_every_size_match_numpy_plain_and_frozen(tmp_path, masked):
    run_in_chunk_shape(_PROGRAM, masked, tmp_path)
