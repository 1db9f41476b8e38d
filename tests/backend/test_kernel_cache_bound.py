"""The in-memory kernel cache is bounded, and eviction really frees the machine code.

Before, every kernel went into one LLVM execution engine that was never freed: a program
compiling tens of thousands of distinct kernels (a frozen function called with many distinct
Python floats re-traces by design) died with "LLVM ERROR: Unable to allocate section memory" or
at the kernel's limit on memory mappings (two per loaded object).
"""
import ctypes
import gc
import json
import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest

import frostjit as fj
from frostjit.backend import current_backend
from frostjit.backend.llvm.compiler import Kernel
from frostjit.backend.llvm.kernel_cache import KernelCache
from frostjit.llvm import Float

pytestmark = pytest.mark.llvm_only("the LLVM backend's kernel cache and execution engines")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAVE_MAPS = os.path.exists("/proc/self/maps")


def memory_mappings() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


@pytest.fixture
def capacity():
    """Set the in-memory bound for one test, restoring it afterwards."""
    old = []

    def set_(n):
        old.append(fj.set_kernel_cache_size(n))

    yield set_
    if old:
        fj.set_kernel_cache_size(old[0])


FLOOD = textwrap.dedent("""
    import json
    import frostjit as fj
    from frostjit.llvm import Float
    def maps():
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)
    x = fj.arange(Float, 8)
    counts = []
    for k in range({n}):
        y = x * (1.0 + k / 4096) + 0.5      # a distinct literal: a distinct kernel
        assert y[3] == 3 * (1.0 + k / 4096) + 0.5
        if k in (49, {n} - 1):
            counts.append(maps())
    print(json.dumps({{"maps": counts, "info": fj.kernel_cache_info()}}))
""")


@pytest.mark.skipif(not HAVE_MAPS, reason="counts memory mappings in /proc/self/maps")
def test_distinct_kernels_keep_memory_mappings_bounded(tmp_path):
    """150 distinct kernels with FROSTJIT_KERNEL_CACHE_SIZE=16: mappings stay flat after the first 50."""
    env = dict(os.environ, FROSTJIT_CACHE_DIR=str(tmp_path), FROSTJIT_KERNEL_CACHE_SIZE="16", PYTHONPATH=REPO)
    out = subprocess.run([sys.executable, "-c", FLOOD.format(n=150)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    early, late = r["maps"]
    # Unbounded, 100 more kernels would map ~200 more regions.
    assert late - early < 40, r
    assert r["info"]["capacity"] == 16 and r["info"]["cached"] == 16
    assert r["info"]["live"] <= 16 + 2 and r["info"]["evictions"] >= 150 - 16


def test_the_bad_environment_value_is_named(tmp_path):
    env = dict(os.environ, FROSTJIT_KERNEL_CACHE_SIZE="many", PYTHONPATH=REPO)
    out = subprocess.run([sys.executable, "-c", "import frostjit as fj; from frostjit.llvm import Float; "
                          "fj.eval(Float(1, 2) + 1)"], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "FROSTJIT_KERNEL_CACHE_SIZE" in out.stderr and "'many'" in out.stderr


def _load_kernel(compiler, obj, symbol, fake_hash):
    engine, address = compiler.load(obj, symbol)
    return Kernel(fake_hash, "", symbol, address, engine, 1, False, 0.0)


@pytest.mark.skipif(not HAVE_MAPS, reason="counts memory mappings in /proc/self/maps")
def test_3000_kernels_through_a_bounded_cache_free_their_engines():
    """Each kernel owns an engine; 3,000 kernels through a cache of 32 leave <= 32 engines mapped."""
    compiler = current_backend().compiler
    x = Float(np.arange(40, dtype=np.float32))      # an input: the kernel reads params (x, out)
    fj.eval(x)
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        fj.eval(x * 1.375 - 0.5)
        (h,) = [e for e in fj.kernel_history() if e["type"] == "jit"]
    obj = compiler.disk.load(h["hash"])
    assert obj is not None
    symbol = "fj_" + h["hash"][:32]
    cache = KernelCache(32)
    alive = []
    gc.collect()
    before = memory_mappings()
    for k in range(3000):
        kernel = _load_kernel(compiler, obj, symbol, f"{k:064x}")
        cache.add(("key", k), kernel)
        alive.append(weakref.ref(kernel))
        del kernel
        if k == 999:
            mid = memory_mappings()
    after = memory_mappings()
    assert sum(r() is not None for r in alive) == 32          # freed the moment they were evicted
    assert cache.info() == {"capacity": 32, "cached": 32, "live": 32, "evictions": 3000 - 32}
    assert after - before < 32 * 4 + 20 and after - mid < 20, (before, mid, after)
    # The survivors still run.
    a = np.arange(40, dtype=np.float32)
    out = np.zeros(40, np.float32)
    args = (ctypes.c_int64 * 4)(a.ctypes.data, 40, out.ctypes.data, 40)
    for r in alive[-32:]:
        out[:] = 0
        r().cfunc(0, 40, args, 0)
        np.testing.assert_array_equal(out, a * np.float32(1.375) - np.float32(0.5))


def test_lru_order_and_resize():
    cache = KernelCache(3)
    ks = [Kernel(f"{k:064x}", "", "s", 0, None, 1, False, 0.0) for k in range(5)]
    for k in range(3):
        cache.add(("k", k), ks[k])
    assert cache.get_by_spec(("k", 0)) is ks[0]        # 0 is now the most recently used
    cache.add(("k", 3), ks[3])                          # evicts 1, the least recently used
    assert cache.get_by_spec(("k", 1)) is None and cache.get_by_spec(("k", 0)) is ks[0]
    assert list(cache.lru) == [ks[2].hash, ks[3].hash, ks[0].hash]
    # A kernel found by its IR hash under another spec key answers both keys.
    assert cache.get_by_hash(("other", 2), ks[2].hash) is ks[2]
    assert cache.get_by_spec(("other", 2)) is ks[2]
    cache.resize(1)
    assert list(cache.lru) == [ks[2].hash]
    assert cache.get_by_spec(("k", 3)) is None and cache.get_by_spec(("k", 0)) is None
    # Evicted but still held (a recording): found again by hash, not loaded twice.
    assert cache.get_by_hash(("k", 0), ks[0].hash) is ks[0]
    assert list(cache.lru) == [ks[0].hash]


def _jit_history(fn, *args):
    """``fn(*args)`` with the kernel history on: (its result, its kernel launches)."""
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        out = fn(*args)
        return out, [e for e in fj.kernel_history() if e["type"] == "jit"]


@fj.freeze
def _held_by_the_module(x):
    return x * 3.25 + 0.125


def test_a_recording_alive_at_module_level_replays():
    """Leaves a recording alive (as another test file's module-level frozen function does) while
    the next test evicts and frees kernels: it must follow only its own (regression: it counted
    every evicted kernel still alive in the process, and failed after such a file)."""
    a = np.arange(5, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(_held_by_the_module(Float(a)).numpy(), a * np.float32(3.25) + np.float32(0.125))
    assert _held_by_the_module.n_recordings == 1


@pytest.mark.parametrize("n", [1, 7, 1000, 100003])
def test_replay_after_eviction_runs_the_pinned_kernel(capacity, n):
    """A recording keeps the kernels it replays alive after the cache evicts them."""
    capacity(4)
    compiler = current_backend().compiler
    c = 1.0 + n / 8192             # a kernel no other test compiles

    @fj.freeze
    def f(x):
        return fj.fma(x, c, 0.25) * x

    a = np.linspace(-2, 2, n).astype(np.float32)
    expected = (Float(a) * 0 + fj.fma(Float(a), c, 0.25) * Float(a)).numpy()
    # Only the kernels this recording made: a recording another test keeps alive (a module-level
    # frozen function) also holds evicted kernels, which must outlive f.
    earlier = set(compiler.cache.live)
    for _ in range(3):             # recorded with the flag the checks below set (flags are in the key)
        _jit_history(f, Float(a))
    recordings = f.n_recordings
    live = {h: weakref.ref(k) for h, k in compiler.cache.live.items() if h not in earlier}
    x = fj.arange(Float, 16)
    for k in range(12):            # 12 other kernels: every earlier one is evicted
        fj.eval(x * (2.0 + k / 1024 + n / 4096))
    recorded = [h for h, r in live.items() if r() is not None and h not in compiler.cache.lru]
    assert recorded, "the recording's kernels should be evicted from the cache but alive"
    for _ in range(3):
        y, hist = _jit_history(f, Float(a))
        np.testing.assert_array_equal(y.numpy(), expected)
        assert all(e["cache_hit"] for e in hist)       # replayed, nothing compiled or loaded
    assert f.n_recordings == recordings
    refs = [live[h] for h in recorded]
    del f
    gc.collect()
    assert all(r() is None for r in refs), "the kernels must be freed with the last recording"


def test_an_evicted_kernel_still_held_is_adopted_back_not_loaded_twice(capacity):
    capacity(2)
    compiler = current_backend().compiler

    @fj.freeze
    def f(x):
        return x * 3.0625 + 0.75

    a = np.arange(50, dtype=np.float32)
    f(Float(a))
    f(Float(a))
    x = fj.arange(Float, 16)
    for k in range(4):
        fj.eval(x * (5.0 + k / 1024))
    y, hist = _jit_history(fj.eval, Float(a) * 3.0625 + 0.75)
    (e,) = hist
    assert e["cache_hit"] is True and e["cache_disk"] is False
    assert compiler.cache.live[e["hash"]] is compiler.cache.lru[e["hash"]]
