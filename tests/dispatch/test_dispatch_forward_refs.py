"""String forward references, wherever they are nested (issue 8 item 29), beside plum."""

import pytest

from plum_reference import Case, run_here

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")

CASES = {
    "forward_ref_inside_union_optional_and_list": Case(
        """
        from typing import Optional, Union
        from LIB import Dispatcher
        d = Dispatcher()
        @d
        def f(x: Union[int, "B"]): return "int|B"
        @d
        def f(x: Optional["B"]): return "opt"
        @d
        def g(x: list["B"]): return "listB"
        @d
        def g(x: "int | B"): return "str-union"
        @d
        def h(x: dict[str, "B"]): return "dict"
        @d
        def h(x: tuple["B", ...]): return "tuple"
        class B: pass
        for call in ["f(1)", "f(B())", "f(None)", "g([B()])", "g(1)", "g(B())",
                     "h({'a': B()})", "h((B(), B()))", "h(('a',))"]:
            try:
                print(call, eval(call))
            except Exception as e:
                print(call, type(e).__name__)
        """,
        """
        f(1) int|B
        f(B()) AmbiguousLookupError
        f(None) opt
        g([B()]) listB
        g(1) str-union
        g(B()) str-union
        h({'a': B()}) dict
        h((B(), B())) tuple
        h(('a',)) NotFoundLookupError
        """),
    "literal_strings_are_values_not_forward_refs": Case(
        """
        from typing import Literal, Union
        from LIB import Dispatcher
        d = Dispatcher()
        @d
        def f(x: Union[Literal["B"], "B"]): return "B or 'B'"
        class B: pass
        print(f("B"), f(B()))
        """,
        """
        B or 'B' B or 'B'
        """),
    "future_annotations_with_nested_forward_refs": Case(
        """
        from __future__ import annotations
        from typing import Optional
        from LIB import Dispatcher
        d = Dispatcher()
        @d
        def f(x: Optional[B]) -> list[B]: return [B()] if x is None else [x]
        class B: pass
        print(type(f(None)[0]).__name__, type(f(B())[0]).__name__)
        """,
        """
        B B
        """),
    "undefined_forward_ref_is_a_name_error_at_the_call": Case(
        """
        from typing import Union
        from LIB import Dispatcher
        d = Dispatcher()
        @d
        def f(x: Union[int, "Nowhere"]): return 1
        try:
            f(1)
        except NameError as e:
            print("NameError")
        """,
        """
        NameError
        """),
    "forward_refs_inside_type_annotated_and_return_annotations": Case(
        """
        from typing import Annotated, Type
        from LIB import Dispatcher
        d = Dispatcher()
        @d
        def g(x: Annotated["B", "meta"]) -> "list[B]": return [x]
        @d
        def h(x: type["B"]): return "type"
        @d
        def k(x: Type["B"]): return "Type"
        class B: pass
        print(type(g(B())[0]).__name__, h(B), k(B))
        """,
        """
        B type Type
        """),
    "forward_refs_in_explicit_signatures": Case(
        """
        from LIB import Dispatcher, Signature
        d = Dispatcher()
        @d.multi(("B",), Signature(list["B"]))
        def f(x): return "multi"
        class B: pass
        try:
            print(f(B()), f([B()]))
        except Exception as e:
            print(type(e).__name__)
        """,
        """
        multi multi
        """,
        # plum hands the strings to beartype, which rejects them.
        plum="""
        BeartypeDoorNonpepException
        """),
    "nested_class_self_reference": Case(
        """
        from LIB import Dispatcher
        d = Dispatcher()
        class Outer:
            class Inner:
                @d
                def m(self, x: "Inner"): return "Inner"
                @d
                def m(self, x: "Outer"): return "Outer"
        try:
            print(Outer.Inner().m(Outer.Inner()), Outer.Inner().m(Outer()))
        except Exception as e:
            print(type(e).__name__)
        """,
        """
        Inner Outer
        """,
        # plum looks "Inner" up in the module only (beartype raises its own exception).
        plum="""
        BeartypeCallHintPep484ForwardRefStrException
        """),
}


@pytest.mark.parametrize("name", CASES)
def test_frostjit_resolves_forward_refs_as_plum(name):
    assert run_here(CASES[name].source, name) == CASES[name].expected


@pytest.mark.parametrize("name", CASES)
def test_plum_reference_output(name, plum_outputs):
    assert plum_outputs[name] == CASES[name].plum
