"""A frozen function's recordings, by layout key: the lookup that every call makes.

Each key has an :class:`Entry`.  Most keys hold one recording; a function whose recordings pin
exact input sizes (it used ``len(x)``, ``x.shape`` or ``int(fj.width(x))``: guards ``s0 == 7``)
keeps one recording per size, and those are **indexed by the pinned sizes**, so a call costs the
same with 1 or 1,000 recordings cached.  The other recordings of a key are tried in order (their
guards decide).

Keys hold identity-keyed objects (plain objects without ``__eq__``, ``self`` of a method) by weak
reference (:class:`~.values.Ident`); when such an object dies, its key can never match again and
the entry is dropped at the next call, so the cache keeps neither the object nor its arrays alive.

``limit`` evicts the oldest recording of the least recently used key.  The cache is shared by
every thread calling the frozen function; the caller serializes mutations with its lock.
"""
from __future__ import annotations

import collections
import weakref

from .values import idents_in

MISS = object()


class Entry:
    """The recordings of one layout key (see module docstring)."""

    __slots__ = ("key", "order", "general", "pinned", "binder", "refs", "last")

    def __init__(self, key):
        self.key = key
        self.order = []          # every recording, oldest first (eviction, close)
        self.general = []        # recordings without pinned sizes, tried in order
        self.pinned = {}         # pinned size classes -> {their sizes: [recordings]}
        self.binder = MISS       # the generated binder (None: none possible; MISS: not generated yet)
        self.refs = []           # weak references whose death drops this entry
        self.last = None         # (sizes, candidates) of the last candidates() call (add/remove clear it)

    def add(self, recd) -> None:
        self.last = None
        self.order.append(recd)
        pins = getattr(recd, "pins", None)
        if pins:
            classes = tuple(sorted(pins))
            self.pinned.setdefault(classes, {}).setdefault(tuple(pins[c] for c in classes), []).append(recd)
        else:
            self.general.append(recd)

    def remove(self, recd) -> bool:
        self.last = None
        for i, r in enumerate(self.order):
            if r is recd:
                del self.order[i]
                break
        else:
            return False
        pins = getattr(recd, "pins", None)
        if pins:
            classes = tuple(sorted(pins))
            table = self.pinned[classes]
            vals = tuple(pins[c] for c in classes)
            table[vals] = [r for r in table[vals] if r is not recd]
            if not table[vals]:
                del table[vals]
                if not table:
                    del self.pinned[classes]
        else:
            self.general = [r for r in self.general if r is not recd]
        return True

    def candidates(self, sizes) -> list:
        """The recordings that may replay a call with these size-class sizes, in order (possibly
        the index's own list: read it at once, never change it)."""
        if not self.pinned:
            return self.general
        last = self.last
        if last is not None and last[0] == sizes:     # (the usual call: the sizes of the last one)
            return last[1]
        out = self._candidates(sizes)
        self.last = (sizes[:], out)
        return out

    def _candidates(self, sizes) -> list:
        out = None
        for classes, table in self.pinned.items():
            # (one pinned class, the usual case, indexed directly; else a list comprehension: a
            # generator costs about a microsecond here, on every replay)
            lst = table.get((sizes[classes[0]],) if len(classes) == 1 else tuple([sizes[c] for c in classes]))
            if lst:
                out = lst if out is None else out + lst      # (never extended in place: the table's)
        if out is None:
            return self.general
        return out + self.general if self.general else out


class RecordingCache:
    """Layout key -> :class:`Entry` (see module docstring)."""

    def __init__(self, limit):
        self.entries: collections.OrderedDict = collections.OrderedDict()
        self.limit = limit
        self.n = 0               # recordings cached
        self.dead = []           # keys whose identity-keyed object died (dropped by purge())

    def get(self, key):
        e = self.entries.get(key)
        if e is not None and self.limit is not None:
            self.entries.move_to_end(key)
        return e

    def touch(self, entry) -> None:
        """Make ``entry`` the most recently used (a replay with a ``limit``)."""
        if self.limit is not None:
            ents = self.entries
            # Already the most recent (a loop replaying one key): nothing to move, and no hash of
            # the key, a nested tuple that CPython hashes anew at every lookup (two per touch).
            if ents and next(reversed(ents)) is entry.key:
                return
            if ents.get(entry.key) is entry:
                ents.move_to_end(entry.key)

    def add(self, key, recd) -> list:
        """Cache ``recd`` under ``key``; returns the recordings evicted by ``limit``."""
        e = self.entries.get(key)
        if e is None:
            e = self.entries[key] = Entry(key)
            self._watch(e)
        e.add(recd)
        self.n += 1
        evicted = []
        if self.limit is not None:
            self.entries.move_to_end(key)
            while self.n > self.limit:
                k0 = next(iter(self.entries))
                old = self.entries[k0].order[0]
                self.drop(old, k0)
                evicted.append(old)
        return evicted

    def drop(self, recd, key=None) -> bool:
        e = self.entries.get(recd.key if key is None else key)
        if e is None or not e.remove(recd):
            return False
        self.n -= 1
        if not e.order:
            del self.entries[e.key]
        return True

    def drop_key(self, key) -> list:
        """Remove a whole entry; returns its recordings."""
        e = self.entries.pop(key, None)
        if e is None:
            return []
        self.n -= len(e.order)
        return e.order

    def clear(self) -> list:
        out = [r for e in self.entries.values() for r in e.order]
        self.entries.clear()
        self.n = 0
        self.dead.clear()
        return out

    def clear_binders(self) -> None:
        for e in self.entries.values():
            e.binder = MISS

    def purge(self) -> list:
        """Drop the entries whose identity-keyed objects died; returns their recordings."""
        dead = self.dead[:]
        del self.dead[:len(dead)]       # (in place: FrozenFunction checks this very list)
        out = []
        for key in dead:
            out += self.drop_key(key)
        return out

    def _watch(self, e) -> None:
        """Drop ``e`` when an object its key holds by weak identity dies."""
        me = weakref.ref(self)
        key = e.key

        def died(_ref, me=me, key=key):
            cache = me()
            if cache is not None:
                cache.dead.append(key)      # (atomic; the cache is purged by the next call)
        for ident in idents_in(key):
            obj = ident.obj
            if ident.ref is not None and obj is not None:
                e.refs.append(weakref.ref(obj, died))
