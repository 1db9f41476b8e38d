"""The texture classes of one backend: ``Texture{1,2,3}f``, ``f16``, ``f64`` and ``f8u`` (8-bit
unsigned normalized texels), each holding the tensor type of its element type."""
from __future__ import annotations

from ..array import registry
from ..tensor import registry as tensor_registry
from ..trace import dtypes as dt
from .texture import TextureBase

# VarType name -> suffix of Dr.Jit's texture names (``f8u``: UInt8 texels read as t / 255).
SUFFIX = {"Float16": "f16", "Float32": "f", "Float64": "f64", "UInt8": "f8u"}


def make_types(backend, module: str, ad: bool) -> dict:
    """Create the texture classes of ``backend`` (AD-enabled tensors with ``ad=True``)."""
    out = {}
    for vt in dt.ALL_TYPES:
        suffix = SUFFIX.get(vt.name)
        if suffix is None:
            continue
        tensor_type = tensor_registry.tensor_of(registry.flat_type(backend, vt, ad))
        for dim in (1, 2, 3):
            name = f"Texture{dim}{suffix}"
            normalized = not vt.is_float
            what = "8-bit unsigned normalized (UInt8 read as t / 255)" if normalized else vt.name
            out[name] = type(name, (TextureBase,), {
                "__slots__": (), "Dimension": dim, "_tensor_type": tensor_type, "__module__": module,
                "Normalized": normalized,
                "__doc__": f"{dim}-D texture of {what} texels ({tensor_type.__name__} storage"
                           f"{', AD-enabled' if ad and not normalized else ''}); see frostjit.texture.TextureBase."})
    return out
