"""Dr.Jit's array types side by side with Dr.Jit 1.5 (committed data: ``make_type_data.py``).

Every type of ``drjit.llvm`` and ``drjit.llvm.ad`` (but tensors, textures, random
generators) exists in frostjit with Dr.Jit's shape metadata (``value_t``, ``size_v``,
``depth_v``, element type, matrix/complex/quaternion/dynamic); and every case of
``type_cases.py`` (construction, indexing, swizzles, arithmetic, matrices, complex numbers,
quaternions, dynamic arrays) gives Dr.Jit's class and values, or fails where Dr.Jit fails.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import frostjit as fj
import frostjit.llvm as T
import frostjit.llvm.ad  # noqa: F401

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import type_cases as C  # noqa: E402
from type_compare import DELIBERATE, differences  # noqa: E402

DATA = json.loads((HERE / "data" / "drjit_1_5_types.json").read_text())
_ALIASES = {"Float": "Float32", "Int": "Int32", "UInt": "UInt32"}


def _module(path: str):
    return fj.llvm.ad if path.startswith("llvm.ad.") else fj.llvm


@pytest.mark.backend_independent("class lookups and their metadata")
@pytest.mark.parametrize("path", sorted(DATA["types"]))
def test_every_drjit_array_type_exists_with_its_shape(path):
    want = DATA["types"][path]
    cls = getattr(_module(path), path.rsplit(".", 1)[1], None)
    assert cls is not None, f"frostjit has no {path}"
    name = lambda n: _ALIASES.get(n, n)  # noqa: E731
    if hasattr(cls, "_elem"):
        assert name(cls._elem.__name__) == name(want["value_t"]), path
        assert (cls._n if cls._n is not None else -1) == want["size_v"], path
        assert cls.Depth == want["depth_v"], path
        assert cls._leaf._vt.name == want["type_v"], path
    else:
        assert cls._vt.name == want["type_v"] and want["depth_v"] == 1, path
    assert bool(getattr(cls, "IsMatrix", False)) == want["matrix"], path
    assert bool(getattr(cls, "IsComplex", False)) == want["complex"], path
    assert bool(getattr(cls, "IsQuaternion", False)) == want["quaternion"], path
    # (Dr.Jit's is_dynamic_v is true for every JIT array: its width is dynamic.  frostjit's
    # IsDynamic marks the ArrayX types, whose size_v is -1: checked above.)


@pytest.fixture(scope="module")
def results():
    ns = C.namespace(fj, T)
    return {g: {name: C.run(expr, ns, fj) for name, expr in cases.items()} for g, cases in C.GROUPS.items()}, \
        C.run_random(ns)


_CASES = [(g, name) for g, cases in C.GROUPS.items() for name in cases]


@pytest.mark.parametrize("group,name", _CASES, ids=[f"{g}-{n}" for g, n in _CASES])
def test_case_matches_drjit(group, name, results):
    why = differences(group, name, results[0][group][name], DATA["cases"][group][name])
    if name in DELIBERATE:
        pytest.skip(f"deliberate difference: {DELIBERATE[name]}")
    assert not why, f"{name} = {C.GROUPS[group][name]}: {why}"


@pytest.mark.parametrize("name", sorted(C.RANDOM_EXACT))
def test_random_case_is_bit_identical_to_drjit(name, results):
    assert results[1]["exact"][name] == DATA["random"]["exact"][name], \
        f"{name} = {C.RANDOM_EXACT[name]}: not bit-identical to Dr.Jit 1.5 (python {HERE}/make_type_data.py --live)"


@pytest.mark.parametrize("name", sorted(C.RANDOM_CLOSE))
def test_random_case_is_close_to_drjit(name, results):
    why = differences("random", name, results[1]["close"][name], DATA["random"]["close"][name])
    assert not why, f"{name} = {C.RANDOM_CLOSE[name]}: {why}"
