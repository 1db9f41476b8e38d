"""Large outputs are written with non-temporal stores, small or misaligned ones through the caches.

A kernel writes a full chunk of an output of at least ``NONTEMPORAL_BYTES`` bytes with one
non-temporal vector store when the chunk's address is aligned for it (x86 has no unaligned or
masked non-temporal store); the tail chunk, small outputs and misaligned buffers keep masked
stores.  Pool buffers start on 64-byte boundaries so that the fast path is the usual one.  The
results must not depend on the path: differential tests against NumPy around the threshold,
with several outputs of different sizes, plain and frozen, and launches on misaligned buffers.
"""
import ctypes

import llvmlite.binding as llvm
import numpy as np
import pytest

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.backend.llvm import memory
from frostjit.backend.llvm.codegen import KERNEL_PLACEHOLDER, generate_ir
from frostjit.backend.llvm.codegen.frame import NONTEMPORAL_BYTES
from frostjit.llvm import Bool, Float, UInt32, UInt64
from frostjit.schedule.kernel import build_kernel

pytestmark = pytest.mark.llvm_only("the LLVM backend's buffers and store instructions")

N_BIG = NONTEMPORAL_BYTES // 4          # Float32 elements at the threshold


def _program(lib, x):
    """Three outputs of 1, 4 and 8 bytes per lane from one input (one kernel)."""
    if lib is np:
        with np.errstate(over="ignore"):
            h = x * np.uint32(2654435761)
            return (h >> np.uint32(9)) > np.uint32(1 << 22), (h >> np.uint32(8)).astype(np.float32), \
                h.astype(np.uint64) * np.uint64(3)
    h = x * 2654435761
    return (h >> 9) > (1 << 22), Float(h >> 8), UInt64(h) * 3


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.uint64, np.float64])
@pytest.mark.parametrize("count", [1, 3, 1000, 100003, 1 << 20])
def test_pool_buffers_start_on_a_64_byte_boundary(dtype, count):
    b = memory.allocate(np.dtype(dtype), count)
    assert b.ptr % memory.ALIGN == 0
    assert b.ptr == b.array.ctypes.data and b.array.shape == (count,) and b.array.dtype == dtype


def test_a_recycled_buffer_of_another_dtype_keeps_its_address_and_length():
    b = memory.allocate(np.dtype(np.float32), 2 * 100003)
    ptr = b.ptr
    del b                                   # back to the pool (nothing else refers to it)
    c = memory.allocate(np.dtype(np.uint64), 100003)          # the same number of bytes
    assert c.ptr == ptr and c.array.ctypes.data == ptr and c.array.shape == (100003,)
    c.array[:] = 7
    assert int(c.array.sum()) == 7 * 100003


def test_kernels_with_outputs_have_a_non_temporal_path():
    x = fj.arange(UInt32, 10)
    spec = build_kernel([o._node for o in _program(fj, x)], [])
    ir = generate_ir(spec, current_backend().width)
    assert ir.count("!nontemporal !0") == 3 and "!0 = !{i32 1}" in ir
    assert ir.count("call void @llvm.masked.store") == 3      # the tail, small and misaligned outputs


def test_the_non_temporal_stores_reach_the_machine_code():
    if "x86" not in llvm.get_default_triple():
        pytest.skip("checks x86 instructions")
    be = current_backend()
    x = fj.arange(UInt32, 10)
    ir = generate_ir(build_kernel([(x * 3)._node], []), be.width).replace(KERNEL_PLACEHOLDER, "@k")
    asm = be.compiler.tm.emit_assembly(llvm.parse_assembly(ir))
    assert "movnt" in asm


@pytest.mark.parametrize("n", [1, 7, 1000, N_BIG // 2 - 1, N_BIG - 1, N_BIG, N_BIG + 7, 2 * N_BIG + 13])
@pytest.mark.parametrize("threads", [1, 2])
def test_outputs_around_the_threshold_match_numpy(n, threads):
    old = fj.thread_count()
    fj.set_thread_count(threads)
    try:
        a = (np.arange(n, dtype=np.uint64) * 0x9E3779B9 % 2**32).astype(np.uint32)
        got = _program(fj, UInt32(a))
        fj.eval(*got)
        for g, w in zip(got, _program(np, a)):
            np.testing.assert_array_equal(g.numpy(), w)
    finally:
        fj.set_thread_count(old)


@pytest.mark.parametrize("n", [7, N_BIG + 7, 2 * N_BIG + 13])
def test_frozen_outputs_around_the_threshold_match_plain(n):
    frozen = fj.freeze(lambda x: _program(fj, x))
    for k in range(3):
        a = (np.arange(n + k, dtype=np.uint64) * 0x9E3779B9 % 2**32).astype(np.uint32)
        got = frozen(UInt32(a))
        for g, w in zip(got, _program(np, a)):
            np.testing.assert_array_equal(g.numpy(), w)


@pytest.mark.parametrize("skew", [1, 4, 60])
@pytest.mark.parametrize("start", [0, 5])
def test_a_misaligned_output_or_start_is_written_exactly(skew, start):
    """A launch whose output is not 64-byte aligned (a buffer not from the pool) or that starts
    mid-chunk writes exactly its lanes, through masked stores."""
    be = current_backend()
    n = N_BIG + 100
    x = fj.arange(UInt32, 10)
    spec = build_kernel([(x * 3 + 1)._node], [])
    assert [kind for kind, _ in spec.params] == ["out"]
    kernel, _ = be.compiler.get(spec)
    raw = np.zeros(4 * n + 128, np.uint8)
    off = (-raw.ctypes.data) % 64 + skew
    out = raw[off:off + 4 * n].view(np.uint32)
    sentinel = np.full(4 * n + 128, 0xAB, np.uint8)
    raw[:] = sentinel
    args = (ctypes.c_int64 * 2)(out.ctypes.data, n)
    kernel.cfunc(start, n, args, 0)
    want = np.arange(n, dtype=np.uint32) * np.uint32(3) + np.uint32(1)
    np.testing.assert_array_equal(out[start:], want[start:])
    assert (raw[:off + 4 * start] == 0xAB).all() and (raw[off + 4 * n:] == 0xAB).all()


def test_bool_outputs_are_stored_as_bytes_on_both_paths():
    n = NONTEMPORAL_BYTES + 37           # Bool: one byte per lane, above the threshold
    a = np.arange(n, dtype=np.uint32)
    m = UInt32(a) % 3 == 1
    np.testing.assert_array_equal(m.numpy(), a % 3 == 1)
    assert Bool is type(m)


@pytest.mark.parametrize("n", [N_BIG // 3 - 5, N_BIG + 37])
def test_loop_kernel_outputs_above_the_threshold_match_numpy(n):
    """A kernel with a symbolic loop writes its outputs through the caches whatever their size
    (``frame._cached_stores``: masked stores in every chunk with mask registers, plain ones in
    full chunks without): three outputs of 4, 4 and 1 bytes per lane from 12 MiB in all down to
    just below the threshold, each with a partial last chunk, must match NumPy."""
    xs = (np.arange(n, dtype=np.uint32) * np.uint32(2654435761)) >> np.uint32(28)     # 0..15 iterations
    x = UInt32(xs)
    i, s = fj.while_loop((UInt32(0), Float(0.0)), lambda i, s: i < x,
                         lambda i, s: (i + 1, s + Float(i) * 0.5), mode="symbolic")
    big = s > 10.0
    fj.eval(i, s, big)
    ref_s = (xs.astype(np.float32) * (xs.astype(np.float32) - 1)) * np.float32(0.25)     # exact: small integers
    assert np.array_equal(i.numpy(), xs)
    assert np.array_equal(s.numpy(), ref_s)
    assert np.array_equal(big.numpy(), ref_s > 10.0)
