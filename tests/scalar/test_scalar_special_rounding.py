"""The scalar backend's complex ``abs``, quaternion ``abs`` and ``quat_to_euler`` in the element
type, as Dr.Jit 1.5's scalar backend computes them (session r16, found by probing beside
Dr.Jit's ``test_quaternion.py``).

frostjit combines a scalar array's components in double precision.  ``abs`` returned that
double (``abs(Complex2f(1, 2))`` was sqrt(5), Dr.Jit's is the float32 2.2360680103302), and
``quat_to_euler`` decided gimbal lock on the double ``sin(pitch)``: for the quaternion of a 90
degree pitch with float32 components it gave pi/2 where Dr.Jit (and frostjit.llvm) give
asin(0.99999994) = 1.57045.  Recorded values are Dr.Jit 1.5.0's (run side by side); the
differential ones are frostjit.llvm at width 1 (computing in float32 throughout).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as S

# (expression, Dr.Jit 1.5.0's scalar result), recorded side by side
RECORDED = [
    (lambda: fj.abs(S.Complex2f(1, 2)), 2.2360680103302),
    (lambda: abs(S.Quaternion4f(1, 2, 3, 4)), 5.4772257804870605),
    (lambda: fj.abs(S.Quaternion4f16(1, 3, 5, 7)), 9.1640625),
    (lambda: fj.abs(S.Complex2f64(1, 2)), math.sqrt(5)),
    (lambda: fj.quat_to_euler(S.Quaternion4f(0, 0.7071067811865476, 0, 0.7071067811865476))[0], 0.0),
]


@pytest.mark.parametrize("k", range(len(RECORDED)))
def test_recorded_drjit_values(k):
    f, want = RECORDED[k]
    got = f()
    assert type(got) is float and got == want


def test_pitch_near_gimbal_lock_is_drjits():
    # Dr.Jit 1.5.0: [0, 1.5704511404037476, 0]; frostjit's scalar asin is correctly rounded,
    # Dr.Jit's a polynomial (one float32 ulp apart, docs/types.md): within 2 ulp
    e = fj.quat_to_euler(S.Quaternion4f(0, 0.7071067811865476, 0, 0.7071067811865476))
    assert e[0] == 0 and e[2] == 0
    assert abs(e[1] - 1.5704511404037476) <= 2.4e-7


# Multiples of 1/64 below 16 in magnitude: their squares and the sums of up to four of them are
# exact in float32, so both backends take the correctly rounded sqrt of one exact number and
# must agree bit for bit.
_EXACT = st.integers(-1000, 1000).map(lambda i: i / 64)


def _is_float32(x: float) -> bool:
    return float(np.float32(x)) == x


@given(_EXACT, _EXACT)
def test_complex_abs_matches_llvm(re, im):
    got = fj.abs(S.Complex2f(re, im))
    assert type(got) is float and _is_float32(got)
    assert got == fj.abs(L.Complex2f(re, im))[0]


@given(_EXACT, _EXACT, _EXACT, _EXACT)
def test_quaternion_abs_matches_llvm(x, y, z, w):
    got = abs(S.Quaternion4f(x, y, z, w))
    assert type(got) is float and _is_float32(got)
    assert got == abs(L.Quaternion4f(x, y, z, w))[0]


@given(st.one_of(st.floats(0, 1e-3), st.floats(0, 0.07)))
def test_quat_to_euler_near_lock_matches_llvm(d):
    # pure pitch rotations near +90 degrees, float32 components: sin(pitch) = 2 w y is one
    # rounding of an exact product on both backends, so both take the same lock decision
    pitch = math.pi / 2 - d
    s, c = math.sin(pitch / 2), math.cos(pitch / 2)
    es = fj.quat_to_euler(S.Quaternion4f(0, s, 0, c))
    el = fj.quat_to_euler(L.Quaternion4f(0, s, 0, c))
    # (the backends' asin are a few float32 ulp apart at most; a different lock decision
    # would differ by >= 3.4e-4)
    assert abs(es[1] - el[1][0]) <= 1e-6
