"""Matrix functions: ``det``, ``diag``, ``identity``, ``frob``, ``trace``, ``polar_decomp``,
``transform_decompose``, ``transform_compose``.  (``fj.matmul`` and ``fj.transpose`` take
matrices and tensors alike: :mod:`frostjit.tensor` sends matrices to :mod:`frostjit.array.matrix`;
``fj.inverse`` is the deprecated ``rcp``, which inverts a matrix.)

They take Dr.Jit's matrix types (``Matrix4f``, ...) and square nested static arrays
(``Array33f`` is treated as a 3 x 3 matrix, as Dr.Jit does); the arithmetic lives in
:mod:`frostjit.array.matrix`.  Everything is lane-wise, so a ``Matrix4f`` of width 10^6 is
10^6 matrices, differentiable where its entries are AD arrays and usable in frozen functions.
"""
from __future__ import annotations

from ..array import registry
from ..array import matrix as _matrix
from ..array.matrix import MatrixBase, _is_square, det, matmul, transpose
from ..array.quaternion import QuaternionBase
from ..array.vector import VectorBase, _copy, component_class
from .creation import full
from .math import fma, select, sqrt
from .quaternion import matrix_to_quat, quat_to_matrix

__all__ = ["det", "diag", "identity", "frob", "trace", "polar_decomp", "transform_decompose", "transform_compose"]


def diag(a):
    """The diagonal of a square matrix (a vector), or the diagonal matrix of a vector.

    Parameters
    ----------
    a : matrix or static vector

    Returns
    -------
    static vector or matrix
        ``diag(Matrix3f)`` is an ``Array3f``; ``diag(Array3f)`` a ``Matrix3f`` with ``a`` on
        its diagonal (``diag(Matrix34f)`` an ``Array34f``: its entries are ``Array4f``).
    """
    if _is_square(a):
        n = len(a)
        return a._elem._from_components([_copy(a[i][i]) for i in range(n)]) if isinstance(a, MatrixBase) else \
            type(a[0])._from_components([_copy(a[i][i]) for i in range(n)])
    if isinstance(a, VectorBase):
        cls = registry.array_type(type(a), len(a), "matrix")
        if cls is None:
            raise TypeError(f"diag(): no matrix type with rows of type {type(a).__name__}")
        n = len(a)
        entry = type(a)._elem
        rows = [type(a)._from_components([_copy(a[i]) if i == j else entry(0) for j in range(n)])
                for i in range(n)]
        return cls._from_components(rows)
    raise TypeError(f"diag(): expected a matrix or a static vector, got {type(a).__name__}")


def identity(dtype, size: int = 1):
    """The identity of ``dtype``: a matrix's identity, a complex number's or quaternion's 1,
    ``full(dtype, 1, size)`` for other array types, ``dtype(1)`` for ``int``/``float``/``bool``.

    Examples
    --------
    >>> fj.identity(Matrix2f)
    [[[1, 0],
      [0, 1]]]
    """
    if dtype in (int, float, bool):
        return dtype(1)
    # Every entry has ``size`` lanes, the zeros too (as Dr.Jit): a width-1 zero would be one AD
    # variable broadcast over the lanes, so its gradient after fj.enable_grad summed them.
    if isinstance(dtype, type) and issubclass(dtype, MatrixBase):
        row, n = dtype._elem, dtype._n
        one, zero = full(row._elem, 1, size), full(row._elem, 0, size)
        return dtype(*[row(*[one if i == j else zero for j in range(row._n)]) for i in range(n)])
    return full(dtype, 1, size)     # (a complex number's or quaternion's 1: real part 1, full width)


def frob(a):
    """The squared Frobenius norm: the sum of the squares of the entries (Dr.Jit's order:
    an fma chain over the rows, then the sum of that row's entries)."""
    if not _is_square(a):
        raise TypeError(f"frob(): expected a matrix, got {type(a).__name__}")
    rows = list(a)
    acc = rows[0] * rows[0]
    for r in rows[1:]:
        acc = fma(r, r, acc)
    total = acc[0]
    for k in range(1, len(acc)):
        total = total + acc[k]
    return total


def trace(a):
    """The sum of the diagonal entries."""
    if not _is_square(a):
        raise TypeError(f"trace(): expected a matrix, got {type(a).__name__}")
    total = a[0][0]
    for i in range(1, len(a)):
        total = total + a[i][i]
    return total


def polar_decomp(a, it: int = 10):
    """Polar decomposition ``a = Q P``: a rotation (orthogonal ``Q``) and a symmetric positive
    semi-definite ``P`` (Higham's scaled Newton iteration, ``it`` steps:
    ``Q <- (g Q + Q^-T / g) / 2`` with ``g = (frob(Q^-1) / frob(Q))^(1/4)``).

    Returns
    -------
    tuple
        ``(Q, P)``, both of ``a``'s type.
    """
    if not _is_square(a):
        raise TypeError(f"polar_decomp(): expected a matrix, got {type(a).__name__}")
    q = a
    for _ in range(it):
        qi = transpose(_matrix.inverse(q))
        gamma = sqrt(sqrt(frob(qi) / frob(q)))
        q = q * (0.5 * gamma) + qi * (0.5 / gamma)
    p = matmul(transpose(q), a)
    return q, p


def _matrix_of(entry_cls: type, n: int) -> type:
    row = registry.array_type(entry_cls, n, "array")
    cls = registry.array_type(row, n, "matrix") if row is not None else None
    if cls is None:
        raise TypeError(f"frostjit: no {n}x{n} matrix type of {entry_cls.__name__}")
    return cls


def transform_decompose(a, it: int = 10):
    """Split a non-perspective 4x4 homogeneous transform into ``(S, Q, T)``: a 3x3 scaling
    (symmetric positive definite) matrix, a rotation quaternion and a translation vector
    (the inverse of :func:`transform_compose`)."""
    if not (isinstance(a, VectorBase) and _is_square(a) and len(a) == 4):
        raise TypeError(f"transform_decompose(): expected a 4x4 matrix, got {type(a).__name__}")
    entry = component_class(a[0][0], type(a)._leaf)
    m3 = _matrix_of(entry, 3)
    upper = m3._from_components([m3._elem._from_components([_copy(a[i][j]) for j in range(3)]) for i in range(3)])
    q, p = polar_decomp(upper, it)
    # A reflection (det < 0) is no rotation: use -Q and -P (their product is the same).
    flip = det(q) < 0
    q, p = select(flip, -q, q), select(flip, -p, p)
    t = registry.array_type(entry, 3, "array")._from_components([_copy(a[i][3]) for i in range(3)])
    return p, matrix_to_quat(q), t


def transform_compose(s, q, t):
    """The 4x4 homogeneous transform ``[R(q) S | T; 0 0 0 1]`` of a 3x3 scaling ``s``, a
    rotation quaternion ``q`` and a translation ``t`` (the inverse of :func:`transform_decompose`)."""
    if not isinstance(q, QuaternionBase):
        raise TypeError(f"transform_compose(): 'q' must be a quaternion, got {type(q).__name__}")
    entry = component_class(q[0], type(q)._leaf)
    m3 = _matrix_of(entry, 3)
    rs = matmul(quat_to_matrix(m3, q), s)
    m4 = _matrix_of(entry, 4)
    rows = []
    for i in range(3):
        rows.append([_copy(rs[i][j]) for j in range(3)] + [entry(t[i])])
    zero = entry(0)
    rows.append([zero, entry(0), entry(0), entry(1)])
    return m4._from_components([m4._elem._from_components(r) for r in rows])
