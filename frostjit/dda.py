"""Grid traversal along rays (Dr.Jit's ``drjit.dda``).

:func:`dda` walks the cells of an axis-aligned N-dimensional grid that a ray segment crosses, in
order, and calls a function per cell; :func:`integrate` uses it to integrate the multilinear
interpolant of a tensor along rays exactly (with a derivative into the tensor), and
:func:`integrate_ref` is the brute-force numerical reference of :func:`integrate`.

Conventions (Dr.Jit's): positions, directions and bounds are ``(x, y, z)``; grid resolutions,
cell indices and tensor shapes are ``(z, y, x)``.  The traversal works in the grid's own frame,
where cell ``i`` along an axis spans ``[i, i + 1]``: the ray is ``o + t d`` there, the segment
``[max(0, t_enter), min(ray_max, t_exit)]`` of it that lies inside the grid is split at every
cell boundary it crosses (all axes whose boundary is crossed at the same ``t`` step together,
so a ray through a corner skips no cell and visits no empty one).

Everything is written on frostjit's public array API, so it runs on the scalar and the JIT
backends, in the symbolic, evaluated and scalar modes of :func:`frostjit.while_loop`, and
inside frozen functions.
"""
from __future__ import annotations

import math

from . import traits
from .ad.api import grad_enabled
from .ad.custom import CustomOp, custom
from .control.while_loop import while_loop
from .functions.block import block_sum
from .functions.creation import arange, zeros
from .functions.math import ceil, floor, maximum, minimum, select
from .functions.memory import gather, scatter_add
from .functions.tiling import repeat
from .functions.detach import detach
from .functions.geometry import norm

__all__ = ["dda", "integrate", "integrate_ref"]

_INF = math.inf


def dda(ray_o, ray_d, ray_max, grid_res, grid_min, grid_max, func, state, active, mode=None,
        max_iterations=None):
    """Visit the cells of an N-dimensional grid that a ray segment crosses, in order.

    Parameters
    ----------
    ray_o, ray_d : ArrayNf
        The ray's origin and direction (``(x, y, z)`` order; ``ray_d`` need not be normalized).
    ray_max : Float or float
        The end of the segment, in multiples of ``ray_d`` (may be infinite).
    grid_res : ArrayNu
        Cells per axis, ``(z, y, x)`` order.
    grid_min, grid_max : ArrayNf
        The grid's bounds (``(x, y, z)`` order).
    func : callable
        ``func(state, index, p_in, p_out, active) -> (state, continue)``, called once per cell:
        ``index`` is the cell (a ``uint32`` array, ``(z, y, x)``), ``p_in``/``p_out`` where the
        segment enters and leaves it as fractions of the cell (``[0, 1]^N``, ``(x, y, z)``),
        ``active`` the lanes still walking.  A lane whose ``continue`` is false stops.
    state : PyTree
        The initial state passed to the first call of ``func``.
    active : Bool or bool
        The lanes to walk.
    mode : {None, "scalar", "symbolic", "evaluated"}
        The mode of the underlying :func:`frostjit.while_loop` (``None``: scalar for Python
        values, else as ``JitFlag.SymbolicLoops`` says).
    max_iterations : int, optional
        Forwarded to :func:`frostjit.while_loop` (reverse-mode differentiation of the loop).

    Returns
    -------
    PyTree
        The state after the last call of ``func``.

    Raises
    ------
    TypeError
        ``ray_o`` is not a static float array, or ``ray_d``, ``grid_min``, ``grid_max`` or
        ``grid_res`` has another number of components.
    """
    n = _dimension("dda()", ray_o, ray_d=ray_d, grid_res=grid_res, grid_min=grid_min, grid_max=grid_max)
    tf = type(ray_o)
    tu = traits.uint32_array_t(tf)
    ti = traits.int32_array_t(tf)
    res = [grid_res[n - 1 - i] for i in range(n)]                   # (x, y, z)
    res_f = tf(*res)
    scale = res_f / (grid_max - grid_min)
    o = (ray_o - grid_min) * scale                                  # the ray in the grid's frame
    d = ray_d * scale

    # The segment inside the grid: the slabs of every axis the ray moves along; an axis it does
    # not move along only decides whether the ray is inside that slab at all.
    # (divisions by a zero component use 1 instead: their results are not selected, and Python
    # floats on the scalar backend would raise)
    t_enter, t_exit = -_INF, _INF
    moving = False
    d_safe = []
    for i in range(n):
        still = d[i] == 0
        d_safe.append(select(still, 1, d[i]))
        ta = (0 - o[i]) / d_safe[i]
        tb = (res_f[i] - o[i]) / d_safe[i]
        inside = (o[i] >= 0) & (o[i] <= res_f[i])
        t_enter = maximum(t_enter, select(still, select(inside, -_INF, _INF), minimum(ta, tb)))
        t_exit = minimum(t_exit, select(still, select(inside, _INF, -_INF), maximum(ta, tb)))
        moving = moving | (d[i] != 0)
    t0 = maximum(t_enter, 0)
    t1 = minimum(t_exit, ray_max)
    active = active & moving & (t0 < t1)
    t0 = select(active, t0, 0)          # (a lane that misses may have t0 = inf: no NaN positions)

    # The first cell: the one the segment enters (at a cell boundary, the one on the ray's side).
    p = o + d * t0
    start = []
    for i in range(n):
        k = select(d[i] < 0, ceil(p[i]) - 1, floor(p[i]))
        start.append(minimum(maximum(k, 0), res_f[i] - 1))
    cell = ti(*start)

    def walking(user_state, cell, t, active):
        return active

    def step(user_state, cell, t, active):
        cell_f = tf(cell)
        t_next = []
        for i in range(n):
            across = (cell_f[i] + select(d[i] > 0, 1, 0) - o[i]) / d_safe[i]
            t_next.append(select(d[i] == 0, _INF, across))
        t_cell = t_next[0]
        for i in range(1, n):
            t_cell = minimum(t_cell, t_next[i])
        t_out = minimum(t_cell, t1)
        p_in = o + d * t - cell_f
        p_out = o + d * t_out - cell_f
        index = tu(*[cell[n - 1 - i] for i in range(n)])
        user_state, go_on = func(user_state, index, p_in, p_out, active)
        moved = []
        for i in range(n):
            sign = select(d[i] > 0, 1, -1)
            moved.append(cell[i] + select(t_next[i] == t_cell, sign, 0))
        return user_state, ti(*moved), t_out, active & go_on & (t_out < t1)

    state, _, _, _ = while_loop((state, cell, t0, active), walking, step, mode=mode,
                                label="dda", max_iterations=max_iterations)
    return state


def _dimension(who: str, ray_o, **others) -> int:
    """``N``, the size of ``ray_o`` (a static float array), which each of ``others`` must share."""
    tf = type(ray_o)
    # a static array of numbers (scalar backend) or of 1-D JIT arrays
    if not traits.is_array_v(tf) or not traits.is_float_v(tf) or traits.size_v(tf) < 1 \
            or traits.depth_v(tf) != (2 if traits.is_jit_v(tf) else 1):
        raise TypeError(f"{who}: 'ray_o' must be a static array of floats (e.g. Array3f), got "
                        f"{tf.__name__}")
    n = traits.size_v(tf)
    for name, value in others.items():
        if traits.size_v(type(value)) != n:
            raise TypeError(f"{who}: '{name}' must have {n} components like 'ray_o' "
                            f"({tf.__name__}), got {type(value).__name__}")
    return n


# --- integrate: the exact line integral of a multilinear interpolant ----------------------------

class _Volume:
    """What :func:`integrate` needs of the tensor: the node grid's layout and its values."""

    def __init__(self, vol, n: int):
        if not traits.is_tensor_v(type(vol)) or not traits.is_jit_v(type(vol)):
            raise TypeError(f"integrate(): 'vol' must be a JIT tensor (e.g. TensorXf), got "
                            f"{type(vol).__name__}")
        shape = tuple(vol.shape)
        if len(shape) != n:
            raise ValueError(f"integrate(): 'vol' must have {n} dimensions like 'ray_o', got "
                             f"shape {shape}")
        if min(shape) < 2:
            raise ValueError(f"integrate(): 'vol' needs at least 2 values per axis (its values "
                             f"sit on the grid's nodes), got shape {shape}")
        self.shape = shape
        self.cells = tuple(s - 1 for s in shape)                    # (z, y, x)
        strides, s = [], 1
        for size in reversed(shape):                                # x first
            strides.append(s)
            s *= size
        self.strides = strides                                      # (x, y, z)


def _corners(n: int):
    """The ``2^n`` corners of a cell as 0/1 tuples, ``(x, y, z)`` order."""
    return [tuple((c >> i) & 1 for i in range(n)) for c in range(1 << n)]


def _corner_weight(corner, x):
    """The multilinear interpolation weight of ``corner`` at the fractional position ``x``."""
    w = None
    for i, c in enumerate(corner):
        f = x[i] if c else 1 - x[i]
        w = f if w is None else w * f
    return w


def _segment_weights(corner, p_in, p_out, length):
    """``length * integral over the segment of corner's weight``: Simpson's rule, exact for the
    polynomial of degree <= 3 that a multilinear weight is along a line in <= 3 dimensions."""
    mid = (p_in + p_out) * 0.5
    return length * (_corner_weight(corner, p_in) + 4 * _corner_weight(corner, mid)
                     + _corner_weight(corner, p_out)) * (1 / 6)


def _walk_integral(ray_o, ray_d, ray_max, grid_min, grid_max, volume: _Volume, active, mode,
                   values=None, grad=None, target=None):
    """Walk the cells with :func:`dda`; either accumulate the integral of ``values`` (the flat
    node values) per lane, or scatter-add ``grad * weight`` into ``target`` per node."""
    tf = type(ray_o)
    n = traits.size_v(tf)
    Float = traits.value_t(tf)
    Index = traits.uint32_array_t(Float)
    cell_size = (grid_max - grid_min) / tf(*[volume.cells[n - 1 - i] for i in range(n)])
    corners = _corners(n)

    def visit(total, index, p_in, p_out, active):
        delta = (p_out - p_in) * cell_size
        length = norm(delta)
        base = Index(0)
        for i in range(n):
            base = base + Index(index[n - 1 - i]) * volume.strides[i]
        for corner in corners:
            offset = sum(volume.strides[i] for i in range(n) if corner[i])
            weight = _segment_weights(corner, p_in, p_out, length)
            if target is None:
                total = total + select(active, weight * gather(Float, values, base + offset, active), 0)
            else:
                scatter_add(target, grad * weight, base + offset, active)
        return total, True

    res = traits.uint32_array_t(tf)(*volume.cells)
    return dda(ray_o, ray_d, ray_max, res, grid_min, grid_max, visit, Float(0), active, mode=mode)


class _Integrate(CustomOp):
    """:func:`integrate` with its derivative into the tensor: the integral is linear in the
    node values, so the forward derivative integrates the tangent tensor and the backward one
    scatters each node's weight times the incoming gradient."""

    def eval(self, vol, ray_o, ray_d, ray_max, grid_min, grid_max, active, mode):
        self.setup = (ray_o, ray_d, ray_max, grid_min, grid_max, active, mode)
        self.volume = _Volume(vol, traits.size_v(type(ray_o)))
        self.vol_type = type(vol)
        return _walk_integral(ray_o, ray_d, ray_max, grid_min, grid_max, self.volume, active, mode,
                              values=vol.array)

    def forward(self):
        tangent = self.grad_in("vol")
        ray_o, ray_d, ray_max, grid_min, grid_max, active, mode = self.setup
        self.set_grad_out(_walk_integral(ray_o, ray_d, ray_max, grid_min, grid_max, self.volume,
                                         active, mode, values=tangent.array))

    def backward(self):
        ray_o, ray_d, ray_max, grid_min, grid_max, active, mode = self.setup
        Float = traits.value_t(type(ray_o))
        target = zeros(Float, math.prod(self.volume.shape))
        _walk_integral(ray_o, ray_d, ray_max, grid_min, grid_max, self.volume, active, mode,
                       grad=self.grad_out(), target=target)
        self.set_grad_in("vol", self.vol_type(target, self.volume.shape))

    def name(self):
        return "integrate"


def integrate(ray_o, ray_d, ray_max, grid_min, grid_max, vol, active=None, mode=None):
    """The integral of a tensor's bi- or trilinear interpolant along rays, computed exactly.

    The tensor's values sit on the nodes of a regular grid spanning ``[grid_min, grid_max]``
    (``vol.shape`` nodes per axis, ``(z, y, x)`` order; unlike a texture, whose values sit at
    cell centers).  The segment ``t in [0, ray_max]`` of ``ray_o + t ray_d`` is walked cell by
    cell with :func:`dda`, and the integral (by arc length) of the interpolant over the part
    inside each cell is added in closed form.

    Parameters
    ----------
    ray_o, ray_d : ArrayNf
        JIT arrays (``Array2f``/``Array3f``, ``.ad`` for gradients), ``(x, y, z)`` order.
    ray_max : Float or float
        The end of the segment, in multiples of ``ray_d``.
    grid_min, grid_max : ArrayNf
        Where the first and the last node lie.
    vol : TensorXf
        The node values: N dimensions, at least 2 per axis.  Gradients flow into it, forward
        and reverse.
    active : Bool, optional
        The lanes to integrate (others give 0).
    mode : {None, "symbolic", "evaluated"}
        The mode of the traversal's loop.

    Returns
    -------
    Float
        One integral per lane.

    Raises
    ------
    TypeError, ValueError
        ``vol`` is not a JIT tensor with N >= 2-node axes, or the arrays' sizes disagree.
    NotImplementedError
        Gradients are enabled on the ray or the grid's bounds (only ``vol`` is differentiated,
        as in Dr.Jit).
    """
    n = _dimension("integrate()", ray_o, ray_d=ray_d, grid_min=grid_min, grid_max=grid_max)
    volume = _Volume(vol, n)
    for name, value in (("ray_o", ray_o), ("ray_d", ray_d), ("ray_max", ray_max),
                        ("grid_min", grid_min), ("grid_max", grid_max)):
        if grad_enabled(value):
            raise NotImplementedError(f"integrate(): gradients with respect to '{name}' are not "
                                      f"supported (only 'vol' is differentiated)")
    if active is None:
        active = traits.mask_t(traits.value_t(type(ray_o)))(True)
    if grad_enabled(vol):
        return custom(_Integrate, vol, ray_o, ray_d, ray_max, grid_min, grid_max, active, mode)
    return _walk_integral(ray_o, ray_d, ray_max, grid_min, grid_max, volume, active, mode,
                          values=vol.array)


def integrate_ref(ray_o, ray_d, ray_max, grid_min, grid_max, vol, n_samples: int):
    """A numerical reference for :func:`integrate`: the trapezoid rule over ``n_samples``
    interpolated lookups along the segment ``t in [0, ray_max]``.

    Lookups outside the grid take the nearest boundary value (so, unlike :func:`integrate`, the
    parts of the segment outside the grid count too).  Differentiable into ``vol`` and the
    ray by ordinary AD.

    Parameters
    ----------
    ray_o, ray_d, ray_max, grid_min, grid_max, vol
        As for :func:`integrate`.
    n_samples : int
        The number of lookups per lane (at least 2).

    Returns
    -------
    Float
        One estimate per lane.
    """
    n = _dimension("integrate_ref()", ray_o, ray_d=ray_d, grid_min=grid_min, grid_max=grid_max)
    volume = _Volume(vol, n)
    if not isinstance(n_samples, int) or n_samples < 2:
        raise ValueError(f"integrate_ref(): 'n_samples' must be an integer >= 2, got {n_samples!r}")
    tf = type(ray_o)
    Float = traits.value_t(tf)
    Index = traits.uint32_array_t(Float)
    lanes = max(_width(v) for v in (*ray_o, *ray_d, ray_max, *grid_min, *grid_max))

    def spread(x):
        # each lane's value once per sample (lane-major), so one lane's samples are contiguous
        return repeat(Float(x) + zeros(Float, lanes), n_samples)

    k = Float(arange(Index, lanes * n_samples) % n_samples)
    t = k * (spread(ray_max) / (n_samples - 1))
    trapezoid = select((k == 0) | (k == n_samples - 1), 0.5, 1.0)
    o = [spread(ray_o[i]) for i in range(n)]
    d = [spread(ray_d[i]) for i in range(n)]
    lo = [spread(grid_min[i]) for i in range(n)]
    hi = [spread(grid_max[i]) for i in range(n)]
    base, frac = Index(0), []
    for i in range(n):
        cells = volume.cells[n - 1 - i]
        x = (o[i] + d[i] * t - lo[i]) / (hi[i] - lo[i]) * cells
        x = minimum(maximum(x, 0), cells)
        c = minimum(Index(detach(floor(x))), cells - 1)
        frac.append(x - Float(c))
        base = base + c * volume.strides[i]
    value = Float(0)
    for corner in _corners(n):
        offset = sum(volume.strides[i] for i in range(n) if corner[i])
        value = value + _corner_weight(corner, frac) * gather(Float, vol.array, base + offset)
    speed = norm(tf(*d))
    dt = spread(ray_max) / (n_samples - 1)
    return block_sum(value * trapezoid * dt * speed, n_samples)


def _width(x) -> int:
    return len(x) if traits.is_jit_v(type(x)) else 1
