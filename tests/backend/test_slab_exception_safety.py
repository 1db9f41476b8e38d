"""A replay's slab allocator stays consistent when an exception (Ctrl-C) hits it mid-way.

The allocator keeps ``[slab, offset, address]``; if a new slab were stored before its address
and an exception came in between, later pieces would pair the new slab (what keeps the memory
alive) with the old slab's address (memory freed with the old slab): kernels would write into
freed memory.
"""
import types

import numpy as np
import pytest

from frostjit.backend.llvm import replay as recording

pytestmark = pytest.mark.llvm_only("the LLVM backend's replay slabs")


class _NoAddress:
    """A stand-in array whose address lookup is interrupted."""

    @property
    def ctypes(self):
        raise KeyboardInterrupt("Ctrl-C while asking NumPy for the slab's address")


def test_interrupted_new_slab_leaves_the_allocator_unchanged(monkeypatch):
    old = recording._Slab()
    old.raw = np.zeros(64, np.uint8)
    st = [old, 32, old.raw.ctypes.data]
    before = list(st)
    monkeypatch.setattr(recording, "np", types.SimpleNamespace(zeros=lambda *a: _NoAddress(), uint8=np.uint8))
    with pytest.raises(KeyboardInterrupt):
        recording._new_slab(st)
    assert st[0] is before[0] and st[1:] == before[1:]


def test_new_slab_pairs_the_slab_with_its_own_address():
    st = [None, recording.SLAB_BYTES, 0]
    recording._new_slab(st)
    assert st[2] == st[0].raw.ctypes.data
