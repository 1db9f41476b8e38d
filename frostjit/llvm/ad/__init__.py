"""AD-enabled array types of the LLVM backend.

Float types here can carry gradients (:func:`frostjit.enable_grad`); the
integer and Bool types are the same classes as in :mod:`frostjit.llvm` and
never carry gradients.
"""
from ...trace.state import JitBackend as _JitBackend
from ...array.types import make_types as _make_types
from ...tensor.types import make_types as _make_tensor_types
from ...texture.types import make_types as _make_texture_types
from .. import Float as _plain_float  # noqa: F401  (non-AD types must exist first)

globals().update(_make_types(_JitBackend.LLVM, __name__, ad=True))
from ...random.classes import make_rng_types as _make_rng_types  # noqa: E402  (PCG32, Philox4x32)
globals().update(_make_rng_types(_JitBackend.LLVM, __name__, ad=True))
globals().update(_make_tensor_types(_JitBackend.LLVM, __name__, ad=True))
globals().update(_make_texture_types(_JitBackend.LLVM, __name__, ad=True))

from ...schedule.event import Event  # noqa: E402,F401  (the same class as frostjit.llvm.Event)

__all__ = [n for n in dir() if not n.startswith("_")]
