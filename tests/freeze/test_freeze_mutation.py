"""Inputs a frozen function mutates are written back exactly as a plain call leaves them."""
import dataclasses

import numpy as np

import frostjit as fj
from frostjit.llvm import Float, UInt32, Int32, Bool, Array3f

from freeze_helpers import F, ramp, same


def test_inplace_add_is_visible_rebinding_is_not():
    @fj.freeze
    def f(x, y):
        x += 1
        y = y + 1      # noqa: F841 (local rebinding: invisible outside)
    for n in (2, 3, 5):
        x, y = ramp(n), ramp(n)
        f(x, y)
        assert same(x, ramp(n) + 1) and same(y, ramp(n))
    assert f.n_recordings == 1


def test_scatter_into_input_and_aliases():
    @fj.freeze
    def f(x):
        fj.scatter(x, 0.0, UInt32(0))
    for n in (2, 3, 6):
        x = ramp(n, 1)
        z = x              # same array object: sees the write
        w = Float(x)       # shares the node: keeps its values (copy-on-write)
        y = x + 1
        f(x)
        ref = ramp(n, 1).numpy()
        ref[0] = 0
        assert same(x, Float(ref)) and z is x and same(w, ramp(n, 1)) and same(y, ramp(n, 2))
    assert f.n_recordings == 1


def test_masked_scatter_with_gather():
    @fj.freeze
    def f(dest, src, idx):
        v = fj.gather(Float, src, idx)
        fj.scatter(dest, v * 2, idx, v > 1)
        return dest, v
    for n in (3, 5, 9):
        dest, src = fj.zeros(Float, n), ramp(n)
        fj.make_opaque(dest)
        idx = UInt32(np.arange(n)[::-1].astype(np.uint32))
        d, v = f(dest, src, idx)
        ref = np.where(np.arange(n) > 1, 2.0 * np.arange(n), 0).astype(np.float32)
        assert same(d, Float(ref)) and d is dest
    assert f.n_recordings == 1


def test_new_dict_key_appears():
    @fj.freeze
    def f(d):
        d["y"] = d["x"] * 2
    for n in (2, 4):
        d = {"x": ramp(n)}
        f(d)
        assert set(d) == {"x", "y"} and same(d["y"], ramp(n) * 2)
    assert f.n_recordings == 1


def test_dict_key_removed_and_python_value_set():
    @fj.freeze
    def f(d):
        del d["tmp"]
        d["count"] = 1
        d["x"] = d["x"] + 1
    for n in (2, 4):
        d = {"x": ramp(n), "tmp": 0}
        f(d)
        assert d.keys() == {"x", "count"} and d["count"] == 1 and same(d["x"], ramp(n) + 1)
    assert f.n_recordings == 1


def test_dataclass_field_reassigned_and_inplace():
    @dataclasses.dataclass
    class State:
        a: Float
        i: Int32
        m: Bool

    @fj.freeze
    def f(s):
        s.a = s.a * 2
        s.i += 1
        s.m = ~s.m
    s = State(F(1, 2), Int32(0, 0), Bool(True, False))
    for k in range(12):
        f(s)
    assert same(s.a, F(4096, 8192)) and same(s.i, Int32(12, 12)) and same(s.m, Bool(True, False))
    assert f.n_recordings <= 2


def test_list_mutation_and_refcycle():
    @fj.freeze
    def f(lst):
        lst[0] += 1
    lst = [F(1, 2)]
    lst.append(lst)
    for _ in range(3):
        f(lst)
    assert same(lst[0], F(4, 5)) and lst[1] is lst
    assert f.n_recordings == 1


def test_list_append_retraces_each_call_and_matches_plain():
    def g(lst):
        lst.append(lst[0] * 2)
    f = fj.freeze(g)
    a, b = [F(1)], [F(1)]
    for _ in range(3):
        f(a)
        g(b)
    assert len(a) == len(b) == 4 and all(same(x, y) for x, y in zip(a, b))


def test_object_attribute_set_and_python_counter():
    class Sim:
        def __init__(self):
            self.u = F(0, 0)
            self.steps = 0
            self.done = False

        @fj.freeze
        def step(self, du):
            self.u = self.u + du
            self.done = True

    s = Sim()
    for k in range(4):
        s.done = False
        s.step(F(1, 2))
        assert s.done
    assert same(s.u, F(4, 8))
    assert Sim.step.n_recordings == 1


def test_static_vector_component_assigned():
    @fj.freeze
    def f(p):
        p.y = p.x * 3
    for n in (2, 3):
        p = Array3f(ramp(n), ramp(n), ramp(n))
        f(p)
        assert same(p.y, ramp(n) * 3) and same(p.x, ramp(n))
    assert f.n_recordings == 1


def test_mutable_closure_and_global():
    acc = F(0, 0)

    @fj.freeze
    def f(x):
        nonlocal acc
        acc += x
    for _ in range(3):
        f(F(1, 2))
    assert same(acc, F(3, 6)) and f.n_recordings == 1


TOTAL = F(0, 0)


def test_global_rebinding_written_back():
    global TOTAL
    TOTAL = F(0, 0)

    @fj.freeze
    def f(x):
        global TOTAL
        TOTAL = TOTAL + x
    for _ in range(3):
        f(F(1, 2))
    assert same(TOTAL, F(3, 6)) and f.n_recordings == 1


def test_output_that_is_a_mutated_input():
    @fj.freeze
    def f(x):
        x *= 2
        return x, x + 1
    for n in (2, 3):
        x = ramp(n, 1)
        a, b = f(x)
        assert a is x and same(x, ramp(n, 1) * 2) and same(b, ramp(n, 1) * 2 + 1)


def test_write_back_into_an_exact_dict_is_an_item_store_and_a_subclass_keeps_its_own():
    import collections
    from frostjit.freeze.records import SetDictItem, SetEntry

    class Logged(collections.OrderedDict):
        pass

    def step(d, e):
        d["x"] = d["x"] + 1
        e["x"] = e["x"] * 2

    f = fj.freeze(step)
    for n in (7, 1000, 3):
        d, e = {"x": Float(np.arange(n, dtype=np.float32))}, Logged(x=Float(np.ones(n, dtype=np.float32)))
        f(d, e)
        assert np.array_equal(d["x"].numpy(), np.arange(n) + 1)
        assert type(e) is Logged and np.array_equal(e["x"].numpy(), np.full(n, 2))
    (recd,) = [r for entry in f._cache.entries.values() for r in entry.order]
    assert {type(a) for a in recd.actions} == {SetDictItem, SetEntry}
