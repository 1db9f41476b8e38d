"""Reading entry ``k`` of an array with one entry gives that entry for any ``k`` (Dr.Jit 1.5
broadcasts size 1: ``Float(7)[3]`` is 7, ``dr.zeros(ArrayXf)[1]`` is the one ``Float``; its
test_init test09 reads ``v[1]`` of ``dr.zeros(ArrayXf)``). Writes still check the bounds.
Differential: the read equals entry 0 read by index 0, for flat, dynamic, static and nested
arrays of both backends; arrays of two entries or more still raise."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit import llvm, scalar

ONE = [lambda: llvm.Float(7), lambda: llvm.ad.Float(2.5), lambda: llvm.Bool(True), lambda: llvm.UInt(3),
       lambda: scalar.ArrayXf(7), lambda: llvm.Array1f(4), lambda: scalar.Array1f(4),
       lambda: llvm.ArrayXf(llvm.Float(1, 2)), lambda: fj.zeros(llvm.ArrayXf, 100),
       lambda: fj.zeros(llvm.ArrayXf, (1, 4))]


def _value(x):
    return x.numpy().tolist() if hasattr(x, "numpy") else x


@pytest.mark.parametrize("make", ONE)
@given(k=st.integers(-50, 50))
def test_any_index_of_a_size1_array_reads_its_entry(make, k):
    v = make()
    assert len(v) == 1
    assert _value(v[k]) == _value(v[0])
    if k not in (0, -1):
        with pytest.raises(IndexError, match="out of bounds"):
            v[k] = v[0]


@pytest.mark.parametrize("make", [lambda: llvm.Float(7, 8), lambda: llvm.Array3f(1, 2, 3),
                                  lambda: llvm.ArrayXf(llvm.Float(1, 2), llvm.Float(3, 4)),
                                  lambda: scalar.ArrayXf(1, 2)])
def test_larger_arrays_still_check_the_bounds(make):
    v = make()
    with pytest.raises(IndexError, match="out of bounds"):
        v[len(v) + 1]
    assert np.all(np.asarray(_value(v[-1])) == np.asarray(_value(v[len(v) - 1])))
