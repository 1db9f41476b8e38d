"""The kernel frame: the loop over lanes, the lane mask, parameters and basic blocks.

Every kernel has the signature ``void K(i64 start, i64 end, ptr args, i64 shared)``: it
processes elements ``[start, end)`` in chunks of ``W`` lanes (two SIMD registers
per value, so each iteration has two independent dependency chains to hide
instruction latency), with a lane mask
that is all-true except in the last chunk, so the tail needs no scalar loop.  Inputs are
read and outputs written with masked loads and stores where the CPU has mask registers
(AVX-512); elsewhere full chunks use plain vector instructions and only the last chunk masked
ones (``masked_chunks``).  Full chunks of large, aligned outputs are written with one
non-temporal store each (see NONTEMPORAL_BYTES; with mask registers, the stores of up to
STORE_GROUP outputs share one branch per chunk), except in kernels with a symbolic loop
(``_cached_stores``).
``args`` holds two 8-byte slots per parameter: the buffer address and its
element count (used by gathers and scatters for bounds checks).  ``shared`` is
non-zero when other threads run the same launch concurrently: only then do
scatter reductions need atomic instructions.  Nothing in the IR depends on the
launch size, so one compiled kernel serves every width.

Instructions are lowered one by one by the functions registered per op in
:mod:`.lowering` (lane-wise operations), :mod:`.memory` (gathers, scatters) and :mod:`.atomics`
(read-modify-writes that return the old value).
"""
from __future__ import annotations

from ...kernel import IN_SCALAR, GATHER_SRC, OUT, SCATTER_DST, KernelSpec
from ....trace.dtypes import Bool, UInt8, VarType
from ..vmath import math_function
from . import atomics, calls, half, loops, lowering, memory, reductions
from .ir_types import memory_type, scalar_constant, scalar_type, suffix

KERNEL_PLACEHOLDER = "@__fj_kernel__"

# A math function called more often than this in one kernel is compiled once, out of line.
INLINE_MATH_CALLS = 2

# The loop body is cut into basic blocks of about this many IR instructions (at operation
# boundaries).  LLVM's machine instruction scheduler costs O(n^2) in the size of a block
# (docs/engine.md, "Compile time"): one 30,000-operation block took 10 s to compile, blocks of
# 500 keep compile time linear in the kernel's size.  250 or 1000 measured within 3%.
BLOCK_INSTRS = 500

# With mask registers, the stores of at most this many outputs are held and written together
# behind one branch (see KernelEmitter._flush_stores): 8 outputs held in two registers each are
# half of AVX-512's 32 vector registers.
STORE_GROUP = 8

# Launches writing at least this many bytes (all outputs together) write them with non-temporal
# stores (full, aligned chunks):
# they bypass the caches, which saves reading each line before it is overwritten (PCG32's
# 1e7-lane step, 16 bytes read and 12 written per lane: 8.1 -> 6.3 ms on one thread).  Smaller
# outputs are written through the caches, where the next kernel finds them: a chain of two
# kernels measured 25% faster with cached stores at 1-4 MiB, the same at 8 MiB and 23% slower
# at 16 MiB (one thread, AMD EPYC, 1 MiB L2 per core).
NONTEMPORAL_BYTES = 1 << 23

#: op name -> lowering function, for every op a kernel can contain.
LOWERINGS: dict = {**lowering.LOWERINGS, **memory.LOWERINGS, **atomics.LOWERINGS, **loops.LOWERINGS,
                   **calls.LOWERINGS, **reductions.LOWERINGS}


class KernelEmitter:
    """Emits the IR of one kernel; ``vals[k]`` is the operand text of instruction k.

    The frame (the loop over lanes, the lane mask, parameters, basic blocks) lives here;
    each instruction is lowered by its op's function in :data:`LOWERINGS`.
    """

    def __init__(self, spec: KernelSpec, width: int, masked_chunks: bool = True):
        self.spec = spec
        self.W = width
        # False on CPUs without mask registers (AVX2): full chunks load and store with plain
        # vector instructions, only the last chunk with masked ones (see masked_mem()).
        self.masked_chunks = masked_chunks
        self.entry_names: set[str] = set()     # values defined once in the entry block on demand
        self.entry: list[str] = []
        self.body: list[str] = []
        self.declarations: set[str] = set()
        self.definitions: dict[str, str] = {}
        self.math_calls: dict[str, int] = {}
        self.counter = 0
        self.vals: list[str] = []
        self.split_blocks: list[str] = []    # labels of the blocks cut out of the loop body
        # While an instruction is lowered in a wider compute type (Float16 in float32, see
        # half.py): its operands as [(value, type)], which arg()/argvt() return instead.
        self.widened: list | None = None
        # The lane masks of the symbolic loops being emitted, innermost last (codegen/loops.py).
        self.loop_lanes: list[str] = []
        # Without mask registers, the frame reads its inputs together at the start of a chunk
        # and writes its outputs together at the end (see _grouped_loads): param -> type, and
        # (param, type, value) per store.
        self.grouped_loads: dict[int, VarType] = {}
        self.grouped_stores: list[tuple[int, VarType, str]] = []
        # With mask registers: the stores not written yet, (param, type, value) each, and the
        # number of store groups written (see _flush_stores).
        self.pending_stores: list[tuple[int, VarType, str]] = []
        self.store_groups = 0
        # A kernel with a symbolic loop writes its outputs through the caches, without the
        # choice of non-temporal stores (see _cached_stores).
        self.cached_stores = self._cached_stores(spec)
        # Whether an instruction read the lanes' indices (``%lane``, the counter op): the
        # frame computes them only then.
        self.uses_lane = False

    # -- small helpers ---------------------------------------------------
    def tmp(self) -> str:
        self.counter += 1
        return f"%t{self.counter}"

    def vty(self, t: str) -> str:
        return f"<{self.W} x {t}>"

    def splat(self, t: str, c: str) -> str:
        return f"splat ({t} {c})"

    def const(self, vt: VarType, value) -> str:
        return self.splat(scalar_type(vt), scalar_constant(vt, value))

    def emit(self, text: str) -> str:
        r = self.tmp()
        self.body.append(f"  {r} = {text}")
        return r

    def intrinsic(self, name: str, ret: str, argtypes: list[str]) -> str:
        self.declarations.add(f"declare {ret} @{name}({', '.join(argtypes)})")
        return f"@{name}"

    def call_unary_intrinsic(self, base: str, t: str, a: str) -> str:
        vt_ = self.vty(t)
        fn = self.intrinsic(f"llvm.{base}.v{self.W}{suffix(t)}", vt_, [vt_])
        return self.emit(f"call {vt_} {fn}({vt_} {a})")

    def call_binary_intrinsic(self, base: str, t: str, a: str, b: str) -> str:
        vt_ = self.vty(t)
        fn = self.intrinsic(f"llvm.{base}.v{self.W}{suffix(t)}", vt_, [vt_, vt_])
        return self.emit(f"call {vt_} {fn}({vt_} {a}, {vt_} {b})")

    def select(self, t: str, m: str, a: str, b: str) -> str:
        return self.emit(f"select {self.vty('i1')} {m}, {self.vty(t)} {a}, {self.vty(t)} {b}")

    def cmp(self, kind: str, pred: str, t: str, a: str, b: str) -> str:
        return self.emit(f"{kind} {pred} {self.vty(t)} {a}, {b}")

    def binop(self, op: str, t: str, a: str, b: str) -> str:
        return self.emit(f"{op} {self.vty(t)} {a}, {b}")

    def math(self, name: str, t: str, *args: str) -> str:
        fn = math_function(name, t, self.W)
        self.definitions.update(fn.definitions)
        self.math_calls[fn.symbol] = self.math_calls.get(fn.symbol, 0) + 1
        self.declarations.update(fn.declarations)
        vt_ = self.vty(t)
        if fn.results == 2:
            rt = f"{{ {vt_}, {vt_} }}"
            return self.emit(f"call {rt} @{fn.symbol}({', '.join(f'{vt_} {x}' for x in args)})")
        return self.emit(f"call {vt_} @{fn.symbol}({', '.join(f'{vt_} {x}' for x in args)})")

    # -- the kernel ------------------------------------------------------
    def generate(self) -> str:
        W = self.W
        spec = self.spec
        lanes = ", ".join(f"i64 {k}" for k in range(W))
        self.ptrs = []
        self.sizes = []
        for k, (kind, vt) in enumerate(spec.params):
            self.entry.append(f"  %a{k}.slot = getelementptr i64, ptr %args, i64 {2 * k}")
            self.entry.append(f"  %a{k} = load ptr, ptr %a{k}.slot, align 8")
            self.ptrs.append(f"%a{k}")
            if kind in (GATHER_SRC, SCATTER_DST):
                self.entry.append(f"  %n{k}.slot = getelementptr i64, ptr %args, i64 {2 * k + 1}")
                self.entry.append(f"  %n{k} = load i64, ptr %n{k}.slot, align 8")
                self.entry.append(f"  %n{k}.v0 = insertelement <{W} x i64> poison, i64 %n{k}, i64 0")
                self.entry.append(f"  %n{k}.v = shufflevector <{W} x i64> %n{k}.v0, <{W} x i64> poison, <{W} x i32> zeroinitializer")
                # 32-bit indices address through a sign-extending 32-bit GEP (one vgatherdps per 16
                # lanes instead of two vgatherqps), so they are only in bounds below 2^31.
                self.entry.append(f"  %n{k}.big = icmp ugt i64 %n{k}, 2147483647")
                self.entry.append(f"  %n{k}.c = select i1 %n{k}.big, i64 2147483647, i64 %n{k}")
                self.entry.append(f"  %n{k}.t = trunc i64 %n{k}.c to i32")
                self.entry.append(f"  %n{k}.w0 = insertelement <{W} x i32> poison, i32 %n{k}.t, i64 0")
                self.entry.append(f"  %n{k}.w = shufflevector <{W} x i32> %n{k}.w0, <{W} x i32> poison, <{W} x i32> zeroinitializer")
            elif kind == OUT and not self.cached_stores:
                self._nontemporal_flag(k, vt)
            elif kind == IN_SCALAR:
                mt = memory_type(vt)
                st = scalar_type(vt)
                self.entry.append(f"  %s{k}.m = load {mt}, ptr %a{k}, align {vt.itemsize}")
                if vt is Bool:
                    self.entry.append(f"  %s{k} = icmp ne i8 %s{k}.m, 0")
                else:
                    self.entry.append(f"  %s{k} = bitcast {st} %s{k}.m to {st}")
                self.entry.append(f"  %s{k}.v0 = insertelement <{W} x {st}> poison, {st} %s{k}, i64 0")
                self.entry.append(f"  %s{k}.v = shufflevector <{W} x {st}> %s{k}.v0, <{W} x {st}> poison, <{W} x i32> zeroinitializer")

        outs = [k for k, (kind, _) in enumerate(spec.params) if kind == OUT]
        if outs and not self.cached_stores:
            self._nontemporal_outputs(outs)
        # The lanes' indices (the counter op's %lane) are inserted here once the body is known
        # to use them: dead vector code still costs instruction selection (~3% of the
        # Mandelbrot kernel's code generation, measured).
        lane_at = len(self.body)
        # The lane mask, all true but in the last chunk: the low min(end - i, W) bits of an
        # integer moved into a mask register.  (Comparing W 64-bit lane indices with the end
        # cost ~12% of a 70-operation kernel: 1.05 vs 0.93 ms per 1e6 lanes, measured.)
        wide = f"i{2 * W}"
        umin = self.intrinsic("llvm.umin.i64", "i64", ["i64", "i64"])
        self.body.append("  %left = sub i64 %end, %i")
        self.body.append(f"  %left.w = call i64 {umin}(i64 %left, i64 {W})")
        if self.masked_chunks:
            left = "%left.w"
            if 2 * W != 64:
                self.body.append(f"  %left.x = {'zext' if 2 * W > 64 else 'trunc'} i64 %left.w to {wide}")
                left = "%left.x"
            self.body.append(f"  %bits.1 = shl {wide} 1, {left}")
            self.body.append(f"  %bits.2 = sub {wide} %bits.1, 1")
            self.body.append(f"  %bits = trunc {wide} %bits.2 to i{W}")
            self.body.append(f"  %mask = bitcast i{W} %bits to <{W} x i1>")
        else:
            # Without mask registers a vector compare of 32-bit lane numbers is what the mask
            # becomes anyway (AVX2 has no instruction moving bits into lanes): emitted as one, it
            # saves instruction selection ~5% of a small kernel's code generation (measured).
            self.body.append("  %left.t = trunc i64 %left.w to i32")
            self.body += self._lanes_left_mask("%leftv", "%mask")
        self.body.append(f"  %full = icmp eq i64 %left.w, {W}")
        if outs and self.masked_chunks and not self.cached_stores:
            self.body.append("  %nt.chunk = and i1 %full, %nt.all")      # (see _flush_stores)
        chunk_start = len(self.body)      # where the grouped loads go (no mask registers)
        block_start = 0
        for ins in spec.instrs:
            self.vals.append(self.instruction(ins))
            if len(self.body) - block_start >= BLOCK_INSTRS:
                if self.pending_stores:
                    self._flush_stores()
                label = f"body.{len(self.split_blocks) + 1}"
                self.split_blocks.append(label)
                self.body.append(f"  br label %{label}")
                self.body.append(f"{label}:")
                block_start = len(self.body)

        if self.pending_stores:
            self._flush_stores()
        if self.grouped_loads:
            self.body[chunk_start:chunk_start] = self._grouped_loads()
        if self.grouped_stores:
            self.body.extend(self._grouped_stores())
        if self.uses_lane:
            self.body[lane_at:lane_at] = [
                f"  %iv0 = insertelement <{W} x i64> poison, i64 %i, i64 0",
                f"  %iv = shufflevector <{W} x i64> %iv0, <{W} x i64> poison, <{W} x i32> zeroinitializer",
                f"  %lane = add <{W} x i64> %iv, <{lanes}>"]

        # A kernel with fused reductions (codegen/reductions.py) carries their accumulators
        # around the loop and stores a partial at the end of each row.
        reducing = reductions.has_accumulators(spec)
        ir = [
            f"define void {KERNEL_PLACEHOLDER}(i64 %start, i64 %end, ptr noalias nocapture readonly %args, "
            f"i64 %shared) #0 {{",
            "entry:",
            "  %shared.b = icmp ne i64 %shared, 0",
            *self.entry,
            "  br label %loop",
            "loop:",
            "  %i = phi i64 [ %start, %entry ], [ %inext, %latch ]" if not reducing else
            "  %i = phi i64 [ %start, %entry ], [ %inext, %latch ], [ %inext, %rflush ]",
            *(reductions.header_phis(self) if reducing else ()),
            "  %more = icmp slt i64 %i, %end",
            "  br i1 %more, label %body, label %exit",
            "body:",
            *self.body,
            "  br label %latch",
            "latch:",
            *(reductions.latch(self) if reducing else (f"  %inext = add i64 %i, {W}", "  br label %loop")),
            *(reductions.flush(self) if reducing else ()),
            "exit:",
            "  ret void",
            "}",
            # Tell the x86 backend to really use W-lane registers (some CPUs are tuned to prefer 256 bits).
            f'attributes #0 = {{ nounwind "min-legal-vector-width"="{32 * W}" "prefer-vector-width"="{32 * W}" }}',
        ]
        if any(kind == OUT for kind, _ in spec.params) and not self.cached_stores:
            ir.append("!0 = !{i32 1}")       # the !nontemporal marker of store_output()
        parts = (sorted(self.declarations) + [self._definition(k) for k in sorted(self.definitions)]
                 + self._keep_blocks_apart() + ir)
        return "\n".join(parts) + "\n"

    def _keep_blocks_apart(self) -> list[str]:
        """Globals that take the split blocks' addresses, so LLVM keeps them apart.

        A plain branch between two blocks is merged away (simplify-CFG, then CodeGenPrepare),
        and a conditional one lets Machine Sink move the whole chain into one block again;
        a block whose address is taken stays a block of its own.  ``llvm.compiler.used``
        keeps the (otherwise unused, internal) table alive; it costs nothing at run time.
        """
        if not self.split_blocks:
            return []
        n = len(self.split_blocks)
        entries = ", ".join(f"ptr blockaddress({KERNEL_PLACEHOLDER}, %{b})" for b in self.split_blocks)
        return [f"@fj.blocks = internal constant [{n} x ptr] [{entries}]",
                '@llvm.compiler.used = appending global [1 x ptr] [ptr @fj.blocks], section "llvm.metadata"']

    def _definition(self, symbol: str) -> str:
        """A math function's IR: inlined when used rarely, called when used often.

        Inlining every call of a math function used many times (``sin`` in a 100-step
        loop) multiplies the kernel's size and its compile time by ~8 for a ~6% faster
        kernel; beyond INLINE_MATH_CALLS uses one out-of-line copy is shared.
        """
        text = self.definitions[symbol]
        if self.math_calls.get(symbol, 0) > INLINE_MATH_CALLS:
            text = text.replace(") alwaysinline ", ") noinline ", 1)
        return text

    # -- instructions ----------------------------------------------------
    def instruction(self, ins) -> str:
        lower = LOWERINGS.get(ins.op)
        if lower is None:
            raise NotImplementedError(f"LLVM backend: no code generation for operation '{ins.op}'")
        if ins.op in loops.LOWERINGS:       # (control flow: never widened, see half.py)
            return lower(self, ins)
        if half.computes_wider(self, ins):
            return half.lower_widened(self, ins, lower)
        return lower(self, ins)

    def arg(self, ins, k=0) -> str:
        if self.widened is not None:
            return self.widened[k][0]
        return self.vals[ins.args[k]]

    def argvt(self, ins, k=0) -> VarType:
        if self.widened is not None:
            return self.widened[k][1]
        return self.spec.instrs[ins.args[k]].vt

    def _store_alignment(self, vt: VarType) -> int:
        """The alignment (bytes) of a full chunk's store of ``vt``: a 64-byte boundary, or the chunk's
        size when smaller (W Bool lanes); every chunk of a buffer starting there is aligned too."""
        return min(64, self.W * vt.itemsize)

    def _nontemporal_flag(self, k: int, vt: VarType) -> None:
        """``%a{k}.aligned``: output ``k``'s first chunk (at ``start``) is aligned for a
        non-temporal store; ``%n{k}.bytes``: its size (see :meth:`_nontemporal_outputs`)."""
        size = vt.itemsize
        align = self._store_alignment(vt)
        self.entry.append(f"  %n{k}.slot = getelementptr i64, ptr %args, i64 {2 * k + 1}")
        self.entry.append(f"  %n{k} = load i64, ptr %n{k}.slot, align 8")
        self.entry.append(f"  %n{k}.bytes = mul i64 %n{k}, {size}")
        self.entry.append(f"  %a{k}.int = ptrtoint ptr %a{k} to i64")
        self.entry.append(f"  %a{k}.skip = mul i64 %start, {size}")
        self.entry.append(f"  %a{k}.first = add i64 %a{k}.int, %a{k}.skip")
        self.entry.append(f"  %a{k}.mis = and i64 %a{k}.first, {align - 1}")
        self.entry.append(f"  %a{k}.aligned = icmp eq i64 %a{k}.mis, 0")

    def _nontemporal_outputs(self, outs: list[int]) -> None:
        """``%a{k}.nt``: output ``k`` gets non-temporal stores in this launch: the launch writes
        at least NONTEMPORAL_BYTES in all (what it leaves in the caches is what matters: a
        4x4 transform of 1e6 points writes four 4 MB outputs, 2.8 -> 4.2 ms with cached stores
        on one Zen 3 thread) and its first chunk is aligned."""
        total = "0"
        for j, k in enumerate(outs):
            self.entry.append(f"  %out.bytes{j} = add i64 {total}, %n{k}.bytes")
            total = f"%out.bytes{j}"
        self.entry.append(f"  %out.big = icmp uge i64 {total}, {NONTEMPORAL_BYTES}")
        if self.masked_chunks:
            # One flag for all outputs (their stores share a branch, see _flush_stores): pool
            # buffers and the thread pool's block starts keep every output aligned together.
            every = "%out.big"
            for j, k in enumerate(outs):
                name = "%nt.all" if j == len(outs) - 1 else f"%nt.all.{k}"
                self.entry.append(f"  {name} = and i1 {every}, %a{k}.aligned")
                every = name
            return
        for k in outs:
            self.entry.append(f"  %a{k}.nt = and i1 %out.big, %a{k}.aligned")

    # -- the frame's loads and stores -------------------------------------
    def frame_load(self, k: int, vt: VarType) -> str:
        """Chunk ``%i`` of input ``k``: a masked load where the CPU has mask registers, else the
        value read at the start of the chunk with the other inputs (:meth:`_grouped_loads`)."""
        if self.masked_chunks:
            p = self.emit(f"getelementptr {memory_type(vt)}, ptr %a{k}, i64 %i")
            return self.masked_mem("load", vt, p)
        self.grouped_loads[k] = vt
        return f"%in{k}"

    def frame_store(self, k: int, vt: VarType, value: str) -> None:
        """Write chunk ``%i`` of output ``k``.  With mask registers: a masked store here in a kernel
        with a symbolic loop (:meth:`_cached_stores`), else with the next few outputs' stores
        (:meth:`_flush_stores`); without them: at the end of the chunk with the other outputs
        (:meth:`_grouped_stores`)."""
        if self.masked_chunks:
            if self.cached_stores:
                p = self.emit(f"getelementptr {memory_type(vt)}, ptr %a{k}, i64 %i")
                self.masked_mem("store", vt, p, value)
                return
            self.pending_stores.append((k, vt, value))
            if len(self.pending_stores) >= STORE_GROUP:
                self._flush_stores()
            return
        if self.loop_lanes:       # (the scheduler stores outputs after every loop: never here)
            raise AssertionError("LLVM backend: a store inside a symbolic loop")
        self.grouped_stores.append((k, vt, value))

    def _lane_numbers(self) -> str:
        return "<" + ", ".join(f"i32 {j}" for j in range(self.W)) + ">"

    def _lanes_left_mask(self, left: str, mask: str) -> list[str]:
        """``mask``: the lanes below ``%left.t`` (the chunk's lane count), a vector compare of the
        lane numbers with ``left`` (``left`` + ``0``: its broadcast's names)."""
        W = self.W
        return [f"  {left}0 = insertelement <{W} x i32> poison, i32 %left.t, i64 0",
                f"  {left} = shufflevector <{W} x i32> {left}0, <{W} x i32> poison, <{W} x i32> zeroinitializer",
                f"  {mask} = icmp ult <{W} x i32> {self._lane_numbers()}, {left}"]

    def _tail_mask(self, tag: str) -> list[str]:
        """``%{tag}.mask``, the lane mask computed again in a last chunk's block: full chunks
        then compute none unless the kernel uses ``%mask`` (a loop, a gather)."""
        return self._lanes_left_mask(f"%{tag}.lv", f"%{tag}.mask")

    @staticmethod
    def _cached_stores(spec: KernelSpec) -> bool:
        """Whether the kernel's full chunks are always written through the caches (plain stores,
        or masked ones with mask registers), without the run-time choice of non-temporal stores for
        large outputs: kernels with a symbolic loop.

        Non-temporal stores pay off in memory-bound kernels (PCG32's 1e7-lane step); a loop makes
        a kernel compute-bound as soon as its lanes iterate (the Mandelbrot kernel: ~170
        iterations per lane, 12 bytes written).  The choice costs one branch and two stores per
        output and chunk: without mask registers it made the Mandelbrot kernel's AVX2 code
        generation ~20% dearer, with them (AVX-512) ~50% (25.8 -> 17.1 M instructions per
        ``emit_object``); the loop kernels also run as fast or faster without it (fewer
        registers held across the loop).  Only a loop that no lane enters writes large outputs
        slower (docs/engine.md, "Compile time")."""
        return any(ins.op == "loop_start" for ins in spec.instrs)

    @staticmethod
    def _copied(vt: VarType) -> bool:
        """Whether a last chunk of ``vt`` is read or written through a stack slot rather than
        with a masked load or store: AVX2 masks only 32- and 64-bit elements.

        LLVM turns a masked load or store of 8- or 16-bit elements (a Bool output, a comparison
        stored) into one branch and one scalar access per lane: W blocks for instruction
        selection in every kernel, although only a launch block's last chunk runs them.  A
        scalar copy loop is a few instructions: the Monte Carlo pi kernel (PCG32 steps and a
        Bool output) compiled in 37 -> 30 ms CPU (AVX2 AMD EPYC, docs/engine.md "Compile
        time").  32- and 64-bit elements keep the masked instructions: the copy loops cost
        more than ``vmaskmov`` there (the Mandelbrot kernel 19 -> 23 ms with copies)."""
        return vt.itemsize < 4

    def _tail_buffer(self, name: str, mt: str) -> str:
        """A 64-byte aligned stack slot of one chunk of ``mt`` (allocated once, in the entry block):
        where a last chunk's loads read from or its stores write to (see _copied)."""
        self.entry.append(f"  {name} = alloca {self.vty(mt)}, align 64")
        return name

    @staticmethod
    def _copy_loop(tag: str, pairs: list[tuple[str, str, str]], after: str) -> list[str]:
        """Blocks ``{tag}.copy``: element ``j`` of every ``(type, dst, src)`` of ``pairs`` copied, for
        ``j`` below ``%left.w`` (the last chunk's lane count, at least 1); entered from block
        ``{tag}.tail``, left to ``after``.  A loop rather than ``memcpy``: a call in the kernel
        costs code generation more (every vector register is caller-saved around it)."""
        lines = [f"  br label %{tag}.copy", f"{tag}.copy:",
                 f"  %{tag}.j = phi i64 [ 0, %{tag}.tail ], [ %{tag}.jn, %{tag}.copy ]"]
        for n, (mt, dst, src) in enumerate(pairs):
            lines += [f"  %{tag}.s{n} = getelementptr {mt}, ptr {src}, i64 %{tag}.j",
                      f"  %{tag}.x{n} = load {mt}, ptr %{tag}.s{n}",
                      f"  %{tag}.d{n} = getelementptr {mt}, ptr {dst}, i64 %{tag}.j",
                      f"  store {mt} %{tag}.x{n}, ptr %{tag}.d{n}"]
        lines += [f"  %{tag}.jn = add i64 %{tag}.j, 1",
                  f"  %{tag}.more = icmp ult i64 %{tag}.jn, %left.w",
                  f"  br i1 %{tag}.more, label %{tag}.copy, label %{after}"]
        return lines

    def _grouped_loads(self) -> list[str]:
        """Without mask registers: every input's chunk read at the start of the chunk, with one
        branch between plain loads (a full chunk) and masked ones (the last chunk); 8- and
        16-bit inputs are copied into a zeroed stack slot in the last chunk instead, which their
        one load then reads (see _copied; inactive lanes read 0 either way).

        A masked load or store costs several instructions on AVX2, and each basic block holding
        one costs instruction selection its own copy of the mask: one branch for all inputs (and
        one for all outputs) instead of one per load and store cuts the code generation of the
        Mandelbrot kernel by ~20% (measured) and runs the same.  Reading every input first is
        what the loads' order allows: inputs are read-only in a kernel."""
        W = self.W
        params = sorted(self.grouped_loads.items())
        whole, part = ["ld.whole:"], ["ld.tail:"]
        if any(not self._copied(vt) for _, vt in params):
            part += self._tail_mask("ld")
        head, pairs, phis, reads, bools = [], [], ["ld.end:"], [], []
        from_tail = "%ld.tail"
        for k, vt in params:
            mt = memory_type(vt)
            v = self.vty(mt)
            name = f"%in{k}.m" if vt is Bool else f"%in{k}"
            if vt is Bool:
                bools.append(f"  %in{k} = icmp ne {v} %in{k}.m, zeroinitializer")
            if self._copied(vt):
                buf = self._tail_buffer(f"%ld.buf{k}", mt)
                memset = self.intrinsic("llvm.memset.p0.i64", "void", ["ptr", "i8", "i64", "i1"])
                head.append(f"  %in{k}.at = getelementptr {mt}, ptr %a{k}, i64 %i")
                part.append(f"  call void {memset}(ptr align 64 {buf}, i8 0, i64 {W * vt.itemsize}, i1 false)")
                pairs.append((mt, buf, f"%in{k}.at"))
                reads.append(f"  %in{k}.src = select i1 %full, ptr %in{k}.at, ptr {buf}")
                reads.append(f"  {name} = load {v}, ptr %in{k}.src, align {vt.itemsize}")
                continue
            whole.append(f"  %in{k}.at = getelementptr {mt}, ptr %a{k}, i64 %i")
            whole.append(f"  %in{k}.w = load {v}, ptr %in{k}.at, align {vt.itemsize}")
            fn = self.intrinsic(f"llvm.masked.load.v{W}{suffix(mt)}.p0", v, ["ptr", "i32", self.vty("i1"), v])
            part.append(f"  %in{k}.tat = getelementptr {mt}, ptr %a{k}, i64 %i")
            part.append(f"  %in{k}.t = call {v} {fn}(ptr %in{k}.tat, i32 {vt.itemsize}, "
                        f"{self.vty('i1')} %ld.mask, {v} zeroinitializer)")
            phis.append(f"  {name} = phi {v} [ %in{k}.w, %ld.whole ], [ %in{k}.t, {{from_tail}} ]")
        if pairs:
            part += self._copy_loop("ld", pairs, "ld.end")
            from_tail = "%ld.copy"
        else:
            part.append("  br label %ld.end")
        phis = [p.replace("{from_tail}", from_tail) for p in phis]
        return [*head, "  br i1 %full, label %ld.whole, label %ld.tail",
                *whole, "  br label %ld.end", *part, *phis, *reads, *bools]

    def _grouped_stores(self) -> list[str]:
        """Without mask registers: every output's chunk written at the end of the chunk: a full
        chunk with plain (or non-temporal, see _flush_stores; never in a kernel with a loop, see
        _cached_stores) stores, the last one with masked
        stores, one branch between them (see _grouped_loads); an 8- or 16-bit output's last
        chunk is stored into a stack slot whose lanes left are then copied out (see _copied)."""
        W = self.W
        lines, whole, part, pairs = [], ["st.whole:"], ["st.tail:"], []
        if any(not self._copied(vt) for _, vt, _ in self.grouped_stores):
            part += self._tail_mask("st")
        for j, (k, vt, value) in enumerate(self.grouped_stores):
            mt = memory_type(vt)
            v = self.vty(mt)
            if vt is Bool:
                lines.append(f"  %st{j}.v = zext {self.vty('i1')} {value} to {v}")
                value = f"%st{j}.v"
            if self._copied(vt):
                # The full chunk's store and the last chunk's store into the slot are one store
                # (to a selected address) unless it is non-temporal.
                buf = self._tail_buffer(f"%st.buf{j}", mt)
                pairs.append((mt, f"%st{j}.at", buf))
                if self.cached_stores:
                    lines += [f"  %st{j}.at = getelementptr {mt}, ptr %a{k}, i64 %i",
                              f"  %st{j}.dst = select i1 %full, ptr %st{j}.at, ptr {buf}",
                              f"  store {v} {value}, ptr %st{j}.dst, align {vt.itemsize}"]
                    continue
                lines += [f"  %st{j}.at = getelementptr {mt}, ptr %a{k}, i64 %i",
                          f"  %st{j}.nt.ok = and i1 %full, %a{k}.nt",
                          f"  br i1 %st{j}.nt.ok, label %st{j}.nt, label %st{j}.plain",
                          f"st{j}.nt:",
                          f"  store {v} {value}, ptr %st{j}.at, align {self._store_alignment(vt)}, !nontemporal !0",
                          f"  br label %st{j}.done",
                          f"st{j}.plain:",
                          f"  %st{j}.dst = select i1 %full, ptr %st{j}.at, ptr {buf}",
                          f"  store {v} {value}, ptr %st{j}.dst, align {vt.itemsize}",
                          f"  br label %st{j}.done",
                          f"st{j}.done:"]
                continue
            if self.cached_stores:
                whole += [f"  %st{j}.at = getelementptr {mt}, ptr %a{k}, i64 %i",
                          f"  store {v} {value}, ptr %st{j}.at, align {vt.itemsize}"]
            else:
                whole += [f"  %st{j}.at = getelementptr {mt}, ptr %a{k}, i64 %i",
                          f"  br i1 %a{k}.nt, label %st{j}.nt, label %st{j}.plain",
                          f"st{j}.nt:",
                          f"  store {v} {value}, ptr %st{j}.at, align {self._store_alignment(vt)}, !nontemporal !0",
                          f"  br label %st{j}.done",
                          f"st{j}.plain:",
                          f"  store {v} {value}, ptr %st{j}.at, align {vt.itemsize}",
                          f"  br label %st{j}.done",
                          f"st{j}.done:"]
            fn = self.intrinsic(f"llvm.masked.store.v{W}{suffix(mt)}.p0", "void", [v, "ptr", "i32", self.vty("i1")])
            part.append(f"  %st{j}.tat = getelementptr {mt}, ptr %a{k}, i64 %i")
            part.append(f"  call void {fn}({v} {value}, ptr %st{j}.tat, i32 {vt.itemsize}, {self.vty('i1')} %st.mask)")
        part += self._copy_loop("st", pairs, "st.end") if pairs else ["  br label %st.end"]
        return [*lines, "  br i1 %full, label %st.whole, label %st.tail",
                *whole, "  br label %st.end", *part, "st.end:"]

    def _flush_stores(self) -> None:
        """With mask registers, in a kernel without a symbolic loop: the outputs' stores held
        since the last group (``pending_stores``), written together behind one branch: the
        non-temporal stores of a full chunk of a launch whose outputs qualify (``%nt.chunk``),
        else masked stores.

        One branch per group and chunk instead of one per output and chunk (an ``and`` of the
        chunk's flag, a test and two jumps per output before): the 4x4 transform's hot loop
        went from 86 to 67 instructions per 32 lanes.  A group holds at most
        :data:`STORE_GROUP` outputs and never spans a cut between blocks (:data:`BLOCK_INSTRS`),
        so the values held for it stay a few registers."""
        pending, self.pending_stores = self.pending_stores, []
        g = self.store_groups = self.store_groups + 1
        head, nt, masked = [], [f"sg{g}.nt:"], []
        for j, (k, vt, value) in enumerate(pending):
            if vt is Bool:
                head.append(f"  %sg{g}.v{j} = zext {self.vty('i1')} {value} to {self.vty('i8')}")
                value, vt = f"%sg{g}.v{j}", UInt8
            v = self.vty(memory_type(vt))
            head.append(f"  %sg{g}.at{j} = getelementptr {memory_type(vt)}, ptr %a{k}, i64 %i")
            nt.append(f"  store {v} {value}, ptr %sg{g}.at{j}, align {self._store_alignment(vt)}, !nontemporal !0")
            masked.append((vt, f"%sg{g}.at{j}", value))
        self.body += [*head, f"  br i1 %nt.chunk, label %sg{g}.nt, label %sg{g}.masked",
                      *nt, f"  br label %sg{g}.end", f"sg{g}.masked:"]
        for vt, at, value in masked:
            self.masked_mem("store", vt, at, value)
        self.body += [f"  br label %sg{g}.end", f"sg{g}.end:"]

    def masked_mem(self, kind: str, vt: VarType, ptr: str, value: str | None = None, mask: str = "%mask") -> str:
        """A masked vector load (returns its value) or store of ``vt`` at ``ptr``.

        Without mask registers (``masked_chunks`` False) a masked load or store costs several
        instructions (AVX2's ``vmaskmov``, microcoded on some CPUs): it branches to a plain
        one when every lane is active (``%full`` for the frame's mask, else a test of the
        mask's bits), leaving the masked instruction to the last chunk and to partial masks.
        """
        if self.masked_chunks:
            return self._masked_instruction(kind, vt, ptr, value, mask)
        mt = memory_type(vt)
        v = self.vty(mt)
        tag = self.tmp()[1:]
        if mask == "%mask":
            every = "%full"
        else:
            bits = self.emit(f"bitcast {self.vty('i1')} {mask} to i{self.W}")
            every = self.emit(f"icmp eq i{self.W} {bits}, -1")
        if kind == "store" and vt is Bool:
            value = self.emit(f"zext {self.vty('i1')} {value} to {v}")
            vt = UInt8
        self.body.append(f"  br i1 {every}, label %{tag}.plain, label %{tag}.tail")
        self.body.append(f"{tag}.plain:")
        if kind == "load":
            whole = self.emit(f"load {v}, ptr {ptr}, align {vt.itemsize}")
        else:
            self.body.append(f"  store {v} {value}, ptr {ptr}, align {vt.itemsize}")
        self.body.append(f"  br label %{tag}.end")
        self.body.append(f"{tag}.tail:")
        part = self._masked_instruction(kind, vt, ptr, value, mask, raw=True)
        self.body.append(f"  br label %{tag}.end")
        self.body.append(f"{tag}.end:")
        if kind == "store":
            return ""
        r = self.emit(f"phi {v} [ {whole}, %{tag}.plain ], [ {part}, %{tag}.tail ]")
        if vt is Bool:
            r = self.cmp("icmp", "ne", "i8", r, "zeroinitializer")
        return r

    def _masked_instruction(self, kind: str, vt: VarType, ptr: str, value: str | None, mask: str,
                            raw: bool = False) -> str:
        """``llvm.masked.load``/``store``; ``raw``: a Bool load stays bytes (the caller converts)."""
        mt = memory_type(vt)
        v = self.vty(mt)
        if kind == "load":
            fn = self.intrinsic(f"llvm.masked.load.v{self.W}{suffix(mt)}.p0", v, ["ptr", "i32", self.vty("i1"), v])
            r = self.emit(f"call {v} {fn}(ptr {ptr}, i32 {vt.itemsize}, {self.vty('i1')} {mask}, {v} zeroinitializer)")
            if vt is Bool and not raw:
                r = self.cmp("icmp", "ne", "i8", r, "zeroinitializer")
            return r
        if vt is Bool:
            value = self.emit(f"zext {self.vty('i1')} {value} to {v}")
        fn = self.intrinsic(f"llvm.masked.store.v{self.W}{suffix(mt)}.p0", "void", [v, "ptr", "i32", self.vty("i1")])
        self.body.append(f"  call void {fn}({v} {value}, ptr {ptr}, i32 {vt.itemsize}, {self.vty('i1')} {mask})")
        return ""


def generate_ir(spec: KernelSpec, width: int, masked_chunks: bool = True) -> str:
    """Return the LLVM IR of ``spec`` (kernel name: ``KERNEL_PLACEHOLDER``).

    ``masked_chunks=False`` (CPUs without mask registers) gives full chunks plain vector loads
    and stores and only the last chunk masked ones.
    """
    return KernelEmitter(spec, width, masked_chunks).generate()
