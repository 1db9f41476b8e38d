"""``resample``, ``convolve`` and ``upsample`` of tensors and 1-D arrays with Dr.Jit's filters.

Both work one axis at a time (a sequence of 1-D passes).  A pass computes, for each output
sample ``j`` of the axis, its input taps and weights in NumPy (they depend only on the sizes)
and evaluates ``out[.., j, ..] = sum_q w[j, q] * x[.., tap[j, q], ..]`` as one lazy expression
(a gather per tap), so passes fuse with their consumer and AD and frozen functions see
ordinary gathers.

* **Filters** (Dr.Jit's presets, Pillow's definitions): ``box`` (support 0.5, ``-0.5 < x <=
  0.5``), ``linear`` (tent, 1), ``hamming`` (1), ``cubic`` (Keys, ``a = -0.5``, 2),
  ``lanczos`` (3 lobes, 3), ``gaussian`` (standard deviation 0.5, truncated at 4 of them and
  shifted down to reach 0 there, 2); or a callable with a ``filter_radius``.
* **resample** follows Pillow's ``Image.resize``: output sample ``j`` is centered at
  ``(j + 0.5) n / m`` in the input; when shrinking the filter is stretched by ``n / m``; the
  weights of each sample are normalized to sum to 1.
* **convolve** keeps the resolution: a sequence kernel is applied as ``numpy.convolve(x, k,
  "same")``; a callable is sampled at the integer offsets ``-r .. r``, a preset at ``v / r``
  over its support times ``r`` (``out[i] = sum_v f(v) x[i + v]``).
* **Boundaries** (``scipy.ndimage``'s names): ``zero`` (taps outside are dropped; with
  ``resample`` and ``normalize=True`` the remaining weights are renormalized), ``nearest``,
  ``wrap``, ``reflect`` (edge sample repeated) and ``mirror`` (not repeated).
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from ..array import registry as array_registry
from ..array.flat import ArrayBase, is_flat
from ..array.vector import VectorBase
from ..errors import FilterArgumentError
from ..functions.creation import arange, zeros
from ..functions.evaluation import width
from ..functions.math import clip, floor_mod, fma, select
from ..functions.memory import evaluate_together, gather
from ..trace.dtypes import Bool, Int32, Int64
from . import registry
from .axes import normalize_axes
from .base import TensorBase, handle, size_of
from .broadcast import expand
from .view import index_type

_BOUNDARIES = ("zero", "nearest", "wrap", "reflect", "mirror")
_MODES = (None, "evaluated", "symbolic")


def _box(x):
    return np.where((x > -0.5) & (x <= 0.5), 1.0, 0.0)


def _linear(x):
    return np.maximum(0.0, 1.0 - np.abs(x))


def _hamming(x):
    return np.where(np.abs(x) < 1.0, np.sinc(x) * (0.54 + 0.46 * np.cos(np.pi * x)), 0.0)


def _cubic(x):
    a = -0.5
    x = np.abs(x)
    return np.where(x < 1.0, ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0,
                    np.where(x < 2.0, (((x - 5.0) * x + 8.0) * x - 4.0) * a, 0.0))


def _lanczos(x):
    return np.where((x >= -3.0) & (x < 3.0), np.sinc(x) * np.sinc(x / 3.0), 0.0)


def _gaussian(x):
    return np.where(np.abs(x) < 2.0, np.maximum(0.0, np.exp(-2.0 * x * x) - math.exp(-8.0)), 0.0)


#: name -> (support radius, the filter on a NumPy array of offsets)
FILTERS = {"box": (0.5, _box), "linear": (1.0, _linear), "hamming": (1.0, _hamming), "cubic": (2.0, _cubic),
           "lanczos": (3.0, _lanczos), "gaussian": (2.0, _gaussian)}


def _filter(who: str, filt, radius):
    """``(support, vectorized function)`` of a preset name or a callable."""
    if isinstance(filt, str):
        if filt not in FILTERS:
            raise FilterArgumentError(f"{who}: unknown filter {filt!r} (expected one of {', '.join(map(repr, FILTERS))}, "
                             "or a callable)")
        return FILTERS[filt]
    if callable(filt):
        if radius is None:
            raise FilterArgumentError(f"{who}: 'filter_radius' must be specified when using a custom "
                                          f"(continuous) filter function")
        return float(radius), np.vectorize(lambda v: float(filt(float(v))), otypes=[np.float64])
    raise TypeError(f"{who}: 'filter' must be a filter name or a callable, got {type(filt).__name__}")


def map_boundary(i: np.ndarray, n: int, boundary: str) -> np.ndarray:
    """Sample indices ``i`` (any integers) mapped into ``[0, n)`` by ``boundary`` (not ``zero``)."""
    if boundary == "nearest":
        return np.clip(i, 0, n - 1)
    if boundary == "wrap":
        return i % n
    if boundary == "reflect":             # c b a | a b c d
        p = i % (2 * n)
        return np.where(p >= n, 2 * n - 1 - p, p)
    if n == 1:                            # mirror: d c b | a b c d
        return np.zeros_like(i)
    p = i % (2 * n - 2)
    return np.where(p >= n, 2 * n - 2 - p, p)


def _check(who: str, boundary: str, mode) -> None:
    if boundary not in _BOUNDARIES:
        raise FilterArgumentError(f"{who}: invalid boundary mode {boundary!r} (expected one of "
                         f"{', '.join(map(repr, _BOUNDARIES))})")
    if mode not in _MODES:
        raise FilterArgumentError(f"{who}: 'mode' must be None, 'evaluated', or 'symbolic' (got {mode!r})")


def _resample_taps(n: int, m: int, support: float, fn, boundary: str):
    """Taps ``(m, K)`` and weights ``(m, K)`` of resampling ``n`` samples to ``m`` (Pillow's scheme);
    unused tap slots have weight 0 and tap -1."""
    scale = n / m
    fs = max(scale, 1.0)
    sup = support * fs
    rows = []
    for j in range(m):
        c = (j + 0.5) * scale
        if boundary == "zero":
            lo, hi = max(int(c - sup + 0.5), 0), min(int(c + sup + 0.5), n)
        else:
            lo, hi = math.floor(c - sup + 0.5), math.floor(c + sup + 0.5)
        i = np.arange(lo, hi)
        w = fn((i - c + 0.5) / fs)
        s = w.sum()
        if s != 0:
            w = w / s
        rows.append((i if boundary == "zero" else map_boundary(i, n, boundary), w))
    return _table(rows)


def _table(rows):
    K = max((len(i) for i, _ in rows), default=0)
    taps = np.full((len(rows), K), -1, np.int64)
    weights = np.zeros((len(rows), K))
    for j, (i, w) in enumerate(rows):
        taps[j, :len(i)] = i
        weights[j, :len(w)] = w
    return taps, weights


def _split(shape: tuple, k: int):
    """``(outer, n, inner)`` of axis ``k`` of ``shape``."""
    return size_of(shape[:k]), shape[k], size_of(shape[k + 1:])


def _lanes(x: ArrayBase, outer, m: int, n: int, inner):
    """For an output ``(outer, m, inner)`` read from ``x`` seen as ``(outer, n, inner)``: the
    index class, each lane's position ``j`` on the axis (Int32), and its source offset without
    the axis (``o * n * inner + t``, or None)."""
    total = outer * m * inner
    idx_t = index_type(x._backend, max(total, outer * n * inner, 1))
    idx = arange(idx_t, total)
    j = idx // inner if inner != 1 else idx
    rest = None
    if outer != 1:
        rest = (j // m) * (n * inner)
        j = j % m
    if inner != 1:
        t = idx % inner
        rest = t if rest is None else rest + t
    return idx_t, j, rest


def _apply_table(x: ArrayBase, outer, n: int, inner, taps: np.ndarray, weights: np.ndarray) -> ArrayBase:
    """``out[o, j, t] = sum_q weights[j, q] * x[o, taps[j, q], t]`` (taps of -1 skipped); the
    columns of the tables are small arrays gathered by ``j``."""
    m, K = taps.shape
    at = type(x)
    backend = x._backend
    idx_t, j, rest = _lanes(x, outer, m, n, inner)
    ftype = array_registry.flat_type(backend, at._vt)
    btype = array_registry.flat_type(backend, Bool)
    acc = None
    for q in range(K):
        col, wcol = taps[:, q], weights[:, q]
        valid = col >= 0
        if not valid.any():
            continue
        tap = gather(idx_t, idx_t(np.maximum(col, 0).astype(idx_t._vt.np_dtype)), j)
        w = gather(ftype, ftype(wcol.astype(ftype._vt.np_dtype)), j)
        active = True if valid.all() else gather(btype, btype(valid), j)
        src = tap * inner if inner != 1 else tap
        if rest is not None:
            src = src + rest
        v = gather(at, x, src, active)
        acc = v * w if acc is None else fma(v, w, acc)
    return acc if acc is not None else zeros(at, outer * m * inner)


def _apply_kernel(x: ArrayBase, outer, n: int, inner, offsets: list, weights: list, boundary: str,
                  normalize: bool) -> ArrayBase:
    """``out[o, i, t] = sum_q weights[q] * x[o, i + offsets[q], t]`` with the boundary rule for
    positions outside ``[0, n)`` (computed in the kernel: no tables)."""
    at = type(x)
    backend = x._backend
    idx_t, j, rest = _lanes(x, outer, n, n, inner)
    i32 = array_registry.flat_type(backend, Int32 if n < 2**31 else Int64)
    i = i32(j)
    acc = None
    wsum = None
    for v, w in zip(offsets, weights):
        if w == 0:
            continue
        p = i + v if v != 0 else i
        active = True
        if boundary == "zero":
            if v != 0:
                active = (p >= 0) & (p < n)
        elif v != 0:
            p = _map_jit(p, n, boundary)
        src = idx_t(p)
        src = src * inner if inner != 1 else src
        if rest is not None:
            src = src + rest
        val = gather(at, x, src, active)
        acc = val * w if acc is None else fma(val, w, acc)
        if normalize and boundary == "zero":
            fw = at(w) if not at._is_ad else array_registry.flat_type(backend, at._vt)(w)
            contrib = fw if active is True else select(active, fw, 0.0)
            wsum = contrib if wsum is None else wsum + contrib
    if acc is None:
        return zeros(at, outer * n * inner)
    if normalize:
        if boundary == "zero":
            return acc / wsum
        total = sum(weights)
        return acc / total if total != 0 else acc
    return acc


def _map_jit(p, n: int, boundary: str):
    """Positions ``p`` (a signed integer array) mapped into ``[0, n)`` by ``boundary``."""
    if boundary == "nearest":
        return clip(p, 0, n - 1)
    if boundary == "wrap":
        return floor_mod(p, n)
    if boundary == "reflect":
        q = floor_mod(p, 2 * n)
        return select(q >= n, (2 * n - 1) - q, q)
    if n == 1:
        return p * 0
    q = floor_mod(p, 2 * n - 2)
    return select(q >= n, (2 * n - 2) - q, q)


def _as_tensor(source, who: str):
    if isinstance(source, TensorBase):
        return source, False
    if is_flat(source):
        return registry.tensor_of(type(source))._from_array(handle(source), (width(source),)), True
    raise TypeError(f"{who}: expected a tensor or a 1-D array, got {type(source).__name__}")


def _float_source(t, who: str) -> None:
    if not t._array._vt.is_float:
        raise TypeError(f"{who}: needs a floating point tensor or array, got {type(t).__name__}")


def resample(source, shape, filter="cubic", filter_radius=None, boundary: str = "zero", mode=None):
    """Resample a tensor (or 1-D array) to ``shape`` along every axis whose size changes.

    Parameters
    ----------
    source : tensor or 1-D array (floating point)
    shape : sequence of ints
        The output shape (one entry per axis, each >= 1).
    filter : str or callable
        ``"box"``, ``"linear"``, ``"hamming"``, ``"cubic"`` (default), ``"lanczos"``,
        ``"gaussian"`` or a function of the offset (then ``filter_radius`` is required).
    filter_radius : float, optional
        The support of a custom filter, in output samples.
    boundary : str
        ``"zero"`` (default), ``"nearest"``, ``"wrap"``, ``"reflect"`` or ``"mirror"``.
    mode : None, "evaluated" or "symbolic"
        Accepted for Dr.Jit compatibility (one lazy expression per axis either way).

    Returns
    -------
    The resampled tensor (a 1-D array for a 1-D array input), of the source's type.
    """
    who = "resample()"
    _check(who, boundary, mode)
    t, flat = _as_tensor(source, who)
    _float_source(t, who)
    support, fn = _filter(who, filter, filter_radius)
    cur = t.shape
    target = tuple(operator.index(d) for d in shape)
    if len(target) != len(cur):
        raise FilterArgumentError(f"{who}: 'source' and 'shape' must have the same number of axes (source "
                                      f"shape {cur}, 'shape' {target})")
    if any(d <= 0 for d in target) or any(d == 0 for d in cur):
        raise FilterArgumentError(f"{who}: source and target resolutions must not be zero (from {cur} to {target})")
    x = handle(t._array)
    shape_now = list(cur)
    for k, m in enumerate(target):
        n = shape_now[k]
        if m == n:
            continue
        outer, _, inner = _split(tuple(shape_now), k)
        taps, weights = _resample_taps(n, m, support, fn, boundary)
        x = _apply_table(x, outer, n, inner, taps, weights)
        shape_now[k] = m
    return x if flat else registry.tensor_of(type(x))._from_array(x, target)


def convolve(source, filter, filter_radius=None, *, axis=None, boundary: str = "zero", normalize: bool = False,
             mode=None):
    """Convolve axes of a tensor (or 1-D array) with a 1-D filter, keeping its shape.

    Parameters
    ----------
    source : tensor or 1-D array (floating point)
    filter : str, callable or sequence of numbers
        A preset name (its support scaled by ``filter_radius``, default 1), a function of the
        integer offset (sampled at ``-r .. r``; ``filter_radius`` required), or a discrete kernel
        applied as ``numpy.convolve(x, kernel, "same")`` (``filter_radius`` must be None).
    axis : int, tuple of ints or None
        The axes to filter (default: all).
    boundary : str
        ``"zero"`` (default), ``"nearest"``, ``"wrap"``, ``"reflect"`` or ``"mirror"``.
    normalize : bool
        Divide by the sum of the weights used (for ``"zero"``: of the taps inside the array).
    """
    who = "convolve()"
    _check(who, boundary, mode)
    t, flat = _as_tensor(source, who)
    _float_source(t, who)
    offsets, weights = _kernel(who, filter, filter_radius)
    shape = t.shape
    axes = range(len(shape)) if axis is None else normalize_axes(axis, len(shape), who)
    x = handle(t._array)
    for k in axes:
        outer, n, inner = _split(shape, k)
        if n == 0:
            continue
        x = _apply_kernel(x, outer, n, inner, offsets, weights, boundary, normalize)
    return x if flat else registry.tensor_of(type(x))._from_array(x, shape)


def _kernel(who: str, filt, radius):
    """``(offsets, weights)`` of a convolution: ``out[i] = sum weights[q] * x[i + offsets[q]]``."""
    if isinstance(filt, (ArrayBase, VectorBase)) and np.ndim(filt) == 1:
        filt = np.asarray(filt)         # a 1-D array of weights (Float, ArrayXf) is a sequence too (Dr.Jit)
    if isinstance(filt, (list, tuple, np.ndarray)):
        if radius is not None:
            raise FilterArgumentError(f"{who}: 'filter_radius' must be None when using a discrete filter "
                                      f"kernel")
        if len(filt) == 0:
            raise FilterArgumentError(f"{who}: the filter kernel is empty")
        k = [float(v) for v in np.asarray(filt, dtype=np.float64).reshape(-1)]
        c = (len(k) - 1) // 2
        return [c - q for q in range(len(k))], k
    if isinstance(filt, str):
        support, fn = _filter(who, filt, None)
        r = 1.0 if radius is None else float(radius)
        R = math.floor(support * r)
        v = np.arange(-R, R + 1)
        return v.tolist(), fn(v / r).tolist()
    support, fn = _filter(who, filt, radius)
    R = math.floor(support)
    v = np.arange(-R, R + 1)
    return v.tolist(), fn(v.astype(np.float64)).tolist()


def upsample(t, shape=None, scale_factor=None):
    """Up-sample a tensor (nearest neighbour: each element repeated, integer factors) or a
    texture (a new texture sampled at its new texel centers with its filter mode).

    ``shape`` (the new shape; a texture's may leave out the channels) or ``scale_factor``
    (integers, one per axis), not both.  Dr.Jit deprecates this in favour of
    :func:`resample`.
    """
    who = "upsample()"
    warnings.warn("frostjit.upsample() is deprecated (as in Dr.Jit 1.5), please use frostjit.resample() instead",
                  DeprecationWarning, stacklevel=2)
    if (shape is None) == (scale_factor is None):
        raise TypeError(f"{who}: give either 'shape' or 'scale_factor'")
    if getattr(type(t), "IsTexture", False):
        return _upsample_texture(t, shape, scale_factor, who)
    if not isinstance(t, TensorBase):
        raise TypeError(f"{who}: expected a tensor or a texture, got {type(t).__name__}")
    cur = t.shape
    if scale_factor is not None:
        factors = []
        for f in scale_factor:
            if int(f) != f or f < 1:
                raise TypeError(f"{who}: scale_factor must hold integers >= 1, got {tuple(scale_factor)}")
            factors.append(int(f))
    else:
        factors = []
        for d, s in zip(cur, shape):
            if s % d:
                raise TypeError(f"{who}: the target shape must be a multiple of the input shape ({s} vs {d})")
            factors.append(s // d)
    if len(factors) != len(cur):
        raise FilterArgumentError(f"{who}: expected {len(cur)} entries, got {len(factors)}")
    inter = tuple(v for d in cur for v in (d, 1))
    wide = tuple(v for d, f in zip(cur, factors) for v in (d, f))
    out_shape = tuple(d * f for d, f in zip(cur, factors))
    return type(t)._from_array(expand(t._array, inter, wide), out_shape)


def _upsample_texture(tex, shape, scale_factor, who: str):
    if tex.Normalized:      # (Dr.Jit 1.5 raises too: the new texels would be floats)
        raise TypeError(f"{who}: cannot resample an 8-bit texture ({type(tex).__name__}); resample a float "
                        f"texture of its values instead")
    D = tex.Dimension
    res = tex.shape[:-1]
    if scale_factor is not None:
        if any(int(f) != f for f in scale_factor):
            raise TypeError(f"{who}: scale_factor must contain integer values")
        new = tuple(d * int(f) for d, f in zip(res, scale_factor))     # (d: symbolic in a frozen function)
    else:
        new = tuple(shape)[:D]
    if len(new) != D:
        raise FilterArgumentError(f"{who}: a {D}-D texture needs {D} resolution entries, got {new}")
    backend = tex.tensor()._array._backend
    ftype = array_registry.flat_type(backend, tex.tensor()._array._vt)
    # the new texel centers, x fastest
    total = size_of(new)
    idx = arange(index_type(backend, total), total)
    coords = []
    stride = 1
    for r in reversed(new):
        c = idx // stride if stride != 1 else idx
        coords.append((ftype(c % r) + 0.5) / r)
        stride *= r
    values = tex.eval(coords)
    channels = list(values) if not isinstance(values, list) else values
    C = len(channels)
    flat = channels[0] if C == 1 else stack_channels(channels)
    tensor = registry.tensor_of(type(flat))._from_array(flat, new + (C,))
    return type(tex)(tensor, filter_mode=tex.filter_mode(), wrap_mode=tex.wrap_mode())


def stack_channels(channels: list) -> ArrayBase:
    """Interleave per-channel arrays into one flat array (``c0[0], c1[0], ..., c0[1], ...``)."""
    C = len(channels)
    n = width(channels[0])
    at = type(channels[0])
    total = n * C
    idx = arange(index_type(channels[0]._backend, total), total)
    lane, ch = idx // C, idx % C
    evaluate_together(channels)       # one kernel for all channels, not one per gather below
    out = None
    for k in range(C - 1, -1, -1):
        v = gather(at, channels[k], lane, ch == k)
        out = v if out is None else select(ch == k, v, out)
    return out
