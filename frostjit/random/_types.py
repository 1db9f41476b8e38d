"""The array classes a generator works with, looked up once per backend and AD status."""
from __future__ import annotations

from dataclasses import dataclass

from ..array import registry
from ..array.flat import ArrayBase, is_flat
from ..trace.dtypes import Bool, Float16, Float32, Float64, Int64, UInt32, UInt64


@dataclass(frozen=True, slots=True)
class ArrayTypes:
    """The 1-D and static-vector classes of one backend (float ones AD-enabled when ``ad``)."""

    backend: object
    ad: bool
    Bool: type
    UInt32: type
    UInt64: type
    Int64: type
    Float32: type
    Float64: type
    Array2u: type
    Array4u: type
    Array2u64: type
    Array4f: type
    Array2f64: type
    Float16: type
    Array4f16: type

    @classmethod
    def of(cls, backend, ad: bool) -> "ArrayTypes":
        flat = lambda vt: registry.flat_type(backend, vt, ad)          # noqa: E731
        vec = lambda vt, n: registry.vector_type(backend, vt, n, ad)   # noqa: E731
        return cls(backend, ad, flat(Bool), flat(UInt32), flat(UInt64), flat(Int64), flat(Float32),
                   flat(Float64), vec(UInt32, 2), vec(UInt32, 4), vec(UInt64, 2), vec(Float32, 4),
                   vec(Float64, 2), flat(Float16), vec(Float16, 4))


def new_handle(a):
    """Another handle on the value of the 1-D array ``a`` (a copy of a scalar one-lane array), so
    that assigning to one generator's state never changes another's."""
    if isinstance(a, ArrayBase):
        return type(a)._from_node(a._node)
    return type(a)(a)


def check_mask(mask, who: str, types: ArrayTypes):
    """``mask`` as given if it is a Python bool or a ``Bool`` array of ``types``' backend."""
    if isinstance(mask, bool):
        return mask
    if isinstance(mask, types.Bool) or \
            (is_flat(mask) and mask._vt is Bool and mask._backend is types.backend):
        return mask
    raise TypeError(f"{who}: 'mask' must be a Python bool or a Bool array of the "
                    f"{types.backend.name} backend, not {type(mask).__name__}")


_PHILOX: dict = {}      # backend -> the (non-AD) Philox4x32 class, for fj.rng()'s generators


def register_philox(backend, cls) -> None:
    _PHILOX[backend] = cls


def philox_class(backend):
    """The ``Philox4x32`` class of ``backend`` (``TypeError`` if the backend has none)."""
    cls = _PHILOX.get(backend)
    if cls is None:
        raise TypeError(f"frostjit.rng(): no random number generator for the backend {backend}")
    return cls
