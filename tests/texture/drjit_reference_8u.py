"""Generate reference lookups of 8-bit textures (``Texture{D}f8u``) with Dr.Jit itself (run by hand;
its output is committed).

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so \
        python tests/texture/drjit_reference_8u.py tests/texture/data/drjit_texture8u_reference.npz

Imports ``drjit`` and never ``frostjit``.  For every case (dimension, channels, the positions'
precision, filter and wrap mode, sRGB decoding) it stores the ``uint8`` texels, the positions
(as ``drjit_reference.positions``: random, texel centers and edges, borders, outside [0, 1]), an
active mask and what Dr.Jit 1.5 (LLVM backend) returns for ``eval``, ``eval_fetch`` (linear
filtering), ``eval_cubic`` and ``eval_cubic_grad`` / ``eval_cubic_hessian``.
``test_texture_8u.py`` replays them with frostjit.
"""
import sys

import numpy as np

from drjit_reference import positions

CASES = [
    # (dimension, resolution (x first), channels, position precision, filter, wrap, srgb)
    (1, (7,), 1, "f32", "Linear", "Clamp", False), (1, (6,), 3, "f32", "Nearest", "Repeat", False),
    (1, (5,), 4, "f32", "Linear", "Mirror", True), (1, (8,), 2, "f64", "Linear", "Repeat", False),
    (2, (5, 4), 1, "f32", "Linear", "Clamp", False), (2, (7, 3), 2, "f32", "Linear", "Repeat", False),
    (2, (4, 6), 3, "f32", "Linear", "Mirror", True), (2, (3, 5), 4, "f32", "Nearest", "Clamp", True),
    (2, (6, 2), 5, "f32", "Linear", "Repeat", True), (2, (5, 5), 4, "f64", "Linear", "Clamp", False),
    (2, (4, 3), 1, "f16", "Linear", "Clamp", False), (2, (3, 3), 2, "f16", "Nearest", "Mirror", False),
    (3, (4, 3, 5), 1, "f32", "Linear", "Clamp", False), (3, (3, 4, 2), 4, "f32", "Linear", "Repeat", True),
    (3, (2, 3, 4), 2, "f64", "Nearest", "Mirror", False),
]
SUFFIX = {"f32": "f", "f64": "f64", "f16": "f16"}
DTYPE = {"f32": np.float32, "f64": np.float64, "f16": np.float16}


def main(out_path: str) -> None:
    import drjit as dr
    from drjit import llvm

    rng = np.random.default_rng(20261202)
    store = {}
    for ci, (D, res, C, prec, filt, wrap, srgb) in enumerate(CASES):
        data = rng.integers(0, 256, tuple(res[::-1]) + (C,)).astype(np.uint8)
        data.flat[:3] = [0, 255, 128][:data.size]
        pos = positions(rng, res).astype(DTYPE[prec])
        active = rng.uniform(size=pos.shape[1]) > 0.1
        Texture = getattr(llvm, f"Texture{D}f8u")
        Flt = getattr(llvm, {"f32": "Float", "f64": "Float64", "f16": "Float16"}[prec])
        Vec = getattr(llvm, f"Array{D}{SUFFIX[prec]}")
        tex = Texture(llvm.TensorXu8(data), filter_mode=getattr(dr.FilterMode, filt),
                      wrap_mode=getattr(dr.WrapMode, wrap), srgb=srgb)
        p = Vec(*[Flt(pos[k]) for k in range(D)]) if D > 1 else Flt(pos[0])
        act = llvm.Bool(active)
        key = f"case{ci}"
        store[key + "_data"] = data
        store[key + "_pos"] = pos
        store[key + "_active"] = active
        store[key + "_eval"] = np.array(tex.eval(p, act))
        if filt == "Linear":
            store[key + "_fetch"] = np.array([np.array(c) for c in tex.eval_fetch(p, act)])
        store[key + "_cubic"] = np.array(tex.eval_cubic(p, act))
        if D > 1:
            v, g, h = tex.eval_cubic_hessian(p, act)
            store[key + "_grad"] = np.array([np.array(x) for x in g])       # (C, D, N)
            store[key + "_hess"] = np.array([np.array(x) for x in h])       # (C, D, D, N)
        else:
            v, g = tex.eval_cubic_grad(p, act)
            store[key + "_grad"] = np.array([np.array(x) for x in g])
    np.savez_compressed(out_path, **store)
    print(f"wrote {len(CASES)} cases to {out_path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "drjit_texture8u_reference.npz")
