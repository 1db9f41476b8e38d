"""LLVM IR -> machine code with llvmlite, and the two-level kernel cache.

In memory, kernels are found by the structure of their spec (cheap to build,
no IR generation on a hit) and by the hash of their IR, in a bounded LRU
(:mod:`.kernel_cache`).  On disk, object code is keyed by the IR hash in a
folder specific to the toolchain and CPU (see :mod:`.diskcache`), so a second
process loads kernels instead of compiling.

Every kernel gets its own MCJIT execution engine, so that its machine code can
be freed on its own: the engine is disposed when the last reference to the
kernel (or to its ``cfunc``) goes.  One engine holding every kernel would never
give memory back, and a process compiling tens of thousands of kernels would
die (LLVM "Unable to allocate section memory", or the kernel's limit on memory
mappings, two per loaded object).
"""
from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import threading
import time

import llvmlite
import llvmlite.binding as llvm

from ..._dump import dump_text
from . import half_runtime
from ...trace.dtypes import Float32
from ..kernel import KernelSpec, Instr, IN, OUT
from .codegen import generate_ir, KERNEL_PLACEHOLDER
from .diskcache import DiskCache, FORMAT_VERSION
from ..cache_control import default_capacity
from .kernel_cache import KernelCache
from .threads import private_targets, parallel_threshold

log = logging.getLogger("frostjit")

# Kernels that hold at least this many values at once are generated one register wide
# (Compiler.kernel_width); kernels shorter than NARROW_MIN_INSTRS are never looked at.
NARROW_LIVE = 64
NARROW_MIN_INSTRS = 256

# LLVM code generator options, set once per process (they are LLVM's global command-line
# options; frostjit is the process's only user of llvmlite's LLVM).  Constant hoisting moves
# expensive integer immediates into registers across blocks: it changed no kernel's machine code
# (931 of 934 distinct kernels of the control and backend tests gave identical object code, the
# other 3 identical assembly) and cost 0.26 M of the Mandelbrot kernel's 17.1 M instructions of
# emit_object (docs/engine.md "Compile time").
CODEGEN_OPTIONS = ("-disable-constant-hoisting",)
# Loop strength reduction is switched off for kernels with a symbolic loop on targets with mask
# registers (Compiler.compile_ir): their lane groups are all masked, so the kernel's loop has no
# branch that LSR rearranges, and 144 of 148 such kernels of the same tests gave identical object
# code without it (4 large ones differ in register assignment: at most 4 instructions and 2 stack
# accesses more or fewer), for 0.78 M instructions less (4.6%) on the Mandelbrot kernel.  Other
# kernels keep it: 725 of 786 non-loop kernels changed (full-group / last-group branch layout).
_codegen_lock = threading.Lock()      # the options are global: held from setting one to the emit
_lsr_off = False
_options_set = False


def _set_codegen_options() -> None:
    global _options_set
    with _codegen_lock:
        if not _options_set:
            for opt in CODEGEN_OPTIONS:
                llvm.set_option("frostjit", opt)
            _options_set = True


def _emit_object(tm, mod, lsr: bool) -> bytes:
    """``tm.emit_object(mod)``, with loop strength reduction on or off (see above)."""
    global _lsr_off
    with _codegen_lock:
        if _lsr_off == lsr:
            llvm.set_option("frostjit", f"-disable-lsr={'false' if lsr else 'true'}")
            _lsr_off = not lsr
        return tm.emit_object(mod)


def max_live_values(spec) -> int:
    """The most values of ``spec`` live at one point of its program (literals not counted):
    an estimate of its register pressure, from each value's definition to its last use."""
    instrs = spec.instrs
    last = {}
    for i, ins in enumerate(instrs):
        for a in ins.args:
            last[a] = i
    ending = [0] * (len(instrs) + 1)
    live = most = 0
    for i, ins in enumerate(instrs):
        end = last.get(i)
        if end is not None and ins.op != "literal":
            live += 1
            ending[end] += 1
        live -= ending[i]
        if live > most:
            most = live
    return most

# kernel(start, end, args, shared): see codegen.py
KERNEL_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)
# The same entry point without argument types, for callers that pass ``ctypes`` objects of the
# exact types (``c_int64``, the argument array): ctypes then converts nothing per call (a
# frozen function's replay keeps those objects: about 0.5 us CPU less per launch than four
# Python ints through ``KERNEL_CFUNC``'s converters, AVX2 VM).
KERNEL_RAW = ctypes.CFUNCTYPE(None)


class Kernel:
    """A compiled kernel: its IR, hash and callable entry point.

    The kernel owns its execution engine: the machine code lives exactly as long as the
    kernel or its ``cfunc`` is referenced (the ``cfunc`` holds the engine too, so code
    that keeps only the entry point, like a frozen function's replay or a running
    launch, also keeps the code alive).
    """

    __slots__ = ("hash", "ir", "symbol", "address", "cfunc", "raw", "engine", "n_instrs", "has_side_effects",
                 "compile_time", "codegen_time", "private", "parallel_from", "spec_keys", "__weakref__")

    def __init__(self, hash_, ir, symbol, address, engine, n_instrs, has_side_effects, compile_time):
        self.hash = hash_
        self.ir = ir
        self.symbol = symbol
        self.address = address
        self.cfunc = KERNEL_CFUNC(address)
        self.cfunc.engine = engine
        self.cfunc.fj_address = address     # the thread pool's native launch calls the address
        self.raw = KERNEL_RAW(address)      # (KERNEL_RAW: arguments as c_int64 objects)
        self.raw.engine = engine
        self.engine = engine
        self.n_instrs = n_instrs
        self.has_side_effects = has_side_effects
        self.compile_time = compile_time
        self.codegen_time = 0.0
        self.private = ()
        self.parallel_from = parallel_threshold(n_instrs)     # launches this large use the thread pool
        self.spec_keys: list = []      # the spec keys the cache files it under


def spec_key(spec) -> tuple:
    """A hashable structural key of a kernel spec (equal keys give equal IR)."""
    return spec.key()


def _masked_chunks_setting(default: bool) -> bool:
    """FROSTJIT_MASKED_CHUNKS ("0"/"1"), else ``default`` (whether the CPU has mask registers)."""
    raw = os.environ.get("FROSTJIT_MASKED_CHUNKS", "").strip()
    if not raw:
        return default
    if raw not in ("0", "1"):
        raise ValueError(f"FROSTJIT_MASKED_CHUNKS must be '0' or '1', not {raw!r}")
    return raw == "1"


class Compiler:
    """Owns the target machine that emits object code, and both cache levels."""

    def __init__(self):
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _set_codegen_options()
        self.cpu = llvm.get_host_cpu_name()
        self.features = llvm.get_host_cpu_features().flatten()
        # Hardware gathers: LLVM splits a gather into scalar loads on CPUs it tunes as having
        # slow ones (AMD Zen); the vector instruction measured faster for random lookups there
        # too (1e6 bilinear texture lookups, Zen 3: 13.9 -> 8.3 ms), so it is asked for wherever
        # AVX2 exists (FROSTJIT_TARGET_FEATURES=-fast-gather turns it off again).
        if "+avx2" in self.features.split(","):
            self.features += ",+fast-gather"
        # FROSTJIT_TARGET_FEATURES (e.g. "-avx512f") restricts code generation, to run and test
        # the narrower code paths of other machines on this one.
        extra = os.environ.get("FROSTJIT_TARGET_FEATURES", "").strip(", ")
        if extra:
            self.features = f"{self.features},{extra}" if self.features else extra
        self.target = llvm.Target.from_default_triple()     # looked up once (~10 us a time)
        self.tm = self._target_machine()
        feats: set = set()
        for f in self.features.split(","):
            if f.startswith("+"):
                feats.add(f[1:])
            elif f.startswith("-"):
                feats.discard(f[1:])
        # Lanes per loop iteration: two registers' worth (16 floats per AVX-512 register, 8 per
        # AVX2 register), which measured ~1.5x faster than one on latency-bound kernels.
        self.simd_lanes = 16 if "avx512f" in feats else 8 if "avx2" in feats or "avx" in feats else 4
        if half_runtime.needed(feats):       # no F16C: LLVM calls compiler-runtime half conversions
            half_runtime.install(self._target_machine())
        self.width = 2 * self.simd_lanes
        # Whether masked loads and stores are cheap (AVX-512's mask registers): then every chunk
        # uses them; otherwise (AVX2's vmaskmov) full chunks use plain ones and only the last
        # chunk masked ones (codegen/frame.py).  FROSTJIT_MASKED_CHUNKS=0/1 overrides, to test both.
        self.mask_registers = _masked_chunks_setting("avx512f" in feats)
        # "fast" (default): a short pass list; 0-3: LLVM's standard pipelines (see compile_ir).
        self.opt_level = os.environ.get("FROSTJIT_OPT_LEVEL", "fast")
        env = "|".join([llvmlite.__version__, ".".join(map(str, llvm.llvm_version_info)), self.cpu,
                        self.features, f"W{self.width}", f"M{int(self.mask_registers)}", f"O{self.opt_level}",
                        f"fmt{FORMAT_VERSION}"])
        self.env_key = f"{self.cpu}-{hashlib.sha256(env.encode()).hexdigest()[:16]}"
        self.disk = DiskCache(self.env_key)
        self.lock = threading.RLock()
        self.cache = KernelCache(default_capacity())
        self._warm_up()

    def _warm_up(self) -> None:
        """Compile and load a tiny vector kernel once, at start-up.

        LLVM initializes its instruction selection and scheduling tables lazily, which adds
        ~4 ms to the first compile of a process; paying it here keeps the first user kernel's
        latency the same as every other's (docs/engine.md reports both figures).
        """
        spec = KernelSpec(instrs=[Instr("load", Float32, (), 0), Instr("literal", Float32, (), 0.5),
                                  Instr("mul", Float32, (0, 1)), Instr("store", Float32, (2,), 1)],
                          params=[(IN, Float32), (OUT, Float32)])
        ir = generate_ir(spec, self.width, self.mask_registers).replace(KERNEL_PLACEHOLDER, "@fj_warm_up")
        self.load(self.compile_ir(ir), "fj_warm_up")

    def _target_machine(self):
        # Code generation at "Less": as fast machine code as "Aggressive" on these kernels
        # (measured), ~20% less compile time.
        return self.target.create_target_machine(cpu=self.cpu, features=self.features, opt=1)

    def flush(self) -> None:
        """Forget every kernel in memory (the disk cache stays).

        A kernel still referenced elsewhere stays valid until its last holder goes.
        """
        with self.lock:
            self.cache.clear()

    def set_capacity(self, capacity: int) -> None:
        """Keep at most ``capacity`` kernels in memory (evicting the least recently used now)."""
        with self.lock:
            self.cache.resize(capacity)

    def load(self, obj: bytes, symbol: str):
        """Load object code into a new execution engine; return ``(engine, address of symbol)``."""
        # An execution engine owns its target machine: each engine gets its own.  It never
        # generates code (see below), so a generic one does: 0.02 ms instead of 0.17 ms for
        # one with this CPU's name and feature list.
        loader = self.target.create_target_machine(cpu="", features="", opt=0)
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), loader)
        # MCJIT asks its object cache for the code of the engine's (empty) module before
        # generating any: handing it the kernel's object skips code generation (~0.5 ms) and
        # makes the kernel that module's code, freed with the engine.
        pending = [obj]
        engine.set_object_cache(getbuffer_func=lambda _module: pending.pop() if pending else None)
        engine.finalize_object()
        address = engine.get_function_address(symbol)
        if not address:
            raise RuntimeError(f"frostjit: kernel object code does not define {symbol!r}")
        return engine, address

    def compile_ir(self, ir: str, symbolic_loop: bool = False) -> bytes:
        """Optimize ``ir`` and return relocatable object code.

        ``symbolic_loop``: the kernel has a symbolic loop (then, with mask registers, it is
        compiled without loop strength reduction: see :data:`CODEGEN_OPTIONS`)."""
        mod = llvm.parse_assembly(ir)
        mod.verify()
        lsr = not (symbolic_loop and self.mask_registers)
        if self.opt_level == "fast":
            if ir.count("define ") == 1:
                # Nothing to inline (no math or called functions): the passes below leave the
                # machine code as it is (332 kernels of the memory-op and loop tests: 328
                # identical, 4 differing in register names) and cost ~3% of a compile.
                return _emit_object(self.tm, mod, lsr)
            # The IR is already vectorized, in SSA form and one basic block per loop body: the
            # standard pipelines spend their time on loop and vectorization passes that find
            # nothing to do, and instruction selection already folds constants and merges common
            # subexpressions within a block.  Inlining the math functions and cleaning up the
            # control flow they bring gives equally fast kernels in ~40% less compile time than
            # speed level 2 (measured: docs/engine.md).
            pb = llvm.create_pass_builder(self.tm, llvm.create_pipeline_tuning_options(speed_level=0))
            pm = llvm.create_new_module_pass_manager()
            pm.add_always_inliner_pass()
            pm.add_simplify_cfg_pass()
            pm.run(mod, pb)
        else:
            pto = llvm.create_pipeline_tuning_options(speed_level=int(self.opt_level))
            pb = llvm.create_pass_builder(self.tm, pto)
            pb.getModulePassManager().run(mod, pb)
        return _emit_object(self.tm, mod, lsr)

    def kernel_width(self, spec) -> int:
        """Lanes per loop iteration of ``spec``'s kernel: two registers' worth (:attr:`width`),
        or one (:attr:`simd_lanes`) for a kernel that holds :data:`NARROW_LIVE` values or more
        at once (:func:`max_live_values`).

        Two registers per value hide latency in short dependency chains, but a kernel with many
        live values then spills twice as much, and LLVM's register allocator takes time
        superlinear in them: a 3-D, 4-channel sRGB cubic texture lookup with its Hessian (5,000
        instructions, ~500 live values) took 45 s to compile two registers wide and 15 s one
        wide (measured with the AVX-512 figures in docs/engine.md, which also has the steady
        states: texture cubic lookups run 10-30% faster one register wide, dependency chains
        35% slower).  Launches split work at multiples of :attr:`width`, multiples of either
        width, so both kinds of kernel launch alike; each lane's result does not depend on the
        chunk width, except a reduction's partial sums (their order): kernels that reduce keep
        :attr:`width`.
        """
        instrs = spec.instrs
        if (len(instrs) >= NARROW_MIN_INSTRS and max_live_values(spec) >= NARROW_LIVE
                and not any(ins.op == "reduce" for ins in instrs)):
            return self.simd_lanes
        return self.width

    def get(self, spec):
        """Return ``(kernel, status)`` for ``spec``; status is "memory", "disk" or "compiled"."""
        key = spec_key(spec)
        k = self.cache.get_by_spec(key)
        if k is not None:
            return k, "memory"
        with self.lock:
            k = self.cache.get_by_spec(key)        # compiled meanwhile by another thread
            if k is not None:
                return k, "memory"
            t_gen = time.perf_counter()
            ir = generate_ir(spec, self.kernel_width(spec), self.mask_registers)
            codegen_time = time.perf_counter() - t_gen
            h = hashlib.sha256(ir.encode()).hexdigest()
            k = self.cache.get_by_hash(key, h)
            if k is not None:
                return k, "memory"
            symbol = "fj_" + h[:32]
            t0 = time.perf_counter()
            obj = self.disk.load(h)
            status = "disk"
            if obj is None:
                obj = self.compile_ir(ir.replace(KERNEL_PLACEHOLDER, "@" + symbol),
                                      any(ins.op == "loop_start" for ins in spec.instrs))
                self.disk.store(h, obj)
                status = "compiled"
            engine, address = self.load(obj, symbol)
            dt = time.perf_counter() - t0
            dump_text(f"kernel_{h[:16]}", ir.replace(KERNEL_PLACEHOLDER, "@" + symbol), "ll")   # FROSTJIT_DUMP
            log.debug("kernel %s %s in %.2f ms (%d instructions)", h[:16],
                      "loaded from disk" if status == "disk" else "compiled", dt * 1e3, len(spec.instrs))
            k = Kernel(h, ir, symbol, address, engine, len(spec.instrs), spec.has_side_effects, dt)
            k.codegen_time = codegen_time
            k.private = private_targets(spec)
            self.cache.add(key, k)
            return k, status
