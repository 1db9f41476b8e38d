"""Generate reference results of ``resample`` and ``convolve`` with Dr.Jit itself (run by hand;
its output is committed).

    DRJIT_LIBLLVM_PATH=/usr/lib/x86_64-linux-gnu/libLLVM-19.so \
        python tests/tensor/drjit_resample_reference.py tests/tensor/data/drjit_resample_reference.npz

Imports ``drjit`` and never ``frostjit``.  Each case stores its input, its arguments (as the
key) and Dr.Jit 1.5's result; ``test_tensor_resample.py`` replays them with frostjit.
"""
import sys

import numpy as np

FILTERS = ["box", "linear", "hamming", "cubic", "lanczos", "gaussian"]
BOUNDARIES = ["zero", "nearest", "wrap", "reflect", "mirror"]


def cases():
    """(name, input shape, function name, keyword arguments)."""
    out = []
    for f in FILTERS:
        for b in ("zero", "mirror") if f in ("box", "linear") else BOUNDARIES:
            out.append((f"rs_{f}_{b}_down", (13,), "resample", dict(shape=(5,), filter=f, boundary=b)))
            out.append((f"rs_{f}_{b}_up", (6,), "resample", dict(shape=(14,), filter=f, boundary=b)))
    out.append(("rs_2d_cubic", (7, 9, 3), "resample", dict(shape=(4, 13, 3), filter="cubic")))
    out.append(("rs_2d_lanczos_wrap", (5, 6), "resample", dict(shape=(11, 3), filter="lanczos", boundary="wrap")))
    for b in BOUNDARIES:
        out.append((f"cv_list_{b}", (11,), "convolve", dict(filter=[1.0, -2.0, 3.5], boundary=b)))
        out.append((f"cv_list4_{b}_norm", (9,), "convolve", dict(filter=[1.0, 2.0, 3.0, 4.0], boundary=b,
                                                                 normalize=True)))
        out.append((f"cv_gauss_{b}", (12,), "convolve", dict(filter="gaussian", filter_radius=1.5, boundary=b)))
        out.append((f"cv_gauss_{b}_norm", (12,), "convolve", dict(filter="gaussian", filter_radius=2.0, boundary=b,
                                                                  normalize=True)))
    out.append(("cv_box_r2", (10,), "convolve", dict(filter="box", filter_radius=2)))
    out.append(("cv_lanczos", (10,), "convolve", dict(filter="lanczos", filter_radius=1.0, boundary="reflect")))
    out.append(("cv_2d_axis1", (4, 7), "convolve", dict(filter=[1.0, 1.0], axis=1)))
    out.append(("cv_2d_all", (5, 6), "convolve", dict(filter=[1.0, 0.0, 2.0], boundary="nearest")))
    out.append(("cv_3d_axes", (3, 4, 5), "convolve", dict(filter="linear", filter_radius=1.5, axis=(0, 2))))
    return out


def main(out_path: str) -> None:
    import drjit as dr
    from drjit.llvm import TensorXf

    rng = np.random.default_rng(20261202)
    store = {}
    for name, shape, fn, kwargs in cases():
        x = rng.standard_normal(shape).astype(np.float32)
        store[name + "_in"] = x
        store[name + "_out"] = np.array(getattr(dr, fn)(TensorXf(x), **kwargs))
    np.savez_compressed(out_path, **store)
    print(f"wrote {len(cases())} cases to {out_path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "drjit_resample_reference.npz")
