"""Adversarial programs against ``fj.freeze`` (session r16, lane redteam2): each calls the frozen
function and the plain function side by side, changes state between calls, and requires
bit-equal results and write-backs (never a stale replay).

Found stale before r16 and fixed:

* a NaN Python-number parameter (``fj.lerp(a, b, t)``, ``fj.minimum(x, t)``, ``(x - t) - y``
  with ``t = nan``): the plain call folds the NaN as a literal, and LLVM's folding of an operation
  on two NaNs keeps another one than the CPU's instruction the replay runs with the parameter
  (+NaN replayed, -NaN plain: r15's known gap); a NaN is never a parameter now (keyed by its bits);
* a class's ``DRJIT_STRUCT`` (or ``__fj_traverse_attrs__``) reassigned, changed in place or
  retyped after first use (r15's known gap): ``fj.tree`` cached the fields per type (plain calls
  mixed old and new fields), the key and binders used the cached names, and ``fj.zeros(S)``
  read the types unseen (``tree.kinds.NodeType.stale``, ``readset.struct_class``, the binder
  compares the names);
* attributes of a ``DRJIT_STRUCT`` object, a dataclass or a protocol object that are not its
  fields: set, rebound or deleted by the function (every replay left them as the caller had
  them: written back now), copied into an output by frostjit (``fj.detach(s)`` returned the
  recording call's attribute: guarded now), or written into (``s.cache["y"] = x * 2``: the call
  runs plainly now).
"""
import dataclasses
import struct

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float, UInt32
from freeze_helpers import bits

pytestmark = pytest.mark.no_freeze_check      # (the test compares with the plain call itself)


def _nan(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


NANS = (float("nan"), -float("nan"), _nan(0x7FF8000000000123), _nan(0xFFF8000000000456))


# -- NaN parameters --------------------------------------------------------------------------------
@pytest.mark.parametrize("op", [
    lambda a, b, t: fj.lerp(a, b, t),
    lambda a, b, t: (a - t) - (b * 0 + float("-nan")),
    lambda a, b, t: fj.minimum(a * float("nan"), t),
    lambda a, b, t: fj.fma(a, t, b) + t,
    lambda a, b, t: fj.lerp(a, b, np.float32(t)),
], ids=["lerp", "sub", "minimum", "fma", "np.float32"])
@pytest.mark.parametrize("w", (1, 7))
def test_a_nan_parameter_replays_the_plain_calls_nan(op, w):
    fz = fj.freeze(op)
    seq = (0.5, 0.25) + NANS + (0.75,) + NANS
    for k, t in enumerate(seq):
        a = Float(np.arange(w, dtype=np.float32) - 1)
        b = Float(np.where(np.arange(w) % 3 == 2, np.nan, np.arange(w) + 4).astype(np.float32))
        assert bits(fz(a, b, t)) == bits(op(a, b, t)), (k, t)
    assert fz.n_recordings <= 2 + 2 * len(NANS)


def test_a_nan_numpy_scalar_parameter():
    def f(a, t):
        return fj.lerp(a, a * 2, t)

    fz = fj.freeze(f)
    for t in (np.float32(0.5), np.float32(0.25), np.float32("nan"), -np.float32("nan"), np.float32(0.125)):
        a = Float(1, 2, float("nan"))
        assert bits(fz(a, t)) == bits(f(a, t)), t


# -- DRJIT_STRUCT changed after first use ----------------------------------------------------------
def _state(o):
    """An object's instance attributes, arrays by bits (for comparing written-back inputs)."""
    return {k: bits(v) if hasattr(v, "numpy") else v for k, v in sorted(vars(o).items())}


def _struct_class():
    shared = {}

    class S:
        DRJIT_STRUCT = {"a": Float}

        def __init__(self, w=1, k=0):
            # (b and c are the same arrays at every call: a new array each call in an attribute
            # that is not a field, read or copied by the function, is a failing guard, a trace)
            self.a = Float(np.arange(w, dtype=np.float32) + k)
            if w not in shared:
                shared[w] = (Float(np.arange(w, dtype=np.float32) * 2), Float(np.arange(w, dtype=np.float32) * 3))
            self.b, self.c = shared[w]
    return S


_CHANGES = {
    "added": lambda S: setattr(S, "DRJIT_STRUCT", {"a": Float, "b": Float}),
    "added in place": lambda S: S.DRJIT_STRUCT.__setitem__("b", Float),
    "replaced": lambda S: setattr(S, "DRJIT_STRUCT", {"b": Float, "c": Float}),
    "reordered": lambda S: setattr(S, "DRJIT_STRUCT", {"c": Float, "a": Float}),
    "retyped": lambda S: setattr(S, "DRJIT_STRUCT", {"a": UInt32}),
}


def _double_fields(s):
    names = type(s).DRJIT_STRUCT
    if "a" in names:
        s.a = s.a * 2
    if "b" in names:
        s.b = s.b * 2
    return fj.select(s.a > 2, s.a, 1.0) * 2 if "a" in names else s.b + 1


def _zeros_of_its_class(s):
    return fj.zeros(type(s), fj.width(s.a))


def _returns_it(s):
    s.a = s.a + 1
    return s


def _detached(s):
    return fj.detach(s)


@pytest.mark.parametrize("change", list(_CHANGES))
@pytest.mark.parametrize("fn", [_double_fields, _zeros_of_its_class, _returns_it, _detached])
@pytest.mark.parametrize("w", (1, 7))
def test_drjit_struct_changed_between_calls(fn, change, w):
    S = _struct_class()
    fz = fj.freeze(fn)
    for k in range(5):
        if k == 2:
            _CHANGES[change](S)
        s1, s2 = S(w, k), S(w, k)
        r1, r2 = fz(s1), fn(s2)
        if isinstance(r2, S):
            assert _state(r1) == _state(r2), k
        else:
            assert bits(r1) == bits(r2), k
        assert _state(s1) == _state(s2), k
    # ("replaced": ``a`` is no longer a field, and a new array each call there)
    assert fz.n_recordings <= (5 if change == "replaced" else 3)


@pytest.mark.parametrize("change", list(_CHANGES))
def test_drjit_struct_of_a_hidden_class_changed(change):
    S = _struct_class()

    def f(x):
        z = fj.zeros(S, fj.width(x))
        return [getattr(z, n) + x for n in ("a", "b", "c") if hasattr(z, n) and getattr(z, n) is not None]

    fz = fj.freeze(f)
    for k in range(5):
        if k == 2:
            _CHANGES[change](S)
        x = Float(np.arange(5, dtype=np.float32) + k)
        assert [bits(v) for v in fz(x)] == [bits(v) for v in f(x)], k
    assert fz.n_recordings <= 3     # (the first S() fills the class's cache of b and c: a trace)


def test_drjit_struct_unchanged_replays():
    S = _struct_class()
    fz = fj.freeze(_double_fields)
    for k in range(4):
        fz(S(3 + k, k))
    assert fz.n_recordings == 1


# -- attributes of DRJIT_STRUCT objects and dataclasses that are not fields ----------------------
@dataclasses.dataclass
class _D:
    a: Float

    def __post_init__(self):
        self.note = None


_S = _struct_class()


def _struct_or_dataclass(kind, w, k, extra):
    if kind == "struct":
        s = _S(w, k)
    else:
        s = _D(Float(np.arange(w, dtype=np.float32) + k))
    s.extra = extra
    return s


def _set_array(s):
    s.extra = s.a * 2           # a new array in an attribute that is not a field
    return s.a + 1


def _set_number(s):
    s.extra = s.extra + 1       # a Python number there
    return s.a * s.extra


def _set_new(s):
    s.fresh = 7                 # a new attribute
    return s.a


def _delete(s):
    del s.extra
    return s.a


@pytest.mark.parametrize("fn", [_set_array, _set_number, _set_new, _delete])
@pytest.mark.parametrize("kind", ["struct", "dataclass"])
@pytest.mark.parametrize("w", (1, 7))
def test_an_attribute_that_is_not_a_field_written(fn, kind, w):
    fz = fj.freeze(fn)
    for k in range(4):
        extra = 3.0 if k < 2 else 5.0
        s1, s2 = (_struct_or_dataclass(kind, w, k, extra) for _ in range(2))
        assert bits(fz(s1)) == bits(fn(s2)), k
        assert _state(s1) == _state(s2), k
    assert fz.n_recordings <= 2


@pytest.mark.parametrize("kind", ["struct", "dataclass"])
def test_an_attribute_that_is_not_a_field_copied_into_the_output(kind):
    # fj.detach rebuilds the object from its __dict__: the non-field attribute is the input's
    fz = fj.freeze(fj.detach)
    for k in range(5):
        extra = Float(k, k + 1) if k % 2 else 2.5 * k
        s1, s2 = (_struct_or_dataclass(kind, 2, k, extra) for _ in range(2))
        assert _state(fz(s1)) == _state(fj.detach(s2)), k


def _protocol_class():
    class P:
        __fj_traverse_attrs__ = ("a",)

        def __init__(self, k):
            self.a = Float(k, k + 1)
            self.b = Float(k * 2, 5) if k % 2 else 1.5 * k
    return P


def test_an_attribute_not_traversed_copied_into_the_output():
    P = _protocol_class()
    fz = fj.freeze(fj.detach)
    for k in range(5):
        assert _state(fz(P(k))) == _state(fj.detach(P(k))), k


@pytest.mark.parametrize("fn", [fj.detach, _returns_it])
def test_fj_traverse_attrs_changed_between_calls(fn):
    P = _protocol_class()
    fz = fj.freeze(fn)
    for k in range(5):
        if k == 2:
            P.__fj_traverse_attrs__ = ("a", "b")
        p1, p2 = P(k), P(k)
        assert _state(fz(p1)) == _state(fn(p2)), k
        assert _state(p1) == _state(p2), k


class _Box:
    def __init__(self):
        self.v = 1.0


def _into_dict(s):
    s.extra["y"] = s.a * 2          # an array into a dict held by an attribute that is not a field
    return s.a


def _into_object(s):
    s.extra.y = s.a * 3             # into an object held there
    return s.a


def _append(s):
    s.extra.append(s.a)
    return s.a * len(s.extra)


@pytest.mark.filterwarnings("ignore::frostjit.FreezeWarning")     # (such a call runs plainly)
@pytest.mark.parametrize("fn, extra", [(_into_dict, dict), (_into_object, _Box), (_append, list)])
@pytest.mark.parametrize("kind", ["struct", "dataclass"])
def test_a_write_into_an_attribute_that_is_not_a_field(fn, extra, kind):
    fz = fj.freeze(fn)
    x1, x2 = extra(), extra()       # (the same object at every call)
    for k in range(4):
        s1, s2 = _struct_or_dataclass(kind, 3, k, x1), _struct_or_dataclass(kind, 3, k, x2)
        assert bits(fz(s1)) == bits(fn(s2)), k
        assert _deep(x1) == _deep(x2), k


def _deep(v):
    if hasattr(v, "numpy"):
        return bits(v)
    if isinstance(v, dict):
        return {k: _deep(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_deep(x) for x in v]
    if hasattr(v, "__dict__"):
        return _deep(vars(v))
    return v


def _stores_numbers(s, p):
    s.scale = p * 2                             # a parameter's multiple
    s.n = fj.width(s.a)                         # a width
    s.half = s.n // 2                           # read back after the write
    s.info = (p, s.n, "x")
    return s.a * p


@pytest.mark.parametrize("kind", ["struct", "dataclass"])
def test_numbers_stored_in_an_attribute_that_is_not_a_field(kind):
    # what the caller finds there are numbers (not the recording's symbolic ones), of the plain
    # call's values and types; the function replays
    fz = fj.freeze(_stores_numbers)
    for k in range(5):
        s1, s2 = (_struct_or_dataclass(kind, 3 + k % 2, k, None) for _ in range(2))
        assert bits(fz(s1, 0.5 + k)) == bits(_stores_numbers(s2, 0.5 + k)), k
        for n in ("scale", "n", "half"):
            v1, v2 = getattr(s1, n), getattr(s2, n)
            assert type(v1) is type(v2) and v1 == v2, (k, n)
        assert [type(v) for v in s1.info] == [type(v) for v in s2.info] and s1.info == s2.info, k
    assert fz.n_recordings <= 2


class _Slotted:
    __slots__ = ("a", "note")
    DRJIT_STRUCT = {"a": Float}

    def __init__(self, k=0):
        self.a = Float(k, k + 1, k + 2)
        self.note = Float(k * 2, 1, 2) if k % 2 else 0.5 * k


def _set_note(s):
    s.note = s.a * 2
    return s.a + 1


@pytest.mark.parametrize("fn", [_set_note, fj.detach], ids=["set", "copied"])
def test_a_slot_that_is_not_a_field(fn):
    fz = fj.freeze(fn)
    for k in range(5):
        s1, s2 = _Slotted(k), _Slotted(k)
        r1, r2 = fz(s1), fn(s2)
        assert _deep([r1.a, r1.note] if isinstance(r1, _Slotted) else r1) == \
            _deep([r2.a, r2.note] if isinstance(r2, _Slotted) else r2), k
        assert _deep([s1.a, s1.note]) == _deep([s2.a, s2.note]), k


def _pop_tmp(s):
    vars(s).pop("tmp", None)
    return s.a


def _try_del_tmp(s):
    try:
        del s.tmp
    except AttributeError:
        pass
    return s.a


def _clear_then_set(s):
    a = s.a
    s.__dict__.clear()
    s.a = a + 1
    return a


@pytest.mark.parametrize("fn", [_pop_tmp, _try_del_tmp, _clear_then_set])
@pytest.mark.parametrize("kind", ["struct", "dataclass"])
def test_which_attributes_that_are_not_fields_exist(fn, kind):
    # deleted in C or in a ``try``: whether the input has them decides what the call does
    fz = fj.freeze(fn)
    for k in range(6):
        s1, s2 = (_struct_or_dataclass(kind, 3, k, None) for _ in range(2))
        if k % 2 == (fn is _clear_then_set):
            s1.tmp = s2.tmp = 1
        assert bits(fz(s1)) == bits(fn(s2)), k
        assert _state(s1) == _state(s2), k
    assert fz.n_recordings <= 2
