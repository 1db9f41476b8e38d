"""Parametric classes (plum's ``@parametric``), written from plum's documentation and
cross-checked against plum in a subprocess."""

import numbers

import pytest

from plum_reference import Case, run_here

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")

CASES = {
    "parametric_types_are_made_once_and_inferred_from_arguments": Case(
        """
        from LIB import parametric, type_parameter
        @parametric
        class A:
            def __init__(self, x, y=None):
                self.x = x
        print(A.__name__, A[int].__name__, A[int] is A[int], A[1, 2].__name__, A[int, str].__name__)
        print(type(A(1)).__name__, type(A("1")).__name__, type(A(1.0)).__name__, type(A(1, 2)).__name__)
        print(type(A[float](1)).__name__, A[int](1).x)
        print(type_parameter(A[int]).__name__, type_parameter(A(1)).__name__, type_parameter(A[1, 2]))
        print(issubclass(A[int], A), A.parametric, A.concrete, A[int].concrete)
        for bad in ["A[int][float]", "type_parameter(A)"]:
            try:
                eval(bad)
            except Exception as e:
                print(bad, type(e).__name__)
        """,
        """
        A A[int] True A[1, 2] A[int, str]
        A[int] A[str] A[float] A[int, int]
        A[float] 1
        int int (1, 2)
        True True False True
        A[int][float] TypeError
        type_parameter(A) RuntimeError
        """),
    "parametric_types_are_covariant": Case(
        """
        from numbers import Number, Real
        from LIB import parametric
        @parametric
        class A:
            def __init__(self, x): self.x = x
        print(issubclass(A[int], A[Number]), issubclass(A[Number], A[int]), issubclass(A, A[int]))
        print(isinstance(A(1), A[Number]), isinstance(A(1), A[float]), isinstance(A(True), A[int]))
        @parametric
        class C(A): pass
        print(type(C(1)).__name__, issubclass(C[int], A[int]), issubclass(C[int], A[Real]),
              issubclass(C[int], A[str]), issubclass(A[int], C[int]))
        """,
        """
        True False False
        True False True
        C[int] True True False False
        """),
    "dispatch_on_parametric_types_picks_the_most_specific_parameter": Case(
        """
        from numbers import Number, Real
        from LIB import Dispatcher, parametric
        d = Dispatcher()
        @parametric
        class A:
            def __init__(self, x): self.x = x
        @d
        def f(x: A): return "Just some A"
        @d
        def f(x: A[int]): return "A has an integer!"
        @d
        def f(x: A[float]): return "A has a float!"
        @d
        def f(x: A[Number]): return "A has a number"
        for call in ["f(A(1))", "f(A(1.0))", "f(A(True))", "f(A(1j))", "f(A('a'))", "f(A[Real](1))",
                     "f(A(1))", "f(A('b'))"]:
            print(call, eval(call))
        """,
        """
        f(A(1)) A has an integer!
        f(A(1.0)) A has a float!
        f(A(True)) A has an integer!
        f(A(1j)) A has a number
        f(A('a')) Just some A
        f(A[Real](1)) A has a number
        f(A(1)) A has an integer!
        f(A('b')) Just some A
        """),
    "type_parameter_hooks_infer_validate_and_compare": Case(
        """
        from numbers import Number
        from LIB import Dispatcher, parametric, type_parameter
        d = Dispatcher()
        @parametric
        class NTuple:
            def __init__(self, *args):
                n, t = type_parameter(self)
                if len(args) != n or any(not isinstance(arg, t) for arg in args):
                    raise ValueError("Incorrect arguments!")
                self.args = args
            @classmethod
            @d
            def __init_type_parameter__(self, n: int, t: type):
                return n, t
            @classmethod
            def __infer_type_parameter__(self, *args):
                return len(args), type(args[0])
            @classmethod
            def __le_type_parameter__(self, left, right):
                n_left, t_left = left
                n_right, t_right = right
                return n_left == n_right and issubclass(t_left, t_right)
        print(type(NTuple(10, 11, 12)).__name__, NTuple[2, int].__name__)
        for bad in ['NTuple[2, "int"]', "NTuple[None, int]", "NTuple[2, int](10, 11, 12)",
                    'NTuple[2, int](10, "11")']:
            try:
                eval(bad)
            except Exception as e:
                print(bad, type(e).__name__)
        print(issubclass(NTuple[2, int], NTuple[2, Number]), issubclass(NTuple[2, int], NTuple[2, float]),
              issubclass(NTuple[2, int], NTuple[3, int]))
        @d
        def size(x: NTuple[2, Number]): return "pair of numbers"
        @d
        def size(x: NTuple[3, int]): return "triple of ints"
        print(size(NTuple(1, 2)), size(NTuple(1.0, 2.0)), size(NTuple(1, 2, 3)))
        """,
        """
        NTuple[3, int] NTuple[2, int]
        NTuple[2, "int"] NotFoundLookupError
        NTuple[None, int] NotFoundLookupError
        NTuple[2, int](10, 11, 12) ValueError
        NTuple[2, int](10, "11") ValueError
        True False False
        pair of numbers pair of numbers triple of ints
        """),
    "unparametrized_and_nonparametric_types_of_objects": Case(
        """
        from LIB import parametric, type_unparametrized, type_nonparametric
        class Original:
            def __init__(self, x): self.x = x
        A = parametric(Original)
        a = A(1)
        print(type_unparametrized(a) is A, type_nonparametric(a) is Original, type_unparametrized(1) is int,
              type_nonparametric(1) is int, A is not Original, issubclass(A, Original))
        """,
        """
        True True True True True True
        """),
    "kind_wraps_objects_in_a_named_parametric_type": Case(
        """
        from LIB import Dispatcher, Kind, kind
        d = Dispatcher()
        this = Kind["This"](1)
        that = Kind["That"]("some", "args", "here")
        print(this.get(), that.get(), type(this).__name__, isinstance(this, Kind["That"]), isinstance(this, Kind))
        @d
        def expect(x: Kind["this"]): return "this: " + str(x.get())
        @d
        def expect(x: Kind["that"]): return "that: " + str(x.get())
        print(expect(Kind["this"](1)), expect(Kind["that"](2)))
        K2 = kind()
        print(K2 is not Kind, K2["x"](5).get())
        """,
        """
        1 ('some', 'args', 'here') Kind['This'] False True
        this: 1 that: 2
        True 5
        """),
    "parametric_over_a_class_with_its_own_metaclass": Case(
        """
        from LIB import parametric, CovariantMeta
        class Meta(type):
            tag = "meta"
        class Base(metaclass=Meta): pass
        @parametric
        class A(Base):
            def __init__(self, x): pass
        print(isinstance(A, Meta), isinstance(A, CovariantMeta), type(A(1)).__name__, type(A).tag)
        """,
        """
        True True A[int] meta
        """),
}


@pytest.mark.parametrize("name", CASES)
def test_frostjit_parametric_types_behave_as_plum(name):
    assert run_here(CASES[name].source, name) == CASES[name].expected


@pytest.mark.parametrize("name", CASES)
def test_plum_reference_output(name, plum_outputs):
    assert plum_outputs[name] == CASES[name].plum


def test_parametric_argument_calls_are_cached_not_re_resolved():
    # plum treats parametric types as unfaithful and resolves every call again; here the
    # decision is cached under the concrete type.
    from frostjit.dispatch import Dispatcher, parametric
    d = Dispatcher()

    @parametric
    class A:
        def __init__(self, x):
            self.x = x

    @d
    def f(x: A[numbers.Number]):
        return "number"

    a = A(1)
    assert f(a) == "number"
    assert f._dispatch_state.ns["decisions"][type(a)] is not None
    assert type(a) in f._dispatch_state.decisions.live


def test_abc_registration_reaches_parametric_parameters():
    from frostjit.dispatch import Dispatcher, parametric
    d = Dispatcher()

    @parametric
    class A:
        def __init__(self, x):
            self.x = x

    class Late:
        pass

    @d
    def f(x: A[numbers.Number]):
        return "number"

    @d
    def f(x: A):
        return "any A"

    assert f(A(Late())) == "any A"
    numbers.Number.register(Late)
    assert f(A(Late())) == "number"
