"""Checking mode: every replay also runs the plain function and the two must agree exactly.

``fj.freeze(f, check=True)`` (or ``FROSTJIT_FREEZE_CHECK=1`` for every frozen function of the
process) proves a program is safe to freeze in one run.  Around each replay:

1. the inputs' state is captured (:func:`capture`: the entries of every container the layout walk
   visited, and the node of every input array, which in-place operations rebind);
2. the replay runs; its outputs and the inputs' state after it are kept;
3. the inputs are put back as they were (:func:`restore`), the plain function runs on them;
4. outputs and written-back inputs are compared exactly (:func:`first_difference`): array types,
   sizes and bits (NaN equal to NaN, ``-0.0`` not equal to ``0.0``), Python values by type and
   bits, containers and objects entry by entry; the first difference raises
   :class:`FreezeMismatchError` naming its path (``result[1].x``, ``args[0].p``), the
   recording's key and what its guards saw;
5. the inputs are left as the replay left them (equal to the plain call's when nothing differs).

Python side effects of the function (printing, appending to a list outside the inputs) happen
twice per checked replay; the replay's outputs are returned.
"""
from __future__ import annotations

import collections
import types

import numpy as np

from ..array.export import read
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..tree.kinds import slot_names
from . import layout
from .layout import entries, set_entry, del_entry
from .symbolic import Sym
from .values import value_key


class FreezeMismatchError(RuntimeError):
    """A checked replay (``fj.freeze(f, check=True)``) differs from the plain call.

    The message names the first differing path, the recording's key and its guards.
    """


# ------------------------------------------------------------------------------ inputs
def capture(flat) -> tuple:
    """The inputs' state: ``([entries of each container], [node of each array leaf], [AD])``."""
    conts = []
    for c in flat.containers:
        conts.append(None if type(c) is tuple else entries(c))
    return conts, [a._node for a in flat.leaves], [a._ad for a in flat.leaves]


def restore(flat, state) -> None:
    """Put the inputs back into a captured state."""
    conts, nodes, ads = state
    for a, n, ad in zip(flat.leaves, nodes, ads):
        a._node = n
        a._ad = ad
    for c, before in zip(flat.containers, conts):
        if before is None:
            continue
        now = entries(c)
        if len(now) == len(before) and all(k1 == k2 and v1 is v2 for (k1, v1), (k2, v2) in zip(now, before)):
            continue
        mode = layout.write_mode(c)
        if mode is layout.ITEMS:
            layout.assign_items(c, [v for _, v in before])
        elif mode is layout.PROTOCOL_ASSIGN:
            c.__fj_assign__(dict(before))
        else:
            keys = {k for k, _ in before}
            for k, _ in now:
                if k not in keys:
                    del_entry(c, k)
            for k, v in before:
                set_entry(c, k, v)


# ------------------------------------------------------------------------------ comparison
def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        ua = a.view(np.dtype(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else np.uint8)
        ub = b.view(ua.dtype)
        same = ua == ub
        if a.dtype.kind == "f":
            same |= np.isnan(a) & np.isnan(b)
        return bool(np.all(same))
    return bool(np.array_equal(a, b))


def _array_difference(a, b) -> str | None:
    if type(a) is not type(b):
        return f"type {type(a).__name__} != {type(b).__name__}"
    na, nb = read(a), read(b)        # (not .numpy(): a literal output stays one)
    if na.shape != nb.shape:
        return f"size {na.size} != {nb.size}"
    if not _bits_equal(np.asarray(na), np.asarray(nb)):
        bad = np.flatnonzero(~((na == nb) | ((na != na) & (nb != nb)))) if na.dtype.kind != "c" else [0]
        i = int(bad[0]) if len(bad) else 0
        return f"element {i}: {na.flat[i].item()!r} (replay) != {nb.flat[i].item()!r} (plain call)"
    if (a._ad is None) != (b._ad is None):
        return "grad-enabled status differs"
    return None


def first_difference(r, p, path: str, _seen=None) -> str | None:
    """``path: what differs`` between a replay's value ``r`` and the plain call's ``p``, or None."""
    if _seen is None:
        _seen = {}
    if r is p:
        return None
    # A width the recording left in a value (a tensor's shape, a stored fj.width()) is the number
    # it stands for to user code (docs/freeze.md); only type() tells them apart.
    if type(r) is Sym:
        r = r.value
    if type(p) is Sym:
        p = p.value
    key = (id(r), id(p))
    if key in _seen:
        return None
    _seen[key] = (r, p)         # held: a pair compared once keeps its ids while the walk runs
    if type(r) is not type(p):
        return f"{path}: type {type(r).__name__} (replay) != {type(p).__name__} (plain call)"
    if isinstance(r, ArrayBase):
        d = _array_difference(r, p)
        if d is None and r._ad is not None:
            gr, gp = r._ad.grad, p._ad.grad
            if (gr is None) != (gp is None):
                return f"{path}.grad: None in one of them"
            if gr is not None:
                return first_difference(gr, gp, f"{path}.grad", _seen)
        return None if d is None else f"{path}: {d}"
    if isinstance(r, VectorBase):
        for i, (x, y) in enumerate(zip(r._c, p._c)):
            d = first_difference(x, y, f"{path}[{i}]", _seen)
            if d:
                return d
        return None
    if isinstance(r, np.ndarray):
        return None if _bits_equal(r, p) else f"{path}: NumPy array data differs"
    if isinstance(r, (list, tuple, collections.deque)):
        if len(r) != len(p):
            return f"{path}: length {len(r)} (replay) != {len(p)} (plain call)"
        for i, (x, y) in enumerate(zip(r, p)):
            d = first_difference(x, y, f"{path}[{i}]", _seen)
            if d:
                return d
        return _state_difference(r, p, path, _seen) if type(r) not in (list, tuple, collections.deque) else None
    if isinstance(r, dict):
        if list(r) != list(p):
            return f"{path}: keys {list(r)} (replay) != {list(p)} (plain call)"
        for k in r:
            d = first_difference(r[k], p[k], f'{path}["{k}"]' if isinstance(k, str) else f"{path}[{k!r}]",
                                 _seen)
            if d:
                return d
        return None
    otherwise = f"{path}: {_short(r)} (replay) != {_short(p)} (plain call)"
    if isinstance(r, types.MethodType):
        # (a bound method has no state of its own: its function, then its instance)
        if r.__func__ is not p.__func__:
            return otherwise
        return first_difference(r.__self__, p.__self__, f"{path}.__self__", _seen)
    if isinstance(r, _ATOMS):
        return None if value_key(r) == value_key(p) else otherwise
    return _state_difference(r, p, path, _seen, otherwise)


_ATOMS = (int, float, complex, str, bytes, bool, type(None), np.generic, frozenset, set, bytearray, range, slice)


def _state_difference(r, p, path, _seen, otherwise=None) -> str | None:
    """Compare two objects by their instance state (``__dict__`` and slots)."""
    # (read as the walk reads them: past a user __getattr__, which may raise anything)
    dr, dp = layout.instance_dict(r), layout.instance_dict(p)
    cache = getattr(type(r), "_fj_cache_slots", ())      # caches derived from the rest of the state
    unset = layout._NO_SLOT
    slots = [n for n in slot_names(type(r)) if (layout.slot_value(r, n) is not unset
                                                or layout.slot_value(p, n) is not unset) and n not in cache]
    if not isinstance(dr, dict) and not slots:
        try:
            return None if bool(r == p) else otherwise
        except Exception:  # noqa: BLE001 - no comparable state: different objects
            return otherwise
    dr = dict(dr) if isinstance(dr, dict) else {}
    dp = dict(dp) if isinstance(dp, dict) else {}
    for n in slots:
        x, y = layout.slot_value(r, n), layout.slot_value(p, n)
        dr[n] = "<unset>" if x is unset else x
        dp[n] = "<unset>" if y is unset else y
    if list(dr) != list(dp):
        return f"{path}: attributes {list(dr)} (replay) != {list(dp)} (plain call)"
    for k in dr:
        d = first_difference(dr[k], dp[k], f"{path}.{k}", _seen)
        if d:
            return d
    return None


def state_difference(flat, after_replay, after_plain, paths) -> str | None:
    """The first difference between the inputs' state after the replay and after the plain call."""
    conts_r, nodes_r, _ = after_replay
    conts_p, nodes_p, _ = after_plain
    for i, (a, nr, np_) in enumerate(zip(flat.leaves, nodes_r, nodes_p)):
        if nr is np_:
            continue
        ra, pa = type(a).__new__(type(a)), type(a).__new__(type(a))
        ra._node, ra._ad, pa._node, pa._ad = nr, None, np_, None
        d = _array_difference(ra, pa)
        if d is not None:
            return f"{paths.leaf(i)}: {d}"
    for ci, (er, ep) in enumerate(zip(conts_r, conts_p)):
        if er is None:
            continue
        kr, kp = [k for k, _ in er], [k for k, _ in ep]
        if kr != kp:
            return f"{paths.container(ci)}: entries {kr} (replay) != {kp} (plain call)"
        for (k, vr), (_, vp) in zip(er, ep):
            if vr is vp:
                continue
            d = first_difference(vr, vp, "\0")
            if d:
                where = paths.container(ci)
                sub = f"{where}[{k!r}]" if isinstance(k, int) or not isinstance(k, str) else f"{where}.{k}"
                return d.replace("\0", sub, 1)
    return None


def _short(v) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


class InputPaths:
    """Paths of a call's containers and array leaves (for FreezeMismatchError), walked on demand
    with the inputs as they were before the call."""

    def __init__(self, ff, args, kwargs, flat, pre, post):
        self.args = (ff, args, kwargs, flat, pre, post)
        self.p = None

    def _walk(self):
        if self.p is None:
            ff, args, kwargs, flat, pre, post = self.args
            restore(flat, pre)
            try:
                self.p, _ = ff._walk(args, kwargs, True)
            finally:
                restore(flat, post)
        return self.p

    def container(self, i) -> str:
        p = self._walk().cont_paths
        return p[i] if i < len(p) and p[i] else f"<input container {i}>"

    def leaf(self, i) -> str:
        p = self._walk().leaf_paths
        return p[i] if i < len(p) and p[i] else f"<input array {i}>"
