"""Neural networks on cooperative vectors (Dr.Jit's ``drjit.nn``).

- :class:`CoopVec`: a short vector of JIT values per lane (the input and output of layers),
  :func:`cast` to another element type;
- :class:`MatrixView`, :func:`view`, :func:`pack`, :func:`unpack`: matrices and bias vectors in
  one flat buffer; :func:`matvec`: ``A @ x + b`` with gradients into the buffer and ``x``;
- :class:`Module` and the layers :class:`Sequential`, :class:`Linear`, :class:`ReLU`,
  :class:`LeakyReLU`, :class:`Exp`, :class:`Exp2`, :class:`Tanh`, :class:`ScaleAdd`,
  :class:`Cast`, :class:`SinEncode`, :class:`TriEncode`, :class:`HashEncodingLayer` (with
  :class:`HashGridEncoding` and :class:`PermutoEncoding` from :mod:`frostjit.hashgrid`).

See docs/nn.md for the model and the differences from Dr.Jit.
"""
from .coopvec import CoopVec, cast
from .view import MatrixView, view, matvec, pack, unpack
from .modules import (Module, Sequential, Linear, ReLU, LeakyReLU, Exp, Exp2, Tanh, ScaleAdd, Cast,
                      SinEncode, TriEncode, HashEncodingLayer)
from ..hashgrid import HashGridEncoding, PermutoEncoding

__all__ = ["CoopVec", "MatrixView", "view", "matvec", "pack", "unpack", "Module", "Sequential", "Linear",
           "ReLU", "LeakyReLU", "Exp", "Exp2", "Tanh", "ScaleAdd", "Cast", "SinEncode", "TriEncode",
           "HashEncodingLayer", "HashGridEncoding", "PermutoEncoding", "cast"]
