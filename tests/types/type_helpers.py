"""Helpers of the type tests: random arrays of any static type, finite differences, frozen == plain."""
from __future__ import annotations

import numpy as np

import frostjit as fj

WIDTHS = [1, 7, 1000, 100_003]


def random_array(cls, width: int, rng, scale: float = 1.0):
    """A ``cls`` (any static, matrix, complex or quaternion type) of ``width`` random lanes."""
    if hasattr(cls, "_elem") and cls._n is not None:
        comps = [random_array(cls._elem, width, rng, scale) for _ in range(cls._n)]
        return cls._from_components(comps)
    vt = cls._vt
    return cls((rng.standard_normal(width) * scale).astype(vt.np_dtype))


def leaves_numpy(x) -> list:
    """The NumPy values of every 1-D array in ``x`` (outermost component first)."""
    return [leaf.numpy() for leaf in fj.tree.leaves(x)]


def assert_same(a, b):
    """Equal structures and bit-identical leaves (NaN equals NaN)."""
    la, lb = fj.tree.leaves(a), fj.tree.leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def check_gradient(f, args, rtol=1e-6, atol=1e-8, eps=1e-6):
    """Reverse-mode gradients of ``sum(leaves(f(*args)))`` against central differences.

    ``args`` are AD arrays (``frostjit.llvm.ad`` types of Float64); every leaf of every
    argument is perturbed lane by lane (the lanes are independent: one perturbation per leaf).
    """
    def total(*xs):
        out = f(*xs)
        acc = None
        for leaf in fj.tree.leaves(out):
            acc = leaf if acc is None else acc + leaf
        return acc

    params = fj.tree.leaves(list(args))
    for p in params:
        fj.enable_grad(p)
    fj.backward(total(*args))
    grads = [fj.grad(p).numpy().copy() for p in params]
    for p in params:
        fj.disable_grad(p)
    for k, p in enumerate(params):
        base = p.numpy()
        values = [total(*_with_leaf(args, k, base + sign * eps)).numpy() for sign in (1, -1)]
        fd = (values[0] - values[1]) / (2 * eps)
        np.testing.assert_allclose(grads[k], fd, rtol=rtol, atol=atol, err_msg=f"leaf {k} of the arguments")


def _with_leaf(args, k: int, values):
    """``args`` with its ``k``-th leaf replaced by an array of ``values`` (a new PyTree)."""
    counter = [0]

    def replace(leaf):
        i = counter[0]
        counter[0] += 1
        return type(leaf)(values) if i == k else leaf
    return fj.tree.transform(list(args), replace)
