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


@pytest.mark.parametrize("symbolic", [True, False])
def test_print_in_a_conditional_shows_the_lanes_dr_jit_shows(symbolic):
    # (r12, side by side with Dr.Jit 1.5: a symbolic branch prints its active lanes, an
    # evaluated branch every lane; Dr.Jit delays the symbolic branch's output to the evaluation)
    out = io.StringIO()

    def t(x):
        fj.print("true {x}", x=x, file=out)
        return x + 1

    def f(x):
        fj.print("false {x}", x=x, file=out)
        return x - 1
    with fj.scoped_set_flag(fj.JitFlag.SymbolicConditionals, symbolic):
        y = fj.if_stmt((Float(1, 2, 3),), Float(1, 2, 3) > 1.5, t, f)
    assert y.numpy().tolist() == [0, 3, 4]
    assert out.getvalue() == ("true [2, 3]\nfalse [1]\n" if symbolic else "true [1, 2, 3]\nfalse [1, 2, 3]\n")


def test_print_in_a_conditional_inside_an_evaluated_loop():
    out = io.StringIO()

    def body(i, x):
        def t(x):
            fj.print("{x}", x=x, file=out)
            return x + 1
        x = fj.if_stmt((x,), x > 2, t, lambda x: x)
        return i + 1, x * 2
    with fj.scoped_set_flag(fj.JitFlag.SymbolicLoops, False):
        _, x = fj.while_loop((Int(0), Float(1, 2, 3)), lambda i, x: i < Int(1, 2, 3), body)
    assert x.numpy().tolist() == [2, 10, 38]
    assert out.getvalue() == "[3]\n[4, 8]\n[18]\n"      # (Dr.Jit 1.5's output)
