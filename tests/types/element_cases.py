"""The element-type programs run by both Dr.Jit 1.5 and frostjit (tests/types/).

Each case is ``name -> expression`` over ``J`` (``drjit`` or ``frostjit``), ``T`` (its
``llvm`` module) and the input arrays ``h0 h1 h2`` (Float16), ``i0 i1`` (Int8), ``u0 u1``
(UInt8), ``f`` (Float32), ``d`` (Float64), ``w`` (Int32), ``s`` (a shift count, UInt8/Int8
compatible), all of one width.  :func:`inputs` makes the inputs: every half bit pattern
(65,536 lanes) for the exhaustive digests, or a random sample with edge values.

This module imports neither drjit nor frostjit.
"""
from __future__ import annotations

import hashlib

import numpy as np

#: Exact operations (bit for bit): name -> expression.
EXACT = {
    # Float16 arithmetic, computed in float32 and rounded after every operation
    "h_add": "h0 + h1", "h_sub": "h0 - h1", "h_mul": "h0 * h1", "h_div": "h0 / h1",
    "h_fma": "J.fma(h0, h1, h2)", "h_sqrt": "J.sqrt(h0)", "h_rsqrt": "J.rsqrt(h0)", "h_rcp": "J.rcp(h0)",
    "h_min": "J.minimum(h0, h1)", "h_max": "J.maximum(h0, h1)", "h_abs": "J.abs(h0)", "h_neg": "-h0",
    "h_floor": "J.floor(h0)", "h_ceil": "J.ceil(h0)", "h_trunc": "J.trunc(h0)", "h_round": "J.round(h0)",
    "h_chain": "(h0 * h1 + h2) * h0 - h1",
    "h_lt": "h0 < h1", "h_eq": "h0 == h1", "h_isnan": "J.isnan(h0)", "h_isinf": "J.isinf(h0)",
    "h_select": "J.select(h0 < h1, h0, h2)",
    # conversions to and from Float16
    "h_from_f32": "T.Float16(f)", "h_from_f64": "T.Float16(d)", "h_from_i32": "T.Float16(w)",
    "h_from_i8": "T.Float16(i0)", "h_from_u8": "T.Float16(u0)",
    "h_to_f32": "T.Float(h0)", "h_to_f64": "T.Float64(h0)",
    # mixed promotion
    "h_plus_i8": "h0 + i0", "h_plus_f32": "h0 + f", "h_times_py": "h0 * 1.1", "h_plus_py_int": "h0 + 3",
    # Int8 / UInt8: wrapping C arithmetic
    "i_add": "i0 + i1", "i_sub": "i0 - i1", "i_mul": "i0 * i1", "i_neg": "-i0", "i_abs": "J.abs(i0)",
    "i_and": "i0 & i1", "i_or": "i0 | i1", "i_xor": "i0 ^ i1", "i_not": "~i0",
    "i_shl": "i0 << (s & 7)", "i_shr": "i0 >> (s & 7)", "i_lt": "i0 < i1", "i_min": "J.minimum(i0, i1)",
    "u_add": "u0 + u1", "u_sub": "u0 - u1", "u_mul": "u0 * u1", "u_shl": "u0 << (T.UInt8(s) & 7)",
    "u_shr": "u0 >> (T.UInt8(s) & 7)", "u_lt": "u0 < u1", "u_max": "J.maximum(u0, u1)", "u_not": "~u0",
    "iu_add": "i0 + u0", "i_plus_i32": "i0 + w", "u_plus_py": "u0 + 200", "i_plus_py": "i0 - 100",
    "i_to_i32": "T.Int32(i0)", "u_to_i32": "T.Int32(u0)", "i32_to_i8": "T.Int8(w)", "i32_to_u8": "T.UInt8(w)",
    "i_to_u8": "T.UInt8(i0)", "i_to_f32": "T.Float(i0)", "u_to_f64": "T.Float64(u0)",
    "i_fma": "J.fma(i0, i1, u0)",
}

#: Transcendental functions on Float16 (float32 polynomial, rounded): within 1 half ULP of
#: the exact value, and the share of lanes where frostjit and Dr.Jit agree is reported.
MATH = {
    "h_sin": "J.sin(h0)", "h_cos": "J.cos(h0)", "h_exp": "J.exp(h0)", "h_log": "J.log(h0)",
    "h_tanh": "J.tanh(h0)", "h_atan2": "J.atan2(h0, h1)", "h_pow": "J.power(J.abs(h0), h1)",
}

#: Reductions of Float16 (accumulated in float32): name -> expression (size-1 results).
REDUCTIONS = {"h_sum": "J.sum(J.select(J.isfinite(h0), h0, 0))",
              "h_prod": "J.prod(J.select(J.isfinite(h0), 1 + J.abs(h0) * 0.0001, 1))",
              "h_dot": "J.dot(J.select(J.isfinite(h0), h0, 0), J.select(J.isfinite(h1), h1, 0))",
              "h_prefix": "J.prefix_sum(J.select(J.isfinite(h0), J.abs(h0) * 0.01, 0))",
              "h_sum_small": "J.sum(J.full(T.Float16, 0.1, 1000))"}


def inputs(kind: str, n: int = 4096, seed: int = 20251201) -> dict:
    """NumPy inputs: ``"all"`` (every half bit pattern, the others drawn to match), or
    ``"sample"`` (``n`` random lanes with edge values)."""
    with np.errstate(all="ignore"):     # NaN and inf inputs
        return _inputs(kind, n, seed)


def _inputs(kind: str, n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    if kind == "all":
        h0 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
        n = h0.shape[0]
    else:
        h0 = rng.integers(0, 1 << 16, n).astype(np.uint16).view(np.float16)
    h1 = rng.integers(0, 1 << 16, n).astype(np.uint16).view(np.float16)
    h2 = rng.integers(0, 1 << 16, n).astype(np.uint16).view(np.float16)
    # a third of the second operands near the first (rounding ties, cancellation)
    near = rng.random(n) < 0.33
    h1 = np.where(near, (h0.view(np.uint16) + rng.integers(-3, 4, n).astype(np.uint16)).view(np.float16), h1)
    f = (h0.astype(np.float32) + rng.standard_normal(n).astype(np.float32) * np.float32(2.0**-12)).astype(np.float32)
    # doubles just beside half rounding boundaries (two roundings through float32 differ from one)
    d = h0.astype(np.float64) * (1 + 2.0**-11 + rng.choice([2.0**-30, -2.0**-30, 0.0, 2.0**-40], n))
    w = rng.integers(-70000, 70000, n).astype(np.int32)
    i0 = rng.integers(-128, 128, n).astype(np.int8)
    i1 = rng.integers(-128, 128, n).astype(np.int8)
    u0 = rng.integers(0, 256, n).astype(np.uint8)
    u1 = rng.integers(0, 256, n).astype(np.uint8)
    s = rng.integers(0, 128, n).astype(np.int8)
    return {"h0": h0, "h1": h1, "h2": h2, "f": f, "d": d, "w": w, "i0": i0, "i1": i1, "u0": u0, "u1": u1,
                "s": s}


def namespace(J, T, arrays: dict) -> dict:
    """The names the expressions use, with the inputs as ``T`` arrays."""
    types = {"h0": T.Float16, "h1": T.Float16, "h2": T.Float16, "f": T.Float, "d": T.Float64, "w": T.Int32,
             "i0": T.Int8, "i1": T.Int8, "u0": T.UInt8, "u1": T.UInt8, "s": T.Int8}
    ns = {"J": J, "T": T}
    ns.update({k: types[k](v) for k, v in arrays.items()})
    return ns


def evaluate(J, T, arrays: dict, cases: dict) -> dict:
    """``{name: numpy result or error string}`` of ``cases`` on ``arrays``."""
    ns = namespace(J, T, arrays)
    out = {}
    for name, expr in cases.items():
        try:
            r = eval(expr, ns)
            out[name] = np.asarray(r.numpy())
        except Exception as e:      # recorded: the other side must fail too
            out[name] = f"error: {type(e).__name__}"
    return out


def digest(a) -> str:
    """SHA-256 of an array's bytes, every NaN made one canonical NaN (the sign and payload of a
    NaN are unspecified, as in the op table's references)."""
    if isinstance(a, str):
        return a
    a = np.asarray(a)
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), np.array(np.nan, a.dtype), a)
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def same_bits(a, b) -> np.ndarray:
    if a.dtype.kind == "f":
        u = f"u{a.itemsize}"
        return (a.view(u) == b.view(u)) | (np.isnan(a) & np.isnan(b))
    return a == b
