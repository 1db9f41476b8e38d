"""An exception raised by an ``@fj.func`` body is wrapped as Dr.Jit 1.5 wraps it (checked side by
side: a ``RuntimeError`` whose ``__cause__`` is the original), and stays catchable by its class,
as those of ``while_loop``/``if_stmt``/``switch`` bodies (control/errors.py)."""
from __future__ import annotations

import pytest

import frostjit as fj
from frostjit.control.errors import BodyError, StateValueError
from frostjit.llvm import Float, UInt32


@pytest.mark.parametrize("exc", [ValueError, TypeError, KeyError, ZeroDivisionError])
def test_an_exception_in_a_func_body_is_a_runtime_error_caused_by_it(exc):
    @fj.func
    def f(x):
        raise exc("in the body")
    with pytest.raises(RuntimeError) as info:
        f(Float(1, 2))
    err = info.value
    assert isinstance(err, BodyError) and isinstance(err, exc)
    assert type(err.__cause__) is exc and "fj.func(): encountered an exception" in str(err)


def test_a_func_body_error_inside_a_switch_target_is_not_wrapped_twice():
    @fj.func
    def f(x):
        raise ValueError("deep")
    with pytest.raises(ValueError) as info:
        fj.switch(UInt32(0, 1), [lambda x: x, f], Float(1, 2), mode="symbolic")
    assert "fj.func()" in str(info.value) and type(info.value.__cause__) is ValueError


def test_frostjits_own_contract_errors_are_not_wrapped():
    @fj.func
    def f(x, y):
        return x + y
    with pytest.raises(StateValueError, match="incompatible"):
        f(Float(1, 2), Float(1, 2, 3))
