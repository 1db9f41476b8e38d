"""The layout key distinguishes exactly the inputs a plain call distinguishes: Python numbers by
type and bits, dict keys likewise, and the AD scope the call runs in."""
import decimal
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import UInt32

from freeze_helpers import ramp, same

SPECIAL = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1.0, 2.5]
KINDS = [float, np.float64, np.float32, np.float16, lambda v: complex(v, -0.0), lambda v: complex(0.5, v),
         lambda v: decimal.Decimal(repr(v))]


def signed(x, s):
    """A result that tells -0.0 from 0.0 and NaN from anything (copysign, isnan)."""
    v = complex(s)
    re, im = float(v.real), float(v.imag)
    return x * re + math.copysign(1.0, re) + math.copysign(2.0, im) + (10.0 if re != re else 0.0), type(s).__name__


@given(st.lists(st.tuples(st.integers(0, len(SPECIAL) - 1), st.integers(0, len(KINDS) - 1)), min_size=2,
                max_size=12), st.sampled_from([1, 7, 1000]))
def test_python_numbers_are_keyed_by_type_and_bits(calls, n):
    fz = fj.freeze(signed, warn_after=100)
    for i, k in calls:
        s = KINDS[k](SPECIAL[i])
        x = ramp(n)
        ref, got = signed(x, s), fz(x, s)
        assert same(got[0], ref[0]) and got[1] == ref[1], (s, got, ref)
    distinct = {(KINDS[k](SPECIAL[i]).__class__, str(KINDS[k](SPECIAL[i]))) for i, k in calls}
    # (+2: an int or float whose value changes becomes a parameter, one key for each type)
    assert fz.n_cached_recordings <= len(distinct) + 2


@pytest.mark.parametrize("make_nan", [lambda: float("nan"), lambda: np.float64("nan"), lambda: np.float32("nan"),
                                      lambda: complex("nan+1j"), lambda: decimal.Decimal("NaN")])
def test_a_nan_argument_replays_its_recording(make_nan):
    fz = fj.freeze(lambda x, s: x + (1.0 if s != s else 0.0))
    for _ in range(50):
        fz(ramp(5), make_nan())         # a new NaN object each call
    assert fz.n_recordings == 1


@pytest.mark.parametrize("zero, negzero", [(0.0, -0.0), (np.float64(0.0), np.float64(-0.0)),
                                           (np.float32(0.0), np.float32(-0.0)),
                                           (decimal.Decimal("0"), decimal.Decimal("-0")),
                                           (complex(0.0, 0.0), complex(0.0, -0.0))])
def test_negative_zero_is_not_zero(zero, negzero):
    fz = fj.freeze(signed)
    for s in (zero, zero, zero, negzero, negzero, zero):       # (the third call uses a binder)
        ref, got = signed(ramp(3), s), fz(ramp(3), s)
        assert same(got[0], ref[0]), (s, got, ref)
    assert fz.n_recordings == 2


def test_bool_int_and_float_arguments_are_different_inputs():
    fz = fj.freeze(lambda x, s: x + s)
    for s in (True, 1, 1.0, np.int64(1), np.float32(1), True, 1.0):
        ref, got = fj.arange(UInt32, 4) + s, fz(fj.arange(UInt32, 4), s)
        assert type(got) is type(ref) and same(got, ref), s


@pytest.mark.parametrize("a, b", [(1, True), (0.0, -0.0), (1, 1.0), (np.float64(0.0), np.float64(-0.0))])
def test_dict_keys_are_keyed_by_type_and_bits(a, b):
    def fn(d):
        (k, v), = d.items()
        return {k: v + 1}, math.copysign(1.0, k), type(k).__name__
    fz = fj.freeze(fn)
    for key in (a, a, a, b, b, a):
        ref, got = fn({key: ramp(3)}), fz({key: ramp(3)})
        (rk, rv), = ref[0].items()
        (gk, gv), = got[0].items()
        assert type(gk) is type(rk) and math.copysign(1.0, gk) == math.copysign(1.0, rk) and same(gv, rv)
        assert got[1:] == ref[1:]


def test_frozenset_values_are_keyed_by_their_elements():
    fz = fj.freeze(lambda x, s: x * math.copysign(1.0, next(iter(s))))
    for s in (frozenset({0.0}), frozenset({-0.0}), frozenset({0.0})):
        assert same(fz(ramp(3, 1), s), ramp(3, 1) * math.copysign(1.0, next(iter(s))))
    assert fz.n_recordings == 2


# --- item 2: the AD scope the call runs in ------------------------------------------------
from contextlib import ExitStack  # noqa: E402

from frostjit.llvm.ad import Float as FloatAD  # noqa: E402


def ad_step(x, y):
    """Backward inside the function; the result shows which inputs were tracked."""
    z = fj.square(x) * 3 + y * x
    fj.backward(fj.sum(z), flags=fj.ADFlag.Default | fj.ADFlag.AllowNoGrad)
    w = x * 2
    fj.enable_grad(w)
    return fj.grad(x), fj.grad(y), fj.grad_enabled(w), fj.grad_enabled(x * y)


def scoped(scope, x, y):
    """The scopes of ``scope`` (outermost first) as context managers over inputs ``x``, ``y``."""
    st = ExitStack()
    for kind in scope:
        st.enter_context({"suspend": lambda: fj.suspend_grad(), "suspend_x": lambda: fj.suspend_grad(x),
                          "resume": lambda: fj.resume_grad(), "resume_y": lambda: fj.resume_grad(y),
                          "isolate": lambda: fj.isolate_grad()}[kind]())
    return st


SCOPES = [(), ("suspend",), ("suspend_x",), ("suspend", "resume"), ("suspend", "resume_y"), ("isolate",),
          ("isolate", "suspend"), ("suspend", "isolate", "resume")]


@given(st.lists(st.integers(0, len(SCOPES) - 1), min_size=2, max_size=8), st.sampled_from([1, 7, 1000]))
def test_ad_scopes_are_part_of_the_key(order, n):
    fz = fj.freeze(ad_step, warn_after=100)

    def inputs():
        x, y = FloatAD(np.arange(n, dtype=np.float32)), FloatAD(np.ones(n, np.float32) * 2)
        fj.enable_grad(x, y)
        return x, y
    for k in order:
        ref_args, got_args = inputs(), inputs()
        with scoped(SCOPES[k], *ref_args):
            ref = ad_step(*ref_args)
        with scoped(SCOPES[k], *got_args):
            got = fz(*got_args)
        assert same(got[0], ref[0]) and same(got[1], ref[1]) and got[2:] == ref[2:], (SCOPES[k], got, ref)


def test_a_call_under_suspend_grad_does_not_change_later_gradients():
    fz = fj.freeze(ad_step)
    for suspend in (True, False, True, False):
        x, y = FloatAD(1.0, 2.0, 3.0), FloatAD(1.0, 1.0, 1.0)
        fj.enable_grad(x, y)
        with fj.suspend_grad(when=suspend):
            g = fz(x, y)[0]
        assert same(g, FloatAD(0, 0, 0) if suspend else FloatAD(7, 13, 19))
