"""Neural-network modules (Dr.Jit's ``drjit.nn.Module`` and its layers).

A network is described first (``Sequential(Linear(-1, 32), ReLU(), Linear(-1, 3))``, sizes may be
``-1`` = inferred), then instantiated for a tensor type and input size by :meth:`Module.alloc`,
then packed (:func:`frostjit.nn.pack`) so all coefficients live in one buffer.  Modules are
PyTrees (``DRJIT_STRUCT``): ``fj.freeze``, the AD functions and ``fj.eval`` walk them.  An
allocated module is also a mutable mapping from dotted parameter paths (``"layers.0.weights"``;
``"weights"`` once packed) to arrays, the same interface as the optimizers, so
``opt.update(net)`` and ``net.update(opt)`` move parameters both ways.
"""
from __future__ import annotations

import copy
import math
from collections.abc import MutableMapping

from .. import traits
from ..array.meta import vartype_of
from ..functions.math import exp, exp2, fma, maximum, select, sincos, tanh, abs as fj_abs, round as fj_round
from ..functions.creation import zeros
from ..random import rng as make_rng
from ..tensor import concat, matmul, reshape
from .coopvec import CoopVec
from .view import MatrixView, matvec, repack

# fj.freeze watches this module's code as the user's (freeze/code.py): the layers' settings
# (negative_slope, scale, offset, octaves, ...) are plain attributes, not PyTree fields, so a
# frozen function sees a change only through the reads made here.
__fj_watched__ = True

# Dr.Jit's default seed for weight initialization: far from the default seed 0 that a program's
# own sampling would use, so the weights are not correlated with it.
DEFAULT_SEED = 0x100000000


def _is_tensor(x) -> bool:
    return getattr(type(x), "IsTensor", False)


def _coop_map(arg, fn):
    """``fn`` applied to each component of a cooperative vector (a new cooperative vector), or to
    a tensor / array as a whole."""
    if isinstance(arg, CoopVec):
        return CoopVec(*[fn(c) for c in arg])
    return fn(arg)


class Module(MutableMapping):
    """Base class of the network modules.

    Subclasses define ``__call__`` (evaluate on a :class:`CoopVec`, and for element-wise layers on
    tensors) and, when they have parameters or a size, ``_alloc``.

    Examples
    --------
    >>> net = Sequential(Linear(-1, 32, bias=False), ReLU(), Linear(-1, 3))
    >>> net = net.alloc(TensorXf, 2)
    >>> net = pack(net, layout="training")
    >>> y = net(CoopVec(x0, x1))
    """

    DRJIT_STRUCT: dict = {}
    _prefix = ""

    def __call__(self, arg, /):
        """Evaluate the model on a cooperative vector and return the result."""
        raise NotImplementedError(f"{type(self).__name__}.__call__()")

    # -- allocation -------------------------------------------------------------------------
    def _alloc(self, dtype: type, size: int, rng) -> tuple["Module", int]:
        """A copy of ``self`` allocated for inputs of ``size`` components, and its output size
        (element-wise layers: the input size)."""
        return copy.copy(self), size

    def alloc(self, dtype: type, size: int = -1, rng=None) -> "Module":
        """A new instance of the model with allocated (randomly initialized) weights.

        Parameters
        ----------
        dtype : type
            A tensor type to store the weights in (``frostjit.llvm.ad.TensorXf16``,
            ``frostjit.llvm.ad.TensorXf``, ...).
        size : int
            The number of components of the input cooperative vector; needed when the first
            layers' sizes are ``-1``.
        rng : frostjit.random.Generator, optional
            The generator that draws the initial weights; default ``fj.rng(seed=0x100000000)``
            (Dr.Jit's), so two ``alloc`` calls give the same weights.

        Returns
        -------
        Module
        """
        if not (isinstance(dtype, type) and getattr(dtype, "IsTensor", False)):
            raise TypeError(f"frostjit.nn.Module.alloc(): 'dtype' must be a tensor type such as TensorXf, "
                            f"got {dtype!r}")
        if rng is None:
            rng = make_rng(seed=DEFAULT_SEED)
        out, _ = self._alloc(dtype, size, rng)
        return out

    # -- packing ----------------------------------------------------------------------------
    def _param_slots(self, path: str = ""):
        """``(path, owner, attribute)`` of each parameter of this module and its sub-modules."""
        return []

    def _pack_module(self, layout: str) -> "Module":
        """A copy of the module with every matrix and bias packed into one buffer."""
        out = _deep_modules(self)
        slots = [(o, a) for _, o, a in out._param_slots() if getattr(o, a) is not None]
        if not slots:
            return out
        values = [getattr(o, a) for o, a in slots]
        for (o, a), v in zip(slots, repack(values, layout, "pack")):
            setattr(o, a, v)
        return out

    # -- the parameter mapping --------------------------------------------------------------
    def _entries(self) -> dict:
        """``{key: [(owner, attribute), ...]}``: plain parameters one per key, packed views all
        under ``"weights"`` (their shared buffer)."""
        entries: dict = {}
        for path, owner, attr in self._param_slots():
            value = getattr(owner, attr)
            if value is None:
                continue
            key = "weights" if isinstance(value, MatrixView) else path
            entries.setdefault(self._prefix + key, []).append((owner, attr))
        return entries

    def __getitem__(self, key: str):
        slots = self._entries().get(key)
        if slots is None:
            raise KeyError(key)
        owner, attr = slots[0]
        value = getattr(owner, attr)
        return value.buffer if isinstance(value, MatrixView) else value

    def __setitem__(self, key: str, value) -> None:
        slots = self._entries().get(key)
        if slots is None:
            raise KeyError(key)
        for owner, attr in slots:
            old = getattr(owner, attr)
            if isinstance(old, MatrixView):
                if len(value) != len(old.buffer):
                    raise ValueError(f"frostjit.nn.Module['{key}']: expected a buffer of {len(old.buffer)} "
                                     f"elements, got {len(value)}")
                old.buffer, old.dtype = value, vartype_of(type(value)._vt)
            else:
                if old is not None and type(value) is not type(old):
                    value = type(old)(value)      # (Dr.Jit: a float32 tensor into a float16 slot)
                setattr(owner, attr, value)

    def __delitem__(self, key: str) -> None:
        raise TypeError(f"frostjit.nn.Module: parameters cannot be deleted ('{key}')")

    def __iter__(self):
        return iter(self._entries())

    def __len__(self) -> int:
        return len(self._entries())

    # Mappings compare by content; modules compare by identity (they are also PyTree nodes).
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _deep_modules(m: Module) -> Module:
    """A copy of ``m`` and of its sub-modules (arrays are shared, not copied)."""
    out = copy.copy(m)
    if isinstance(out, Sequential):
        out.layers = tuple(_deep_modules(layer) for layer in out.layers)
    return out


class Sequential(Module):
    """Evaluates its layers ``arg[0]``, ``arg[1]``, ... in sequence.

    Parameters
    ----------
    *args : Module
        The layers.
    prefix : str
        Prepended (with a dot) to every key of the parameter mapping (``"mlp.layers.0.weights"``),
        for sharing one optimizer between networks; kept by :func:`pack`.
    """

    DRJIT_STRUCT = {"layers": tuple, "prefix": str}

    def __init__(self, *args: Module, prefix: str = ""):
        for a in args:
            if not isinstance(a, Module):
                raise TypeError(f"frostjit.nn.Sequential(): layers must be Modules, got {type(a).__name__}")
        self.layers = tuple(args)
        self.prefix = prefix

    @property
    def _prefix(self) -> str:
        return self.prefix + "." if self.prefix else ""

    def __call__(self, arg, /):
        for layer in self.layers:
            arg = layer(arg)
        return arg

    def _alloc(self, dtype, size, rng):
        layers = []
        for layer in self.layers:
            layer, size = layer._alloc(dtype, size, rng)
            layers.append(layer)
        out = copy.copy(self)
        out.layers = tuple(layers)
        return out, size

    def _param_slots(self, path: str = ""):
        return [s for i, layer in enumerate(self.layers) for s in layer._param_slots(f"{path}layers.{i}.")]

    def __len__(self) -> int:
        return len(self._entries())

    def __repr__(self) -> str:
        body = "".join(f"  {layer!r},\n" for layer in self.layers).rstrip(",\n")
        return f"Sequential(\n{body}\n)" if self.layers else "Sequential()"


class Linear(Module):
    """A learnable affine map ``y = A @ x + b``.

    Parameters
    ----------
    in_features : int
        Input size; ``-1``: the previous layer's output size (or the network's input size).
    out_features : int
        Output size; ``-1``: the input size.
    bias : bool
        Whether to add a learnable bias ``b``.

    Notes
    -----
    :meth:`Module.alloc` draws the weights uniformly on ``[-k, k]``, ``k = 1/sqrt(out_features)``
    (Dr.Jit's uniform Xavier-style initialization, one ``rng.uniform`` call per matrix in layer
    order, so the weights equal Dr.Jit's for the same seed); biases start at zero.  Evaluation on
    a cooperative vector needs packed weights (:func:`frostjit.nn.pack`).
    """

    DRJIT_STRUCT = {"weights": None, "bias": None}

    def __init__(self, in_features: int = -1, out_features: int = -1, bias=True) -> None:
        self.config = (int(in_features), int(out_features), bool(bias))
        self.weights = None
        self.bias = None

    def _alloc(self, dtype, size, rng):
        in_f, out_f, has_bias = self.config
        if in_f == -1:
            in_f = size
        if in_f < 0:
            raise RuntimeError("The network contains layers with an unspecified size. You must specify the "
                               "input size to frostjit.nn.Module.alloc().")
        if out_f == -1:
            out_f = in_f
        out = copy.copy(self)
        out.config = (in_f, out_f, has_bias)
        k = 1.0 / math.sqrt(out_f)
        # (the generator draws float32/float64 only: half-precision weights are drawn in float32
        # and rounded, which gives Dr.Jit's float16 weights)
        draw_t = dtype if not traits.is_half_v(dtype) else traits.float32_array_t(dtype)
        w = rng.uniform(draw_t, (out_f, in_f), low=-k, high=k)
        out.weights = w if draw_t is dtype else dtype(w)
        out.bias = zeros(dtype, (out_f,)) if has_bias else None
        return out, out_f

    def _param_slots(self, path: str = ""):
        slots = [(path + "weights", self, "weights")]
        if self.config[2]:
            slots.append((path + "bias", self, "bias"))
        return slots

    def __call__(self, arg, /):
        """``A @ x + b``: on a cooperative vector with packed weights (:func:`matvec`), or on a
        tensor of shape ``(in_features, N)`` with unpacked weights (``(out_features, N)``, a
        matrix product; Dr.Jit's tensor mode)."""
        w = self.weights
        if w is None:
            raise RuntimeError("frostjit.nn.Linear: uninitialized network. Call "
                               "'net = net.alloc(<Tensor type>)' to initialize the weight storage first.")
        if isinstance(arg, CoopVec):
            if not isinstance(w, MatrixView):
                raise RuntimeError("frostjit.nn.Linear: cooperative-vector evaluation requires packed weights. "
                                   "Call 'frostjit.nn.pack(net)' to transform the network into a "
                                   "cooperative-vector layout.")
            return matvec(w, arg, self.bias)
        if isinstance(w, MatrixView):
            raise RuntimeError("frostjit.nn.Linear: tensor-mode evaluation requires unpacked 2D weights. "
                               "Either wrap the input as 'nn.CoopVec(...)' or construct a fresh unpacked "
                               "module (without calling 'frostjit.nn.pack()').")
        if not _is_tensor(arg):
            raise TypeError(f"frostjit.nn.Linear: expected a CoopVec or a tensor, got {type(arg).__name__}")
        y = matmul(w, arg)
        if self.bias is not None:
            y = y + reshape(self.bias, (self.bias.shape[0], 1))
        return y

    def __repr__(self) -> str:
        in_f, out_f, has_bias = self.config
        return f"Linear(in_features={in_f}, out_features={out_f}{'' if has_bias else ', bias=False'})"


class ReLU(Module):
    """``max(x, 0)``, component-wise (cooperative vectors and tensors)."""

    def __call__(self, arg, /):
        return maximum(arg, 0)


class LeakyReLU(Module):
    """``x`` where ``x >= 0``, else ``negative_slope * x`` (cooperative vectors and tensors).

    Parameters
    ----------
    negative_slope : float or array
        The slope for negative inputs.
    """

    def __init__(self, negative_slope=0.01):
        self.negative_slope = negative_slope

    def __call__(self, arg, /):
        return _coop_map(arg, lambda v: select(v >= 0, v, v * self.negative_slope))

    def __repr__(self) -> str:
        return "LeakyReLU()"


class Exp(Module):
    """``exp(x)``, component-wise (cooperative vectors and tensors)."""

    def __call__(self, arg, /):
        return _coop_map(arg, exp)


class Exp2(Module):
    """``2**x``, component-wise (cooperative vectors and tensors)."""

    def __call__(self, arg, /):
        return exp2(arg)


class Tanh(Module):
    """``tanh(x)``, component-wise (cooperative vectors and tensors)."""

    def __call__(self, arg, /):
        return tanh(arg)


class ScaleAdd(Module):
    """``x * scale + offset`` with constant (not trained) ``scale`` and ``offset``.

    Parameters
    ----------
    scale, offset : float, int, array or None
        ``None`` skips the multiplication / addition.
    """

    def __init__(self, scale=None, offset=None):
        self.scale = scale
        self.offset = offset

    def __call__(self, arg, /):
        if self.scale is not None:
            arg = arg * self.scale
        if self.offset is not None:
            arg = arg + self.offset
        return arg

    def __repr__(self) -> str:
        return "ScaleAdd()"


class Cast(Module):
    """Convert the input to another element type (``Cast(frostjit.llvm.ad.Float16)``).

    Parameters
    ----------
    dtype : type, optional
        A 1-D array type; ``None`` leaves the input as it is.
    """

    def __init__(self, dtype=None):
        self.dtype = dtype

    def __call__(self, arg, /):
        if self.dtype is None:
            return arg
        if isinstance(arg, CoopVec):
            return CoopVec(*[self.dtype(c) for c in arg])
        if _is_tensor(arg):
            return traits.tensor_t(self.dtype)(self.dtype(arg.array), arg.shape)
        return self.dtype(arg)

    def __repr__(self) -> str:
        return f"Cast(dtype={getattr(self.dtype, '__name__', None)})"


class _Encode(Module):
    """Shared parts of :class:`SinEncode` and :class:`TriEncode`: ``2 * octaves`` outputs per input
    channel, channel-major, (sin, cos) pairs per octave."""

    def __init__(self, octaves: int = 0, shift: float = 0) -> None:
        self.octaves = int(octaves)
        self.shift = shift
        self.channels = -1

    def _alloc(self, dtype, size, rng):
        out = copy.copy(self)
        out.channels = size
        return out, size * 2 * self.octaves

    def _octaves(self, x) -> list:
        """``[sin_0, cos_0, sin_1, cos_1, ...]`` of one input component ``x``."""
        raise NotImplementedError

    def _components(self, comps) -> list:
        return [v for c in comps for v in self._octaves(c)]

    def __call__(self, arg, /):
        if isinstance(arg, CoopVec):
            return CoopVec(*self._components(list(arg)))
        if _is_tensor(arg):
            if len(arg.shape) != 2:
                raise ValueError(f"frostjit.nn.{type(self).__name__}: expected a 2-D tensor (channels, samples), "
                                 f"got shape {arg.shape}")
            c, n = arg.shape
            outs = self._components([arg[k].array for k in range(c)])
            return type(arg)(concat(outs), (len(outs), n))
        raise TypeError(f"frostjit.nn.{type(self).__name__}: expected a CoopVec or tensor, got {type(arg).__name__}")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(octaves={self.octaves}, shift={self.shift}, in_channels={self.channels}, "
                f"out_features={self.channels * 2 * self.octaves})")


class SinEncode(_Encode):
    """Sine/cosine encoding: each input ``x`` becomes, for octaves ``i = 0 .. n-1``,
    ``sin(2 pi (2**i x + i s))`` and ``cos(...)`` (``s`` = ``shift`` in periods).

    Parameters
    ----------
    octaves : int
        ``n``; the output has ``2 n`` components per input component.
    shift : float
        Phase shift per octave, in fractional periods.
    """

    def _octaves(self, x) -> list:
        # One sincos per component; octave i follows from octave i-1 by the double-angle formulas
        # and a fixed rotation by beta_i = 2 pi s (2 - i) (theta_i = 2 theta_(i-1) + beta_i): Dr.Jit's
        # recurrence, so the values round as Dr.Jit's do (float16 included).
        s, c = sincos(x * (2 * math.pi))
        out = [s, c]
        for i in range(1, self.octaves):
            s2 = 2 * s
            s, c = s2 * c, fma(-s2, s, 1)
            if self.shift:
                sb, cb = math.sin(2 * math.pi * self.shift * (2 - i)), math.cos(2 * math.pi * self.shift * (2 - i))
                s, c = fma(s, cb, c * sb), fma(c, cb, -s * sb)
            out += [s, c]
        return out if self.octaves else []


class TriEncode(_Encode):
    """Triangle-wave encoding: as :class:`SinEncode` with ``cos_tri(t) = 1 - 4|t - round(t)|`` and
    ``sin_tri(t) = cos_tri(t - 1/4)`` instead of ``cos(2 pi t)`` and ``sin(2 pi t)``."""

    def _octaves(self, x) -> list:
        out = []
        for i in range(self.octaves):
            t = fma(x, float(2 ** i), self.shift * i)      # (fused, as Dr.Jit: the same rounding)
            u = t - 0.25
            out += [fma(fj_abs(u - fj_round(u)), -4, 1), fma(fj_abs(t - fj_round(t)), -4, 1)]
        return out


class HashEncodingLayer(Module):
    """A layer wrapping a hash encoding (:class:`frostjit.hashgrid.HashGridEncoding` or
    :class:`frostjit.hashgrid.PermutoEncoding`).

    The encoding's parameters are not packed with the network's weights (the layouts differ) and
    are not in the module's parameter mapping: optimize ``encoding.params`` separately.

    Parameters
    ----------
    encoding : frostjit.hashgrid.HashEncoding
    """

    DRJIT_STRUCT = {"encoding": None}

    def __init__(self, encoding) -> None:
        self.encoding = encoding

    def _alloc(self, dtype, size, rng):
        n = self.encoding.dimension
        if size not in (-1, n):
            raise ValueError(f"frostjit.nn.HashEncodingLayer: the encoding takes {n} inputs, got {size}")
        return copy.copy(self), self.encoding.n_output_features

    def __call__(self, arg, /):
        if not isinstance(arg, CoopVec):
            raise TypeError(f"frostjit.nn.HashEncodingLayer: expected a CoopVec input, got {type(arg).__name__}")
        return CoopVec(*self.encoding(list(arg)))

    def __repr__(self) -> str:
        return repr(self.encoding)
