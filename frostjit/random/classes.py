"""The generator classes of one backend: ``frostjit.llvm.PCG32``, ``frostjit.llvm.ad.Philox4x32``, ..."""
from __future__ import annotations

from ._types import ArrayTypes, register_philox
from .pcg32 import make_pcg32
from .philox import make_philox4x32


def make_rng_types(backend, module: str, ad: bool) -> dict:
    """Create ``PCG32`` and ``Philox4x32`` for ``backend`` (their float results are AD types when
    ``ad``); returns ``{name: class}``.  The array types of the backend must exist already."""
    types = ArrayTypes.of(backend, ad)
    philox = make_philox4x32(types, module)
    if not ad:
        register_philox(backend, philox)
    return {"PCG32": make_pcg32(types, module), "Philox4x32": philox}
