"""Generated binders (freeze/binder.py): the replayed key's inputs are checked without a walk.

conftest.py turns on VERIFY_BINDERS: every binder hit is compared with the full layout walk, so
each test here also checks that a binder never accepts what the walk would key differently.
"""
import dataclasses

import numpy as np
import pytest

import frostjit as fj
from frostjit.freeze import binder, frozen
from frostjit.llvm import Float, UInt32, Array3f
from frostjit.llvm.ad import Float as FloatAD

from freeze_helpers import F, ramp, same


def _no_walk(monkeypatch, ff):
    def boom(*a, **k):
        raise AssertionError("the full layout walk ran")
    monkeypatch.setattr(frozen, "VERIFY_BINDERS", False)
    monkeypatch.setattr(ff, "_walk", boom)
    monkeypatch.setattr(ff, "_walk_fast", boom)


@dataclasses.dataclass
class Params:
    a: object
    b: object
    scale: float = 2.0


class Obj:
    def __init__(self, x, n):
        self.x = x
        self.n = n


class Slots:
    __slots__ = ("x", "y")

    def __init__(self, x):
        self.x = x


G = F(1, 2, 3)
_OBJ = Obj(ramp(6), 3)
_SLOTS = Slots(ramp(6))


def _with(o, **attrs):
    for k, v in attrs.items():
        setattr(o, k, v)
    return o


def _evaluated(x):
    fj.eval(x)
    return x


def _cases():
    return [
        ("array", lambda x: x * 2 + 1, lambda i: ((ramp(8, i),), {})),
        ("two arrays", lambda x, y: x * y, lambda i: ((ramp(8, i), ramp(8, 1)), {})),
        ("list of 20", lambda xs: xs[3] + xs[19], lambda i: (([ramp(16, i + k) for k in range(20)],), {})),
        ("tuple of 12 size 1", lambda xs: xs[0] + xs[11], lambda i: ((tuple(F(i + k) for k in range(12)),), {})),
        ("dict", lambda d: d["a"] - d["b"], lambda i: (({"a": ramp(5, i), "b": ramp(5)},), {})),
        ("dataclass", lambda p: p.a * p.scale + p.b, lambda i: ((Params(ramp(4, i), ramp(4)),), {})),
        # plain objects are keyed by identity: one object whose array attribute changes
        ("object", lambda o: o.x * o.n, lambda i: ((_with(_OBJ, x=ramp(6, i)),), {})),
        ("slots", lambda o: o.x + 1, lambda i: ((_with(_SLOTS, x=ramp(6, i)),), {})),
        ("vector", lambda v: v.x + v.z, lambda i: ((Array3f(ramp(3, i), ramp(3), ramp(3, 2)),), {})),
        ("kwargs", lambda x, *, k: x + k, lambda i: ((ramp(4, i),), {"k": ramp(4)})),
        ("python values", lambda x, s, t: x * s if t == "mul" else x, lambda i: ((ramp(4, i), 3.0, "mul"), {})),
        ("global", lambda x: x + G, lambda i: ((ramp(3, i),), {})),
        ("literal", lambda x, c: x + c, lambda i: ((ramp(4, i), Float(2.0)), {})),
        ("uint", lambda x, k: x + Float(k), lambda i: ((ramp(4, i), _evaluated(fj.arange(UInt32, 4))), {})),
    ]


@pytest.mark.parametrize("name,fn,make", _cases(), ids=[c[0] for c in _cases()])
def test_binder_answers_repeated_structures(monkeypatch, name, fn, make):
    ff = fj.freeze(fn)
    for i in range(3):
        args, kw = make(i)
        assert same(ff(*args, **kw), fn(*args, **kw))
    assert ff._bound is not None, "no binder generated"
    _no_walk(monkeypatch, ff)
    for i in range(3, 6):
        args, kw = make(i)
        assert same(ff(*args, **kw), fn(*args, **kw))
    assert ff.n_recordings == 1


def test_binder_for_closures_and_grad_enabled_inputs(monkeypatch):
    k = F(2)

    def outer():
        def f(x, y):
            return fj.detach(x) * k + y
        return f
    fn = outer()
    ff = fj.freeze(fn)
    for i in range(3):
        x = FloatAD(np.arange(4, dtype=np.float32) + i)
        fj.enable_grad(x)
        assert same(ff(x, ramp(4)), fn(x, ramp(4)))
    _no_walk(monkeypatch, ff)
    x = FloatAD(np.arange(4, dtype=np.float32))
    fj.enable_grad(x)
    assert same(ff(x, ramp(4)), fn(x, ramp(4)))
    assert ff.n_recordings == 1


def test_binder_state_fn(monkeypatch):
    st = {"w": ramp(4)}
    ff = fj.freeze(lambda x: x + st["w"], state_fn=lambda x: st)
    for i in range(3):
        ff(ramp(4, i))
    _no_walk(monkeypatch, ff)
    st["w"] = ramp(4, 5)
    assert same(ff(ramp(4)), ramp(4) + ramp(4, 5))


def _variations():
    """(name, function, [input builders]): calls alternating structures a binder must tell apart."""
    a, b = ramp(8), ramp(8, 1)
    xs = [ramp(16, k) for k in range(10)]
    o1, o2 = Obj(ramp(4), 1), Obj(ramp(4), 2)
    o3 = Obj(ramp(4), 1)
    o3.extra = 5
    lit1, lit2 = Float(1.0), Float(2.0)
    ad_plain, ad_grad, ad_one = FloatAD(np.arange(8, dtype=np.float32)), FloatAD(np.ones(8, np.float32)), FloatAD(2.0)
    ad_plain2 = FloatAD(np.arange(8, dtype=np.float32) + 1)
    fj.enable_grad(ad_grad)
    fj.make_opaque(ad_one)
    return [
        ("aliasing", lambda x, y: x + y, [lambda: (a, b), lambda: (a, a), lambda: (a, Float(a))]),
        ("size classes", lambda x, y: x + y if fj.width(x) == fj.width(y) else x,
         [lambda: (ramp(8), ramp(8)), lambda: (ramp(8), ramp(5)), lambda: (ramp(5), ramp(8)),
          lambda: (ramp(1), ramp(8)), lambda: (ramp(3), ramp(3))]),
        ("list length and members", lambda xs: xs[0] + fj.sum(xs[-1]),
         [lambda: (xs,), lambda: (xs[:9],), lambda: (xs[:9] + [xs[0]],), lambda: (xs[:9] + [F(1)],),
          lambda: (xs[:9] + [ramp(5)],), lambda: (xs[:9] + [Float(2.0)],), lambda: (list(xs),)]),
        ("short list and tuple lengths", lambda xs, t: xs[0] + len(xs) + len(t),
         [lambda: ([a, b], (a,)), lambda: ([a, b, ramp(8, 2)], (a,)), lambda: ([a], (a,)), lambda: ([a, b], (a, b)),
          lambda: ([a, b], ()), lambda: ([a, b], (a,))]),
        ("array types", lambda x, y: x * 2 + fj.width(y),
         [lambda: (a, b), lambda: (fj.arange(UInt32, 8), b), lambda: (a, fj.arange(UInt32, 8)),
          lambda: (FloatAD(a), b), lambda: (a, FloatAD(b)), lambda: (a, b)]),
        ("list element types", lambda xs: xs[0] + 1,
         [lambda: ([ramp(3, k) for k in range(9)],), lambda: ([ramp(3)] + [fj.arange(UInt32, 3)] * 8,),
          lambda: ([ramp(3, k) for k in range(8)] + [ramp(3) + 1],)]),
        ("object attributes", lambda o: o.x * o.n, [lambda: (o1,), lambda: (o2,), lambda: (o3,), lambda: (o1,)]),
        ("python values", lambda x, s: x * s,
         [lambda: (a, 2.0), lambda: (a, 3.0), lambda: (a, -0.0), lambda: (a, 0.0), lambda: (a, 2), lambda: (a, True),
          lambda: (a, 1)]),
        ("literals", lambda x, c: x + c,
         [lambda: (a, lit1), lambda: (a, lit1), lambda: (a, lit2), lambda: (a, Float(3.0)), lambda: (a, F(4))]),
        ("dict order", lambda d: d["p"] - d["q"],
         [lambda: ({"p": a, "q": b},), lambda: ({"q": b, "p": a},), lambda: ({"p": a, "q": b, "r": 1},)]),
        ("none versus array", lambda x, y: x if y is None else x + y,
         [lambda: (a, None), lambda: (a, b), lambda: (a, None)]),
        # (the binder checks new data nodes' kind, size class and AD status in bulk at the end)
        ("grad-enabled or not", lambda x, y, z: fj.detach(x) * fj.detach(y) + fj.detach(z),
         [lambda: (ad_plain, ad_plain2, ad_one), lambda: (ad_grad, ad_plain2, ad_one),
          lambda: (ad_plain, ad_grad, ad_one), lambda: (ad_plain, FloatAD(ad_plain), ad_one),
          lambda: (ad_plain, ad_plain2, ad_grad), lambda: (ad_plain, ad_plain2, fj.detach(ad_one) + 1)]),
        ("kwargs", lambda x, **kw: x + len(kw), [lambda: (a,), lambda: (a,), ]),
        ("shared containers", lambda p, q: p[0] + q[0],
         [lambda: ([a], [b]), lambda: ((lambda l: (l, l))([a])), lambda: ([a], [a])]),
        # (containers of one type: compared pairwise up to binder.PAIRWISE_MAX, by a set of ids above)
        ("shared containers among many", lambda *ls: ls[0][0] + sum(all(v is not w for w in ls[:i]) for i, v in enumerate(ls)),
         [lambda: tuple([a] for _ in range(12)), lambda: (lambda l: (l, *([a] for _ in range(10)), l))([a]),
          lambda: tuple([a] for _ in range(5)), lambda: (lambda l: ([a], l, [a], l, [a]))([a]),
          lambda: (lambda l: (l, *([a] for _ in range(8)), l))([a]), lambda: tuple([a] for _ in range(10))]),
    ]


def _drive(ff, fn, builders, rounds=3):
    trace = []
    for _ in range(rounds):
        for mk in builders:
            args = mk()
            assert same(ff(*args), fn(*args))
            trace.append(ff.n_recordings)
    return trace


@pytest.mark.parametrize("case", range(len(_variations())), ids=[v[0] for v in _variations()])
def test_binder_never_changes_what_is_replayed(monkeypatch, case):
    # fresh inputs for each run (a literal input made opaque stays evaluated)
    _, fn, builders = _variations()[case]
    with_binder = _drive(fj.freeze(fn, warn_after=1000), fn, builders)
    assert with_binder[-1] < 3 * len(builders)

    def unsupported(*a, **k):
        raise binder.Unsupported("disabled")
    monkeypatch.setattr(binder, "generate", unsupported)
    _, fn, builders = _variations()[case]
    without = _drive(fj.freeze(fn, warn_after=1000), fn, builders)
    assert with_binder == without


def test_binder_sees_flag_changes():
    ff = fj.freeze(lambda x: x + 1)
    for _ in range(3):
        ff(ramp(4))
    fj.set_flag(fj.JitFlag.KernelHistory, True)
    try:
        ff(ramp(4))
    finally:
        fj.set_flag(fj.JitFlag.KernelHistory, False)
    assert ff.n_recordings == 2


def test_binder_dropped_with_its_recordings():
    ff = fj.freeze(lambda x: x + 1)
    for _ in range(3):
        ff(ramp(4))
    assert ff._bound is not None
    ff.clear()
    assert ff._bound is None and not ff._cache.entries
    assert same(ff(ramp(4)), ramp(4) + 1)
    assert ff.n_recordings == 1


def test_binder_source_is_straight_line():
    ff = fj.freeze(lambda xs: xs[0] + 1)
    xs = [ramp(4, k) for k in range(100)]
    for _ in range(2):
        ff(xs)
    src = ff._bound[0].source
    assert "for " not in src and src.count("\n") < 60     # 100 leaves checked in bulk


@pytest.mark.llvm_only("the LLVM backend's replay slabs")
def test_replay_outputs_are_host_buffer_like():
    from frostjit.backend.llvm.replay import SlabBuffer
    def f(x):
        z = fj.zeros(Float, fj.width(x))
        fj.scatter_add(z, x, fj.arange(UInt32, fj.width(x)))     # a zero-filled scatter target
        return x + 1, x * 2, fj.sum(x), z
    ff = fj.freeze(f)
    for i in range(3):
        outs = ff(ramp(5, i))
    assert ff.n_recordings == 1
    bufs = [o._node.value for o in outs]
    assert all(type(b) is SlabBuffer for b in bufs)
    assert [len(b) for b in bufs] == [5, 5, 1, 5]
    assert np.array_equal(bufs[0].array, np.arange(5, dtype=np.float32) + 3)
    assert bufs[0].array is bufs[0].array and len(bufs[0]) == 5
    assert same(outs[2], F(float(np.sum(np.arange(5) + 2))))
    assert same(outs[3], ramp(5, 2))         # the zero fill is a zeroed slab piece
    assert same(outs[1] + outs[0], ramp(5, 2) * 2 + ramp(5, 3))
    # numpy() of an output is a view of its slab piece (Dr.Jit: .numpy() shares): a write changes the array
    fresh = ff(ramp(5, 7))
    b = fresh[0]._node.value
    got = fresh[0].numpy()
    assert np.array_equal(got, np.arange(5, dtype=np.float32) + 8) and np.shares_memory(got, b.array)
    got[:] = -1
    assert np.array_equal(b.array, np.full(5, -1, np.float32)) and fresh[0][0] == -1
    assert np.array_equal(b.copy_out(3), b.array[:3]) and b.copy_out(3) is not b.copy_out(3)
