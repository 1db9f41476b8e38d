"""Adversarial programs against frozen functions: hidden Python state that helpers read and
mutate between calls.  Each case replayed a stale result before (the frozen call differed from
the plain call); now each call equals the plain call at widths 1, 7 and 1000.

The frozen function runs on one copy of ``hidden_state_module`` and the plain calls on another,
so both see the same sequence of states (checking mode is off here: it would run the plain
function a second time on the first copy, and these functions change their state)."""
import gc
import importlib.util
import itertools
import os
import warnings

import numpy as np
import pytest

import frostjit as fj
from frostjit.llvm import Float

from freeze_helpers import ramp, same

HERE = os.path.dirname(os.path.abspath(__file__))
WIDTHS = (1, 7, 1000)


def twins():
    """Two fresh copies of hidden_state_module (their own globals)."""
    out = []
    for tag in ("frozen", "plain"):
        spec = importlib.util.spec_from_file_location(f"hidden_state_module_{tag}",
                                                      os.path.join(HERE, "hidden_state_module.py"))
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        out.append(m)
    return out


def agree_over_calls(name, mutate=None, calls=3, widths=WIDTHS):
    """Frozen ``name`` of one copy against plain ``name`` of the other, ``calls`` times per width;
    ``mutate(module, i)`` changes both copies' state the same way before call ``i``."""
    a, b = twins()
    fa, fb = getattr(a, name), getattr(b, name)
    frozen = fj.freeze(lambda x: fa(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fj.FreezeWarning)
        for n in widths:
            for i in range(calls):
                if mutate is not None:
                    mutate(a, i)
                    mutate(b, i)
                got, ref = frozen(ramp(n, 1)), fb(ramp(n, 1))
                assert same(got, ref), (name, n, i, got, ref)
    return frozen


def _set_table(m, i):
    m.TABLE["k"] = float(i + 2)


def _grow_table(m, i):
    m.TABLE[f"k{i}"] = 1.0


def _shift_values(m, i):
    m.VALUES.insert(0, 0.0)
    m.VALUES.append(2.0)


@pytest.mark.no_freeze_check
@pytest.mark.parametrize("name,mutate", [
    ("table_get", _set_table),
    ("table_keys", _grow_table),
    ("table_items", _set_table),
    ("values_index", _shift_values),
    ("values_count", _shift_values),
    ("values_copy", _shift_values),
])
def test_container_methods_read_the_contents_of_hidden_containers(name, mutate):
    # d.get / keys / items, lst.index / count / copy on a helper module's container: the
    # recording read its contents through a method, which was not guarded
    agree_over_calls(name, mutate)


def _set_gain(m, i):
    m.SETTINGS.gain = m.RECORD.gain = float(i + 2)


def _set_scale(m, i):
    m.Settings.scale = float(i + 2)


@pytest.mark.parametrize("name,mutate", [
    ("copied_settings", _set_gain),
    ("deep_copied_settings", _set_gain),
    ("record_as_dict", _set_gain),
    ("record_as_tuple", _set_gain),
    ("class_attribute_through_type", _set_scale),
])
def test_hidden_objects_read_by_library_code_or_through_type(name, mutate):
    # copy.copy / deepcopy / dataclasses.asdict / astuple read a hidden object's attributes in
    # library code, where no chain sees them; type(self).scale read the class attribute through
    # a call's result: neither was guarded
    agree_over_calls(name, mutate)


def _register_gain(m, i):
    m.gain_of.register(m.Settings, lambda obj, v=float(i + 2): v)


def test_a_singledispatch_registration_between_calls():
    # functools.singledispatch picks the implementation in library code: a register() between
    # calls was not seen and the replay ran the old implementation's result
    agree_over_calls("dispatched_gain", _register_gain)


def _set_c_data(m, i):
    m.PACKED[1] = m.C_VALUES[1] = m.C_SCALE.value = m._OPTIONS["gain"] = float(i + 3)
    m._BYTES[1] = i + 3


@pytest.mark.parametrize("name", ["packed_item", "c_array_item", "c_scalar_value", "options_item",
                                  "option_values_sum", "bytes_view_item"])
def test_mutable_objects_whose_data_lives_in_c(name):
    # array.array, ctypes arrays and scalars, a mappingproxy over a dict, a dict's values view, a
    # memoryview: read through a subscript or attribute in C, where no chain follows; mutated in
    # place (or their dict / buffer), the replay was stale
    agree_over_calls(name, _set_c_data)


@pytest.mark.parametrize("make,mutate,read", [
    (lambda: __import__("array").array("f", [1.0, 2.0]), lambda a: a.__setitem__(1, 5.0), lambda a: a[1]),
    (lambda: (__import__("ctypes").c_float * 2)(1.0, 2.0), lambda a: a.__setitem__(1, 5.0), lambda a: a[1]),
], ids=["array.array", "ctypes array"])
def test_mutable_c_objects_among_the_arguments(make, mutate, read):
    a = make()

    def fn(x, a):
        return x * read(a)
    frozen = fj.freeze(fn)
    for step in range(2):
        if step:
            mutate(a)
        for n in WIDTHS:
            assert same(frozen(ramp(n), a), fn(ramp(n), a)), (step, n)


@pytest.mark.no_freeze_check
@pytest.mark.parametrize("name", [
    "stack_pop", "stack_pop_then_read", "heap_push_then_len", "queue_popleft",
    "groups_setdefault_append", "data_item_add_then_sum", "data_ufunc_out_then_read",
    "accumulate_default",
])
def test_hidden_state_mutated_then_read_by_the_function(name):
    # The guard must hold the state a call starts from: the recording read the container (or
    # NumPy array) after its own mutation (pop, heappush, append to a mutable default, a
    # setdefault() result appended to, an ufunc's out=), and that state is what the next call
    # finds, so the replay returned the first call's value again.
    agree_over_calls(name, calls=2)


@pytest.mark.no_freeze_check
@pytest.mark.parametrize("name", ["next_count", "next_item"])
def test_an_iterator_made_before_the_call_falls_back(name):
    # next() advances a C iterator's position, which no guard can see: the plain function runs
    frozen = agree_over_calls(name)
    assert frozen.n_cached_recordings == 2     # (size 1 and wide: both fall back)


@pytest.mark.no_freeze_check
def test_an_iterator_argument_falls_back():
    def fn(x, it):
        return x + next(it)
    frozen = fj.freeze(fn)
    a, b = itertools.count(1), itertools.count(1)
    with pytest.warns(fj.FreezeWarning, match="iterator"):
        for n in WIDTHS:
            for _ in range(3):
                assert same(frozen(ramp(n), a), fn(ramp(n), b))


def test_an_iterator_made_inside_the_call_replays():
    def fn(x, xs):
        it = iter(xs)
        return x * next(it) + next(it)
    frozen = fj.freeze(fn)
    for n in WIDTHS:
        for _ in range(3):
            assert same(frozen(ramp(n), [2.0, 3.0]), fn(ramp(n), [2.0, 3.0]))
    assert frozen.n_recordings == 2 and frozen.n_cached_recordings == 2


@pytest.mark.no_freeze_check
@pytest.mark.parametrize("name", ["generator_random", "generator_normal_via_bit_generator"])
def test_numpy_random_generator_methods_fall_back(name):
    # methods of numpy.random.Generator / its bit generator are Cython functions, not builtins:
    # the read set stopped at them without consulting the deny list
    agree_over_calls(name)


@pytest.mark.no_freeze_check
@pytest.mark.parametrize("make", [np.random.default_rng, np.random.RandomState], ids=["Generator", "RandomState"])
def test_a_random_generator_argument_falls_back(make):
    def fn(x, rng):
        return x + rng.random()
    frozen = fj.freeze(fn)
    a, b = make(3), make(3)
    with pytest.warns(fj.FreezeWarning, match="random numbers"):
        for n in WIDTHS:
            for _ in range(3):
                assert same(frozen(ramp(n), a), fn(ramp(n), b))


def test_a_write_only_log_still_replays():
    # a hidden list the function only appends to is a side effect (not repeated by replays, as
    # documented), not a read: the function stays frozen
    frozen = agree_over_calls("log_only")
    assert frozen.n_recordings == 2


@pytest.fixture
def restore_runtime():
    n, e = fj.thread_count(), fj.expand_threshold()
    yield
    fj.set_thread_count(n)
    fj.set_expand_threshold(e)


@pytest.mark.parametrize("read,change", [
    (lambda: fj.thread_count(), lambda i: fj.set_thread_count(i + 1)),
    (lambda: fj.expand_threshold(), lambda i: fj.set_expand_threshold(1000 * (i + 1))),
], ids=["thread_count", "expand_threshold"])
def test_frostjit_runtime_state_read_inside_is_guarded(restore_runtime, read, change):
    # frostjit's own functions are taken as constant, but what these getters return is process
    # state the user changes: the replay returned the first call's thread count
    def fn(x):
        return x * float(read())
    frozen = fj.freeze(fn)
    for i in range(3):
        change(i)
        for n in WIDTHS:
            assert same(frozen(ramp(n)), fn(ramp(n))), (i, n)


def test_a_zero_dimensional_numpy_input():
    # a 0-d NumPy array used in an operation: recording it read shape[0] (IndexError)
    z = np.array(2.0, dtype=np.float32)

    def fn(x, z):
        return x * z
    frozen = fj.freeze(fn)
    for v in (2.0, 3.0, -1.0):
        z.fill(v)
        for n in WIDTHS:
            assert same(frozen(ramp(n), z), fn(ramp(n), z)), (v, n)
    assert frozen.n_recordings == 2


class _PerCall:
    def __init__(self, n):
        self.a = fj.full(fj.llvm.Float, 2.0, n)


def _apply(g, x):
    return g(x)


def test_a_per_call_closure_is_not_kept_alive_by_guards():
    # A lambda made by each call and called by a helper: the read set saw its closure cells
    # (and the object in one), which are referenced by the fresh lambda only.  They were guarded
    # as if shared, so every recording kept its call's objects (and their arrays) alive.
    def fn(x):
        obj = _PerCall(1)
        k = 3.0
        g = lambda v: v * k + obj.a  # noqa: E731
        return _apply(g, x)
    frozen = fj.freeze(fn)
    for n in WIDTHS:
        for _ in range(2):
            assert same(frozen(ramp(n)), ramp(n) * 3 + 2)
    assert frozen.n_recordings == 2
    gc.collect()
    assert not [o for o in gc.get_objects() if type(o) is _PerCall]


@pytest.mark.parametrize("change,read,reset", [
    (lambda: fj.set_flag(fj.JitFlag.Debug, True), lambda: fj.flag(fj.JitFlag.Debug),
     lambda: fj.set_flag(fj.JitFlag.Debug, False)),
    (lambda: fj.set_thread_count(1), lambda: fj.thread_count() == 1, lambda: fj.set_thread_count(2)),
], ids=["set_flag", "set_thread_count"])
def test_a_function_that_changes_frostjit_settings_runs_plainly(restore_runtime, change, read, reset):
    # a replay does not repeat fj.set_flag / set_thread_count: the setting stayed as the caller
    # left it; such a layout runs the plain function (with a FreezeWarning)
    flag0 = fj.flag(fj.JitFlag.Debug)

    def fn(x):
        change()
        return x + 1
    frozen = fj.freeze(fn)
    try:
        with pytest.warns(fj.FreezeWarning, match="settings"):
            for n in WIDTHS:
                reset()
                assert same(frozen(ramp(n)), ramp(n) + 1)
                assert read()
    finally:
        fj.set_flag(fj.JitFlag.Debug, flag0)


def test_a_scoped_flag_inside_still_replays():
    def fn(x):
        with fj.scoped_set_flag(fj.JitFlag.Debug, True):
            y = x + 1
        return y
    frozen = fj.freeze(fn)
    for n in WIDTHS:
        for _ in range(2):
            assert same(frozen(ramp(n)), ramp(n) + 1)
    assert frozen.n_recordings == 2


@pytest.mark.parametrize("read", [
    lambda a: float(max(a)), lambda a: float(np.sum(a)), lambda a: float(np.dot(a, a)),
], ids=["max", "np.sum", "np.dot"])
def test_a_numpy_input_uploaded_and_read_in_python(read):
    # Passing a NumPy input to frostjit (an upload, re-read by every replay) excused it from a
    # guard on its data, also when the function read it in Python as well (max(a), np.sum(a)):
    # that part of the result was the first call's
    a = np.ones(3, dtype=np.float32)

    def fn(x, a):
        return x * fj.sum(Float(a)) + read(a)
    frozen = fj.freeze(fn)
    for step in range(3):
        a[1] = 2.0 + step
        for n in WIDTHS:
            assert same(frozen(ramp(n), a), fn(ramp(n), a)), (step, n)


def _upload_in_helper(x, a):
    return x * Float(a)


@pytest.mark.parametrize("fn", [lambda x, a: x + a, lambda x, a: _upload_in_helper(x, a)],
                         ids=["direct", "through a helper"])
def test_a_numpy_input_only_uploaded_replays_with_new_data(fn):
    frozen = fj.freeze(fn)
    for step in range(4):
        a = np.full(1000, float(step), dtype=np.float32)
        assert same(frozen(ramp(1000), a), fn(ramp(1000), a))
    assert frozen.n_recordings == 1
