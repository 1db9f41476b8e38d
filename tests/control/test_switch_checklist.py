"""``fj.switch`` against the behaviours of Dr.Jit 1.5's own switch tests (its messages, a fully
masked call, empty arguments), in both modes."""
from __future__ import annotations

import pytest

import frostjit as fj
from frostjit.control.errors import StateTypeError, StateValueError
from frostjit.llvm import ArrayXf, ArrayXu, Bool, Float, Int32, UInt32

MODES = ["symbolic", "evaluated"]


@pytest.mark.parametrize("mode", MODES)
def test_inconsistent_results_are_named_with_drjits_words(mode):
    idx, a = UInt32(0, 0, 1, 1), UInt32(1, 2, 3, 4)
    with pytest.raises(StateTypeError, match=r"inconsistent dictionary keys for field 'result' \(\['b'\] and \['a'\]\)"):
        fj.switch(idx, (lambda a: dict(a=a), lambda a: dict(b=a)), a, mode=mode)
    with pytest.raises(StateTypeError, match=r"inconsistent sizes for field 'result' \(3 and 2\)"):
        fj.switch(idx, (lambda a: ArrayXu(a, a), lambda a: ArrayXu(a, a, a)), a, mode=mode)
    with pytest.raises(StateTypeError, match="inconsistent types"):
        fj.switch(idx, (lambda a: ArrayXu(a, a), lambda a: ArrayXf(a, a)), a, mode=mode)
    with pytest.raises(StateValueError, match="field 'result' is uninitialized"):
        fj.switch(idx, [lambda a: Float(a), lambda a: Float()], a, mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_an_empty_argument_is_a_size_error(mode):
    with pytest.raises(StateValueError, match=r"some of the call arguments have incompatible sizes \(encountered "
                                              r"arrays of length 4 and 0\)"):
        fj.switch(UInt32(0, 0, 1, 1), [lambda a: a, lambda a: a * 2], Float(), mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_fully_masked_call_runs_no_side_effect(mode):
    seen = Int32(0, 1, 2, 3)

    def target(k):
        def f(a, b, active):
            fj.scatter_reduce(fj.ReduceOp.Add, seen, b * k, UInt32([0]))
            return a * 4, b
        return f
    r = fj.switch(UInt32(0, 0, 1, 1), [target(1), target(2)], Int32(1, 2, 3, 4), Int32(1), Bool(False), mode=mode)
    assert [x.numpy().tolist() for x in r] == [[0, 0, 0, 0], [0, 0, 0, 0]]
    assert seen.numpy().tolist() == [0, 1, 2, 3]
