"""The Python operators refuse the operand types Dr.Jit's refuse.

Dr.Jit 1.5's ``/`` takes floats only, ``//``, ``%`` and shifts integers only, and ``&``, ``|``,
``^`` no floats except ``float_array & mask``: its operators return ``NotImplemented``, so Python
raises ``TypeError: unsupported operand type(s)``.  frostjit computed them (``Int / Int`` was a
``Float``, ``Float & Float`` combined bits), so a program ported from Dr.Jit that expects the
``TypeError`` (its own tests do) failed.  ``frostjit.apply`` and the functions built on it still
compute them (``fj.mean(Int)``).  ``Float & True`` keeps the values (it combined 1.0's bits).
"""
import numpy as np
import pytest

import frostjit as fj
from frostjit import llvm, scalar
from frostjit.array.flat import apply

INT_TYPES = [llvm.Int, llvm.UInt, llvm.Array3i, llvm.ArrayXu, scalar.Array3i, llvm.TensorXi]
FLOAT_TYPES = [llvm.Float, llvm.Float64, llvm.Array3f, llvm.ArrayXf, scalar.Array3f, llvm.TensorXf, llvm.ad.Float]


def _make(cls):
    return cls([1, 2, 3]) if cls.__name__.startswith("Tensor") else cls(1, 2, 3)


@pytest.mark.parametrize("cls", INT_TYPES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_true_division_of_integer_arrays_is_refused(cls):
    a = _make(cls)
    for expr in (lambda: a / a, lambda: a / 2, lambda: 2 / a):
        with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for /"):
            expr()
    assert fj.all(a // a == 1, axis=None) and fj.all(a % 2 == _make(cls) % 2, axis=None)
    assert fj.all(a / 2.0 == fj.float32_array_t(cls)(_make(cls)) / 2, axis=None)   # a float operand: fine


@pytest.mark.parametrize("cls", FLOAT_TYPES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_floor_division_modulo_shifts_and_bit_operators_of_floats_are_refused(cls):
    a = _make(cls)
    cases = [("//", lambda: a // a), ("%", lambda: a % 2), ("&", lambda: a & a), ("|", lambda: a | a),
             ("^", lambda: a ^ a), ("<<", lambda: a << 1), (">>", lambda: a >> 1), ("&", lambda: a & 1)]
    for symbol, expr in cases:
        with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for " + "\\" + symbol[0]):
            expr()


def test_float_and_mask_is_allowed_and_keeps_the_values():
    x = llvm.Float(1.5, 2.5, -3)
    np.testing.assert_array_equal((x & llvm.Bool(True, False, True)).numpy(), [1.5, 0, -3])
    np.testing.assert_array_equal((x & True).numpy(), [1.5, 2.5, -3])
    np.testing.assert_array_equal((x & False).numpy(), [0, 0, 0])
    with pytest.raises(TypeError):
        llvm.Bool(True) & x
    with pytest.raises(TypeError):
        x | llvm.Bool(True, False, True)


def test_integer_shift_by_a_float_is_refused():
    with pytest.raises(TypeError):
        llvm.Int(1, 2) << 1.0
    with pytest.raises(TypeError):
        llvm.Int(1, 2) << llvm.Float(1, 2)
    assert (llvm.Int(1, 2) << 1).numpy().tolist() == [2, 4]


def test_the_functions_still_compute_what_the_operators_refuse():
    assert fj.mean(llvm.Int(1, 2)).numpy().tolist() == [1.5]
    assert fj.mean(llvm.TensorXi([1, 2])).numpy().tolist() == 1.5
    assert apply("mod", llvm.Float(5.5), 2).numpy().tolist() == [1.5]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and_", "or_", "xor",
                                "lshift", "rshift", "lt", "le", "eq", "ne", "gt", "ge"])
def test_an_object_with_only_the_reflected_operator_is_refused_as_in_dr_jit(op):
    # (r12, side by side with Dr.Jit 1.5: its array operators raise for an unknown operand type,
    # they do not return NotImplemented, so Python never calls the object's __r<op>__; only
    # ``@`` defers, to __rmatmul__)
    import operator
    name = op.rstrip("_")
    reflected = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}.get(name, "r" + name)
    R = type("R", (), {f"__{reflected}__": lambda self, other: "reflected"})
    for cls in (llvm.Float, llvm.Int):
        with pytest.raises(RuntimeError):
            getattr(operator, op)(cls(1, 2), R())
    M = type("M", (), {"__rmatmul__": lambda self, other: "rmatmul"})
    assert llvm.Float(1, 2) @ M() == "rmatmul"
