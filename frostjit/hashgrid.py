"""Multiresolution hash-grid encodings (Dr.Jit's ``drjit.hashgrid``).

A :class:`HashGridEncoding` maps a point of ``[0, 1]^D`` to ``n_levels * n_features_per_level``
features: on each level it finds the grid cell around the point, looks up the features stored
at the cell's ``2^D`` vertices and interpolates them multilinearly.  The layout and indexing
are Dr.Jit 1.5's (measured side by side, see tests/nn/test_hashgrid.py):

- level ``l`` has scale ``s_l = base_resolution * per_level_scale**l - 1`` and
  ``r_l = ceil(s_l) + 1`` vertices per axis; a point ``x`` sits at ``x * s_l + 0.5`` (at
  ``x * s_l`` with ``align_corners=True``);
- a level whose ``r_l**D`` vertices fit in ``hashmap_size`` is dense (``r_l**D`` rounded up to a
  multiple of ``n_features_per_level`` vertices, vertex ``k`` at ``sum k_d r_l**d``), otherwise it
  is hashed into ``hashmap_size`` vertices (``xor_d k_d * prime_d``, Instant-NGP's primes, modulo
  the level size); vertex indices wrap modulo the level size;
- the parameters are one flat array, level after level, ``n_features_per_level`` consecutive
  values per vertex, initialized uniformly on ``[-init_scale, init_scale]`` (default generator:
  ``fj.rng(seed=0)``, as Dr.Jit).

A :class:`PermutoEncoding` (Dr.Jit's, after PermutoSDF, simplified to work in ``D`` dimensions)
uses the same levels and parameter layout but interpolates over the ``D + 1`` vertices of the
simplex of the permutohedral lattice around the point (found by sorting the fractional parts
of ``x * s_l + 0.5``: barycentric weights are the gaps between the sorted parts), and hashes
with ``((k_0 * P + k_1) * P + ...) * P`` (``P = 2531011``).

Options of both (Dr.Jit 1.5's measured behaviour): ``torchngp_compat=True`` keeps the half-cell
offset even with ``align_corners=True`` (hash grid only; a permutohedral encoding accepts and
ignores it); ``smooth_weight_gradients=True`` keeps every interpolation weight ``w`` but
differentiates it as ``w + lambda * (r(w) - detach(r(w)))`` with the cosine ramp
``r(w) = (1 - cos(pi w)) / 2`` (a straight-through estimator: the gradients of the positions
change, the values and the parameters' gradients do not).

Everything is written on frostjit's public array API (gathers, integer arithmetic), so it runs
on every JIT backend, differentiates into the parameters and the positions, and freezes.
"""
from __future__ import annotations

import math
import warnings

from . import traits
from .array.dynamic import DynamicBase
from .array import registry
from .functions.detach import detach
from .functions.math import cos, floor, fma, reinterpret_array, select
from .functions.memory import gather
from .random import rng as make_rng

__all__ = ["HashEncoding", "HashGridEncoding", "PermutoEncoding", "div_round_up", "next_multiple"]

# The per-axis multipliers of the spatial hash (Instant-NGP's; the first is 1).
PRIMES = (1, 2654435761, 805459861, 3674653429, 2097192037, 1434869437, 2165219737)
# The multiplier of the permutohedral encoding's polynomial hash.
PERMUTO_PRIME = 2531011


def div_round_up(n: int, m: int) -> int:
    """``ceil(n / m)`` for positive integers."""
    return (n + m - 1) // m


def next_multiple(n: int, m: int) -> int:
    """The smallest multiple of ``m`` that is at least ``n``."""
    return div_round_up(n, m) * m


class HashEncoding:
    """Shared parts of the hash encodings: the configuration, the level layout, the parameters.

    Parameters
    ----------
    dtype : type
        The 1-D array type of the parameters (``Float``, ``Float16``, ``Float64``; AD types to
        train them).
    dimension : int
        ``D``, the number of input coordinates.
    n_levels, n_features_per_level : int
        The output has ``n_levels * n_features_per_level`` features.
    hashmap_size : int
        The most vertices of one level (a multiple of ``n_features_per_level``).
    base_resolution : int
        The scale of level 0.
    per_level_scale : float
        The factor between the scales of consecutive levels.
    align_corners : bool
        Put the vertices at ``k / s_l`` (else half a cell further).
    torchngp_compat : bool
        Keep the half-cell offset ``+0.5`` even with ``align_corners=True`` (Dr.Jit 1.5's
        tiny-cuda-nn compatibility; only the hash grid uses it).
    smooth_weight_gradients : bool
        Differentiate each interpolation weight ``w`` through a straight-through cosine ramp
        (see the module docstring); the values do not change.
    smooth_weight_lambda : float
        The ramp's share of the weights' gradient (1: all of it, 0: none).
    init_scale : float
        The parameters start uniform on ``[-init_scale, init_scale]``.
    rng : frostjit.random.Generator, optional
        The generator for the initial parameters (default ``fj.rng(seed=0)``).
    """

    DRJIT_STRUCT = {"data": None}

    def __init__(self, dtype, dimension: int, *, n_levels: int = 16, n_features_per_level: int = 2,
                 hashmap_size: int = 524288, base_resolution: int = 16, per_level_scale: float = 2,
                 align_corners: bool = False, torchngp_compat: bool = False, smooth_weight_gradients: bool = False,
                 smooth_weight_lambda: float = 1.0, init_scale: float = 0.0001, rng=None) -> None:
        if not (isinstance(dtype, type) and traits.is_float_v(dtype) and traits.depth_v(dtype) == 1
                and traits.is_jit_v(dtype)):
            raise TypeError(f"frostjit.hashgrid: 'dtype' must be a 1-D floating point JIT array type, got {dtype!r}")
        if dimension < 1:
            raise ValueError(f"frostjit.hashgrid: 'dimension' must be positive, got {dimension}")
        if n_features_per_level % 2:
            warnings.warn(f"The number of features per level should be a multiple of 2, but it was "
                          f"{n_features_per_level}.", RuntimeWarning, stacklevel=2)
        if hashmap_size % n_features_per_level:
            raise ValueError(f"frostjit.hashgrid: invalid hashmap size {hashmap_size}, must be a multiple of the "
                             f"number of features {n_features_per_level}")
        self._dtype = dtype
        self._dimension = int(dimension)
        self._n_levels = int(n_levels)
        self._n_features_per_level = int(n_features_per_level)
        self._hashmap_size = int(hashmap_size)
        self._base_resolution = base_resolution
        self._per_level_scale = per_level_scale
        self._align_corners = bool(align_corners)
        self._torchngp_compat = bool(torchngp_compat)
        self._smooth_weight_gradients = bool(smooth_weight_gradients)
        self._smooth_weight_lambda = smooth_weight_lambda
        self._init_scale = init_scale
        # Per level: (first vertex, vertex count, scale, vertices per axis, dense?)
        self._levels = []
        offset = 0
        for level in range(self._n_levels):
            scale = base_resolution * per_level_scale ** level - 1
            res = math.ceil(scale) + 1
            dense = res ** self._dimension <= self._hashmap_size
            size = next_multiple(res ** self._dimension, self._n_features_per_level) if dense else self._hashmap_size
            self._levels.append((offset, size, scale, res, dense))
            offset += size
        self._n_vertices = offset
        if rng is None:
            rng = make_rng(seed=0)
        draw_t = dtype if not traits.is_half_v(dtype) else traits.float32_array_t(dtype)
        values = rng.uniform(draw_t, self.n_params, low=-init_scale, high=init_scale)
        self.data = values if draw_t is dtype else dtype(values)

    # -- configuration --------------------------------------------------------------------
    dtype = property(lambda self: self._dtype, doc="The array type of the parameters.")
    dimension = property(lambda self: self._dimension, doc="The number of input coordinates.")
    n_levels = property(lambda self: self._n_levels, doc="The number of levels.")
    n_features_per_level = property(lambda self: self._n_features_per_level, doc="Features per vertex and level.")
    hashmap_size = property(lambda self: self._hashmap_size, doc="The most vertices of one level.")
    base_resolution = property(lambda self: self._base_resolution, doc="The scale of level 0.")
    per_level_scale = property(lambda self: self._per_level_scale, doc="The scale factor between levels.")
    align_corners = property(lambda self: self._align_corners, doc="Whether vertices align with [0, 1].")
    torchngp_compat = property(lambda self: self._torchngp_compat,
                               doc="Whether the half-cell offset stays with align_corners (hash grid).")
    smooth_weight_gradients = property(lambda self: self._smooth_weight_gradients,
                                       doc="Whether the weights differentiate through a cosine ramp.")
    smooth_weight_lambda = property(lambda self: self._smooth_weight_lambda,
                                    doc="The ramp's share of the weights' gradient.")
    init_scale = property(lambda self: self._init_scale, doc="The half-width of the initial distribution.")

    @property
    def n_output_features(self) -> int:
        """``n_levels * n_features_per_level``."""
        return self._n_levels * self._n_features_per_level

    @property
    def n_params(self) -> int:
        """The number of parameters (vertices of all levels times features per vertex)."""
        return self._n_vertices * self._n_features_per_level

    @property
    def params(self):
        """The parameter array."""
        return self.data

    @params.setter
    def params(self, values) -> None:
        self.set_params(values)

    def set_params(self, values) -> None:
        """Replace the parameters (e.g. by an optimizer's copy); ``values`` must have
        :attr:`n_params` entries."""
        if len(values) != self.n_params:
            raise ValueError(f"frostjit.hashgrid.set_params(): expected {self.n_params} values, got {len(values)}")
        self.data = values if type(values) is self._dtype else self._dtype(values)

    def level_offset(self, level_i: int) -> int:
        """The first vertex of level ``level_i`` (``n_levels`` gives the total vertex count);
        in vertices, not parameters."""
        if not 0 <= level_i <= self._n_levels:
            raise IndexError(f"frostjit.hashgrid.level_offset(): level {level_i} out of range 0..{self._n_levels}")
        return self._levels[level_i][0] if level_i < self._n_levels else self._n_vertices

    # -- indexing -------------------------------------------------------------------------
    def hash(self, key):
        """The spatial hash of integer vertex coordinates ``key`` (a sequence of ``D`` UInt32
        arrays): ``xor_d key_d * prime_d`` with wrapping 32-bit products."""
        comps = list(key)
        if len(comps) > len(PRIMES):
            raise ValueError(f"frostjit.hashgrid.hash(): at most {len(PRIMES)} dimensions, got {len(comps)}")
        h = None
        for k, prime in zip(comps, PRIMES):
            term = k * prime if prime != 1 else k
            h = term if h is None else h ^ term
        return h

    def indexing_function(self, key, level_i: int):
        """The vertex index (counted from the first vertex of all levels) of integer vertex
        coordinates ``key`` on level ``level_i``."""
        offset, size, _, res, dense = self._levels[level_i]
        comps = list(key)
        if dense:
            idx, stride = None, 1
            for k in comps:
                term = k * stride if stride != 1 else k
                idx = term if idx is None else idx + term
                stride *= res
        else:
            idx = self.hash(comps)
        return idx % size + offset

    # -- evaluation helpers ---------------------------------------------------------------
    def _types(self, coords):
        """The position type (the coordinates' array type, else ``dtype``) and the detached
        ``UInt32`` / ``Int32`` types beside it."""
        D = self._dimension
        if len(coords) != D:
            raise ValueError(f"frostjit.hashgrid.{type(self).__name__}: expected {D} coordinates, "
                             f"got {len(coords)}")
        pos_t = type(coords[0]) if hasattr(coords[0], "_vt") else self._dtype
        plain = traits.detached_t(pos_t)
        return pos_t, traits.uint32_array_t(plain), traits.int32_array_t(plain)

    def _accumulate(self, acc: list, weight, vertex, active, pos_t) -> None:
        """Add ``weight`` times the features of ``vertex`` to ``acc`` (one entry per feature,
        None before the first vertex): ``fma(value, weight, acc)``, as Dr.Jit accumulates."""
        if self._smooth_weight_gradients:
            ramp = 0.5 * (1.0 - cos(math.pi * weight))
            weight = weight + self._smooth_weight_lambda * (ramp - detach(ramp))
        dtype, F = self._dtype, self._n_features_per_level
        w = weight if dtype is pos_t else dtype(weight)
        base = vertex * F
        for f in range(F):
            value = gather(dtype, self.data, base + f if f else base, active)
            acc[f] = w * value if acc[f] is None else fma(value, w, acc[f])

    def _output(self, features: list, active):
        """The features as a dynamic array; zero where ``active`` is False (as Dr.Jit's ``& active``)."""
        if active is not True:
            features = [select(active, f, 0) for f in features]
        return _dynamic(self._dtype)(*features)

    def _repr_fields(self) -> list:
        return [("dtype", self._dtype), ("dimension", self._dimension), ("hashmap_size", self._hashmap_size),
                ("n_levels", self._n_levels), ("n_features_per_level", self._n_features_per_level),
                ("base_resolution", self._base_resolution), ("per_level_scale", self._per_level_scale),
                ("align_corners", self._align_corners)]

    def _repr(self, name: str) -> str:
        body = ",\n".join(f"    {k}={v!r}" if k == "dtype" else f"    {k}={v}" for k, v in self._repr_fields())
        return f"{name}(\n{body}\n)"

    def __repr__(self) -> str:
        return self._repr(type(self).__name__)


class HashGridEncoding(HashEncoding):
    """Multiresolution hash grid (Instant-NGP): multilinear interpolation of the features at the
    ``2^D`` vertices of the cell around the point, on every level, concatenated.

    Call it with a sequence of ``D`` coordinate arrays (in ``[0, 1]``) and an optional mask
    ``active``; it returns a dynamic array (``ArrayXf``...) of ``n_levels *
    n_features_per_level`` components, level-major (zero where ``active`` is False).  See
    :class:`HashEncoding` for the parameters and the module docstring for the layout.
    """

    def __call__(self, p, active=True):
        coords = list(p)
        pos_t, index_t, _ = self._types(coords)
        D, F = self._dimension, self._n_features_per_level
        half = not self._align_corners or self._torchngp_compat
        features = []
        for level in range(self._n_levels):
            _, _, scale, _, _ = self._levels[level]
            cell, frac = [], []
            for x in coords:
                pos = fma(x, scale, 0.5) if half else x * scale
                p0 = floor(pos)
                cell.append(index_t(p0))
                frac.append(pos - p0)
            acc = [None] * F
            for corner in range(1 << D):
                key, weight = [], None
                for d in range(D):
                    up = (corner >> d) & 1
                    key.append(cell[d] + 1 if up else cell[d])
                    w = frac[d] if up else 1 - frac[d]
                    weight = w if weight is None else weight * w
                self._accumulate(acc, weight, self.indexing_function(key, level), active, pos_t)
            features.extend(acc)
        return self._output(features, active)

    def _repr_fields(self) -> list:
        return super()._repr_fields() + [("torchngp_compat", self._torchngp_compat),
                                         ("smooth_weight_gradients", self._smooth_weight_gradients),
                                         ("smooth_weight_lambda", self._smooth_weight_lambda)]

    def __repr__(self) -> str:
        return self._repr("HashGrid")


class PermutoEncoding(HashEncoding):
    """Permutohedral-lattice encoding (Dr.Jit's, after PermutoSDF): on every level, the
    features at the ``D + 1`` vertices of the lattice simplex around the point, weighted by
    its barycentric coordinates, concatenated.  Lookups grow linearly with ``D`` (a hash grid's
    as ``2^D``).

    Same constructor, parameters and levels as :class:`HashGridEncoding` (see
    :class:`HashEncoding`; ``torchngp_compat`` is accepted and has no effect, as in Dr.Jit);
    hashed levels use :meth:`hash`.  Call it with ``D`` coordinate arrays (in ``[0, 1]``) and an
    optional mask ``active``; it returns a dynamic array of ``n_levels * n_features_per_level``
    components, level-major.

    Per level, with ``x = p * s_l + 0.5`` (``+ 0`` with ``align_corners``), ``b = floor(x)`` and
    ``f = x - b``: sort ``f`` ascending (``f_(0) <= ... <= f_(D-1)``) with Dr.Jit's
    compare-and-swap network (pairs ``i < j`` in order, swapped where ``f_i > f_j``), keeping
    the axis ``a_(r)`` each value came from; vertex ``r < D`` is ``b + [f_d > f_(r) or
    (f_d == f_(r) and d >= a_(r))]`` with weight ``f_(r) - f_(r-1)`` (``f_(-1) = 0``), vertex
    ``D`` is ``b`` with weight ``1 - f_(D-1)``.
    """

    def __call__(self, p, active=True):
        coords = list(p)
        pos_t, index_t, int_t = self._types(coords)
        D, F = self._dimension, self._n_features_per_level
        offset = 0.0 if self._align_corners else 0.5
        features = []
        for level in range(self._n_levels):
            _, _, scale, _, _ = self._levels[level]
            base, frac = [], []
            for c in coords:
                x = fma(c, scale, offset)
                x0 = floor(x)
                base.append(int_t(x0))
                frac.append(x - x0)
            # Sort the fractional parts ascending (compare-and-swap over every pair, as Dr.Jit),
            # with the axis each came from.
            xk, xki = list(frac), [int_t(d) for d in range(D)]
            for i in range(D):
                for j in range(i + 1, D):
                    swap = xk[i] > xk[j]
                    xk[i], xk[j] = select(swap, xk[j], xk[i]), select(swap, xk[i], xk[j])
                    xki[i], xki[j] = select(swap, xki[j], xki[i]), select(swap, xki[i], xki[j])
            acc = [None] * F
            for rank in range(D + 1):
                if rank < D:
                    weight = xk[rank] - xk[rank - 1] if rank else xk[0]
                    key = []
                    for d in range(D):
                        up = (frac[d] > xk[rank]) | ((frac[d] == xk[rank]) & (xki[rank] <= d))
                        key.append(select(up, base[d] + 1, base[d]))
                else:
                    weight, key = 1 - xk[D - 1], base
                key = [reinterpret_array(index_t, k) for k in key]      # (wrapping, as Dr.Jit's UInt32 index)
                self._accumulate(acc, weight, self.indexing_function(key, level), active, pos_t)
            features.extend(acc)
        return self._output(features, active)

    def hash(self, key):
        """The polynomial hash of integer vertex coordinates ``key`` (``D`` UInt32 arrays):
        ``((k_0 * P + k_1) * P + ... + k_(D-1)) * P`` with ``P = 2531011``, wrapping."""
        h = None
        for k in key:
            h = k * PERMUTO_PRIME if h is None else (h + k) * PERMUTO_PRIME
        return h

    def _repr_fields(self) -> list:
        return super()._repr_fields() + [("smooth_weight_gradients", self._smooth_weight_gradients),
                                         ("smooth_weight_lambda", self._smooth_weight_lambda)]


def _dynamic(dtype) -> type:
    cls = registry.array_type(dtype, None, "dynamic")
    assert cls is not None and issubclass(cls, DynamicBase)
    return cls
