"""Out of memory raises a ``MemoryError`` naming the frostjit type, the element count and the
bytes (not NumPy's ``_ArrayMemoryError`` about a ``uint8`` buffer), after the allocator
has released its cached buffers and tried again."""
import numpy as np
import pytest

import frostjit as fj
from frostjit.backend.llvm import memory
from frostjit.llvm import Float, Float64, UInt32


@pytest.mark.parametrize("make", [
    lambda: fj.make_opaque(fj.zeros(Float, 2**40)),
    lambda: fj.eval(fj.arange(Float, 2**40) + 1),
    lambda: fj.tile(Float([1, 2]), 2**40).numpy(),
    lambda: fj.make_opaque(fj.zeros(Float, 2**62) + 1),    # (a folded literal) beyond NumPy's largest dimension
])
def test_huge_arrays_raise_a_memory_error_that_names_type_count_and_bytes(make):
    with pytest.raises(MemoryError, match=r"frostjit: out of memory: cannot allocate a Float32 array of "
                                          r"[\d,]+ elements \([\d.]+ [TP]iB, [\d,]+ bytes\)") as info:
        make()
    assert type(info.value) is MemoryError and info.value.__cause__ is None


@pytest.mark.llvm_only("the LLVM backend's caching allocator")
def test_allocation_failure_releases_cached_buffers_and_retries(monkeypatch):
    fj.flush_malloc_cache()
    x = fj.arange(Float, 100_000) * 2.0
    fj.eval(x)
    del x                                    # its buffer goes back to the pool
    assert memory.pool.bytes > 0
    real_empty = np.empty
    calls = []

    def fail_once(n, dtype):
        calls.append(n)
        if len(calls) == 1:
            raise MemoryError("NumPy: Unable to allocate")
        return real_empty(n, dtype)
    monkeypatch.setattr(memory.np, "empty", fail_once)
    y = fj.arange(Float64, 123_457) + 1.0
    fj.eval(y)
    assert len(calls) == 2 and memory.pool.bytes == 0
    assert y[123_456] == 123_457.0


@pytest.mark.llvm_only("patches the LLVM backend's allocator")
def test_every_allocation_path_names_the_array(monkeypatch):
    monkeypatch.setattr(memory.np, "empty", lambda n, dtype: (_ for _ in ()).throw(MemoryError("raw")))
    fj.flush_malloc_cache()
    paths = {
        "evaluate": lambda: fj.eval(fj.arange(UInt32, 1000) + 1),
        "literal": lambda: fj.make_opaque(fj.full(Float64, 2.0, 1000)),
        "empty": lambda: fj.empty(Float, 1000),
        "numpy input": lambda: Float(np.zeros(1000, np.float32)),
        "scatter copy-on-write": lambda: fj.scatter(fj.opaque(Float, 0.0, 1000), 1.0, 0),
    }
    for name, f in paths.items():
        with pytest.raises(MemoryError, match=r"frostjit: out of memory: cannot allocate a (UInt32|Float64|Float32) "
                                              r"array of 1,000 elements"):
            f()
