"""Render a 3-D density volume by trilinear lookups along rays (a 3-D texture example).

The volume is a ``Texture3f`` holding a few Gaussian blobs; every pixel of an orthographic
image casts a ray along z, samples the density at ``--samples`` points (trilinear lookups,
one lazy expression: one kernel for the whole image) and integrates the absorption
(``transmittance = exp(-sum(density) dz)``).  The result is checked against a NumPy
implementation of the same trilinear filtering.

    python examples/volume_lookup.py                 # 64^3 volume, 256^2 image, writes a PNG
    python examples/volume_lookup.py --res 16 --image 32 --no-png
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

import frostjit as fj
from frostjit.llvm import Array3f, Float, TensorXf, Texture3f, UInt32

BLOBS = [((0.35, 0.4, 0.5), 0.12, 18.0), ((0.65, 0.55, 0.45), 0.09, 25.0), ((0.5, 0.7, 0.6), 0.06, 40.0)]


def density_volume(res: int) -> np.ndarray:
    """A ``(res, res, res, 1)`` density grid (z, y, x, channel) of Gaussian blobs."""
    z, y, x = (np.mgrid[0:res, 0:res, 0:res] + 0.5) / res
    d = np.zeros((res, res, res))
    for (cx, cy, cz), radius, peak in BLOBS:
        d += peak * np.exp(-((x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2) / (2 * radius ** 2))
    return d[..., None].astype(np.float32)


def render(volume: np.ndarray, image: int, samples: int) -> np.ndarray:
    """The transmittance image (``image x image``) of ``volume`` seen along z."""
    tex = Texture3f(TensorXf(volume), filter_mode=fj.FilterMode.Linear, wrap_mode=fj.WrapMode.Clamp)
    i = fj.arange(UInt32, image * image)
    x = (Float(i % image) + 0.5) / image
    y = (Float(i // image) + 0.5) / image
    optical_depth = fj.zeros(Float, image * image)
    dz = 1.0 / samples
    for k in range(samples):
        z = (k + 0.5) * dz
        optical_depth += tex.eval(Array3f(x, y, z))[0] * dz
    return fj.exp(-optical_depth).numpy().reshape(image, image)


def trilinear_numpy(volume: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Reference: trilinear filtering with clamped edges at positions ``p`` (N, 3) in [0, 1]^3."""
    res = np.array(volume.shape[2::-1])               # x, y, z
    f = p * res - 0.5
    i0 = np.floor(f).astype(np.int64)
    w1 = f - i0
    out = np.zeros(len(p))
    for corner in np.ndindex(2, 2, 2):
        c = np.array(corner)
        idx = np.clip(i0 + c, 0, res - 1)
        w = np.prod(np.where(c == 1, w1, 1 - w1), axis=1)
        out += w * volume[idx[:, 2], idx[:, 1], idx[:, 0], 0]
    return out


def render_numpy(volume: np.ndarray, image: int, samples: int) -> np.ndarray:
    x, y = np.meshgrid((np.arange(image) + 0.5) / image, (np.arange(image) + 0.5) / image)
    depth = np.zeros(image * image)
    for k in range(samples):
        z = np.full(image * image, (k + 0.5) / samples)
        depth += trilinear_numpy(volume, np.stack([x.ravel(), y.ravel(), z], axis=1)) / samples
    return np.exp(-depth).reshape(image, image)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--res", type=int, default=64, help="volume resolution (default 64)")
    ap.add_argument("--image", type=int, default=256, help="image resolution (default 256)")
    ap.add_argument("--samples", type=int, default=64, help="samples per ray (default 64)")
    ap.add_argument("--out", default="volume_lookup.png")
    ap.add_argument("--no-png", action="store_true")
    a = ap.parse_args(argv)
    volume = density_volume(a.res)
    img = render(volume, a.image, a.samples)
    ref = render_numpy(volume, a.image, a.samples)
    err = float(np.abs(img - ref).max())
    print(f"rendered a {a.res}^3 volume into {a.image}x{a.image} pixels ({a.samples} samples per ray); "
          f"transmittance {img.min():.3f}..{img.max():.3f}, max difference to NumPy {err:.2e}")
    if not a.no_png:
        try:
            from matplotlib.figure import Figure      # optional dependency
        except ImportError:
            print("matplotlib is not installed: no picture (pip install -e '.[demo]')")
        else:
            fig = Figure(figsize=(4, 4))
            ax = fig.add_subplot()
            ax.imshow(img, cmap="gray", origin="lower", vmin=0, vmax=1)
            ax.set_axis_off()
            fig.savefig(a.out, dpi=100, bbox_inches="tight")
            print(f"wrote {a.out}")
    return 0 if err < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
