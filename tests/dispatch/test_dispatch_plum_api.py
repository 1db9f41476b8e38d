"""The rest of plum's public API: Function used directly, Method/Signature objects, docs,
namespaces, redefinition warnings, overload, union aliases, autoreload, helpers. Written from
plum's documentation, each program cross-checked against plum in a subprocess."""

import importlib.util

import pytest

from plum_reference import Case, run_here

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")

CASES = {
    "methods_are_method_objects_with_plums_attributes": Case(
        """
        from LIB import Dispatcher
        d = Dispatcher()
        @d
        def f(x: int, y: float = 1.0) -> float:
            return x * y
        print([(m.function_name, m.signature, m.return_type) for m in f.methods])
        print(f.methods[0] == f.methods[0], f.methods[0] == f.methods[1], f.methods[0].implementation(2, 3.0))
        print(str(f.methods[1]).startswith("Method(function_name='f', signature=Signature(int), return_type=<class 'float'>, implementation=<function f at"),
              repr(f.methods[1]).splitlines()[0])
        print(repr(f.methods).splitlines()[0], repr(f.methods).splitlines()[1].strip())
        """,
        """
        [('f', Signature(int, float), <class 'float'>), ('f', Signature(int), <class 'float'>)]
        True False 6.0
        True f(x: int) -> float
        List of 2 method(s): [0] f(x: int, y: float) -> float
        """),
    "signature_objects": Case(
        """
        from LIB import Signature
        print(Signature(int, varargs=str) <= Signature(int, varargs=object), Signature(int) < Signature(object),
              Signature(object) <= Signature(int), Signature(int) == Signature(int))
        print(Signature(int, float).match((1, 2.0)), Signature(int, float).match((1, 2)),
              Signature(int, varargs=str).expand_varargs(3), Signature(int, float).compute_distance((1, "a")))
        print(Signature(int).has_varargs, Signature(int, varargs=int).has_varargs, Signature(int, float, varargs=str, precedence=2))
        print(Signature.from_callable(lambda x, y: x), Signature.from_callable(lambda x: int, precedence=1).precedence)
        """,
        """
        True True False True
        True False (<class 'int'>, <class 'str'>, <class 'str'>) 1
        False True Signature(int, float, varargs=str, precedence=2)
        Signature(typing.Any, typing.Any) 1
        """),
    "docstrings_in_plums_layout": Case(
        """
        from LIB import Dispatcher
        d = Dispatcher()
        @d.abstract
        def f(x, y):
            '''Multiply two numbers.'''
        @d
        def f(x: float, y: float = 1.0) -> float:
            '''Multiply two floats.'''
            return x * y
        @d
        def f(x: int, y: int):
            '''Multiply two ints.

            Exactly.
            '''
            return x * y
        print(f.__doc__)
        print("==")
        @d
        def g(x: int):
            pass
        @d
        def g(x: str):
            pass
        print(g.__doc__)
        """,
        """
        Multiply two numbers.

        ------------------------------------

        f(x: float, y: float = 1.0) -> float

        Multiply two floats.

        ------------------------------------

        f(x: int, y: int)

        Multiply two ints.

        Exactly.
        ==
        -----------

        g(x: str)
        """),
    "function_made_directly": Case(
        """
        from LIB import Function, Signature
        def g(x):
            "g head doc"
        G = Function(g)
        print(repr(G.__doc__), G.__name__, isinstance(G, Function), isinstance(g, Function), len(G.methods))
        G.register(lambda x: "int", Signature(int))
        @G.dispatch
        def _(x: str): return "str"
        print(G(1), G("a"), len(G.methods))
        """,
        """
        'g head doc' g True False 0
        int str 2
        """),
    "dispatcher_namespaces": Case(
        """
        from LIB import Dispatcher
        d = Dispatcher()
        @d
        def f(x: int): return 1
        class A:
            @d
            def m(self, x: int): return 1
        print(sorted(d.functions), sorted(d.classes), sorted(d.classes[__name__ + ".A"]),
              d.functions["f"] is f, d.classes[__name__ + ".A"]["m"] is A.m)
        """,
        """
        ['f'] ['_plum_case_dispatcher_namespaces.A'] ['m'] True True
        """),
    "redefinition_warning": Case(
        """
        import warnings
        from LIB import Dispatcher
        d = Dispatcher(warn_redefinition=True)
        @d
        def k(x: int): return 1
        @d
        def k(x: int): return 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            print(k(1), [type(x.message).__name__ for x in w], "overwrites the earlier definition" in str(w[0].message))
        q = Dispatcher()
        @q
        def k(x: int): return 1
        @q
        def k(x: int): return 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            print(k(1), len(w))
        """,
        """
        2 ['MethodRedefinitionWarning'] True
        2 0
        """),
    "lookup_errors_carry_plums_attributes": Case(
        """
        from LIB import Dispatcher, Signature, NotFoundLookupError
        d = Dispatcher()
        @d
        def f(x: int, y: float = 1.0) -> float:
            return x * y
        try:
            f("a")
        except NotFoundLookupError as e:
            print(type(e).__name__, e.f_name, len(e.methods), isinstance(e, LookupError))
        print(f.resolve_method((1, 2.0))[1], f.resolve_method(Signature(int))[1], f.resolve_method((1,))[0](2))
        """,
        """
        NotFoundLookupError f 2 True
        <class 'float'> <class 'float'> 2.0
        """),
    "clear_all_cache_keeps_methods": Case(
        """
        from LIB import Dispatcher, clear_all_cache
        d = Dispatcher()
        @d
        def f(x: int, y: float = 1.0) -> float:
            return x * y
        print(f(2, 3.0))
        clear_all_cache()
        print(f(2, 3.0), f(2), len(f.methods))
        """,
        """
        6.0
        6.0 2.0 2
        """),
    "overload_registers_the_overloads": Case(
        """
        from LIB import Dispatcher, overload, get_overloads
        d = Dispatcher()
        @overload
        def do(x: int) -> int:
            "int doc"
            return x + 1
        @overload
        def do(x: str) -> str:
            return x + "!"
        @d
        def do(x):
            pass
        for e in ["do(1)", "do('a')", "do(1.0)", "len(do.methods)", "do.__doc__"]:
            try:
                print(e, repr(eval(e)))
            except LookupError as ex:
                print(e, type(ex).__name__)
        """,
        """
        do(1) 2
        do('a') 'a!'
        do(1.0) NotFoundLookupError
        len(do.methods) 2
        do.__doc__ 'int doc\\n\\n-----------------\\n\\ndo(x: str) -> str'
        """),
    "union_aliases_change_how_unions_print": Case(
        """
        from typing import Union
        from LIB import Dispatcher, activate_union_aliases, deactivate_union_aliases, set_union_alias
        U = Union[int, float]
        print(set_union_alias(U, alias="Num") is U, repr(U))
        activate_union_aliases()
        print(repr(U), str(U), repr(Union[int, float, str]), repr(Union[float, int]), repr(Union[int, str]))
        d = Dispatcher()
        @d
        def f(x: int, y: Union[int, float, str]): pass
        @d
        def f(x: str): "doc str"
        print(repr(f.methods).splitlines()[1].strip())
        try:
            set_union_alias(Union[int, float], "Other")
        except RuntimeError as e:
            print("RuntimeError", e)
        print(f(1, 2.0), f("a"))
        deactivate_union_aliases()
        print(repr(U))
        """,
        """
        True typing.Union[int, float]
        typing.Union[Num] typing.Union[Num] typing.Union[Num, str] typing.Union[Num] typing.Union[int, str]
        [0] f(x: int, y: typing.Union[Num, str])
        RuntimeError `typing.Union[Num]` already has alias `Num`.
        None None
        typing.Union[int, float]
        """,
        ),
    "helpers_where_a_function_lives": Case(
        """
        from LIB import get_class, get_context, is_in_class, wrap_lambda, argsort
        class A:
            def m(self): pass
            class B:
                def n(self): pass
        def outer():
            class L:
                def k(self): pass
            def inner(): pass
            return L, inner
        L, inner = outer()
        def top(): pass
        m = __name__
        for e in ["get_class(A.m)", "get_class(A.B.n)", "get_class(L.k)", "get_class(top)", "get_context(A.m)",
                  "get_context(A.B.n)", "get_context(top)", "get_context(inner)", "get_context(L.k)",
                  "is_in_class(A.m)", "is_in_class(top)", "is_in_class(inner)", "is_in_class(L.k)",
                  "wrap_lambda(len)([1, 2])", "argsort([3, 1, 2])"]:
            print(e, repr(eval(e)).replace(m, "M"))
        """,
        """
        get_class(A.m) 'M.A'
        get_class(A.B.n) 'M.A.B'
        get_class(L.k) 'M.outer.<locals>.L'
        get_class(top) 'M'
        get_context(A.m) 'M'
        get_context(A.B.n) 'M.A'
        get_context(top) 'M'
        get_context(inner) 'M.outer.<locals>'
        get_context(L.k) 'M.outer.<locals>'
        is_in_class(A.m) True
        is_in_class(top) False
        is_in_class(inner) False
        is_in_class(L.k) True
        wrap_lambda(len)([1, 2]) 2
        argsort([3, 1, 2]) [1, 2, 0]
        """),
    "introspection_helpers": Case(
        """
        from LIB import (extract_return_type, inspect_signature, append_default_args, Signature, Comparable,
                         COMPILED, TypeHint, Callable)
        def f(x: int, y: "float" = 1.0) -> "list[int]": pass
        def g(x): pass
        print(extract_return_type(f), inspect_signature(f), append_default_args(Signature(int, float), f))
        print(extract_return_type(g), append_default_args(Signature(object), g), isinstance(COMPILED, bool))
        class C(Comparable):
            def __init__(self, v): self.v = v
            def __le__(self, o): return self.v <= o.v
        print(C(1) < C(2), C(2) == C(2), C(1) >= C(2), C(1).is_comparable(C(2)), C(1) != C(2), C(1) > C(0))
        """,
        """
        list[int] (x: int, y: 'float' = 1.0) -> 'list[int]' [Signature(int, float), Signature(int)]
        typing.Any [Signature(object)] True
        True True False True True True
        """),
    "repr_helpers": Case(
        """
        import typing
        import numpy as np
        from LIB.repr import repr_short, repr_type, repr_source_path, repr_pyfunction
        class A: pass
        def top(): pass
        m = __name__
        for e in ["repr_short(int)", "repr_short(np.ndarray)", "repr_short(A)", "repr_short(typing.Union[int, str])",
                  "repr_short(int | None)", "repr_short(list[int])", "repr_short(1)", "repr_short('a')",
                  "repr_short(typing.Any)", "repr_short(None)", "repr_short(typing.Literal[1])",
                  "str(repr_type(int))", "str(repr_type(np.ndarray))",
                  "repr_source_path(top)", "str(repr_pyfunction(top)).startswith('<function top at')"]:
            v = eval(e)
            print(e, v.replace(m, "M") if isinstance(v, str) else v)
        """,
        """
        repr_short(int) int
        repr_short(np.ndarray) numpy.ndarray
        repr_short(A) M.A
        repr_short(typing.Union[int, str]) typing.Union[int, str]
        repr_short(int | None) int | None
        repr_short(list[int]) list[int]
        repr_short(1) 1
        repr_short('a') 'a'
        repr_short(typing.Any) typing.Any
        repr_short(None) None
        repr_short(typing.Literal[1]) typing.Literal[1]
        str(repr_type(int)) int
        str(repr_type(np.ndarray)) numpy.ndarray
        repr_source_path(top) None
        str(repr_pyfunction(top)).startswith('<function top at') True
        """),
}

if importlib.util.find_spec("IPython") is not None:
    CASES["autoreload_maps_reloaded_classes"] = Case(
        """
        from IPython.extensions import autoreload
        from LIB import Dispatcher, activate_autoreload, deactivate_autoreload, type_mapping
        d = Dispatcher()
        class A1: pass
        @d
        def f(x: A1): return "A"
        @d
        def f(x: int): return "int"
        print(f(A1()), f(1))
        class A2: pass
        class A3: pass
        original = autoreload.update_instances
        activate_autoreload()
        print(autoreload.update_instances is not original)
        autoreload.update_instances(A1, A2)
        print(f(A2()), f(1))
        autoreload.update_instances(A2, A3)
        print(f(A3()), type_mapping[A1] is A3, type_mapping[A2] is A3)
        deactivate_autoreload()
        print(autoreload.update_instances is original)
        type_mapping.clear()
        """,
        """
        A int
        True
        A int
        A True True
        True
        """)


@pytest.mark.parametrize("name", CASES)
def test_frostjit_api_behaves_as_plum(name):
    assert run_here(CASES[name].source, name) == CASES[name].expected


@pytest.mark.parametrize("name", CASES)
def test_plum_reference_output(name, plum_outputs):
    assert plum_outputs[name] == CASES[name].plum


def test_redefinition_warns_once_not_again_after_clear_cache():
    # plum keeps every replaced registration and warns again when clear_cache() re-resolves
    # them; frostjit forgets replaced methods (they would stay alive for ever otherwise).
    import warnings

    from frostjit.dispatch import Dispatcher, MethodRedefinitionWarning
    d = Dispatcher(warn_redefinition=True)

    @d
    def k(x: int):
        return 1

    @d
    def k(x: int):
        return 2

    with pytest.warns(MethodRedefinitionWarning):
        assert k(1) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k.clear_cache()
        assert k(1) == 2


def test_every_name_plum_exports_is_here_and_star_import_keeps_builtins():
    import frostjit.dispatch as fd
    namespace: dict = {}
    exec("from frostjit.dispatch import *", namespace)
    assert "isinstance" not in namespace and "issubclass" not in namespace and "repr" not in namespace
    assert fd.isinstance([1], list[int]) and fd.issubclass(list[int], list)
    if importlib.util.find_spec("plum") is not None:
        import subprocess
        import sys
        out = subprocess.run([sys.executable, "-c", "import plum; print(' '.join(plum.__all__))"],
                             capture_output=True, text=True, timeout=120)
        missing = [n for n in out.stdout.split() if n not in fd.__all__ or not hasattr(fd, n)]
        assert not missing, missing


def test_dispatched_function_signature_is_neutral():
    import inspect

    from frostjit.dispatch import Dispatcher
    d = Dispatcher()

    @d
    def f(x: int):
        return x

    assert str(inspect.signature(f)) == "(*args, **kwargs)"
