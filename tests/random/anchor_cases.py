"""Programs that draw random numbers, written once for both Dr.Jit 1.5 and frostjit.

``run_case(dr, L, case)`` runs one case with ``dr`` = ``drjit`` or ``frostjit`` and ``L`` = its
``llvm`` module, and returns every value it drew (and the generator state at the end) as NumPy
arrays.  ``make_anchor_data.py`` runs the cases under Dr.Jit (in a subprocess) and stores the
results in ``data/drjit_1_5_sequences.npz``; ``test_anchor_sequences.py`` runs them under
frostjit and compares bit for bit.  This module imports neither JIT: it must run under both.
"""
from __future__ import annotations

import numpy as np

WIDTHS = (1, 7, 17, 64)          # 1, odd sizes that are not a multiple of any SIMD width, a full block
WIDE = 300                       # one wide run per family

PCG_SEEDS = (None, (0, 0), (1, 2), (2**64 - 1, 2**64 - 1), (0x0123456789ABCDEF, 0xFEDCBA9876543210))
PCG_PROGRAM = (
    ("next_uint32",), ("next_uint64",), ("next_float32",), ("next_float64",),
    ("next_float32_normal",), ("next_float64_normal",),
    ("next_float", "Float"), ("next_float", "Float64"), ("next_float_normal", "Float64"),
    ("bounded32", 1), ("bounded32", 7), ("bounded32", 3 * 2**30), ("bounded32", 2**31 + 1), ("bounded32", 2**32 - 1),
    ("bounded64", 3), ("bounded64", 10**15), ("bounded64", 2**63 + 3),
    ("masked", "next_uint32"), ("masked", "next_float64"), ("masked", "next_float64_normal"),
    ("masked", "next_uint64"), ("masked_bounded32", 2**31 + 1),
    ("prev_uint32",), ("prev_float32",), ("prev_float64_normal",), ("prev_uint64",), ("prev_float", "Float64"),
    ("prev_float64",), ("prev_float32_normal",), ("prev_float_normal", "Float"),
    ("masked", "prev_uint32"),
    ("add", 0), ("add", 1), ("add", 1000), ("add", -5), ("add", 2**40 + 3), ("add", -(2**63)),
    ("sub", 17), ("add_lanes",), ("sub_lanes",), ("distance",), ("distance_other_stream",),
    ("next_uint32",), ("state",), ("next_float16",),
)

# PCG32 states whose next output is an edge of the float conversions (found by search with
# reference.RefPCG32): 23 zero bits (u = 0), u = 0.5 (a zero normal), the largest Float32
# uniform, and outputs 0 and 2^31 (the Float64 conversion's 0 and 0.5).
PCG_EDGE_STATES = (0x38000954018C1953, 0xA04F6813DF7373C6, 0xB923D1B70ED9B72D, 0x28000A0000AC8BE0,
                   0x4800120801568A13)
PCG_EDGE_OPS = ("next_float32_normal", "next_float64_normal", "next_float32", "next_float64", "next_uint32")

PHILOX_SEEDS = (0, 1, 0x123456789ABCDEF0, 2**64 - 1, "lanes")
PHILOX_PROGRAM = (
    ("next_uint32x4",), ("next_uint64x2",), ("next_float32x4",), ("next_float64x2",),
    ("next_float32x4_normal",), ("next_float64x2_normal",),
    ("masked", "next_uint32x4"), ("masked", "next_float64x2_normal"), ("counter",), ("seed",),
)

RNG_SEEDS = (0, 1, 12345, 2**64 - 1)
RNG_PROGRAM = (
    ("random", "Float", None), ("random", "Float64", None), ("random", "Array3f", 3), ("random", "Array2f64", 2),
    ("random", "Array3f64", 3), ("random", "Array4f", 4), ("random", "Array4f64", 4),
    ("normal", "Float", None), ("normal", "Float64", None), ("normal", "Array3f", 3), ("normal", "Array3f64", 3),
    ("uniform", "Float", (-1.3, 2.7)), ("uniform", "Float64", (0.1, 0.7)), ("uniform", "Float", (0.0, 3.0)),
    ("uniform_arrays", "Float", None),
    ("normal_args", "Float", (0.3, 1.7)), ("normal_args", "Float", (0.0, 2.0)), ("normal_args", "Float64", (-1.0, 1.0)),
    ("normal_arrays", "Float", None), ("normal_args", "Float", (1.5, 0.0)), ("uniform", "Float64", (2.0, 2.0)),
    ("integers", "UInt32", (10, None, False)), ("integers", "Int32", (-5, 7, False)),
    ("integers", "UInt32", (3 * 2**30, None, False)), ("integers", "Int32", (-2**31, 2**31 - 1, False)),
    ("integers", "UInt32", (0, 6, True)), ("integers", "UInt32", (2**31 + 1, None, False)),
    ("integers_arrays", "UInt32", None),
    ("counter",),
)


def cases():
    """Every case: ``(name, family, seed, width)``."""
    out = []
    for family, seeds in (("pcg32", PCG_SEEDS), ("philox", PHILOX_SEEDS), ("rng", RNG_SEEDS)):
        for k, seed in enumerate(seeds):
            for w in WIDTHS + ((WIDE,) if k == 1 else ()):
                out.append((f"{family}-{k}-{w}", family, seed, w))
    out.append(("pcg32-edges-5", "pcg32_edges", None, len(PCG_EDGE_STATES)))
    out.append(("rng-array-seed-7", "rng", "lanes", 7))
    out.append(("rng-symbolic-17", "rng", "symbolic", 17))
    return out


def _np(x):
    """An array's values (static vectors as (n, width)) as NumPy, floats by their bits.

    A copy: Dr.Jit's ``numpy()`` can be a view of a buffer that a later operation reuses."""
    a = np.array(x.numpy(), copy=True)
    if a.dtype == np.float32:
        return a.view(np.uint32)
    if a.dtype == np.float64:
        return a.view(np.uint64)
    return a


def _mask(dr, L, w):
    return dr.arange(L.UInt32, w) % 3 != 1


def run_case(dr, L, family, seed, width):
    """Run one case; returns the list of NumPy arrays it produced."""
    if family == "pcg32":
        return _run_pcg(dr, L, seed, width)
    if family == "pcg32_edges":
        return _run_pcg_edges(dr, L, width)
    if family == "philox":
        return _run_philox(dr, L, seed, width)
    return _run_rng(dr, L, seed, width)


def _run_pcg(dr, L, seed, w):
    rng = L.PCG32(w) if seed is None else L.PCG32(w, seed[0], seed[1])
    out = []
    for step in PCG_PROGRAM:
        op = step[0]
        if op in ("next_float", "next_float_normal", "prev_float", "prev_float_normal"):
            out.append(_np(getattr(rng, op)(getattr(L, step[1]))))
        elif op == "bounded32":
            out.append(_np(rng.next_uint32_bounded(step[1])))
        elif op == "bounded64":
            out.append(_np(rng.next_uint64_bounded(step[1])))
        elif op == "masked":
            out.append(_np(getattr(rng, step[1])(_mask(dr, L, w))))
        elif op == "masked_bounded32":
            out.append(_np(rng.next_uint32_bounded(step[1], _mask(dr, L, w))))
        elif op == "add":
            rng += step[1]
            out.append(_np(rng.state))
        elif op == "sub":
            rng = rng - step[1]
            out.append(_np(rng.state))
        elif op == "add_lanes":
            rng += dr.arange(L.Int64, w) * 1000003 - 7
            out.append(_np(rng.state))
        elif op == "sub_lanes":
            rng -= dr.arange(L.Int64, w) * 3
            out.append(_np(rng.state))
        elif op == "distance":
            other = L.PCG32(rng)
            other += dr.arange(L.Int64, w) * 12345 - 999
            out.append(_np(other - rng))
            out.append(_np(rng - other))
        elif op == "distance_other_stream":
            other = L.PCG32(w, 99, 5)
            other.inc = L.UInt64(rng.inc)
            out.append(_np(other - rng))
        elif op == "state":
            out.append(_np(rng.state))
            out.append(_np(rng.inc))
        else:
            out.append(_np(getattr(rng, op)()))
    return out


def _run_pcg_edges(dr, L, w):
    out = []
    for op in PCG_EDGE_OPS:
        rng = L.PCG32(w)
        rng.state = L.UInt64(list(PCG_EDGE_STATES))
        out.append(_np(getattr(rng, op)()))
        out.append(_np(getattr(rng, op.replace("next_", "prev_"))()))     # the same value, stepping back
    return out


def _run_philox(dr, L, seed, w):
    lane = dr.arange(L.UInt32, w)
    if seed == "lanes":
        p = L.Philox4x32(dr.arange(L.UInt64, w) * 0x9E3779B97F4A7C15, lane, 5, 6, iterations=10)
    else:
        p = L.Philox4x32(seed, lane * 7 + 3, 11, 0xFFFFFFFF, iterations=4 if seed == 1 else 7)
    out = []
    for step in PHILOX_PROGRAM:
        op = step[0]
        if op == "masked":
            out.append(_np(getattr(p, step[1])(_mask(dr, L, w))))
        elif op == "counter":
            out.append(_np(p.counter))
        elif op == "seed":
            out.append(_np(p.seed))
        else:
            out.append(_np(getattr(p, op)()))
    return out


def _run_rng(dr, L, seed, w):
    if seed == "lanes":
        g = dr.rng(seed=dr.arange(L.UInt64, w) * 77 + 5)
    elif seed == "symbolic":
        g = dr.rng(seed=L.UInt64(42), symbolic=True)
    else:
        g = dr.rng(seed=seed)
    out = []
    for step in RNG_PROGRAM:
        op = step[0]
        if op == "counter":
            out.append(np.array(g._counter.numpy(), copy=True))
            continue
        T = getattr(L, step[1])
        shape = (step[2], w) if op in ("random", "normal") and step[2] is not None else w
        if op in ("random", "normal"):
            v = getattr(g, op)(T, shape)
        elif op == "uniform":
            v = g.uniform(T, w, step[2][0], step[2][1])
        elif op == "uniform_arrays":
            v = g.uniform(T, w, low=dr.arange(T, w) * 0.25 - 1, high=T(5.5))
        elif op == "normal_args":
            v = g.normal(T, w, step[2][0], step[2][1])
        elif op == "normal_arrays":
            v = g.normal(T, w, loc=dr.arange(T, w) - 3, scale=dr.arange(T, w) * 0.5 + 0.5)
        elif op == "integers":
            lo, hi, endpoint = step[2]
            v = g.integers(T, w, lo, hi, endpoint=endpoint)
        elif op == "integers_arrays":
            v = g.integers(T, w, dr.arange(T, w), dr.arange(T, w) * 5 + 3 * 2**30)
        out.append(_np(v))
    return out
