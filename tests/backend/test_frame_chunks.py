"""The kernel frame without mask registers: inputs read together at the start of a chunk,
outputs written together at its end (codegen/frame.py, ``_grouped_loads``/``_grouped_stores``).

One branch per chunk between plain and masked loads (and one for the stores) instead of one per
load and store: AVX2 code generation of the Mandelbrot kernel ~20% cheaper.  8- and 16-bit
elements, which AVX2 cannot mask (LLVM would branch per lane), go through stack slots in the last
chunk instead.  The results must not
change: every launch width around the chunk size, inputs and outputs of every element size (Bool
is stored as bytes, Float16 as 16 bits), inputs read inside a symbolic loop, in both chunk shapes
(masked chunks are the default on AVX-512, grouped ones elsewhere).
"""
import os
import subprocess
import sys

import pytest

from frostjit.backend.kernel import IN, OUT, Instr, KernelSpec, LoopInfo
from frostjit.backend.llvm.codegen import KERNEL_PLACEHOLDER, generate_ir
from frostjit.trace.dtypes import Bool, Float16, Float32, Float64, UInt32

import llvmlite.binding as llvm

pytestmark = pytest.mark.llvm_only("the LLVM backend's kernel frame (IR text)")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _spec():
    """out0 = x * 2 (Float32), out1 = not b (Bool), out2 = h (Float16), out3 = d + d (Float64)."""
    return KernelSpec(
        instrs=[Instr("load", Float32, (), 0), Instr("load", Bool, (), 1), Instr("load", Float16, (), 2),
                Instr("load", Float64, (), 3), Instr("literal", Float32, (), 2.0),
                Instr("mul", Float32, (0, 4)), Instr("not", Bool, (1,)), Instr("add", Float64, (3, 3)),
                Instr("store", Float32, (5,), 4), Instr("store", Bool, (6,), 5),
                Instr("store", Float16, (2,), 6), Instr("store", Float64, (7,), 7)],
        params=[(IN, Float32), (IN, Bool), (IN, Float16), (IN, Float64),
                (OUT, Float32), (OUT, Bool), (OUT, Float16), (OUT, Float64)])


@pytest.mark.parametrize("width", [8, 16, 32])
def test_without_mask_registers_one_branch_reads_every_input_and_one_writes_every_output(width):
    ir = generate_ir(_spec(), width, masked_chunks=False)
    llvm.parse_assembly(ir.replace(KERNEL_PLACEHOLDER, "@k")).verify()
    body = ir[ir.index("body:"):ir.index("latch:")]
    assert body.count("br i1 %full,") == 2                     # one for the loads, one for the stores
    # 32- and 64-bit elements (Float32, Float64): masked loads and stores in the last chunk only
    assert body.count("@llvm.masked.load") == 2
    assert body.count("@llvm.masked.store") == 2
    tail_in = body[body.index("ld.tail:"):body.index("ld.end:")]
    assert tail_in.count("@llvm.masked.load") == 2
    tail_out = body[body.index("st.tail:"):body.index("st.end:")]
    assert tail_out.count("@llvm.masked.store") == 2
    # 8- and 16-bit elements (Bool, Float16): copied through stack slots by one loop each way, then
    # one plain load (store) whose address is the slot's in the last chunk
    assert "@llvm.masked.load.v" not in "".join(ln for ln in body.splitlines() if "i8" in ln or "half" in ln)
    assert tail_in.count("@llvm.memset") == 2 and "ld.copy:" in tail_in and "st.copy:" in tail_out
    assert body.count("select i1 %full, ptr") == 4
    assert "call void @memcpy" not in ir and "@llvm.memcpy" not in ir
    assert body.count("!nontemporal") == 4                      # full chunks: a choice per output


def test_with_mask_registers_every_load_and_store_is_masked():
    ir = generate_ir(_spec(), 32, masked_chunks=True)
    llvm.parse_assembly(ir.replace(KERNEL_PLACEHOLDER, "@k")).verify()
    assert "ld.tail:" not in ir and "st.tail:" not in ir
    assert ir.count("call <32 x") == 4 and ir.count("call void @llvm.masked.store") == 4


def _loop_spec():
    """A symbolic loop (``while i < n: i += 1; s += x``) whose state is stored as UInt32, Float32 and,
    compared, Bool: out = (i, s, s > 0)."""
    return KernelSpec(
        instrs=[Instr("load", UInt32, (), 0), Instr("load", Float32, (), 1),
                Instr("literal", UInt32, (), 0), Instr("literal", Float32, (), 0.0),
                Instr("literal", UInt32, (), 1),
                Instr("loop_start", Bool, (2, 3), LoopInfo(n_state=2, cond=9, end=12)),
                Instr("loop_phi", UInt32, (5,), 0), Instr("loop_phi", Float32, (5,), 1),
                Instr("lt", Bool, (6, 0)), Instr("loop_cond", Bool, (5, 8)),
                Instr("add", UInt32, (6, 4)), Instr("add", Float32, (7, 1)),
                Instr("loop_end", Bool, (5, 10, 11)),
                Instr("loop_out", UInt32, (5,), 0), Instr("loop_out", Float32, (5,), 1),
                Instr("gt", Bool, (14, 3)),
                Instr("store", UInt32, (13,), 2), Instr("store", Float32, (14,), 3), Instr("store", Bool, (15,), 4)],
        params=[(IN, UInt32), (IN, Float32), (OUT, UInt32), (OUT, Float32), (OUT, Bool)])


def test_a_kernel_with_a_loop_has_no_non_temporal_path():
    """Loop kernels are compute-bound: their outputs are always written through the caches,
    which saves code generation the per-output choice (frame._cached_stores), with and without
    mask registers; other kernels keep it."""
    loop = generate_ir(_loop_spec(), 16, masked_chunks=False)
    llvm.parse_assembly(loop.replace(KERNEL_PLACEHOLDER, "@k")).verify()
    assert "!nontemporal" not in loop and ".nt" not in loop and "%out.big" not in loop
    assert loop.count("call void @llvm.masked.store") == 2 and "st.copy:" in loop    # last chunk
    assert "br i1 %full, label %st.whole, label %st.tail" in loop
    assert generate_ir(_spec(), 16, masked_chunks=False).count("!nontemporal") == 4
    masked = generate_ir(_loop_spec(), 32, masked_chunks=True)
    llvm.parse_assembly(masked.replace(KERNEL_PLACEHOLDER, "@k")).verify()
    assert "!nontemporal" not in masked and ".nt" not in masked and "%out.big" not in masked
    assert masked.count("call void @llvm.masked.store") == 3 and "br i1 %full" not in masked
    assert generate_ir(_spec(), 32, masked_chunks=True).count("!nontemporal") == 4


def test_lane_indices_only_where_the_counter_reads_them():
    """The frame emits the lanes' 64-bit indices only for a kernel with a counter (arange):
    dead vector code costs instruction selection."""
    assert "%lane" not in generate_ir(_spec(), 16, masked_chunks=False)
    counter = KernelSpec(instrs=[Instr("counter", UInt32, ()), Instr("store", UInt32, (0,), 0)],
                         params=[(OUT, UInt32)])
    for masked in (False, True):
        ir = generate_ir(counter, 16, masked_chunks=masked)
        llvm.parse_assembly(ir.replace(KERNEL_PLACEHOLDER, "@k")).verify()
        assert "%lane = add <16 x i64>" in ir


_PROGRAM = """
import numpy as np, frostjit as fj
from frostjit.llvm import Float, Float16, Float64, Bool, UInt8, UInt32
W = fj.backend.current_backend().width
rng = np.random.default_rng(5)
for n in list(range(1, W + 2)) + [2 * W - 1, 2 * W, 2 * W + 1, 1000]:
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.random(n) < 0.5
    h = rng.standard_normal(n).astype(np.float16)
    d = rng.standard_normal(n)
    u = rng.integers(0, 12, n).astype(np.uint8)
    x, m, y, z, w = Float(a), Bool(b), Float16(h), Float64(d), UInt8(u)
    outs = [x * 2 + Float(z), ~m, y * 2, z - Float64(x), w + 1, fj.select(m, x, -x)]
    fj.eval(*outs)
    ref = [a * 2 + d.astype(np.float32), ~b, h * np.float16(2), d - a.astype(np.float64),
           (u + np.uint8(1)).astype(np.uint8), np.where(b, a, -a)]
    for k, (o, r) in enumerate(zip(outs, ref)):
        assert np.array_equal(o.numpy(), r), (n, k)
    # inputs read inside a symbolic loop: lane j adds a[j] u[j] times
    i, s = fj.while_loop((UInt32(0), Float(0.0)), lambda i, s: i < UInt32(w),
                         lambda i, s: (i + 1, s + x), mode="symbolic")
    pos, hs, d2 = s > 0, Float16(s), Float64(s) * 2     # 8-, 16- and 64-bit outputs of the loop's kernel
    fj.eval(i, s, pos, hs, d2)
    acc = np.zeros(n, np.float32)
    for step in range(12):
        acc = np.where(step < u, acc + a, acc)
    assert np.array_equal(i.numpy(), u.astype(np.uint32)) and np.array_equal(s.numpy(), acc), n
    assert np.array_equal(pos.numpy(), acc > 0) and np.array_equal(hs.numpy(), acc.astype(np.float16)), n
    assert np.array_equal(d2.numpy(), acc.astype(np.float64) * 2), n
print("ok")
"""


def run_in_chunk_shape(program: str, masked: str, cache_dir) -> None:
    """Run ``program`` (which prints "ok") in a fresh process with ``FROSTJIT_MASKED_CHUNKS=masked``
    and its own kernel cache."""
    env = dict(os.environ, FROSTJIT_MASKED_CHUNKS=masked, FROSTJIT_CACHE_DIR=str(cache_dir), PYTHONPATH=REPO)
    r = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout[-2000:] + r.stderr[-2000:]


@pytest.mark.parametrize("masked", ["0", "1"])
def test_every_tail_width_and_element_size_gives_numpys_results(tmp_path, masked):
    run_in_chunk_shape(_PROGRAM, masked, tmp_path)
