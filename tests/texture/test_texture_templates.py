"""Lookup templates (``texture/template.py``): a lookup made from its configuration's recorded
graph gives the traced lookup's bits, for every configuration the key separates, and the
lookups a template must not serve (derivatives, literal positions, frozen recordings) are traced.
On whichever backend the suite runs."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import frostjit as fj
import frostjit.llvm.ad as AD
from frostjit.texture import FilterMode, WrapMode, template


@pytest.fixture
def made(monkeypatch):
    """A list that records each lookup a template made (the templates start empty)."""
    monkeypatch.setattr(template, "_templates", {})
    calls = []
    arrays = template.Template.arrays

    def spy(self, inputs):
        calls.append(self)
        return arrays(self, inputs)
    monkeypatch.setattr(template.Template, "arrays", spy)
    return calls


def _traced(fn):
    """``fn()`` with the templates off."""
    template.ENABLED = False
    try:
        return fn()
    finally:
        template.ENABLED = True


def _bits(out) -> list:
    return [np.asarray(c.numpy()).tobytes() for c in out]


def _texture(D, res, C, wrap, filt, kind="f", seed=0):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(list(res[::-1]) + [C])
    tensor = {"f": AD.TensorXf, "f64": AD.TensorXf64, "f16": AD.TensorXf16}[kind](data.astype(
        {"f": np.float32, "f64": np.float64, "f16": np.float16}[kind]))
    return getattr(AD, f"Texture{D}{kind}")(tensor, filter_mode=filt, wrap_mode=wrap)


def _positions(D, n, seed, cls=AD.Float):
    rng = np.random.default_rng(seed)
    pos = [rng.uniform(-1.2, 2.2, n) for _ in range(D)]
    for p in pos:       # texel centers, edges and the clamp/mirror boundaries
        p[: min(n, 4)] = [0.0, 1.0, -0.5, 1.5][: min(n, 4)]
    comps = [cls(p.astype(np.float64 if cls is AD.Float64 else np.float32)) for p in pos]
    fj.eval(comps)
    return getattr(AD, f"Array{D}{'f64' if cls is AD.Float64 else 'f'}")(*comps) if D > 1 else comps[0]


def _recorded(made):
    """A bilinear Clamp texture and evaluated positions whose lookup is recorded and then made once
    from its template."""
    tex = _texture(2, (5, 4), 1, WrapMode.Clamp, FilterMode.Linear)
    pos = _positions(2, 9, 1)
    fj.eval(tex.eval(pos))
    tex.eval(pos)
    assert len(made) == 1
    return tex, pos


@st.composite
def configs(draw):
    D = draw(st.integers(1, 3))
    res = tuple(draw(st.integers(1, 6)) for _ in range(D))
    C = draw(st.sampled_from([1, 1, 2, 3, 5]))
    wrap = draw(st.sampled_from(list(WrapMode)))
    filt = draw(st.sampled_from(list(FilterMode)))
    kind = draw(st.sampled_from(["f", "f", "f64", "f16"]))
    n = draw(st.sampled_from([1, 7, 40]))
    masked = draw(st.booleans())
    return D, res, C, wrap, filt, kind, n, masked, draw(st.integers(0, 2**16))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(configs())
def test_a_template_makes_the_traced_lookup(made, case):
    D, res, C, wrap, filt, kind, n, masked, seed = case
    tex = _texture(D, res, C, wrap, filt, kind, seed)
    pos_cls = AD.Float64 if kind == "f64" else AD.Float
    active = AD.Bool(np.random.default_rng(seed).random(n) < 0.7) if masked else True
    if masked:
        fj.eval(active)
    first = _bits(tex.eval(_positions(D, n, seed, pos_cls), active))      # traced, recorded
    if not masked:          # new arrays, new values, another width (not 1: another key) unless masked
        n = {1: 1, 7: 40, 40: 7}[n]
    pos = _positions(D, n, seed + 1, pos_cls)
    # (a one-texel texture gathers at a literal index of the lookup's width: traced every time)
    uses = int(np.prod(res)) * C > 1 or n == 1
    before = len(made)      # (of every example so far)
    got = _bits(tex.eval(pos, active))
    assert len(made) == before + uses
    assert got == _bits(_traced(lambda: tex.eval(pos, active)))
    tex.set_tensor(_texture(D, res, C, wrap, filt, kind, seed + 2).tensor())     # new texels, same shape
    got = _bits(tex.eval(pos, active))
    assert len(made) == before + 2 * uses
    assert got == _bits(_traced(lambda: tex.eval(pos, active)))
    assert len(first) == len(got)


def test_every_part_of_the_configuration_keys_a_template(made):
    """Textures that differ from a base in one part each, looked up in turn twice: each second
    lookup is made from its own template and equals the traced lookup."""
    base = dict(D=2, res=(5, 4), C=1, wrap=WrapMode.Clamp, filt=FilterMode.Linear, kind="f")
    variants = [base] + [dict(base, **{k: v}) for k, v in (
        ("wrap", WrapMode.Mirror), ("wrap", WrapMode.Repeat), ("filt", FilterMode.Nearest), ("res", (4, 5)),
        ("res", (1, 4)), ("C", 2), ("kind", "f64"), ("kind", "f16"))]
    texes = [_texture(**v, seed=k) for k, v in enumerate(variants)]
    pos = _positions(2, 33, 5)
    pos64 = _positions(2, 33, 5, AD.Float64)
    mask = AD.Bool(np.arange(33) % 3 != 0)
    fj.eval(mask)
    lookups = [(t, p, a) for t in texes for p in (pos, pos64) for a in (True, mask)]
    for t, p, a in lookups:
        fj.eval(t.eval(p, a))
    assert not made
    for t, p, a in lookups:
        assert _bits(t.eval(p, a)) == _bits(_traced(lambda: t.eval(p, a)))
    assert len(made) == len(lookups)
    assert len(set(map(id, made))) == len(lookups)      # a template per configuration


def test_lookups_a_template_must_not_serve_are_traced(made):
    tex, pos = _recorded(made)
    # numbers, pending positions and a literal mask are not evaluated arrays
    for p, a in (((0.25, 0.75), True), (AD.Array2f(pos.x * 1, pos.y), True), (pos, AD.Bool(True))):
        assert _bits(tex.eval(p, a)) == _bits(_traced(lambda: tex.eval(p, a)))
    assert len(made) == 1
    # derivatives: of the positions, and of the texels
    for grad_pos in (True, False):
        p = _positions(2, 9, 1)
        t = _texture(2, (5, 4), 1, WrapMode.Clamp, FilterMode.Linear)
        if grad_pos:
            fj.enable_grad(p)
        else:
            tensor = t.tensor()
            fj.enable_grad(tensor)
            t.set_tensor(tensor)
        out = t.eval(p)[0]
        fj.backward(out)
        assert fj.grad(p.x if grad_pos else t.tensor()).numpy().any()
    assert len(made) == 1
    # positions of different sizes: the traced lookup's error
    with pytest.raises(Exception) as traced:
        _traced(lambda: tex.eval(AD.Array2f(_positions(1, 9, 1), _positions(1, 8, 1))))
    with pytest.raises(type(traced.value)):
        tex.eval(AD.Array2f(_positions(1, 9, 1), _positions(1, 8, 1)))


def test_a_frozen_lookup_is_traced_while_recorded(made):
    tex = _texture(2, (5, 4), 1, WrapMode.Clamp, FilterMode.Linear)

    @fj.freeze
    def f(t, p):
        return t.eval(p)[0] * 2

    for seed in range(4):
        pos = _positions(2, 9 + seed, seed)
        assert f(tex, pos).numpy().tobytes() == (_traced(lambda: tex.eval(pos)[0]) * 2).numpy().tobytes()
    assert not made


def test_a_graph_with_another_evaluated_array_is_not_recorded(made):
    tex = _texture(2, (5, 4), 1, WrapMode.Clamp, FilterMode.Linear)
    pos = _positions(2, 9, 1)
    out = tex.eval(pos)
    key = ("test", 1)
    template.record(key, [pos.x._node, pos.y._node], list(out))     # the texels' array not an input
    assert template.find(key) is template.TRACED
    template.record(key, [pos.x._node, pos.y._node, tex.tensor().array._node], list(out))
    assert isinstance(template.find(key), template.Template)


def test_a_template_whose_graph_differs_is_caught(made):
    tex = _texture(2, (5, 4), 1, WrapMode.Clamp, FilterMode.Linear)
    pos = _positions(2, 9, 1)
    out = list(tex.eval(pos))
    leaves = [pos.x._node, pos.y._node, tex.tensor().array._node]
    t = template._capture(leaves, out)
    assert template._same_graph(t, leaves, out)
    k = next(j for j, s in enumerate(t.steps) if s.op == "mul")
    t.steps[k] = t.steps[k]._replace(op="add")
    assert not template._same_graph(t, leaves, out)


@pytest.mark.parametrize("mode", ["symbolic", "evaluated"])
def test_lookups_in_loops_and_branches_are_traced(made, mode):
    """A loop body or branch masks its gathers (retired lanes read nothing): its lookups trace,
    never record (the scope's mask would be in the graph) nor use a template."""
    tex, pos = _recorded(made)              # recorded outside any scope
    templates = dict(template._templates)

    def run():
        def body(i, acc):
            return i + 1, acc + tex.eval(pos)[0] * AD.Float(i)
        i, acc = fj.while_loop((AD.UInt(np.arange(9) % 3), AD.Float(np.zeros(9, np.float32))),
                               lambda i, acc: i < 3, body, mode=mode)
        y = fj.if_stmt((acc,), acc > 1, lambda a: (a + tex.eval(pos)[0],), lambda a: (a,), mode=mode)[0]
        return _bits([acc, y])
    assert run() == _traced(run)
    assert len(made) == 1 and template._templates == templates


def test_a_lookup_after_a_scatter_into_its_inputs_reads_the_new_values(made):
    tex, pos = _recorded(made)
    for target in ("x", "texels"):
        arr = pos.x if target == "x" else tex.tensor().array
        fj.scatter(arr, AD.Float([0.3, 0.7]), AD.UInt([0, 3]))      # pending until read
        got = _bits(tex.eval(pos))
        assert got == _bits(_traced(lambda: tex.eval(pos)))
        want = tex.eval(AD.Array2f(AD.Float(pos.x.numpy()), AD.Float(pos.y.numpy())))
        assert got == _bits(want)


def test_one_array_as_two_inputs_is_traced(made):
    """The same array as x and y (or as positions and texels) is one node: a graph recorded so
    would read it for both inputs of a later lookup with two arrays."""
    tex = _texture(2, (5, 4), 1, WrapMode.Clamp, FilterMode.Linear)
    a = _positions(1, 20, 1)
    fj.eval(tex.eval(AD.Array2f(a, a)))
    tex.eval(AD.Array2f(a, a))
    pos = _positions(2, 20, 2)
    assert _bits(tex.eval(pos)) == _bits(_traced(lambda: tex.eval(pos)))
    flat = _texture(1, (20,), 1, WrapMode.Clamp, FilterMode.Linear)
    texels = flat.tensor().array
    fj.eval(flat.eval(texels))                  # the texels as positions
    b = _positions(1, 20, 3)
    assert _bits(flat.eval(b)) == _bits(_traced(lambda: flat.eval(b)))


def test_a_graph_with_a_literal_of_the_lookups_width_is_traced(made):
    """A one-texel texture gathers at a literal index of the lookup's width (Dr.Jit's broadcast
    of a size-1 source): a template of it would give a later lookup the first one's width."""
    tex = AD.Texture1f(AD.TensorXf(np.array([[2.5]], np.float32)), wrap_mode=WrapMode.Repeat,
                       filter_mode=FilterMode.Nearest)
    for n in (7, 40, 7):
        pos = _positions(1, n, n)
        got = tex.eval(pos)[0].numpy()
        assert got.shape == (n,)
        np.testing.assert_array_equal(got, np.full(n, 2.5, np.float32))
    assert not made
