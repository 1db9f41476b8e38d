"""Deferred native launches (``ThreadPool.run`` with ``keep``): published, joined later.

The pool must hold what a pending launch uses until it is joined, join it before any other
launch (on the calling thread too), on close and at the stop, treat a second join as nothing,
and run every launch to its end when ``FROSTJIT_ASYNC_LAUNCH=0``.
"""
import ctypes
import gc
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

from frostjit.backend import current_backend
from frostjit.backend.llvm import native_pool
from frostjit.backend.llvm.memory import HostBuffer
from frostjit.backend.llvm.threads import ThreadPool, deferred_launches_enabled
from frostjit.llvm import Float
from frostjit.schedule.kernel import build_kernel

pytestmark = [pytest.mark.llvm_only("the LLVM backend's native pool"),
              pytest.mark.skipif(not native_pool.available(), reason="no native pool on this platform")]

N = 1 << 20


def _kernel():
    """The compiled kernel of ``x * 3 + 1`` (one Float32 input, one output)."""
    x = Float(np.zeros(4, np.float32))
    spec = build_kernel([(x * 3.0 + 1.0)._node], [])
    kernel, _ = current_backend().compile(spec)
    return kernel


def _pool(monkeypatch, n=2, defer="1") -> ThreadPool:
    monkeypatch.setenv("FROSTJIT_ASYNC_LAUNCH", defer)
    return ThreadPool(n, native=native_pool.native_code(current_backend().compiler))


def _buffers(a):
    src = HostBuffer.allocate(np.dtype(np.float32), a.shape[0])
    src.array[:] = a
    dst = HostBuffer.allocate(np.dtype(np.float32), a.shape[0])
    dst.array[:] = np.nan
    args = (ctypes.c_int64 * 4)(src.ptr, a.shape[0], dst.ptr, a.shape[0])
    return src, dst, args


def _launch(pool, kernel, src, dst, args, keep=True):
    pool.run(kernel.cfunc, src.array.shape[0], args, current_backend().width, True, (),
             keep=(src, dst) if keep else None)


def _published(pool):
    """``(input values, input buffer, output buffer)`` of a deferred launch of ``x * 3 + 1``
    over N lanes on ``pool`` (the buffers held only by the caller's references)."""
    a = np.linspace(-1, 1, N).astype(np.float32)
    src, dst, args = _buffers(a)
    _launch(pool, _kernel(), src, dst, args)
    return a, src, dst


def _expected(a):
    return a * np.float32(3) + np.float32(1)


def test_a_deferred_launch_is_pending_until_joined(monkeypatch):
    pool = _pool(monkeypatch)
    try:
        a, _src, dst = _published(pool)
        assert pool.pending is not None
        pool.join()
        assert pool.pending is None
        np.testing.assert_array_equal(dst.array, _expected(a))
        pool.join()         # (nothing pending: nothing happens)
        assert pool.pending is None
    finally:
        pool.close()


def test_the_pool_holds_a_pending_launchs_buffers(monkeypatch):
    """Buffers dropped by the caller while their launch runs are not freed (nor pooled for the
    next allocation) before the join."""
    pool = _pool(monkeypatch)
    try:
        a, src, dst = _published(pool)
        refs = [weakref.ref(src), weakref.ref(dst)]
        del src, dst
        gc.collect()
        assert all(r() is not None for r in refs)
        out = refs[1]()
        pool.join()
        np.testing.assert_array_equal(out.array, _expected(a))
        del out
        gc.collect()
        assert all(r() is None for r in refs)
    finally:
        pool.close()


@pytest.mark.parametrize("size", [1 << 20, 1000])
def test_any_other_launch_joins_a_pending_one_first(monkeypatch, size):
    """The second launch reads the first one's output: on the workers (a large one) and on the
    calling thread (a small one, which never reaches the native pool)."""
    pool = _pool(monkeypatch)
    try:
        kernel = _kernel()
        a, _src, mid = _published(pool)
        assert pool.pending is not None
        out = HostBuffer.allocate(np.dtype(np.float32), size)
        # (the last `size` elements of the first launch's output: the last blocks it runs)
        args2 = (ctypes.c_int64 * 4)(mid.ptr + 4 * (N - size), size, out.ptr, size)
        pool.run(kernel.cfunc, size, args2, current_backend().width, size >= 1 << 14, ())
        assert pool.pending is None
        np.testing.assert_array_equal(out.array, _expected(_expected(a)[N - size:]))
    finally:
        pool.close()


def test_close_joins_a_pending_launch(monkeypatch):
    pool = _pool(monkeypatch)
    a, _src, dst = _published(pool)
    pool.close()
    assert pool.pending is None
    np.testing.assert_array_equal(dst.array, _expected(a))


def test_a_pool_dropped_with_a_pending_launch_finishes_it(monkeypatch):
    """(The finalizer joins before it stops the workers.)"""
    pool = _pool(monkeypatch)
    a, _src, dst = _published(pool)
    workers = list(pool.native_threads)
    del pool
    gc.collect()
    for t in workers:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in workers)
    np.testing.assert_array_equal(dst.array, _expected(a))


def test_switched_off_every_launch_runs_to_its_end(monkeypatch):
    pool = _pool(monkeypatch, defer="0")
    try:
        assert not pool.defer
        a, _src, dst = _published(pool)
        assert pool.pending is None
        np.testing.assert_array_equal(dst.array, _expected(a))
    finally:
        pool.close()


def test_the_switch_takes_0_or_1(monkeypatch):
    for value, on in (("", True), ("1", True), ("0", False)):
        monkeypatch.setenv("FROSTJIT_ASYNC_LAUNCH", value)
        assert deferred_launches_enabled() is on
    monkeypatch.setenv("FROSTJIT_ASYNC_LAUNCH", "yes")
    with pytest.raises(ValueError, match="FROSTJIT_ASYNC_LAUNCH"):
        deferred_launches_enabled()


_FORK_CHILD = r"""
import ctypes, os, sys
import numpy as np
import frostjit as fj
from frostjit.backend import current_backend
from frostjit.backend.llvm.memory import HostBuffer
from frostjit.llvm import Float
from frostjit.schedule.kernel import build_kernel
fj.set_thread_count(2)
backend = current_backend()
y = Float(np.zeros(4, np.float32))
for _ in range(16):
    y = fj.fma(y, 0.5, 1.0) * fj.cos(y * 0.0)       # (cos(0) = 1: from 1, y ends at 2 - 2**-16)
kernel, _ = backend.compile(build_kernel([y._node], []))
n = 1 << 22
src = HostBuffer.allocate(np.dtype(np.float32), n); src.array[:] = 1
dst = HostBuffer.allocate(np.dtype(np.float32), n)
args = (ctypes.c_int64 * 4)(src.ptr, n, dst.ptr, n)
backend.wake_threads()
backend.run_parallel(kernel.cfunc, n, args, backend.width, True, (), (src, dst))
pid = os.fork()        # (with the launch pending, a worker in a block: the child must not wait)
if pid == 0:
    x = Float(np.arange(1 << 20, dtype=np.float32))
    ok = np.array_equal((x * 2.0).numpy(), np.arange(1 << 20, dtype=np.float32) * 2)
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
backend.join_launch()
assert np.all(dst.array == np.float32(2 - 2 ** -16)), dst.array[:4]
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_child_forked_while_a_launch_is_pending_does_not_wait_for_it():
    """(Its copy of the old pool, dropped there, would join a launch whose blocks the parent's
    worker claimed: they never complete in the child.)"""
    r = subprocess.run([sys.executable, "-c", _FORK_CHILD], capture_output=True, text=True, timeout=90,
                       env={**os.environ, "FROSTJIT_ASYNC_LAUNCH": "1"})
    assert r.returncode == 0, r.stderr[-2000:]
