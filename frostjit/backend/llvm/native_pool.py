"""The native part of the thread pool: worker loops and the launch, as LLVM IR run without the GIL.

Python worker threads that wait on a queue and then need the GIL to claim a block start a
~1 ms launch late or not at all: the woken worker must win the GIL while the calling thread
holds it between its own blocks (measured: in 3 launches of 4 of a 1e6-element kernel the
worker ran no block).  Here each worker is a Python thread that enters :func:`worker` once,
through ctypes (which releases the GIL), and stays in native code until the pool closes; a
launch is one ctypes call on the calling thread.  Nothing on the launch path needs the GIL.

Protocol (all counters live in one zeroed int64 array, :class:`NativePool`, hot words on
separate cache lines):

* ``gen`` (32 bits) is odd while a launch is open.  The caller writes the job (kernel address,
  size, block, block count, per-thread argument arrays, ``shared``, how many workers take
  part), resets ``next``/``completed``, makes ``gen`` odd and wakes sleeping workers; then it
  claims blocks itself.
* An idle worker spins on ``gen`` (a ``pause`` per round; every ~50 us, if it runs on the CPU
  where the caller last launched or woke the pool (``caller_cpu``), a ``sched_yield`` so that
  the caller runs, and a *nudge*, below) until a deadline read from the monotonic clock
  (``clock_gettime``, every 32 rounds): ``idle_ns`` after the end of the last launch it saw,
  or the ``awake_until`` that :meth:`NativePoolCode.wake` set, whichever is later.  Then it
  sleeps on the futex word ``ring``, counted in ``sleepers``; a launch, a
  wake-up and the stop bump ``ring`` and make the system call only when somebody sleeps.  (A
  worker that goes to sleep increments ``sleepers``, reads ``ring``, then checks ``gen``,
  ``stop`` and ``awake_until``; the waker writes those, then reads ``sleepers``: sequentially
  consistent on both sides, so either the worker sees the news or the waker sees the sleeper,
  and a bump between the worker's read and its futex call makes the call return at once.)
* On an odd ``gen`` a worker enters (``active += 1``) and re-reads ``gen``: if the launch
  closed meanwhile it leaves without touching the job (sequentially consistent increment and
  load on both sides, so the caller's ``active == 0`` check and the worker's ``gen`` check
  cannot both miss).
* Blocks are claimed with one atomic add on ``next``; each finished block adds one to
  ``completed``.  The caller waits (spinning for at most ``wait_ns``, then on the futex word
  ``completed``) until every block is complete, closes the launch (``gen`` even again) and
  waits until ``active`` is zero: afterwards no worker reads the job, so the next launch may
  overwrite it and the caller may free the buffers.
* A launch is two halves, ``publish`` (write the job, open ``gen``, wake the workers) and
  ``join`` (the caller's blocks, the wait, the close), one native call each or both in one
  (``launch``).  Between the two the calling thread may run Python while the workers run
  blocks (:meth:`.threads.ThreadPool.run` with ``defer``); the job slot is taken until the join,
  and the argument arrays and buffers must stay as they are until then.  A join when no
  launch is open (``gen`` even) does nothing, so a second one is harmless.

Waking a sleeping worker costs a few microseconds on an idle core (the futex call, the
scheduler), far more when the core is busy with another process, and a worker that joins a
0.5 ms launch late does less of it.  Hence the idle spin after each launch (launches back to
back find the workers spinning) and :meth:`NativePoolCode.wake`, which an evaluation calls
when it starts, before the kernel lookup, argument binding and allocation that precede a large
launch, so that the workers are awake by the time the launch is published.  The spin is bounded
in time, not in rounds (a ``pause`` takes 10 to 140 cycles depending on the CPU): an idle pool
burns at most ``idle_ns`` (1 ms) of each worker's core after the last launch or wake-up.

**Sharing a CPU with the caller.**  A worker is placed on a CPU when its thread starts or a
futex wake-up ends its sleep; Linux may put it on the caller's CPU (the other cores busy with
other processes, or a wake-up pulled toward its waker), and a thread that spins is moved only
by the periodic load balancer, after tens of milliseconds.  There the worker runs no block the
caller does not wait for (measured on a 2-core VM, kernel 6.18: 0.3-1.5 of a 1e6-lane launch's
8 blocks for ~50 launches, then 4 once the balancer had moved it).  So a worker that finds itself
on ``caller_cpu`` (``sched_getcpu``, through libc) at a yield point or when it joins a launch
moves off it: ``sched_setaffinity`` to its own current mask (``sched_getaffinity``) without
that CPU, which migrates it at once, then that mask again (never a CPU it was not allowed, and
nothing when the caller's CPU is its only one); at most once per
``NUDGE_EVERY_NS`` (1 ms) per worker, counted in its participant line.  A worker on a CPU of its
own does not yield: yielding there only gives the core to other processes, and Linux's EEVDF
scheduler pushes a yielding thread's deadline back each time, so that a worker yielding every
50 us lost its core to any other runnable thread when the next launch came (0.1-0.3 ms of CPU
per 1 ms launch).  ``nudge`` (``FROSTJIT_POOL_NUDGE=0``) turns both off: yield every ~50 us
wherever the worker runs, never touch its affinity.

Correctness never depends on a worker showing up: the caller runs every block no one else
claims.  Only Linux on x86-64 and AArch64 (the futex system call through libc's ``syscall``);
elsewhere :func:`available` is false and the pool uses Python workers.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import sys

import llvmlite.binding as llvm
import numpy as np

# futex(2) system call numbers and operations
_SYS_FUTEX = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98}
_SYS_SCHED_YIELD = {"x86_64": 24, "amd64": 24, "aarch64": 124, "arm64": 124}
_SYS_SCHED_SETAFFINITY = {"x86_64": 203, "amd64": 203, "aarch64": 122, "arm64": 122}
_SYS_SCHED_GETAFFINITY = {"x86_64": 204, "amd64": 204, "aarch64": 123, "arm64": 123}
FUTEX_WAIT_PRIVATE = 128
FUTEX_WAKE_PRIVATE = 129

CLOCK_MONOTONIC = 1             # (the same number on every Linux architecture)

# Word offsets (int64 slots) in the state array; hot words 64 bytes apart.
GEN, CALLER_CPU, SLEEPERS, ACTIVE, NEXT, COMPLETED, CALLER_WAITING = 0, 1, 8, 16, 24, 32, 33
FN, SIZE, BLOCK, N_BLOCKS, ARGSETS, SHARED, N_WORKERS, STOP = 40, 41, 42, 43, 44, 45, 46, 47
SYSCALL, CLOCK, NR_FUTEX, NR_YIELD, IDLE_NS, WAIT_NS = 48, 49, 50, 51, 52, 53
RING, GETCPU, NR_SETAFFINITY, NR_GETAFFINITY, N_PARTICIPANTS, NUDGE = 56, 57, 58, 59, 60, 61
AWAKE_UNTIL = 64
STATE_WORDS = 72
# Then one cache line per participant of a launch (0: the calling thread, 1 + k: worker k),
# written only by its own thread: BLOCKS_RUN (+0) counts the blocks it ran over the pool's life
# (how launches were shared: what tests and benchmarks read), NUDGES (+1) its moves off the
# caller's CPU, LAST_NUDGE (+2) the clock at the last one.
BLOCKS_RUN = STATE_WORDS
NUDGES, LAST_NUDGE = 1, 2
PARTICIPANT_WORDS = 8
MASK_WORDS = 16                 # (a cpu_set_t: 1024 CPUs; a thread on a higher one never moves)
# A worker moves off the caller's CPU at most once per this many nanoseconds.
NUDGE_EVERY_NS = 1_000_000

# How long an idle worker spins after the last launch it saw (or a wake-up) before it sleeps:
# long enough that the launches of a loop that traces or replays and launches (tens to hundreds
# of microseconds apart) find it spinning, short enough that an idle pool leaves a shared
# machine's cores alone within a millisecond.
DEFAULT_IDLE_NS = 1_000_000
# How long the calling thread spins waiting for the workers' last blocks before it sleeps (a
# sleeping caller is woken by the worker that completes the last block, ~5-50 us later).
DEFAULT_WAIT_NS = 200_000
# Clock reads in a spin loop: one every this many pause rounds (a read costs ~20 ns).
_CLOCK_EVERY = 32
# An idle worker yields its core (sched_yield) every this many spin rounds (~50 us).
_YIELD_EVERY = 2048
# Rounds the caller spins on the workers leaving a closed launch before it yields its core.
_ACTIVE_SPIN = 4096

WORKER_SYMBOL = "fj_pool_worker"
LAUNCH_SYMBOL = "fj_pool_launch"
PUBLISH_SYMBOL = "fj_pool_publish"
JOIN_SYMBOL = "fj_pool_join"
WAKE_SYMBOL = "fj_pool_wake"
STOP_SYMBOL = "fj_pool_stop"

WORKER_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)
LAUNCH_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
WAKE_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)
JOIN_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
STOP_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def available() -> bool:
    """Whether this platform runs the native pool (Linux on x86-64 or AArch64)."""
    return sys.platform.startswith("linux") and platform.machine().lower() in _SYS_FUTEX


def _pause(triple: str) -> tuple[str, str]:
    """(declaration, call) of the CPU's spin-wait hint, or nothing."""
    if triple.startswith(("x86_64", "i686", "i386")):
        return "declare void @llvm.x86.sse2.pause()", "call void @llvm.x86.sse2.pause()"
    if triple.startswith(("aarch64", "arm64")):
        return "declare void @llvm.aarch64.hint(i32)", "call void @llvm.aarch64.hint(i32 1)"
    return "", ""


def pool_ir(triple: str) -> str:
    """The IR of the worker loop, the launch, the wake-up and the stop (see the module docstring)."""
    decl, pause = _pause(triple)

    def slot(name, word):
        return f"  %{name} = getelementptr i64, ptr %s, i64 {word}"

    # Shared helpers: the slots every function uses, and the futex call.
    slots = "\n".join([slot("gen.p", GEN), slot("sleepers.p", SLEEPERS), slot("active.p", ACTIVE),
                       slot("next.p", NEXT), slot("completed.p", COMPLETED),
                       slot("cwait.p", CALLER_WAITING), slot("fn.p", FN), slot("size.p", SIZE),
                       slot("block.p", BLOCK), slot("nblocks.p", N_BLOCKS), slot("argsets.p", ARGSETS),
                       slot("shared.p", SHARED), slot("nworkers.p", N_WORKERS), slot("stop.p", STOP),
                       slot("sys.p", SYSCALL), slot("nrf.p", NR_FUTEX), slot("nry.p", NR_YIELD),
                       slot("idle_ns.p", IDLE_NS), slot("wait_ns.p", WAIT_NS), slot("ring.p", RING),
                       slot("awake.p", AWAKE_UNTIL), slot("ccpu.p", CALLER_CPU), slot("nudge.p", NUDGE),
                       "  %sys = load ptr, ptr %sys.p, align 8",
                       "  %nrf = load i64, ptr %nrf.p, align 8",
                       "  %nry = load i64, ptr %nry.p, align 8"])
    # (the OR of the new affinity mask's words: is any CPU left once the caller's is cleared?)
    mask_any = "\n".join(["  %o0 = add i64 0, 0"] + [
        f"  %m{i}.p = getelementptr i64, ptr %new, i64 {i}\n"
        f"  %m{i} = load i64, ptr %m{i}.p, align 8\n"
        f"  %o{i + 1} = or i64 %o{i}, %m{i}" for i in range(MASK_WORDS)])
    tick = _CLOCK_EVERY - 1
    return f"""
{decl}

; The monotonic clock in nanoseconds (clock_gettime through libc, a vDSO call on Linux).
define internal i64 @now(ptr %s) {{
entry:
  %ts = alloca [2 x i64], align 8
  %clk.p = getelementptr i64, ptr %s, i64 {CLOCK}
  %clk = load ptr, ptr %clk.p, align 8
  %r = call i32 %clk(i32 {CLOCK_MONOTONIC}, ptr %ts)
  %sec = load i64, ptr %ts, align 8
  %nsec.p = getelementptr i64, ptr %ts, i64 1
  %nsec = load i64, ptr %nsec.p, align 8
  %sec.ns = mul i64 %sec, 1000000000
  %t = add i64 %sec.ns, %nsec
  ret i64 %t
}}

; The CPU this thread runs on (sched_getcpu through libc: a vDSO call or rdpid).
; -1 where libc has none (then NUDGE is off).
define internal i64 @cpu(ptr %s) {{
entry:
  %f.p = getelementptr i64, ptr %s, i64 {GETCPU}
  %f = load ptr, ptr %f.p, align 8
  %none = icmp eq ptr %f, null
  br i1 %none, label %unknown, label %ask
ask:
  %c = call i32 %f()
  %c64 = sext i32 %c to i64
  ret i64 %c64
unknown:
  ret i64 -1
}}

; Move this worker off CPU %c, where the caller runs: allow every CPU of its current affinity
; mask but %c (the kernel migrates the thread at once), then the whole mask again (it stays
; where it went).  At most once per NUDGE_EVERY_NS per worker, counted in its NUDGES; nothing
; when %c is its only CPU.
define internal void @nudge(ptr %s, i64 %who, i64 %c) {{
entry:
  %line = mul i64 %who, {PARTICIPANT_WORDS}
  %base = add i64 %line, {BLOCKS_RUN}
  %last.w = add i64 %base, {LAST_NUDGE}
  %last.p = getelementptr i64, ptr %s, i64 %last.w
  %last = load i64, ptr %last.p, align 8
  %now = call i64 @now(ptr %s)
  %since = sub i64 %now, %last
  %due = icmp sgt i64 %since, {NUDGE_EVERY_NS}
  %inside = icmp ult i64 %c, {64 * MASK_WORDS}
  %go = and i1 %due, %inside
  br i1 %go, label %read, label %done
read:
  store i64 %now, ptr %last.p, align 8
  %sys.p = getelementptr i64, ptr %s, i64 {SYSCALL}
  %sys = load ptr, ptr %sys.p, align 8
  %nrg.p = getelementptr i64, ptr %s, i64 {NR_GETAFFINITY}
  %nrg = load i64, ptr %nrg.p, align 8
  %nrs.p = getelementptr i64, ptr %s, i64 {NR_SETAFFINITY}
  %nrs = load i64, ptr %nrs.p, align 8
  %cur = alloca [{MASK_WORDS} x i64], align 8
  %new = alloca [{MASK_WORDS} x i64], align 8
  call void @llvm.memset.p0.i64(ptr %cur, i8 0, i64 {8 * MASK_WORDS}, i1 false)
  ; (sched_getaffinity(0 = this thread, ...) returns the bytes it wrote, or -errno)
  %got = call i64 (i64, ...) %sys(i64 %nrg, i64 0, i64 {8 * MASK_WORDS}, ptr %cur)
  %ok = icmp sgt i64 %got, 0
  br i1 %ok, label %clear, label %done
clear:
  call void @llvm.memcpy.p0.p0.i64(ptr %new, ptr %cur, i64 {8 * MASK_WORDS}, i1 false)
  %wi = lshr i64 %c, 6
  %bi = and i64 %c, 63
  %w.p = getelementptr i64, ptr %new, i64 %wi
  %w = load i64, ptr %w.p, align 8
  %bit = shl i64 1, %bi
  %nbit = xor i64 %bit, -1
  %w1 = and i64 %w, %nbit
  store i64 %w1, ptr %w.p, align 8
{mask_any}
  %elsewhere = icmp ne i64 %o{MASK_WORDS}, 0
  br i1 %elsewhere, label %move, label %done
move:
  %r1 = call i64 (i64, ...) %sys(i64 %nrs, i64 0, i64 {8 * MASK_WORDS}, ptr %new)
  %r2 = call i64 (i64, ...) %sys(i64 %nrs, i64 0, i64 {8 * MASK_WORDS}, ptr %cur)
  ; (counted once the mask is back: a reader that sees the count sees the move complete)
  %n.w = add i64 %base, {NUDGES}
  %n.p = getelementptr i64, ptr %s, i64 %n.w
  %n = load i64, ptr %n.p, align 8
  %n1 = add i64 %n, 1
  store i64 %n1, ptr %n.p, align 8
  br label %done
done:
  ret void
}}

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; Wake the sleeping workers, if any: bump ring (the word they sleep on), then the system call.
define internal void @ring_bell(ptr %s) {{
entry:
{slots}
  %sl = load atomic i64, ptr %sleepers.p seq_cst, align 8
  %any = icmp ne i64 %sl, 0
  br i1 %any, label %wake, label %done
wake:
  %r0 = atomicrmw add ptr %ring.p, i32 1 seq_cst, align 8
  %r = call i64 (i64, ...) %sys(i64 %nrf, ptr %ring.p, i64 {FUTEX_WAKE_PRIVATE}, i64 2147483647, ptr null, ptr null, i64 0)
  br label %done
done:
  ret void
}}

; Run blocks of the open launch until none is left: claim with one atomic add on next, count
; each finished block in completed, wake a sleeping caller after the last one.
define internal void @run_blocks(ptr %s, ptr %args, i64 %who) {{
entry:
{slots}
  %fn = load ptr, ptr %fn.p, align 8
  %size = load i64, ptr %size.p, align 8
  %block = load i64, ptr %block.p, align 8
  %nblocks = load i64, ptr %nblocks.p, align 8
  %shared = load i64, ptr %shared.p, align 8
  br label %claim
claim:
  %ran = phi i64 [ 0, %entry ], [ %ran1, %run.done ], [ %ran1, %maybe_wake ], [ %ran1, %wake ]
  %b = atomicrmw add ptr %next.p, i64 1 monotonic, align 8
  %more = icmp ult i64 %b, %nblocks
  br i1 %more, label %run, label %done
run:
  %start = mul i64 %b, %block
  %end0 = add i64 %start, %block
  %over = icmp ugt i64 %end0, %size
  %end = select i1 %over, i64 %size, i64 %end0
  call void %fn(i64 %start, i64 %end, ptr %args, i64 %shared)
  %ran1 = add i64 %ran, 1
  br label %run.done
run.done:
  %c0 = atomicrmw add ptr %completed.p, i32 1 seq_cst, align 8
  %c = add i32 %c0, 1
  %c64 = zext i32 %c to i64
  %last = icmp eq i64 %c64, %nblocks
  br i1 %last, label %maybe_wake, label %claim
maybe_wake:
  %w = load atomic i64, ptr %cwait.p seq_cst, align 8
  %sleeping = icmp ne i64 %w, 0
  br i1 %sleeping, label %wake, label %claim
wake:
  %r = call i64 (i64, ...) %sys(i64 %nrf, ptr %completed.p, i64 {FUTEX_WAKE_PRIVATE}, i64 1, ptr null, ptr null, i64 0)
  br label %claim
done:
  ; (this participant's own cache line: a plain read-modify-write)
  %who.line = mul i64 %who, {PARTICIPANT_WORDS}
  %who.word = add i64 %who.line, {BLOCKS_RUN}
  %ran.p = getelementptr i64, ptr %s, i64 %who.word
  %ran.old = load i64, ptr %ran.p, align 8
  %ran.new = add i64 %ran.old, %ran
  store i64 %ran.new, ptr %ran.p, align 8
  ret void
}}

; A worker: spin on gen until the idle deadline, then sleep on ring; join each launch it sees.
define void @{WORKER_SYMBOL}(ptr %s, i64 %index) {{
entry:
{slots}
  %idle_ns = load i64, ptr %idle_ns.p, align 8
  %g.start = load atomic i32, ptr %gen.p acquire, align 8
  br label %idle
idle:
  %seen = phi i32 [ %g.start, %entry ], [ %g, %after_launch ], [ %seen, %woke ]
  %until = phi i64 [ 0, %entry ], [ %until.new, %after_launch ], [ 0, %woke ]
  br label %spinloop
spinloop:
  %i = phi i64 [ 0, %idle ], [ %i1, %spin_more ]
  %g = load atomic i32, ptr %gen.p acquire, align 8
  %changed = icmp ne i32 %g, %seen
  br i1 %changed, label %got, label %count
count:
  %i1 = add i64 %i, 1
  %t.bits = and i64 %i1, {tick}
  %no_clock = icmp ne i64 %t.bits, 0
  br i1 %no_clock, label %spin_more, label %check_clock
check_clock:
  ; every few thousand rounds, let another thread that waits for this core run (sched_yield
  ; returns at once when none does): a spinning worker does not delay the caller's tracing
  ; or another process on a loaded machine by a whole time slice
  %y.bits = and i64 %i1, {_YIELD_EVERY - 1}
  %no_yield = icmp ne i64 %y.bits, 0
  br i1 %no_yield, label %read_clock, label %polite
polite:
  ; with NUDGE set, yield only on the caller's CPU (a spinning worker there delays the caller;
  ; elsewhere yielding gives the core away to other processes, and on Linux's EEVDF scheduler
  ; each yield pushes the worker's deadline back, so that it misses the next launch), and move
  ; off that CPU
  %nudging = load i64, ptr %nudge.p, align 8
  %always = icmp eq i64 %nudging, 0
  br i1 %always, label %do_yield, label %where
where:
  %mycpu = call i64 @cpu(ptr %s)
  %ccpu = load atomic i64, ptr %ccpu.p monotonic, align 8
  %together = icmp eq i64 %mycpu, %ccpu
  br i1 %together, label %do_nudge, label %read_clock
do_nudge:
  %who.n = add i64 %index, 1
  call void @nudge(ptr %s, i64 %who.n, i64 %ccpu)
  br label %do_yield
do_yield:
  %ry = call i64 (i64, ...) %sys(i64 %nry)
  br label %read_clock
read_clock:
  %now = call i64 @now(ptr %s)
  %aw = load atomic i64, ptr %awake.p monotonic, align 8
  %later = icmp sgt i64 %until, %aw
  %deadline = select i1 %later, i64 %until, i64 %aw
  %keep = icmp slt i64 %now, %deadline
  br i1 %keep, label %spin_more, label %sleep
spin_more:
  {pause}
  br label %spinloop
sleep:
  %sl0 = atomicrmw add ptr %sleepers.p, i64 1 seq_cst, align 8
  %bell = load atomic i32, ptr %ring.p seq_cst, align 8
  ; (a worker that started after its pool stopped has seen the final gen: it must not sleep)
  %stop.s = load atomic i64, ptr %stop.p seq_cst, align 8
  %stopped.s = icmp ne i64 %stop.s, 0
  br i1 %stopped.s, label %exit, label %check_gen
check_gen:
  %g.check = load atomic i32, ptr %gen.p seq_cst, align 8
  %same = icmp eq i32 %g.check, %seen
  br i1 %same, label %check_awake, label %woke
check_awake:
  %aw2 = load atomic i64, ptr %awake.p seq_cst, align 8
  %now2 = call i64 @now(ptr %s)
  %asleep = icmp sge i64 %now2, %aw2
  br i1 %asleep, label %wait, label %woke
wait:
  %bell64 = zext i32 %bell to i64
  %r = call i64 (i64, ...) %sys(i64 %nrf, ptr %ring.p, i64 {FUTEX_WAIT_PRIVATE}, i64 %bell64, ptr null, ptr null, i64 0)
  br label %woke
woke:
  %sl1 = atomicrmw sub ptr %sleepers.p, i64 1 seq_cst, align 8
  br label %idle
got:
  %stop = load atomic i64, ptr %stop.p acquire, align 8
  %stopping = icmp ne i64 %stop, 0
  br i1 %stopping, label %exit, label %check_open
check_open:
  %odd = and i32 %g, 1
  %open = icmp ne i32 %odd, 0
  br i1 %open, label %enter, label %after_launch
enter:
  %a0 = atomicrmw add ptr %active.p, i64 1 seq_cst, align 8
  %g2 = load atomic i32, ptr %gen.p seq_cst, align 8
  %still = icmp eq i32 %g2, %g
  br i1 %still, label %mine, label %raced
raced:
  %a1 = atomicrmw sub ptr %active.p, i64 1 seq_cst, align 8
  br label %after_launch
mine:
  %nw = load i64, ptr %nworkers.p, align 8
  %takes_part = icmp ult i64 %index, %nw
  br i1 %takes_part, label %work, label %not_mine
not_mine:
  %a2 = atomicrmw sub ptr %active.p, i64 1 seq_cst, align 8
  br label %after_launch
work:
  %k = add i64 %index, 1
  ; (a worker that got a launch's CPU time on the caller's CPU moves off it before its blocks)
  %nudging.w = load i64, ptr %nudge.p, align 8
  %moving = icmp ne i64 %nudging.w, 0
  br i1 %moving, label %work.where, label %work.go
work.where:
  %mycpu.w = call i64 @cpu(ptr %s)
  %ccpu.w = load atomic i64, ptr %ccpu.p monotonic, align 8
  %together.w = icmp eq i64 %mycpu.w, %ccpu.w
  br i1 %together.w, label %work.nudge, label %work.go
work.nudge:
  call void @nudge(ptr %s, i64 %k, i64 %ccpu.w)
  br label %work.go
work.go:
  %argsets = load ptr, ptr %argsets.p, align 8
  %args.p = getelementptr ptr, ptr %argsets, i64 %k
  %args = load ptr, ptr %args.p, align 8
  call void @run_blocks(ptr %s, ptr %args, i64 %k)
  %a3 = atomicrmw sub ptr %active.p, i64 1 seq_cst, align 8
  br label %after_launch
after_launch:
  ; a launch came by: spin idle_ns from now (the next one of a loop is likely close)
  %t.end = call i64 @now(ptr %s)
  %until.new = add i64 %t.end, %idle_ns
  br label %idle
exit:
  ret void
}}

; Write the job, open the launch (gen odd) and wake the workers; returns at once: the workers
; run blocks until the caller joins (@join).
define internal void @publish(ptr %s, ptr %fn, i64 %size, i64 %block, ptr %argsets, i64 %shared, i64 %nworkers) {{
entry:
{slots}
  store ptr %fn, ptr %fn.p, align 8
  store i64 %size, ptr %size.p, align 8
  store i64 %block, ptr %block.p, align 8
  %nb0 = add i64 %size, %block
  %nb1 = sub i64 %nb0, 1
  %nblocks = udiv i64 %nb1, %block
  store i64 %nblocks, ptr %nblocks.p, align 8
  store ptr %argsets, ptr %argsets.p, align 8
  store i64 %shared, ptr %shared.p, align 8
  store i64 %nworkers, ptr %nworkers.p, align 8
  store i64 0, ptr %next.p, align 8
  store i32 0, ptr %completed.p, align 8
  store i64 0, ptr %cwait.p, align 8
  %me = call i64 @cpu(ptr %s)
  store atomic i64 %me, ptr %ccpu.p monotonic, align 8
  %g = load i32, ptr %gen.p, align 8
  %g.open = add i32 %g, 1
  store atomic i32 %g.open, ptr %gen.p seq_cst, align 8
  call void @ring_bell(ptr %s)
  ret void
}}

; The caller's part of the open launch: claim the blocks left, wait until every block is
; complete, close the launch (gen even) and wait until no worker is inside it.
; Nothing when no launch is open (gen even): a join is idempotent.
define internal void @join(ptr %s) {{
entry:
{slots}
  %g = load atomic i32, ptr %gen.p monotonic, align 8
  %g.odd = and i32 %g, 1
  %is_open = icmp ne i32 %g.odd, 0
  br i1 %is_open, label %claim, label %done
claim:
  %argsets = load ptr, ptr %argsets.p, align 8
  %nblocks = load i64, ptr %nblocks.p, align 8
  %args = load ptr, ptr %argsets, align 8
  call void @run_blocks(ptr %s, ptr %args, i64 0)
  %wait_ns = load i64, ptr %wait_ns.p, align 8
  %t.wait = call i64 @now(ptr %s)
  %wait_until = add i64 %t.wait, %wait_ns
  br label %wait_blocks
wait_blocks:
  %i = phi i64 [ 0, %claim ], [ %i1, %spin_more ], [ 0, %slept ]
  %c = load atomic i32, ptr %completed.p acquire, align 8
  %c64 = zext i32 %c to i64
  %all = icmp eq i64 %c64, %nblocks
  br i1 %all, label %close, label %not_yet
not_yet:
  %i1 = add i64 %i, 1
  %t.bits = and i64 %i1, {tick}
  %no_clock = icmp ne i64 %t.bits, 0
  br i1 %no_clock, label %spin_more, label %check_clock
check_clock:
  %now = call i64 @now(ptr %s)
  %keep = icmp slt i64 %now, %wait_until
  br i1 %keep, label %spin_more, label %sleep
spin_more:
  {pause}
  br label %wait_blocks
sleep:
  store atomic i64 1, ptr %cwait.p seq_cst, align 8
  %c2 = load atomic i32, ptr %completed.p seq_cst, align 8
  %c2.64 = zext i32 %c2 to i64
  %all2 = icmp eq i64 %c2.64, %nblocks
  br i1 %all2, label %close, label %do_sleep
do_sleep:
  %r2 = call i64 (i64, ...) %sys(i64 %nrf, ptr %completed.p, i64 {FUTEX_WAIT_PRIVATE}, i64 %c2.64, ptr null, ptr null, i64 0)
  br label %slept
slept:
  br label %wait_blocks
close:
  %g.closed = add i32 %g, 1
  store atomic i32 %g.closed, ptr %gen.p seq_cst, align 8
  br label %wait_active
wait_active:
  %j = phi i64 [ 0, %close ], [ %j1, %active_spin ], [ 0, %yield ]
  %act = load atomic i64, ptr %active.p seq_cst, align 8
  %idle = icmp eq i64 %act, 0
  br i1 %idle, label %done, label %active_more
active_more:
  %j1 = add i64 %j, 1
  %jkeep = icmp ult i64 %j1, {_ACTIVE_SPIN}
  br i1 %jkeep, label %active_spin, label %yield
active_spin:
  {pause}
  br label %wait_active
yield:
  %r3 = call i64 (i64, ...) %sys(i64 %nry)
  br label %wait_active
done:
  ret void
}}

; A whole launch: publish, then join (one ctypes call).
define void @{LAUNCH_SYMBOL}(ptr %s, ptr %fn, i64 %size, i64 %block, ptr %argsets, i64 %shared, i64 %nworkers) {{
entry:
  call void @publish(ptr %s, ptr %fn, i64 %size, i64 %block, ptr %argsets, i64 %shared, i64 %nworkers)
  call void @join(ptr %s)
  ret void
}}

define void @{PUBLISH_SYMBOL}(ptr %s, ptr %fn, i64 %size, i64 %block, ptr %argsets, i64 %shared, i64 %nworkers) {{
entry:
  call void @publish(ptr %s, ptr %fn, i64 %size, i64 %block, ptr %argsets, i64 %shared, i64 %nworkers)
  ret void
}}

define void @{JOIN_SYMBOL}(ptr %s) {{
entry:
  call void @join(ptr %s)
  ret void
}}

; Keep (or get) the workers spinning for ns nanoseconds from now: a launch is coming.
define void @{WAKE_SYMBOL}(ptr %s, i64 %ns) {{
entry:
{slots}
  %me = call i64 @cpu(ptr %s)
  store atomic i64 %me, ptr %ccpu.p monotonic, align 8
  %now = call i64 @now(ptr %s)
  %until = add i64 %now, %ns
  store atomic i64 %until, ptr %awake.p seq_cst, align 8
  call void @ring_bell(ptr %s)
  ret void
}}

define void @{STOP_SYMBOL}(ptr %s) {{
entry:
{slots}
  store atomic i64 1, ptr %stop.p seq_cst, align 8
  %g0 = atomicrmw add ptr %gen.p, i32 2 seq_cst, align 8
  %r0 = atomicrmw add ptr %ring.p, i32 1 seq_cst, align 8
  %r = call i64 (i64, ...) %sys(i64 %nrf, ptr %ring.p, i64 {FUTEX_WAKE_PRIVATE}, i64 2147483647, ptr null, ptr null, i64 0)
  ret void
}}
"""


class NativePoolCode:
    """The compiled worker, launch, wake-up and stop functions (one copy per process, never
    freed: worker threads run in this code until their pool closes, also during interpreter
    exit).

    ``launch(state, fn, size, block, argsets, shared, n_workers)`` runs one launch;
    ``publish`` (the same arguments) opens one and returns, ``join(state)`` ends it;
    ``wake(state, ns)`` keeps the pool's workers spinning (waking those asleep) for ``ns``
    nanoseconds, ahead of a launch; ``stop(state)`` makes the workers return.
    """

    def __init__(self, compiler):
        ir = pool_ir(llvm.get_default_triple())
        # From the kernel disk cache when an earlier process compiled it (~15 ms of LLVM otherwise)
        key = hashlib.sha256(ir.encode()).hexdigest()
        obj = compiler.disk.load(key)
        if obj is None:
            obj = compiler.compile_ir(ir)
            compiler.disk.store(key, obj)
        self.engine, worker = compiler.load(obj, WORKER_SYMBOL)
        self.worker = WORKER_CFUNC(worker)
        self.launch = LAUNCH_CFUNC(self.engine.get_function_address(LAUNCH_SYMBOL))
        self.publish = LAUNCH_CFUNC(self.engine.get_function_address(PUBLISH_SYMBOL))
        self.join = JOIN_CFUNC(self.engine.get_function_address(JOIN_SYMBOL))
        self.wake = WAKE_CFUNC(self.engine.get_function_address(WAKE_SYMBOL))
        self.stop = STOP_CFUNC(self.engine.get_function_address(STOP_SYMBOL))
        libc = ctypes.CDLL(None)
        self.syscall = ctypes.cast(libc.syscall, ctypes.c_void_p).value
        self.clock = ctypes.cast(libc.clock_gettime, ctypes.c_void_p).value
        getcpu = getattr(libc, "sched_getcpu", None)     # (glibc and musl have it)
        self.getcpu = ctypes.cast(getcpu, ctypes.c_void_p).value if getcpu is not None else 0
        machine = platform.machine().lower()
        self.nr_futex = _SYS_FUTEX[machine]
        self.nr_yield = _SYS_SCHED_YIELD[machine]
        self.nr_setaffinity = _SYS_SCHED_SETAFFINITY[machine]
        self.nr_getaffinity = _SYS_SCHED_GETAFFINITY[machine]

    def new_state(self, idle_ns: int = DEFAULT_IDLE_NS, wait_ns: int = DEFAULT_WAIT_NS,
                  n_threads: int = 2, nudge: bool = True) -> np.ndarray:
        """A fresh, zeroed pool state (64-byte aligned) for ``n_threads`` participants (the caller
        and ``n_threads - 1`` workers) with the system call numbers, the clock and the spin
        bounds filled in: workers spin ``idle_ns`` after a launch, the caller ``wait_ns`` for the
        workers' last blocks (nanoseconds).  ``nudge``: workers yield only on the caller's CPU
        and move off it (see the module docstring); only if this thread may run on more than
        one CPU now (a worker checks its own mask again at each move)."""
        n = max(n_threads, 1)
        words = BLOCKS_RUN + PARTICIPANT_WORDS * n
        raw = np.zeros(words + 8, np.int64)
        off = (-raw.ctypes.data % 64) // 8
        state = raw[off:off + words]
        state[SYSCALL] = self.syscall
        state[CLOCK] = self.clock
        state[IDLE_NS] = idle_ns
        state[WAIT_NS] = wait_ns
        state[NR_FUTEX] = self.nr_futex
        state[NR_YIELD] = self.nr_yield
        state[GETCPU] = self.getcpu
        state[NR_SETAFFINITY] = self.nr_setaffinity
        state[NR_GETAFFINITY] = self.nr_getaffinity
        state[N_PARTICIPANTS] = n
        state[CALLER_CPU] = -1
        state[NUDGE] = int(nudge and bool(self.getcpu) and len(os.sched_getaffinity(0)) > 1)
        return state


def participant_counts(state: np.ndarray, word: int = 0) -> list[int]:
    """A counter of each participant of a pool's launches, ``[caller, worker 0, ...]``: the
    blocks it ran so far (``word`` 0, :data:`BLOCKS_RUN`) or its moves off the caller's CPU
    (:data:`NUDGES`)."""
    return [int(v) for v in state[BLOCKS_RUN + word::PARTICIPANT_WORDS][:int(state[N_PARTICIPANTS])]]


_CODE: list = []


def native_code(compiler) -> NativePoolCode | None:
    """The process's compiled pool functions (built once, with ``compiler``), or None where
    the platform has no native pool."""
    if not available():
        return None
    if not _CODE:
        _CODE.append(NativePoolCode(compiler))
    return _CODE[0]
