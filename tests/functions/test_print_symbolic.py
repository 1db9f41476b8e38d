"""``fj.print`` / ``fj.assert_true`` of a symbolic loop's variables: frostjit has no delayed
(in-kernel) output yet, so they raise ``LoopVariableError`` naming the function and the
evaluated-mode workaround, instead of the generic "evaluated outside the loop" message that the
session-r10 sweep of Dr.Jit's documented examples (control-flow and debugging guides) hit.
Evaluated loops print every iteration, as Dr.Jit's."""
import io

import pytest

import frostjit as fj
from frostjit.llvm import Float, Int
from frostjit.schedule.loops import LoopVariableError


def _loop(x, n, out, check=False):
    @fj.syntax
    def f(x, n):
        i = Int(0)
        while i < n:
            x = x * 2
            i += 1
            if check:
                fj.assert_true(x < 10, "x too large: {}", x)
            else:
                fj.print("x={x}", x=x, file=out)
        return x
    return f(x, n)


def test_symbolic_print_names_the_limitation():
    with pytest.raises(LoopVariableError, match=r"print\(\).*SymbolicLoops, False"):
        _loop(Float(1, 2), Int(1, 2), io.StringIO())


def test_evaluated_loop_prints_each_iteration():
    out = io.StringIO()
    with fj.scoped_set_flag(fj.JitFlag.SymbolicLoops, False):
        r = _loop(Float(1, 2), Int(1, 2), out)
    assert r.numpy().tolist() == [2, 8]
    assert out.getvalue() == "x=[2, 4]\nx=[4, 8]\n"      # all lanes, as Dr.Jit's evaluated loops


def test_symbolic_assert_only_in_debug_mode():
    assert _loop(Float(1, 2, 3), Int(0, 1, 5), None, check=True).numpy().tolist() == [1, 4, 96]
    with fj.scoped_set_flag(fj.JitFlag.Debug, True):
        with pytest.raises(LoopVariableError, match=r"assert_true\(\)"):
            _loop(Float(1, 2, 3), Int(0, 1, 5), None, check=True)
        with fj.scoped_set_flag(fj.JitFlag.SymbolicLoops, False):
            with pytest.raises(AssertionError, match="x too large"):
                _loop(Float(1, 2, 3), Int(0, 1, 5), None, check=True)


def test_print_of_values_from_outside_the_loop_still_works():
    out = io.StringIO()
    y = Float(5, 6)

    @fj.syntax
    def f(x):
        i = Int(0)
        while i < 2:
            fj.print("{} {}", y, "const", file=out)
            x += 1
            i += 1
        return x
    assert f(Float(0, 1)).numpy().tolist() == [2, 3]
    assert out.getvalue() == "[5, 6] const\n"
