"""Static arrays of size 0-4 of every element type, nested arrays and dynamic arrays:
names, construction, component copies, swizzles, arithmetic against NumPy, printing, PyTrees,
gathers and scatters, AD and frozen functions."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
import frostjit.llvm as T
import frostjit.llvm.ad as AD
from frostjit.array.families import MATRICES, NESTED, NESTED_TYPES, STATIC_SIZES, SUFFIX
from frostjit.trace.dtypes import ALL_TYPES
from type_helpers import WIDTHS, assert_same, check_gradient, random_array

_NAMES = ([f"Array{n}{SUFFIX[vt]}" for vt in ALL_TYPES for n in STATIC_SIZES]
          + [f"ArrayX{SUFFIX[vt]}" for vt in ALL_TYPES]
          + ["Array" + "".join(map(str, s)) + SUFFIX[vt] for vt in NESTED_TYPES for s in NESTED]
          + ["Matrix" + "".join(map(str, s)) + SUFFIX[vt] for vt in (T.Float16._vt, T.Float._vt, T.Float64._vt)
             for s in MATRICES])


@pytest.mark.backend_independent("class lookups and their metadata")
@pytest.mark.parametrize("name", _NAMES)
def test_every_type_of_the_table_is_in_both_modules(name):
    plain, ad = getattr(T, name), getattr(AD, name)
    assert plain.__name__ == name and ad.__name__ == name
    assert (ad is plain) == (not plain._leaf._vt.is_float)      # AD classes exist for float leaves only
    if plain._leaf._vt.is_float:
        assert ad._leaf._is_ad and not plain._leaf._is_ad


def test_components_are_copied_not_shared():
    """``Array3f(f)`` used one Float object for all three components and for ``f``: ``v.x += 1``
    changed v.y, v.z and f; a copy ``Array3f(b)`` shared b's components."""
    f = T.Float(1, 2)
    v = T.Array3f(f)
    v.x += 1
    np.testing.assert_array_equal(v.numpy(), [[2, 3], [1, 2], [1, 2]])
    np.testing.assert_array_equal(f.numpy(), [1, 2])
    b = T.Array3f(1, 2, 3)
    c = T.Array3f(b)
    c.x += 10
    assert b.x[0] == 1 and c.x[0] == 11
    g = T.Float(5)
    v[1] = g
    g += 1
    assert v.y[0] == 5
    # reading a component gives the component itself (Dr.Jit): in-place updates reach the array
    t = v.z
    t *= 4
    assert v.z[0] == 4


def test_swizzles_read_and_assign_components():
    v = T.Array4f(1, 2, 3, 4)
    assert type(v.zyx) is T.Array3f and v.zyx.numpy().ravel().tolist() == [3, 2, 1]
    assert v.xxxx.numpy().ravel().tolist() == [1, 1, 1, 1] and type(v.xy) is T.Array2f
    v.xy = T.Array2f(9, 8)
    v.zw = 5
    assert v.numpy().ravel().tolist() == [9, 8, 5, 5]
    swapped = v.yx                  # a copy: assigning to it leaves v alone
    swapped.x += 100
    assert v.y[0] == 8
    with pytest.raises(AttributeError, match="'z'"):
        T.Array2f(1, 2).z
    for no_swizzles in (T.Matrix2f(1), T.Complex2f(1), T.ArrayXf(1, 2)):
        with pytest.raises(AttributeError):
            no_swizzles.x


_values = st.floats(-100, 100, allow_nan=False, width=32)


@settings(max_examples=20, deadline=None)
@given(a=st.lists(_values, min_size=36, max_size=36), b=st.lists(_values, min_size=36, max_size=36),
       width=st.sampled_from([1, 3]))
def test_nested_arithmetic_matches_numpy_with_broadcasting(a, b, width):
    A = np.repeat(np.array(a, np.float32).reshape(3, 3, 4, 1), width, axis=-1)
    B = np.repeat(np.array(b, np.float32).reshape(3, 3, 4, 1), width, axis=-1)
    x, y = T.Array334f(A), T.Array334f(B)
    assert x.shape == (3, 3, 4, width)
    np.testing.assert_array_equal(x.numpy(), A)
    np.testing.assert_array_equal((x * y + 1).numpy(), A * B + np.float32(1))
    np.testing.assert_array_equal((x - y[0]).numpy(), A - B[0][None])            # an Array34f broadcasts
    np.testing.assert_array_equal((x < y).numpy(), A < B)
    assert type(x < y) is T.Array334b
    np.testing.assert_array_equal(fj.select(x < y, x, y).numpy(), np.where(A < B, A, B))


def test_static_arrays_of_every_size_and_element_type():
    for vt in ALL_TYPES:
        for n in STATIC_SIZES:
            cls = getattr(T, f"Array{n}{SUFFIX[vt]}")
            values = np.arange(n * 3).reshape(n, 3) % 2 if vt.is_bool else np.arange(n * 3).reshape(n, 3)
            x = cls(values.astype(vt.np_dtype))
            assert x.shape == ((n, 3) if n else (0, 0)) and len(x) == n
            np.testing.assert_array_equal(x.numpy(), values.astype(vt.np_dtype).reshape(n, 3) if n else
                                          np.zeros((0, 0), vt.np_dtype))
            if not vt.is_bool and n:
                np.testing.assert_array_equal((x + x).numpy(), (values + values).astype(vt.np_dtype))
    with pytest.raises(TypeError):
        T.Array0f(1)
    with pytest.raises(TypeError):
        T.Array1f([1, 2])


def test_printing_follows_drjit():
    assert repr(T.Array22f([1, 2], [3, 4])) == "[[[1, 2],\n  [3, 4]]]"
    assert repr(T.Array3f(T.Float(1, 2), 3, T.Float(4, 5))) == "[[1, 3, 4],\n [2, 3, 5]]"
    assert repr(T.Array0f()) == "[]" and repr(T.ArrayXf()) == "[]"
    assert repr(T.Array3f(T.Float(1, 2), T.Float(1, 2, 3), 4)) == "[ragged array]"


def test_dynamic_arrays_hold_any_number_of_components():
    x = T.ArrayXf(T.Float(1, 2), T.Float(3, 4), T.Float(5, 6))
    assert x.shape == (3, 2) and len(x) == 3
    assert T.ArrayXf([1, 2, 3]).shape == (3, 1) and T.ArrayXf(T.Float(1, 2, 3)).shape == (1, 3)
    assert T.ArrayXf(np.arange(6.0).reshape(3, 2)).shape == (3, 2)
    np.testing.assert_array_equal((x * 2 + x).numpy(), x.numpy() * 3)
    assert type(x == x) is T.ArrayXb
    with pytest.raises(ValueError, match="3 and 2"):
        x + T.ArrayXf(1, 2)
    assert fj.zeros(T.ArrayXf, (4, 5)).shape == (4, 5) and fj.zeros(T.ArrayXf, 5).shape == (1, 5)
    np.testing.assert_array_equal(fj.sum(x).numpy(), [9, 12])


def test_nested_arrays_are_pytrees_of_their_1d_arrays():
    m = T.Array33f(T.Array3f(1, 2, 3))
    assert len(fj.tree.leaves(m)) == 9
    out = fj.tree.transform({"m": m, "n": [T.Array44f(2)]}, lambda a: a * 10)
    assert type(out["m"]) is T.Array33f and type(out["n"][0]) is T.Array44f
    assert out["m"][2][1][0] == 20
    fj.eval(m)
    fj.make_opaque(m)


def test_gather_and_scatter_of_nested_and_dynamic_types():
    src = T.Float(np.arange(32.0))
    g = fj.gather(T.Array22f, src, T.UInt32(0, 3))
    np.testing.assert_array_equal(g.numpy()[..., 1], [[12, 13], [14, 15]])    # row-major, 4 per index
    from_vec = fj.gather(T.Array22f, g, T.UInt32(1))
    np.testing.assert_array_equal(from_vec.numpy()[..., 0], [[12, 13], [14, 15]])
    target = fj.zeros(T.Float, 8)
    fj.scatter(target, T.Array22f([1, 2], [3, 4]), T.UInt32(1))
    np.testing.assert_array_equal(target.numpy(), [0, 0, 0, 0, 1, 2, 3, 4])
    with pytest.raises(TypeError, match="no static size"):
        fj.gather(T.ArrayXf, src, T.UInt32(0))


@pytest.mark.parametrize("width", WIDTHS)
def test_frozen_functions_on_nested_and_dynamic_arrays_equal_plain_calls(width):
    def f(a, x):
        return a @ a + 1, (a < 0.5) | (a > 1.5), x * 2 - x[0]

    frozen = fj.freeze(f)
    rng = np.random.default_rng(width)
    for n in (width, width + 1):
        a = random_array(T.Array44f, n, rng)
        x = T.ArrayXf(*[T.Float(rng.standard_normal(n).astype(np.float32)) for _ in range(3)])
        got, want = frozen(a, x), f(a, x)
        assert [type(v) for v in got] == [type(v) for v in want]
        assert_same(got, want)


def test_gradients_flow_through_nested_arrays():
    rng = np.random.default_rng(8)
    a = random_array(AD.Array33f64, 4, rng)
    b = random_array(AD.Array3f64, 4, rng)
    check_gradient(lambda x, y: (x * y + x) @ y, (a, b))
    check_gradient(lambda x: fj.norm(x.xyz) * x.wz, (random_array(AD.Array4f64, 4, rng),))
