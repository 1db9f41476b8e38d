"""Textures (``Texture1f``, ``Texture2f``, ``Texture3f`` and their ``f16``, ``f64`` and 8-bit
``f8u`` variants): a tensor of shape ``(..., res_y, res_x, channels)`` sampled at continuous
positions in ``[0, 1]^D``.

Lookups are gathers from the tensor's flat array weighted as :mod:`.sampling` describes, all
lazy: they fuse into the kernel that uses them, and AD differentiates them like any other
expression, into the texture's tensor (set it with a grad-enabled tensor, e.g. an optimizer's
parameter) and into the positions.  A texture is a PyTree (its tensor, filter and wrap modes),
so ``fj.eval``, AD and ``fj.freeze`` see it; a frozen function replays at another leading
resolution (``res_y`` of a ``Texture2f``) and traces again for other trailing ones.

Results follow Dr.Jit: ``eval`` returns one array per channel as a static vector
(``Array1f`` .. ``Array4f``, an ``ArrayXf`` for more than four channels), in the floating point
type of the positions; ``eval_cubic_grad`` one ``Array{D}f`` per channel and
``eval_cubic_hessian`` one ``Matrix{D}f`` per channel.

8-bit textures (``Texture{D}f8u``, Dr.Jit's unsigned normalized textures) store ``UInt8`` texels
(a ``TensorXu8``; a float tensor given to them is converted as ``UInt8(x)`` converts, truncating)
and read texel ``t`` as ``t * (1/255)`` in the positions' precision, before filtering, so a lookup
equals the same lookup in a float texture of ``t * (1/255)``.  With ``srgb=True`` each texel's
channels other than channel 3 (alpha) are also decoded by :func:`~frostjit.srgb_to_linear`.
They hold no gradient (the texels are integers); derivatives with respect to the positions flow
as for the other textures.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..array import registry
from ..array.flat import ArrayBase, is_flat
from ..array.vector import VectorBase
from ..functions.color import linear_to_srgb, srgb_to_linear
from ..functions.creation import zeros
from ..functions.evaluation import width
from ..functions.math import fma
from ..functions.math import clip, floor
from ..functions.memory import gather, gather_flat, gather_pair, scatter, scatter_add
from ..ad.graph import ScatterAdjoint, Vertex, broadcast, is_active, sized_literal
from ..tensor.base import TensorBase, handle
from ..backend import current_backend
from ..trace import ops
from ..trace.dtypes import Float32, UInt32, UInt64
from ..trace.state import state
from . import template
from .sampling import FilterMode, WrapMode, cubic, lanewise, linear, linear_clamp_pair, nearest

_MISSING = object()
_INV_255 = 1.0 / 255.0


def _is_texel_data(v) -> bool:
    """Texels given as an array-like rather than a tensor or a resolution: a NumPy array (or an
    object with ``__array__``/``__dlpack__``, not a frostjit array) or a nested list/tuple (a
    resolution is a flat sequence of ints)."""
    if isinstance(v, np.ndarray):
        return True
    if isinstance(v, (list, tuple)):
        return len(v) > 0 and isinstance(v[0], (list, tuple))
    # (another library's array: torch, jax; frostjit's own arrays and tensors carry IsJIT)
    return (hasattr(v, "__array__") or hasattr(v, "__dlpack__")) and not hasattr(type(v), "IsJIT")


class TextureBase:
    """Base class of the texture types; ``Dimension`` and ``_tensor_type`` are set per class.

    Parameters (Dr.Jit's two constructors)
    ----------
    Texture2f(tensor, use_accel=True, migrate=True, filter_mode=FilterMode.Linear,
    wrap_mode=WrapMode.Clamp, srgb=False)
        A texture holding ``tensor`` (``Dimension + 1`` axes, the last one the channels).
    Texture2f(shape, channels, use_accel=True, filter_mode=..., wrap_mode=..., writable=False,
    srgb=False)
        A texture of resolution ``shape`` (``(res_y, res_x)`` for 2-D) and ``channels``
        channels, filled with zeros (Dr.Jit leaves it uninitialized).

    ``use_accel``, ``migrate`` and ``writable`` concern GPU texture units: ``use_accel()`` and
    ``writable()`` report what was passed (as Dr.Jit's LLVM backend does) and change nothing
    else (the LLVM backend has none); ``srgb=True`` (decode sRGB texels to linear values on
    lookup) is only meaningful for 8-bit textures (``Texture{D}f8u``) and raises ``ValueError``
    on the others.
    """

    __slots__ = ("_tensor", "_filter", "_wrap", "_srgb", "_use_accel", "_writable")
    Dimension = 0
    _tensor_type = None
    #: Whether texels are unsigned 8-bit integers read as ``t / 255`` (``Texture{D}f8u``).
    Normalized = False
    IsTexture = True

    def __init__(self, *args, **kwargs):
        if args and _is_texel_data(args[0]):
            # a NumPy array or nested list of texels converts to the texture's tensor type
            # (Dr.Jit: Texture2f(np.ones((2, 2, 1))), Texture2f([[[1], [2]], [[3], [4]]]))
            args = (self._tensor_type(args[0]),) + args[1:]
        if args and isinstance(args[0], TensorBase) or "tensor" in kwargs:
            self._init_tensor(*args, **kwargs)
        else:
            self._init_shape(*args, **kwargs)

    def _init_tensor(self, tensor, use_accel: bool = True, migrate: bool = True,
                     filter_mode: FilterMode = FilterMode.Linear, wrap_mode: WrapMode = WrapMode.Clamp,
                     srgb: bool = False):
        self._modes(filter_mode, wrap_mode, srgb)
        self._use_accel, self._writable = bool(use_accel), False
        self.set_tensor(tensor)

    def _init_shape(self, shape, channels: int, use_accel: bool = True,
                    filter_mode: FilterMode = FilterMode.Linear, wrap_mode: WrapMode = WrapMode.Clamp,
                    writable: bool = False, srgb: bool = False):
        self._modes(filter_mode, wrap_mode, srgb)
        self._use_accel, self._writable = bool(use_accel), bool(writable)
        res = tuple(shape)
        if len(res) != self.Dimension:
            raise ValueError(f"{type(self).__name__}(): 'shape' must have {self.Dimension} entries, got {res}")
        if int(channels) < 1:
            raise ValueError(f"{type(self).__name__}(): 'channels' must be >= 1, got {channels}")
        self._tensor = zeros(self._tensor_type, res + (int(channels),))

    def _modes(self, filter_mode, wrap_mode, srgb) -> None:
        if not isinstance(filter_mode, FilterMode):
            raise TypeError(f"{type(self).__name__}(): 'filter_mode' must be a FilterMode, got {filter_mode!r}")
        if not isinstance(wrap_mode, WrapMode):
            raise TypeError(f"{type(self).__name__}(): 'wrap_mode' must be a WrapMode, got {wrap_mode!r}")
        if srgb and not self.Normalized:
            raise ValueError(f"{type(self).__name__}(): srgb=True needs an 8-bit texture (Texture{self.Dimension}f8u); "
                             f"this one stores {self._tensor_type._array_type._vt.name} texels")
        self._filter = filter_mode
        self._wrap = wrap_mode
        self._srgb = bool(srgb)

    # -- contents -------------------------------------------------------------------
    def set_tensor(self, tensor, migrate: bool = False) -> None:
        """Use ``tensor`` (``Dimension + 1`` axes) as the texture's contents; the resolution and the
        channel count may change.  The texture refers to the tensor's values and AD variable (a
        gradient of a lookup flows into ``tensor``)."""
        if not isinstance(tensor, TensorBase):
            raise TypeError(f"{type(self).__name__}.set_tensor(): expected a tensor, got {type(tensor).__name__}")
        shape = tensor.shape
        if len(shape) != self.Dimension + 1:
            raise ValueError(f"{type(self).__name__}.set_tensor(): the tensor must have {self.Dimension + 1} "
                             f"dimensions (the resolution, then the channels), got shape {shape}")
        if type(tensor._array)._vt is not self._tensor_type._array_type._vt:
            tensor = self._tensor_type(tensor)
        self._tensor = type(tensor)._from_array(handle(tensor._array), shape)

    def set_value(self, value, migrate: bool = False) -> None:
        """Overwrite the contents with a flat array of ``prod(shape)`` elements (C order)."""
        if not is_flat(value):
            raise TypeError(f"{type(self).__name__}.set_value(): expected a 1-D array, got {type(value).__name__}")
        n, want = width(value), width(self._tensor._array)
        if n != want:
            raise ValueError(f"{type(self).__name__}.set_value(): expected {want} elements (shape "
                             f"{self.shape}), got {n}")
        self.set_tensor(self._tensor_type(value, self._tensor.shape))

    def write(self, pos, value, active=True) -> None:
        """Store the per-channel ``value`` into the texels at integer coordinates ``pos``.

        Parameters
        ----------
        pos : sequence of UInt32 arrays, or an Array2u/Array3u...
            One unsigned integer array per dimension, x first (the column), as ``eval``'s
            positions.
        value : sequence of arrays or numbers
            One entry per channel.  An 8-bit texture (``Texture2f8u``...) stores
            ``floor(clip(v, 0, 1) * 255 + 0.5)``, sRGB-encoding channels other than alpha
            (channel 3) when it was made with ``srgb=True`` (as Dr.Jit).
        active : Bool, optional
            Lanes that write (the others leave their texel unchanged).

        Raises
        ------
        RuntimeError
            The texture was not made with ``writable=True``, it is a scalar-backend texture,
            or ``value`` does not hold one entry per channel.

        Notes
        -----
        A texture store, as Dr.Jit's (it writes the tensor the texture samples; not
        differentiable).  Several lanes writing one texel leave one of their values.
        """
        name = type(self).__name__
        array = self._tensor._array
        if not isinstance(array, ArrayBase):
            raise RuntimeError(f"{name}.write(): requires a JIT backend (frostjit.llvm); "
                               "scalar-backend textures cannot be written")
        if not self._writable:
            raise RuntimeError(f"{name}.write(): the texture was not created with writable=True")
        coords = list(pos._c) if isinstance(pos, VectorBase) else list(pos)
        if len(coords) != self.Dimension:
            raise TypeError(f"{name}.write(): 'pos' must hold {self.Dimension} integer coordinate arrays "
                            f"(x first), got {len(coords)}")
        channels = self._tensor.shape[-1]
        values = list(value._c) if isinstance(value, VectorBase) else list(value)
        if len(values) != channels:
            raise RuntimeError(f"{name}.write(): expected {channels} channel values, got {len(values)}")
        uint = registry.flat_type(array._backend, UInt32, False)
        base = self._texel_index([c if type(c) is uint else uint(c) for c in coords])
        at = type(array)
        fcls = registry.flat_type(array._backend, Float32, False)
        for ch, v in enumerate(values):
            if self.Normalized:     # quantize as Dr.Jit: round half up after clipping to [0, 1]
                v = clip(v if isinstance(v, ArrayBase) else fcls(v), 0, 1)
                if self._srgb and ch != 3:      # channel 3 is alpha: stored linearly
                    v = linear_to_srgb(v)
                v = floor(fma(v, 255, 0.5))
            scatter(array, at(v), base + ch if ch else base, active)

    def update_inplace(self, migrate: bool = False) -> None:
        """Take changes made to :meth:`tensor` into account (nothing to do here: the texture reads
        its tensor directly)."""

    def tensor(self):
        """The texture's tensor (shape ``(..., res_x, channels)``; writing into it changes the texture)."""
        return self._tensor

    def value(self):
        """The texture's contents as a flat array (C order)."""
        return self._tensor._array

    @property
    def shape(self) -> tuple:
        """``(..., res_y, res_x, channels)``, the shape of :meth:`tensor`."""
        return self._tensor.shape

    def channel_count(self) -> int:
        return self._tensor.shape[-1]

    def filter_mode(self) -> FilterMode:
        return self._filter

    def wrap_mode(self) -> WrapMode:
        return self._wrap

    def use_accel(self) -> bool:
        """The ``use_accel`` the texture was made with (as Dr.Jit reports it on the LLVM backend;
        frostjit has no texture units, so it changes nothing)."""
        return self._use_accel

    def migrated(self) -> bool:
        return False

    def srgb(self) -> bool:
        """Whether lookups decode the texels from sRGB (only 8-bit textures can)."""
        return self._srgb

    def writable(self) -> bool:
        """The ``writable`` the texture was made with (``False`` when made from a tensor)."""
        return self._writable

    # -- PyTree (traversal protocol) -------------------------------------------------
    def __fj_traverse__(self) -> dict:
        return {"tensor": self._tensor, "filter_mode": self._filter, "wrap_mode": self._wrap, "srgb": self._srgb,
                "use_accel": self._use_accel, "writable": self._writable}

    def __fj_assign__(self, values: dict) -> None:
        self._tensor = values["tensor"]
        self._filter = values["filter_mode"]
        self._wrap = values["wrap_mode"]
        self._srgb = values.get("srgb", False)
        self._use_accel = values.get("use_accel", True)
        self._writable = values.get("writable", False)

    @classmethod
    def __fj_construct__(cls, values: dict):
        out = cls.__new__(cls)
        out.__fj_assign__(values)
        return out

    def __repr__(self) -> str:
        srgb = ", srgb=True" if self._srgb else ""
        return (f"{type(self).__name__}(shape={self.shape}, filter_mode={self._filter}, "
                f"wrap_mode={self._wrap}{srgb})")

    # -- lookups ------------------------------------------------------------------------
    def _coords(self, pos, who: str) -> list:
        """The position as ``Dimension`` float arrays (x first)."""
        D = self.Dimension
        if isinstance(pos, VectorBase):
            comps = list(pos)
        elif (is_flat(pos) or isinstance(pos, (int, float))) and D == 1:
            comps = [pos]       # (a Python number: the scalar backend's 1-D position, as Dr.Jit)
        elif isinstance(pos, (list, tuple)):
            comps = list(pos)
        else:
            raise TypeError(f"{type(self).__name__}.{who}(): 'pos' must be a static vector (Array{D}f) or a "
                            f"sequence of {D} arrays, got {type(pos).__name__}")
        if len(comps) != D:
            raise ValueError(f"{type(self).__name__}.{who}(): 'pos' must have {D} components, got {len(comps)}")
        arrays = [c for c in comps if is_flat(c)]
        if arrays:
            ftype = arrays[0]
            if not ftype._vt.is_float:
                raise TypeError(f"{type(self).__name__}.{who}(): positions must be floating point, got "
                                f"{type(ftype).__name__}")
            cls = type(ftype)
        else:       # plain numbers: the texels' precision (Float32 for 8-bit texels)
            vt = self._tensor._array._vt
            cls = registry.flat_type(self._tensor._array._backend, vt if vt.is_float else Float32, False)
        return [c if type(c) is cls else cls(c) for c in comps]

    def _resolution(self) -> list:
        """``[res_x, res_y, ...]`` (x first, as the positions)."""
        return list(self._tensor.shape[:-1][::-1])

    def _texel_index(self, texels: list):
        """The flat index of channel 0 of the texel at per-axis indices ``texels`` (x first)."""
        shape = self._tensor.shape
        res = shape[:-1][::-1]
        C = shape[-1]
        idx = texels[-1]
        for k in range(len(texels) - 2, -1, -1):
            # one node, not a product and a sum
            idx = lanewise("fma", idx, res[k], texels[k]) if isinstance(idx, ArrayBase) else idx * res[k] + texels[k]
        return idx * C if C != 1 else idx

    def _fetch(self, texels: list, active, cls, array=None, base=None) -> list:
        """The channels of the texel at per-axis indices ``texels`` (x first), as ``cls`` arrays
        (read from ``array``, by default the tensor's; ``base``: the texel's flat index if the
        caller has it already)."""
        array = self._tensor._array if array is None else array
        at = type(array)
        if base is None:
            base = self._texel_index(texels)
        C = self._tensor.shape[-1]
        # Channels 2k and 2k + 1 of a texel are neighbours: one gather of the pair reads both
        # (the same values; not through AD, so only from texels that record none here).
        pairs = C >= 2 and self._pairs_pay(array) and array._ad is None
        out = []
        # (a JIT array: the engine's gather door, without the public function's type dispatch)
        get = gather_flat if isinstance(array, ArrayBase) else gather
        for ch in range(C):
            if pairs and ch % 2 == 1:
                continue        # (read with channel ch - 1)
            index = base + ch if ch else base
            if pairs and ch + 1 < C:
                vals = _halves(at, gather_pair(array, index, active)._node)
            else:
                vals = (get(at, array, index, active),)
            for k, v in enumerate(vals):
                v = _in_precision(v, cls)
                if self.Normalized:         # as Dr.Jit: times 1/255 rounded to the positions' precision
                    v = v * _INV_255
                    if self._srgb and ch + k != 3:      # channel 3 is alpha: stored linearly
                        v = srgb_to_linear(v)
                out.append(v)
        return out

    def _pairs_pay(self, array) -> bool:
        """Whether texels of ``array`` are read in pairs (:func:`_halves`): 32-bit float texels of
        a JIT array, on a backend whose gathers of pairs are fast (``Backend.pair_gathers``:
        AVX-512's masked 64-bit gathers; the reference backend, to test it)."""
        return (isinstance(array, ArrayBase) and array._vt is Float32 and not self.Normalized
                and getattr(current_backend(), "pair_gathers", False))

    def _result(self, channels: list):
        """One array per channel as Dr.Jit returns it: ``Array{C}f`` for up to 4 channels, else
        an ``ArrayXf``.  On the scalar backend (one position, computed as one-lane ``ArrayXf``)
        the components are the channels' Python numbers."""
        first = type(channels[0])
        scalar = not isinstance(channels[0], ArrayBase)
        elem = first._elem if scalar else first
        vcls = registry.array_type(elem, len(channels), "array") or registry.array_type(elem, None, "dynamic")
        return vcls._from_components([c[0] for c in channels] if scalar else list(channels))

    def eval(self, pos, active=True):
        """The filtered value at ``pos`` (``FilterMode.Nearest``: the nearest texel; ``Linear``:
        the (bi/tri)linear interpolant), 0 where ``active`` is false."""
        coords = self._coords(pos, "eval")
        # (a lookup of evaluated inputs makes the nodes its configuration's first lookup traced:
        # template.py; the same graph, a third of the Python)
        inputs = coords + [self._tensor._array]
        k = template.key("eval", self._config(), inputs, active)
        t = None if k is None else template.find(k)
        if t is not None and t is not template.TRACED:
            return self._result(t.arrays(template.inputs(inputs, active)))
        channels = self._eval(coords, active)
        if k is not None and t is None:
            template.record(k, template.inputs(inputs, active), channels)
        return self._result(channels)

    def _config(self) -> tuple:
        """What a lookup's graph depends on besides its inputs' kinds (:func:`.template.key`)."""
        return (type(self), self._tensor.shape, self._filter, self._wrap, self._srgb, self._use_accel)

    def _eval(self, coords: list, active) -> list:
        """:meth:`eval`'s channels, traced."""
        cls = type(coords[0])
        res = self._resolution()
        if self._filter is FilterMode.Nearest:
            texels = [nearest(p, r, self._wrap) for p, r in zip(coords, res)]
            return self._fetch(texels, active, cls)
        array = self._tensor._array
        if self._wrap is WrapMode.Clamp and _active_vertex(array) is None and self._row_pairs_apply(array):
            # (the x texels only as their pair: linear_clamp_pair's four nodes instead of eight)
            b, low, weights = linear_clamp_pair(coords[0], res[0])
            taps = [(None, weights)] + [linear(p, r, self._wrap) for p, r in zip(coords[1:], res[1:])]
            return self._accumulate(taps, active, cls, [(b, low)])
        taps = [linear(p, r, self._wrap) for p, r in zip(coords, res)]
        return self._accumulate(taps, active, cls)

    def _accumulate(self, taps: list, active, cls, xpairs: list | None = None) -> list:
        """Sum over the corners (x fastest) of weight * texel, per channel: the first product,
        then one fma per corner, with weights ``(wx * wy) * wz`` (Dr.Jit's rounding).

        With a grad-enabled tensor the texels are read without AD and each channel gets one
        derivative edge to the tensor (:func:`_attach_texel_edge`): the backward pass is one
        buffer and one scatter_add per corner, not a buffer, a scatter and an addition per
        gather.  Derivatives with respect to the positions flow through the weights as usual.

        The texels of a row come from :meth:`_pair_rows` where it applies (one 64-bit gather
        per row instead of two): the same values, so the same result bits.  ``xpairs``: the x
        axis as its pairs (:meth:`_pair_rows`), its texels then not in ``taps``."""
        array = self._tensor._array
        v = _active_vertex(array)
        if v is not None:
            array = type(array)._from_node(array._node)         # the texels without AD
        rows = self._pair_rows(taps, active, cls, array, xpairs)
        acc = None
        corners = []
        for corner in itertools.product(*[range(len(t[1])) for t in reversed(taps)]):
            corner = corner[::-1]                   # x varies fastest
            w = None
            for k, c in enumerate(corner):
                wk = taps[k][1][c]
                w = wk if w is None else w * wk
            if rows is None or v is not None:
                base = self._texel_index([taps[k][0][c] for k, c in enumerate(corner)])
            values = self._fetch(None, active, cls, array, base) if rows is None else [rows[corner[1:]][corner[0]]]
            if v is not None:
                corners.append((w, base))
            if acc is None:
                acc = [w * x for x in values]
            else:
                acc = [lanewise("fma", w, x, a) for x, a in zip(values, acc)]
        if v is not None:
            acc = [_attach_texel_edge(a, v, corners, ch, active) for ch, a in enumerate(acc)]
        return acc

    def _pair_rows(self, taps: list, active, cls, array, pairs: list | None = None):
        """``{texel indices of the other axes (y first): (the row's texels along x)}``, each two
        neighbouring texels of a row read by one :func:`~frostjit.functions.memory.gather_pair`
        (as ``cls`` arrays), or None where that does not apply.  ``taps``: per axis (x first)
        ``(texels, ...)``, the x texels being wrapped consecutive indices (2 for a linear
        lookup, 4 for a cubic one).

        Applies to one-channel ``Float32`` textures of at least 2 texels along x, Clamp or
        Mirror wrap, on a backend whose gathers of pairs are fast (``pair_gathers``: AVX-512's
        masked 64-bit gathers; the reference backend, to test it).  Wrapped consecutive texels
        ``x0``, ``x1`` are then both in ``{b, b + 1}`` for ``b = min(x0, x1, res - 2)`` (Clamp:
        equal or ``x1 = x0 + 1``; Mirror: also ``x1 = x0 - 1``; Repeat wraps ``res - 1`` to 0,
        not neighbours), so the pair at ``b`` holds both: ``x0`` is its low half where
        ``x0 == b``, else its high half.  Half the gathered elements: 1e6 bilinear lookups into
        1024^2, the kernel alone on one AVX-512 thread, ~0.7x the CPU time (docs/benchmarks.md,
        r14).

        ``pairs``: the pairs already made (per pair ``(b, [x == b for each of the two])``, the
        comparisons as Bool arrays), e.g. by :func:`.sampling.linear_clamp_pair`."""
        if not self._row_pairs_apply(array):
            return None
        if pairs is None:
            res_x = self._tensor.shape[-2]
            xs = taps[0][0]
            pairs = []      # per pair of neighbours: (b, [x == b for each of the two])
            for x0, x1 in zip(xs[0::2], xs[1::2]):
                low = x0 if self._wrap is WrapMode.Clamp else lanewise("min", x0, x1)      # (Clamp: x0 <= x1)
                b = lanewise("min", low, res_x - 2)
                pairs.append((b, [x == b for x in (x0, x1)]))
        at = type(array)
        rows = {}
        for rest in itertools.product(*[range(len(t[0])) for t in reversed(taps[1:])]):
            rest = rest[::-1]
            others = [taps[k + 1][0][c] for k, c in enumerate(rest)]
            row = []
            for b, low_half in pairs:
                pair = gather_pair(array, self._texel_index([b] + others), active)
                lo, hi = (h._node for h in _halves(at, pair._node))
                row += [_in_precision(at._from_node(ops.make_ternary("select", Float32, s._node, lo, hi)), cls)
                        for s in low_half]
            rows[rest] = tuple(row)
        return rows

    def _row_pairs_apply(self, array) -> bool:
        """Whether :meth:`_pair_rows` reads the rows of ``array`` (the texels; see there) in pairs."""
        return (self._tensor.shape[-2] >= 2 and self._tensor.shape[-1] == 1 and self._wrap is not WrapMode.Repeat
                and self._pairs_pay(array) and array._ad is None)

    def eval_fetch(self, pos, active=True) -> tuple:
        """The ``2**Dimension`` texels a linear lookup at ``pos`` would combine (x fastest), each
        as :meth:`eval` returns a value, without combining them (a tuple, as Dr.Jit)."""
        coords = self._coords(pos, "eval_fetch")
        cls = type(coords[0])
        taps = [linear(p, r, self._wrap) for p, r in zip(coords, self._resolution())]
        out = []
        for corner in itertools.product(*[range(2) for _ in taps]):
            corner = corner[::-1]
            out.append(self._result(self._fetch([taps[k][0][c] for k, c in enumerate(corner)], active, cls)))
        return tuple(out)

    def _cubic(self, pos, active, order: int, who: str):
        """The B-spline sums ``{derivative orders per axis: [per channel]}`` for the value (all
        zeros), the gradient (a 1 on one axis) and the hessian (2 on one axis, or 1 on two).

        Separable: the 4^D texels are contracted with the weights of one axis at a time (x
        first), keeping only the derivative orders some key needs, instead of a product of D
        weights per texel and key."""
        coords = self._coords(pos, who)
        cls = type(coords[0])
        taps = [cubic(p, r, self._wrap, order) for p, r in zip(coords, self._resolution())]
        D = self.Dimension
        keys = [(0,) * D]
        if order >= 1:
            keys += [_unit(D, a) for a in range(D)]
        if order >= 2:
            keys += [_pair(D, a, b) for a in range(D) for b in range(a, D)]
        rows = self._pair_rows(taps, active, cls, self._tensor._array)
        # grid: {(orders of the axes contracted so far, texel indices of the others): channels}
        grid = {}
        for corner in itertools.product(*[range(4) for _ in range(D)]):
            corner = corner[::-1]                   # x varies fastest
            grid[((), corner)] = [rows[corner[1:]][corner[0]]] if rows is not None else \
                self._fetch([taps[k][0][c] for k, c in enumerate(corner)], active, cls)
        for k in range(D):
            wanted = {key[:k + 1] for key in keys}
            nxt = {}
            for (done, rest), _ in grid.items():
                if rest[0] != 0:
                    continue
                for o in range(order + 1):
                    if done + (o,) not in wanted:
                        continue
                    acc = None
                    for c in range(4):
                        w = taps[k][1][o][c]
                        vals = grid[(done, (c,) + rest[1:])]
                        acc = [w * v for v in vals] if acc is None else [lanewise("fma", w, v, a) for v, a in zip(vals, acc)]
                    nxt[(done + (o,), rest[1:])] = acc
            grid = nxt
        return {key: grid[(key, ())] for key in keys}

    def eval_cubic(self, pos, active=True, force_nonaccel: bool = False):
        """The clamped cubic B-spline interpolant at ``pos`` (4 texels per axis, wrapped by the wrap
        mode), computed directly from the B-spline weights (differentiable in the texels and
        the positions)."""
        D = self.Dimension
        return self._result(self._cubic(pos, active, 0, "eval_cubic")[(0,) * D])

    eval_cubic_helper = eval_cubic

    def eval_cubic_grad(self, pos, active=True):
        """``(value, gradient)``: the gradient with respect to the position, one ``Array{D}f`` per
        channel (scaled by the resolution: the derivative along the unit position)."""
        D = self.Dimension
        acc = self._cubic(pos, active, 1, "eval_cubic_grad")
        value = acc[(0,) * D]
        grad = [self._result([acc[_unit(D, a)][ch] for a in range(D)]) for ch in range(len(value))]
        return self._result(value), grad

    def eval_cubic_hessian(self, pos, active=True):
        """``(value, gradient, hessian)``: the hessian as one ``Matrix{D}f`` per channel (a
        ``1 x 1`` nested list for a ``Texture1f``)."""
        D = self.Dimension
        acc = self._cubic(pos, active, 2, "eval_cubic_hessian")
        value = acc[(0,) * D]
        grad = [self._result([acc[_unit(D, a)][ch] for a in range(D)]) for ch in range(len(value))]
        hess = [self._matrix([[acc[_pair(D, min(a, b), max(a, b))][ch] for b in range(D)] for a in range(D)])
                for ch in range(len(value))]
        return self._result(value), grad, hess

    def _matrix(self, rows: list):
        """A ``Matrix{D}f`` of ``rows`` (Dr.Jit's hessian per channel); nested lists for ``D = 1``,
        for which there is no matrix type (Dr.Jit 1.5 fails with a ``bad_cast`` there)."""
        vrows = [self._result(r) for r in rows]
        mcls = registry.array_type(type(vrows[0]), len(rows), "matrix")
        return rows if mcls is None else mcls._from_components(vrows)


def _halves(at, pair):
    """The two ``Float32`` elements in the ``UInt64`` node ``pair`` (a gather of a pair: the
    first in the low half), as ``at`` arrays.  Built from nodes, not arrays: the operators' and
    constructors' checks would cost a tenth of a lookup's trace."""
    # (the shared literal 32 where there is one: operand_literal makes a new node each call)
    shift = ops.literal_cache(UInt64).get(32) if state.recorder is None else None
    hi = ops.make_binary("shr", UInt64, pair, shift if shift is not None else ops.operand_literal(UInt64, 32))
    return tuple(at._from_node(ops.bitcast(ops.cast(h, UInt32), Float32)) for h in (pair, hi))


def _in_precision(v, cls):
    """Texel values ``v`` in the positions' precision (the type of ``cls``; an AD value stays AD)."""
    return v if v._vt is cls._vt else registry.flat_type(v._backend, cls._vt, v._is_ad)(v)


def _active_vertex(array):
    """The AD variable of ``array`` if derivatives of operations on it are recorded here."""
    v = array._ad
    if v is None or not type(array)._is_ad or not is_active(v):
        return None
    return v


def _attach_texel_edge(out, v, corners: list, ch: int, active):
    """``out`` (a channel of a lookup computed from texels read without AD) with one more
    derivative edge, to the tensor's variable ``v``: ``d out = sum_c w_c d tensor[index_c + ch]``.

    ``corners`` holds ``(weight, flat index of channel 0)`` per texel.  Backward: one zero
    buffer of the tensor's size and a scatter_add per corner; forward: a gather per corner."""
    cls = v.cls
    if not type(out)._is_ad or type(out)._vt is not out._vt:
        out = registry.flat_type(out._backend, out._vt, True)(out)
    weights = [registry.flat_type(out._backend, out._vt, False)._from_node(w._node) if isinstance(w, ArrayBase)
               else w for w, _ in corners]
    index = [i + ch if ch else i for _, i in corners]
    index = [type(i)._from_node(i._node) for i in index]
    if isinstance(active, ArrayBase):
        active = type(active)._from_node(active._node)

    def scatter_corners(t, g):
        for w, i in zip(weights, index):
            scatter_add(t, cls(g * w), i, active)
    # (a ScatterAdjoint: every lookup and channel of one backward pass scatters into one buffer)
    bwd = ScatterAdjoint(lambda: sized_literal(cls, 0, v.size, v), scatter_corners)

    def fwd(gs):
        total = None
        src = broadcast(gs, v.size, v)
        for w, i in zip(weights, index):
            term = gather(cls, src, i, active) * w
            total = term if total is None else total + term
        return total

    parents = out._ad.parents if out._ad is not None else ()
    res = type(out)._from_node(out._node)
    res._ad = Vertex(type(res), res._node.size, parents + ((v, fwd, bwd),), res._node)
    return res


def _unit(D: int, a: int) -> tuple:
    """Derivative orders of the gradient along axis ``a``."""
    return tuple(1 if k == a else 0 for k in range(D))


def _pair(D: int, a: int, b: int) -> tuple:
    """Derivative orders of the hessian entry ``(a, b)`` (``a <= b``)."""
    return tuple((2 if a == b else 1) if k in (a, b) else 0 for k in range(D))
