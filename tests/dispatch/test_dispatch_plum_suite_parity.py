"""Behaviours found by running plum 2.10.1's own test suite against frostjit.dispatch:
signatures with varargs, the ``Missing`` sentinel, ``Signature``/``Method`` objects built
directly, their text. Written from plum's documented behaviour; each program is cross-checked
against plum in a subprocess (``plum_reference``)."""

import pytest

from plum_reference import Case, run_here

CASES = {
    "more_fixed_parameters_before_equal_varargs_is_more_specific": Case(
        """
        from numbers import Number
        from LIB import Dispatcher, Signature
        d = Dispatcher()
        @d
        def f(*xs: int): return "ints"
        @d
        def f(*xs: Number): return "nums"
        @d
        def f(x: int): return "int"
        @d
        def f(x: int, y: int): return "two ints"
        @d
        def f(x: int, *ys: int): return "int and ints"
        @d
        def f(x: int, *ys: Number): return "int and nums"
        @d
        def f(x: Number, *ys: int): return "num and ints"
        @d
        def f(x: Number, *ys: Number): return "num and nums"
        print(f(1), f(1, 1), f(1, 1, 1), f(1.0, 1.0, 1.0), f(1, 1.0), f(1.0, 1), f(), f(1, 2, 3, 4))
        print(Signature(int) < Signature(int, varargs=int), Signature(int, varargs=int) < Signature(int, Number),
              Signature(int, int, varargs=int) < Signature(int, Number))
        print(Signature(int) >= Signature(int, varargs=int), Signature(int, varargs=int) >= Signature(int, Number))
        """,
        """
        int two ints int and ints num and nums int and nums num and ints ints int and ints
        True True True
        False False
        """),
    "missing_is_a_sentinel_class_without_truth_value": Case(
        """
        import sys
        from LIB import Signature
        Missing = Signature(int).varargs
        print(Signature(int).varargs is Missing, Signature(int).has_varargs)
        for attempt in (lambda: Missing(), lambda: bool(Missing)):
            try:
                attempt()
            except TypeError:
                print("TypeError")
        """,
        """
        True False
        TypeError
        TypeError
        """),
    "signature_copy_default_args_and_getters": Case(
        """
        import operator
        from typing import Any
        from LIB import Signature, append_default_args, inspect_signature
        s = Signature(int, int, varargs=float, precedence=1)
        c = s.__copy__()
        print(c is not s, c == s, c.types, c.varargs, c.precedence)
        def f(a: int, b=1, c: float = 1.0, *d: complex, option=None, **other):
            pass
        for sig in (Signature.from_callable(f), Signature(int, Any), Signature(int)):
            print([(x.types, x.has_varargs) for x in append_default_args(sig, f)])
        g = operator.itemgetter(0)
        print(len(inspect_signature(g).parameters), len(inspect_signature(operator.attrgetter("x")).parameters),
              Signature.from_callable(g), len(append_default_args(Signature.from_callable(g), g)))
        def bad(a: int = 1.0):
            pass
        try:
            Signature.from_callable(bad)
        except TypeError as e:
            print(str(e).startswith("Default value `1.0` is not an instance of the annotated type `int`."))
        """,
        """
        True True (<class 'int'>, <class 'int'>) <class 'float'> 1
        [((<class 'int'>, typing.Any, <class 'float'>), True), ((<class 'int'>, typing.Any), False), ((<class 'int'>,), False)]
        [((<class 'int'>, typing.Any), False), ((<class 'int'>,), False)]
        [((<class 'int'>,), False)]
        1 1 Signature(typing.Any) 1
        True
        """),
    "method_text_shows_parameter_names_keywords_and_precedence": Case(
        """
        from typing import Any, Union
        from LIB import Dispatcher, Method, Signature
        d = Dispatcher()
        @d
        def f(x: float, *, option=1, **kw) -> int: pass
        @d(precedence=2)
        def f(x: Union[int, str], y: Any, *a: int, o: str): pass
        for m in f.methods:
            print(repr(m).splitlines()[:-1])
        def h(x, y, *, k) -> float: pass
        print(repr(Method(h, Signature(int), return_type=complex, function_name="g")).splitlines()[0])
        print(repr(Method(h, Signature(int, int, precedence=1))).splitlines()[:-1])
        """,
        """
        ['f(x: float, *, option, **kw) -> int']
        ['f(x: typing.Union[int, str], y: Any, *a: int, o)', '    precedence=2']
        g(x: int, *, k) -> complex
        ['h(x: int, y: int, *, k) -> float', '    precedence=1']
        """,
        # plum writes `*a: int, *, o` (a second `*`, not Python syntax).
        plum="""
        ['f(x: float, *, option, **kw) -> int']
        ['f(x: typing.Union[int, str], y: Any, *a: int, *, o)', '    precedence=2']
        g(x: int, *, k) -> complex
        ['h(x: int, y: int, *, k) -> float', '    precedence=1']
        """),
    "method_made_directly_reads_the_return_annotation": Case(
        """
        from typing import Any
        from LIB import Method, Signature
        def f(x) -> float: return x
        def g(x): return x
        def f2(x) -> float: return x
        m = Method(f, Signature(int))
        print(m.function_name, m.return_type, Method(g, Signature(int)).return_type,
              Method(f, Signature(int), return_type=complex).return_type)
        print(m == Method(f, Signature(int)), hash(m) == hash(Method(f, Signature(int))),
              m == Method(f2, Signature(int)), m == Method(f, Signature(int), return_type=int))
        """,
        """
        f <class 'float'> typing.Any <class 'complex'>
        True True False False
        """),
    "repr_type_names_typing_classes_briefly": Case(
        """
        import typing
        from LIB.repr import repr_type
        class A: pass
        print(str(repr_type(int)), str(repr_type(typing.Any)), str(repr_type(typing)), str(repr_type(A)).split(".")[-1])
        """,
        """
        int Any typing A
        """),
    "parametric_class_attributes_and_errors": Case(
        """
        from LIB import parametric, CovariantMeta, type_parameter
        class Plain(metaclass=CovariantMeta):
            pass
        @parametric
        class A:
            def __init__(self, x=None):
                pass
        print(A.parametric, A.concrete, A[float].concrete, A[float].type_parameter)
        for attempt in (lambda: Plain.concrete, lambda: A.type_parameter):
            try:
                attempt()
            except RuntimeError:
                print("RuntimeError")
        a = A[1]()
        print(a.__class_unparametrized__() is A, a.__class_nonparametric__() is A.mro()[1])
        import abc
        @parametric
        class B(metaclass=abc.ABCMeta):
            pass
        print(type(B).__name__, type(B[1]).__name__)
        """,
        """
        True False True <class 'float'>
        RuntimeError
        RuntimeError
        True True
        CovariantMeta[abc.ABCMeta] CovariantMeta[abc.ABCMeta]
        """),
    "parametric_owner_is_the_original_class_before_any_call": Case(
        """
        from LIB import Dispatcher, parametric
        d = Dispatcher()
        @parametric
        class A:
            @d
            def f(self, x: int):
                return "int"
        print(A.f.owner is A.__mro__[1], "f" in A.__mro__[1].__dict__, "f" in A.__dict__)
        """,
        """
        True True False
        """),
    "parametric_metaclass_instancecheck_decides_each_call": Case(
        """
        import numpy as np
        from LIB import Dispatcher, parametric
        class ShapeMeta(type):
            def __instancecheck__(cls, x):
                shape = cls.type_parameter if cls.concrete else None
                return isinstance(x, np.ndarray) and (shape is None or x.shape == shape)
        @parametric
        class Arr(np.ndarray, metaclass=ShapeMeta):
            pass
        d = Dispatcher()
        @d
        def f(x: np.ndarray):
            return "array"
        @d
        def f(x: Arr[(2, 2)]):
            return "2x2"
        @d
        def f(x: Arr[(3, 1)]):
            return "3"
        # The same argument type, answers that depend on the value, asked repeatedly.
        print([f(np.ones(s)) for s in [(2, 2), (3, 3), (3, 1), (2, 2), (3, 3), (3, 1)]])
        print(isinstance(np.ones((2, 2)), Arr[(2, 2)]), isinstance(np.ones(3), Arr[(2, 2)]))
        """,
        """
        ['2x2', 'array', '3', '2x2', 'array', '3']
        True False
        """),
    "promised_and_module_types_resolve_retrieve_and_deliver": Case(
        """
        import typing
        from LIB import PromisedType, ModuleType, resolve_type_hint
        p = PromisedType("int")
        print(p.__name__, p.resolve() is p, p.deliver(int) is p, p.resolve() is int)
        for module in ("typing", "__builtin__", "__builtins__", "builtins"):
            name = "Union" if module == "typing" else "int"
            t = ModuleType(module, name)
            print(t.__name__, t.resolve() is t, t.retrieve(), t.resolve() in (int, typing.Union))
        print(ModuleType("<nonexistent>", "f").retrieve(), ModuleType("__builtin__", "nope", allow_fail=True).retrieve())
        try:
            ModuleType("__builtin__", "nope").retrieve()
        except AttributeError:
            print("AttributeError")
        print(resolve_type_hint(ModuleType("builtins", "float")) is float)
        """,
        """
        PromisedType[int] True True True
        ModuleType[typing.Union] True True True
        ModuleType[__builtin__.int] True True True
        ModuleType[__builtins__.int] True True True
        ModuleType[builtins.int] True True True
        False False
        AttributeError
        True
        """),
    "module_type_refuses_a_contradicting_faithful_flag": Case(
        """
        import sys, types
        from LIB import ModuleType
        m = types.ModuleType("parity_faithful_mod")
        class A:
            __faithful__ = False
        m.A = A
        sys.modules["parity_faithful_mod"] = m
        print(ModuleType("parity_faithful_mod", "A", faithful=False).retrieve())
        try:
            ModuleType("parity_faithful_mod", "A", faithful=True).retrieve()
        except TypeError as e:
            print("`A.__faithful__` is already set" in str(e))
        del sys.modules["parity_faithful_mod"]
        """,
        """
        True
        True
        """),
    "resolve_type_hint_rebuilds_callable_and_warns_on_non_hints": Case(
        """
        import typing, warnings
        from collections.abc import Callable
        from LIB import PromisedType, resolve_type_hint, is_faithful
        P = PromisedType("int").deliver(int)
        for hint, real in [(Callable[[P, float], P], Callable[[int, float], int]),
                           (typing.Union[Callable[[P], P], float], typing.Union[Callable[[int], int], float]),
                           ((P, [P]), (int, [int]))]:
            print(resolve_type_hint(hint) == real)
        print(resolve_type_hint(None) is None, resolve_type_hint(...) is ..., resolve_type_hint(typing.Any) is typing.Any)
        class A:
            pass
        a = A()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            print(resolve_type_hint(a) is a, [("could not resolve the type hint" in str(x.message).lower()) for x in w])
        print(is_faithful(...), is_faithful(None), is_faithful([int, float]), is_faithful((int, typing.Any)))
        """,
        """
        True
        True
        True
        True True True
        True [True]
        True True True True
        """),
    "union_alias_takes_pipe_unions_and_single_types": Case(
        """
        from typing import Union
        from LIB import set_union_alias
        print(set_union_alias(Union[int, bytes], alias="IntBytes") == Union[int, bytes])
        set_union_alias(int | bytes, alias="IntBytes")
        for attempt in (lambda: set_union_alias(Union[int, bytes], alias="Other"),
                        lambda: set_union_alias(int | bytes, alias="Other")):
            try:
                attempt()
            except RuntimeError as e:
                print("already has alias" in str(e))
        set_union_alias(complex, alias="MyComplex")
        set_union_alias(complex, alias="MyComplex")
        try:
            set_union_alias(complex, alias="MyOtherComplex")
        except RuntimeError as e:
            print("already has alias" in str(e))
        from LIB import _alias
        _alias._ALIASED_UNIONS.clear()
        """,
        """
        True
        True
        True
        True
        """),
    "pending_registrations_resolve_on_request_and_functions_are_listed": Case(
        """
        from LIB import Dispatcher, Function
        d = Dispatcher()
        @d
        def f(x: int, y: float = 1):
            return y
        try:
            f._resolve_pending_registrations()
        except TypeError as e:
            print("TypeError", "Default value `1`" in str(e))
        @d
        def g(x: int):
            return x
        g._resolve_pending_registrations()
        print(len(g.methods), any(h is g for h in Function._instances))
        """,
        """
        TypeError True
        1 True
        """),
    "default_promotion_rule_resolves_module_types": Case(
        """
        from numbers import Number
        from LIB import ModuleType
        from LIB._promotion import _promotion_rule
        print(_promotion_rule(ModuleType("builtins", "int"), ModuleType("numbers", "Number")) is Number,
              _promotion_rule(ModuleType("numbers", "Number"), ModuleType("builtins", "int")) is Number)
        """,
        """
        True True
        """),
    "none_annotation_reads_as_nonetype": Case(
        """
        from LIB import Dispatcher, Signature
        def f(x: None, y: "int"): pass
        print(Signature.from_callable(f).types, Signature(None).types)
        d = Dispatcher()
        @d
        def g(x: None): return "none"
        print(g(None), g.methods[0].signature.types, repr(g.methods[0]).splitlines()[0])
        """,
        """
        (<class 'NoneType'>, <class 'int'>) (None,)
        none (<class 'NoneType'>,) g(x: NoneType)
        """),
}


@pytest.mark.parametrize("name", CASES)
def test_frostjit_behaves_as_plum_suite_expects(name):
    assert run_here(CASES[name].source, name) == CASES[name].expected


@pytest.mark.parametrize("name", CASES)
def test_plum_reference_output(name, plum_outputs):
    assert plum_outputs[name] == CASES[name].plum


def test_varargs_specificity_does_not_depend_on_registration_order():
    # plum lets the later of `(*int)` and `(int, *int)` win a call both match; frostjit
    # always picks the one with more fixed parameters (it accepts fewer calls).
    from frostjit.dispatch import Dispatcher, Signature

    methods = [(Signature(varargs=int), lambda *xs: "ints"),
               (Signature(int, varargs=int), lambda x, *ys: "int and ints")]
    for order in (methods, methods[::-1]):
        d = Dispatcher()
        for sig, body in order:
            f = d.multi(sig)(body)
        assert (f(), f(1), f(1, 2, 3)) == ("ints", "int and ints", "int and ints")


def test_resolve_type_hint_keeps_typing_callable_spelling():
    # plum rebuilds `typing.Callable[[P], P]` as `collections.abc.Callable[[int], int]`;
    # frostjit keeps the spelling the hint was written with (both dispatch alike).
    import typing

    from frostjit.dispatch import PromisedType, resolve_type_hint

    P = PromisedType("int").deliver(int)
    assert resolve_type_hint(typing.Callable[[P, float], P]) == typing.Callable[[int, float], int]
    assert resolve_type_hint(typing.Callable[..., P]) == typing.Callable[..., int]


def test_forward_reference_inside_callable_resolves_to_a_well_formed_hint():
    out = run_here("""
        import typing
        from LIB import Dispatcher
        d = Dispatcher()
        @d
        def f(x: typing.Callable[["B"], int]): return "callable"
        @d
        def f(x: int): return "int"
        class B: pass
        print(f(len), f(1), f.methods[0].signature.types[0] == typing.Callable[[B], int])
        """, "callable_forward_ref")
    assert out == "callable int True\n"


@pytest.mark.parametrize("lib", ["frostjit.dispatch", "plum"])
def test_deactivate_autoreload_before_activation_raises(lib):
    # A fresh process each: the suite may have activated autoreload already.
    import os
    import subprocess
    import sys

    if lib == "plum":
        pytest.importorskip("plum")
    pytest.importorskip("IPython")
    program = (f"import {lib} as L\n"
               "try:\n    L.deactivate_autoreload()\nexcept RuntimeError as e:\n"
               "    print('RuntimeError', 'never activated' in str(e))\n"
               "L.activate_autoreload(); L.deactivate_autoreload(); L.deactivate_autoreload(); print('ok')\n")
    env = dict(os.environ)
    if lib == "plum":
        env.pop("PYTHONPATH", None)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout == "RuntimeError True\nok\n", out.stderr
