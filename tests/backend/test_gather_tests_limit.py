"""Kernels with many gathers emit plain hardware gathers (codegen/memory.py, GATHER_TESTS_MAX).

Up to GATHER_TESTS_MAX gathers of run-time indices per kernel, each chunk tests for one element
or consecutive elements before the hardware gather (six basic blocks per gather); beyond, the
tests' compile time grows faster than their number (a cubic 3-D texture lookup: 64 gathers,
263 -> 80 ms of ``emit_object``), so every gather of such a kernel is the gather alone.  Values
are checked in tests/functions/test_gather_index_runs.py; here the IR's shape, with and without
mask registers.
"""
import pytest

import frostjit as fj
from frostjit.backend.llvm.codegen import generate_ir
from frostjit.backend.llvm.codegen.memory import GATHER_TESTS_MAX
from frostjit.llvm import Float, UInt32
from frostjit.schedule.kernel import build_kernel

pytestmark = pytest.mark.llvm_only("the LLVM backend's code generation (IR text)")


def _ir(n_gathers: int, masked_chunks: bool) -> str:
    idx = fj.arange(UInt32, 50) * 7 % 100          # run-time indices (not lane + c)
    src = fj.arange(Float, 100)
    z = fj.gather(Float, src, UInt32(3))            # a literal index: no tests either way
    for j in range(n_gathers):
        z = z + fj.gather(Float, src + j, idx + j)
    return generate_ir(build_kernel([z._node], []), 16, masked_chunks=masked_chunks)


@pytest.mark.parametrize("masked_chunks", [True, False])
def test_gathers_are_tested_up_to_the_limit(masked_chunks):
    ir = _ir(GATHER_TESTS_MAX, masked_chunks)
    assert ir.count(".tests:") == GATHER_TESTS_MAX


@pytest.mark.parametrize("masked_chunks", [True, False])
def test_beyond_the_limit_every_gather_is_the_hardware_gather_alone(masked_chunks):
    ir = _ir(GATHER_TESTS_MAX + 1, masked_chunks)
    assert ".tests:" not in ir and ".any:" not in ir
    assert ir.count("call <16 x float> @llvm.masked.gather") == GATHER_TESTS_MAX + 1
