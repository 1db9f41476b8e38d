"""Random number generators, bit-exact with Dr.Jit 1.5 for the same seeds.

* :class:`PCG32` (``frostjit.llvm.PCG32``): a stateful generator per lane, cheapest per sample.
* :class:`Philox4x32` (``frostjit.llvm.Philox4x32``): counter-based, four outputs per call.
* :func:`rng` (``fj.rng``): NumPy-style ``random``/``uniform``/``normal``/``integers`` over Philox.

See docs/random.md.
"""
from .pcg32 import PCG32Base, PCG32_DEFAULT_STATE, PCG32_DEFAULT_STREAM, PCG32_MULT
from .philox import Philox4x32Base
from .generator import Generator, Philox4x32Generator, rng

__all__ = ["PCG32Base", "Philox4x32Base", "Generator", "Philox4x32Generator", "rng",
           "PCG32_DEFAULT_STATE", "PCG32_DEFAULT_STREAM", "PCG32_MULT"]
