"""Dispatch API and resolution semantics (plum-compatible surface)."""

import functools
import gc
import numbers
import typing
import weakref
from typing import Any, Literal, Optional, Union

import pytest

from frostjit.dispatch import (AmbiguousLookupError, Dispatcher, NotFoundLookupError, Signature,
                               dispatch, is_dispatched)

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")


def test_global_dispatch_collects_methods_by_name():
    @dispatch
    def f(x: int):
        return "int"

    @dispatch
    def f(x: float):
        return "float"

    assert f(1) == "int" and f(1.0) == "float"
    assert len(f.methods) == 2


def test_lookup_errors_are_lookup_errors():
    assert issubclass(NotFoundLookupError, LookupError)
    assert issubclass(AmbiguousLookupError, LookupError)


def test_not_found_message_shows_types_and_candidates_with_location():
    d = Dispatcher()

    @d
    def f(x: int, y: int):
        return 1

    with pytest.raises(NotFoundLookupError) as e:
        f("a", 2)
    msg = str(e.value)
    assert msg.startswith("`f(str, int)` could not be resolved.")
    assert "f(x: int, y: int)" in msg
    assert f"{__file__}:" in msg


def test_ambiguity_message_lists_candidates():
    d = Dispatcher()

    @d
    def k(x: int, y: Any):
        return 1

    @d
    def k(x: Any, y: int):
        return 2

    with pytest.raises(AmbiguousLookupError, match=r"^`k\(int, int\)` is ambiguous\.\n\nCandidates:"):
        k(1, 1)
    assert k(1, "a") == 1 and k("a", 1) == 2


def test_precedence_breaks_ties_only():
    d = Dispatcher()

    @d
    def k(x: int, y: Any):
        return 1

    @d(precedence=1)
    def k(x: Any, y: int):
        return 2

    assert k(1, 1) == 2

    @d(precedence=5)
    def g(x: numbers.Number):
        return "number"

    @d
    def g(x: int):
        return "int"

    assert g(1) == "int"  # a more specific method wins over a higher precedence


class A: pass
class B1(A): pass
class B2(A): pass
class C1(B1, B2): pass


def test_diamond_inheritance_is_ambiguous():
    d = Dispatcher()

    @d
    def f(x: B1):
        return "B1"

    @d
    def f(x: B2):
        return "B2"

    assert f(B1()) == "B1" and f(B2()) == "B2"
    with pytest.raises(AmbiguousLookupError):
        f(C1())

    @d
    def f(x: C1):
        return "C1"

    assert f(C1()) == "C1"


class Num: pass
class Re(Num): pass
class Rat(Re): pass


def _varargs_table():
    d = Dispatcher()

    @d
    def f(a: Num):
        return "number"

    @d
    def f(a: Num, b: Num):
        return "two numbers"

    @d
    def f(a: Num, b: Rat):
        return "a number and a rational"

    @d
    def f(a: Num, b: Num, *cs: Num):
        return "two or more numbers"

    @d
    def f(a: Num, b: Num, *cs: Re):
        return "two numbers and more reals"

    @d
    def f(a: Rat, b: Num, *cs: Re):
        return "a rational, a number, and more reals"

    @d
    def f(a: Re, b: Num, *cs: Rat):
        return "a real, a number, and more rationals"

    @d
    def f(*args):
        return "fallback"

    return f


@pytest.mark.parametrize(
    "args, expected",
    [
        ((), "fallback"),
        ((Num(),), "number"),
        ((Num(), object()), "fallback"),
        ((object(), Num()), "fallback"),
        ((Num(), Num()), "two numbers"),
        ((Num(), Num(), Num()), "two or more numbers"),
        ((Rat(), Rat(), Rat()), AmbiguousLookupError),
        ((Rat(), Re(), Rat()), AmbiguousLookupError),
        ((Rat(), Num(), Rat()), AmbiguousLookupError),
        ((Rat(), Num(), Re()), "a rational, a number, and more reals"),
        ((Re(), Num(), Rat()), "a real, a number, and more rationals"),
        ((Num(), Rat(), Rat()), "two numbers and more reals"),
        ((Num(), Num(), Rat()), "two numbers and more reals"),
        ((Rat(), Rat()), AmbiguousLookupError),
        ((Num(), Rat()), "a number and a rational"),
    ],
)
def test_varargs_table(args, expected):
    f = _varargs_table()
    if isinstance(expected, type):
        with pytest.raises(expected):
            f(*args)
    else:
        assert f(*args) == expected


@pytest.mark.parametrize(
    "methods, call, expected",
    [
        # (signature, precedence, label) tables
        ([((int,), 0, "a"), ((int,), 1, "b")], (1,), "b"),  # redefinition replaces
        ([((int, Any), 0, "a"), ((Any, int), 0, "b")], (1, 1), AmbiguousLookupError),
        ([((int, Any), 1, "a"), ((Any, int), 0, "b")], (1, 1), "a"),
        ([((int, Any), 0, "a"), ((Any, int), 2, "b")], (1, 1), "b"),
        ([((numbers.Number,), 3, "a"), ((int,), 0, "b")], (1,), "b"),
        ([((numbers.Number,), 3, "a"), ((int,), 0, "b")], (1.0,), "a"),
        ([((Union[int, str],), 0, "a"), ((int,), 0, "b")], ("s",), "a"),
        ([((bool,), 0, "a"), ((int,), 0, "b")], (True,), "a"),
    ],
)
def test_precedence_table(methods, call, expected):
    d = Dispatcher()
    f = None
    for types, prec, label in methods:
        def impl(*args, _label=label):
            return _label

        f = d.multi(Signature(*types, precedence=prec))(_named(impl, "p"))
    if isinstance(expected, type):
        with pytest.raises(expected):
            f(*call)
    else:
        assert f(*call) == expected


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


def test_multi_and_bad_multi():
    d = Dispatcher()

    @d.multi((int,), (float,))
    def f(x):
        return type(x).__name__

    assert f(1) == "int" and f(1.0) == "float"
    with pytest.raises(NotFoundLookupError):
        f("a")
    with pytest.raises(TypeError):
        d.multi([int])


def test_abstract_function_has_no_methods_and_keeps_doc():
    d = Dispatcher()

    @d.abstract
    def f(x):
        """Do the thing."""

    assert len(f.methods) == 0
    assert "Do the thing." in f.__doc__
    with pytest.raises(NotFoundLookupError):
        f(1)

    @f.dispatch
    def impl(x: int):
        return "int"

    assert f(1) == "int"


def test_function_object_dispatch_and_register():
    d = Dispatcher()

    @d
    def f(x: int):
        return "int"

    @f.dispatch
    def whatever_name(x: str):
        return "str"

    @f.dispatch(precedence=2)
    def other(x: float):
        return "float"

    f.register(lambda x: "bytes", (bytes,))
    assert (f(1), f("a"), f(1.0), f(b"x")) == ("int", "str", "float", "bytes")


def test_doc_lists_methods_and_their_docstrings():
    d = Dispatcher()

    @d
    def f(x: int) -> int:
        """Handle ints."""
        return x

    @d
    def f(x: str):
        """Handle strings."""
        return x

    # plum's layout: the first definition's docstring, then a rule and each other method.
    assert f.__doc__ == "Handle ints.\n\n---------------\n\nf(x: str)\n\nHandle strings."
    f.__doc__ = "custom"  # writable (fastcore's add_docs)
    assert f.__doc__ == "custom"


def test_weakref_wraps_and_metadata():
    d = Dispatcher()

    @d
    def f(x: int):
        return x + 1

    r = weakref.ref(f)
    assert r() is f
    assert f.__name__ == "f" and f.__qualname__.endswith("f") and f.__module__ == __name__

    @functools.wraps(f)
    def wrapper(*a):
        return f(*a) * 10

    assert wrapper(1) == 20 and wrapper.__name__ == "f"
    hash(f)


def test_invoke_returns_the_implementation():
    d = Dispatcher()

    def int_impl(x: int):
        return "int"

    f = d(int_impl)

    @d
    def int_impl(x: numbers.Number):
        return "number"

    assert f.invoke(int) is f.methods[0].implementation
    assert f.invoke(float)(1.0) == "number"
    assert f.invoke(bool)(True) == "int"
    with pytest.raises(NotFoundLookupError):
        f.invoke(str)


def test_invoke_checks_the_return_annotation_like_a_call():
    d = Dispatcher()

    @d
    def f(x: int) -> int:
        """Docs of the int method."""
        return x

    @d
    def f(x: str) -> int:
        return x

    g = f.invoke(int)
    assert g(3) == 3 and g.__wrapped__ is f.methods[0].implementation
    assert g.__doc__ == "Docs of the int method." and g.__name__ == "f"
    with pytest.raises(TypeError, match="return annotation"):
        f.invoke(str)("not an int")
    with pytest.raises(TypeError, match="return annotation"):
        f("not an int")


def test_invoke_on_methods_takes_self_class_first():
    class Shape:
        @dispatch
        def area(self, scale: int) -> int:
            return 10 * scale

        @dispatch
        def area(self, scale: float):
            return "float"

    class Square(Shape):
        pass

    s = Square()
    assert Shape.area.invoke(Shape, int)(s, 2) == 20  # plum: C.method.invoke(C, int)
    assert Square.area.invoke(Square, float)(s, 2.0) == "float"
    with pytest.raises(TypeError, match="return annotation"):
        Shape.area.invoke(Shape, int)(s, "x")
    # Through an instance the dispatched function is a plain bound method; `invoke` cannot see
    # the instance, and says how to spell the call instead.
    with pytest.raises(NotFoundLookupError, match=r"C\.area\.invoke\(C, \.\.\.\)"):
        s.area.invoke(int)
    with pytest.raises(NotFoundLookupError):
        Shape.area.invoke(Shape, str)


def test_keyword_arguments_are_passed_through_not_dispatched():
    d = Dispatcher()

    @d
    def f(x: int, *, scale: float = 1.0):
        return x * scale

    assert f(2, scale=3.0) == 6.0
    assert f(2) == 2

    @d
    def g(x: int, y: float = 1.5):
        return (x, y)

    assert g(1) == (1, 1.5) and g(1, 2.5) == (1, 2.5) and g(1, y=3.5) == (1, 3.5)
    with pytest.raises(NotFoundLookupError):
        g(x=1)  # positional parameters are dispatched positionally


def test_keyword_arguments_pass_through_fixed_arity_call_paths():
    d = Dispatcher()

    def scaled(x, y, scale=1):
        return (x + y) * scale

    f = d.multi((int, int))(scaled)  # explicit signature: `scale` is not dispatched on
    assert f(1, 2) == 3 and f(1, 2, scale=10) == 30
    with pytest.raises(TypeError, match="scaled\\(\\) got an unexpected keyword argument 'bogus'"):
        f(1, 2, bogus=1)  # the method's own error

    @d
    def g(x: int, y: int, *, scale: int = 1):
        return (x + y) * scale

    @d
    def g(x: float, y: float):
        return "no keywords"

    assert g(1, 2, scale=3) == 9 and g(1.0, 2.0) == "no keywords"
    with pytest.raises(TypeError, match="unexpected keyword argument 'scale'"):
        g(1.0, 2.0, scale=3)  # this method takes no `scale`: its own TypeError
    with pytest.raises(NotFoundLookupError):
        g(1, scale=3)  # positional parameters are dispatched positionally

    @d
    def h(x: int, **options):
        return options

    assert h(1, a=1, b=2) == {"a": 1, "b": 2} and h(1) == {}

    @d
    def plain(x: int):
        return x

    with pytest.raises(TypeError, match="unexpected keyword argument 'scale'"):
        plain(1, scale=2)  # no method takes keywords: Python's TypeError, as for the method


def test_default_must_match_annotation():
    d = Dispatcher()

    @d
    def f(x: int, y: int = "no"):
        return 1

    with pytest.raises(TypeError):
        f(1)


def test_annotation_kinds():
    d = Dispatcher()

    @d(precedence=1)  # int is also a SupportsIndex: precedence settles it
    def f(x: Optional[int]):
        return "opt-int"

    @d
    def f(x: str | bytes):
        return "text"

    @d
    def f(x: tuple[int, ...]):
        return "int-tuple"

    @d
    def f(x: list[float]):
        return "float-list"

    @d
    def f(x: dict[str, int]):
        return "str-int-dict"

    @d
    def f(x: type[numbers.Number]):
        return "number-class"

    @d
    def f(x: Quacks):
        return "quacks"

    @d
    def f(x: Any):
        return "any"

    assert f(None) == "opt-int" and f(3) == "opt-int"
    assert f("a") == "text" and f(b"a") == "text"
    assert f((1, 2)) == "int-tuple" and f((1, "a")) == "any"
    assert f([1.0, 2.0]) == "float-list" and f([1.0, "x"]) == "any"
    assert f({"a": 1}) == "str-int-dict" and f({1: 1}) == "any"
    assert f(int) == "number-class" and f(str) == "any"
    assert f(Duck()) == "quacks"
    assert f(3.5) == "any"


@typing.runtime_checkable
class Quacks(typing.Protocol):
    def quack(self) -> str: ...


class Duck:
    def quack(self):
        return "quack"


def test_literal_dispatch():
    d = Dispatcher()

    @d
    def mode(x: Literal["fast"]):
        return "fast"

    @d
    def mode(x: str):
        return "other"

    @d
    def mode(x: int):
        return "int"

    for _ in range(3):
        assert mode("fast") == "fast" and mode("slow") == "other" and mode(1) == "int"


def test_return_annotation_is_checked():
    d = Dispatcher()

    @d
    def f(x: int) -> int:
        return x

    @d
    def f(x: str) -> int:
        return x

    assert f(1) == 1 and f(1) == 1
    with pytest.raises(TypeError, match="return annotation"):
        f("a")


def test_string_forward_references_resolve_at_first_call():
    d = Dispatcher()

    @d
    def f(x: "LaterDefined"):  # noqa: F821  (defined below, resolved at the first call)
        return "later"

    globals()["LaterDefined"] = type("LaterDefined", (), {})
    try:
        assert f(LaterDefined()) == "later"  # noqa: F821
    finally:
        del globals()["LaterDefined"]


class Device:
    @dispatch
    def do(self, x: Num, y: Num):
        return "two numbers"

    @dispatch
    def do(self):
        return "nothing"

    @dispatch
    def do(self, other: "Device"):
        return "a device"

    @dispatch
    def do(self, x: Re, y: Num):
        return "a real and a number"

    def __add__(self, other):
        return "unknown device"

    def compute(self, x):
        return "base compute"


class Calculator(Device):
    @dispatch
    def __add__(self, other: "Calculator"):
        return "super calculator"

    @dispatch
    def compute(self, x: int):
        return "int compute"


def test_class_methods_dispatch_on_self_and_arguments():
    dev = Device()
    assert dev.do() == "nothing"
    assert dev.do(Rat(), Rat()) == "a real and a number"
    assert dev.do(Num(), Re()) == "two numbers"
    assert dev.do(dev) == "a device"
    assert Device.do(dev, Re(), Num()) == "a real and a number"


def test_class_methods_fall_back_along_the_mro():
    calc, dev = Calculator(), Device()
    assert calc + calc == "super calculator"
    assert calc + dev == "unknown device"
    assert calc.compute(1) == "int compute"
    assert calc.compute("x") == "base compute"
    assert calc.compute("x") == "base compute"  # from the cache


def test_staticmethod_and_classmethod():
    class K:
        @staticmethod
        @dispatch
        def s(x: int):
            return "int"

        @classmethod
        @dispatch
        def c(cls, x: int):
            return cls.__name__

    assert K.s(1) == "int" and K().s(1) == "int"
    assert K.c(1) == "K"


def test_c_callables_and_odd_arities():
    d = Dispatcher()
    import math

    f = d.multi((float,))(math.sqrt)
    assert f(4.0) == 2.0

    @d
    def g(a: int, b: int, c: int, e: int, h: int, i: int):
        return a + b + c + e + h + i

    assert g(1, 2, 3, 4, 5, 6) == 21


def test_repr_of_methods_lists_locations():
    d = Dispatcher()

    @d
    def f(x: int):
        return x

    assert "f(x: int)" in repr(f.methods) and __file__ in repr(f.methods)
    assert "f(x: int)" in repr(f.methods[0]) and __file__ in repr(f.methods[0])
    assert str(f.methods[0]).startswith("Method(function_name='f', signature=Signature(int), ")


def test_functions_are_collected_when_unreferenced():
    d = Dispatcher()

    @d
    def f(x: int):
        return x

    r = weakref.ref(f)
    del f, d
    gc.collect()
    assert r() is None


def test_wrong_arity_of_fixed_arity_functions():
    d = Dispatcher()

    @d
    def f(x: int):
        return x

    # Too few or too many: no method takes that many arguments (as in plum).
    with pytest.raises(NotFoundLookupError):
        f()
    with pytest.raises(NotFoundLookupError, match=r"`f\(int, int\)` could not be resolved"):
        f(1, 2)

    @d
    def g(x: int, *, scale: int = 1):  # takes keywords: the call path has ``**kw``
        return x * scale

    with pytest.raises(NotFoundLookupError):
        g(1, 2)
    with pytest.raises(NotFoundLookupError):
        g(1, 2, scale=3)
    with pytest.raises(NotFoundLookupError):
        g()
    with pytest.raises(NotFoundLookupError):
        g(scale=2)

    @d
    def h(x: int, y: int = 0):  # several arities: the *args path finds no method
        return x

    with pytest.raises(NotFoundLookupError):
        h(1, 2, 3)


def test_dispatch_package_does_not_import_jax_or_the_jit():
    import subprocess
    import sys

    code = "import sys, frostjit.dispatch; print('jax' in sys.modules, 'frostjit.llvm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert out.stdout.split()[0] == "False"


def test_the_package_is_the_global_dispatcher_whichever_way_it_is_imported():
    import frostjit
    import frostjit.dispatch as imported
    from frostjit import dispatch
    from frostjit.dispatch import dispatch as inner
    assert dispatch is frostjit.dispatch is imported is inner
    assert isinstance(dispatch, Dispatcher)
    assert frostjit.dispatch.DispatchCache is frostjit.DispatchCache
    assert callable(frostjit.dispatch.observe_calls) and callable(dispatch.multi)
    # The implementation modules are private: no public name is shadowed by a submodule.
    import frostjit.dispatch._function  # noqa: F401
    assert frostjit.dispatch._function.__name__ == "frostjit.dispatch._function"
    with pytest.raises(AttributeError, match="no_such_name"):
        frostjit.dispatch.no_such_name


def test_is_dispatched_recognises_dispatched_functions_and_their_bound_methods():
    d = Dispatcher()

    @d
    def f(x: int):
        return x

    class C:
        @d
        def m(self, x: int):
            return x

    class Liar:
        def __getattr__(self, name):
            raise AssertionError(f"__getattr__ ran for {name}")

    assert is_dispatched(f) and is_dispatched(C().m) and is_dispatched(C.m)
    assert not is_dispatched(print) and not is_dispatched(lambda: 0) and not is_dispatched(Liar())
    assert not is_dispatched(f.__wrapped__ if hasattr(f, "__wrapped__") else 3)
