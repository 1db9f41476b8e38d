"""Porting: programs written for frostjit.llvm run on frostjit.scalar by changing the import.

Each program below is source text importing from ``frostjit.llvm``; the test runs it as it is
and with ``frostjit.llvm`` replaced by ``frostjit.scalar`` (nothing else changed), and compares
the ``result`` each computes (the LLVM run at width 1).  The scalar run must not trace: no
kernel is launched.
"""
from __future__ import annotations

import numpy as np
import pytest

import frostjit as fj

RAY_SPHERE = '''
import frostjit as fj
from frostjit.llvm import Array3f, Float

def intersect(o, d, center, radius):
    oc = o - center
    b = fj.dot(oc, d)
    c = fj.squared_norm(oc) - radius * radius
    disc = b * b - c
    hit = disc >= 0
    return hit, fj.select(hit, -b - fj.safe_sqrt(disc), fj.inf)

def shade(o, d):
    hit, t = intersect(o, d, Array3f(0, 0, 5), Float(1.0))
    p = fj.fma(d, t, o)
    n = fj.normalize(p - Array3f(0, 0, 5))
    light = fj.normalize(Array3f(1, 1, -1))
    return fj.select(hit, fj.maximum(fj.dot(n, light), 0.0), 0.0)

result = [shade(Array3f(0, 0, 0), fj.normalize(Array3f(x, y, 1)))
          for x, y in ((0, 0), (0.1, 0.05), (-0.15, 0.1), (0.3, 0.3))]
'''

TRANSFORMS = '''
import frostjit as fj
from frostjit.llvm import Array3f, Array4f, Matrix4f, Quaternion4f

q = fj.rotate(Quaternion4f, fj.normalize(Array3f(1, 2, 3)), 0.75)
m = fj.quat_to_matrix(Matrix4f, q)
m[0][3] = 2.5                       # a translation
p = m @ Array4f(1, -2, 0.5, 1)
back = fj.rcp(m) @ p
euler = fj.quat_to_euler(q)
q2 = fj.euler_to_quat(euler)
halfway = fj.slerp(Quaternion4f(0, 0, 0, 1), q, 0.5)
result = [p, back, euler, q2, halfway, fj.det(m), fj.matrix_to_quat(m)]
'''

MANDELBROT = '''
import frostjit as fj
from frostjit.llvm import Complex2f, UInt32

def escape_count(c, n=40):
    z = Complex2f(0, 0)
    count = UInt32(0)
    for _ in range(n):
        inside = fj.abs(z) < 2
        count = fj.select(inside, count + 1, count)
        z = fj.select(inside, z * z + c, z)
    return count

result = [escape_count(Complex2f(x, y)) for x, y in ((0, 0), (-0.75, 0.1), (0.3, 0.5), (1, 1), (-1.5, 0))]
'''

GRAM_SCHMIDT = '''
import frostjit as fj
from frostjit.llvm import Array3f, Matrix3f

def frame(n):
    # Duff et al.'s orthonormal basis around the unit vector n
    sign = fj.sign(n.z)
    a = -1 / (sign + n.z)
    b = n.x * n.y * a
    s = Array3f(fj.fma(sign * n.x * n.x, a, 1), sign * b, -sign * n.x)
    t = Array3f(b, fj.fma(n.y * n.y, a, sign), -n.y)
    return Matrix3f(s, t, n)

m = frame(fj.normalize(Array3f(0.3, -0.4, 0.8)))
result = [m, m @ m.T, fj.frob(m), fj.sum(fj.abs(fj.cross(m[0], m[1]) - m[2]))]
'''

PROGRAMS = {"ray_sphere": RAY_SPHERE, "transforms": TRANSFORMS, "mandelbrot": MANDELBROT,
            "gram_schmidt": GRAM_SCHMIDT}


def _run(source: str):
    ns: dict = {}
    exec(compile(source, "<program>", "exec"), ns)
    return ns["result"]


def _values(x) -> np.ndarray:
    a = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_llvm_program_runs_on_scalar_by_changing_the_import(name):
    source = PROGRAMS[name]
    # The programs compute on literals, which fold while tracing (as in Dr.Jit): without
    # constant propagation, kernels compute the LLVM results the scalar ones are compared with.
    with fj.scoped_set_flag(fj.JitFlag.ConstantPropagation, False):
        on_llvm = _run(source)
    fj.kernel_history_clear()
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        on_scalar = _run(source.replace("frostjit.llvm", "frostjit.scalar"))
        repr(on_scalar)
        assert fj.kernel_history() == [], "the scalar backend traced and launched kernels"
        repr(on_llvm)                   # (the same reading launches kernels on frostjit.llvm)
        assert fj.kernel_history() != []
    assert len(on_scalar) == len(on_llvm)
    for s, l in zip(on_scalar, on_llvm):
        assert not fj.is_jit_v(s)
        a, b = _values(s), _values(l)
        b = b.reshape(b.shape[:-1]) if b.ndim > a.ndim else b       # (the LLVM run's one lane)
        assert a.shape == b.shape
        assert np.allclose(a, b, rtol=2e-6, atol=2e-6), (name, a, b)
