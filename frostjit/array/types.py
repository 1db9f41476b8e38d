"""Creation of the concrete array classes for one backend (and AD status)."""
from __future__ import annotations

from ..trace import dtypes as dt
from . import registry
from .families import make_families
from .flat import ArrayBase
from .meta import ArrayMeta, Dynamic

FLAT_NAMES = {dt.Bool: "Bool", dt.Int8: "Int8", dt.UInt8: "UInt8", dt.Int32: "Int32", dt.UInt32: "UInt32",
              dt.Int64: "Int64", dt.UInt64: "UInt64", dt.Float16: "Float16", dt.Float32: "Float32",
              dt.Float64: "Float64"}


def make_types(backend, module: str, ad: bool) -> dict:
    """Create (and register) the array classes of ``backend``; returns ``{name: class}``.

    With ``ad=True`` only the float types are new (AD-capable) classes; integer
    and Bool types are shared with the non-AD module.  Each class declares what it is in
    ``__meta__`` (:class:`~.meta.ArrayMeta`), which the type traits read; the static, nested,
    dynamic, matrix, complex and quaternion families come from one table (:mod:`.families`).
    """
    out = {}
    for vt, name in FLAT_NAMES.items():
        if ad and not vt.is_float:
            cls = registry.flat_type(backend, vt, False)
        else:
            meta = ArrayMeta(vt, backend, is_jit=True, is_diff=ad, shape=(Dynamic,))
            cls = type(name, (ArrayBase,), {"__slots__": (), "_vt": vt, "_backend": backend, "_is_ad": ad,
                                            "__module__": module, "__meta__": meta,
                                            "__doc__": f"1-D JIT array of {vt.name} ({backend.name} backend"
                                                       f"{', AD-enabled' if ad else ''})."})
            registry.register_flat(backend, vt, ad, cls)
            registry.register_type(cls)
        out[name] = cls
    out["Float"], out["Int"], out["UInt"] = out["Float32"], out["Int32"], out["UInt32"]
    out.update(make_families(backend, module, ad, {vt: out[name] for vt, name in FLAT_NAMES.items()}))
    return out
