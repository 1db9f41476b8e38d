"""``fj.wrap(source, target)``: call PyTorch or JAX code from frostjit (and frostjit code from
PyTorch) with gradients flowing both ways (Dr.Jit's ``drjit.wrap``).

>>> @fj.wrap(source="frostjit", target="torch")
... def f(x):                    # receives torch tensors, returns torch tensors
...     return torch.sin(x) * 2
>>> y = f(x)                     # x, y: frostjit arrays; fj.backward(y) reaches x through torch

Supported, as in Dr.Jit 1.5: frostjit -> torch, frostjit -> jax, torch -> frostjit (primal,
forward and reverse mode); jax -> frostjit raises ``ValueError``.  ``"drjit"`` is accepted as
a name of frostjit.  The frameworks are imported when a wrapped function first runs.

Conversions (CPU, copies through NumPy), as in Dr.Jit: a 1-D array -> a 1-D tensor, a static
vector (``Array3f``) -> a tensor of shape ``(3, n)`` (Dr.Jit's layout), a frostjit tensor -> a
tensor of its shape; whatever comes back into frostjit (a result, a tensor argument of a call
from torch, a tangent) is a frostjit tensor of its shape (``TensorXf``, ``TensorXi``, ...; AD
types for floats), also a ``(n,)``, ``(k, n)`` or ``()`` one, while the gradient of an argument
keeps the argument's type (a ``Float`` gets a ``Float``).  Containers (PyTrees) are converted
leaf by leaf and other Python values passed as they are.

Across the boundary a wrapped call is one custom operation (:mod:`.custom`): the other
framework's own AD computes its derivatives (``torch.autograd.grad`` / forward-mode dual
tensors, ``jax.vjp`` / ``jax.jvp``).
"""
from __future__ import annotations

import functools
import importlib
import sys
import warnings

import numpy as np

from ..array import registry
from ..array.flat import ArrayBase
from ..array.vector import VectorBase
from ..trace.dtypes import from_numpy_dtype
from ..trace.state import JitBackend
from ..traits import is_jit_v, is_tensor_v, tensor_t
from ..tree import map2, node_type
from ..tree.kinds import Kind
from . import api
from .custom import CustomOp, custom

_FROSTJIT = ("frostjit", "drjit")


def _framework(arg, who: str) -> str:
    name = arg if isinstance(arg, str) else getattr(arg, "__name__", None)
    if name in _FROSTJIT:
        return "frostjit"
    if name in ("torch", "jax"):
        return name
    raise ValueError(f"wrap(): unknown {who!r} argument {arg!r} (expected 'frostjit', 'torch' or 'jax')")


def wrap(source, target):
    """Decorator: expose a function written with framework ``target`` to code using ``source``.

    Parameters
    ----------
    source : str or module
        The framework of the caller: ``"frostjit"`` (or ``"drjit"``) or ``"torch"``.
    target : str or module
        The framework the function is written in: ``"torch"`` or ``"jax"`` (from frostjit),
        ``"frostjit"`` (from torch).

    Returns
    -------
    callable
        A decorator.  The wrapped function takes and returns PyTrees of the caller's arrays;
        derivatives propagate through it in both directions (``fj.backward``/``fj.forward``,
        or ``tensor.backward()``/``torch.func.jvp``).

    Raises
    ------
    ValueError
        For an unknown framework, neither side frostjit (``torch`` -> ``torch`` too), or jax ->
        frostjit (unsupported); as in Dr.Jit 1.5.
    """
    s, t = _framework(source, "source"), _framework(target, "target")
    if "frostjit" not in (s, t):
        raise ValueError(f"wrap(): at least one of 'source' and 'target' must equal 'frostjit' "
                         f"(got {s!r} and {t!r})")
    if s != t and (s, t) not in (("frostjit", "torch"), ("frostjit", "jax"), ("torch", "frostjit")):
        raise ValueError(f"wrap(): unsupported combination of source {s!r} and target {t!r}")

    def decorator(func):
        if s == t:
            return func
        if s == "frostjit" and t in ("torch", "jax"):
            @functools.wraps(func)
            def to_other(*args, **kwargs):
                return custom(_TorchCall if t == "torch" else _JaxCall, func, args, kwargs)
            return to_other
        @functools.wraps(func)
        def from_torch(*args, **kwargs):
            return _from_torch(func, args, kwargs)
        return from_torch
    return decorator


def wrap_ad(source, target):
    """Dr.Jit's former name of :func:`wrap` (deprecated there too: warns ``DeprecationWarning``)."""
    warnings.warn("wrap_ad() is deprecated, use wrap()", DeprecationWarning, stacklevel=2)
    return wrap(source, target)


# ---------------------------------------------------------------------------
# Walking PyTrees with a conversion at arrays, static vectors and foreign tensors

def _convert(o, leaf, is_leaf):
    """``o`` rebuilt with ``leaf(x)`` in place of each ``x`` for which ``is_leaf(x)``."""
    if is_leaf(o):
        return leaf(o)
    nt = node_type(type(o))
    if nt.kind in (Kind.VALUE, Kind.ARRAY, Kind.VECTOR):
        return o
    keys, values = nt.children(o)
    return nt.rebuild(o, keys, [_convert(v, leaf, is_leaf) for v in values])


def _collect(o, is_leaf, out: list) -> list:
    """The leaves of ``o`` (``is_leaf``), in :func:`_convert`'s order."""
    if is_leaf(o):
        out.append(o)
        return out
    nt = node_type(type(o))
    if nt.kind not in (Kind.VALUE, Kind.ARRAY, Kind.VECTOR):
        for v in nt.children(o)[1]:
            _collect(v, is_leaf, out)
    return out


def _is_jit(o) -> bool:
    """A frostjit value handed to the other framework whole: an array, a static vector, a tensor."""
    return isinstance(o, (ArrayBase, VectorBase)) or (is_tensor_v(type(o)) and is_jit_v(type(o)))


def _numpy(a) -> np.ndarray:
    """A frostjit array as NumPy: ``(n,)``, ``(components, n)`` for a static vector (a complex
    number too: its real and imaginary parts, as Dr.Jit's tensor of it), a tensor's shape."""
    if isinstance(a, VectorBase) and type(a).IsComplex:
        return np.stack([np.asarray(c.numpy()) for c in a._c])
    return np.asarray(a.numpy(), order="C")      # (np.ascontiguousarray made a 0-d tensor 1-d)


def _is_float(a) -> bool:
    return a.Type.is_float


def _from_numpy(data: np.ndarray, shape_hint: str):
    """NumPy data from another framework as a frostjit tensor of its shape and type (an AD type for
    floats): as Dr.Jit, whatever enters frostjit from torch or JAX is a tensor, also a ``(n,)``,
    ``(k, n)`` or ``()`` one (``shape_hint`` names the value in the error)."""
    vt = from_numpy_dtype(data.dtype)
    tensor = tensor_t(registry.flat_type(JitBackend.LLVM, vt, True))
    if tensor is None:
        raise TypeError(f"wrap(): cannot convert a {shape_hint} of shape {tuple(data.shape)} and type "
                        f"{data.dtype} to a frostjit tensor")
    return tensor(np.asarray(data, order="C"))      # (np.ascontiguousarray makes a 0-d array 1-d)


def _like(data: np.ndarray, like):
    """NumPy data (a gradient or tangent) as a value of ``like``'s type: derivatives of the values
    that crossed the boundary keep their types (a ``Float`` argument gets a ``Float`` gradient)."""
    if is_tensor_v(type(like)):
        return _from_numpy(data, "gradient")
    return type(like)(np.ascontiguousarray(data).reshape(_numpy_shape(like)))


def _numpy_shape(a) -> tuple:
    """The shape :func:`_numpy` gives ``a`` (without copying its data)."""
    return tuple(a.shape) if isinstance(a, VectorBase) else (len(a),)


def _zeros_for(t) -> np.ndarray:
    """Zeros of a torch tensor's shape and type (its gradient where torch found none)."""
    return np.zeros_like(t.detach().cpu().numpy())


# ---------------------------------------------------------------------------
# frostjit -> torch

def _torch():
    return importlib.import_module("torch")


def _is_tensor(o) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(o, torch.Tensor)


class _TorchCall(CustomOp):
    """A torch function called from frostjit: eval runs it under torch's autograd, backward uses
    ``torch.autograd.grad``, forward re-runs it on dual tensors (forward-mode AD)."""

    def eval(self, func, args, kwargs):
        torch = _torch()
        self.func, self.args, self.kwargs = func, args, kwargs

        self.made = {}          # id(torch tensor) -> the frostjit value it was made from

        def to_tensor(a):
            t = torch.from_numpy(_numpy(a))
            t = t.requires_grad_(True) if _is_float(a) else t
            self.made[id(t)] = a
            return t

        with torch.enable_grad():
            self.t_args = _convert((args, kwargs), to_tensor, _is_jit)
            self.t_out = func(*self.t_args[0], **self.t_args[1])
        return _convert(self.t_out, lambda t: _from_numpy(t.detach().cpu().numpy(), "torch tensor"),
                        _is_tensor)

    def backward(self):
        torch = _torch()
        grads_out = _collect(self.grad_out(), _is_jit, [])
        outs = _collect(self.t_out, _is_tensor, [])
        ins = _collect(self.t_args, _is_tensor, [])
        pairs = [(o, torch.from_numpy(_numpy(g)).to(o.dtype).reshape(o.shape))
                 for o, g in zip(outs, grads_out) if o.requires_grad]
        diff_ins = [t for t in ins if t.requires_grad]
        found = torch.autograd.grad([o for o, _ in pairs], diff_ins, [g for _, g in pairs],
                                    retain_graph=True, allow_unused=True) if pairs and diff_ins else []
        by_id = {id(t): g for t, g in zip(diff_ins, found)}

        def grad_of(t):
            g = by_id.get(id(t))
            return _like(g.detach().cpu().numpy() if g is not None else _zeros_for(t), self.made[id(t)])
        grads_in = _convert(self.t_args, grad_of, _is_tensor)
        self.set_grad_in("args", grads_in[0])
        self.set_grad_in("kwargs", grads_in[1])

    def forward(self):
        torch = _torch()
        fwad = torch.autograd.forward_ad
        tangents = _collect(self.grad_in("args"), _is_jit, []) + _collect(self.grad_in("kwargs"), _is_jit, [])
        primal = _collect((self.args, self.kwargs), _is_jit, [])
        with fwad.dual_level():
            it = iter(zip(primal, tangents))

            def dual(a):
                p, g = next(it)
                t = torch.from_numpy(_numpy(p))
                return fwad.make_dual(t, torch.from_numpy(_numpy(g)).to(t.dtype)) if _is_float(p) else t
            d_args, d_kwargs = _convert((self.args, self.kwargs), dual, _is_jit)
            out = self.func(*d_args, **d_kwargs)

            def tangent(t):
                tan = fwad.unpack_dual(t).tangent
                data = tan.detach().cpu().numpy() if tan is not None else _zeros_for(t)
                return _from_numpy(data, "tangent")
            self.set_grad_out(_convert(out, tangent, _is_tensor))

    def name(self):
        return f"wrap(torch:{getattr(self.func, '__name__', 'function')})"


# ---------------------------------------------------------------------------
# frostjit -> jax

def _jax():
    return importlib.import_module("jax")


def _is_jax_array(o) -> bool:
    """A JAX array, or a scalar JAX hands back in its place (jit returns its typed literals for
    Python numbers that passed through: ``jax.jit(lambda x, n: (x, n))(x, 4)``)."""
    jax = sys.modules.get("jax")
    if jax is None:
        return False
    return isinstance(o, jax.Array) or (type(o).__module__.startswith(("jax.", "jaxlib."))
                                        and hasattr(o, "dtype"))


class _JaxCall(CustomOp):
    """A JAX function called from frostjit: ``jax.vjp`` in eval and backward, ``jax.jvp`` in forward.

    Only floating point arrays are differentiated; other arrays and Python values are constants.
    """

    def eval(self, func, args, kwargs):
        jax = _jax()
        self.func, self.args, self.kwargs = func, args, kwargs
        leaves = _collect((args, kwargs), _is_jit, [])
        self.diff = [i for i, a in enumerate(leaves) if _is_float(a)]
        self.values = [jax.numpy.asarray(_numpy(a)) for a in leaves]
        out, self.vjp = jax.vjp(self._call, *[self.values[i] for i in self.diff])
        self.out = out
        return _convert(out, lambda x: _from_numpy(np.asarray(x), "jax array"), _is_jax_array)

    def _call(self, *diff_values):
        values = list(self.values)
        for i, v in zip(self.diff, diff_values):
            values[i] = v
        it = iter(values)
        a, k = _convert((self.args, self.kwargs), lambda _: next(it), _is_jit)
        return self.func(*a, **k)

    def backward(self):
        jax = _jax()
        grads = iter(_collect(self.grad_out(), _is_jit, []))

        def cotangent(x):
            g = next(grads)
            if not jax.numpy.issubdtype(x.dtype, jax.numpy.floating):
                return np.zeros(np.shape(x), dtype=jax.dtypes.float0)
            return jax.numpy.asarray(_numpy(g).reshape(np.shape(x)), dtype=x.dtype)
        found = self.vjp(_convert(self.out, cotangent, _is_jax_array))
        leaves = _collect((self.args, self.kwargs), _is_jit, [])
        per_leaf = [None] * len(leaves)
        for i, g in zip(self.diff, found):
            per_leaf[i] = g
        it = iter(zip(leaves, per_leaf))

        def grad_of(_):
            a, g = next(it)
            return _like(np.asarray(g), a) if g is not None else api.grad(a)
        g_args, g_kwargs = _convert((self.args, self.kwargs), grad_of, _is_jit)
        self.set_grad_in("args", g_args)
        self.set_grad_in("kwargs", g_kwargs)

    def forward(self):
        jax = _jax()
        tangents = _collect(self.grad_in("args"), _is_jit, []) + _collect(self.grad_in("kwargs"), _is_jit, [])
        primals = [self.values[i] for i in self.diff]
        tans = [jax.numpy.asarray(_numpy(tangents[i]), dtype=self.values[i].dtype) for i in self.diff]
        _, out_tan = jax.jvp(self._call, primals, tans)
        def tangent(p, t):
            # where the result had a JAX array; a Python value passed through keeps its place
            if not _is_jax_array(p):
                return p
            t, dtype = np.asarray(t), np.asarray(p).dtype
            if t.dtype == jax.dtypes.float0:    # (the tangent of an integer result)
                t = np.zeros(np.shape(p), dtype=dtype)
            return _from_numpy(t.astype(dtype, copy=False), "tangent")
        self.set_grad_out(map2(self.out, out_tan, tangent, who="wrap"))

    def name(self):
        return f"wrap(jax:{getattr(self.func, '__name__', 'function')})"


# ---------------------------------------------------------------------------
# torch -> frostjit

def _from_torch(func, args, kwargs):
    torch = _torch()
    tensors = _collect((args, kwargs), _is_tensor, [])
    fn = _frostjit_function(torch)
    outs = fn.apply(func, (args, kwargs), *tensors)
    return _rebuild_torch_result(outs)


def _rebuild_torch_result(outs):
    template, values = outs[0], outs[1:]
    it = iter(values)
    return _convert(template, lambda _: next(it), lambda o: isinstance(o, _Slot))


class _Slot:
    """Where a tensor goes in a wrapped function's result (see :func:`_frostjit_function`)."""

    __slots__ = ()


@functools.lru_cache(maxsize=1)
def _frostjit_function(torch):
    """The ``torch.autograd.Function`` running frostjit code (made once torch is imported)."""

    class FrostjitFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, func, tree, *tensors):
            it = iter(tensors)

            def to_array(t):
                t = next(it)
                a = _from_numpy(t.detach().cpu().numpy(), "torch tensor")
                if _is_float(a):
                    # every float input: inside forward() a tensor does not tell whether forward-mode
                    # AD (dual tensors) will ask for derivatives
                    api.enable_grad(a)
                return a
            fj_args, fj_kwargs = _convert(tree, to_array, _is_tensor)
            result = func(*fj_args, **fj_kwargs)
            ctx.fj_inputs = _collect((fj_args, fj_kwargs), _is_jit, [])
            ctx.fj_outputs = _collect(result, _is_jit, [])
            ctx.devices = [t.device for t in tensors]
            out_tensors = [torch.from_numpy(_numpy(a)) for a in ctx.fj_outputs]
            ctx.mark_non_differentiable(*[t for t, a in zip(out_tensors, ctx.fj_outputs) if not _is_float(a)])
            template = _convert(result, lambda _: _Slot(), _is_jit)
            return (template, *out_tensors)

        @staticmethod
        def backward(ctx, _template_grad, *grad_outputs):
            api.clear_grad(ctx.fj_inputs, ctx.fj_outputs)
            for a, g in zip(ctx.fj_outputs, grad_outputs):
                if g is not None and api.grad_enabled(a):
                    api.accum_grad(a, _like(g.detach().cpu().numpy(), a))
            api.enqueue(api.ADMode.Backward, ctx.fj_outputs)
            api.traverse(api.ADMode.Backward, api.ADFlag.ClearVertices)
            grads = [torch.from_numpy(_numpy(api.grad(a))).to(d) if _is_float(a) else None
                     for a, d in zip(ctx.fj_inputs, ctx.devices)]
            return (None, None, *grads)

        @staticmethod
        def jvp(ctx, _func, _tree, *tangents):
            api.clear_grad(ctx.fj_inputs, ctx.fj_outputs)
            for a, t in zip(ctx.fj_inputs, tangents):
                if t is not None and api.grad_enabled(a):
                    api.set_grad(a, _like(t.detach().cpu().numpy(), a))
            api.enqueue(api.ADMode.Forward, ctx.fj_inputs)
            api.traverse(api.ADMode.Forward, api.ADFlag.ClearVertices)
            # (torch wants None for the outputs marked non-differentiable)
            return (None, *[torch.from_numpy(_numpy(api.grad(a))) if _is_float(a) else None
                            for a in ctx.fj_outputs])

    return FrostjitFunction
