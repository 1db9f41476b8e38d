"""Generate reference texture lookups with Dr.Jit itself (run by hand; its output is committed).

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so \
        python tests/texture/drjit_reference.py tests/texture/data/drjit_texture_reference.npz

This script imports ``drjit`` and never ``frostjit`` (two LLVMs must not share a process).  For
every case (dimension, channels, element type, filter and wrap mode) it stores the texel data,
the positions (random ones, texel centers and edges, the borders 0 and 1, positions outside
[0, 1]) and what Dr.Jit 1.5 (LLVM backend) returns for ``eval``, ``eval_fetch``,
``eval_cubic`` and ``eval_cubic_grad`` / ``eval_cubic_hessian``.  ``test_texture_drjit.py``
replays the cases with frostjit.
"""
import sys

import numpy as np

CASES = [
    # (dimension, resolution (x first), channels, dtype, filter, wrap)
    (1, (7,), 1, "f32", "Linear", "Clamp"), (1, (7,), 2, "f32", "Linear", "Repeat"),
    (1, (5,), 1, "f32", "Linear", "Mirror"), (1, (6,), 3, "f32", "Nearest", "Repeat"),
    (1, (4,), 1, "f32", "Nearest", "Mirror"), (1, (8,), 1, "f64", "Linear", "Clamp"),
    (1, (1,), 1, "f32", "Linear", "Repeat"), (1, (2,), 5, "f32", "Linear", "Mirror"),
    (2, (5, 4), 1, "f32", "Linear", "Clamp"), (2, (7, 3), 2, "f32", "Linear", "Repeat"),
    (2, (4, 6), 3, "f32", "Linear", "Mirror"), (2, (3, 5), 4, "f32", "Nearest", "Clamp"),
    (2, (6, 2), 1, "f32", "Nearest", "Repeat"), (2, (5, 5), 2, "f32", "Nearest", "Mirror"),
    (2, (8, 6), 1, "f64", "Linear", "Repeat"), (2, (3, 4), 6, "f32", "Linear", "Clamp"),
    (2, (1, 3), 1, "f32", "Linear", "Mirror"), (2, (16, 9), 4, "f64", "Nearest", "Clamp"),
    (3, (4, 3, 5), 1, "f32", "Linear", "Clamp"), (3, (3, 4, 2), 2, "f32", "Linear", "Repeat"),
    (3, (5, 2, 3), 3, "f32", "Linear", "Mirror"), (3, (2, 3, 4), 1, "f32", "Nearest", "Mirror"),
    (3, (4, 4, 4), 4, "f64", "Linear", "Clamp"),
]


def positions(rng, res):
    """Positions per axis: random (inside and outside [0, 1]), texel centers and edges, 0, 1."""
    n_rand = 160
    cols = []
    for k, r in enumerate(res):
        special = np.concatenate([np.arange(r) / r, (np.arange(r) + 0.5) / r, [0.0, 1.0, -0.0, 1e-7, 1 - 1e-7,
                                                                               -1 / r, 1 + 0.5 / r, 2.25, -1.75]])
        special = np.resize(special, 48)
        rand = rng.uniform(-1.5, 2.5, n_rand)
        cols.append(np.concatenate([rng.permutation(special) if k else special, rand]))
    return np.stack(cols)


def main(out_path: str) -> None:
    import drjit as dr
    from drjit import llvm

    rng = np.random.default_rng(20261201)
    store = {}
    for ci, (D, res, C, dtype, filt, wrap) in enumerate(CASES):
        np_t = np.float32 if dtype == "f32" else np.float64
        sfx = "f" if dtype == "f32" else "f64"
        data = rng.standard_normal(tuple(res[::-1]) + (C,)).astype(np_t)
        pos = positions(rng, res).astype(np_t)
        active = rng.uniform(size=pos.shape[1]) > 0.1
        Tensor = getattr(llvm, f"TensorX{sfx}")
        Texture = getattr(llvm, f"Texture{D}{sfx}")
        Flt = getattr(llvm, "Float" if dtype == "f32" else "Float64")
        Vec = getattr(llvm, f"Array{D}{sfx}")
        tex = Texture(Tensor(data), filter_mode=getattr(dr.FilterMode, filt), wrap_mode=getattr(dr.WrapMode, wrap))
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
    main(sys.argv[1] if len(sys.argv) > 1 else "drjit_texture_reference.npz")
