"""The reference backend: the :class:`~frostjit.backend.base.Backend` interface, in NumPy."""
from __future__ import annotations

import collections
import hashlib
import threading
import time

import numpy as np

from ..._dump import dump_text
from ...errors import out_of_memory
from ...trace import numpy_semantics as ns
from ..base import Backend, Kernel
from ..kernel import KernelSpec
from ..cache_control import check_capacity, default_capacity
from .interpreter import run_kernel
from .memory import ReferenceBuffer, allocate, data_of
from .replay import ReferenceReplayEmitter


class ReferenceKernel(Kernel):
    """A "compiled" kernel of the reference backend: the spec itself, and its listing."""

    __slots__ = ("spec", "hash", "ir", "n_instrs", "codegen_time", "compile_time", "__weakref__")

    def __init__(self, spec: KernelSpec):
        # Only the backend's part of the spec: a scheduler's spec also holds trace nodes.
        self.spec = KernelSpec(list(spec.instrs), list(spec.params), spec.has_side_effects)
        t0 = time.perf_counter()
        self.ir = listing(self.spec)
        self.hash = hashlib.sha256(self.ir.encode()).hexdigest()
        self.n_instrs = len(spec.instrs)
        self.codegen_time = time.perf_counter() - t0
        self.compile_time = 0.0


def listing(spec: KernelSpec) -> str:
    """A kernel spec as text, one line per parameter and instruction (the kernel's ``ir``)."""
    lines = [f"kernel: {len(spec.params)} parameters, {len(spec.instrs)} instructions"]
    lines += [f"  param {p}: {kind} {vt.name}" for p, (kind, vt) in enumerate(spec.params)]
    for k, ins in enumerate(spec.instrs):
        args = ", ".join(f"%{a}" for a in ins.args)
        value = "" if ins.value is None else f" [{ins.value!r}]"
        lines.append(f"  %{k} = {ins.op} {ins.vt.name} {args}{value}".rstrip())
    return "\n".join(lines) + "\n"


class ReferenceBackend(Backend):
    """Kernel specs interpreted with NumPy (see :mod:`frostjit.backend.reference`)."""

    name = "reference"
    pair_gathers = True     # (so that the tests run texture lookups' pair gathers here too)

    def __init__(self):
        self.kernels: collections.OrderedDict = collections.OrderedDict()    # spec key -> kernel, LRU
        self.capacity = default_capacity()
        self.evictions = 0
        self.lock = threading.Lock()
        self.threads = 1

    # -- threads ---------------------------------------------------------------------------
    # fj.set_thread_count is a setting of the CPU device: kept, so that it reads back as set,
    # but the interpreter runs every launch on the calling thread (NumPy does the work).
    def thread_count(self) -> int:
        return self.threads

    def set_thread_count(self, n: int) -> None:
        self.threads = n

    # -- memory ----------------------------------------------------------------------------
    def alloc(self, vt, size):
        return allocate(vt.np_dtype, size)

    def from_numpy(self, array):
        return ReferenceBuffer(np.array(array, copy=True))

    def full(self, vt, value, size):
        buf = allocate(vt.np_dtype, size)
        buf.data.fill(value)
        return buf

    def to_numpy(self, buffer, size):
        return data_of(buffer)[:size].copy()

    def element(self, buffer, index):
        return data_of(buffer)[index].item()

    def host_array(self, buffer, size):
        return data_of(buffer)[:size]

    def copy(self, vt, buffer, size):
        return ReferenceBuffer(data_of(buffer).copy())

    # -- kernels ---------------------------------------------------------------------------
    def compile(self, spec):
        key = spec.key()
        with self.lock:
            k = self.kernels.get(key)
            if k is not None:
                self.kernels.move_to_end(key)
                return k, "memory"
            k = self.kernels[key] = ReferenceKernel(spec)
            while len(self.kernels) > self.capacity:
                self.kernels.popitem(last=False)
                self.evictions += 1
        dump_text(f"kernel_{k.hash[:16]}", k.ir, "txt")        # FROSTJIT_DUMP
        return k, "compiled"

    def launch(self, kernel, size, spec, buffers):
        run_kernel(kernel.spec, size, buffers, [len(data_of(b)) for b in buffers])

    def launch_sized(self, kernel, size: int, buffers: list, sizes: list) -> None:
        """``launch`` with the element count of every buffer given (a replay's buffers may be
        larger than the arrays they hold)."""
        run_kernel(kernel.spec, size, buffers, sizes)

    def flush_kernel_cache(self) -> None:
        with self.lock:
            self.kernels.clear()

    def set_kernel_cache_size(self, size) -> int:
        n = check_capacity(size, "set_kernel_cache_size()")
        with self.lock:
            old, self.capacity = self.capacity, n
            while len(self.kernels) > n:
                self.kernels.popitem(last=False)
                self.evictions += 1
        return old

    def kernel_cache_info(self) -> dict:
        with self.lock:
            n = len(self.kernels)
            return {"capacity": self.capacity, "cached": n, "live": n, "evictions": self.evictions}

    # -- memory-level operations -----------------------------------------------------------
    # (the op table's references, the spec: Float16 sums accumulate in float32, as Dr.Jit's)
    def reduce(self, op, vt, buffer, size):
        return ReferenceBuffer(ns.reduce(op, data_of(buffer)[:size]))

    def prefix_sum(self, vt, buffer, size, exclusive):
        return ReferenceBuffer(ns.prefix_sum(data_of(buffer)[:size], exclusive))

    def compress(self, buffer, size):
        try:
            idx = np.flatnonzero(data_of(buffer)[:size]).astype(np.uint32)
        except MemoryError:
            raise out_of_memory("Bool", size, 12, "compress") from None
        return ReferenceBuffer(idx), int(idx.shape[0])

    # -- frozen functions ------------------------------------------------------------------
    def replay_emitter(self, code):
        return ReferenceReplayEmitter(self, code)

