"""PromisedType, ModuleType, resolve_type_hint, type_mapping, plum's isinstance/issubclass and
Annotated, written from plum's documentation and cross-checked against plum in a subprocess."""

import sys
import types

import pytest

from plum_reference import Case, run_here

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")

CASES = {
    "promised_type_delivered_before_the_first_call": Case(
        """
        from LIB import Dispatcher, PromisedType, resolve_type_hint
        d = Dispatcher()
        ProxyInt = PromisedType("SpecialInt")
        @d
        def f(x: ProxyInt): return "An integer!"
        @d
        def f(x: str): return "str"
        ProxyInt.deliver(int)
        print(f(1), f("a"), resolve_type_hint(ProxyInt).__name__, ProxyInt.__name__, isinstance(ProxyInt, type))
        """,
        """
        An integer! str int PromisedType[SpecialInt] True
        """),
    "promised_type_delivered_again_re_resolves": Case(
        """
        from LIB import Dispatcher, PromisedType
        d = Dispatcher()
        P = PromisedType("P")
        @d
        def f(x: P): return "P"
        P.deliver(int)
        print(f(1))
        P.deliver(float)
        for call in ["f(1.0)", "f(1)"]:
            try:
                print(call, eval(call))
            except Exception as e:
                print(call, type(e).__name__)
        """,
        """
        P
        f(1.0) P
        f(1) NotFoundLookupError
        """,
        # plum resolved P at the first call and keeps int.
        plum="""
        P
        f(1.0) NotFoundLookupError
        f(1) P
        """),
    "module_type_resolves_when_its_module_is_imported": Case(
        """
        import sys, types
        from LIB import Dispatcher, ModuleType, clear_all_cache, resolve_type_hint
        d = Dispatcher()
        Late = ModuleType("plum_ref_late_module", "Late")
        @d
        def f(x: Late): return "Late"
        @d
        def f(x: int): return "int"
        print(f(1), resolve_type_hint(Late) is Late)
        module = types.ModuleType("plum_ref_late_module")
        exec("class Late: pass", module.__dict__)
        sys.modules["plum_ref_late_module"] = module      # "import" it
        clear_all_cache()                                  # plum requires this
        print(f(module.Late()), f(1), resolve_type_hint(Late) is module.Late)
        del sys.modules["plum_ref_late_module"]
        """,
        """
        int True
        Late int True
        """),
    "module_type_options": Case(
        """
        from LIB import ModuleType, resolve_type_hint
        import fractions
        print(resolve_type_hint(ModuleType("fractions", "Fraction")) is fractions.Fraction)
        print(resolve_type_hint(ModuleType("fractions", "Fraction", condition=lambda: False)).__name__)
        print(resolve_type_hint(ModuleType("fractions", "Nope", allow_fail=True)).__name__)
        try:
            resolve_type_hint(ModuleType("fractions", "Nope"))
        except AttributeError:
            print("AttributeError")
        print(resolve_type_hint(ModuleType("no_such_module_xyz", "X")).__name__)
        """,
        """
        True
        ModuleType[fractions.Fraction]
        ModuleType[fractions.Nope]
        AttributeError
        ModuleType[no_such_module_xyz.X]
        """),
    "resolve_type_hint_goes_through_containers_and_typing": Case(
        """
        from typing import Optional
        from LIB import PromisedType, resolve_type_hint
        P = PromisedType("P")
        P.deliver(float)
        for h in [list[P], P | str, (P, str), [P], Optional[P], dict[str, P], "x", int]:
            print(resolve_type_hint(h))
        """,
        """
        list[float]
        float | str
        (<class 'float'>, <class 'str'>)
        [<class 'float'>]
        typing.Optional[float]
        dict[str, float]
        x
        <class 'int'>
        """),
    "type_mapping_maps_old_classes_to_new_ones": Case(
        """
        from LIB import Dispatcher, type_mapping, resolve_type_hint, clear_all_cache
        d = Dispatcher()
        class A: pass
        class A2: pass
        @d
        def f(x: A): return "A"
        type_mapping[A] = A2
        clear_all_cache()
        print(resolve_type_hint(A).__name__, resolve_type_hint(list[A]), f(A2()))
        del type_mapping[A]
        clear_all_cache()
        print(f(A()))
        """,
        """
        A2 list[_plum_case_type_mapping_maps_old_classes_to_new_ones.A2] A
        A
        """),
    "hint_aware_isinstance_issubclass_and_faithfulness": Case(
        """
        from typing import Literal
        from LIB import isinstance, issubclass, is_faithful
        print(isinstance(1, int | str), isinstance([1], list[int]), isinstance(["a"], list[int]),
              isinstance(1, Literal[1, 2]), isinstance(3, Literal[1, 2]))
        print(issubclass(list[int], list), issubclass(int, int | str), issubclass(int | str, int),
              issubclass(list[bool], list[int]), issubclass(Literal[1], int))
        print(is_faithful(int), is_faithful(int | None), is_faithful(list[int]), is_faithful(Literal[1]))
        """,
        """
        True True False True False
        True True False True True
        True True False False
        """),
    "annotated_validators_are_checked_and_more_specific": Case(
        """
        from typing import Annotated
        from beartype.vale import Is
        from LIB import Dispatcher, isinstance, issubclass
        d = Dispatcher()
        Pos = Annotated[int, Is[lambda x: x > 0]]
        Neg = Annotated[int, Is[lambda x: x < 0]]
        @d
        def f(x: Pos): return "pos"
        @d
        def f(x: int): return "int"
        @d
        def g(x: Pos): return "pos"
        @d
        def g(x: Neg): return "neg"
        @d
        def h(x: Annotated[int, "just metadata"]): return "annotated int"
        @d
        def h(x: int): return "int"
        for c in ["f(1)", "f(-1)", "f(0)", "f(True)", "g(1)", "g(-1)", "g(0)", "h(1)", "len(h.methods)",
                  "isinstance(1, Pos)", "isinstance(-1, Pos)", "issubclass(Pos, int)", "issubclass(int, Pos)"]:
            try:
                print(c, eval(c))
            except Exception as e:
                print(c, type(e).__name__)
        """,
        """
        f(1) pos
        f(-1) int
        f(0) int
        f(True) pos
        g(1) pos
        g(-1) neg
        g(0) NotFoundLookupError
        h(1) annotated int
        len(h.methods) 2
        isinstance(1, Pos) True
        isinstance(-1, Pos) False
        issubclass(Pos, int) True
        issubclass(int, Pos) False
        """),
}


@pytest.mark.parametrize("name", CASES)
def test_frostjit_types_behave_as_plum(name):
    pytest.importorskip("beartype") if "beartype" in CASES[name].source else None
    assert run_here(CASES[name].source, name) == CASES[name].expected


@pytest.mark.parametrize("name", CASES)
def test_plum_reference_output(name, plum_outputs):
    import warnings
    warnings.filterwarnings("ignore")
    assert plum_outputs[name] == CASES[name].plum


def test_module_type_needs_no_clear_all_cache_after_the_import():
    from frostjit.dispatch import Dispatcher, ModuleType
    d = Dispatcher()
    Late = ModuleType("frostjit_test_late_module", "Late")

    @d
    def f(x: Late):
        return "Late"

    @d
    def f(x: int):
        return "int"

    assert f(1) == "int"
    module = types.ModuleType("frostjit_test_late_module")
    exec("class Late: pass", module.__dict__)
    sys.modules[module.__name__] = module
    try:
        assert f(module.Late()) == "Late" and f(1) == "int"
    finally:
        del sys.modules[module.__name__]


def test_promised_type_used_before_delivery_says_so():
    from frostjit.dispatch import Dispatcher, PromisedType
    d = Dispatcher()
    P = PromisedType("NotYet")

    @d
    def f(x: P):
        return 1

    with pytest.raises(TypeError, match=r"PromisedType\[NotYet\] was used before a type was delivered"):
        f(1)
