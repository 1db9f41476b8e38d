"""A library function replaced between calls of a frozen function (session r13, lane libfn).

Before r13 (lane libfn) the functions, classes and submodules a frozen function read from a
library module (``math.sqrt``, ``np.sin``, ``fj.sqrt``, a third-party package's function) were
taken as constant: ``math.sqrt = f``, ``mock.patch("numpy.sin", f)`` or a monkeypatched package
function replayed the recording made with the old one (the worst kind of bug: a replay that differs
from the plain call).  Now every library module entry a recording read is guarded by identity
(freeze/guards.py ``_library_entry``: the entries of one module checked together), so are a
library class's methods, the module ``importlib.import_module`` returned, and the module entry
of each library function that ran for the user's code (``mock.patch("pkg.helper")`` of a helper
the package's own function calls: readset ``_library_function``).  Putting the old function
back replays the first recording again without tracing.  Every test here fails on b4f6ada.
"""
import importlib
import math
import sys
import textwrap
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Float

pytestmark = pytest.mark.no_freeze_check      # (the test compares with the plain call itself)

WIDTHS = (1, 7, 1000)


def _value(v):
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v).tolist()


def _x(w):
    return Float(np.arange(w, dtype=np.float32) + 1)


def _same(fz, fn, x):
    got, ref = _value(fz(x)), _value(fn(x))
    assert got == ref, (got, ref)


@pytest.mark.parametrize("w", WIDTHS)
def test_math_function_replaced_then_restored(w, monkeypatch):
    def fn(x):
        return x * math.sqrt(4.0)
    fz, x = fj.freeze(fn), _x(w)
    _same(fz, fn, x)
    monkeypatch.setattr(math, "sqrt", lambda v: 10.0)
    _same(fz, fn, x)
    assert fz.n_recordings == 2
    monkeypatch.undo()
    _same(fz, fn, x)
    assert fz.n_recordings == 2         # the first recording replays again (its guard holds)


@pytest.mark.parametrize("w", WIDTHS)
def test_numpy_function_mock_patched(w):
    def fn(x):
        return x * float(np.sin(1.0)) + float(np.cos(0.0))
    fz, x = fj.freeze(fn), _x(w)
    _same(fz, fn, x)
    with mock.patch("numpy.sin", lambda v: 5.0):
        _same(fz, fn, x)
        _same(fz, fn, x)
    with mock.patch("numpy.cos", lambda v: -2.0):
        _same(fz, fn, x)
    _same(fz, fn, x)
    assert fz.n_recordings == 3


def test_frostjit_function_patched():
    def fn(x):
        return fj.sqrt(x) + 1
    fz, x = fj.freeze(fn), _x(7)
    _same(fz, fn, x)
    with mock.patch("frostjit.sqrt", lambda v: v * 3):
        _same(fz, fn, x)
    _same(fz, fn, x)
    assert fz.n_recordings == 2


def test_from_import_inside_the_function(monkeypatch):
    def fn(x):
        from math import exp
        return x * exp(1.0)
    fz, x = fj.freeze(fn), _x(7)
    _same(fz, fn, x)
    monkeypatch.setattr(math, "exp", lambda v: 3.0)
    _same(fz, fn, x)


def test_read_in_a_helper(monkeypatch):
    def fn(x):
        return x * _sqrt_of(9.0)
    fz, x = fj.freeze(fn), _x(7)
    _same(fz, fn, x)
    monkeypatch.setattr(math, "sqrt", lambda v: -1.0)
    _same(fz, fn, x)


def _sqrt_of(v):
    return math.sqrt(v)


@pytest.fixture
def fakepkg(tmp_path, monkeypatch):
    """A third-party package (its files under a ``site-packages`` folder: a library's code)."""
    root = tmp_path / "site-packages"
    pkg = root / "libfn_fakepkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        from . import sub

        def scale():
            return 2.0

        def helper():
            return 3.0

        def uses_helper():
            return helper() + 1.0

        class Unit:
            factor = 1.0
        """))
    (pkg / "sub" / "__init__.py").write_text("def offset():\n    return 1.0\n")
    (pkg / "defs.py").write_text("def h():\n    return 2.0\n")
    (pkg / "uses.py").write_text("from .defs import h\n\ndef g():\n    return h() * 10.0\n")
    monkeypatch.syspath_prepend(str(root))
    mod = importlib.import_module("libfn_fakepkg")
    yield mod
    for name in ("libfn_fakepkg", "libfn_fakepkg.sub", "libfn_fakepkg.defs", "libfn_fakepkg.uses"):
        sys.modules.pop(name, None)


def test_third_party_function_and_submodule_replaced(fakepkg, monkeypatch):
    from frostjit.freeze.code import _is_library_module
    assert _is_library_module(fakepkg)

    def fn(x):
        return x * fakepkg.scale() + fakepkg.sub.offset()
    fz, x = fj.freeze(fn), _x(7)
    _same(fz, fn, x)
    monkeypatch.setattr(fakepkg, "scale", lambda: 5.0)
    _same(fz, fn, x)
    new_sub = type(sys)("libfn_fakepkg_sub2")
    new_sub.offset = lambda: 100.0
    monkeypatch.setattr(fakepkg, "sub", new_sub)        # a submodule swapped
    _same(fz, fn, x)
    monkeypatch.setattr(fakepkg.sub, "offset", lambda: -3.0)
    _same(fz, fn, x)
    monkeypatch.undo()
    _same(fz, fn, x)
    assert fz.n_recordings == 4


def test_third_party_class_replaced(fakepkg, monkeypatch):
    def fn(x):
        return x * fakepkg.Unit.factor
    fz, x = fj.freeze(fn), _x(7)
    _same(fz, fn, x)
    monkeypatch.setattr(fakepkg, "Unit", type("Unit", (), {"factor": 4.0}))
    _same(fz, fn, x)


_IMPLS = (math.sqrt, lambda v: 10.0, lambda v: -v, math.sqrt)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(0, len(_IMPLS) - 1), min_size=2, max_size=8))
def test_frozen_equals_plain_under_any_patch_sequence(picks):
    """Frozen vs plain over a sequence of ``math.sqrt`` replacements (back and forth): equal
    every call, and one recording per distinct function at most."""
    def fn(x):
        return x * math.sqrt(4.0)
    fz, x = fj.freeze(fn), _x(7)
    old = math.sqrt
    try:
        for p in picks:
            math.sqrt = _IMPLS[p]
            _same(fz, fn, x)
    finally:
        math.sqrt = old
    assert fz.n_recordings <= len({id(_IMPLS[p]) for p in picks})


def test_import_module_result(fakepkg, monkeypatch):
    """``importlib.import_module(name).k``: an attribute of a call's result that is a module."""
    def fn(x):
        return x * importlib.import_module("libfn_fakepkg").scale() + importlib.import_module("math").sqrt(4.0)
    fz, x = fj.freeze(fn), _x(7)
    _same(fz, fn, x)
    monkeypatch.setattr(fakepkg, "scale", lambda: -4.0)
    _same(fz, fn, x)
    monkeypatch.setattr(math, "sqrt", lambda v: 9.0)
    _same(fz, fn, x)
    monkeypatch.undo()
    _same(fz, fn, x)
    assert fz.n_recordings == 3


def test_import_module_of_a_user_module(tmp_path, monkeypatch):
    (tmp_path / "libfn_user_settings.py").write_text("K = 2.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "libfn_user_settings", raising=False)

    def fn(x):
        return x * importlib.import_module("libfn_user_settings").K
    fz, x = fj.freeze(fn), _x(7)
    _same(fz, fn, x)
    monkeypatch.setattr(sys.modules["libfn_user_settings"], "K", 5.0)
    _same(fz, fn, x)


def test_library_class_method_patched(fakepkg):
    """A library class's method read on a fresh instance (``json.JSONEncoder().encode``)."""
    import json

    def fn(x):
        return x * len(json.JSONEncoder().encode([1]))
    fz, x = fj.freeze(fn), _x(7)
    _same(fz, fn, x)
    with mock.patch.object(json.JSONEncoder, "encode", lambda self, o: "abcdefg"):
        _same(fz, fn, x)
    _same(fz, fn, x)
    assert fz.n_recordings == 2


def test_library_subclass_and_instance_patched(fakepkg, monkeypatch):
    """An inherited library method shadowed on the subclass, then on the instance."""
    import json

    class_ = type("LibfnEncoder", (json.JSONEncoder,), {"__module__": "json"})
    enc = class_()
    monkeypatch.setattr(json, "LibfnEncoder", class_, raising=False)

    def fn(x):
        return x * len(enc.encode([1]))
    fz, x = fj.freeze(fn), _x(7)
    _same(fz, fn, x)
    monkeypatch.setattr(class_, "encode", lambda self, o: "abcde")
    _same(fz, fn, x)
    monkeypatch.undo()
    monkeypatch.setattr(enc, "encode", lambda o: "abcdefghi", raising=False)
    _same(fz, fn, x)


def test_library_function_calling_a_patched_helper(fakepkg):
    """``mock.patch("pkg.helper")`` where the package's own function calls ``helper``: the read
    is in library code (not watched), the helper's module entry is guarded because it ran."""
    fz = _patched_runs(lambda x: x * fakepkg.uses_helper(), ("libfn_fakepkg.helper", -5.0))
    assert fz.n_recordings == 2


def _patched_runs(fn, *patches):
    """Frozen vs plain before, under each ``(target, value)`` patch in turn, and after."""
    fz, x = fj.freeze(fn), _x(7)
    _same(fz, fn, x)
    for target, value in patches:
        with mock.patch(target, lambda value=value: value):
            _same(fz, fn, x)
    _same(fz, fn, x)
    return fz


def test_helper_patched_where_it_is_used(fakepkg):
    """``pkg.uses`` did ``from .defs import h``: ``mock.patch("pkg.uses.h")`` (patch where it is
    used) and ``mock.patch("pkg.defs.h")`` (which the plain call does not see) both stay right."""
    uses = importlib.import_module("libfn_fakepkg.uses")

    _patched_runs(lambda x: x * uses.g(), ("libfn_fakepkg.uses.h", -1.0), ("libfn_fakepkg.defs.h", -2.0))
