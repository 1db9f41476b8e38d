"""The data of a tensor: a flat 1-D JIT array holding the elements in C order, and a shape.

:class:`TensorBase` is what every tensor module works on: construction (from shapes, NumPy,
DLPack, nested lists, flat arrays, static vectors), the shape, conversion back to NumPy /
DLPack / torch / jax, printing, and the traversal protocol that makes a tensor a PyTree for
``fj.eval``, AD and ``fj.freeze`` (:mod:`frostjit.tree`).  Operators and indexing are added by
:class:`frostjit.tensor.tensor.Tensor`, the base of the concrete classes (``TensorXf``, ...).

**The shape inside a frozen function.**  A tensor's traversal state is its array and a *shape
template*: the shape with the leading dimension replaced by ``None``, because that dimension
follows from the array's width (``width // prod(shape[1:])``).  A frozen function therefore keys
on ``shape[1:]`` (another trailing shape traces again, as in Dr.Jit) and replays at a new batch
size; while it records, :attr:`TensorBase.shape` derives the leading dimension from
``fj.width(array)``, which is symbolic there, so index arithmetic built from the shape follows
the batch size at every replay.  Where ``prod(shape[1:])`` is 0 the template is the whole shape
(the leading dimension cannot be derived and is keyed too).
"""
from __future__ import annotations

import operator

import numpy as np

from ..array.export import to_numpy
from ..array.flat import ArrayBase, is_flat
from ..array.foreign import foreign_to_numpy, is_foreign_array
from ..array.printing import EDGE as _EDGE, format_scalar
from ..array.vector import VectorBase
from ..errors import SizeMismatchError
from ..functions.evaluation import width
from ..functions.shape import ravel
from ..trace.dtypes import Bool
from ..trace.state import state
from . import registry

_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)
_MISSING = object()


def size_of(shape) -> int:
    """The number of elements of ``shape`` (1 for ``()``); symbolic inside a frozen function."""
    n = 1
    for d in shape:
        n = n * d
    return n


def check_shape(shape, who: str) -> tuple:
    """``shape`` (an int or a sequence of ints >= 0) as a tuple; ``TypeError``/``ValueError``
    naming the offending entry.  A width inside a frozen function (a symbolic int) is kept."""
    if isinstance(shape, (int, np.integer)) or hasattr(shape, "__symbolic_size__"):
        shape = (shape,)
    try:
        items = tuple(shape)
    except TypeError:
        raise TypeError(f"{who}: the shape must be an int or a sequence of ints, got "
                        f"{type(shape).__name__}") from None
    out = []
    for d in items:
        if hasattr(d, "__symbolic_size__"):
            out.append(d)
            continue
        try:
            d = operator.index(d)
        except TypeError:
            raise TypeError(f"{who}: shape entries must be ints, got {type(d).__name__} {d!r} in "
                            f"{items!r}") from None
        if d < 0:
            raise ValueError(f"{who}: shape entries must be >= 0, got {d} in {items!r}")
        out.append(d)
    return tuple(out)


def handle(a: ArrayBase) -> ArrayBase:
    """A new handle on the value (and AD variable) of ``a``: tensors never share array objects,
    so an in-place update or a scatter into one tensor's array never changes another tensor
    (scatters copy a buffer that other handles still use).  A scalar-backend array (``ArrayXf``:
    a list of numbers, written in place by a scatter) is copied."""
    if not isinstance(a, ArrayBase):
        return type(a)(a)
    out = type(a)._from_node(a._node)
    out._ad = a._ad
    return out


class Layout:
    """A tensor's shape template as a PyTree *value*: the shape with the leading dimension
    (derivable from the width) replaced by ``None`` (see the module docstring).

    It is opaque to :mod:`frostjit.tree` (``__fj_opaque__``): the ints of a shape are not numbers
    of the tree (``fj.grad`` would zero them); ``fj.freeze`` keys it by ``==``.
    """

    __slots__ = ("dims",)
    __fj_opaque__ = True

    def __init__(self, dims: tuple):
        self.dims = dims

    def __eq__(self, other) -> bool:
        return type(other) is Layout and self.dims == other.dims

    def __hash__(self) -> int:
        return hash(self.dims)

    def __repr__(self) -> str:
        return f"Layout{self.dims}"


def _template(shape: tuple):
    """The :class:`Layout` of ``shape``; a plain tuple when a trailing dimension is itself a width
    inside a frozen function (a tuple is walked, so its widths are recomputed by each replay)."""
    if not shape:
        return Layout(())
    inner = shape[1:]
    dims = (None,) + inner if size_of(inner) != 0 else shape
    if any(hasattr(d, "__symbolic_size__") for d in dims):
        return dims
    return Layout(dims)


class TensorBase:
    """Base class of the tensor types: a flat array ``array`` in C order plus a ``shape``.

    ``_array_type`` (set by the concrete classes) is the flat array class, e.g.
    :class:`frostjit.llvm.Float` for ``TensorXf``.

    Parameters
    ----------
    value : optional
        Nothing (an empty tensor of shape ``(0,)``), a Python or NumPy scalar (shape ``()``),
        a NumPy array or any DLPack / ``__array__`` producer (its shape; values converted to
        the element type), a nested list (its NumPy shape; a ragged list raises
        ``ValueError``), a 1-D array (shape ``(n,)``; converted), a static vector (shape
        ``(components, width)``), or another tensor (same shape; converted).
    shape : int or sequence of ints, optional
        With a 1-D array or a sequence: the shape to give its elements (Dr.Jit's
        ``TensorXf(array, shape)``); the number of elements must match.
    """

    __slots__ = ("_array", "_shape", "_tmpl")
    _fj_cache_slots = ("_tmpl",)     # the shape's freeze template, computed on demand (not state)
    _array_type = None
    __array_ufunc__ = None      # NumPy operators defer to the tensor's (reflected) operators
    IsTensor = True
    IsJIT = True
    IsVector = False

    def __init__(self, array=_MISSING, shape=None, flip_axes: bool = False):
        # (``array`` is Dr.Jit's name of the first argument: TensorXf(array=..., shape=...);
        # ``flip_axes`` reverses a static array's axes: Array3f of width n -> shape (n, 3))
        value = array
        at = self._array_type
        who = f"{type(self).__name__}()"
        if value is _MISSING:
            if shape is not None:
                raise TypeError(f"{who}: Input array must be specified (a shape {tuple(shape)} without values)")
            array, dims = at(), (0,)
        elif isinstance(value, TensorBase):
            array, dims = _convert(at, value._array), value.shape
        elif is_flat(value):
            array = _convert(at, value)
            dims = (width(array),)
        elif isinstance(value, VectorBase) and flip_axes:
            # (the Fortran-order entries are the C-order entries of the axes reversed)
            array = _convert(at, ravel(value, order="F"))
            dims = tuple(reversed(value.shape))
        elif isinstance(value, VectorBase):
            # (static sizes then the width: a Matrix3f of width n is a (3, 3, n) tensor, as Dr.Jit)
            array = _convert(at, ravel(value, order="C"))
            dims = value.shape
        elif isinstance(value, _SCALARS) or hasattr(value, "__symbolic_size__"):
            array, dims = at(value), ()
        else:
            a = _as_numpy(value, who)
            array, dims = at(np.ascontiguousarray(a).reshape(-1)), a.shape
        if shape is not None:
            shape = check_shape(shape, who)
            if size_of(shape) != size_of(dims):
                raise SizeMismatchError(f"{who}: cannot give {size_of(dims)} elements the shape {shape}: Input "
                                        f"array has the wrong number of entries (got {size_of(dims)}, "
                                        f"expected {size_of(shape)})")
            dims = shape
        self._array = array
        self._shape = tuple(dims)
        self._tmpl = None

    @classmethod
    def _from_array(cls, array: ArrayBase, shape: tuple):
        """A tensor of ``array`` (already of ``cls._array_type``) and ``shape`` (not checked)."""
        out = cls.__new__(cls)
        out._array = array
        out._shape = shape
        out._tmpl = None
        return out

    # -- shape and data -------------------------------------------------------------
    @property
    def array(self) -> ArrayBase:
        """The flat array holding the elements in C order (the tensor's own: writing into it,
        e.g. with ``fj.scatter``, changes the tensor)."""
        return self._array

    @array.setter
    def array(self, value) -> None:
        value = _convert(self._array_type, value)
        if width(value) != width(self._array):
            raise ValueError(f"{type(self).__name__}.array = ...: expected {width(self._array)} elements "
                             f"(shape {self.shape}), got {width(value)}")
        self._array = value

    @property
    def shape(self) -> tuple:
        """The shape, a tuple of ints (inside a frozen function the leading dimension follows
        the array's width, see the module docstring)."""
        s = self._shape
        if state.recorder is not None:
            return self._derived_shape(s) if s else s
        for d in s:
            if type(d) is not int:
                return self._concrete_shape()
        return s

    def _concrete_shape(self) -> tuple:
        """A tensor made while a frozen function recorded keeps that call's symbolic numbers in
        its shape (freeze/symbolic.py); once out of the recording they are the ints they stood
        for (``type(d) is int`` and ``json.dumps`` must see what a plain call gives)."""
        s = self._shape = tuple(getattr(d, "__symbolic_size__", d) for d in self._shape)
        self._tmpl = None
        return s

    def _derived_shape(self, s: tuple) -> tuple:
        tmpl = self._template()
        if (tmpl.dims if type(tmpl) is Layout else tmpl)[0] is not None:
            return s
        inner = s[1:]
        return (width(self._array) // size_of(inner),) + inner

    def _template(self):
        t = self._tmpl
        if t is None:
            t = self._tmpl = _template(self._shape if state.recorder is not None else self.shape)
        return t

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._shape)

    @property
    def Type(self):
        """The element type (a :class:`~frostjit.trace.dtypes.VarType`)."""
        return self._array_type._vt

    @property
    def state(self) -> str:
        """The state of the underlying array (``"literal"``, ``"evaluated"``, ``"unevaluated"``)."""
        return self._array.state

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError(f"len() of a 0-dimensional {type(self).__name__}")
        return self.shape[0]

    # -- traversal protocol (frostjit.tree, fj.freeze) -------------------------------
    def __fj_traverse__(self) -> dict:
        return {"array": self._array, "shape": self._template()}

    def __fj_assign__(self, values: dict) -> None:
        self._array = values["array"]
        self._shape = _from_template(values["shape"], values["array"])
        self._tmpl = _kept_template(values["shape"])

    @classmethod
    def __fj_construct__(cls, values: dict):
        array = values["array"]
        tcls = registry.lookup(type(array)) or cls     # a detached AD tensor is a plain one
        out = tcls._from_array(array, _from_template(values["shape"], array))
        out._tmpl = _kept_template(values["shape"])
        return out

    # -- conversion -----------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """Evaluate and return a writable NumPy view of the contents, of this shape (as Dr.Jit's
        LLVM backend: a write into it changes the tensor; see ``array/export.py``)."""
        return self._array.numpy().reshape(_concrete(self.shape))

    def _values(self) -> np.ndarray:
        """The contents for reading (printing): as :meth:`numpy`, but a literal stays one."""
        return self._array._values().reshape(_concrete(self.shape))

    def __array__(self, dtype=None, copy=None):
        return to_numpy(self, dtype, copy)     # (NumPy 2 protocol: a view unless asked)

    def __dlpack__(self, *args, **kwargs):
        """DLPack export of the tensor's buffer (zero-copy, evaluating first)."""
        return self.numpy().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def torch(self):
        """A ``torch.Tensor`` sharing the buffer (DLPack; needs PyTorch)."""
        import torch        # optional dependency
        return torch.from_dlpack(self)

    def jax(self):
        """A ``jax.Array`` of the contents (DLPack; JAX copies unless the buffer suits it)."""
        import jax.numpy as jnp     # optional dependency
        return jnp.from_dlpack(self)

    def item(self):
        """The single element as a Python scalar (``RuntimeError`` unless the tensor has one)."""
        n = width(self._array)
        if n != 1:
            raise RuntimeError(f"{type(self).__name__}.item(): only a tensor of one element converts to a "
                               f"Python scalar (this one has shape {self.shape}; Dr.Jit: can only convert "
                               f"arrays of length 1 to Python scalars)")
        return self._array[0]

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        if self._array_type._vt is not Bool or width(self._array) != 1:
            raise TypeError(f"bool({type(self).__name__} of shape {self.shape}) is ambiguous: only a Bool "
                            "tensor of one element has a truth value (use frostjit.all() or any())")
        return bool(self._array[0])

    def __repr__(self) -> str:
        return format_tensor(self._values(), self._array_type._vt)

    __str__ = __repr__

    __hash__ = object.__hash__


def _from_template(tmpl, array: ArrayBase) -> tuple:
    """The shape a template (a :class:`Layout` or a tuple) stands for, given the tensor's array."""
    if type(tmpl) is Layout:
        tmpl = tmpl.dims
    if not tmpl or tmpl[0] is not None:
        return tmpl
    inner = tmpl[1:]
    return (width(array) // size_of(inner),) + inner


def _kept_template(tmpl):
    """The template a tensor rebuilt from ``tmpl`` keeps: a tuple one holds widths a recording
    tracked, and is recomputed from the shape (a replay's tensor has int dims and must be keyed
    like any tensor of its shape, a :class:`Layout`, or the next frozen call records again)."""
    return tmpl if type(tmpl) is Layout else None


def _concrete(shape: tuple) -> tuple:
    """A shape NumPy accepts (a width inside a frozen function is read as a number)."""
    return tuple(operator.index(d) for d in shape)


def _convert(array_type, a):
    """``a`` as an array of exactly ``array_type`` (a new handle, converting when the type differs)."""
    if isinstance(a, TensorBase):
        a = a._array
    if type(a) is array_type:
        return handle(a)
    if is_flat(a):
        return array_type(a)
    return array_type(a)


def _as_numpy(value, who: str) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if is_foreign_array(value):
        return foreign_to_numpy(value)
    if isinstance(value, (list, tuple, range)):
        try:
            a = np.array(value)
        except ValueError as e:
            raise SizeMismatchError(f"{who}: a nested list must be rectangular (not ragged input): {e}") from None
        if a.dtype == object:
            raise TypeError(f"{who}: cannot build a tensor from a list holding "
                            f"{type(a.reshape(-1)[0]).__name__} objects")
        return a
    if hasattr(value, "__array__"):
        return np.asarray(value)
    if hasattr(value, "__iter__") and not isinstance(value, (str, bytes, dict)):
        return _as_numpy(list(value), who)      # a generator, an iterator (Dr.Jit takes them)
    raise TypeError(f"{who}: cannot construct a tensor from an object of type {type(value).__name__}")


# -- printing --------------------------------------------------------------------------
_LONG = 20          # an axis longer than this shows _EDGE entries at each end (Dr.Jit's layout)


def format_tensor(a: np.ndarray, vt) -> str:
    """Dr.Jit's layout: nested brackets, rows on their own lines, an axis longer than 20
    shown as its first and last 3 entries around ``.. k skipped ..``; a 0-d tensor is its value."""
    if a.ndim == 0:
        return format_scalar(a[()])
    return _format(a, vt, 1)


def _format(a: np.ndarray, vt, depth: int) -> str:
    n = a.shape[0]
    if n > _LONG:
        parts = list(range(_EDGE)) + [None] + list(range(n - _EDGE, n))
    else:
        parts = list(range(n))
    if a.ndim == 1:
        items = [f".. {n - 2 * _EDGE} skipped .." if k is None else format_scalar(a[k])
                 for k in parts]
        return "[" + ", ".join(items) + "]"
    items = [f".. {n - 2 * _EDGE} skipped .." if k is None else _format(a[k], vt, depth + 1) for k in parts]
    return "[" + (",\n" + " " * depth).join(items) + "]"

