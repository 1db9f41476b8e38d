"""The tensor classes of one backend (``TensorXf``, ``TensorXu``, ...) and which class holds
which flat array type.

A tensor class exists for every element type the backend has a 1-D array type for; its name
comes from :data:`SUFFIX` (Dr.Jit's names).  Element types that frostjit does not have yet
(``Float16``, ``Int8``, ``UInt8``) are listed there already: once ``trace/dtypes.py`` defines
them, ``TensorXf16``, ``TensorXi8`` and ``TensorXu8`` exist without another change.
"""
from __future__ import annotations

from ..array import registry
from ..array.meta import ArrayMeta
from ..trace import dtypes as dt
from . import registry as tensor_registry
from .tensor import Tensor

# VarType name -> suffix of Dr.Jit's tensor name (TensorX<suffix>).
SUFFIX = {"Bool": "b", "Int8": "i8", "UInt8": "u8", "Int32": "i", "UInt32": "u", "Int64": "i64",
          "UInt64": "u64", "Float16": "f16", "Float32": "f", "Float64": "f64"}


def make_types(backend, module: str, ad: bool, arrays=None) -> dict:
    """Create (and register) the tensor classes of ``backend``; returns ``{name: class}``.

    With ``ad=True`` only the float tensors are new (their arrays are AD-capable); the
    integer and Bool tensors are the classes of the non-AD module, as for 1-D arrays.
    ``arrays`` is the key of the 1-D array classes in ``registry.flat_type`` when it is not
    ``backend`` (the scalar backend's ``ArrayXf``...: its tensors are not JIT types).
    """
    out = {}
    is_jit = arrays is None
    for vt in dt.ALL_TYPES:
        suffix = SUFFIX.get(vt.name)
        if suffix is None:
            continue
        name = f"TensorX{suffix}"
        array_type = registry.flat_type(backend if is_jit else arrays, vt, ad)
        cls = tensor_registry.lookup(array_type)
        if cls is None:
            meta = ArrayMeta(vt, backend, is_jit=is_jit, is_diff=ad and vt.is_float, is_tensor=True, shape=())
            cls = type(name, (Tensor,), {
                "__slots__": (), "_array_type": array_type, "__module__": module, "__meta__": meta,
                "IsJIT": is_jit,
                "__doc__": f"N-dimensional tensor of {vt.name} ({backend.name} backend"
                           f"{', AD-enabled' if ad and vt.is_float else ''}): a flat "
                           f"{array_type.__name__} array in C order and a shape."})
            tensor_registry.register(array_type, cls)
            registry.register_type(cls)         # the type traits find it by its __meta__
        out[name] = cls
    return out
