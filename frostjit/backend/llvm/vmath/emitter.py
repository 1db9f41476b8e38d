"""A tiny typed IR emitter: lane-wise operations on ``<W x float|double>`` as LLVM IR text.

The vectorized math kernels are written against :class:`Builder` (``b.fma(a, x, c)``,
``b.sel(mask, a, b)``, ...): it names SSA values, turns Python numbers into splat
constants of the right type and records the intrinsics used, so a kernel reads like the
formula it computes.
"""
from __future__ import annotations

import struct

import numpy as np


def hex_constant(value: float, scalar: str) -> str:
    """LLVM hex literal of ``value`` rounded to ``scalar`` (floats are written as doubles)."""
    if scalar == "float":
        value = float(np.float32(value))
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]


class Body:
    """Shared state of one function body: the lines, a value counter, the intrinsics used."""

    def __init__(self):
        self.lines: list[str] = []
        self.count = 0
        self.decls: set[str] = set()


class Builder:
    """Emits lane-wise operations on ``<width x scalar>`` values (SSA names as strings).

    Python numbers passed as operands become splat constants of the right type.
    """

    def __init__(self, body: Body, scalar: str, width: int):
        self.body, self.scalar, self.width = body, scalar, width
        self.bits = 32 if scalar == "float" else 64
        self.mant = 23 if scalar == "float" else 52
        self.bias = 127 if scalar == "float" else 1023
        self.ity = f"i{self.bits}"
        vec = (lambda t: t) if width == 1 else (lambda t: f"<{width} x {t}>")
        self.F, self.I, self.M = vec(scalar), vec(self.ity), vec("i1")
        tag = "f32" if scalar == "float" else "f64"
        self.sfx = tag if width == 1 else f"v{width}{tag}"

    def other(self, scalar: str) -> "Builder":
        return Builder(self.body, scalar, self.width)

    # -- plumbing
    def _v(self, text: str) -> str:
        self.body.count += 1
        name = f"%v{self.body.count}"
        self.body.lines.append(f"  {name} = {text}")
        return name

    def _splat(self, ty: str, lit: str) -> str:
        return lit if self.width == 1 else f"splat ({ty} {lit})"

    def f(self, a) -> str:
        return self._splat(self.scalar, hex_constant(float(a), self.scalar)) if isinstance(a, (int, float)) else a

    def i(self, a) -> str:
        return self._splat(self.ity, str(int(a))) if isinstance(a, int) else a

    def _intr(self, name: str, *args, ret=None, argty=None) -> str:
        ret = ret or self.F
        argty = argty or self.F
        self.body.decls.add(f"declare {ret} @llvm.{name}.{self.sfx}({', '.join([argty] * len(args))})")
        ops = ", ".join(f"{argty} {self.f(a)}" for a in args)
        return self._v(f"call {ret} @llvm.{name}.{self.sfx}({ops})")

    # -- float arithmetic
    def add(self, a, b): return self._v(f"fadd {self.F} {self.f(a)}, {self.f(b)}")
    def sub(self, a, b): return self._v(f"fsub {self.F} {self.f(a)}, {self.f(b)}")
    def mul(self, a, b): return self._v(f"fmul {self.F} {self.f(a)}, {self.f(b)}")
    def div(self, a, b): return self._v(f"fdiv {self.F} {self.f(a)}, {self.f(b)}")
    def neg(self, a): return self._v(f"fneg {self.F} {self.f(a)}")
    def fma(self, a, b, c): return self._intr("fma", a, b, c)
    def abs(self, a): return self._intr("fabs", a)
    def rint(self, a): return self._intr("rint", a)
    def floor(self, a): return self._intr("floor", a)
    def sqrt(self, a): return self._intr("sqrt", a)
    def copysign(self, mag, sign): return self._intr("copysign", mag, sign)

    def poly(self, x, coeffs) -> str:
        """Horner evaluation with fma, coefficients lowest order first."""
        acc = self.f(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, c)
        return acc

    # -- comparisons and selection
    def cmp(self, pred, a, b): return self._v(f"fcmp {pred} {self.F} {self.f(a)}, {self.f(b)}")
    def icmp(self, pred, a, b): return self._v(f"icmp {pred} {self.I} {self.i(a)}, {self.i(b)}")
    def sel(self, m, a, b): return self._v(f"select {self.M} {m}, {self.F} {self.f(a)}, {self.F} {self.f(b)}")
    def seli(self, m, a, b): return self._v(f"select {self.M} {m}, {self.I} {self.i(a)}, {self.I} {self.i(b)}")
    def band(self, a, b): return self._v(f"and {self.M} {a}, {b}")
    def bor(self, a, b): return self._v(f"or {self.M} {a}, {b}")
    def isnan(self, a): return self.cmp("uno", a, a)

    # -- integer and bit operations
    def iadd(self, a, b): return self._v(f"add {self.I} {self.i(a)}, {self.i(b)}")
    def isub(self, a, b): return self._v(f"sub {self.I} {self.i(a)}, {self.i(b)}")
    def iand(self, a, b): return self._v(f"and {self.I} {self.i(a)}, {self.i(b)}")
    def ior(self, a, b): return self._v(f"or {self.I} {self.i(a)}, {self.i(b)}")
    def ixor(self, a, b): return self._v(f"xor {self.I} {self.i(a)}, {self.i(b)}")
    def shl(self, a, b): return self._v(f"shl {self.I} {self.i(a)}, {self.i(b)}")
    def lshr(self, a, b): return self._v(f"lshr {self.I} {self.i(a)}, {self.i(b)}")
    def ashr(self, a, b): return self._v(f"ashr {self.I} {self.i(a)}, {self.i(b)}")
    def as_int(self, a): return self._v(f"bitcast {self.F} {self.f(a)} to {self.I}")
    def as_float(self, a): return self._v(f"bitcast {self.I} {self.i(a)} to {self.F}")
    def to_int(self, a): return self._v(f"fptosi {self.F} {a} to {self.I}")
    def to_float(self, a): return self._v(f"sitofp {self.I} {a} to {self.F}")
    def zext_mask(self, m): return self._v(f"zext {self.M} {m} to {self.I}")

    def pow2i(self, n) -> str:
        """2**n for an integer vector n inside the normal exponent range."""
        return self.as_float(self.shl(self.iadd(n, self.bias), self.mant))

    def flip_sign(self, a, m) -> str:
        """-a where mask m is set (a sign-bit xor, so it also flips zeros and NaNs)."""
        bit = self.shl(self.zext_mask(m), self.bits - 1)
        return self.as_float(self.ixor(self.as_int(a), bit))
