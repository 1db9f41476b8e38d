"""Conversion and promotion (plum's ``convert``, ``add_conversion_method``, ``promote``, return
type conversion), written from plum's documentation and cross-checked against plum in a
subprocess. Each program uses fresh classes, since conversion rules are global."""

import pytest

from plum_reference import Case, run_here

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")

CASES = {
    "convert_defaults": Case(
        """
        import numbers
        from LIB import convert
        for e in ["convert(1, int)", "convert(1, float)", "convert(1, numbers.Number)", "convert(True, int)",
                  "convert([1, 2], tuple)", "convert((1, 2), list)", "convert(b'ab', str)", "convert('ab', bytes)",
                  "convert(1, object)", "convert(1, tuple)", "convert({1: 2}, list)", "convert(1, int | str)",
                  "convert('1', int | float)", "convert((1, 2), tuple)", "convert([3], list)"]:
            try:
                print(e, repr(eval(e)))
            except TypeError as ex:
                print(e, "TypeError:", ex)
        """,
        """
        convert(1, int) 1
        convert(1, float) TypeError: Cannot convert `1` to `float`.
        convert(1, numbers.Number) 1
        convert(True, int) True
        convert([1, 2], tuple) (1, 2)
        convert((1, 2), list) [1, 2]
        convert(b'ab', str) 'ab'
        convert('ab', bytes) TypeError: Cannot convert `ab` to `bytes`.
        convert(1, object) 1
        convert(1, tuple) (1,)
        convert({1: 2}, list) [{1: 2}]
        convert(1, int | str) 1
        convert('1', int | float) TypeError: Cannot convert `1` to `int | float`.
        convert((1, 2), tuple) (1, 2)
        convert([3], list) [3]
        """),
    "conversion_method_applies_to_subtypes_and_covered_targets": Case(
        """
        from numbers import Number, Real
        from operator import truediv
        from LIB import convert, conversion_method
        class Rational:
            def __init__(self, num, denom):
                self.num, self.denom = num, denom
        class Half(Rational): pass
        @conversion_method(type_from=Rational, type_to=Number)
        def rational_to_number(q):
            return truediv(q.num, q.denom)
        print(callable(rational_to_number))
        print(convert(Rational(1, 2), Number), convert(Rational(1, 2), Real), convert(Half(1, 4), Number))
        print(type(convert(Rational(1, 2), object)).__name__)
        """,
        """
        True
        0.5 0.5 0.25
        Rational
        """),
    "return_values_are_converted_to_the_annotation": Case(
        """
        from typing import Union
        from LIB import Dispatcher, add_conversion_method
        d = Dispatcher()
        class Celsius:
            def __init__(self, v): self.v = v
        class Kelvin:
            def __init__(self, v): self.v = v
        @d
        def f(x: Union[int, str]) -> int:
            return x
        @d
        def to_k(x: Celsius) -> Kelvin:
            return x
        @d
        def as_tuple(x) -> tuple:
            return x
        for call in ["f(1)", "f('1')", "to_k(Celsius(1))", "as_tuple([1, 2])", "as_tuple((3,))", "as_tuple(5)"]:
            try:
                r = eval(call)
                print(call, r.v if isinstance(r, Kelvin) else repr(r))
            except TypeError as e:
                print(call, "TypeError:", str(e).split(".")[0])
        add_conversion_method(type_from=str, type_to=int, f=int)
        add_conversion_method(Celsius, Kelvin, lambda c: Kelvin(c.v + 273.15))
        print(f("1"), f(2), to_k(Celsius(1)).v, to_k(Celsius(2)).v)
        """,
        """
        f(1) 1
        f('1') TypeError: Cannot convert `1` to `int`
        to_k(Celsius(1)) TypeError: Cannot convert `<_plum_case_return_values_are_converted_to_the_annotation
        as_tuple([1, 2]) (1, 2)
        as_tuple((3,)) (3,)
        as_tuple(5) (5,)
        1 2 274.15 275.15
        """),
    "a_conversion_to_the_annotation_applies_even_to_matching_results": Case(
        """
        from LIB import Dispatcher, add_conversion_method, convert
        d = Dispatcher()
        class Unit:
            def __init__(self, v): self.v = v
        class Sub(Unit): pass
        @d
        def f(x: int) -> Unit:
            return Sub(x)
        print(type(f(1)).__name__)
        add_conversion_method(Sub, Unit, lambda s: Unit(s.v * 10))
        print(type(f(1)).__name__, f(2).v, type(convert(Sub(3), Unit)).__name__)
        """,
        """
        Sub
        Unit 20 Unit
        """),
    "promotion_finds_a_common_type_and_converts": Case(
        """
        from LIB import Dispatcher, promote, add_promotion_rule, add_conversion_method
        d = Dispatcher()
        class Small:
            def __init__(self, v): self.v = v
        class Big:
            def __init__(self, v): self.v = v
        class Tiny(Small): pass
        def show(objs):
            return tuple(type(o).__name__ + ":" + str(o.v) for o in objs)
        for e in ["promote()", "show(promote(Small(1)))", "show(promote(Small(1), Small(2)))",
                  "show(promote(Small(1), Big(2)))", "show(promote(Small(1), Tiny(2)))"]:
            try:
                print(e, eval(e))
            except TypeError as ex:
                print(e, "TypeError:", str(ex).replace("_plum_case_promotion_finds_a_common_type_and_converts.", ""))
        add_promotion_rule(Small, Big, Big)
        try:
            promote(Small(1), Big(2))
        except TypeError as ex:
            print("TypeError:", str(ex).split("`")[0] + "...")
        add_conversion_method(Small, Big, lambda s: Big(s.v * 100))
        print(show(promote(Small(1), Big(2))), show(promote(Big(2), Small(1))), show(promote(Tiny(3), Big(2))))
        print(show(promote(Small(1), Big(2), Small(5))))
        """,
        """
        promote() ()
        show(promote(Small(1))) ('Small:1',)
        show(promote(Small(1), Small(2))) ('Small:1', 'Small:2')
        show(promote(Small(1), Big(2))) TypeError: No promotion rule for `Small` and `Big`.
        show(promote(Small(1), Tiny(2))) ('Small:1', 'Tiny:2')
        TypeError: Cannot convert ...
        ('Big:100', 'Big:2') ('Big:2', 'Big:100') ('Big:300', 'Big:2')
        ('Big:100', 'Big:2', 'Big:500')
        """),
    "promotion_in_an_add_function": Case(
        """
        from LIB import Dispatcher, promote, add_promotion_rule, add_conversion_method
        d = Dispatcher()
        class M:
            def __init__(self, v): self.v = v
        class N:
            def __init__(self, v): self.v = v
        @d
        def add(x, y):
            return add(*promote(x, y))
        @d
        def add(x: M, y: M):
            return "M", x.v + y.v
        @d
        def add(x: N, y: N):
            return "N", x.v + y.v
        print(add(M(1), M(2)), add(N(1), N(2)))
        add_promotion_rule(M, N, N)
        add_conversion_method(M, N, lambda m: N(m.v))
        print(add(M(1), N(2)), add(N(5), M(1)))
        """,
        """
        ('M', 3) ('N', 3)
        ('N', 3) ('N', 6)
        """),
}


@pytest.mark.parametrize("name", CASES)
def test_frostjit_converts_and_promotes_as_plum(name):
    assert run_here(CASES[name].source, name) == CASES[name].expected


@pytest.mark.parametrize("name", CASES)
def test_plum_reference_output(name, plum_outputs):
    assert plum_outputs[name] == CASES[name].plum


def test_converted_call_is_cached_per_result_type():
    from frostjit.dispatch import Dispatcher, add_conversion_method
    d = Dispatcher()

    class Src:
        pass

    class Dst:
        def __init__(self, s):
            self.s = s

    calls = []

    @d
    def f(x: int) -> Dst:
        return Src()

    add_conversion_method(Src, Dst, lambda s: calls.append(s) or Dst(s))
    for _ in range(3):
        assert type(f(1)) is Dst
    assert len(calls) == 3
    ok = f._dispatch_state.ns["decisions_returning"][int][3]
    assert Src in ok.converters  # the plan for Src results was found once


def test_promote_plan_is_found_once_per_type_tuple():
    from frostjit.dispatch import _promotion, add_conversion_method, add_promotion_rule, promote

    class P1:
        pass

    class P2:
        pass

    add_promotion_rule(P1, P2, P2)
    add_conversion_method(P1, P2, lambda p: P2())
    a, b = promote(P1(), P2())
    assert type(a) is P2 and type(b) is P2
    assert (P1, P2) in _promotion._promoters
