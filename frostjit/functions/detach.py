"""``fj.detach``: an array or PyTree that shares its values but not its place in the AD graph.

It lives below :mod:`frostjit.ad` (which re-exports it) because it needs nothing of the AD
graph: a detached array is a new array object around the same node, with no vertex.  Helpers
such as ``fj.allclose`` use it without importing the AD package.
"""
from __future__ import annotations

from ..array import registry
from ..array.flat import ArrayBase
from ..tree import transform


def detach(arg, preserve_type: bool = True):
    """A copy of ``arg`` (an array or PyTree) that shares its values but is not part of the AD graph.

    With ``preserve_type=False`` the arrays have the non-AD type
    (``frostjit.llvm.Float`` instead of ``frostjit.llvm.ad.Float``, ``Array3f`` likewise).
    """
    def one(a):
        cls = type(a)
        if not preserve_type and a._is_ad:
            cls = registry.flat_type(a._backend, a._vt, False)
        return cls._from_node(a._node)
    if isinstance(arg, ArrayBase):
        return one(arg)
    return transform(arg, one, who="detach", root="arg")
