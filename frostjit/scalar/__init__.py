"""Array types of the scalar backend (Dr.Jit's ``drjit.scalar``): Python numbers, no tracing.

``Float`` is Python's ``float``, ``Int``/``UInt`` (and every integer width) ``int``, ``Bool``
``bool``; ``Array3f``, ``Matrix4f``, ``Complex2f``, ``Quaternion4f``, ``ArrayXf``, ... are
static arrays of those numbers, computed eagerly in their element type (``Array3f`` rounds
to float32, ``Array3f16`` to half).  A program written for ``frostjit.llvm`` runs here by
changing the import.

>>> from frostjit.scalar import Array3f
>>> import frostjit as fj
>>> fj.norm(Array3f(3, 4, 0))
5.0
"""
from ..tensor.types import make_types as _make_tensor_types
from ..texture.types import make_types as _make_texture_types
from ..trace.state import JitBackend as _JitBackend
from .arrays import SCALAR_ARRAYS as _SCALAR_ARRAYS, make_types as _make_types
from .generators import make_rng_types as _make_rng_types

globals().update(_make_types(__name__))
globals().update(_make_rng_types(__name__))      # PCG32, Philox4x32 (need the array types)
# TensorXf..., Texture2f...: frostjit.tensor / frostjit.texture over the scalar ArrayXf...
globals().update(_make_tensor_types(_JitBackend.Invalid, __name__, False, arrays=_SCALAR_ARRAYS))
globals().update(_make_texture_types(_SCALAR_ARRAYS, __name__, False))

#: The 1-D types are Python's number types (as ``drjit.scalar``).
Bool = bool
Float = Float16 = Float32 = Float64 = float
Int = Int8 = Int16 = Int32 = Int64 = int
UInt = UInt8 = UInt16 = UInt32 = UInt64 = int

__all__ = [n for n in dir() if not n.startswith("_")]
