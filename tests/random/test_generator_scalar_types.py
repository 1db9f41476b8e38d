"""fj.rng() with frostjit.scalar static types (Dr.Jit's drjit.scalar): 'shape' is the static
shape (no width), the numbers are lane 0's of the JIT types; wrong shapes are ShapeMismatchError
(a RuntimeError, as Dr.Jit's "incompatible" shape and dtype)."""
from __future__ import annotations

import numpy as np
import pytest

import frostjit as fj
import frostjit.llvm as L
import frostjit.scalar as S


@pytest.mark.parametrize("scalar, jit, shape", [(S.Array3f, L.Array3f, 3), (S.Array3f, L.Array3f, (3,)),
                                                (S.ArrayXf, L.ArrayXf, 4), (S.Matrix2f, L.Matrix2f, (2, 2)),
                                                (S.Array3f64, L.Array3f64, 3), (S.Array3f16, L.Array3f16, 3)])
@pytest.mark.parametrize("method", ["random", "normal"])
def test_scalar_static_types_take_their_static_shape_and_lane_zeros_numbers(scalar, jit, shape, method):
    got = getattr(fj.rng(seed=4), method)(scalar, shape)
    assert type(got) is scalar
    dims = shape if isinstance(shape, tuple) else (shape,)
    want = getattr(fj.rng(seed=4), method)(jit, dims + (1,))
    np.testing.assert_array_equal(np.asarray(got._static_numpy()).reshape(-1),
                                  np.asarray(want.numpy()).reshape(-1))


def test_scalar_array3f_matches_drjit():
    # measured with Dr.Jit 1.5: dr.rng().random(drjit.scalar.ArrayXf, 4)
    got = list(fj.rng().random(S.ArrayXf, 4))
    np.testing.assert_allclose(got, [0.310349, 0.30887, 0.0528754, 0.372798], atol=1e-6)


@pytest.mark.parametrize("dtype, shape", [(S.Array3f, 4), (S.Array3f, (3, 1)), (L.Array3f, 3), (L.Float, (2, 3)),
                                          (L.ArrayXf, (2, 3, 4))])
def test_shapes_that_do_not_fit_are_runtime_errors(dtype, shape):
    with pytest.raises(RuntimeError, match="incompatible"):
        fj.rng().random(dtype, shape)
