"""A persistent thread pool that runs kernel launches on all cores.

A kernel is a C function over ``[start, end)``; ctypes releases the GIL while
it runs, so Python threads give real parallelism.  Large launches are cut into
blocks (a few per thread, aligned to the SIMD width) that the threads claim one
at a time, so a thread slowed down by other load on its core does not hold
everybody up.  The calling thread works too.  Small launches never leave the
calling thread.

Each launch keeps its own completion state (:class:`_Launch`: the next block to
claim, the workers inside a block, a latch), never a queue shared between
launches: an exception that interrupts the calling thread anywhere in a launch
(a signal handler raising ``KeyboardInterrupt``) stops the launch from handing
out blocks, waits for the blocks workers are running (they write into buffers
the caller may free as soon as it returns), and re-raises.  A worker that picks
up an interrupted launch later finds nothing left to do.
"""
from __future__ import annotations

import ctypes
import os
import queue
import threading
import weakref

import numpy as np

from ..settings import settings
from .native_pool import DEFAULT_IDLE_NS, GEN, NUDGES, participant_counts
from .reduction import REDUCE_UFUNC, private_identity

# Blocks per thread of a launch.  (Finer blocks for the native workers, 8, 16 or 32 per thread,
# measured no faster: a frozen 1e6-lane complex chain on 2 pinned threads took 491-497 us per
# launch back to back at 4, 492-496 at 8, 484-512 at 16 and 492-528 at 32, and after 50 ms
# pauses 516-560, 525-536, 544-557 and 563-602 us: the workers spin, so none joins late.
# Dr.Jit's split, 16384-element blocks (62 for 1e6 lanes), was no better on a loaded 2-core machine
# either (load 5-8, bench_types' 1e6 rows on 2 threads): per-call medians 0-12% higher than with
# 8 blocks, 90th percentiles no lower; docs/benchmarks.md, "Issue 11, second round".)
BLOCKS_PER_THREAD = 4
MIN_BLOCK = 1 << 14

# Launch on several threads only when there is enough work to amortize the hand-off.
PARALLEL_MIN_SIZE = 1 << 13
PARALLEL_MIN_WORK = 1 << 17


def parallel_threshold(n_instrs: int) -> int:
    """The launch size from which a kernel of ``n_instrs`` instructions runs on several threads."""
    return max(PARALLEL_MIN_SIZE, -(-PARALLEL_MIN_WORK // max(n_instrs, 1)))


def idle_spin_ns() -> int:
    """How long idle native workers spin before they sleep, in nanoseconds:
    ``FROSTJIT_POOL_SPIN_US`` (microseconds, 0 to 100000) if set, else 1 ms."""
    env = os.environ.get("FROSTJIT_POOL_SPIN_US")
    if not env:
        return DEFAULT_IDLE_NS
    try:
        us = int(env)
    except ValueError:
        raise ValueError(f"FROSTJIT_POOL_SPIN_US must be an integer number of microseconds, not {env!r}") from None
    if not 0 <= us <= 100_000:
        raise ValueError(f"FROSTJIT_POOL_SPIN_US must be between 0 and 100000 microseconds, not {us}")
    return us * 1000


def nudge_enabled() -> bool:
    """Whether idle native workers yield only on the caller's CPU and move off it
    (:mod:`.native_pool`): ``FROSTJIT_POOL_NUDGE`` ``1`` (the default) or ``0`` (yield every
    ~50 us wherever they run, never change their CPU affinity)."""
    return _switch("FROSTJIT_POOL_NUDGE")


def deferred_launches_enabled() -> bool:
    """Whether a launch asked to be deferred (:meth:`ThreadPool.run` with ``keep``) returns before
    its end: ``FROSTJIT_ASYNC_LAUNCH`` ``1`` (the default) or ``0`` (every launch joins before
    it returns: the debugging switch that rules the deferral out)."""
    return _switch("FROSTJIT_ASYNC_LAUNCH")


def _switch(name: str) -> bool:
    """An on/off environment variable that is on unless set: ``1`` or ``0``, else ValueError."""
    env = os.environ.get(name)
    if not env:
        return True
    if env not in ("0", "1"):
        raise ValueError(f"{name} must be 0 or 1, not {env!r}")
    return env == "1"


def default_thread_count() -> int:
    """Threads per launch: ``FROSTJIT_NUM_THREADS`` if set, else the cores this process may use."""
    env = os.environ.get("FROSTJIT_NUM_THREADS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


class _Launch:
    """The state of one parallel launch, shared by the caller and the workers it posted to.

    ``next`` is the next block to claim; ``running`` counts *workers* inside a block (the
    caller's own blocks are synchronous, so they need no count, and an exception that hits
    the caller between two statements cannot leave the count wrong).  Once ``stopped`` is set
    or every block is claimed, ``running`` only falls, and the worker that brings it to zero
    releases ``done`` (at most once per launch).
    """

    __slots__ = ("fn", "size", "block", "n_blocks", "shared", "lock", "done", "next", "running", "stopped",
                 "error")

    def __init__(self, fn, size: int, block: int, shared: int):
        self.fn = fn
        self.size = size
        self.block = block
        self.n_blocks = -(-size // block)
        self.shared = shared
        self.lock = threading.Lock()
        self.done = threading.Lock()
        self.done.acquire()
        self.next = 0
        self.running = 0
        self.stopped = False
        self.error: BaseException | None = None


class ThreadPool:
    """Threads that run the blocks of parallel launches (see module docstring).

    With ``native`` (:class:`.native_pool.NativePoolCode`), compiled kernels run on native
    worker loops that never need the GIL (:mod:`.native_pool`); launches of Python callables
    (the tests' instrumented "kernels") use Python workers waiting on per-thread inboxes,
    started on the first such launch.  Without ``native`` every launch uses the Python workers.
    """

    def __init__(self, n_threads: int | None = None, native=None):
        self.n_threads = n_threads or default_thread_count()
        self.inboxes: list[queue.SimpleQueue] = []
        self.workers: list[threading.Thread] = []
        self.native = native if self.n_threads > 1 else None
        self.launch_lock = threading.Lock()     # one native launch at a time (one job slot)
        self.native_threads: list[threading.Thread] = []
        # A published native launch not joined yet (run(..., keep=...)): what it uses, kept
        # alive until join() (see run()); None when the job slot is free.
        self.pending: tuple | None = None
        self.defer = deferred_launches_enabled()
        if self.native is not None:
            self.idle_ns = idle_spin_ns()
            self.state = self.native.new_state(self.idle_ns, n_threads=self.n_threads, nudge=nudge_enabled())
            self.state_address = self.state.ctypes.data
            for k in range(self.n_threads - 1):
                t = threading.Thread(target=self.native.worker, args=(self.state_address, k),
                                     name=f"frostjit-native-worker-{k}", daemon=True)
                t.fj_state = self.state        # the state outlives a pool dropped without close()
                t.start()
                self.native_threads.append(t)
            # Stop the native workers when the pool goes away or the interpreter exits, before
            # the code they run in can be freed.
            self._finalizer = weakref.finalize(self, _stop_native, self.native, self.state, self.native_threads)
        else:
            self._start_python_workers()

    def _start_python_workers(self) -> None:
        for k in range(self.n_threads - 1):
            inbox: queue.SimpleQueue = queue.SimpleQueue()
            t = threading.Thread(target=_worker, args=(inbox,), name=f"frostjit-worker-{k}", daemon=True)
            t.start()
            self.inboxes.append(inbox)
            self.workers.append(t)

    def close(self) -> None:
        """Stop the worker threads (after the launches they hold); the pool then runs launches alone."""
        with self.launch_lock:
            self._join_locked()
            if self.native is not None:
                self._finalizer()
                self.native = None
            for inbox in self.inboxes:
                inbox.put(None)
            for t in self.workers:
                t.join()
            self.inboxes, self.workers, self.native_threads, self.n_threads = [], [], [], 1

    def run(self, fn, size: int, args, align: int, parallel: bool, private=(), min_block: int = MIN_BLOCK,
            keep=None) -> None:
        """Run ``fn(start, end, args, shared)`` over ``[0, size)``, split across threads if ``parallel``.

        ``private`` lists the kernel's scatter-reduction targets that may be privatized,
        as ``(param index, operation, dtype, all_reductions, reductions per lane)`` (see
        :func:`private_targets`).
        A compiled kernel (its ``cfunc``, which carries ``fj_address``) runs on the native
        workers if the pool has them.  Returns only when no thread runs a block of this launch
        any more, also when it raises.  ``min_block``: the smallest block (elements of
        ``size``; callers whose items are large, like the rows of a block reduction, pass less).

        **Deferred launches.**  With ``keep`` (the buffers the kernel reads and writes, as one
        object), a launch that goes to the native workers without private copies returns once
        it is published: the workers run its blocks while the caller runs Python, and
        :meth:`join` (or the next launch, or :meth:`close`) ends it; the pool keeps ``args``,
        its table and ``keep`` alive until then, so that none of its buffers is freed or handed
        out again while the kernel runs.  The caller must join before anything on the host reads
        the kernel's outputs, writes what it reads, or changes ``args`` (frozen replays do:
        :mod:`.replay`).  Any other launch (small ones on the calling thread included) joins a
        pending one first.
        """
        if self.pending is not None:
            self.join()
        n = self.n_threads
        if not parallel or n == 1 or settings.serial_launches:
            fn(0, size, args, 0)
            return
        block = max(min_block, -(-size // (n * BLOCKS_PER_THREAD)))
        block = -(-block // align) * align
        n_workers = min(n - 1, -(-size // block) - 1)
        if n_workers <= 0:
            fn(0, size, args, 0)
            return
        address = getattr(fn, "fj_address", None)
        if address is not None and self.native is not None:
            self._run_native(address, size, block, args, n_workers, private, keep)
            return
        if not self.workers:
            self._start_python_workers()
        argsets, copies, shared = _privatize(args, size, n_workers, private)
        launch = _Launch(fn, size, block, shared)
        try:
            for k in range(n_workers):
                self.inboxes[k].put((launch, argsets[k + 1]))
            _caller_share(launch, argsets[0])
            _wait(launch)
        except BaseException:
            _stop_and_wait(launch)
            raise
        if launch.error is not None:
            raise launch.error
        for target, ufunc, copy in copies:
            ufunc(target, copy, out=target)

    def shares(self) -> dict[str, list[int]] | None:
        """How the native launches so far were shared, per participant ``[caller, worker 0,
        ...]``: ``"blocks"`` each ran, ``"nudges"`` (a worker's moves off the caller's CPU);
        None for a pool without native workers."""
        if self.native is None:
            return None
        return {"blocks": participant_counts(self.state), "nudges": participant_counts(self.state, NUDGES)}

    def wake(self) -> None:
        """Get the native workers spinning (waking those asleep) for the next ``idle_ns``
        (:data:`.native_pool.DEFAULT_IDLE_NS`, 1 ms): a large launch is coming.

        An evaluation calls this when it starts, so that the workers' wake-up overlaps the
        kernel lookup, argument binding and allocation before the launch instead of delaying
        the workers' start in it.  Cheap when they already spin (a clock read and a store); a
        no-op on a pool without native workers.
        """
        native = self.native
        if native is not None:
            native.wake(self.state_address, self.idle_ns)

    def _run_native(self, address: int, size: int, block: int, args, n_workers: int, private, keep) -> None:
        """One native launch: a single ctypes call that returns when every block is done, or
        (``keep`` given, no private copies, :attr:`defer` on) only published (see :meth:`run`).

        The GIL is released for the whole launch, and a signal (Ctrl-C) is handled when it
        returns: a native launch always runs to the end.
        """
        if private:
            argsets, copies, shared = _privatize(args, size, n_workers, private)
            table = (ctypes.c_void_p * len(argsets))(*[ctypes.addressof(a) for a in argsets])
        else:       # (every participant reads args: no per-launch copies, the table made once)
            copies, shared = (), 1
            table = _shared_table(args, n_workers)
        with self.launch_lock:
            if self.pending is not None:    # (another thread's, published since run() looked)
                self._join_locked()
            if self.native is None:         # closed meanwhile (set_thread_count from another thread)
                _run_alone(address, size, args)
            elif keep is not None and not copies and self.defer:
                # The record first: an exception (Ctrl-C) right after the publish must leave the
                # launch recorded, to be joined (a join of a launch never published does nothing).
                self.pending = (table, args, keep)
                self.native.publish(self.state_address, address, size, block, table, shared, n_workers)
                return
            else:
                self.native.launch(self.state_address, address, size, block, table, shared, n_workers)
        for target, ufunc, copy in copies:
            ufunc(target, copy, out=target)

    def join(self) -> None:
        """End the pending deferred launch, if any (:meth:`run` with ``keep``): the calling thread
        runs the blocks left and waits for the workers' (any thread may join).  Cheap when
        nothing is pending."""
        if self.pending is not None:
            with self.launch_lock:
                self._join_locked()

    def forget_launch(self) -> None:
        """In a child process after ``os.fork()`` (no worker threads there): drop the launch the
        parent had open, if any, without joining it (its blocks claimed by the parent's workers
        never complete here, so a join would wait forever).  The pool must not launch again."""
        self.pending = None
        if self.native is not None:
            g = int(self.state[GEN]) & 0xFFFFFFFF
            if g & 1:
                self.state[GEN] = (g + 1) & 0xFFFFFFFF      # (closed: the finalizer's join returns)

    def _join_locked(self) -> None:
        """:meth:`join`, with ``launch_lock`` held."""
        if self.pending is not None:
            # (the native join first, the record dropped after: an exception between the two
            # leaves a record whose second join does nothing, never buffers freed too early)
            self.native.join(self.state_address)
            self.pending = None


_KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)


def _shared_table(args, n_workers: int):
    """The per-participant argument table of a native launch without private copies: ``args``'s
    address for the caller and each of ``n_workers`` workers.  Kept on ``args`` (a frozen
    function's replay fills the same argument array every call), so that a replay's launch
    makes no ctypes array (~3 us with :func:`_privatize` on a loaded 2-core machine, more with
    the caches cold after a large kernel)."""
    cached = getattr(args, "fj_table", None)
    if cached is not None and cached[0] == n_workers:
        return cached[1]
    table = (ctypes.c_void_p * (n_workers + 1))(*([ctypes.addressof(args)] * (n_workers + 1)))
    try:
        args.fj_table = (n_workers, table)
    except AttributeError:      # (an argument object without a __dict__: made again next time)
        pass
    return table


def _run_alone(address: int, size: int, args) -> None:
    """Run a compiled kernel over ``[0, size)`` on the calling thread."""
    _KERNEL(address)(0, size, args, 0)


def _stop_native(native, state, threads) -> None:
    """Stop a pool's native workers (after the launch still pending, if any: a join of no open
    launch does nothing) and wait until they have left the native code."""
    native.join(state.ctypes.data)
    native.stop(state.ctypes.data)
    me = threading.current_thread()
    for t in threads:
        if t is not me:
            t.join()


def _worker(inbox: queue.SimpleQueue) -> None:
    """A worker thread: run blocks of each launch posted to ``inbox``; ``None`` stops it."""
    while True:
        job = inbox.get()
        if job is None:
            return
        launch, args = job
        fn, size, block, shared, lock = launch.fn, launch.size, launch.block, launch.shared, launch.lock
        while True:
            with lock:
                b = launch.next
                if launch.stopped or b >= launch.n_blocks:
                    break
                launch.next = b + 1
                launch.running += 1
            error = None
            try:
                start = b * block
                fn(start, min(size, start + block), args, shared)
            except BaseException as e:      # kernels do not raise; a Python fn (tests) may
                error = e
            with lock:
                launch.running -= 1
                if error is not None and launch.error is None:
                    launch.error = error
                    launch.stopped = True
                if launch.running == 0 and (launch.stopped or launch.next >= launch.n_blocks):
                    launch.done.release()
        del job, launch, args, fn       # let the launch's buffers go while the worker waits


def _caller_share(launch: _Launch, args) -> None:
    """The calling thread claims and runs blocks until none is left."""
    fn, size, block, shared, lock = launch.fn, launch.size, launch.block, launch.shared, launch.lock
    while True:
        with lock:
            b = launch.next
            if launch.stopped or b >= launch.n_blocks:
                return
            launch.next = b + 1
        start = b * block
        fn(start, min(size, start + block), args, shared)


def _wait(launch: _Launch) -> None:
    """Wait (interruptibly) until no worker runs a block; every block is claimed already."""
    with launch.lock:
        if launch.running == 0:
            return
    launch.done.acquire()


def _stop_and_wait(launch: _Launch) -> None:
    """After an exception on the calling thread: hand out no more blocks, wait for the running ones.

    Further exceptions (a second Ctrl-C) do not cut the wait short: the workers write into
    buffers that the caller frees or reuses once it returns.  The caller re-raises the first.
    """
    while True:
        try:
            with launch.lock:
                launch.stopped = True
                if launch.running == 0:
                    return
            launch.done.acquire(timeout=0.01)
        except BaseException:       # noqa: BLE001 - keep waiting, see docstring
            continue


def _privatize(args, size: int, n_workers: int, private):
    """Per-thread argument arrays whose small scatter-reduction targets are private copies.

    Threads that add into one small array (an image, a gradient of a few parameters)
    contend on the same addresses, and x86 has no atomic float add (each is a
    compare-and-swap loop).  Instead, each extra thread reduces into its own zeroed (or
    identity-filled) copy without atomics, and the copies are combined into the target
    afterwards.  Only targets of at most ``fj.expand_threshold()`` elements (each copy costs
    memory) whose copies cost less than atomics (:func:`private_chosen`) are privatized; if every
    reduction target is, the kernels run with ``shared = 0`` (no atomics at all).
    Returns ``(argsets, [(target view, ufunc, copy)], shared)``.
    """
    chosen = private_chosen(private, args, size, n_workers)
    if not chosen:
        return [args] * (n_workers + 1), [], 1
    argsets = [args]
    copies = []
    for _ in range(n_workers):
        mine = (ctypes.c_int64 * len(args))()
        ctypes.memmove(mine, args, ctypes.sizeof(mine))
        for p, op, dtype, _all, _count in chosen:
            ufunc = REDUCE_UFUNC[op]
            count = args[2 * p + 1]
            copy = np.full(count, private_identity(op, dtype), dtype=dtype)
            mine[2 * p] = copy.ctypes.data
            target = _view(args[2 * p], count, dtype)
            copies.append((target, ufunc, copy))
        argsets.append(mine)
    every = all(p[3] for p in chosen) and len(chosen) == len(private)
    return argsets, copies, 0 if every else 1


def _view(address: int, count: int, dtype) -> np.ndarray:
    """A writable NumPy view of ``count`` elements of ``dtype`` at ``address``.  (Through bytes:
    ctypes has no half-precision type, so ``np.ctypeslib.as_ctypes_type(float16)`` raises, and a
    Float16 network's weight gradients are privatized scatter-adds.)"""
    dtype = np.dtype(dtype)
    return np.frombuffer((ctypes.c_char * (count * dtype.itemsize)).from_address(address), dtype=dtype)


PRIVATE_RATIO = 4    # a target at most a quarter of the launch: always worth copies (contention)
# Otherwise copies pay when their serial cost (each worker's copy filled, then combined into the
# target: ~2.2 ns per element) is below the atomics' share of the launch's wall time (a
# compare-and-swap loop per float lane: ~12 ns more than a plain update, spread over the
# threads).  Measured on 1e6 bilinear texture lookups' backward pass (4 scatter_adds per lane
# into a 1024x1024 gradient), 2 threads: 69 ms CPU with atomics, 24 ms with copies; at the
# rule's edge (one scatter_add of 4e5 lanes into 1e6 elements, 2 threads) copies still win for
# floats (3.9-4.4 vs 5.7-7.3 ms CPU) and tie for integers (native atomic adds: 4.5-5.2 vs 4.8-5.4).
ATOMIC_TO_COPY_COST = 5


def private_chosen(private, args, size: int, n_workers: int = 1) -> list:
    """The entries of ``private`` (see :func:`private_targets`) worth a per-thread copy for a
    launch of ``size`` lanes split across the caller and ``n_workers`` workers: targets no
    larger than the expansion threshold and either at most a quarter of the launch, or small
    enough that copying them costs less wall time than atomic updates:
    ``workers * (workers + 1) * elements <= ATOMIC_TO_COPY_COST * size * scatters per lane``."""
    limit = settings.expand_threshold
    budget = ATOMIC_TO_COPY_COST * size
    cost = n_workers * (n_workers + 1)
    return [p for p in private if (n := args[2 * p[0] + 1]) <= limit
            and (n * PRIVATE_RATIO <= size or cost * n <= budget * p[4])]


def private_targets(spec) -> tuple:
    """The scatter targets of ``spec`` that threads may reduce into private copies.

    A target qualifies when every scatter into it in this kernel is a reduction with one
    operation (plain scatters into it would race with the copies' late combination).
    Each entry is ``(param index, operation name, dtype, all reductions privatizable,
    reductions into it per lane)`` (the last counts scatter instructions: one in a loop body
    counts once).
    """
    ops: dict = {}
    count: dict = {}
    for ins in spec.instrs:
        if ins.op == "scatter":
            p, reduce_op = ins.value
            ops.setdefault(p, set()).add(reduce_op)
            count[p] = count.get(p, 0) + 1
        elif ins.op == "scatter_rmw":       # (reads the shared target: never a private copy)
            ops.setdefault(ins.value[0], set()).add(None)
    out = []
    for p, s in sorted(ops.items()):
        if len(s) == 1 and None not in s:
            out.append((p, next(iter(s)), spec.params[p][1].np_dtype, True, count[p]))
    if len(out) != sum(1 for s in ops.values() if s - {None}):    # some reduction stays shared
        out = [(p, u, d, False, c) for p, u, d, _, c in out]
    return tuple(out)
