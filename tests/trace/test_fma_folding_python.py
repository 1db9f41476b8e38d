"""Folding ``fma`` of literals on Python numbers (frostjit/trace/folding.py ``_PYTHON_TERNARY``)
against the op's NumPy reference: same bits and Python type on every triple of edge values and
on 20,000 random triples per type drawn to stress the single rounding (products cancelled by
the addend, addends a few ulps or many binades away, subnormal and huge values)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from frostjit.trace import folding, ops
from frostjit.trace.dtypes import Float32, Float64, VarType
from frostjit.trace.optable import OPS

EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.0, 7.0, 1e-45, 1e-300, 5e-324, 3.4e38, 1e308,
         math.inf, -math.inf, math.nan, 0.1, -1e-7, 1 + 2 ** -23, 1 - 2 ** -24]


def _same_bits(vt: VarType, got, want) -> bool:
    g, w = np.array([got], vt.np_dtype), np.array([want], vt.np_dtype)
    return bool((np.isnan(g) & np.isnan(w))[0] or g.tobytes() == w.tobytes())


def _check(vt: VarType, triples) -> int:
    """Compare the Python fold with the reference on ``triples``; the number it computed."""
    f = folding._PYTHON_TERNARY[("fma", vt)]
    cols = [np.array(c, dtype=vt.np_dtype) for c in zip(*triples)]
    want = OPS["fma"].numpy(vt, *cols)
    done = 0
    for k, args in enumerate(zip(*[c.tolist() for c in cols])):
        got = f(*args)
        if got is folding._NO:
            continue
        done += 1
        w = want[k].item()
        assert type(got) is type(w) and _same_bits(vt, got, w), (vt.name, args, got, w)
    return done


@pytest.mark.parametrize("vt", [Float32, Float64], ids=lambda t: t.name)
def test_edge_value_triples_fold_as_the_reference(vt):
    values = [ops.normalize_literal(vt, v) for v in EDGES]
    assert _check(vt, [(a, b, c) for a in values for b in values for c in values]) > 1000


def test_float32_sums_just_off_a_halfway_point_round_once():
    """``(1 - 2**-23) * 2**-24 * (1 + 2**-23) + (1 + 2**-23)`` lies just below the float32
    midpoint ``1 + 2**-23 + 2**-24``: rounding the sum to nearest double first would land on
    the midpoint and round to even upward (two roundings); the fold must give ``1 + 2**-23``."""
    triples = []
    for scale in (2.0 ** -100, 1.0, 2.0 ** 60):
        for sign in (1.0, -1.0):
            a, b, c = 1 - 2 ** -23, 2 ** -24 * (1 + 2 ** -23), 1 + 2 ** -23
            triples += [(sign * a, b * scale, sign * c * scale), (sign * a, -b * scale, sign * -c * scale)]
    assert _check(Float32, triples) == len(triples)
    assert folding._PYTHON_TERNARY[("fma", Float32)](1 - 2 ** -23, 2 ** -24 * (1 + 2 ** -23), 1 + 2 ** -23) \
        == 1 + 2 ** -23


@pytest.mark.parametrize("vt", [Float32, Float64], ids=lambda t: t.name)
def test_random_triples_near_cancellation_fold_as_the_reference(vt):
    rng = np.random.default_rng(13)
    n = 20000
    dt = vt.np_dtype
    span = 120 if vt is Float32 else 900
    a = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-span // 2, span // 2, n)).astype(dt)
    b = (rng.uniform(-2, 2, n) * 2.0 ** rng.integers(-span // 2, span // 2, n)).astype(dt)
    with np.errstate(all="ignore"):
        p = (a.astype(np.float64) * b.astype(np.float64)).astype(dt)
        kind = rng.integers(0, 4, n)
        near = -p + rng.integers(-8, 9, n) * np.spacing(np.abs(p))           # a few ulps off -p
        scaled = p * 2.0 ** rng.integers(-30, 30, n)                            # binades away
        wide = rng.normal(size=n) * 2.0 ** rng.integers(-span, span, n)
        c = np.select([kind == 0, kind == 1, kind == 2], [-p, near, scaled], wide).astype(dt)
    triples = list(zip(a.tolist(), b.tolist(), c.tolist()))
    assert _check(vt, triples) > n // 2


@pytest.mark.parametrize("key", [k for k in folding._PYTHON_TERNARY if k[1].is_integral],
                         ids=lambda k: "-".join(getattr(p, "name", p) for p in k))
def test_integer_fma_wraps_as_the_reference(key):
    vt = key[1]
    lo, hi = ops.int_range(vt)
    values = sorted({lo, hi, lo + 1, hi - 1, 0, 1, 2, 3, 7, hi // 3, lo // 5})
    assert _check(vt, [(a, b, c) for a in values for b in values for c in values]) > 100
