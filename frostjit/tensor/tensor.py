"""The tensor classes' behaviour: operators, indexing, matrix products, and the hooks through
which ``fj.*`` functions reach tensors.

``TensorXf`` and its siblings (:mod:`frostjit.tensor.types`) derive from :class:`Tensor`.
Arithmetic broadcasts as in NumPy (:mod:`.broadcast`); indexing follows NumPy's basic and
advanced rules (:mod:`.index`); ``@`` is :func:`frostjit.matmul`.

The engine's functions (``fj.sin``, ``fj.sum``, ``fj.zeros``, ...) live below this package and
do not import it; they recognise a tensor by ``IsTensor`` and call the hooks here:
``_fj_map(fn, *operands)`` (element-wise), ``_fj_reduce`` / ``_fj_scan`` (reductions and
prefix sums over axes) and the class methods ``_fj_full`` / ``_fj_empty`` / ``_fj_arange``
/ ``_fj_linspace`` (creation with a shape).
"""
from __future__ import annotations

from ..ad import api as ad
from ..array.flat import apply, refusing_operator
from ..errors import TensorRankError
from ..array.promotion import REFUSABLE_OPERATORS
from ..functions.evaluation import width
from ..functions.memory import gather
from ..functions.tiling import repeat_index
from . import creation, index, reduce, sorting
from .axes import normalize_axis, transpose, swapaxes
from .base import TensorBase, handle, size_of
from .broadcast import elementwise, expand
from .matmul import matmul


def _binary(op: str, reflected: bool = False, method: str | None = None):
    # (method: the Python operator's name where it differs from the op's: lshift -> shl)
    name = f"__{'r' if reflected else ''}{method or op}__"

    def operator(self, other):
        if reflected:
            return elementwise(lambda a, b: apply(op, b, a), self, other, who=f"{type(self).__name__}.{name}()")
        return elementwise(lambda a, b: apply(op, a, b), self, other, who=f"{type(self).__name__}.{name}()")
    operator.__name__ = name
    return operator


_OPERATORS = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "truediv", "floordiv": "floordiv",
              "mod": "mod", "pow": "pow", "and": "and", "or": "or", "xor": "xor", "lshift": "shl",
              "rshift": "shr"}


class Tensor(TensorBase):
    """Base class of the concrete tensor types (see :class:`~.base.TensorBase` for the data)."""

    __slots__ = ()

    # -- hooks for frostjit.functions ---------------------------------------------
    _fj_map = staticmethod(elementwise)

    def _fj_reduce(self, op, name, axis, mode, keepdims, leaf, check):
        return reduce.reduce(op, name, self, axis, mode, keepdims, leaf, check)

    def _fj_scan(self, name, axis, reverse, exclusive, op="add"):
        return reduce.scan(name, self, axis, reverse, exclusive, op)

    def _fj_order(self, name, **options):
        return sorting.ORDER[name](self, **options)

    def _fj_mean(self, axis, mode, keepdims):
        return reduce.mean(self, axis, mode, keepdims)

    def _fj_ravel(self):
        return handle(self._array)

    def _fj_tile(self, reps):
        """``numpy.tile(t, reps)`` (``reps``: an int or a tuple of ints): the shorter of the
        shape and ``reps`` padded with leading 1s, each axis ``k`` copied ``reps[k]`` times."""
        reps = (reps,) if isinstance(reps, int) else tuple(reps)
        s = self.shape
        d = max(len(s), len(reps))
        s = (1,) * (d - len(s)) + s
        reps = (1,) * (d - len(reps)) + reps
        out = tuple(r * n for r, n in zip(reps, s))
        if not size_of(out):
            return creation.empty(type(self), out)
        # (1, n_k) broadcast to (r_k, n_k) on every axis: a strided view, no copy
        inner = tuple(v for n in s for v in (1, n))
        outer = tuple(v for r, n in zip(reps, s) for v in (r, n))
        return type(self)._from_array(expand(self._array, inner, outer), out)

    def _fj_repeat(self, repeats, axis=None):
        """``numpy.repeat(t, repeats, axis)``: ``repeats`` an int or one count per entry along
        ``axis`` (``None``: the flattened elements)."""
        who = "repeat()"
        if axis is None:
            flat = self._array
            if not isinstance(repeats, int):
                out = gather(type(flat), flat, repeat_index(repeats, width(flat), "repeat"))
                return type(self)._from_array(out, (width(out),))
            n = width(flat)
            return type(self)._from_array(expand(flat, (n, 1), (n, repeats)), (n * repeats,))
        k = normalize_axis(axis, len(self.shape), who)
        s = self.shape
        if isinstance(repeats, int):
            out = s[:k] + (s[k] * repeats,) + s[k + 1:]
            if not size_of(out):
                return creation.empty(type(self), out)
            inner = s[:k + 1] + (1,) + s[k + 1:]
            outer = s[:k + 1] + (repeats,) + s[k + 1:]
            return type(self)._from_array(expand(self._array, inner, outer), out)
        index = repeat_index(repeats, s[k], "repeat")
        return self[(slice(None),) * k + (index,)]

    _fj_full = classmethod(creation.full)
    _fj_empty = classmethod(creation.empty)
    _fj_arange = classmethod(creation.arange)
    _fj_linspace = classmethod(creation.linspace)

    # -- operators ------------------------------------------------------------------
    def _unary(self, op: str):
        return elementwise(lambda a: apply(op, a), self, who=f"{type(self).__name__}")

    def __neg__(self):
        return self._unary("neg")

    def __invert__(self):
        return self._unary("not")

    def __abs__(self):
        return self._unary("abs")

    def __pos__(self):
        return self

    def _inplace(self, op: str, other):
        r = elementwise(lambda a, b: apply(op, a, b), self, other, who=f"{type(self).__name__} (in place)")
        if r.shape != self.shape:           # (not _shape: inside a frozen function shape is symbolic)
            raise ValueError(f"{type(self).__name__}: an in-place operation cannot change the shape "
                             f"{self.shape} to {r.shape}")
        if type(r) is not type(self):
            return r            # TensorXi += 1.5 is a TensorXf: bound to the name (Dr.Jit)
        self._array = r._array  # a new array: other tensors sharing the old value keep it
        return self

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def __imatmul__(self, other):
        # in place as the other operators (Dr.Jit: t @= u changes t's object)
        r = matmul(self, other)
        if type(r) is not type(self):
            return r
        for slot in TensorBase.__slots__:
            setattr(self, slot, getattr(r, slot))
        return self

    # -- indexing -----------------------------------------------------------------------
    def __getitem__(self, key):
        return index.getitem(self, key)

    def __setitem__(self, key, value) -> None:
        index.setitem(self, key, value)

    def __iter__(self):
        for k in range(len(self)):
            yield self[k]

    # -- views of the axes ------------------------------------------------------------
    @property
    def T(self):
        """The transpose of a 2-D tensor (Dr.Jit 1.5's ``.T``; :func:`frostjit.transpose`
        reverses the axes of any tensor, ``.mT`` swaps the last two).

        Raises
        ------
        TensorRankError
            (a ``TypeError``, as Dr.Jit) for a tensor that is not 2-D."""
        if self.ndim != 2:
            raise TensorRankError(f"{type(self).__name__}.T: '.T' is only defined for 2-D tensors (got rank "
                                  f"{self.ndim}, shape {self.shape}). For higher-rank tensors, use '.mT' to "
                                  "transpose the last two dimensions, or frostjit.transpose() to reverse all axes.")
        return transpose(self)

    @property
    def mT(self):
        """The tensor with its last two axes swapped (a batch of transposed matrices)."""
        if self.ndim < 2:
            raise TensorRankError(f"{type(self).__name__}.mT: '.mT' requires at least 2 dimensions (got rank "
                                  f"{self.ndim}, shape {self.shape})")
        return swapaxes(self, -1, -2)

    @property
    def grad(self):
        """The gradient (a tensor of this shape; zeros where nothing reached it).  Assigning sets
        it (``fj.set_grad``: a tensor of this shape, a flat array of its size, or a number)."""
        return ad.grad(self)

    @grad.setter
    def grad(self, value) -> None:
        ad.set_grad(self, value)

    def __repr__(self) -> str:
        return TensorBase.__repr__(self)


for _name, _op in _OPERATORS.items():
    for _reflected in (False, True):
        _operator = _binary(_op, _reflected, _name)
        if _op in REFUSABLE_OPERATORS:     # (Dr.Jit refuses TensorXi / TensorXi, ...)
            _operator = refusing_operator(_operator, _op, _reflected)
        setattr(Tensor, _operator.__name__, _operator)
    setattr(Tensor, f"__i{_name}__", lambda self, other, _op=_op: self._inplace(_op, other))
for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Tensor, f"__{_op}__", _binary(_op))
Tensor.__hash__ = TensorBase.__hash__
del _name, _op, _reflected, _operator
