"""``fj.rng()`` sampling every array family (nested, matrix, complex, quaternion, dynamic,
tensor), written once for both Dr.Jit 1.5 and frostjit (this module imports neither JIT).

``make_rng_type_data.py`` runs :func:`run` under Dr.Jit in a subprocess and stores the values in
``data/drjit_1_5_rng_types.json``; ``test_generator_types.py`` runs it under frostjit and
compares exactly.
"""
from __future__ import annotations

import numpy as np

#: ``(method, type name, shape)``: two draws each from a generator seeded with 7.
CASES = (
    ("random", "Array33f", (3, 3, 5)), ("random", "Matrix2f", (2, 2, 3)), ("random", "Complex2f", (2, 4)),
    ("random", "ArrayXf", (3, 2)), ("random", "Array1f", (1, 3)), ("normal", "Array33f64", (3, 3, 2)),
    ("normal", "Matrix4f", (4, 4, 2)), ("random", "TensorXf", (2, 3)), ("normal", "TensorXf64", (3, 2, 2)),
    ("random", "Quaternion4f", (4, 3)), ("random", "Array22f", (2, 2, 17)), ("uniform", "Matrix3f64", (3, 3, 7)),
)


def _values(x) -> list:
    a = np.asarray(x)
    if np.iscomplexobj(a):
        return [a.real.tolist(), a.imag.tolist()]
    return a.tolist()


def run(J, T) -> dict:
    """``{"method type": [first draw, second draw, result type name]}`` with ``J`` = ``drjit`` or
    ``frostjit`` and ``T`` its ``llvm`` module."""
    out = {}
    for method, name, shape in CASES:
        g = J.rng(seed=7)
        args = (-2.0, 3.0) if method == "uniform" else ()
        a = getattr(g, method)(getattr(T, name), shape, *args)
        b = getattr(g, method)(getattr(T, name), shape, *args)
        out[f"{method} {name}"] = [_values(a), _values(b), type(a).__name__]
    return out
