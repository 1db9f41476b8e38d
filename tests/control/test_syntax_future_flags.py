"""``@fj.syntax`` compiles the rewritten function with the *user's* future imports.

This module deliberately has no ``from __future__ import annotations``: annotations of classes
defined inside a rewritten function must stay the objects they name, as in the undecorated
function (frostjit's own modules import ``annotations``, and ``compile`` inherited it).
"""
import dataclasses

import numpy as np

import frostjit as fj
from frostjit.llvm import Float, UInt32


def _classes(t):
    @dataclasses.dataclass
    class XY:
        x: t
        y: t

    class Plain:
        a: t
        b: "t"

    i = UInt32(0)
    while i < 2:            # a loop for @fj.syntax to rewrite
        i += 1
    return XY, Plain


def test_class_annotations_in_a_rewritten_function_equal_the_plain_ones():
    plain = _classes(Float)
    rewritten = fj.syntax(_classes)(Float)
    for p, r in zip(plain, rewritten):
        assert r.__annotations__ == p.__annotations__
    assert rewritten[0].__annotations__ == {"x": Float, "y": Float}


def test_a_dataclass_of_a_local_type_fills_a_local_buffer_under_syntax():
    # Dr.Jit's test_local test07: alloc_local(XY, value=zeros(XY)) with XY defined in the function
    @fj.syntax
    def f(t):
        @dataclasses.dataclass
        class XY:
            x: t
            y: t

        buf = fj.alloc_local(XY, size=2, value=fj.zeros(XY))
        buf[0] = XY(t(3), t(4))
        return buf[0], buf[1]

    first, second = f(Float)
    assert np.array_equal(first.x.numpy(), [3]) and np.array_equal(first.y.numpy(), [4])
    assert np.array_equal(second.x.numpy(), [0]) and np.array_equal(second.y.numpy(), [0])
