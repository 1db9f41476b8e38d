"""A plain static array of the right size stands for a complex number (Array2f) or a quaternion
(Array4f) in their arithmetic, as in Dr.Jit 1.5 (answers recorded side by side); other sizes raise."""
import pytest

from frostjit.llvm import Array2f, Array3f, Array4f, Complex2f, Quaternion4f


def test_array2f_combines_as_a_complex_number_in_either_order():
    for r in (Complex2f(1, 2) * Array2f(3, 4), Array2f(3, 4) * Complex2f(1, 2)):
        assert type(r) is Complex2f and str(r) == "[-5+10j]"
    assert str(Complex2f(1, 2) + Array2f(3, 4)) == "[4+6j]"


def test_array4f_combines_as_a_quaternion_in_either_order():
    assert str(Quaternion4f(1, 2, 3, 4) * Array4f(1, 0, 0, 0)) == "[4i+3j-2k-1]"
    assert str(Array4f(1, 0, 0, 0) * Quaternion4f(1, 2, 3, 4)) == "[4i-3j+2k-1]"
    assert str(Quaternion4f(1, 2, 3, 4) + Array4f(1, 0, 0, 0)) == "[2i+2j+3k+4]"
    assert str(Quaternion4f(1, 2, 3, 4) * 2) == "[2i+4j+6k+8]"


def test_other_sizes_raise():
    with pytest.raises(TypeError, match="cannot combine a complex number with a Array3f"):
        Complex2f(1, 2) * Array3f(1, 2, 3)
