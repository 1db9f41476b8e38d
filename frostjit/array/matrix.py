"""Matrices (``Matrix2f`` .. ``Matrix4f64``, ``Matrix34f`` ...) and matrix products of static arrays.

A matrix is a static array of its rows, row-major as in Dr.Jit: ``Matrix2f(1, 2, 3, 4)``
has rows ``(1, 2)`` and ``(3, 4)``, ``m[i][j]`` is row ``i``, column ``j``.  Its entries are
1-D arrays (``Matrix4f``) or static arrays (``Matrix34f``: a 3 x 3 matrix whose entries are
``Array4f``, i.e. four matrices in one).  What differs from other static arrays (Dr.Jit 1.5):

* ``*`` is the matrix product with a matrix or a vector (``m * v == m @ v``), and scales by
  a number or 1-D array;
* a number or 1-D array stands for that multiple of the identity: ``Matrix2f(5)`` is
  ``5 I``, ``m + 1`` adds 1 to the diagonal, ``2 / m`` is ``2 m^-1``;
* ``m1 / m2`` is ``m1 m2^-1``, ``rcp(m)`` the inverse, ``m ** k`` the ``k``-th power;
* ``m.T`` is the transpose; ``m.x`` does not exist (no swizzles); inequality comparisons raise;
* the constructor takes the ``n * n`` entries row by row, or ``n`` rows.

:func:`matmul` (``@``, ``fj.matmul``) multiplies any static arrays by their leading
dimensions (matrix-matrix, matrix-vector, vector-matrix, inner product), as Dr.Jit's
``matmul``; sums are ``fma`` chains in Dr.Jit's order, so results match it bit for bit.
"""
from __future__ import annotations

import numpy as np

from . import direct, registry
from .flat import ArrayBase, apply
from .vector import HOOKS, VectorBase, _component, _copy, component_class, componentwise

_NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating)


class MatrixBase(VectorBase):
    """Base class of the matrix types (rows: ``_elem``, a static array of ``_n`` entries)."""

    __slots__ = ()
    _family = "matrix"
    _swizzle = False
    IsMatrix = True

    @classmethod
    def _components(cls, args) -> list:
        n = cls._n
        if len(args) == n * n and n > 1:        # the entries, row by row
            return [_component(cls._elem, list(args[i * n:(i + 1) * n])) for i in range(n)]
        return super()._components(args)

    @classmethod
    def _from_one(cls, v) -> list:
        # An entry (Array4f for a Matrix34f) is a multiple of the identity too.
        # (a scalar-backend array converts entry by entry into a JIT matrix, as a sequence would)
        if isinstance(v, VectorBase) and v.Depth < cls.Depth - 1 and (v.IsJIT or not cls.IsJIT):
            return cls._broadcast(v)
        if isinstance(v, MatrixBase) and v._n != cls._n:
            return cls._resized(v)
        return super()._from_one(v)

    @classmethod
    def _resized(cls, v) -> list:
        """Rows of ``v`` (a matrix of another size): its upper-left block, padded with the
        identity (Dr.Jit: ``Matrix3f(Matrix4f)`` drops the last row and column, ``Matrix4f(Matrix3f)``
        adds them as those of the identity)."""
        row, n, m = cls._elem, cls._n, v._n
        entry = row._elem
        return [row._from_components([_component(entry, v[i][j]) if i < m and j < m
                                      else entry(1 if i == j else 0) for j in range(n)])
                for i in range(n)]

    @classmethod
    def _broadcast(cls, v) -> list:
        # A number or 1-D array: that multiple of the identity.
        row, n = cls._elem, cls._n
        entry = row._elem
        return [row._from_components([_component(entry, v) if i == j else entry(0) for j in range(n)])
                for i in range(n)]

    @property
    def T(self):
        """The transpose."""
        return transpose(self)

    @property
    def mT(self):
        """The transpose (Dr.Jit's name shared with tensors, whose ``mT`` swaps the last two axes)."""
        return transpose(self)


def _is_square(x) -> bool:
    """Whether ``x`` has leading static dimensions ``(n, n)`` (a matrix or an ``Array33f``)."""
    return isinstance(x, VectorBase) and x._n is not None and len(x._c) > 0 and \
        isinstance(x._c[0], VectorBase) and len(x._c[0]) == len(x._c)


def _fma(a, b, c):
    return apply("fma", a, b, c)


def _dot(terms):
    """``x0 * y0 + x1 * y1 + ...`` as an fma chain (Dr.Jit's order)."""
    (x, y), rest = terms[0], terms[1:]
    acc = x * y
    for x, y in rest:
        acc = _fma(x, y, acc)
    return acc


def _rows_class(like, rows):
    """The class for rows ``rows`` (static arrays): ``like``'s if they are its rows, else the
    array of ``like``'s family with those rows (promoted types)."""
    if type(rows[0]) is like._elem:
        return like
    cls = registry.array_type(type(rows[0]), len(rows), like._family) or \
        registry.array_type(type(rows[0]), len(rows), "array")
    if cls is None:
        raise TypeError(f"frostjit: no matrix type with rows of type {type(rows[0]).__name__}")
    return cls


def _vector_like(v, entries):
    """A static array of the same family as vector ``v`` with ``entries``."""
    elem = component_class(entries[0], type(v)._leaf)
    cls = type(v) if elem is type(v)._elem else registry.array_type(elem, len(entries), "array")
    return cls._from_components(entries)


def matmul(a, b):
    """The matrix product ``a @ b`` of static arrays (Dr.Jit 1.5's ``matmul``, by the leading
    static dimensions).

    * ``(n, n) @ (n, n)``: the matrix product (a matrix if either operand is one);
    * ``(n, n) @ (n,)``: matrix-vector; ``(n,) @ (n, n)``: vector-matrix (a vector);
    * ``(n,) @ (n,)``: the inner product (an entry: a 1-D array for ``Array3f``);
    * a number or 1-D array: scales the other operand.

    Raises ``ValueError`` for mismatched sizes, ``TypeError`` for other operands.
    """
    sa, sb = _is_square(a), _is_square(b)
    if sa:
        out = _direct_matmul(a, b, sb)
        if out is not None:
            return out
    va, vb = isinstance(a, VectorBase), isinstance(b, VectorBase)
    if not (va and vb):
        if va or vb:
            return componentwise("mul", (a, b))
        raise TypeError(f"matmul(): expected static arrays, got {type(a).__name__} and {type(b).__name__}")
    n = len(a._c)
    m = len(b._c)
    if n != m and not (sa and not sb and len(a._c[0]) == m) and not (sb and not sa and len(b._c[0]) == n):
        raise ValueError(f"matmul(): incompatible sizes {type(a).__name__} ({n}) @ {type(b).__name__} ({m})")
    if sa and sb:
        if n != m:
            raise ValueError(f"matmul(): incompatible sizes {n}x{n} @ {m}x{m}")
        rows = []
        for i in range(n):
            row = [_dot([(a._c[i]._c[k], b._c[k]._c[j]) for k in range(n)]) for j in range(n)]
            rows.append(_vector_like(a._c[i], row))
        like = type(a) if isinstance(a, MatrixBase) or not isinstance(b, MatrixBase) else type(b)
        return _rows_class(like, rows)._from_components(rows)
    if sa:
        if len(a._c[0]) != m:
            raise ValueError(f"matmul(): a {n}x{n} matrix times a vector of {m} entries")
        return _vector_like(b, [_dot([(a._c[i]._c[k], b._c[k]) for k in range(m)]) for i in range(n)])
    if sb:
        if len(b._c[0]) != n:
            raise ValueError(f"matmul(): a vector of {n} entries times a {m}x{m} matrix")
        return _vector_like(a, [_dot([(a._c[k], b._c[k]._c[j]) for k in range(n)]) for j in range(m)])
    if n != m:
        raise ValueError(f"matmul(): inner product of vectors of {n} and {m} entries")
    return _dot([(a._c[k], b._c[k]) for k in range(n)])


HOOKS["matmul"] = matmul


def _direct_matmul(a, b, b_square: bool):
    """``a @ b`` for a square ``a`` (a matrix, an ``Array44f``) times a vector or a square array of
    its size whose entries are all of ``a``'s entry class with no gradient attached: each entry of
    the result is one fma chain of nodes (:func:`.direct.dot`, the nodes :func:`_dot` makes, in
    its order), with none of the per-entry promotion of the general path.  ``None`` otherwise."""
    rows = a._c
    n = len(rows)
    row_cls = type(a)._elem
    e = getattr(row_cls, "_elem", None)
    k = direct.kit(e)
    if k is None or k.mul is None or k.fma is None or not isinstance(b, VectorBase) or len(b._c) != n:
        return None
    cells = []          # a's entries' nodes, row by row
    for r in rows:
        if type(r) is not row_cls:
            return None
        ns = direct.nodes(r._c, e)
        if ns is None:
            return None
        cells.append(ns)
    if not b_square:
        if type(b)._elem is not e:
            return None
        v = direct.nodes(b._c, e)
        if v is None:
            return None
        return _vector_like(b, [direct.wrap(e, direct.dot(k, cells[i], v)) for i in range(n)])
    if type(b) is not type(a):
        return None
    cols = []
    for r in b._c:
        ns = direct.nodes(r._c, e) if type(r) is row_cls else None
        if ns is None:
            return None
        cols.append(ns)
    cols = list(zip(*cols))         # b's columns
    out = []
    for i in range(n):
        entries = [direct.wrap(e, direct.dot(k, cells[i], cols[j])) for j in range(n)]
        out.append(row_cls._from_components(entries))
    return type(a)._from_components(out)


def transpose(m):
    """The transpose of a square static array (a matrix stays a matrix)."""
    if not _is_square(m):
        raise TypeError(f"transpose(): expected a square matrix (n x n static array), got {type(m).__name__}")
    n = len(m._c)
    rows = [_vector_like(m._c[j], [_copy(m._c[i]._c[j]) for i in range(n)]) for j in range(n)]
    return type(m)._from_components(rows)


def _cross(u, v):
    return [_fma(u[1], v[2], -(u[2] * v[1])), _fma(u[2], v[0], -(u[0] * v[2])), _fma(u[0], v[1], -(u[1] * v[0]))]


def _entries(m):
    return [list(r._c) for r in m._c]


def det(m):
    """The determinant (Dr.Jit's formulas: ``fma(a, d, -b c)`` for 2x2, ``r0 . (r1 x r2)`` for 3x3,
    complementary 2x2 minors for 4x4)."""
    if not _is_square(m):
        raise TypeError(f"det(): expected a square matrix, got {type(m).__name__}")
    a = _entries(m)
    n = len(a)
    if n == 1:
        return _copy(a[0][0])
    if n == 2:
        return _fma(a[0][0], a[1][1], -(a[0][1] * a[1][0]))
    if n == 3:
        c = _cross(a[1], a[2])
        return _dot([(a[0][k], c[k]) for k in range(3)])
    if n == 4:
        s, c = _minors4(a)
        return _det4(s, c)
    raise ValueError(f"det(): matrices up to 4x4, got {n}x{n}")


def _fms(x, y, z, w):
    """``x y - z w``."""
    return _fma(x, y, -(z * w))


def _minors4(a):
    s = [_fms(a[0][0], a[1][1], a[1][0], a[0][1]), _fms(a[0][0], a[1][2], a[1][0], a[0][2]),
         _fms(a[0][0], a[1][3], a[1][0], a[0][3]), _fms(a[0][1], a[1][2], a[1][1], a[0][2]),
         _fms(a[0][1], a[1][3], a[1][1], a[0][3]), _fms(a[0][2], a[1][3], a[1][2], a[0][3])]
    c = [_fms(a[2][0], a[3][1], a[3][0], a[2][1]), _fms(a[2][0], a[3][2], a[3][0], a[2][2]),
         _fms(a[2][0], a[3][3], a[3][0], a[2][3]), _fms(a[2][1], a[3][2], a[3][1], a[2][2]),
         _fms(a[2][1], a[3][3], a[3][1], a[2][3]), _fms(a[2][2], a[3][3], a[3][2], a[2][3])]
    return s, c


def _det4(s, c):
    return s[0] * c[5] - s[1] * c[4] + s[2] * c[3] + s[3] * c[2] - s[4] * c[1] + s[5] * c[0]


def inverse(m):
    """The inverse matrix (Dr.Jit's formulas for 2x2 and 3x3: the adjugate times ``rcp(det)``;
    4x4 from complementary 2x2 minors).  Singular matrices give inf/NaN entries."""
    if not _is_square(m):
        raise TypeError(f"inverse(): expected a square matrix, got {type(m).__name__}")
    a = _entries(m)
    n = len(a)
    if n == 1:
        inv = [[apply("rcp", a[0][0])]]
    elif n == 2:
        r = apply("rcp", _fma(a[0][0], a[1][1], -(a[0][1] * a[1][0])))
        inv = [[a[1][1] * r, -a[0][1] * r], [-a[1][0] * r, a[0][0] * r]]
    elif n == 3:
        c = [_cross(a[1], a[2]), _cross(a[2], a[0]), _cross(a[0], a[1])]
        r = apply("rcp", _dot([(a[0][k], c[0][k]) for k in range(3)]))
        inv = [[c[j][i] * r for j in range(3)] for i in range(3)]
    elif n == 4:
        s, c = _minors4(a)
        r = apply("rcp", _det4(s, c))
        inv = [
            [(a[1][1] * c[5] - a[1][2] * c[4] + a[1][3] * c[3]) * r,
             (-a[0][1] * c[5] + a[0][2] * c[4] - a[0][3] * c[3]) * r,
             (a[3][1] * s[5] - a[3][2] * s[4] + a[3][3] * s[3]) * r,
             (-a[2][1] * s[5] + a[2][2] * s[4] - a[2][3] * s[3]) * r],
            [(-a[1][0] * c[5] + a[1][2] * c[2] - a[1][3] * c[1]) * r,
             (a[0][0] * c[5] - a[0][2] * c[2] + a[0][3] * c[1]) * r,
             (-a[3][0] * s[5] + a[3][2] * s[2] - a[3][3] * s[1]) * r,
             (a[2][0] * s[5] - a[2][2] * s[2] + a[2][3] * s[1]) * r],
            [(a[1][0] * c[4] - a[1][1] * c[2] + a[1][3] * c[0]) * r,
             (-a[0][0] * c[4] + a[0][1] * c[2] - a[0][3] * c[0]) * r,
             (a[3][0] * s[4] - a[3][1] * s[2] + a[3][3] * s[0]) * r,
             (-a[2][0] * s[4] + a[2][1] * s[2] - a[2][3] * s[0]) * r],
            [(-a[1][0] * c[3] + a[1][1] * c[1] - a[1][2] * c[0]) * r,
             (a[0][0] * c[3] - a[0][1] * c[1] + a[0][2] * c[0]) * r,
             (-a[3][0] * s[3] + a[3][1] * s[1] - a[3][2] * s[0]) * r,
             (a[2][0] * s[3] - a[2][1] * s[1] + a[2][2] * s[0]) * r]]
    else:
        raise ValueError(f"inverse(): matrices up to 4x4, got {n}x{n}")
    rows = [_vector_like(m._c[i], inv[i]) for i in range(n)]
    return _rows_class(type(m), rows)._from_components(rows)


# ------------------------------------------------------------------------------------------
# The operations a matrix defines differently (MatrixBase._ops)

def _is_matrix(x) -> bool:
    return isinstance(x, MatrixBase)


def _scalar_like(x, m) -> bool:
    """Whether ``x`` is a multiple of the identity for matrix ``m`` (a number, a 1-D array or
    an entry: below the rows' depth)."""
    return isinstance(x, (ArrayBase,) + _NUMBERS) or (isinstance(x, VectorBase) and x.Depth < m.Depth - 1)


def _diagonal_op(op, a, b):
    """``a op b`` where one of them is a multiple of the identity (``m + 1``, ``1 - m``)."""
    m, s = (a, b) if _is_matrix(a) else (b, a)
    n = len(m._c)
    rows = []
    for i in range(n):
        row = m._c[i]
        entries = [_copy(e) if j != i else None for j, e in enumerate(row._c)]
        entries[i] = apply(op, row._c[i], s) if m is a else apply(op, s, row._c[i])
        if m is b and op == "sub":          # s - m: the off-diagonal entries are -m[i][j]
            entries = [apply("neg", row._c[j]) if j != i else entries[j] for j in range(n)]
        rows.append(_vector_like(row, entries))
    return _rows_class(type(m), rows)._from_components(rows)


def m_add(a, b):
    if _is_matrix(a) and _scalar_like(b, a) or _is_matrix(b) and _scalar_like(a, b):
        return _diagonal_op("add", a, b)
    return componentwise("add", (a, b))


def m_sub(a, b):
    if _is_matrix(a) and _scalar_like(b, a) or _is_matrix(b) and _scalar_like(a, b):
        return _diagonal_op("sub", a, b)
    return componentwise("sub", (a, b))


def m_mul(a, b):
    """Matrix product with a matrix or a vector (``m * v == m @ v``), else scaling."""
    if _is_matrix(a) and isinstance(b, VectorBase) and b.Depth >= a.Depth - 1 or \
            _is_matrix(b) and isinstance(a, VectorBase) and a.Depth >= b.Depth - 1:
        return matmul(a, b)
    if not isinstance(a, VectorBase) and not isinstance(b, VectorBase):
        return a * b        # fma(0, t, m): the product of two numbers, then the matrix added
    return componentwise("mul", (a, b))


def m_truediv(a, b):
    if _is_matrix(b):
        return m_mul(a, inverse(b))
    return componentwise("truediv", (a, b))


def m_rcp(m):
    return inverse(m)


def m_fma(a, b, c):
    """``a * b + c`` as Dr.Jit rounds it: a matrix product accumulates its fma chain onto ``c``'s
    entry (``acc = fma(a[i][0], b[0][j], c[i][j])``, ...); a matrix scaled entry by entry is one
    fma per entry; a number or 1-D ``c`` is that multiple of the identity (0 off the diagonal)."""
    m = a if _is_matrix(a) else b if _is_matrix(b) else c
    if not _is_matrix(m) or not (_is_matrix(c) or _scalar_like(c, m)):
        return m_add(m_mul(a, b), c)
    product = _is_matrix(a) and _is_matrix(b)
    scaled = _is_matrix(a) and _scalar_like(b, a) or _is_matrix(b) and _scalar_like(a, b)
    if not (product or scaled):
        return m_add(m_mul(a, b), c)
    n = len(m._c)
    if _is_matrix(c):
        addend = [list(r._c) for r in c._c]
    else:
        zero = m._c[0]._c[0] * 0 if isinstance(c, ArrayBase) or isinstance(c, VectorBase) else 0.0
        addend = [[c if i == j else zero for j in range(n)] for i in range(n)]
    rows = []
    for i in range(n):
        if product:
            entries = []
            for j in range(n):
                acc = addend[i][j]
                for k in range(n):
                    acc = _fma(a._c[i]._c[k], b._c[k]._c[j], acc)
                entries.append(acc)
        elif _is_matrix(a):
            entries = [_fma(a._c[i]._c[j], b, addend[i][j]) for j in range(n)]
        else:
            entries = [_fma(a, b._c[i]._c[j], addend[i][j]) for j in range(n)]
        rows.append(_vector_like(m._c[i], entries))
    return _rows_class(type(m), rows)._from_components(rows)


def m_pow(a, b):
    """``m ** k`` for an int ``k >= 0`` (repeated products); other exponents raise."""
    if not (_is_matrix(a) and isinstance(b, (int, np.integer)) and not isinstance(b, bool) and b >= 0):
        raise TypeError(f"frostjit.pow(): a matrix power needs an int exponent >= 0, got "
                        f"{type(a).__name__} ** {type(b).__name__}")
    k = int(b)
    result = type(a)(1.0)
    base = a
    while k:
        if k & 1:
            result = matmul(result, base)
        k >>= 1
        if k:
            base = matmul(base, base)
    return result


def _no_ordering(op):
    def raise_(*operands):
        raise TypeError(f"frostjit.{op}(): inequality comparisons are not defined for matrices "
                        f"({', '.join(type(o).__name__ for o in operands)})")
    return raise_


def _identity_operand(op):
    """Entry by entry ``op`` where a number or 1-D operand is that multiple of the identity
    (Dr.Jit: ``minimum(Matrix2f(1, 2, 3, 4), 2)`` is ``[[1, 0], [0, 2]]``, ``2 * I == 2`` is
    true everywhere)."""
    def f(*operands):
        m = next(o for o in operands if _is_matrix(o))
        return componentwise(op, tuple(type(m)(o) if _scalar_like(o, m) else o for o in operands))
    return f


MatrixBase._ops = {"add": m_add, "sub": m_sub, "mul": m_mul, "truediv": m_truediv, "rcp": m_rcp, "fma": m_fma,
                   "pow": m_pow, "min": _identity_operand("min"), "max": _identity_operand("max"),
                   "eq": _identity_operand("eq"), "ne": _identity_operand("ne"),
                   **{op: _no_ordering(op) for op in ("lt", "le", "gt", "ge")}}
