"""Array types of the LLVM (CPU) backend: ``Float``, ``UInt32``, ``Array3f``, ...

>>> from frostjit.llvm import Float, UInt32, Array3f
"""
from ..trace.state import JitBackend as _JitBackend
from ..array.types import make_types as _make_types
from ..tensor.types import make_types as _make_tensor_types
from ..texture.types import make_types as _make_texture_types

globals().update(_make_types(_JitBackend.LLVM, __name__, ad=False))
from ..random.classes import make_rng_types as _make_rng_types  # noqa: E402  (PCG32, Philox4x32)
globals().update(_make_rng_types(_JitBackend.LLVM, __name__, ad=False))
globals().update(_make_tensor_types(_JitBackend.LLVM, __name__, ad=False))
globals().update(_make_texture_types(_JitBackend.LLVM, __name__, ad=False))

from ..schedule.event import Event  # noqa: E402,F401  (Dr.Jit's drjit.llvm.Event)

__all__ = [n for n in dir() if not n.startswith("_")]

# ``frostjit.llvm.ad`` is reachable as an attribute after ``import frostjit`` (as ``drjit.llvm.ad``).
from . import ad  # noqa: E402  (needs the plain types above)
