"""Hidden state that the read set did not guard (docs/freeze.md, "Known gaps"): each program
replayed a stale result before (the frozen call differed from the plain call after the state
changed); now each call equals the plain call, at widths 1, 7 and 1000, and the state is guarded
(the function traces again) rather than given up on, except ``id()`` (a fallback, documented)."""
import pytest

from freeze_helpers import ramp, same
from gaps_helpers import agree_over_calls, twins


def _box_a(m, i):
    m.BOXES["a"].s = float(i + 2)


def _row_1(m, i):
    m.ROW[1].s = float(i + 2)


def _nested(m, i):
    m.NESTED["a"]["b"] = float(i + 2)


def _cfg(m, i):
    m.CFG.s = float(i + 2)


def _scale(m, i):
    m.SCALE = float(i + 2)


@pytest.mark.parametrize("name,mutate", [
    ("dict_key_in_variable", _box_a),
    ("list_index_in_variable", _row_1),
    ("computed_index", _row_1),
    ("nested_keys_in_variables", _nested),
    ("dict_get_then_attribute", _box_a),
])
def test_keys_held_in_variables(name, mutate):
    # d[k] with k a local: the subscript was not part of a chain, so what it returned (an object
    # whose attribute the code read, an inner dict) was not guarded
    frozen = agree_over_calls(name, mutate)
    assert frozen.n_recordings > 1


def _extra(m, i):
    if i == 1:
        m.CFG.extra = 1
    elif i == 2:
        del m.CFG.extra


def _mode(m, i):
    m.MODE_TABLE[m.Color.RED] = float(i + 2)


@pytest.mark.parametrize("name", ["enum_key_in_variable", "enum_key_get"])
def test_keys_whose_hash_runs_python_code(name):
    # an Enum member as the key: its hash runs Python code, so the read set does not look the
    # entry up itself; the dict is guarded as a whole, as it was before keys in variables were
    # followed
    frozen = agree_over_calls(name, _mode)
    assert frozen.n_recordings > 1


@pytest.mark.parametrize("name,mutate", [
    ("getattr_by_variable", _cfg),
    ("hasattr_by_variable", _extra),
])
def test_attribute_names_held_in_variables(name, mutate):
    # getattr(o, name) with a name in a variable made the key run the plain function for good;
    # the name is read from the frame, so the attribute is guarded and replays are fast
    frozen = agree_over_calls(name, mutate)
    assert frozen.n_recordings > 1


@pytest.mark.parametrize("name", ["globals_get", "globals_get_variable"])
def test_globals_get(name):
    # globals().get("X") was a method call on the module dict, which is not guarded as a whole
    frozen = agree_over_calls(name, _scale)
    assert frozen.n_recordings > 1


@pytest.mark.parametrize("name", ["call_result_attribute", "iterator_result_attribute",
                                  "lambda_result_attribute", "display_item_attribute",
                                  "attrgetter_on_hidden", "attrgetter_made_inline"])
def test_attributes_of_call_results(name):
    # make().s: the receiver is a call's result, which no chain names; its attribute name is
    # looked up on the hidden objects the recording reached (CFG, through make's global)
    frozen = agree_over_calls(name, _cfg)
    assert frozen.n_recordings > 1


def _target(m, i):
    m.TARGET.s = float(i + 2)


@pytest.mark.parametrize("name", ["weakref_referent", "weak_value_dict"])
def test_weak_reference_referents(name):
    frozen = agree_over_calls(name, _target)
    assert frozen.n_recordings > 1


def test_identity_of_an_input_and_a_hidden_object():
    # `x is SENTINEL`: the layout key holds the inputs' types and sizes, not whether one of them
    # is an object the code read elsewhere; one guard compares which inputs are which
    a, b = twins()
    sentinel = ramp(7, 1)
    a.SENTINEL = b.SENTINEL = sentinel
    frozen = agree_over_calls("identity_of_input", twin=(a, b), widths=(7,), calls=6,
                              args=lambda n, i: (sentinel,) if i % 3 == 0 else (ramp(n, 1),))
    assert frozen.n_recordings == 2


def test_id_falls_back_to_the_plain_call():
    # id(x) of an input differs every call and the code may act on it (a cache keyed by id):
    # no guard can tell whether a replay would do the same, so the key runs the plain function
    a, b = twins()
    sentinel = ramp(7, 1)
    a.IDS.add(id(sentinel))
    b.IDS.add(id(sentinel))
    agree_over_calls("id_of_input", twin=(a, b), widths=(7,), calls=4, fallback=True,
                     args=lambda n, i: (sentinel,) if i % 2 == 0 else (ramp(n, 1),))


def test_unchanged_state_replays():
    # the new guards hold while nothing changes: one recording, then replays
    for name in ("dict_key_in_variable", "getattr_by_variable", "call_result_attribute",
                 "weakref_referent", "globals_get"):
        frozen = agree_over_calls(name, None, widths=(7,), calls=4)
        assert frozen.n_recordings == 1, name


SENTINEL = None


def test_identity_with_the_frozen_functions_own_global():
    # the frozen function's own globals are inputs (walked): an input that is one of them is
    # keyed as an alias of it
    global SENTINEL
    SENTINEL = ramp(7, 1)
    import frostjit as fj

    def fn(x):
        return x + (1.0 if x is SENTINEL else 0.0)
    frozen = fj.freeze(fn)
    for i in range(6):
        x = SENTINEL if i % 3 == 0 else ramp(7, 1)
        assert same(frozen(x), fn(x)), i
