"""The in-memory kernel cache: a bounded LRU of compiled kernels.

Each compiled kernel owns its machine code (its own LLVM execution engine, see
:mod:`.compiler`), which is freed when the last reference to the kernel goes.
The cache holds at most ``capacity`` kernels; using a kernel makes it the most
recently used, and adding one beyond the capacity evicts the least recently
used.  An evicted kernel's memory is freed at once unless something still holds
it: a frozen function's recording that replays it, or a launch running it.  Such
a kernel stays *live*, and a later lookup of the same code adopts it back into
the cache instead of loading a second copy.  The disk cache keeps every kernel,
so a lookup after eviction reloads the object code (~0.3 ms) instead of
compiling.

The capacity is ``FROSTJIT_KERNEL_CACHE_SIZE`` (default 1024) or
:func:`frostjit.set_kernel_cache_size`.
"""
from __future__ import annotations

import collections
import weakref

class KernelCache:
    """Kernels by spec key and by IR hash, least recently used first (see module docstring).

    ``by_spec`` maps a spec's structural key to its kernel (a hit needs no IR); ``lru``
    maps IR hashes to the cached kernels in use order; ``live`` maps the hash of every
    kernel still alive anywhere (cached or not) to it, weakly.  The caller serializes
    insertions; lookups may run concurrently with them.
    """

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.by_spec: dict = {}
        self.lru: collections.OrderedDict = collections.OrderedDict()
        self.live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.evictions = 0

    def get_by_spec(self, key):
        """The cached kernel of spec key ``key`` (now the most recently used), or ``None``."""
        k = self.by_spec.get(key)
        if k is not None:
            try:
                self.lru.move_to_end(k.hash)
            except KeyError:        # evicted meanwhile by another thread; the caller holds it
                pass
        return k

    def get_by_hash(self, key, h: str):
        """The kernel whose IR hashes to ``h``, cached or still live (then cached again), or ``None``.

        Found, it becomes the kernel of spec key ``key`` too.
        """
        k = self.lru.get(h)
        if k is None:
            k = self.live.get(h)
            if k is None:
                return None
            self._insert(k)
        else:
            self.lru.move_to_end(h)
        self._add_key(key, k)
        return k

    def add(self, key, kernel) -> None:
        """Cache a new ``kernel`` for spec key ``key``, evicting the least recently used beyond capacity."""
        self.live[kernel.hash] = kernel
        self._insert(kernel)
        self._add_key(key, kernel)

    def _insert(self, kernel) -> None:
        self.lru[kernel.hash] = kernel
        while len(self.lru) > self.capacity:
            self._evict()

    def _add_key(self, key, kernel) -> None:
        kernel.spec_keys.append(key)
        self.by_spec[key] = kernel

    def _evict(self) -> None:
        _, k = self.lru.popitem(last=False)
        for key in k.spec_keys:
            if self.by_spec.get(key) is k:
                del self.by_spec[key]
        k.spec_keys = []
        self.evictions += 1

    def resize(self, capacity: int) -> None:
        """Change the capacity, evicting the least recently used kernels beyond it."""
        self.capacity = capacity
        while len(self.lru) > capacity:
            self._evict()

    def clear(self) -> None:
        """Forget every kernel (kernels still held elsewhere stay valid, but are not found again)."""
        for k in self.lru.values():
            k.spec_keys = []
        self.by_spec = {}
        self.lru = collections.OrderedDict()
        self.live = weakref.WeakValueDictionary()

    def info(self) -> dict:
        """Counts: ``capacity``, ``cached`` kernels, ``live`` kernels (cached or held elsewhere),
        ``evictions`` so far."""
        return {"capacity": self.capacity, "cached": len(self.lru), "live": len(self.live),
                "evictions": self.evictions}
