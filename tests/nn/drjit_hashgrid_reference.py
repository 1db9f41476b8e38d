"""Generate reference results of Dr.Jit 1.5's hash encodings with Dr.Jit itself (run by hand;
its output is committed).

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so \
        python tests/nn/drjit_hashgrid_reference.py tests/nn/data/drjit_hashgrid_reference.json

Imports ``drjit`` (inside :func:`main`) and never ``frostjit``.  Each case of :data:`CASES`
builds an encoding with the default initialization (its first parameters are stored), sets the
parameters to ``0.01 * k``, evaluates it at the case's points and differentiates
``sum_k (k + 1) * out[k]`` into the parameters and the first coordinate;
``test_permuto.py`` replays them with frostjit.
"""
import json
import sys

SMALL = dict(n_levels=2, n_features_per_level=2, hashmap_size=8, base_resolution=3, per_level_scale=1.5)
X2 = [[0.1, 0.55, 0.93, 0.5, 0.25], [0.2, 0.7, 0.05, 0.5, 0.75]]
X3 = [[0.1, 0.55, 0.93, 0.37], [0.2, 0.7, 0.05, 0.81], [0.66, 0.31, 0.44, 0.02]]
D3 = dict(n_levels=3, n_features_per_level=2, hashmap_size=32, base_resolution=2, per_level_scale=1.7)

#: name -> (class name, dimension, points, keyword arguments)
CASES = {
    "permuto2": ("PermutoEncoding", 2, X2, SMALL),
    "permuto2_align": ("PermutoEncoding", 2, X2, dict(SMALL, align_corners=True)),
    "permuto3": ("PermutoEncoding", 3, X3, D3),
    "permuto3_f4_dense": ("PermutoEncoding", 3, X3, dict(D3, n_features_per_level=4, hashmap_size=4096)),
    "permuto2_smooth": ("PermutoEncoding", 2, X2, dict(SMALL, smooth_weight_gradients=True, smooth_weight_lambda=0.5)),
    "grid2_smooth": ("HashGridEncoding", 2, X2, dict(SMALL, smooth_weight_gradients=True, smooth_weight_lambda=0.5)),
    "grid2_torchngp_align": ("HashGridEncoding", 2, X2, dict(SMALL, torchngp_compat=True, align_corners=True)),
    "grid2_torchngp": ("HashGridEncoding", 2, X2, dict(SMALL, torchngp_compat=True)),
}

#: Integer vertex coordinates for the permutohedral hash and indexing (Int32, reinterpreted as UInt32).
KEYS = [[0, 1, 0, 5, 123, -1], [0, 0, 1, 3, 77, 2], [0, 2, 0, 11, 9, -3]]


def main(path: str) -> None:
    import numpy as np
    import drjit as dr
    from drjit.llvm import Int32, UInt32
    from drjit.llvm.ad import Float

    out = {}
    for name, (cls, D, xs, kw) in CASES.items():
        e = getattr(dr.hashgrid, cls)(Float, D, **kw)
        res = {"init": e.data.numpy()[:6].tolist(), "n_params": e.n_params, "offsets": e._level_offsets}
        p = Float(np.arange(e.n_params, dtype=np.float64) * 0.01)
        x0 = Float(xs[0])
        dr.enable_grad(p, x0)
        e.data = p
        o = e([x0] + [Float(x) for x in xs[1:]])
        res["out"] = [c.numpy().tolist() for c in o]
        dr.backward(dr.sum(sum((k + 1) * c for k, c in enumerate(o))))
        res["grad_p"] = dr.grad(p).numpy().tolist()
        res["grad_x0"] = dr.grad(x0).numpy().tolist()
        res["repr"] = repr(e)
        out[name] = res
    e = dr.hashgrid.PermutoEncoding(Float, 3, **D3)
    k = [Int32(c) for c in KEYS]
    out["permuto3_hash"] = e.hash(k).numpy().tolist()
    out["permuto3_index"] = [e.indexing_function([UInt32(c) for c in k], lv).numpy().tolist() for lv in range(3)]
    with open(path, "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
