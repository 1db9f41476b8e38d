"""A finished recording and its replay.

A :class:`Recording` holds the operations the recorder wrote down (kernel launches and memory
operations over *slots*), the guards, and how to rebuild the function's outputs and write back
its mutated inputs.  At construction it generates one Python function, the *driver*, that
replays everything in straight-line code: sizes are Python expressions over the size-class
symbols (``s0``, ``s1``) and ``compress`` counts (``c0``), kernel argument arrays are
preallocated ``ctypes`` arrays whose slots the driver patches, and each launch is one foreign
call (or one thread-pool dispatch when it is large).  No trace is built and no kernel compiled.

Operations (``Op.kind`` and ``Op.args``; every last argument is the output slot):

========== =====================================================
launch     kernel, launch size, [(kind, vt, slot)]
reduce     op, vt, input slot, input size, out
prefix_sum exclusive, vt, input slot, size, out
compress   input slot, input size, count index, out
copy       vt, input slot, size, out
fill       vt, value, size, out
symfill    vt, width-derived value, out          (``x + fj.width(x)``, ``fj.mean``)
upload     vt, NumPy snapshot, out               (``Float([1, 2])`` inside the function)
upload_input vt, NumPy input index, out          (a NumPy argument, re-read each call)
bounds     who, index, active, their sizes, target size  (``JitFlag.Debug``: no output)
========== =====================================================

With ``JitFlag.KernelHistory`` set (JIT flags are part of the key) the replay adds an entry to
``fj.kernel_history()`` for every launch and memory operation, as the plain call does.
"""
from __future__ import annotations

import ctypes
import itertools
import math
import threading
import time

import numpy as np

from ..backend.llvm.memory import HostBuffer, pool
from ..backend.llvm.reduction import REDUCE_UFUNC, reduce_identity
from ..schedule.kernel import OUT
from ..schedule.evaluate import KernelType, record_operation
from ..functions.memory import check_bounds
from ..trace.node import Node
from ..trace.ops import normalize_literal
from ..trace.state import state, JitFlag
from .values import same_value
from .outputs import generate_finish

_ids = itertools.count()


class ReplayFailed(Exception):
    """A replay operation raised (e.g. a size expression): the call is traced again."""

    def __init__(self, exc: BaseException):
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.exc = exc


class GuardFailed(Exception):
    """A recorded guard does not hold for this call: it must be traced again."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class Recording:
    """One recorded configuration of a frozen function (see module docstring)."""

    def __init__(self, rec, n_classes: int, node_table: list, out_desc, actions: list, sym_outputs: list,
                 key, paths, dispatch_deps):
        from ..backend import current_backend
        self.backend = current_backend()
        self.key = key
        self.paths = paths
        self.ops = rec.ops
        self.guards = rec.guards
        self.captured = rec.captured
        self.out_desc = out_desc
        self.actions = actions
        self.n_kernels = sum(1 for o in rec.ops if o.kind == "launch")
        self.dispatch_deps = dispatch_deps
        self.subscriptions = []
        self.valid = True
        self.source = ""
        self.pins = dict(rec.pins)      # size class -> exact size (the cache indexes recordings by them)
        self.lock = threading.Lock()
        # run(flat, capn) -> the outputs: the whole replay (launches, write-backs, outputs)
        self.run = self._generate(rec, n_classes, node_table, sym_outputs)

    # -- code generation ----------------------------------------------------------------
    def _generate(self, rec, n_classes, node_table, sym_outputs):
        be = self.backend
        ns = {"Node": Node, "GuardFailed": GuardFailed, "be": be, "st": state,
              "run": be.threads.run, "W": be.width, "reduce": _reduce, "norm": normalize_literal,
              "upload_input": _upload_input, "hist_op": _history_op, "PC": time.perf_counter,
              "bounds": _bounds, "OutOfBounds": OutOfBounds}
        history = bool(state.flags & JitFlag.KernelHistory)     # (JIT flags are part of the key)
        ns["alloc"], ns["allocn"], ns["reserve"] = _slab_allocator()
        ns["SB"] = SlabBuffer
        ns["NEWB"] = object.__new__
        ns["SAME"] = same_value
        ns.update(rec.consts)           # the named constants of the size expressions and guards
        # The launches share this recording's argument arrays, scratch buffers and slab: one
        # thread at a time (the write-backs and outputs after them run unlocked).
        ns["LOCK"] = self.lock
        L = ["def replay(flat, capn):", "    inn = flat.nodes; S = flat.sizes; npin = flat.numpy", "    with LOCK:",
             "      try:", "            pass"]
        I = "            "
        if n_classes:
            L.append(I + "".join(f"s{i}, " for i in range(n_classes)) + "= S")
        n_params = getattr(rec, "n_params", 0)      # Python numbers as parameters (freeze/frozen.py)
        if n_params:
            L.append(I + "".join(f"p{i}, " for i in range(n_params)) + "= flat.params")
        used = set()            # slots some operation reads (unused inputs are not bound)
        for op in rec.ops:
            a = op.args
            if op.kind == "launch":
                used.update(slot for _, _, slot in a[2])
            elif op.kind in ("reduce", "prefix_sum"):
                used.add(a[2])
            elif op.kind == "compress":
                used.add(a[0])
            elif op.kind == "copy":
                used.add(a[1])
            elif op.kind == "bounds":
                used.update(x[1] for x in a[1:3] if x[0] == "slot")
        for slot, kind in enumerate(rec.slot_kind):
            if slot not in used:
                continue
            if kind[0] == "in":
                L.append(f"{I}b{slot} = inn[{kind[1]}].value")
            elif kind[0] == "cap":
                L.append(f"{I}b{slot} = capn[{kind[1]}].value")
        guards_at: dict = {}
        for g, (expr, ready, why) in enumerate(rec.guards):
            guards_at.setdefault(ready, []).append((g, expr, why))
            ns[f"G{g}"] = why

        def emit_guards(i):
            for g, expr, why in guards_at.get(i, ()):
                L.append(f"{I}if not ({expr}): raise GuardFailed(G{g} + ': ' + {expr!r})")

        emit_guards(-1)
        size = rec.slot_size
        scratch = _plan_scratch(rec.ops, node_table)
        n_regs = max(scratch.values(), default=-1) + 1
        ns["R"] = [None] * n_regs       # scratch buffers, kept between replays (grow only)
        ns["RN"] = [-1] * n_regs
        from ..backend.llvm.backend import PARALLEL_MIN_SIZE, PARALLEL_MIN_WORK
        for i, op in enumerate(rec.ops):
            a = op.args
            k = op.kind
            if k == "launch":
                kernel, launch, params = a
                ns[f"K{i}"] = kernel.cfunc
                ns[f"H{i}"] = kernel
                args = (ctypes.c_int64 * (2 * len(params)))()
                ns[f"A{i}"] = args
                L.append(f"{I}n = {launch.expr}")
                fresh = [(p, slot, vt) for p, (pkind, vt, slot) in enumerate(params)
                         if pkind == OUT and slot not in scratch]
                if len(fresh) > 1:
                    # The outputs of one launch: one slab reservation, pieces at computed offsets
                    # (several pooled buffers when they are too large for the slab).
                    ns[f"DS{i}"] = tuple(vt.np_dtype for _, _, vt in fresh)
                    step = {}
                    for _, _, vt in fresh:
                        isz = vt.np_dtype.itemsize
                        if isz not in step:
                            step[isz] = (str((launch.value * isz + 63) & ~63) if launch.is_const
                                         else f"z{isz}")
                            if not launch.is_const:
                                L.append(f"{I}z{isz} = (n * {isz} + 63) & ~63")
                    offs = []
                    acc = []
                    for _, _, vt in fresh:
                        offs.append(" + ".join(acc) or "0")
                        acc.append(step[vt.np_dtype.itemsize])
                    total = " + ".join(acc)
                    if launch.is_const:
                        total = str(eval(total))
                        offs = [str(eval(o)) for o in offs]
                    L.append(f"{I}r = reserve({total})")
                    L.append(f"{I}if r is None: {''.join(f'b{slot}, ' for _, slot, _ in fresh)}= allocn(DS{i}, n)")
                    L.append(f"{I}else:")
                    L.append(f"{I}    sl, o, q = r")
                    for (_, slot, vt), off in zip(fresh, offs):
                        ns[f"D{slot}"] = vt.np_dtype
                        L.append(f"{I}    b{slot} = NEWB(SB); b{slot}.ptr = q + {off}; "
                                 f"b{slot}._v = (sl, o + {off}, n, D{slot})")
                for p, (pkind, vt, slot) in enumerate(params):
                    if pkind == OUT:
                        ns[f"D{slot}"] = vt.np_dtype
                        r = scratch.get(slot)
                        if r is None:
                            if len(fresh) == 1:
                                L.append(f"{I}b{slot} = alloc(D{slot}, n)")
                        else:   # an intermediate: reuse a scratch buffer
                            L.append(f"{I}if RN[{r}] < n: R[{r}] = alloc(D{slot}, n); RN[{r}] = n")
                            L.append(f"{I}b{slot} = R[{r}]")
                        L.append(f"{I}A{i}[{2 * p}] = b{slot}.ptr")
                        n_expr = None       # the launch size
                    elif rec.slot_kind[slot][0] == "cap":
                        # captured buffers keep their address: patched once, here
                        args[2 * p] = rec.buffers[slot].ptr
                        args[2 * p + 1] = len(rec.buffers[slot].array)
                        continue
                    else:
                        L.append(f"{I}A{i}[{2 * p}] = b{slot}.ptr")
                        n_expr = size[slot]
                    sz = launch if n_expr is None else n_expr
                    if sz.is_const:     # a constant size: patched once, here
                        args[2 * p + 1] = sz.value
                    else:
                        L.append(f"{I}A{i}[{2 * p + 1}] = {'n' if n_expr is None else n_expr.expr}")
                thr = max(PARALLEL_MIN_SIZE, -(-PARALLEL_MIN_WORK // max(kernel.n_instrs, 1)))
                if history:
                    L.append(f"{I}t0 = PC()")
                if launch.is_const:
                    n0 = launch.value
                    if n0 >= thr:
                        L.append(f"{I}run(K{i}, n, A{i}, W, True, H{i}.private)")
                    elif n0 > 0:
                        L.append(f"{I}K{i}(0, n, A{i}, 0)")
                else:
                    L.append(f"{I}if n >= {thr}: run(K{i}, n, A{i}, W, True, H{i}.private)")
                    L.append(f"{I}elif n: K{i}(0, n, A{i}, 0)")
                if history:     # the entry of schedule.evaluate.run_group, from a template
                    ns[f"HT{i}"] = _history_template(kernel)
                    L.append(f"{I}h = HT{i}.copy(); h['size'] = n; h['execution_time'] = (PC() - t0) * 1e3; "
                             f"st.history.append(h)")
            elif k == "reduce":
                rop, vt, src, n, out = a
                ns[f"V{i}"] = vt
                ns[f"D{out}"] = vt.np_dtype
                if n.is_const and n.value > 0 and rop in ("add", "mul", "min", "max"):
                    ns[f"UF{i}"] = REDUCE_UFUNC[rop]      # what _reduce does, inline
                    L.append(f"{I}b{out} = alloc(D{out}, 1); "
                             f"b{out}.array[0] = UF{i}.reduce(b{src}.array[:{n.value}], dtype=D{out})")
                else:
                    L.append(f"{I}b{out} = reduce(alloc, {rop!r}, D{out}, b{src}, {n.expr})")
            elif k == "prefix_sum":
                excl, vt, src, n, out = a
                ns[f"V{i}"] = vt
                L.append(f"{I}b{out} = be.prefix_sum(V{i}, b{src}, {n.expr}, {excl})")
            elif k == "compress":
                src, n, c, out = a
                L.append(f"{I}b{out}, c{c} = be.compress(b{src}, {n.expr})")
            elif k == "copy":
                vt, src, n, out = a
                ns[f"V{i}"] = vt
                L.append(f"{I}b{out} = be.copy(V{i}, b{src}, {n.expr})")
            elif k == "fill":
                vt, value, n, out = a
                ns[f"V{i}"] = vt
                ns[f"F{i}"] = value
                ns[f"D{out}"] = vt.np_dtype
                if _is_zero(value):     # slab pieces are zeroed; only a large (pooled) buffer is filled
                    L.append(f"{I}b{out} = alloc(D{out}, {n.expr})")
                    L.append(f"{I}if type(b{out}) is not SB: b{out}.array.fill(F{i})")
                else:
                    L.append(f"{I}b{out} = alloc(D{out}, {n.expr}); b{out}.array.fill(F{i})")
            elif k == "symfill":
                vt, value, out = a
                ns[f"V{i}"] = vt
                ns[f"D{out}"] = vt.np_dtype
                L.append(f"{I}b{out} = alloc(D{out}, 1); b{out}.array[0] = norm(V{i}, {value.expr})")
            elif k == "upload":
                vt, snapshot, out = a
                ns[f"U{i}"] = snapshot
                L.append(f"{I}b{out} = be.from_numpy(U{i})")
            elif k == "upload_input":
                vt, j, out = a
                ns[f"V{i}"] = vt
                L.append(f"{I}b{out} = upload_input(npin[{j}], V{i})")
            elif k == "bounds":
                who, idx, act, n_idx, n_act, target_size = a

                def values(spec, n, name):
                    if spec[0] == "slot":
                        return f"b{spec[1]}.array[:{n.expr}]"
                    ns[name] = np.full(1, spec[1])        # a literal: one value for every lane
                    return name
                L.append(f"{I}bounds({who!r}, {values(idx, n_idx, f'BI{i}')}, {values(act, n_act, f'BA{i}')}, "
                         f"{target_size.expr})")
            else:  # pragma: no cover
                raise AssertionError(k)
            if history and k in _HISTORY_KINDS:       # as schedule.memops reports them
                n_in = a[3] if k in ("reduce", "prefix_sum") else a[1] if k == "compress" else a[2]
                param = repr(a[0]) if k == "reduce" else repr(a[0]) if k == "prefix_sum" else "None"
                L.append(f"{I}hist_op({k!r}, {n_in.expr}, {param})")
            emit_guards(i)
        # Output nodes: fresh data nodes around this replay's buffers.
        outs = []
        for j, entry in enumerate(node_table):
            if entry[0] == "buf":
                _, slot, vt, n = entry
                ns[f"T{j}"] = vt
                outs.append(f'Node("data", T{j}, {n.expr}, (), b{slot})')
            elif entry[0] == "lit":
                _, vt, value, n = entry
                ns[f"T{j}"] = vt
                ns[f"L{j}"] = value
                outs.append(f'Node("literal", T{j}, {n.expr}, (), L{j})')
            elif entry[0] == "in":
                outs.append(f"inn[{entry[1]}]")
            else:  # captured
                outs.append(f"capn[{entry[1]}]")
        for j, o in enumerate(outs):
            L.append(f"{I}N{j} = {o}")
        for j, sym in enumerate(sym_outputs):
            L.append(f"{I}Y{j} = {sym.expr}")
        L.append("      except GuardFailed:")
        L.append("        raise")
        L.append("      except OutOfBounds as e:")
        L.append("        raise IndexError(*e.args) from None     # (JitFlag.Debug, as in a plain call)")
        L.append("      except Exception as e:")
        L.append("        raise ReplayFailed(e) from e")
        # Write-backs and outputs (errors here are the function's, not the replay's).
        fin, out = generate_finish(self.actions, self.out_desc, ns)
        L.append("    leaves = flat.leaves; conts = flat.containers")
        L.extend("    " + x for x in fin)
        L.append(f"    return {out}")
        ns["ReplayFailed"] = ReplayFailed
        self.source = "\n".join(L)
        code = compile(self.source, f"<frostjit.freeze replay {next(_ids)}>", "exec")
        exec(code, ns)
        return ns["replay"]

    # -- replay --------------------------------------------------------------------------
    def captured_nodes(self):
        """The captured nodes, or ``None`` when one of them is gone (the recording is stale)."""
        out = []
        for wr in self.captured:
            n = wr()
            if n is None or n.op != "data":
                return None
            out.append(n)
        return out

    def close(self) -> None:
        """Drop dispatch subscriptions (the recording is no longer cached)."""
        self.valid = False
        for s in self.subscriptions:
            try:
                s.close()
            except Exception:  # pragma: no cover
                pass
        self.subscriptions = []


# -------------------------------------------------------------------------------- helpers
def _plan_scratch(ops, node_table) -> dict:
    """Kernel outputs that never leave the replay share a few scratch buffers (by liveness).

    Returns ``{slot: register}``.  A register freed after its slot's last use serves a later
    kernel output of the same dtype; registers persist between replays and only grow, so a
    replay of a chain of kernels allocates nothing but its outputs.
    """
    escaping = {e[1] for e in node_table if e[0] == "buf"}
    last_use: dict = {}
    banned = set(escaping)
    for i, op in enumerate(ops):
        a = op.args
        if op.kind == "launch":
            for pkind, vt, slot in a[2]:
                if pkind != OUT:
                    last_use[slot] = i
        elif op.kind in ("reduce", "prefix_sum"):
            last_use[a[2]] = i
        elif op.kind == "compress":
            last_use[a[0]] = i
        elif op.kind == "copy":
            last_use[a[1]] = i
            banned.add(a[1])        # copy reads the whole buffer: it must be exact-size
        elif op.kind == "bounds":
            for x in a[1:3]:
                if x[0] == "slot":
                    last_use[x[1]] = i
    regs: dict = {}
    free: dict = {}
    n = 0
    for i, op in enumerate(ops):
        if op.kind == "launch":
            for pkind, vt, slot in op.args[2]:
                if pkind == OUT and slot not in banned:
                    pool_ = free.setdefault(vt.np_dtype, [])
                    if pool_:
                        regs[slot] = pool_.pop()
                    else:
                        regs[slot] = n
                        n += 1
                    last_use.setdefault(slot, i)
            for pkind, vt, slot in op.args[2]:
                if slot in regs and last_use.get(slot) == i:
                    free.setdefault(vt.np_dtype, []).append(regs[slot])
        else:
            for slot, li in last_use.items():
                if li == i and slot in regs:
                    dt = next(vt.np_dtype for o in ops for pk, vt, s in (o.args[2] if o.kind == "launch" else ())
                              if s == slot)
                    free.setdefault(dt, []).append(regs[slot])
    return regs


def _alloc(dtype, n, HostBuffer=HostBuffer, acquire=pool.acquire):
    return HostBuffer(acquire(dtype, n))


SLAB_BYTES = 1 << 16
SMALL_BYTES = 1 << 12


class SlabBuffer:
    """A small replay output: a piece of a recording's slab (the backend buffer interface).

    Like :class:`~frostjit.backend.llvm.memory.HostBuffer` it has ``ptr``, ``array`` and a
    length; the NumPy view ``array`` is made when first read (most outputs are only passed to
    later kernels by address), and there is no finalizer (the slab is freed with its last user).
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
    try:
        return value == 0 and math.copysign(1.0, value) > 0
    except TypeError:       # pragma: no cover
        return False


def _slab_allocator():
    """An allocator for a recording's small outputs: pieces of a 64 KiB slab, bump-allocated.

    ``np.empty`` plus a ``ctypes`` address lookup costs about 2 us; a slab piece with a computed
    address and no NumPy view until one is needed costs a tenth of that.  A slab is freed once no
    output array uses it any more.  Replays of one recording are serialized (the frozen
    function's lock), so no locking here.
    """
    # slab, offset, address; the offset starts past the end, so even an empty first piece
    # (a replay at width 0) makes the first slab
    st = [None, SLAB_BYTES + 1, 0]
    new = object.__new__
    SB = SlabBuffer

    def salloc(dtype, n):
        nb = n * dtype.itemsize
        if nb > SMALL_BYTES:
            return HostBuffer(pool.acquire(dtype, n))
        off = st[1]
        if off + nb > SLAB_BYTES:
            _new_slab(st)
            off = 0
        st[1] = (off + nb + 63) & ~63
        b = new(SB)
        b.ptr = st[2] + off
        b._v = (st[0], off, n, dtype)
        return b

    def allocn(dtypes, n):
        """Buffers of ``n`` elements of each dtype (one launch's outputs)."""
        total = 0
        for dt in dtypes:
            total += (n * dt.itemsize + 63) & ~63
        if total > SMALL_BYTES:
            return [salloc(dt, n) for dt in dtypes]
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

    def reserve(nbytes):
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
    return salloc, allocn, reserve


def _reduce(alloc, op, dt, src, n):
    """The LLVM backend's ``reduce`` into a slab piece (no NumPy upload)."""
    a = src.array[:n]
    if n == 0:
        value = np.array([reduce_identity(op, dt)]).astype(dt)[0]
    elif op in ("and", "or"):
        value = REDUCE_UFUNC[op].reduce(a)
    else:
        value = REDUCE_UFUNC[op].reduce(a, dtype=dt)
    out = alloc(dt, 1)
    out.array[0] = value
    return out


def _upload_input(a, vt):
    from ..backend import current_backend
    if a.ndim == 0:
        a = a.reshape(1)
    if a.dtype != vt.np_dtype:
        a = a.astype(vt.np_dtype)
    return current_backend().from_numpy(np.ascontiguousarray(a))


_HISTORY_KINDS = ("reduce", "prefix_sum", "compress", "copy")


def _history_template(kernel) -> dict:
    """A replayed launch in ``fj.kernel_history()``: the entry a plain call's launch makes
    (schedule.evaluate.run_group) when the kernel is in the memory cache."""
    return {"type": KernelType.JIT, "backend": "LLVM", "size": 0, "hash": kernel.hash, "ir": kernel.ir,
            "cache_hit": True, "cache_disk": False, "operation_count": kernel.n_instrs,
            "codegen_time": 0.0, "backend_time": 0.0, "execution_time": 0.0}


def _history_op(kind, size, param):
    """A replayed memory operation in ``fj.kernel_history()`` (as schedule.memops reports it)."""
    record_operation({"type": kind, "size": size, "operation": param})


class OutOfBounds(Exception):
    """A Debug-mode bounds check failed during a replay (re-raised as IndexError)."""


def _bounds(who, idx, active, size):
    try:
        check_bounds(who, idx, active, size)
    except IndexError as e:
        raise OutOfBounds(*e.args) from None
