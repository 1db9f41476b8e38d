"""Dr.Jit's error cases of while_loop/if_stmt/switch, with its messages (checked side by side with
Dr.Jit 1.5: the text up to "Please review" is Dr.Jit's, with fj. for dr./drjit.)."""
from __future__ import annotations

import pytest

import frostjit as fj
from frostjit.control import (ControlFlowArgumentError, ControlFlowArgumentTypeError, StateTypeError,
                              StateValueError)
from frostjit.llvm import Bool, Float, UInt32

EV = {"mode": "evaluated"}


def _wl(state, cond, body, **kw):
    return fj.while_loop(state, cond, body, **{**EV, **kw})


CASES = [
    ("type change", StateTypeError,
     "the type of state variable 'state[0]' changed from 'frostjit.llvm.UInt' to 'frostjit.llvm.Float', "
     "which is not permitted",
     lambda: _wl((UInt32(0),), lambda i: i < 3, lambda i: (Float(i + 1),))),
    ("size change", StateValueError,
     "the size of state variable 'state[0]' of type 'frostjit.llvm.UInt' changed from 3 to 4. These sizes "
     "aren't compatible",
     lambda: _wl((UInt32(0, 1, 2),), lambda i: i < 3, lambda i: (UInt32(1, 2, 3, 4),))),
    ("structure change", StateTypeError,
     "the size of state variable 'state[0]' of type 'tuple' changed from 2 to 3",
     lambda: _wl(((UInt32(0), UInt32(0)),), lambda i: i[0] < 3, lambda i: ((i[0] + 1, i[1], i[1]),))),
    ("dict keys change", StateTypeError, "the keys of state variable 'state[0]' of type 'dict' changed",
     lambda: _wl(({"a": UInt32(0)},), lambda d: d["a"] < 3, lambda d: ({"b": d["a"] + 1},))),
    ("strict", StateValueError,
     "the non-array state variable 'state[1]' of type 'int' changed from '1' to '2'. You can annotate the "
     "loop/conditional with strict=False",
     lambda: _wl((UInt32(0), 1), lambda i, k: i < 3, lambda i, k: (i + 1, k + 1))),
    ("labels name the variable", StateTypeError, "state variable 'k' changed",
     lambda: _wl((UInt32(0), UInt32(0)), lambda i, k: i < 3, lambda i, k: (i + 1, Float(k)), labels=("i", "k"))),
    ("labels of wrong length", StateValueError,
     "the variable state and labels have an inconsistent size (2 vs 1)",
     lambda: _wl((UInt32(0), UInt32(0)), lambda i, k: i < 3, lambda i, k: (i + 1, k), labels=("i",))),
    ("bad mode", ControlFlowArgumentError, "invalid 'mode' argument",
     lambda: fj.while_loop((UInt32(0),), lambda i: i < 3, lambda i: (i + 1,), mode="foo")),
    ("bad condition", StateTypeError,
     "the type of the loop condition ('frostjit.llvm.UInt') is not supported",
     lambda: fj.while_loop((UInt32(0),), lambda i: i + 3, lambda i: (i + 1,))),
    ("body returns no tuple", StateTypeError, "the 'body' function must return a tuple",
     lambda: _wl((UInt32(0),), lambda i: i < 3, lambda i: i + 1)),
    ("body returns wrong length", StateTypeError, "the 'body' function returned a tuple with an inconsistent size",
     lambda: _wl((UInt32(0),), lambda i: i < 3, lambda i: (i + 1, i))),
    ("state not a tuple", ControlFlowArgumentTypeError, "'state' must be a tuple",
     lambda: fj.while_loop([UInt32(0)], lambda i: i < 3, lambda i: (i + 1,))),
    ("if: type mismatch", StateTypeError,
     "fj.if_stmt(): the type of state variable 'rv' changed from 'frostjit.llvm.UInt' to 'frostjit.llvm.Float'",
     lambda: fj.if_stmt((UInt32(1, 2),), Bool(True, False), lambda x: x, lambda x: Float(x), **EV)),
    ("if: structure mismatch", StateTypeError, "the size of state variable 'rv' of type 'tuple' changed from 2 to 1",
     lambda: fj.if_stmt((UInt32(1, 2),), Bool(True, False), lambda x: (x, x), lambda x: (x,), **EV)),
    ("if: rv_labels", StateTypeError, "state variable 'b' changed",
     lambda: fj.if_stmt((UInt32(1, 2),), Bool(True, False), lambda x: (x, x), lambda x: (x, Float(x)),
                        rv_labels=("a", "b"), **EV)),
    ("if: strict", StateValueError, "the non-array state variable 'rv[1]' of type 'int' changed from '1' to '2'",
     lambda: fj.if_stmt((UInt32(1, 2),), Bool(True, False), lambda x: (x, 1), lambda x: (x, 2), **EV)),
    ("if: bad cond", StateTypeError, "the type of 'cond' ('frostjit.llvm.UInt') is not supported",
     lambda: fj.if_stmt((UInt32(1, 2),), UInt32(1, 0), lambda x: x, lambda x: x)),
    ("if: size mismatch", StateValueError,
     "the size of state variable 'rv' of type 'frostjit.llvm.UInt' changed from 3 to 2",
     lambda: fj.if_stmt((UInt32(1, 2),), Bool(True, False), lambda x: UInt32(1, 2, 3), lambda x: x, **EV)),
    ("if: bad mode", ControlFlowArgumentError, "invalid 'mode' argument",
     lambda: fj.if_stmt((UInt32(1, 2),), Bool(True), lambda x: x, lambda x: x, mode="x")),
    ("if: args not a tuple", ControlFlowArgumentTypeError, "'args' must be a tuple",
     lambda: fj.if_stmt([UInt32(1, 2)], Bool(True, False), lambda x: x, lambda x: x)),
    ("switch: bad mode", ControlFlowArgumentError, "invalid 'mode' argument 'scalar'",
     lambda: fj.switch(UInt32(0), [lambda x: x], UInt32(1), mode="scalar")),
    ("switch: signed index", ControlFlowArgumentTypeError, "'index' must be a Python int or a UInt32 array",
     lambda: fj.switch(fj.llvm.Int(0, 1), [lambda x: x, lambda x: x], UInt32(1, 2))),
    ("switch: no targets", ControlFlowArgumentError, "'targets' is empty",
     lambda: fj.switch(UInt32(0, 1), [], UInt32(1, 2))),
    ("switch: structure mismatch", StateTypeError, "state variable 'result' changed",
     lambda: fj.switch(UInt32(0, 1), [lambda x: x, lambda x: (x, x)], UInt32(1, 2))),
    ("switch: Python value mismatch", StateValueError, "'result[1]' of type 'int' changed",
     lambda: fj.switch(UInt32(0, 1), [lambda x: (x, 1), lambda x: (x, 2)], UInt32(1, 2))),
]


@pytest.mark.parametrize("name, exc, text, run", CASES, ids=[c[0] for c in CASES])
def test_contract_violation_raises_dr_jits_error(name, exc, text, run):
    with pytest.raises(exc) as info:
        run()
    assert text in str(info.value)
    assert isinstance(info.value, RuntimeError)      # Dr.Jit raises RuntimeError for all of these


def test_state_size_one_may_widen():
    i, x = fj.while_loop((UInt32(0), Float(0, 1, 2)), lambda i, x: i < 3, lambda i, x: (i + 1, x), **EV)
    assert i.numpy().tolist() == [3]


# -- exceptions raised by the user's functions (Dr.Jit 1.5: RuntimeError, original as __cause__) --

def _raise(*args):
    raise ValueError("oh no")


@pytest.mark.parametrize("mode", ["symbolic", "evaluated", None])
@pytest.mark.parametrize("where", ["cond", "body", "true_fn", "target"])
def test_an_exception_of_a_users_function_is_a_runtime_error_caused_by_it(mode, where):
    i = UInt32(5, 6)
    with pytest.raises(RuntimeError) as info:
        if where == "cond":
            fj.while_loop((i,), _raise, lambda i: (i + 1,), mode=mode)
        elif where == "body":
            fj.while_loop((i,), lambda i: i < 10, _raise, mode=mode)
        elif where == "true_fn":
            fj.if_stmt((i,), Bool(True, False), _raise, lambda i: i, mode=mode)
        else:
            fj.switch(UInt32(0, 1), [_raise, lambda i: i], i, mode=mode)
    err = info.value
    assert isinstance(err.__cause__, ValueError) and "oh no" in str(err.__cause__)
    assert isinstance(err, ValueError) and "oh no" in str(err)      # frostjit: still the original's class


def test_scalar_modes_wrap_too():
    # Dr.Jit 1.5: the same RuntimeError in scalar mode (a Python condition / index)
    for call in (lambda: fj.while_loop((5,), lambda i: i < 10, _raise),
                 lambda: fj.if_stmt((5,), True, _raise, _raise),
                 lambda: fj.switch(0, [_raise], 5)):
        with pytest.raises(RuntimeError) as info:
            call()
        assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
def test_incompatible_and_uninitialized_state_name_the_variable(mode):
    with pytest.raises(RuntimeError, match="this operation processes arrays of size 3, while state variable 'j' "
                                           "has an incompatible size 2"):
        fj.while_loop((UInt32(5, 6, 7), UInt32(2, 7)), lambda i, j: i < 10, lambda i, j: (i + 1, j + 1),
                      labels=("i", "j"), mode=mode)
    with pytest.raises(RuntimeError, match="state variable 'j' of type .* is uninitialized"):
        fj.while_loop((UInt32(5, 6, 7), UInt32()), lambda i, j: i < 10, lambda i, j: (i + 1, j + 1),
                      labels=("i", "j"), mode=mode)
