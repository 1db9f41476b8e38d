"""``f.methods`` and ``f.__doc__`` after redefinitions; ``invoke`` and the MRO."""

import pytest

from frostjit.dispatch import Dispatcher

pytestmark = pytest.mark.backend_independent("multiple dispatch does not use the JIT")


def test_redefinition_replaces_the_method_in_methods_and_doc():
    d = Dispatcher()

    @d
    def f(x: int):
        """first int"""
        return 1

    @d
    def f(x: float):
        return 2

    @d
    def f(x: int):
        """second int"""
        return 3

    # As plum: the redefined method is gone, its replacement takes its place; the first
    # definition's docstring still heads the docs.
    assert len(f.methods) == 2
    assert [m.implementation(0) for m in f.methods] == [3, 2]
    assert f(1) == 3
    assert f.__doc__ == "first int\n\n-----------\n\nf(x: int)\n\nsecond int\n\n-----------\n\nf(x: float)"
    assert "2 method(s)" in repr(f.methods)


def test_methods_with_forward_reference_pending_are_listed():
    d = Dispatcher()

    @d
    def g(x: "NotYetDefined"):  # noqa: F821
        return 1

    assert len(g.methods) == 1  # unresolvable for now: listed, no error until the call
    with pytest.raises(NameError):
        g(1)


class _Base:
    def m(self, x):
        return "Base.m"


class _Child(_Base):
    _d = Dispatcher()

    @_d
    def m(self, x: float):
        return "Child.m float"


def test_invoke_falls_back_along_the_mro_like_a_call():
    c = _Child()
    assert c.m(1) == "Base.m"  # a call falls back
    assert _Child.m.invoke(_Child, int)(c, 1) == "Base.m"  # so does invoke (as in plum)
    assert _Child.m.invoke(_Child, float)(c, 1.0) == "Child.m float"
    # The fallback follows the owner's MRO whatever the first type (as plum).
    assert _Child.m.invoke(int, int)(c, 1) == "Base.m"
