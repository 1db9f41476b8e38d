"""A static vector's class agrees with its components: results built component by component take
the vector type of the components (an AD component makes an AD vector, as Dr.Jit's arithmetic does)."""
import pytest

import frostjit as fj
from frostjit.llvm import Array3f as PlainArray3f, Float as PlainFloat, UInt32
from frostjit.llvm.ad import Array3f, Float


@pytest.mark.parametrize("make", [
    lambda: fj.gather(PlainArray3f, Array3f([1, 2], [3, 4], [5, 6]), UInt32(0)),
    lambda: fj.gather(PlainArray3f, Float(1, 2, 3, 4, 5, 6), UInt32(1)),
    lambda: fj.unravel(PlainArray3f, Float(1, 2, 3, 4, 5, 6)),
    lambda: fj.cross(PlainArray3f(1, 2, 3), Array3f(4, 5, 6)),
    lambda: fj.detach({"v": Array3f(1, 2, 3)}, preserve_type=False)["v"],
])
def test_static_vector_class_matches_its_components(make):
    """Regression: these gave a plain Array3f holding AD Floats (or an AD one holding plain Floats),
    so enable_grad/detach/isinstance checks on the vector disagreed with its components."""
    v = make()
    assert all(type(c) is type(v)._elem for c in v)


def test_gather_of_a_plain_vector_type_from_an_ad_source_is_differentiable():
    src = Float(1, 2, 3, 4, 5, 6)
    fj.enable_grad(src)
    v = fj.gather(PlainArray3f, src, UInt32(1))
    assert type(v) is Array3f
    fj.backward(fj.sum(v.x + v.z * 2))
    assert fj.grad(src).numpy().tolist() == [0, 0, 0, 1, 0, 2]


def test_vectors_of_matching_components_keep_their_type():
    assert type(fj.gather(PlainArray3f, PlainFloat(1, 2, 3), UInt32(0))) is PlainArray3f
