"""Small helpers of Dr.Jit's API: ``zeros_like``/``ones_like``/``empty_like``, ``copy``,
``allclose`` and the ``assert_*`` family, ``mulsign``, and the deprecated ``sqr`` and
``*_nested`` reductions (they warn, as in Dr.Jit 1.5).
"""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from ..array.meta import VarType
from ..trace.state import JitFlag, flag
from ..traits import array_t, depth_v, is_array_v, is_float_v, is_mask_v, is_special_v, is_tensor_v, type_v
from ..tree import transform
from .detach import detach
from .creation import empty, full
from .evaluation import width
from .math import abs as _abs, clip, isnan, rcp, select, square
from .printing import format as _format
from .reduce import all as _all, any as _any, max as _max, min as _min, none as _none, prod as _prod, sum as _sum

__all__ = ["zeros_like", "ones_like", "empty_like", "copy", "allclose", "assert_allclose", "assert_true",
           "assert_false", "assert_equal", "mulsign", "step", "sqr", "clamp", "inverse", "all_nested", "any_nested", "none_nested",
           "sum_nested", "prod_nested", "min_nested", "max_nested"]


# -- arrays like another ------------------------------------------------------------------

def _like(who: str, arg, value):
    if is_array_v(arg):
        # width(), not len(): inside a frozen function the width stays symbolic; a tensor's
        # whole shape (its width alone made zeros_like(TensorXf([[1, 2]])) of shape (2,)), and
        # a dynamic array's (ArrayXf) row count too (its width alone made one row)
        whole = getattr(type(arg), "IsTensor", False) or getattr(type(arg), "_family", None) == "dynamic"
        size = arg.shape if whole else width(arg)
        return full(type(arg), value, size) if value is not None else empty(type(arg), size)
    if isinstance(arg, (bool, int, float)):
        return type(arg)(0 if value is None else value)
    raise TypeError(f"{who}(): expected a frostjit array or a Python number, got {type(arg).__name__}")


def zeros_like(arg, /):
    """An array of zeros with the type and shape of ``arg`` (``0`` of its type for a Python number).

    Examples
    --------
    >>> fj.zeros_like(Array3f(Float(1, 2), 3, 4))
    [[0, 0, 0],
     [0, 0, 0]]
    """
    return _like("zeros_like", arg, 0)


def ones_like(arg, /):
    """An array of ones with the type and shape of ``arg`` (``1`` of its type for a Python number)."""
    return _like("ones_like", arg, 1)


def empty_like(arg, /):
    """An uninitialized array with the type and shape of ``arg`` (its contents are unspecified)."""
    return _like("empty_like", arg, None)


def copy(arg, /):
    """A deep copy of an array or PyTree: containers rebuilt, every array copied.

    A copied array is a new handle: writing into it (``fj.scatter``, ``x[i] = v``) leaves the
    original as it was.  Gradient tracking carries over, as through the copy constructor.
    """
    return transform(arg, lambda a: type(a)(a), who="copy", root="arg")


# -- comparisons within a tolerance ----------------------------------------------------------

def _tolerances(vartype: VarType, rtol, atol):
    """Dr.Jit's defaults by precision: loose for half and single, NumPy's for the rest."""
    if vartype is VarType.Float16:
        ref = (1e-2, 1e-2)
    elif vartype is VarType.Float32:
        ref = (1e-3, 1e-5)
    else:
        ref = (1e-5, 1e-8)
    return (ref[0] if rtol is None else rtol), (ref[1] if atol is None else atol)


def _as_arrays(who: str, a, b):
    """``a`` and ``b`` detached and converted to one array type (the type of ``a - b``)."""
    a, b = detach(a), detach(b)
    if is_special_v(a):
        a = array_t(a)(a)
    if is_special_v(b):
        b = array_t(b)(b)
    if not is_array_v(b):
        b = type(a)(b)
    elif not is_array_v(a):
        a = type(b)(a)
    wa, wb = width(a), width(b)
    if wa != wb and wa != 1 and wb != 1:
        raise RuntimeError(f"frostjit.{who}(): incompatible sizes ({wa} and {wb})")
    diff = a - b
    return type(diff)(a), type(diff)(b), diff


def _close_mask(a, b, diff, rtol, atol, equal_nan):
    cond = _abs(diff) <= _abs(b) * rtol + atol
    if is_float_v(a):
        cond = cond | (a == b)          # equal infinities
    if equal_nan:
        cond = cond | (isnan(a) & isnan(b))
    return cond


def _seq_len(x) -> int:
    try:
        return len(x)
    except TypeError:
        return 0


def _nesting(x) -> int:
    """How deeply Python sequences / a NumPy array nest (0 for a number)."""
    if isinstance(x, np.ndarray):
        return x.ndim
    if isinstance(x, (list, tuple)):
        return 1 + (_nesting(x[0]) if x else 0)
    return 0


def _deeper_operand(a, b):
    """``(array, rows, array_first)`` where one operand is a 1-D array and the other a Python/NumPy
    sequence of sequences, else ``None``: Dr.Jit's ``a - b`` then has the deeper type
    (``Float - [[1, 2]]`` is an ``ArrayXf``), each row compared with the array.  (Static arrays
    are left to the conversion: Dr.Jit refuses ``Array3f - [[[...]]]``.)"""
    for arr, other, first in ((a, b, True), (b, a, False)):
        if is_array_v(arr) and not is_array_v(other) and not is_tensor_v(arr) and depth_v(arr) == 1 \
                and _nesting(other) > 1:
            return arr, other, first
    return None


def allclose(a, b, rtol: float | None = None, atol: float | None = None, equal_nan: bool = False):
    r"""Whether ``a`` and ``b`` agree elementwise within ``|a - b| <= |b| * rtol + atol``.

    Parameters
    ----------
    a, b : array, PyTree of numbers or number
        Arrays of any type (the other operand is converted to it), or nested Python
        sequences / NumPy arrays / numbers.
    rtol, atol : float, optional
        Default by the precision of ``a - b``: ``1e-3``/``1e-5`` for single precision,
        ``1e-2``/``1e-2`` for half, ``1e-5``/``1e-8`` (NumPy's) otherwise.
    equal_nan : bool
        Whether NaNs at the same place count as equal.

    Returns
    -------
    Bool array or bool
        A size-1 ``Bool`` array when an operand is a frostjit array (as Dr.Jit returns it;
        ``if fj.allclose(...)`` works), else a Python ``bool``.  Masks compare for equality.

    Raises
    ------
    RuntimeError
        The operands' sizes are incompatible.
    """
    if is_array_v(a) or is_array_v(b):
        if (is_array_v(a) and is_mask_v(a)) or (is_array_v(b) and is_mask_v(b)):
            a, b = detach(a), detach(b)
            return _all(a == b, axis=None)
        deeper = _deeper_operand(a, b)
        if deeper is not None:
            arr, rows, first = deeper
            return _all([allclose(arr, row, rtol, atol, equal_nan) if first else
                         allclose(row, arr, rtol, atol, equal_nan) for row in rows])
        a, b, diff = _as_arrays("allclose", a, b)
        rtol, atol = _tolerances(type_v(diff), rtol, atol)
        return _all(_close_mask(a, b, diff, rtol, atol, equal_nan), axis=None)
    la, lb = _seq_len(a), _seq_len(b)
    n = builtins.max(la, lb)
    if (la != n and la > 1) or (lb != n and lb > 1):
        raise RuntimeError(f"frostjit.allclose(): incompatible sizes ({la} and {lb})")
    if n == 0:
        if equal_nan and a != a and b != b:
            return True
        rtol = 1e-5 if rtol is None else rtol
        atol = 1e-8 if atol is None else atol
        return builtins.abs(a - b) <= builtins.abs(b) * rtol + atol
    for i in range(n):
        if not allclose(a[0] if la == 1 else a[i] if la else a, b[0] if lb == 1 else b[i] if lb else b,
                        rtol, atol, equal_nan):
            return False
    return True


def assert_allclose(actual, desired, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = False, err_msg: str = "") -> None:
    """Raise ``AssertionError`` unless :func:`allclose` holds; the message counts the mismatches
    and gives the largest absolute and relative differences (as NumPy's and Dr.Jit's do).

    Parameters
    ----------
    actual, desired, rtol, atol, equal_nan
        As for :func:`allclose` (``desired`` sets the relative scale).
    err_msg : str
        A line put before the generated message.
    """
    prefix = err_msg + "\n" if err_msg else ""
    if not (is_array_v(actual) or is_array_v(desired)):
        if not allclose(actual, desired, rtol, atol, equal_nan):
            raise AssertionError(f"{prefix}assert_allclose() failed: actual={actual!r}, desired={desired!r}")
        return
    a, b, diff = _as_arrays("assert_allclose", actual, desired)
    rtol, atol = _tolerances(type_v(diff), rtol, atol)
    cond = _close_mask(a, b, diff, rtol, atol, equal_nan)
    if _all(cond, axis=None):
        return
    # The differences in the arrays' own precision (the figures match Dr.Jit's to the last digit).
    mismatched = ~cond
    abs_diff = _abs(diff)
    denom = _abs(b) + atol
    rel = abs_diff / select(denom > 0, denom, 1)
    m, ad, rd = (np.asarray(v) for v in (mismatched, abs_diff, rel))
    m, ad, rd = np.broadcast_arrays(m, ad, rd)
    n_mismatch, n_total = int(np.count_nonzero(m)), m.size
    max_abs = float(np.max(np.where(m, ad, 0)))
    max_rel = float(np.max(np.where(m, rd, 0)))

    def labeled(name, arr):
        label = f" {name}: "
        return label + repr(arr).replace("\n", "\n" + " " * len(label))

    raise AssertionError(f"{prefix}Arrays are not equal to tolerance rtol={rtol:g}, atol={atol:g}\n"
                         f"Mismatched elements: {n_mismatch} / {n_total} ({100.0 * n_mismatch / n_total:.3g}%)\n"
                         f"Max absolute difference: {max_abs:.6g}\n"
                         f"Max relative difference: {max_rel:.6g}\n"
                         f"{labeled('ACTUAL', a)}\n{labeled('DESIRED', b)}")


# -- assertions checked when JitFlag.Debug is set ------------------------------------------

def assert_true(cond, fmt: str | None = None, *args, tb_depth: int = 3, tb_skip: int = 0, **kwargs) -> None:
    """Raise ``AssertionError`` if any entry of ``cond`` is false -- only while
    :attr:`frostjit.JitFlag.Debug` is set (checks cost time; they are off by default).

    Parameters
    ----------
    cond : bool or Bool array
        The condition.
    fmt : str, optional
        A format string (:func:`frostjit.format`) appended to ``"Assertion failure: "``; the
        arrays it references show only the lanes where ``cond`` is false.
    *args, **kwargs
        The values ``fmt`` references (``limit=`` is passed on to :func:`frostjit.format`).
    tb_depth, tb_skip : int
        Accepted for Dr.Jit compatibility (they shape delayed messages of symbolic checks,
        which frostjit does not have: a failing check raises at once).

    Examples
    --------
    >>> x = Float(1, -4, -2, 3)
    >>> with fj.scoped_set_flag(fj.JitFlag.Debug, True):
    ...     fj.assert_true(x >= 0, "Found negative values: {}", x)
    Traceback (most recent call last):
    AssertionError: Assertion failure: Found negative values: [-4, -2]
    """
    if not flag(JitFlag.Debug):
        return
    from .printing import refuse_symbolic       # (printing imports the array modules late too)
    refuse_symbolic("assert_true", cond, fmt, args, kwargs)
    if cond is True or (not isinstance(cond, bool) and _all(cond, axis=None)):
        return
    active = (not cond) if isinstance(cond, bool) else ~cond
    text = _format("Assertion failure" + (": " + fmt if fmt else "!"), *args, active=active, **kwargs)
    raise AssertionError(text)


def assert_false(cond, fmt: str | None = None, *args, tb_depth: int = 3, tb_skip: int = 0, **kwargs) -> None:
    """:func:`assert_true` of the negated condition (raises where ``cond`` is true)."""
    assert_true((not cond) if isinstance(cond, bool) else ~cond, fmt, *args, tb_depth=tb_depth,
                tb_skip=tb_skip + 1, **kwargs)


def assert_equal(arg0, arg1, fmt: str | None = None, *args, limit: int = 3, tb_skip: int = 0, **kwargs) -> None:
    """:func:`assert_true` of ``arg0 == arg1`` (messages show at most ``limit`` entries per end)."""
    eq = arg0 == arg1
    assert_true(bool(eq) if isinstance(eq, (bool, np.bool_)) else eq, fmt, *args, limit=limit,
                tb_skip=tb_skip + 1, **kwargs)


# -- arithmetic helpers ------------------------------------------------------------------

def mulsign(arg0, arg1, /):
    """``arg0`` times the sign of ``arg1``: ``-arg0`` where ``arg1 < 0`` (or NaN), else ``arg0``.

    ``-0.0`` counts as positive, as in Dr.Jit (``mulsign(x, -0.0)`` is ``x``).
    """
    if not (is_array_v(arg0) or is_array_v(arg1)):
        return arg0 if arg1 >= 0 else -arg0
    return select(arg1 >= 0, arg0, -arg0)


def step(arg0, arg1, /):
    """``select(arg0 < arg1, 0, 1)``, as Dr.Jit defines it: an integer array (``Int``, or a
    vector of them) of 0 where ``arg0 < arg1`` and 1 elsewhere.

    Raises
    ------
    TypeError
        Neither argument is a frostjit array.
    """
    if not (is_array_v(arg0) or is_array_v(arg1)):
        raise TypeError(f"step(): expected a frostjit array, got {type(arg0).__name__} and {type(arg1).__name__}")
    own = getattr(type(arg0), "_step", None) or getattr(type(arg1), "_step", None)
    if own is not None:         # (cooperative vectors keep their element type, as in Dr.Jit)
        return own(arg0, arg1)
    return select(arg0 < arg1, 0, 1)


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old}() is deprecated, please use {new}", DeprecationWarning, stacklevel=3)


def sqr(arg, /):
    """Deprecated alias of :func:`frostjit.square` (warns ``DeprecationWarning``)."""
    _deprecated("sqr", "square(arg)")
    return square(arg)


def clamp(value, min, max, /):  # noqa: A002  (Dr.Jit's parameter names)
    """Deprecated alias of :func:`frostjit.clip` (warns ``DeprecationWarning``)."""
    _deprecated("clamp", "clip(...)")
    return clip(value, min, max)


def inverse(arg, /):
    """Deprecated alias of :func:`frostjit.rcp` (warns ``DeprecationWarning``); Dr.Jit 1.5's
    ``inverse`` is the reciprocal (a matrix is inverted by ``rcp`` too)."""
    _deprecated("inverse", "rcp(x)")
    return rcp(arg)


def all_nested(arg, /):
    """Deprecated: ``frostjit.all(arg, axis=None)`` (warns ``DeprecationWarning``)."""
    _deprecated("all_nested", "all(arg, axis=None)")
    return _all(arg, axis=None)


def any_nested(arg, /):
    """Deprecated: ``frostjit.any(arg, axis=None)`` (warns ``DeprecationWarning``)."""
    _deprecated("any_nested", "any(arg, axis=None)")
    return _any(arg, axis=None)


def none_nested(arg, /):
    """Deprecated: ``frostjit.none(arg, axis=None)`` (warns ``DeprecationWarning``)."""
    _deprecated("none_nested", "none(arg, axis=None)")
    return _none(arg, axis=None)


def sum_nested(arg, /):
    """Deprecated: ``frostjit.sum(arg, axis=None)`` (warns ``DeprecationWarning``)."""
    _deprecated("sum_nested", "sum(arg, axis=None)")
    return _sum(arg, axis=None)


def prod_nested(arg, /):
    """Deprecated: ``frostjit.prod(arg, axis=None)`` (warns ``DeprecationWarning``)."""
    _deprecated("prod_nested", "prod(arg, axis=None)")
    return _prod(arg, axis=None)


def min_nested(arg, /):
    """Deprecated: ``frostjit.min(arg, axis=None)`` (warns ``DeprecationWarning``)."""
    _deprecated("min_nested", "min(arg, axis=None)")
    return _min(arg, axis=None)


def max_nested(arg, /):
    """Deprecated: ``frostjit.max(arg, axis=None)`` (warns ``DeprecationWarning``)."""
    _deprecated("max_nested", "max(arg, axis=None)")
    return _max(arg, axis=None)
