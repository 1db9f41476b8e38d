"""Tensors: N-dimensional arrays (``TensorXf``, ``TensorXu``, ...) over a flat JIT array.

Files: ``base.py`` the data (construction, shape, conversion, printing, the PyTree protocol);
``tensor.py`` operators and indexing; ``broadcast.py`` element-wise operations with NumPy's
broadcasting; ``view.py`` strided views (the one gather behind slicing, transposes and
broadcasting); ``index.py`` NumPy-style indexing; ``axes.py`` reshape and axis permutations;
``join.py`` concat/stack/split; ``reduce.py`` reductions and prefix sums over axes;
``creation.py`` zeros/full/arange/linspace with shapes; ``matmul.py``; ``resample.py``
resample/upsample/convolve with Dr.Jit's filters; ``types.py`` the classes per backend.
"""
from .base import TensorBase
from .tensor import Tensor
from .axes import reshape, transpose, moveaxis, swapaxes, squeeze, expand_dims
from .join import concat, stack, split
from .matmul import matmul
from .resample import resample, convolve, upsample

newaxis = None      # NumPy's and Dr.Jit's name for None in an index: t[:, fj.newaxis]

__all__ = ["newaxis", "TensorBase", "Tensor", "reshape", "transpose", "moveaxis", "swapaxes", "squeeze", "expand_dims",
           "concat", "stack", "split", "matmul", "resample", "convolve", "upsample"]
