"""Where Dr.Jit 1.5 silently returns stale results, a frozen function must equal the plain call
(at three or more widths) or raise a clear error.  Each case of the issue is one test."""
import warnings

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float, UInt32

from freeze_helpers import F, ramp, same

WIDTHS = (3, 5, 8, 17)


def against_plain(fn, make_args, widths=WIDTHS):
    """Call ``fn`` plain and frozen on fresh arguments at each width; results must agree."""
    fz = fj.freeze(fn)
    for n in widths:
        ref = fn(*make_args(n))
        got = fz(*make_args(n))
        assert same(got, ref), (n, got, ref)
    return fz


def x_only(n):
    return (ramp(n, 1),)


# --- case 1: widths used as values ------------------------------------------------------
def test_width_added_to_array():
    fz = against_plain(lambda x: x + fj.width(x), x_only)
    assert fz.n_recordings == 1


def test_arange_of_width_returned_alone():
    fz = against_plain(lambda x: fj.arange(UInt32, fj.width(x)), x_only)
    assert fz.n_recordings == 1


@pytest.mark.parametrize("make", [
    lambda x: fj.zeros(Float, fj.width(x)),
    lambda x: fj.ones(Float, fj.width(x)),
    lambda x: fj.full(Float, 2.5, fj.width(x)),
    lambda x: fj.full(UInt32, 7, fj.width(x)),
])
def test_sized_literal_returned(make):
    fz = against_plain(make, x_only)
    assert fz.n_recordings == 1


def test_sized_literal_as_scatter_target():
    def fn(x):
        t = fj.zeros(Float, fj.width(x))
        fj.scatter_add(t, x, fj.arange(UInt32, fj.width(x)))
        fj.scatter_add(t, 1.0, UInt32(0))
        return t
    assert against_plain(fn, x_only).n_recordings == 1


def test_full_as_scatter_reduce_target():
    def fn(x):
        t = fj.full(Float, -1.0, fj.width(x))
        fj.scatter_reduce(fj.ReduceOp.Max, t, x, fj.arange(UInt32, fj.width(x)) // 2)
        return t
    assert against_plain(fn, x_only).n_recordings == 1


def test_linspace_of_width():
    assert against_plain(lambda x: fj.linspace(Float, 0, 1, fj.width(x)), x_only).n_recordings == 1


def test_mean():
    assert against_plain(lambda x: fj.mean(x), x_only).n_recordings == 1
    assert against_plain(lambda x: x - fj.mean(x), x_only).n_recordings == 1


def test_arange_of_width_minus_one():
    assert against_plain(lambda x: fj.arange(UInt32, fj.width(x) - 1), x_only).n_recordings == 1


def test_width_arithmetic_in_values():
    def fn(x):
        w = fj.width(x)
        return x * (w // 2) + Float(w) / 3 + UInt32(w * w)
    assert against_plain(fn, x_only).n_recordings == 1


def test_width_escaping_into_python_is_guarded():
    def fn(x):
        if fj.width(x) > 6:
            return x * 2
        return x + sum(range(fj.width(x)))
    against_plain(fn, x_only, widths=(3, 5, 8, 17, 4, 3))


def test_len_and_numpy_sized_by_width():
    def fn(x):
        return x + Float(np.arange(len(x), dtype=np.float32))
    against_plain(fn, x_only)


def test_width_returned_as_python_value():
    fz = fj.freeze(lambda x: (x + 1, fj.width(x)))
    for n in WIDTHS:
        y, w = fz(ramp(n))
        assert w == n and type(w) is int
    assert fz.n_recordings == 1


def test_gather_half_width():
    def fn(x):
        return fj.gather(Float, x, fj.arange(UInt32, fj.width(x) // 2) * 2)
    against_plain(fn, x_only, widths=(4, 6, 10, 17))


# --- case 2: reading data inside ------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda x: x + x[0],
    lambda x: x + Float(x.numpy()[::-1].copy()),
    lambda x: x * 2 if fj.all(x > 1)[0] else x * 3,
    lambda x: x + 1 if bool(fj.any(x > 4)) else x - 1,
], ids=["item", "numpy", "if-all", "bool-any"])
def test_reading_data_inside(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in WIDTHS:
            fz = fn  # noqa
        fz = fj.freeze(fn)
        for n in WIDTHS:
            for shift in (0, 3):
                assert same(fz(ramp(n, shift)), fn(ramp(n, shift)))
    msgs = [str(m.message) for m in w if issubclass(m.category, fj.FreezeWarning)]
    assert any("reads array data" in m for m in msgs)


# --- case 3: attributes of self / argument objects -------------------------------------------
def test_self_attribute_changed():
    class Model:
        def __init__(self):
            self.scale = 2.0
            self.bias = F(1, 1, 1)

        @fj.freeze
        def apply(self, x):
            return x * self.scale + self.bias

    m = Model()
    for scale in (2.0, 10.0, 10.0, -1.0):
        m.scale = scale
        m.bias = F(scale, 0, 1)
        assert same(m.apply(F(1, 2, 3)), F(1, 2, 3) * scale + F(scale, 0, 1))
    assert Model.apply.n_recordings == 2     # (scale becomes a parameter after its first change)


def test_argument_object_attribute_changed():
    class Cfg:
        __slots__ = ("k", "arr")

        def __init__(self, k, arr):
            self.k = k
            self.arr = arr

    def fn(x, cfg):
        return x * cfg.k + cfg.arr
    fz = fj.freeze(fn)
    cfg = Cfg(2, F(0, 0, 0))
    for k in (2, 3, 3):
        cfg.k = k
        cfg.arr = F(k, k, k)
        assert same(fz(F(1, 2, 3), cfg), fn(F(1, 2, 3), cfg))
    assert fz.n_recordings == 2


def test_nested_plain_object_attribute():
    class Inner:
        def __init__(self):
            self.v = 1.5

    class Outer:
        def __init__(self):
            self.inner = Inner()
    o = Outer()
    fz = fj.freeze(lambda x, o: x * o.inner.v)
    assert same(fz(F(1, 2), o), F(1.5, 3))
    o.inner.v = 4.0
    assert same(fz(F(1, 2), o), F(4, 8))


# --- case 4: NumPy arguments mutated in place ------------------------------------------------
def test_numpy_argument_mutated_in_place():
    def fn(x, a):
        return x * Float(a) + a
    fz = fj.freeze(fn)
    a = np.ones(4, dtype=np.float32)
    for v in (1.0, 5.0, -2.0):
        a[:] = v
        assert same(fz(ramp(4), a), fn(ramp(4), a))
    assert fz.n_recordings == 1


# --- case 5: captured arrays rebound ---------------------------------------------------------
G = F(1, 1, 1)


def test_global_array_rebound():
    global G

    def fn(x):
        return x + G
    fz = fj.freeze(fn)
    for v in (1, 10, 100):
        G = F(v, v, v)
        assert same(fz(F(1, 2, 3)), F(1 + v, 2 + v, 3 + v))
    assert fz.n_recordings == 1


def test_closure_array_rebound():
    c = F(1, 1)

    def fn(x):
        return x * c
    fz = fj.freeze(fn)
    for v in (1, 2, 3):
        c = F(v, v)  # noqa: F841 (rebinding the closure cell)
        assert same(fz(F(1, 2)), F(v, 2 * v))
    assert fz.n_recordings == 1


def test_array_reached_through_helper_function_rebound():
    state = {"w": F(1, 1)}

    def helper():
        return state["w"]

    fz = fj.freeze(lambda x: x + helper())
    for v in (1, 2, 3):
        state["w"] = F(v, v)
        assert same(fz(F(0, 1)), F(v, 1 + v))


# --- case 6: results never alias ----------------------------------------------------------------
def test_results_do_not_alias():
    fz = fj.freeze(lambda x: (x * 2, [x + 1]))
    a = fz(F(1, 2))
    b = fz(F(3, 4))
    c = fz(F(5, 6))
    assert same(a[0], F(2, 4)) and same(a[1][0], F(2, 3))
    assert same(b[0], F(6, 8)) and same(c[1][0], F(6, 7))
    assert a[0] is not b[0] and a[1] is not b[1]
