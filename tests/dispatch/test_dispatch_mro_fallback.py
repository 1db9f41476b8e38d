"""Falling back to a parent class's method (issue 8 items 30, 31), beside plum.

plum walks the MRO of the class that defined the dispatched method (its *owner*), whatever
the instance or ``cls`` the call went through, so the answer never depends on call order.
"""

import pytest

from plum_reference import Case, run_here

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")

_CLASSES = """
import functools
from LIB import Dispatcher
d = Dispatcher()
class Base:
    def compute(self, a, b=None, c=None): return "Base.compute"
    @staticmethod
    def st(x): return "Base.st"
class Sub(Base):
    @d
    def compute(self, a: str): return "Sub.compute str"
    @staticmethod
    @d
    def st(x: int): return "Sub.st int"
def deco(f):
    @functools.wraps(f)
    def wrapper(*a, **k): return f(*a, **k)
    return wrapper
class Wrapped(Base):
    @deco
    @d
    def compute(self, a: str): return "Wrapped str"
class Cached(Base):
    @functools.lru_cache
    @d
    def compute(self, a: str): return "Cached str"
def show(*calls):
    for call in calls:
        try:
            print(call, eval(call))
        except Exception as e:
            print(call, type(e).__name__)
"""

CASES = {
    "fallback_with_more_arguments_than_the_subclass_methods_take": Case(
        _CLASSES + """
show("Sub().compute('x')", "Sub().compute(1)", "Sub().compute(1, 2)", "Sub().compute(1, 2, 3)")
""", """
        Sub().compute('x') Sub.compute str
        Sub().compute(1) Base.compute
        Sub().compute(1, 2) Base.compute
        Sub().compute(1, 2, 3) Base.compute
        """),
    "fallback_under_a_functools_wraps_decorator": Case(
        _CLASSES + """
show("Wrapped().compute('x')", "Wrapped().compute(1)", "Wrapped().compute(1, 2)")
""", """
        Wrapped().compute('x') Wrapped str
        Wrapped().compute(1) Base.compute
        Wrapped().compute(1, 2) Base.compute
        """),
    "fallback_under_lru_cache": Case(
        _CLASSES + """
show("Cached().compute('x')", "Cached().compute(1)", "Cached().compute(1, 2)")
""", """
        Cached().compute('x') Cached str
        Cached().compute(1) Base.compute
        Cached().compute(1, 2) Base.compute
        """),
    "fallback_of_a_staticmethod": Case(
        _CLASSES + """
show("Sub.st(1)", "Sub.st('a')", "Sub().st('a')")
""", """
        Sub.st(1) Sub.st int
        Sub.st('a') Base.st
        Sub().st('a') Base.st
        """),
    "fallback_follows_the_owner_mro_not_the_instance_mro": Case(
        """
from LIB import Dispatcher
d = Dispatcher()
class Mixin:
    def go(self, x): return "Mixin.go"
class Plain:
    @d
    def go(self, x: int): return "Plain.go int"
class Leaf(Plain, Mixin): pass
for call in ["Leaf().go(1)", "Leaf().go('a')"]:
    try:
        print(call, eval(call))
    except Exception as e:
        print(call, type(e).__name__)
""", """
        Leaf().go(1) Plain.go int
        Leaf().go('a') NotFoundLookupError
        """),
    "fallback_skips_abstract_methods": Case(
        """
import abc
from LIB import Dispatcher
d = Dispatcher()
class AB(abc.ABC):
    @abc.abstractmethod
    def go(self, x): ...
class Impl(AB):
    @d
    def go(self, x: int): return "Impl int"
try:
    Impl().go("a")
except Exception as e:
    print(type(e).__name__)
""", """
        NotFoundLookupError
        """),
    "fallback_from_a_class_local_to_a_function": Case(
        """
from LIB import Dispatcher
def make():
    d = Dispatcher()
    class Base:
        def go(self, x): return "Base.go"
    class Sub(Base):
        @d
        def go(self, x: int): return "Sub.go int"
    return Sub
Sub = make()
print(Sub().go(1), Sub().go("a"), Sub().go("a", "b") if False else "")
""", """
        Sub.go int Base.go 
        """),
    "classmethod_fallback_does_not_depend_on_call_order": Case(
        """
from typing import Literal
from LIB import Dispatcher
def build():
    d = Dispatcher()
    class Mixin:
        @classmethod
        def make(cls, x): return "Mixin.make"
    class Base: pass
    class K(Base):
        @classmethod
        @d
        def make(cls, x: int): return "K.make int"
        @classmethod
        @d
        def make(cls, x: Literal["a"]): return "K.make a"
    class K3(K, Mixin): pass
    return K, K3
for order in ("K3 first", "K first"):
    K, K3 = build()
    calls = [("K3", K3), ("K", K)] if order == "K3 first" else [("K", K), ("K3", K3)]
    for name, C in calls + [("K()", K())]:
        for arg in ("b", "a", 1):
            try:
                out = C.make(arg)
            except Exception as e:
                out = type(e).__name__
            print(order, name, repr(arg), out)
""", """
        K3 first K3 'b' NotFoundLookupError
        K3 first K3 'a' K.make a
        K3 first K3 1 K.make int
        K3 first K 'b' NotFoundLookupError
        K3 first K 'a' K.make a
        K3 first K 1 K.make int
        K3 first K() 'b' NotFoundLookupError
        K3 first K() 'a' K.make a
        K3 first K() 1 K.make int
        K first K 'b' NotFoundLookupError
        K first K 'a' K.make a
        K first K 1 K.make int
        K first K3 'b' NotFoundLookupError
        K first K3 'a' K.make a
        K first K3 1 K.make int
        K first K() 'b' NotFoundLookupError
        K first K() 'a' K.make a
        K first K() 1 K.make int
        """),
    "classmethod_fallback_binds_the_parent_classmethod_to_cls": Case(
        """
from LIB import Dispatcher
d = Dispatcher()
class Base:
    @classmethod
    def make(cls, x): return "Base.make for " + cls.__name__
class K(Base):
    @classmethod
    @d
    def make(cls, x: int): return "K.make int"
class K2(K): pass
for call in ["K.make(1)", "K.make('b')", "K2.make('b')"]:
    try:
        print(call, eval(call))
    except Exception as e:
        print(call, type(e).__name__)
""", """
        K.make(1) K.make int
        K.make('b') Base.make for K
        K2.make('b') Base.make for K2
        """,
        # plum calls the parent classmethod bound to the parent *and* passes cls again.
        plum="""
        K.make(1) K.make int
        K.make('b') TypeError
        K2.make('b') TypeError
        """),
    "too_many_positional_arguments_is_not_found": Case(
        """
from LIB import Dispatcher
d = Dispatcher()
@d
def f(x: int): return x
@d
def g(x: int, *, scale: int = 1): return x
for call in ["f(1, 2)", "f(1, 2, 3)", "g(1, 2)", "g(1, 2, scale=3)", "f()"]:
    try:
        print(call, eval(call))
    except Exception as e:
        print(call, type(e).__name__)
""", """
        f(1, 2) NotFoundLookupError
        f(1, 2, 3) NotFoundLookupError
        g(1, 2) NotFoundLookupError
        g(1, 2, scale=3) NotFoundLookupError
        f() NotFoundLookupError
        """),
}


@pytest.mark.parametrize("name", CASES)
def test_frostjit_falls_back_as_plum(name):
    assert run_here(CASES[name].source, name) == CASES[name].expected


@pytest.mark.parametrize("name", CASES)
def test_plum_reference_output(name, plum_outputs):
    assert plum_outputs[name] == CASES[name].plum


def test_fallback_sees_a_parent_method_patched_after_the_first_call():
    from frostjit.dispatch import Dispatcher
    d = Dispatcher()

    class Base:
        def go(self, x):
            return "old"

    class Sub(Base):
        @d
        def go(self, x: int):
            return "int"

    assert Sub().go("a") == "old"
    Base.go = lambda self, x: "new"
    assert Sub().go("a") == "new"
