"""An evaluated ``fj.while_loop`` whose condition or state is a variable of an enclosing symbolic
loop raises Dr.Jit's error ("... cannot execute a loop in *evaluated mode*", the cause of the
``RuntimeError`` the outer loop raises); the other three nestings compute NumPy's values.

Found in session r15 by Dr.Jit's ``test_while_loop.py`` (022d0b90, test15/test16): frostjit
raised a ``LoopVariableError`` about a variable "evaluated or used outside the loop" when the
inner loop tried to evaluate its state, with no cause and none of Dr.Jit's wording.
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import UInt32

N = 17


def _nested(mode1, mode2):
    n = fj.arange(UInt32, N)

    def inner(i, accum):
        _, accum = fj.while_loop((UInt32(0), accum), lambda j, a: j < i,
                                 lambda j, a: (j + 1, a + 1), mode=mode2)
        return i + 1, accum

    _, accum = fj.while_loop((UInt32(0), UInt32(0)), lambda i, a: i < n, inner, mode=mode1)
    return accum


@pytest.mark.parametrize("mode1, mode2", [("evaluated", "evaluated"), ("evaluated", "symbolic"),
                                          ("symbolic", "symbolic")])
def test_allowed_nestings_count_the_inner_iterations(mode1, mode2):
    k = np.arange(N)
    assert np.array_equal(_nested(mode1, mode2).numpy(), k * (k - 1) // 2)


@pytest.mark.parametrize("compress", [False, True])
def test_an_evaluated_loop_inside_a_symbolic_one_raises_dr_jits_error(compress):
    with pytest.raises(RuntimeError) as e, fj.scoped_set_flag(fj.JitFlag.CompressLoops, compress):
        _nested("symbolic", "evaluated")
    assert "cannot execute a loop in *evaluated mode*" in str(e.value.__cause__)

