"""Matrix views and packing (Dr.Jit's ``drjit.nn.MatrixView``, ``view``, ``pack``, ``unpack``).

A :class:`MatrixView` is a window onto a flat buffer: an offset, a shape, a row stride and a
transpose flag.  ``pack`` copies a set of matrices and bias vectors into one shared buffer so a
whole network's coefficients are a single array (one optimizer parameter, one gradient).

On CPUs Dr.Jit's "inference" and "training" layouts are row-major and tightly packed (measured:
offsets 0, 12, 15 for a 3x4 matrix, a 3-vector and a 2x3 matrix); frostjit stores them the same
way, so a buffer packed here and one packed by Dr.Jit's LLVM backend hold the same numbers.  The
layout name is kept as a tag: views in an optimal layout cannot be sliced (as in Dr.Jit).
"""
from __future__ import annotations

import copy
import dataclasses

import numpy as np

from .. import traits
from ..array.flat import ArrayBase
from ..array.meta import vartype_of
from ..functions.memory import gather
from ..tensor import concat
from ..ad import grad, grad_enabled
from ..ad import custom
from .coopvec import CoopVec
from .matvec import Geometry, MatVecOp

LAYOUTS = ("inference", "training")


class MatrixView:
    """A matrix or vector stored in (part of) a flat buffer.

    Attributes
    ----------
    buffer : 1-D JIT array
        The underlying buffer (it may hold other matrices and vectors too).
    dtype : VarType
        The buffer's element type.
    layout : str
        ``"inference"``, ``"training"`` (packed by :func:`pack`) or ``"row_major"``.
    shape : tuple[int, int]
        Rows and columns; a vector is a matrix of one column.
    stride : int
        Row stride, in elements.
    offset : int
        Offset of the first element in ``buffer``, in elements.
    size : int
        The number of buffer elements the view spans.
    transpose : bool
        Whether the view stands for the transposed matrix (:attr:`T` flips it).
    """

    DRJIT_STRUCT = {"buffer": None, "dtype": None, "layout": str, "shape": tuple, "stride": int,
                    "offset": int, "size": int, "transpose": bool}

    def __init__(self, buffer=None, layout: str = "row_major", shape=(0, 0), stride: int = 0,
                 offset: int = 0, size: int | None = None, transpose: bool = False):
        self.buffer = buffer
        self.dtype = vartype_of(type(buffer)._vt) if isinstance(buffer, ArrayBase) else None
        self.layout = layout
        self.shape = tuple(int(s) for s in shape)
        self.stride = int(stride)
        self.offset = int(offset)
        rows, cols = self.shape
        self.size = int(size) if size is not None else (max(rows - 1, 0) * self.stride + cols if rows else 0)
        self.transpose = bool(transpose)

    def _copy(self, **changes) -> "MatrixView":
        out = MatrixView.__new__(MatrixView)
        out.__dict__.update(self.__dict__)
        out.__dict__.update(changes)
        return out

    @property
    def T(self) -> "MatrixView":
        """The same view with the :attr:`transpose` flag flipped (the shape is unchanged)."""
        return self._copy(transpose=not self.transpose)

    @property
    def grad(self) -> "MatrixView":
        """The same window onto the gradient of :attr:`buffer`."""
        return self._copy(buffer=grad(self.buffer))

    def __getitem__(self, index) -> "MatrixView":
        """A sub-block of a row-major view: ``v[i]``, ``v[a:b]``, ``v[a:b, c:d]``."""
        if self.layout != "row_major":
            raise RuntimeError("frostjit.nn.MatrixView.__getitem__(): slicing is not permitted for "
                               "training/inference-optimal layouts")
        if not isinstance(index, tuple):
            index = (index, slice(None))
        if len(index) != 2:
            raise IndexError(f"frostjit.nn.MatrixView.__getitem__(): expected 1 or 2 indices, got {len(index)}")
        rows, cols = self.shape
        r0, nr, rs = _range(index[0], rows, "row")
        c0, nc, cs = _range(index[1], cols, "column")
        if cs != 1 and nc > 1:
            raise RuntimeError("frostjit.nn.MatrixView.__getitem__(): rows elements must be contiguous "
                               f"(column step {cs})")
        stride = self.stride * rs
        return self._copy(shape=(nr, nc), stride=stride, offset=self.offset + r0 * self.stride + c0,
                          size=(nr - 1) * stride + nc if nr and nc else 0)

    def __matmul__(self, x):
        return matvec(self, x)

    def rows(self) -> list:
        """The buffer indices of the view's elements, row by row (a list of lists of ints)."""
        rows, cols = self.shape
        return [[self.offset + r * self.stride + c for c in range(cols)] for r in range(rows)]

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self.buffer.numpy())[np.asarray(self.rows(), dtype=np.int64).reshape(self.shape)]
        if self.transpose:
            a = a.T
        return a if dtype is None else a.astype(dtype)

    def numpy(self) -> np.ndarray:
        """The viewed matrix as a NumPy array (a copy, transposed if :attr:`transpose`)."""
        return self.__array__()

    def __repr__(self) -> str:
        b = type(self.buffer)
        return ("frostjit.nn.MatrixView[\n"
                f"    dtype={self.dtype},\n    layout=\"{self.layout}\",\n    shape={self.shape},\n"
                f"    stride={self.stride},\n    offset={self.offset}\n    size={self.size}\n"
                f"    buffer=<{b.__module__}.{b.__name__} instance>\n]")


def _range(index, n: int, what: str):
    """``(start, count, step)`` of an int or slice index into ``n`` rows or columns."""
    if isinstance(index, (int, np.integer)):
        i = int(index) + (n if index < 0 else 0)
        if not 0 <= i < n:
            raise IndexError(f"frostjit.nn.MatrixView: {what} index {index} out of range for size {n}")
        return i, 1, 1
    if isinstance(index, slice):
        start, stop, step = index.indices(n)
        if step <= 0:
            raise IndexError(f"frostjit.nn.MatrixView: negative {what} steps are not supported")
        return start, len(range(start, stop, step)), step
    raise TypeError(f"frostjit.nn.MatrixView: unsupported {what} index of type {type(index).__name__}")


def matvec(A: MatrixView, x: CoopVec, b: MatrixView | None = None, /, transpose: bool = False) -> CoopVec:
    """Matrix-vector product ``A @ x (+ b)`` of a view and a cooperative vector.

    Parameters
    ----------
    A : MatrixView
        The matrix (any layout; see :func:`pack` and :func:`view`).
    x : CoopVec
        The input, with as many components as ``A`` has columns (rows if transposed).
    b : MatrixView, optional
        A bias vector view added to the product.
    transpose : bool
        Multiply by the transpose of ``A`` (combined with ``A.transpose``).

    Returns
    -------
    CoopVec
        The product, one component per row of ``A`` (per column if transposed).

    Notes
    -----
    Each coefficient is gathered from ``A.buffer`` and accumulated with fused multiply-adds in
    column order; the bias is the starting value.  Gradients flow into ``A.buffer`` (and ``b``'s
    buffer) and ``x`` in both AD modes (:class:`frostjit.nn.matvec.MatVecOp`).  The buffer and ``x`` must have the same element type (float16 or float32,
    as on Dr.Jit's LLVM backend; frostjit also allows float64).
    """
    if not isinstance(A, MatrixView):
        raise TypeError(f"frostjit.nn.matvec(): 'A' must be a MatrixView, got {type(A).__name__}")
    if not isinstance(x, CoopVec):
        raise TypeError(f"frostjit.nn.matvec(): 'x' must be a CoopVec, got {type(x).__name__}")
    buf_t = type(A.buffer)
    if x.type is not buf_t:
        raise TypeError(f"frostjit.nn.matvec(): incompatible input types: matrix of {buf_t.__name__}, "
                        f"vector of {x.type.__name__}")
    rows, cols = A.shape
    flip = A.transpose != bool(transpose)
    n_out, n_in = (cols, rows) if flip else (rows, cols)
    if len(x) != n_in:
        raise ValueError(f"frostjit.nn.matvec(): incompatible shapes: a {n_out}x{n_in} matrix times a vector "
                         f"of {len(x)} elements")
    if b is not None:
        if not isinstance(b, MatrixView):
            raise TypeError(f"frostjit.nn.matvec(): 'b' must be a MatrixView, got {type(b).__name__}")
        if type(b.buffer) is not buf_t or b.shape[0] * b.shape[1] != n_out:
            raise ValueError(f"frostjit.nn.matvec(): bias of shape {b.shape} ({type(b.buffer).__name__}) "
                             f"does not match an output of {n_out} {buf_t.__name__} elements")
    trained = grad_enabled(A.buffer)
    if b is None:
        g = Geometry(n_out, n_in, A.offset, A.stride, flip, trained=trained)
        bias_buffer = None
    else:
        same = b.buffer is A.buffer
        g = Geometry(n_out, n_in, A.offset, A.stride, flip, b.offset, b.stride if b.shape[1] == 1 else 1, same,
                     trained or grad_enabled(b.buffer))
        bias_buffer = None if same else b.buffer
    out = custom(MatVecOp, A.buffer, list(x._c), bias_buffer, g)
    return type(x)._from_components(out)


def view(arg) -> MatrixView:
    """A row-major :class:`MatrixView` of a tensor or 1-D array, without copying.

    Parameters
    ----------
    arg : tensor or 1-D JIT array
        A 2-D tensor gives a ``(rows, cols)`` view; a 1-D tensor or array a ``(n, 1)`` vector.

    Returns
    -------
    MatrixView
    """
    if isinstance(arg, MatrixView):
        return arg
    if isinstance(arg, ArrayBase):
        return MatrixView(arg, "row_major", (len(arg), 1), 1, 0)
    if getattr(type(arg), "IsTensor", False):
        shape = tuple(arg.shape)
        if len(shape) == 1:
            return MatrixView(arg.array, "row_major", (shape[0], 1), 1, 0)
        if len(shape) == 2:
            return MatrixView(arg.array, "row_major", shape, shape[1], 0)
        raise ValueError(f"frostjit.nn.view(): expected a 1-D or 2-D tensor, got shape {shape}")
    raise TypeError(f"frostjit.nn.view(): expected a tensor or 1-D array, got {type(arg).__name__}")


def _is_matrix_leaf(x) -> bool:
    return isinstance(x, (MatrixView, ArrayBase)) or getattr(type(x), "IsTensor", False)


def _map_leaves(tree, fn):
    """``tree`` with each matrix leaf (view, tensor, 1-D array) replaced by ``fn(leaf)``; lists,
    tuples, dicts and ``DRJIT_STRUCT``/dataclass objects are rebuilt, other values kept."""
    if _is_matrix_leaf(tree):
        return fn(tree)
    if isinstance(tree, (list, tuple)):
        items = [_map_leaves(t, fn) for t in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    if isinstance(tree, dict):
        return type(tree)((k, _map_leaves(v, fn)) for k, v in tree.items())
    fields = getattr(type(tree), "DRJIT_STRUCT", None)
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        fields = [f.name for f in dataclasses.fields(tree)]
    if fields:
        out = copy.copy(tree)
        for name in fields:
            object.__setattr__(out, name, _map_leaves(getattr(tree, name), fn))
        return out
    return tree


def _pack_views(views: list, layout: str) -> list:
    """Copy ``views`` into one new tightly packed buffer; matrices get ``layout``, vectors
    (one column) stay row-major as in Dr.Jit."""
    buf_t = type(views[0].buffer)
    index_t = traits.uint32_array_t(traits.detached_t(buf_t))
    parts, out, offset = [], [], 0
    for v in views:
        if type(v.buffer) is not buf_t:
            raise TypeError(f"frostjit.nn.pack(): inconsistent buffer types {buf_t.__name__} and "
                            f"{type(v.buffer).__name__}")
        rows, cols = v.shape
        n = rows * cols
        if v.stride == cols and not v.transpose and v.offset == 0 and len(v.buffer) == n:
            part = v.buffer                 # (a whole tensor: no gather)
        else:
            idx = np.asarray(v.rows(), dtype=np.uint32).reshape(v.shape)
            if v.transpose:                 # (packing a transposed view stores the transpose)
                idx, (rows, cols) = idx.T, (cols, rows)
            part = gather(buf_t, v.buffer, index_t(np.ascontiguousarray(idx).ravel()))
        parts.append(part)
        vector = cols == 1
        out.append(MatrixView(None, "row_major" if vector else layout, (rows, cols), 1 if vector else cols,
                              offset, n))
        offset += n
    buffer = parts[0] if len(parts) == 1 else concat(parts)
    for v in out:
        v.buffer, v.dtype = buffer, vartype_of(buf_t._vt)
    return out


def repack(args: tuple, layout: str, who: str) -> list:
    """Replace every matrix leaf of the PyTrees ``args`` by a view into one new shared buffer."""
    found: list = []

    def collect(x):
        found.append(view(x))
        return _Slot(len(found) - 1)

    marked = [_map_leaves(a, collect) for a in args]
    if not found:
        raise TypeError(f"frostjit.nn.{who}(): no matrices or vectors among the arguments")
    packed = _pack_views(found, layout)
    return [_map_slots(m, packed) for m in marked]


class _Slot(int):
    """A placeholder for the ``k``-th packed view while the new buffer is built."""


def _map_slots(tree, packed):
    if isinstance(tree, _Slot):
        return packed[tree]
    if isinstance(tree, (list, tuple)):
        items = [_map_slots(t, packed) for t in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    if isinstance(tree, dict):
        return type(tree)((k, _map_slots(v, packed)) for k, v in tree.items())
    fields = getattr(type(tree), "DRJIT_STRUCT", None)
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        fields = [f.name for f in dataclasses.fields(tree)]
    if fields:
        for name in fields:
            object.__setattr__(tree, name, _map_slots(getattr(tree, name), packed))
    return tree


def pack(*args, layout: str = "inference"):
    """Pack matrices and bias vectors into one buffer with an inference- or training-optimal layout.

    Parameters
    ----------
    *args
        Tensors (2-D: matrices, 1-D: vectors), :class:`MatrixView` instances, PyTrees of them,
        or a single :class:`~frostjit.nn.Module` (whose layers' weights and biases are packed).
    layout : {"inference", "training"}
        The layout tag of the packed matrices (both are row-major on CPUs).

    Returns
    -------
    MatrixView, PyTree, tuple or Module
        One argument gives its packed counterpart (a module gives a packed copy whose mapping
        exposes the shared buffer as ``"weights"``); several give a tuple.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"frostjit.nn.pack(): layout must be one of {LAYOUTS}, got {layout!r}")
    if len(args) == 1 and hasattr(args[0], "_pack_module"):
        return args[0]._pack_module(layout)
    out = repack(args, layout, "pack")
    return out[0] if len(args) == 1 else tuple(out)


def unpack(*args):
    """Copy views in an optimal layout (or PyTrees of them) back into row-major views.

    Returns
    -------
    MatrixView, PyTree, tuple or Module
        Row-major views into one new shared buffer, mirroring :func:`pack`'s results.
    """
    if len(args) == 1 and hasattr(args[0], "_pack_module"):
        return args[0]._pack_module("row_major")
    out = repack(args, "row_major", "unpack")
    return out[0] if len(args) == 1 else tuple(out)
