"""Adversarial programs against ``fj.freeze`` (session r14, lane redteam): each calls the frozen
function and the plain function side by side at several widths, changes state between calls, and
requires bit-equal results (never a stale replay) and few recordings.

Found stale before r14 and fixed:

* a class attribute found on a base class after ``Cls.__bases__`` was reassigned (the MRO changed,
  every class dict consulted still held: ``lookup._find_in_mro`` guards the MRO tuple);
* a NaN's sign and payload (``float.hex`` writes every NaN as ``'nan'``): ``-nan`` or a NaN with a
  payload as an argument, in a container, or hidden replayed the recording of ``nan``
  (``values.float_bits``);
* a set's iteration order (keyed as a frozenset: ``next(iter(s))``, a float ``sum(s)`` see the
  order, which depends on the insertion history), for arguments and hidden sets;
* the key order of a class dict read through ``vars(K)`` / ``K.__dict__`` (the mappingproxy is
  new at each access, so it was taken as fresh and not guarded: ``readset._viewed``).
"""
import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frostjit as fj
from frostjit.llvm import Float
from freeze_helpers import bits as _bits, differential

pytestmark = pytest.mark.no_freeze_check      # (the test compares with the plain call itself)

WIDTHS = (1, 7, 100)


def _x(w):
    return Float(np.arange(w, dtype=np.float32) + 1)


# -- the MRO ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("w", WIDTHS)
def test_bases_reassigned_between_calls(w):
    class B1:
        s = 2.0

    class B2:
        s = 5.0

    class S(B1):
        pass

    o = S()

    def change(k):
        S.__bases__ = (B2,) if k == 2 else (B1,)

    fz = differential(lambda x: x * o.s, lambda k: (_x(w),), change)
    assert fz.n_recordings == 2         # putting B1 back replays the first recording


def test_bases_of_a_class_read_through_the_class():
    class B1:
        s = 2.0

    class B2:
        s = 5.0

    class M(B1):
        pass

    class S(M):
        pass

    def change(k):
        M.__bases__ = (B2,) if k == 2 else (B1,)     # (S's MRO changes with its base's)

    differential(lambda x: x * S.s, lambda k: (_x(7),), change)


def test_an_attribute_of_the_class_itself_needs_no_mro_guard():
    class B:
        pass

    class S(B):
        s = 2.0

    from frostjit.freeze.lookup import read_attr
    v, atoms = read_attr(S(), "s", "o.s", "here")
    assert v == 2.0 and not any(a.key == "__mro__" for a in atoms)
    v, atoms = read_attr(S(), "t", "o.t", "here")       # (absent: the bases were consulted)
    assert any(a.key == "__mro__" for a in atoms)


# -- NaN sign and payload ----------------------------------------------------------------------------
NAN = float("nan")
NEG_NAN = -NAN
PAYLOAD_NAN = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
NANS = [NAN, NAN, NEG_NAN, NEG_NAN, PAYLOAD_NAN, NAN]


def _sign(p):
    return math.copysign(1.0, p)


def _payload(p):
    return float(struct.pack("<d", p)[0] + 1)


@pytest.mark.parametrize("w", WIDTHS)
@pytest.mark.parametrize("where", ["direct", "list", "dict", "tuple", "object"])
@pytest.mark.parametrize("use", [_sign, _payload])
def test_nan_sign_and_payload_of_an_argument(w, where, use):
    class Box:
        def __init__(self, p):
            self.p = p

        def __eq__(self, other):        # (keyed by ==: its attributes are walked)
            return type(other) is Box

        def __hash__(self):
            return 0

    wrap, get = {"direct": (lambda p: p, lambda a: a), "list": (lambda p: [p], lambda a: a[0]),
                 "dict": (lambda p: {"p": p}, lambda a: a["p"]), "tuple": (lambda p: (p, 1.0), lambda a: a[0]),
                 "object": (Box, lambda a: a.p)}[where]
    differential(lambda x, a: x * use(get(a)), lambda k: (_x(w), wrap(NANS[k])), max_recordings=4)


def test_nan_sign_of_a_hidden_number():
    box = {"p": NAN}

    def change(k):
        box["p"] = NEG_NAN if k == 2 else PAYLOAD_NAN

    differential(lambda x: x * _sign(box["p"]) + _payload(box["p"]), lambda k: (_x(7),), change)


def test_a_nan_still_finds_its_own_recording():
    fz = differential(lambda x, p: x * _sign(p), lambda k: (_x(7), float("nan")))
    assert fz.n_recordings == 1         # (a new NaN object each call: same bits, same recording)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from([NAN, NEG_NAN, PAYLOAD_NAN, 1.0, -0.0, 0.0]), min_size=2, max_size=5))
def test_nan_sequences(vals):
    differential(lambda x, p: x * _sign(p) + _payload(p), lambda k: (_x(3), vals[k % len(vals)]),
                 calls=len(vals), max_recordings=len(vals))


# -- set iteration order -----------------------------------------------------------------------------
def _reordered():
    s = {1, 9}                  # 1 and 9 share a slot of the 8-entry table: 9 probes on
    t = {9, 1, 17}
    t.discard(17)               # (equal contents, iterated 9 first)
    assert s == t and list(s) != list(t)
    return s, t


@pytest.mark.parametrize("w", WIDTHS)
def test_set_argument_iterated_in_another_order(w):
    s, t = _reordered()
    differential(lambda x, a: x * float(next(iter(a))), lambda k: (_x(w), s if k < 2 else t))


def test_frozenset_argument_iterated_in_another_order():
    s, t = (frozenset(v) for v in _reordered())
    differential(lambda x, a: x * float(list(a)[0]), lambda k: (_x(7), s if k in (0, 1, 4) else t))


def test_hidden_set_reordered_with_the_same_contents():
    s, t = _reordered()
    box = set(s)

    def change(k):
        box.clear()
        box.update(t if k == 2 else s)

    differential(lambda x: x * float(next(iter(box))), lambda k: (_x(7),), change)


# -- class dict order ---------------------------------------------------------------------------------
@pytest.mark.parametrize("read", [lambda K: list(vars(K)), lambda K: list(K.__dict__),
                                  lambda K: list(K.__dict__.keys())])
def test_class_dict_order_read_through_a_mappingproxy(read):
    class K:
        pass
    K.a = 2.0
    K.b = 3.0

    def change(k):
        del K.a
        K.a = 2.0           # (same value, now last)

    differential(lambda x: x * float(read(K).index("a")), lambda k: (_x(7),), change, change_at=(2,))


def test_an_input_dicts_views_need_no_guard():
    # the walk keys an input dict's keys in order: its views, made anew each call, are covered
    class Obj:
        def __init__(self):
            self.a, self.b = 2.0, 3.0

        def __eq__(self, other):
            return type(other) is Obj

        def __hash__(self):
            return 1

    fz = differential(lambda x, o, d: x * float(list(vars(o)).index("b") + len(d.keys())),
                      lambda k: (_x(7), Obj(), {"a": 1.0, "b": 2.0}))
    assert fz.n_recordings == 1


# -- builtins, interpreter state, __import__ ------------------------------------------------------------
@pytest.mark.parametrize("w", WIDTHS)
def test_a_builtin_patched_between_calls(w, monkeypatch):
    import builtins
    orig = builtins.round

    def change(k):
        monkeypatch.setattr(builtins, "round", (lambda v: 7) if k == 2 else orig)

    fz = differential(lambda x: x * round(2.6), lambda k: (_x(w),), change)
    assert fz.n_recordings == 2         # (the original put back: the first recording again)


def test_a_builtin_shadowed_by_a_module_global(monkeypatch):
    import types
    m = types.ModuleType("r14_user_module")
    exec("def fn(x):\n    return x * round(2.6)\n", m.__dict__)
    fn = m.fn

    def change(k):
        if k == 2:
            monkeypatch.setattr(m, "round", lambda v: 9, raising=False)
        else:
            monkeypatch.delattr(m, "round", raising=False)

    differential(fn, lambda k: (_x(7),), change)


def test_recursion_limit_read_inside(monkeypatch):
    import sys
    limit = sys.getrecursionlimit()

    def change(k):
        sys.setrecursionlimit(limit + 1000 if k == 2 else limit)

    try:
        differential(lambda x: x * (2.0 if sys.getrecursionlimit() > limit else 1.0), lambda k: (_x(7),), change)
    finally:
        sys.setrecursionlimit(limit)


def test_dunder_import_result(monkeypatch):
    import json

    def change(k):
        monkeypatch.setattr(json, "_fj_r14_scale", 1.0 + k, raising=False)

    change(0)
    differential(lambda x: x * __import__("json")._fj_r14_scale, lambda k: (_x(7),), change)


# -- defaultdict factories -------------------------------------------------------------------------------
@pytest.mark.parametrize("w", WIDTHS)
def test_defaultdict_argument_with_another_factory(w):
    import collections
    factories = [lambda: 2.0, lambda: 2.0, lambda: 3.0]

    def args(k):
        return _x(w), collections.defaultdict(factories[min(k, 2)])

    differential(lambda x, d: x * d["q"], args)


def test_defaultdict_factory_not_consulted_needs_no_guard():
    import collections
    fz = differential(lambda x, d: x * d["q"],
                      lambda k: (_x(7), collections.defaultdict(lambda: 5.0, q=2.0)))
    assert fz.n_recordings == 1


# -- a parameter that cannot be put in place --------------------------------------------------------------
def test_frozen_partial_whose_arguments_change():
    import functools
    p = functools.partial(lambda s, x: x * s, 2.0)
    fz = fj.freeze(p)
    for k, s in enumerate([2.0, 2.0, 3.0, 3.0, 5.0]):
        p.__setstate__((p.func, (s,), {}, None))      # (partial.args is read-only)
        assert _bits(fz(_x(7))) == _bits(p(_x(7))), k


@pytest.mark.parametrize("w", WIDTHS)
def test_slot_whose_class_attribute_became_a_property(w):
    class K:
        __slots__ = ("s",)

    o = K()
    o.s = 2.0
    member = K.__dict__["s"]

    def change(k):
        K.s = property(lambda self: 11.0) if k == 2 else member

    differential(lambda x: x * o.s, lambda k: (_x(w),), change)


# -- identity tests on values keyed by value ----------------------------------------------------------------
def _runtime(v):
    """An object equal to ``v`` made at run time (not the same object)."""
    return type(v)(str(v)) if isinstance(v, (int, float)) else "".join(v) if isinstance(v, str) else bytes(list(v))


TRAIN = "train-mode"
BIG = 1000001
SCALE = 2.5
TAG = b"tag-x"


@pytest.mark.parametrize("hidden", [TRAIN, BIG, SCALE, TAG], ids=["str", "int", "float", "bytes"])
@pytest.mark.parametrize("where", ["direct", "list"])
def test_an_argument_equal_to_a_hidden_value_is_not_it(hidden, where):
    box = {"h": hidden}
    wrap, get = {"direct": (lambda v: v, lambda a: a), "list": (lambda v: [v], lambda a: a[0])}[where]

    def fn(x, a):
        return x * (2.0 if get(a) is box["h"] else 3.0)

    fz = differential(fn, lambda k: (_x(7), wrap(hidden if k in (0, 1, 4) else _runtime(hidden))))
    assert fz.n_recordings == 2


@pytest.mark.parametrize("make", [lambda: "".join(["ab", "cd-"]), lambda: int("1000001"), lambda: float("2.5")],
                         ids=["str", "int", "float"])
def test_two_arguments_the_same_object_or_not(make):
    def args(k):
        v = make()
        return (_x(7), v, v) if k in (0, 1, 4) else (_x(7), v, make())

    differential(lambda x, a, b: x * (2.0 if a is b else 3.0), args)


def test_a_value_identity_guard_only_with_is():
    fz = differential(lambda x, a: x * (2.0 if a == TRAIN else 3.0), lambda k: (_x(7), _runtime(TRAIN)))
    (recd,) = fz._cache.entries[next(iter(fz._cache.entries))].order
    assert recd.guardset is None            # (no `is`: no identity pattern)


# -- Python subclasses of value types, Enums with their own == ----------------------------------------------
class Tag(str):
    pass


class Scale(float):
    pass


class Blob(bytes):
    pass


@pytest.mark.parametrize("w", WIDTHS)
@pytest.mark.parametrize("cls", [Tag, Scale, Blob])
def test_attributes_of_a_value_subclass_argument(w, cls):
    def arg(k):
        v = cls(b"a" if cls is Blob else "1" if cls is Scale else "a")
        v.scale = [2.0, 2.0, 3.0, 3.0, 2.0, 5.0][k]
        return _x(w), {"v": v}

    differential(lambda x, d: x * d["v"].scale, arg, max_recordings=4)


@pytest.mark.parametrize("where", ["argument", "closure"])
def test_an_enum_whose_eq_lies(where):
    import enum

    class Mode(enum.Enum):
        A = 1
        B = 2

        def __eq__(self, other):
            return True

        def __hash__(self):
            return 0

    box = {"m": Mode.A}

    def change(k):
        box["m"] = Mode.B if k == 2 else Mode.A

    if where == "argument":
        differential(lambda x, m: x * float(m.value), lambda k: (_x(7), Mode.A if k in (0, 1, 4) else Mode.B))
    else:
        differential(lambda x: x * float(box["m"].value), lambda k: (_x(7),), change)


# -- a function attribute ---------------------------------------------------------------------------------
def test_a_function_attribute_set_by_the_call_itself():
    ns = {}
    exec("def f(x):\n    f.n = getattr(f, 'n', 0) + 1\n    return x * f.n\n", ns)
    twin = {}
    exec("def f(x):\n    f.n = getattr(f, 'n', 0) + 1\n    return x * f.n\n", twin)
    fz = fj.freeze(ns["f"])
    for k in range(4):
        assert _bits(fz(_x(7))) == _bits(twin["f"](_x(7))), k
    assert ns["f"].n == twin["f"].n == 4     # (traced every call: it reads back what it wrote)


# -- a NumPy scalar parameter where the array operator refuses it ------------------------------------------
@pytest.mark.parametrize("op", ["floordiv", "mod"])
def test_numpy_scalar_parameter_refused_by_the_operator(op):
    import operator
    import warnings
    from frostjit.llvm import Int32
    fn = getattr(operator, op)
    vals = [np.float32(2.0), np.float32(3.0), np.float32(2.0), np.float32(5.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (NumPy reads the array: the plain-call fallback warns)
        differential(lambda x, p: fn(Int32(x * 10), p), lambda k: (_x(7), vals[k]), calls=4, max_recordings=4)


# -- an identity test on a number that became a parameter ---------------------------------------------------
Q = 2.5


@pytest.mark.parametrize("where", ["direct", "list"])
def test_identity_test_on_a_number_parameter(where):
    wrap, get = {"direct": (lambda v: v, lambda a: a), "list": (lambda v: [v], lambda a: a[0])}[where]
    vals = [Q, 1.5, Q, float("2.5"), 3.5, Q]
    differential(lambda x, a: x * get(a) + (1.0 if get(a) is Q else 0.0), lambda k: (_x(7), wrap(vals[k])),
                 max_recordings=6)


# -- an instance dict replaced ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["object", "function"])
def test_a_hidden_instance_dict_replaced(kind):
    if kind == "object":
        o = type("O", (), {})()
        o.s = 2.0
    else:
        def o():
            return 0.0
        o.s = 2.0

    def helper():
        return o.s

    def change(k):
        o.__dict__ = {"s": 1.0 + k}

    differential(lambda x: x * helper(), lambda k: (_x(7),), change)


def test_an_argument_objects_dict_needs_no_identity_guard():
    class Obj:
        def __eq__(self, other):
            return type(other) is Obj

        def __hash__(self):
            return 0

    def arg(k):
        o = Obj()
        o.s = 2.0
        return _x(7), o

    fz = differential(lambda x, o: x * o.s, arg)
    assert fz.n_recordings == 1
