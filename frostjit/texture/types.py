"""The texture classes of one backend: ``Texture{1,2,3}f`` and ``Texture{1,2,3}f64`` (plus
``f16`` once ``Float16`` exists), each holding the tensor type of its element type."""
from __future__ import annotations

from ..array import registry
from ..tensor import registry as tensor_registry
from ..trace import dtypes as dt
from .texture import TextureBase

# VarType name -> suffix of Dr.Jit's texture names.  (Dr.Jit's 8-bit ``Texture{D}f8u`` stores
# UInt8 texels read as normalized floats: not available until frostjit has UInt8.)
SUFFIX = {"Float16": "f16", "Float32": "f", "Float64": "f64"}


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
            out[name] = type(name, (TextureBase,), {
                "__slots__": (), "Dimension": dim, "_tensor_type": tensor_type, "__module__": module,
                "__doc__": f"{dim}-D texture of {vt.name} texels ({tensor_type.__name__} storage"
                           f"{', AD-enabled' if ad else ''}); see frostjit.texture.TextureBase."})
    return out
