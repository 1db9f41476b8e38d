"""``fj.Local`` and ``fj.alloc_local``: a per-lane scratch buffer of ``size`` entries (Dr.Jit's local memory).

Built on the existing operations, with no backend support: the buffer is a Python list holding one
value of ``dtype`` per entry (each an array, a static vector or a PyTree of them, one lane per
lane of the program).  A Python ``int`` index reads or replaces one entry directly; a per-lane
index reads with a chain of ``select`` over the entries and writes with one ``select`` per entry,
so an access costs ``O(size)`` operations (fine for the small buffers local memory is meant for).

The buffer is a PyTree (the traversal protocol of :mod:`frostjit.tree`, its child is the list of
entries), so ``fj.eval``, ``fj.width``, loop state (``fj.while_loop`` in every mode, ``@fj.syntax``)
and ``fj.freeze`` see its arrays.

Out-of-range per-lane indices are undefined behaviour in Dr.Jit; here a read of one gives zeros
and a write of one does nothing (the same as a masked access).  With ``JitFlag.Debug`` they are
also reported with a warning naming the position, as Dr.Jit's debug mode does, where the index
can be read on the host (not inside a symbolic loop body or a frozen function's recording).
"""
from __future__ import annotations

import warnings

import numpy as np

from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..errors import LocalIndexError
from ..functions.creation import zeros
from ..functions.math import select
from ..trace.loops import is_symbolic
from ..trace.state import JitFlag, flag, state as trace_state
from ..traits import is_integral_v
from ..tree import leaves, transform
from .consistency import fresh


class Local:
    """A local memory buffer: ``len(self)`` entries of one type per lane, read and written by index.

    Made by :func:`alloc_local`; ``Local(other)`` copies a buffer (the copy's writes do not
    change ``other``).  ``local[i]`` reads entry ``i`` and ``local[i] = v`` writes it, where
    ``i`` is a Python ``int`` or an integer array with one index per lane; :meth:`read` and
    :meth:`write` take a mask as well.  A ``Local`` is a PyTree: it can be the state of
    ``fj.while_loop`` and a variable of an ``@fj.syntax`` loop, and an argument or result of a
    frozen function.

    Parameters
    ----------
    other : Local
        The buffer to copy.

    Examples
    --------
    >>> buf = fj.alloc_local(Float, 3, Float(0))
    >>> buf[UInt32(0, 2)] = Float(5, 7)
    >>> buf[2]
    [0, 7]
    """

    __fj_traverse_attrs__ = ("_entries",)

    def __init__(self, other: "Local") -> None:
        if not isinstance(other, Local):
            raise TypeError(f"fj.Local(): 'arg' must be a Local (use fj.alloc_local() to make one), "
                            f"got {type(other).__name__}")
        self._dtype = other._dtype
        self._entries = [fresh(e) for e in other._entries]

    @classmethod
    def _make(cls, dtype, entries: list) -> "Local":
        self = object.__new__(cls)
        self._dtype = dtype
        self._entries = entries
        return self

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        d = self._dtype
        return f"Local[{getattr(d, '__module__', '')}.{getattr(d, '__name__', d)}, {len(self._entries)}]"

    def __getitem__(self, index):
        return self._read(index, True, _CALLER)

    def __setitem__(self, index, value) -> None:
        self._write(value, index, True, _CALLER)

    def read(self, index, active=True):
        """Entry ``index`` of every lane (zeros where ``active`` is false).

        Parameters
        ----------
        index : int or integer array
            A position in ``[0, len(self))``, for all lanes or one per lane.  A per-lane index
            out of range reads zeros (undefined in Dr.Jit; reported with ``JitFlag.Debug``).
        active : bool or Bool array
            Which lanes read.

        Returns
        -------
        A new value of the buffer's type.

        Raises
        ------
        IndexError
            A Python ``int`` index out of range (negative ones included); also a ``RuntimeError``
            with Dr.Jit's "out of bounds read (source size=..., offset=...)" wording.
        """
        return self._read(index, active, _CALLER)

    def _read(self, index, active, stacklevel: int):
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
            entry = self._entries[self._position(int(index), "read")]
            if active is True:
                return fresh(entry)
            return select(active, entry, self._zeros_like(entry))
        index = self._check_index(index, active, "read", stacklevel + 1)
        result = self._zeros_like(self._entries[0]) if self._entries else None
        for k, entry in enumerate(self._entries):
            result = select(_lane_mask(index, k, active), entry, result)
        if result is None:
            raise IndexError("fj.Local.read(): the buffer has no entries")
        return result

    def write(self, value, index, active=True) -> None:
        """Store ``value`` at entry ``index`` of the lanes where ``active`` holds.

        Parameters
        ----------
        value
            A value of the buffer's type (arrays and Python numbers are converted to a 1-D
            or static array ``dtype``).
        index : int or integer array
            As in :meth:`read`; a per-lane index out of range writes nothing.
        active : bool or Bool array
            Which lanes write (the others keep their entry).
        """
        self._write(value, index, active, _CALLER)

    def _write(self, value, index, active, stacklevel: int) -> None:
        value = self._convert(value)
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
            k = self._position(int(index), "write")
            self._entries[k] = fresh(value) if active is True else select(active, value, self._entries[k])
            return
        index = self._check_index(index, active, "write", stacklevel + 1)
        self._entries = [select(_lane_mask(index, k, active), value, entry)
                         for k, entry in enumerate(self._entries)]

    # -- helpers --------------------------------------------------------------------------
    def _position(self, k: int, what: str) -> int:
        n = len(self._entries)
        if not 0 <= k < n:
            side = "source" if what == "read" else "target"
            raise LocalIndexError(f"fj.Local.{what}(): index {k} is out of range for a buffer of {n} entries "
                                  f"(negative indices are not permitted): out of bounds {what} ({side} "
                                  f"size={n}, offset={k})")
        return k

    def _check_index(self, index, active, what: str, stacklevel: int):
        """The per-lane index, checked for type (and, with ``JitFlag.Debug``, for range)."""
        if not isinstance(index, ArrayBase) or not is_integral_v(index):
            raise TypeError(f"fj.Local.{what}(): 'index' must be a Python int or an integer array "
                            f"(e.g. UInt32), got {type(index).__name__}")
        if flag(JitFlag.Debug):
            _report_out_of_range(index, active, len(self._entries), what, stacklevel + 1)
        return index

    def _convert(self, value):
        d = self._dtype
        if isinstance(d, type) and issubclass(d, (ArrayBase, VectorBase)) and not isinstance(value, d):
            return d(value)
        return value

    @staticmethod
    def _zeros_like(entry):
        return transform(entry, lambda a: zeros(type(a)), who="Local", root="entry")


# warnings.warn's stacklevel at _read/_write that names the user's line (+1 per frame below).
_CALLER = 3


def _lane_mask(index, k: int, active):
    m = index == k
    return m if active is True else m & active


def _report_out_of_range(index, active, size: int, what: str, stacklevel: int) -> None:
    """Debug mode: warn about the first active lane whose index is out of range (Dr.Jit's debug
    mode reports these too).  Skipped where the index has no host value yet: inside a symbolic
    loop's body or while a frozen function records (the access itself stays safe)."""
    if trace_state.recorder is not None or is_symbolic([index._node]):
        return
    if isinstance(active, ArrayBase) and is_symbolic([active._node]):
        return
    idx = np.asarray(index.numpy()).astype(np.int64)
    act = np.broadcast_to(np.asarray(active.numpy() if isinstance(active, ArrayBase) else bool(active)), idx.shape)
    bad = act & ((idx < 0) | (idx >= size))
    if bad.any():
        lane = int(np.flatnonzero(bad)[0])
        word = "read from" if what == "read" else "write to"
        warnings.warn(f"fj.Local.{what}(): out-of-bounds {word} position {int(idx[lane])} (lane {lane}) in a "
                      f"buffer of {size} entries; the access was disabled", RuntimeWarning, stacklevel=stacklevel)


def alloc_local(dtype, size: int, value=None) -> Local:
    """Allocate a local memory buffer of ``size`` entries of type ``dtype`` (Dr.Jit's ``alloc_local``).

    Parameters
    ----------
    dtype : type
        A 1-D array type (``Float``), a static array type (``Array3f``) or a PyTree type
        (a ``DRJIT_STRUCT`` class or a dataclass; other PyTree types need ``value``).
    size : int
        The number of entries (static, ``>= 0``).
    value : optional
        A value of type ``dtype`` every entry starts with.  Without it the entries start as
        zeros (Dr.Jit leaves them uninitialized).

    Returns
    -------
    Local

    Raises
    ------
    TypeError
        ``size`` is not a non-negative int, ``value`` is not of type ``dtype``, or ``dtype``
        holds no array (or needs a ``value`` to know its shape).

    Examples
    --------
    >>> buf = fj.alloc_local(Float, 2, Float(1, 2, 3))
    >>> buf[1] = buf[0] * 10
    >>> buf[UInt32(0, 1, 0)]
    [1, 20, 3]
    """
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
        raise TypeError(f"fj.alloc_local(): 'size' must be a non-negative int, got {size!r}")
    if value is None:
        try:
            value = zeros(dtype)
        except TypeError as e:
            raise TypeError(f"fj.alloc_local(): cannot make a zero {getattr(dtype, '__name__', dtype)!s} (not an "
                            "array type, a DRJIT_STRUCT class or a dataclass of them): pass 'value'") from e
    elif type(value) is not dtype:
        raise TypeError(f"fj.alloc_local(): 'value' must be of type 'dtype' ({getattr(dtype, '__name__', dtype)}), "
                        f"got {type(value).__name__}")
    if not any(isinstance(a, ArrayBase) for a in leaves(value)):
        raise TypeError(f"fj.alloc_local(): 'dtype' {getattr(dtype, '__name__', dtype)} holds no JIT array (Dr.Jit: "
                        "type does not contain any Jit-tracked arrays)")
    return Local._make(dtype, [fresh(value) for _ in range(int(size))])
