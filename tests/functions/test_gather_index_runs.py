"""Gathers and scatter reductions whose indices form runs within a chunk, against NumPy.

The LLVM backend decides per chunk of lanes (32 on AVX-512, 16 on AVX2) between one load or
one atomic add (every active lane uses lane 0's element), a vector load or read-modify-write
(consecutive elements from lane 0's) and a hardware gather or lane-by-lane updates, by
comparing the lanes' indices with lane 0's (codegen/memory.py: ``_IndexRun``).  The chunks here
are built to sit on and just beside those cases: a run broken in one lane, lane 0 inactive or
out of bounds, runs crossing the ends of the source, indices that wrap around the index type,
for every index type and a ragged last chunk; every result must be NumPy's.  With mask registers
a chunk whose lanes 0 and 1 are neither equal nor adjacent skips the tests (a scalar pre-test):
chunks with lanes 0 and 1 equal or adjacent and the rest random, and with lane 1 away from a run
of the others, sit on both sides of it.
"""
import numpy as np
from hypothesis import given, strategies as st

import frostjit as fj
from frostjit.llvm import Bool, Float, Float16, Float64, Int8, Int32, Int64, UInt8, UInt32, UInt64

CHUNK = 32          # patterns are laid out per 32 lanes: whole chunks on AVX-512, two on AVX2
N_SRC = 100
INDEX = {"Int32": (Int32, np.int32), "UInt32": (UInt32, np.uint32), "Int64": (Int64, np.int64),
         "UInt64": (UInt64, np.uint64)}
KINDS = ("same", "same_but_one", "consecutive", "consecutive_but_one", "descending", "random", "wrap",
         "pair_then_random", "scattered_pair_then_run")


def _some_lane(rng) -> int:
    """A lane other than 0, often the last of a register or of a chunk (16 or 32 lanes)."""
    return int(rng.choice([1, 15, 16, CHUNK - 1, int(rng.integers(1, CHUNK))]))


def _chunk(kind: str, rng, itype) -> np.ndarray:
    """One chunk of indices (as Python ints, before conversion to the index type)."""
    j = np.arange(CHUNK, dtype=np.int64)
    c = int(rng.integers(-20, N_SRC + 5))
    if kind == "same":
        idx = np.full(CHUNK, c)
    elif kind == "same_but_one":
        idx = np.full(CHUNK, c)
        lane = _some_lane(rng)
        idx[lane] += int(rng.choice([-1, 1, lane]))      # (+lane: the lane's consecutive index)
    elif kind == "consecutive":
        idx = c + j
    elif kind == "consecutive_but_one":
        idx = c + j
        lane = _some_lane(rng)
        idx[lane] += int(rng.choice([-1, 1, -lane]))     # (-lane: lane 0's index)
    elif kind == "descending":
        idx = c - j
    elif kind == "random":
        idx = rng.integers(-5, N_SRC + 5, CHUNK)
    elif kind == "pair_then_random":        # lanes 0 and 1 pass the pre-test, the chunk is random
        idx = rng.integers(-5, N_SRC + 5, CHUNK)
        idx[1] = idx[0] + int(rng.integers(0, 2))
    elif kind == "scattered_pair_then_run":     # a run of lane 0's element or its successors but lane 1
        idx = c + j * int(rng.integers(0, 2))
        idx[1] = c + int(rng.choice([-1, 2, 40]))
    else:   # across the top of the index type (signed: the highest value, unsigned: 0)
        bits = np.iinfo(itype).bits
        base = int(rng.choice([2 ** bits, 2 ** (bits - 1)])) - CHUNK // 2
        unsigned = np.array([(base + k) % 2 ** bits for k in range(CHUNK)], dtype=np.uint64)
        return unsigned.astype(f"u{bits // 8}").view(itype)
    return idx.astype(itype)


def _chunk_mask(rng) -> np.ndarray:
    kind = rng.choice(["all", "all", "random", "lane0_off", "none"])
    if kind == "all":
        return np.ones(CHUNK, bool)
    if kind == "random":
        return rng.random(CHUNK) < 0.8
    if kind == "lane0_off":
        return np.arange(CHUNK) != 0
    return np.zeros(CHUNK, bool)


@st.composite
def index_runs(draw):
    """(index type name, indices, mask, rng): every kind of chunk three times, in random order,
    each with its own mask, then a ragged tail (the last chunk cut short)."""
    itype = draw(st.sampled_from(sorted(INDEX)))
    tail = draw(st.integers(0, CHUNK - 1))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    kinds = rng.permutation(list(KINDS) * 3)
    idx = np.concatenate([_chunk(k, rng, INDEX[itype][1]) for k in kinds])
    active = np.concatenate([_chunk_mask(rng) for _ in kinds])
    if tail:
        idx, active = idx[:len(idx) - CHUNK + tail], active[:len(idx) - CHUNK + tail]
    return itype, idx, active, rng


def _valid(idx, active):
    """Lanes that touch the source: active with an index in [0, N_SRC) (as Python ints)."""
    as_int = np.array([int(i) for i in idx], dtype=object)
    return active & np.array([0 <= i < N_SRC for i in as_int], bool), as_int


@given(index_runs())
def test_gather_of_index_runs_matches_numpy(case):
    itype, idx, active, rng = case
    src = rng.integers(-1000, 1000, N_SRC).astype(np.float32)
    flags = rng.random(N_SRC) < 0.5
    ok, as_int = _valid(idx, active)
    safe = np.where(ok, as_int, 0).astype(np.int64)
    index = INDEX[itype][0](idx)
    g = fj.gather(Float, Float(src), index, Bool(active))
    b = fj.gather(Bool, Bool(flags), index, Bool(active))
    fj.eval(g, b)
    assert np.array_equal(g.numpy(), np.where(ok, src[safe], 0).astype(np.float32))
    assert np.array_equal(b.numpy(), ok & flags[safe])


# Element types of every width: without mask registers the lane mask is carried as integer
# lanes of the index's width and cast to the element's width (codegen/memory.py).
ELEMENTS = {"Float16": (Float16, np.float16), "Float64": (Float64, np.float64), "Int8": (Int8, np.int8),
            "UInt8": (UInt8, np.uint8), "Int64": (Int64, np.int64)}


@given(index_runs(), st.sampled_from(sorted(ELEMENTS)))
def test_gather_of_every_element_width_matches_numpy(case, element):
    itype, idx, active, rng = case
    et, nt = ELEMENTS[element]
    src = rng.integers(-100, 100, N_SRC).astype(nt)
    ok, as_int = _valid(idx, active)
    safe = np.where(ok, as_int, 0).astype(np.int64)
    g = fj.gather(et, et(src), INDEX[itype][0](idx), Bool(active))
    fj.eval(g)
    assert np.array_equal(g.numpy(), np.where(ok, src[safe], 0).astype(nt))


@given(index_runs())
def test_scatter_add_and_max_of_index_runs_match_numpy(case):
    itype, idx, active, rng = case
    ok, as_int = _valid(idx, active)
    hit = as_int[ok].astype(np.int64)
    # Small whole numbers: every order of adding them gives the same float sum.
    values = rng.integers(-50, 50, len(idx)).astype(np.float32)
    index = INDEX[itype][0](idx)
    t = fj.zeros(Float, N_SRC)
    fj.scatter_add(t, Float(values), index, Bool(active))
    m = fj.full(Int32, -100, N_SRC)
    fj.scatter_reduce(fj.ReduceOp.Max, m, Int32(values.astype(np.int32)), index, Bool(active))
    fj.eval(t, m)
    want_t = np.zeros(N_SRC, np.float32)
    np.add.at(want_t, hit, values[ok])
    want_m = np.full(N_SRC, -100, np.int32)
    np.maximum.at(want_m, hit, values[ok].astype(np.int32))
    assert np.array_equal(t.numpy(), want_t)
    assert np.array_equal(m.numpy(), want_m)


# A kernel with more than GATHER_TESTS_MAX gathers of run-time indices emits each as a plain
# hardware gather (no per-chunk tests: codegen/memory.py): the same chunks through nine gathers
# of every element width, evaluated as one kernel, against NumPy.
MANY = [("Float", Float, np.float32), ("Bool", Bool, np.bool_)] + [
    (name, *ELEMENTS[name]) for name in sorted(ELEMENTS)] + [("Int32", Int32, np.int32), ("UInt8b", UInt8, np.uint8)]


@given(index_runs())
def test_many_gathers_in_one_kernel_match_numpy(case):
    from frostjit.backend.llvm.codegen.memory import GATHER_TESTS_MAX
    assert len(MANY) > GATHER_TESTS_MAX
    itype, idx, active, rng = case
    ok, as_int = _valid(idx, active)
    safe = np.where(ok, as_int, 0).astype(np.int64)
    index = INDEX[itype][0](idx)
    srcs = [(rng.integers(-100, 100, N_SRC) > 0 if nt is np.bool_ else rng.integers(-100, 100, N_SRC)).astype(nt)
            for _, _, nt in MANY]
    gs = [fj.gather(et, et(src), index, Bool(active)) for (_, et, _), src in zip(MANY, srcs)]
    fj.eval(*gs)
    for (name, _, nt), src, g in zip(MANY, srcs, gs):
        assert np.array_equal(g.numpy(), np.where(ok, src[safe], 0).astype(nt)), name
