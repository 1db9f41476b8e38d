"""The LLVM backend's part of a frozen function's replay (:class:`LLVMReplayEmitter`).

A replay must cost little more than the kernels it runs, so its code does what
:meth:`LLVMBackend.launch` does, with everything that does not change between replays done
once, when the code is generated:

* each launch has its own ``ctypes`` argument array (``args_<k>``), kept between replays;
  the replay only patches the addresses and sizes that change (a captured buffer's address
  and a constant size are written once), then calls the kernel's entry point directly
  (``kernel_<k>``; on the calling thread through its argument-type-free entry ``kraw_<k>``
  with kept ``c_int64`` objects for the bounds, so ctypes converts nothing), or hands it to
  the thread pool when the launch is large;
* small outputs are pieces of a per-recording 64 KiB *slab* (:class:`SlabBuffer`: an address
  computed by a bump allocator, no NumPy view until one is read, no finalizer); one launch's
  outputs are one reservation;
* intermediates that never leave the replay reuse scratch buffers (``scratch[r]``, grown
  when too small) planned by liveness (``frostjit/freeze/scratch.py``);
* reductions of a constant-size input write into a slab piece instead of uploading a NumPy
  result.
"""
from __future__ import annotations

import ast
import ctypes
import math
import re

import numpy as np

from ..kernel import OUT
from ..replay import ReplayEmitter, ReplayCode, LaunchArg, Size
from .memory import HostBuffer
from .reduction import REDUCE_ROWS_FROM, REDUCE_UFUNC, result_dtype
from .threads import parallel_threshold

# The start and ``shared`` arguments of a launch on the calling thread (read only, never written).
_I64_ZERO = ctypes.c_int64(0)

# A join of a deferred launch, if one is pending (the test inline: a replay that deferred none
# pays ~0.05 us, not the two calls of join_launch).
_JOIN = "if backend.threads.pending is not None: join_launch()"

# Names a size expression may use at the start of a replay: input size classes and parameters
# (freeze/replay_code.py binds them before the prologue).
_KNOWN_AT_START = re.compile(r"[sp]\d+")


class LLVMReplayEmitter(ReplayEmitter):
    """Writes launches as patched ``ctypes`` arrays and direct calls (see the module docstring)."""

    def __init__(self, backend, code: ReplayCode):
        super().__init__(backend, code)
        alloc, alloc_many, reserve = _slab_allocator()
        code.bind("alloc", alloc)
        code.bind("alloc_many", alloc_many)
        code.bind("reserve_slab", reserve)
        code.bind("SlabBuffer", SlabBuffer)
        code.bind("new_buffer", object.__new__)
        code.bind("backend", backend)
        # the backend's method, not the pool's: set_thread_count replaces the pool, and a
        # replay recorded before must launch on the new one
        code.bind("run_parallel", backend.run_parallel)
        code.bind("simd_width", backend.width)
        code.bind("reduce_into", _reduce_into)
        self.scratch: list = []            # buffers kept between replays (grown when too small)
        self.scratch_sizes: list = []
        code.bind("scratch", self.scratch)
        code.bind("scratch_sizes", self.scratch_sizes)
        code.bind("wake_threads", backend.wake_threads)
        code.bind("join_launch", backend.join_launch)
        self._wake_at: int | None = None    # where the prologue's wake-up goes (see launch())
        self._wake_indent = ""
        self._woken = False
        self._pending = False       # a deferred launch may run (no join written since)
        self._joins_first = False   # the join at the start of the replay is written

    def prologue(self) -> None:
        # The line that wakes the pool's workers is written here once a launch turns out to be
        # large (launch() inserts it): their wake-up overlaps the replay's work before it.
        self._wake_at = len(self.code.lines)
        self._wake_indent = self.code.indent

    def _wake_before(self, size: Size, threshold: int) -> None:
        """Wake the workers at the start of the replay if this launch may run on them: always
        for a constant size from ``threshold`` on, when the size expression is known at the
        start (input sizes and parameters only) and reaches it, else not."""
        # (written whatever the thread count is now: set_thread_count may change it before a
        # replay, and a pool without workers makes the call a no-op)
        if self._woken or self._wake_at is None:
            return
        if size.is_const:
            if size.value < threshold:
                return
            text = "wake_threads()"
        else:
            names = {n.id for n in ast.walk(ast.parse(size.expr, mode="eval")) if isinstance(n, ast.Name)}
            if not all(_KNOWN_AT_START.fullmatch(n) or n in self.code.namespace for n in names):
                return
            text = f"if {size.expr} >= {threshold}: wake_threads()"
        self.code.lines.insert(self._wake_at, self._wake_indent + text)
        self._woken = True

    def _join_first(self) -> None:
        """The replay's first line (in the recording's lock) joins a deferred launch still
        pending: one of an earlier replay left by an exception, whose argument arrays and
        scratch buffers this replay is about to reuse."""
        if not self._joins_first and self._wake_at is not None:
            self.code.lines.insert(self._wake_at, self._wake_indent + _JOIN)
            self._joins_first = True

    def join(self) -> None:
        if self._pending:
            self.code.line(_JOIN)
            self._pending = False

    # -- launches --------------------------------------------------------------------------
    def launch(self, index: int, kernel, size: Size, args: list[LaunchArg], defer: bool = False) -> None:
        # ``defer``: a parallel launch is published and returns (run_parallel with ``keep``, the
        # tuple of its buffers, which the pool holds until the join); one on the calling
        # thread runs to its end.  Either way a deferred launch before this one is joined first:
        # run_parallel does it, a call on the calling thread is preceded by join_launch().
        c = self.code
        cfunc = c.bind(f"kernel_{index}", kernel.cfunc)
        argv = (ctypes.c_int64 * (2 * len(args)))()
        argv_name = c.bind(f"args_{index}", argv)
        fresh = [a for a in args if a.kind == OUT and a.scratch is None]
        if len(fresh) > 1:
            self._slab_outputs(index, size, fresh)
        lengths = []        # (argument slot, size expression) written at each replay
        for p, a in enumerate(args):
            if a.kind == OUT:
                if a.scratch is None:
                    if len(fresh) == 1:
                        c.line(f"buffer_{a.slot} = alloc({c.dtype_name(a.vt)}, launch_size)")
                else:
                    r = self._register(a.scratch)
                    c.line(f"if scratch_sizes[{r}] < launch_size: "
                           f"scratch[{r}] = alloc({c.dtype_name(a.vt)}, launch_size); scratch_sizes[{r}] = launch_size")
                    c.line(f"buffer_{a.slot} = scratch[{r}]")
                c.line(f"{argv_name}[{2 * p}] = buffer_{a.slot}.ptr")
                n_expr = "launch_size"
            elif a.fixed is not None:
                # the same buffer at every replay: its address and length, once, here
                argv[2 * p] = a.fixed.ptr
                argv[2 * p + 1] = len(a.fixed.array)
                continue
            else:
                c.line(f"{argv_name}[{2 * p}] = buffer_{a.slot}.ptr")
                n_expr = a.size.expr
            sz = size if a.kind == OUT else a.size
            if sz.is_const:         # a constant size: written once, here
                argv[2 * p + 1] = sz.value
            else:
                lengths.append((2 * p + 1, n_expr))
        self._write_lengths(index, argv_name, lengths)
        threshold = parallel_threshold(kernel.n_instrs)
        self._wake_before(size, threshold)
        private = c.bind(f"private_targets_{index}", kernel.private)
        if defer:
            self._join_first()
            # (the kernel and the captured buffers too: a launch an exception left pending may
            # outlive the recording that holds them)
            held = c.bind(f"held_{index}", (kernel, *[a.fixed for a in args if a.fixed is not None]))
            keep = "".join(f"buffer_{a.slot}, " for a in args if a.fixed is None) + held
            parallel = f"run_parallel({cfunc}, launch_size, {argv_name}, simd_width, True, {private}, ({keep}))"
        else:
            parallel = f"run_parallel({cfunc}, launch_size, {argv_name}, simd_width, True, {private})"
        raw = getattr(kernel, "raw", None)
        if raw is not None:
            # on the calling thread: the entry without argument types, the launch's end kept as a
            # c_int64 (written once for a constant size; serialized like args_<k> by the lock)
            kraw = c.bind(f"kraw_{index}", raw)
            end = ctypes.c_int64(size.value if size.is_const else 0)
            end_name = c.bind(f"end_{index}", end)
            c.bind("I64_ZERO", _I64_ZERO)
            call = f"{kraw}(I64_ZERO, {end_name}, {argv_name}, I64_ZERO)"
            if not size.is_const:
                call = f"{end_name}.value = launch_size; {call}"
        else:
            call = f"{cfunc}(0, launch_size, {argv_name}, 0)"
        if self._pending:
            call = f"join_launch(); {call}"
        self._pending = defer and not (size.is_const and size.value < threshold)
        if size.is_const:
            if size.value >= threshold:
                c.line(parallel)
            elif size.value > 0:
                c.line(call)
        else:
            c.line(f"if launch_size >= {threshold}: {parallel}")
            c.line(f"elif launch_size: {call}")

    def _write_lengths(self, index: int, argv_name: str, lengths: list) -> None:
        """The lengths of a launch's arguments that depend on the call's sizes.  The argument
        array is kept between replays, so with several of them they are written only when their
        values differ from the last replay's (a training loop replays one width: a tuple compare
        instead of one ``ctypes`` store per argument)."""
        c = self.code
        exprs = sorted({e for _slot, e in lengths})
        if len(lengths) < 4:
            for slot, e in lengths:
                c.line(f"{argv_name}[{slot}] = {e}")
            return
        last = c.bind(f"lengths_{index}", [None])
        c.line(f"lengths = ({', '.join(exprs)},)")
        c.line(f"if {last}[0] != lengths:")
        for slot, e in lengths:
            c.line(f"    {argv_name}[{slot}] = {e}")
        c.line(f"    {last}[0] = lengths")

    def _slab_outputs(self, index: int, size: Size, fresh: list) -> None:
        """One launch's new outputs: one slab reservation, pieces at computed offsets (several
        pooled buffers when they are too large for a slab)."""
        c = self.code
        offsets, total = self._slab_layout(size, [a.vt for a in fresh])
        dtypes = c.bind(f"output_dtypes_{index}", tuple(a.vt.np_dtype for a in fresh))
        c.line(f"reserved = reserve_slab({total})")
        c.line(f"if reserved is None: {''.join(f'buffer_{a.slot}, ' for a in fresh)}= alloc_many({dtypes}, launch_size)")
        c.line("else:")
        c.line("    slab, offset, address = reserved")
        for a, off in zip(fresh, offsets):
            c.line(f"    buffer_{a.slot} = new_buffer(SlabBuffer); buffer_{a.slot}.ptr = address + {off}; "
                   f"buffer_{a.slot}._v = (slab, offset + {off}, launch_size, {c.dtype_name(a.vt)})")

    def _slab_layout(self, size: Size, vts: list) -> tuple:
        """``(offsets, total)``: Python expressions of the byte offsets of buffers of ``size``
        elements of the types ``vts`` in one slab reservation (64-byte aligned), and of its size
        (writing the lines that compute ``bytes_<itemsize>`` for a size known at replay)."""
        c = self.code
        step = {}
        for vt in vts:
            isz = vt.np_dtype.itemsize
            if isz not in step:
                if size.is_const:
                    step[isz] = str((size.value * isz + 63) & ~63)
                else:
                    step[isz] = f"bytes_{isz}"
                    c.line(f"bytes_{isz} = (launch_size * {isz} + 63) & ~63")
        # an offset is a sum of (count * step) per item size: O(1) terms per buffer (a sum of
        # steps per buffer made the code quadratic in the number of outputs)
        offsets = []
        counts: dict = {}
        for vt in vts:
            offsets.append(_offset_expr(counts, step, size.is_const))
            isz = vt.np_dtype.itemsize
            counts[isz] = counts.get(isz, 0) + 1
        return offsets, _offset_expr(counts, step, size.is_const)

    def _register(self, r: int) -> int:
        while len(self.scratch) <= r:
            self.scratch.append(None)
            self.scratch_sizes.append(-1)
        return r

    # -- memory operations -----------------------------------------------------------------
    def reduce(self, index, op, vt, src, size, out) -> None:
        c = self.code
        dt = c.dtype_name(vt)
        if size.is_const and 0 < size.value < REDUCE_ROWS_FROM and op in ("add", "mul", "min", "max"):
            ufunc = c.bind(f"reduce_{op}", REDUCE_UFUNC[op])      # what _reduce_into does, inline
            # (alloc of one element always gives a slab piece: put_first writes it without a view)
            # A float input is reduced in its own type without ``dtype=`` (the same loop and bits;
            # ~0.5 us CPU less per call: NumPy resolves no dtype), an integer one needs it (NumPy
            # would widen int32 to int64).
            how = "" if vt.np_dtype.kind == "f" else f", dtype={dt}"
            c.line(f"buffer_{out} = alloc({dt}, 1); "
                   f"buffer_{out}.put_first({ufunc}.reduce(buffer_{src}.array[:{size.value}]{how}))")
        else:
            vt_name = c.constant("reduce_vt", vt)
            c.line(f"buffer_{out} = reduce_into(backend, alloc, {op!r}, {vt_name}, buffer_{src}, {size.expr})")

    def fill(self, index, vt, value, size, out) -> None:
        c = self.code
        dt = c.dtype_name(vt)
        v = c.constant("fill_value", value)
        c.line(f"buffer_{out} = alloc({dt}, {size.expr})")
        if _is_zero(value):     # slab pieces are zeroed; only a large (pooled) buffer is filled
            c.line(f"if type(buffer_{out}) is not SlabBuffer: buffer_{out}.array.fill({v})")
        else:
            c.line(f"buffer_{out}.array.fill({v})")

    def fill_many(self, fills: list) -> None:
        # Zero fills of one size are pieces of one slab reservation, as a launch's outputs
        # (slab pieces are zeroed: nothing to write); else one by one.
        sizes = {f[3].expr for f in fills}
        if len(fills) < 2 or len(sizes) != 1 or not all(_is_zero(f[2]) for f in fills):
            super().fill_many(fills)
            return
        c = self.code
        size = fills[0][3]
        c.line(f"launch_size = {size.expr}")
        offsets, total = self._slab_layout(size, [f[1] for f in fills])
        c.line(f"reserved = reserve_slab({total})")
        c.line("if reserved is None:")
        for _index, vt, _value, _size, out in fills:
            c.line(f"    buffer_{out} = alloc({c.dtype_name(vt)}, launch_size)")
            c.line(f"    if type(buffer_{out}) is not SlabBuffer: buffer_{out}.array.fill(0)")
        c.line("else:")
        c.line("    slab, offset, address = reserved")
        for (_index, vt, _value, _size, out), off in zip(fills, offsets):
            c.line(f"    buffer_{out} = new_buffer(SlabBuffer); buffer_{out}.ptr = address + {off}; "
                   f"buffer_{out}._v = (slab, offset + {off}, launch_size, {c.dtype_name(vt)})")

    def fill_value(self, index, vt, value_expr, out) -> None:
        c = self.code
        c.line(f"buffer_{out} = alloc({c.dtype_name(vt)}, 1); buffer_{out}.put_first({value_expr})")

    def upload(self, index, vt, array_name, out) -> None:
        self.code.line(f"buffer_{out} = backend.from_numpy({array_name})")

    def host_values(self, slot, size) -> str:
        return f"buffer_{slot}.array[:{size.expr}]"


def _offset_expr(counts: dict, step: dict, const: bool) -> str:
    """``count * step`` summed over item sizes (``"0"`` for none), as Python source; one
    number when the steps are (a launch of constant size)."""
    if const:
        return str(sum(n * int(step[isz]) for isz, n in counts.items()))
    terms = [step[isz] if n == 1 else f"{n} * {step[isz]}" for isz, n in counts.items()]
    return " + ".join(terms) or "0"


# ------------------------------------------------------------------------------ slab memory
SLAB_BYTES = 1 << 16
SMALL_BYTES = 1 << 12


class SlabBuffer:
    """A small replay output: a piece of a recording's slab (the buffer interface of
    :class:`~frostjit.backend.llvm.memory.HostBuffer`).

    Like a ``HostBuffer`` it has ``ptr``, ``array`` and a length; the NumPy view ``array`` is
    made when first read (most outputs are only passed to later kernels by address), and there
    is no finalizer (the slab is freed with its last user).
    """

    __slots__ = ("ptr", "_v", "__weakref__")     # _v: (slab, byte offset, n, dtype), then the view

    @property
    def array(self):
        v = self._v
        if type(v) is tuple:
            slab, off, n, dt = v
            i = off // dt.itemsize
            v = self._v = slab[dt][i:i + n]
        return v

    def __len__(self) -> int:
        v = self._v
        return v[2] if type(v) is tuple else v.shape[0]

    def put_first(self, value) -> None:
        """Store ``value`` as element 0 (a reduction's result) without making the view ``array``
        (0.5 us less per size-1 result than ``array[0] = value``, loaded AVX2)."""
        v = self._v
        if type(v) is tuple:
            slab, off, _n, dt = v
            slab[dt][off // dt.itemsize] = value
        else:
            v[0] = value

    def copy_out(self, size: int):
        """A NumPy copy of the first ``size`` elements, without making (and keeping) the view
        ``array`` when there is none yet: a replay's output read once (a loss read back each
        training step) costs one slice and one copy (1.5-1.6 us CPU against 2.6, loaded AVX2)."""
        v = self._v
        if type(v) is tuple:
            slab, off, _n, dt = v
            i = off // dt.itemsize
            return slab[dt][i:i + size].copy()
        return v[:size].copy()


class _Slab(dict):
    """A slab's typed NumPy views, by dtype (made when first needed)."""

    __slots__ = ("raw",)

    def __missing__(self, dt):
        v = self[dt] = self.raw.view(dt)
        return v


def _new_slab(st) -> None:
    slab = _Slab()
    slab.raw = np.zeros(SLAB_BYTES, np.uint8)      # zeroed: a fresh piece reads as zeros
    # Both stored together, after the address is known: an exception (Ctrl-C) between two
    # stores would pair the new slab with the old slab's address (memory freed with it).
    st[0], st[2] = slab, slab.raw.ctypes.data


def _is_zero(value) -> bool:
    """A fill value whose bytes are all zero (0, False, +0.0; not -0.0)."""
    return value == 0 and math.copysign(1.0, value) > 0


def _slab_allocator():
    """An allocator for a recording's small outputs: pieces of a 64 KiB slab, bump-allocated.

    ``np.empty`` plus a ``ctypes`` address lookup costs about 2 us; a slab piece with a computed
    address and no NumPy view until one is needed costs a tenth of that.  A slab is freed once no
    output array uses it any more.  Replays of one recording are serialized (the recording's
    lock), so no locking here.  Returns ``(alloc, alloc_many, reserve_slab)``.
    """
    # slab, offset, address; the offset starts past the end, so even an empty first piece
    # (a replay at width 0) makes the first slab
    st = [None, SLAB_BYTES + 1, 0]
    new = object.__new__
    SB = SlabBuffer

    def alloc(dtype, n):
        nb = n * dtype.itemsize
        if nb > SMALL_BYTES:
            return HostBuffer.allocate(dtype, n)
        off = st[1]
        if off + nb > SLAB_BYTES:
            _new_slab(st)
            off = 0
        st[1] = (off + nb + 63) & ~63
        b = new(SB)
        b.ptr = st[2] + off
        b._v = (st[0], off, n, dtype)
        return b

    def alloc_many(dtypes, n):
        """Buffers of ``n`` elements of each dtype (one launch's outputs)."""
        total = 0
        for dt in dtypes:
            total += (n * dt.itemsize + 63) & ~63
        if total > SMALL_BYTES:
            return [alloc(dt, n) for dt in dtypes]
        off = st[1]
        if off + total > SLAB_BYTES:
            _new_slab(st)
            off = 0
        st[1] = off + total
        slab = st[0]
        base = st[2]
        out = []
        for dt in dtypes:
            b = new(SB)
            b.ptr = base + off
            b._v = (slab, off, n, dt)
            out.append(b)
            off += (n * dt.itemsize + 63) & ~63
        return out

    def reserve_slab(nbytes):
        """``(slab, offset, address)`` of ``nbytes`` of slab (64-byte aligned), or ``None`` when
        that is too large for a slab piece."""
        if nbytes > SMALL_BYTES:
            return None
        off = st[1]
        if off + nbytes > SLAB_BYTES:
            _new_slab(st)
            off = 0
        st[1] = off + nbytes
        return st[0], off, st[2] + off
    return alloc, alloc_many, reserve_slab


def _reduce_into(backend, alloc, op, vt, src, n):
    """The LLVM backend's ``reduce`` into a slab piece (no NumPy upload)."""
    value = backend.reduce_value(op, vt, src, n)
    out = alloc(result_dtype(op, vt), 1)
    out.put_first(value)
    return out
