"""A NumPy (float64) implementation of Dr.Jit's documented texture filtering, the reference
of the texture tests: texel ``i`` covers ``[i, i + 1)`` in texel coordinates ``p * res``;
nearest takes ``floor(p * res)``; linear the two texels around ``p * res - 0.5`` weighted by
the fraction; cubic the uniform cubic B-spline over four texels; indices outside the texture
are clamped, repeated or mirrored (the edge texel repeated)."""
from __future__ import annotations

import itertools

import numpy as np


def wrap(i: np.ndarray, res: int, mode: str) -> np.ndarray:
    if mode == "Clamp":
        return np.clip(i, 0, res - 1)
    if mode == "Repeat":
        return np.mod(i, res)
    p = np.mod(i, 2 * res)
    return np.where(p >= res, 2 * res - 1 - p, p)


def _fetch(data: np.ndarray, idx: list) -> np.ndarray:
    """Texels at per-axis indices (x first): (N, C)."""
    return data[tuple(idx[::-1])]


def eval_nearest(data, pos, mode):
    res = data.shape[-2::-1]
    idx = [wrap(np.floor(p * r).astype(np.int64), r, mode) for p, r in zip(pos, res)]
    return _fetch(data, idx)


def eval_linear(data, pos, mode):
    res = data.shape[-2::-1]
    taps = []
    for p, r in zip(pos, res):
        x = p * r - 0.5
        i = np.floor(x).astype(np.int64)
        f = x - i
        taps.append(([wrap(i, r, mode), wrap(i + 1, r, mode)], [1 - f, f]))
    out = 0.0
    for corner in itertools.product(range(2), repeat=len(pos)):
        w = np.prod([taps[k][1][c] for k, c in enumerate(corner)], axis=0)
        out = out + w[:, None] * _fetch(data, [taps[k][0][c] for k, c in enumerate(corner)])
    return out


def _bspline(t, order):
    if order == 0:
        return [(1 - t) ** 3 / 6, (3 * t ** 3 - 6 * t ** 2 + 4) / 6, (-3 * t ** 3 + 3 * t ** 2 + 3 * t + 1) / 6, t ** 3 / 6]
    if order == 1:
        return [-(1 - t) ** 2 / 2, (9 * t ** 2 - 12 * t) / 6, (-9 * t ** 2 + 6 * t + 3) / 6, t ** 2 / 2]
    return [1 - t, 3 * t - 2, 1 - 3 * t, t]


def eval_cubic(data, pos, mode, orders=None):
    """The B-spline interpolant; ``orders`` (derivative order per axis) gives a derivative
    along the unit position (scaled by ``res ** order``)."""
    res = data.shape[-2::-1]
    D = len(pos)
    orders = orders or (0,) * D
    taps = []
    for p, r, o in zip(pos, res, orders):
        x = p * r - 0.5
        i = np.floor(x).astype(np.int64)
        t = x - i
        taps.append(([wrap(i + k, r, mode) for k in (-1, 0, 1, 2)], [w * r ** o for w in _bspline(t, o)]))
    out = 0.0
    for corner in itertools.product(range(4), repeat=D):
        w = np.prod([taps[k][1][c] for k, c in enumerate(corner)], axis=0)
        out = out + w[:, None] * _fetch(data, [taps[k][0][c] for k, c in enumerate(corner)])
    return out
