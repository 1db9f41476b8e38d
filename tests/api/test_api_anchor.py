"""frostjit against Dr.Jit 1.5 on the array API: type traits, constants, handle properties,
printing and helpers (the cases of ``api_anchor_cases.py``; Dr.Jit's answers recorded in
``data/drjit_1_5_api.json`` by ``make_api_anchor_data.py``).

A case that needs a type frostjit does not have yet (``Matrix4f``, ``Float16``, the scalar
backend, ...) is skipped, naming the type; it runs as soon as the type exists.  A trait whose
Dr.Jit answer is such a type must raise ``RuntimeError`` in frostjit (or give ``None`` where
Dr.Jit's documentation says "``None`` when there is no such type").  The deliberate
differences are listed in :data:`DIFFERENCES` with their reasons (docs/engine.md, "Differences").
"""
from __future__ import annotations

import json
import os
import re

import pytest

import frostjit as fj
import api_anchor_cases as C

with open(os.path.join(os.path.dirname(__file__), "data", "drjit_1_5_api.json")) as _f:
    DATA = json.load(_f)
COLUMNS = DATA["columns"]

#: Deliberate differences: (section, case[, trait]) -> (frostjit's answer, why).
DIFFERENCES: dict = {}

#: Traits documented to return None when no type fits (the others raise RuntimeError).
NONE_WHEN_MISSING = {"tensor_t", "matrix_t"}

_NAME = re.compile(r"\b(llvm\.ad|ad|llvm|scalar)\.([A-Za-z_]\w*)")


def _resolve(path: str):
    try:
        return C.resolve(path, fj)
    except AttributeError:
        return None


def _missing_types(expr: str) -> list:
    """The ``llvm.X`` / ``ad.X`` / ``scalar.X`` names an expression uses that frostjit lacks."""
    out = []
    for mod, name in _NAME.findall(expr):
        path = f"{'llvm.ad' if mod == 'ad' else mod}.{name}"
        if _resolve(path) is None:
            out.append(path)
    return out


def _expected_here(expected, shared: bool = False):
    """Dr.Jit's answer as frostjit gives it.

    frostjit's ``llvm.ad`` integer and mask types are the ``llvm`` classes themselves, so an
    ``llvm.ad`` type frostjit shares with ``llvm`` goes by its ``llvm`` name; and a trait of
    such a shared type (``shared``) cannot know it came from ``llvm.ad``: its answers are the
    ``llvm`` types (``float_array_t(llvm.ad.UInt)`` is ``llvm.Float``; Dr.Jit: ``llvm.ad.Float``).
    """
    if isinstance(expected, str) and expected.startswith("T:llvm.ad."):
        name = expected[len("T:llvm.ad."):]
        cls = _resolve(f"llvm.ad.{name}")
        if shared or (cls is not None and cls is _resolve(f"llvm.{name}")):
            return f"T:llvm.{name}"
    if isinstance(expected, list):
        return [_expected_here(e, shared) for e in expected]
    if isinstance(expected, dict) and "array" in expected:
        return dict(expected, array=_expected_here(expected["array"], shared))
    return expected


def _same(expected, got) -> bool:
    if isinstance(expected, str) and isinstance(got, str) and expected.startswith("F:") and got.startswith("F:"):
        return C.float_close(expected, got)
    if isinstance(expected, list) and isinstance(got, list):
        return len(expected) == len(got) and all(_same(e, g) for e, g in zip(expected, got))
    if isinstance(expected, dict) and isinstance(got, dict):
        return expected.keys() == got.keys() and all(_same(expected[k], got[k]) for k in expected)
    return type(expected) is type(got) and expected == got


def _check(expected, got, trait: str | None = None, shared: bool = False) -> str | None:
    """``None`` when ``got`` (frostjit) answers like ``expected`` (Dr.Jit), else the difference."""
    expected = _expected_here(expected, shared)
    if isinstance(expected, str) and expected.startswith("T:") and "." in expected[2:] \
            and expected[2:].split(".")[0] in ("llvm", "scalar") and _resolve(expected[2:]) is None:
        # Dr.Jit names a type frostjit does not have: frostjit must say so
        if got == {"raises": "RuntimeError"} or (trait in NONE_WHEN_MISSING and got is None):
            return None
        return f"expected RuntimeError (frostjit has no {expected[2:]}), got {got!r}"
    if _same(expected, got):
        return None
    return f"Dr.Jit {expected!r}, frostjit {got!r}"


@pytest.fixture(scope="module")
def ns():
    names = C.namespace(fj)
    yield names
    names.clear()       # the arrays go now, not at interpreter exit


# -- traits of every type ---------------------------------------------------------------------

@pytest.mark.parametrize("path", sorted(DATA["types"]))
def test_traits_of_each_type_agree_with_drjit(path, ns):
    tp = _resolve(path)
    if tp is None:
        pytest.skip(f"frostjit has no {path} yet")
    shared = path.startswith("llvm.ad.") and tp is _resolve(path.replace("llvm.ad.", "llvm."))
    ns["T"] = tp
    problems = []
    for trait, expected in zip(COLUMNS, DATA["types"][path]):
        if shared and trait == "is_diff_v":
            expected = False        # frostjit's llvm.ad integer and mask types are the llvm ones
        diff = _check(expected, C.run(f"dr.{trait}(T)", ns, fj), trait, shared)
        if diff is not None:
            problems.append(f"{trait}: {diff}")
    assert not problems, f"{path}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("key", sorted(DATA["objects"]))
def test_traits_of_values_and_instances_agree_with_drjit(key, ns):
    expr = C.OBJECTS[key]
    missing = _missing_types(expr)
    if missing:
        pytest.skip(f"frostjit has no {', '.join(missing)} yet")
    ns["O"] = eval(expr, ns)
    shared = key.startswith("ad_") and type(ns["O"]) is _resolve("llvm." + type(ns["O"]).__name__)
    problems = []
    for trait, expected in zip(COLUMNS, DATA["objects"][key]):
        if trait == "expr_t":
            continue        # returns its argument: compared by identity below
        if shared and trait == "is_diff_v":
            expected = False        # an instance of a shared llvm.ad integer type (see _expected_here)
        diff = _check(expected, C.run(f"dr.{trait}(O)", ns, fj), trait, shared)
        if diff is not None:
            problems.append(f"{trait}: {diff}")
    assert not problems, f"{key} = {expr}:\n  " + "\n  ".join(problems)
    assert fj.expr_t(ns["O"]) is ns["O"]


@pytest.mark.backend_independent("type traits of classes")
@pytest.mark.parametrize("path", sorted(DATA["traits2"]))
def test_replace_type_and_reinterpret_array_types_agree_with_drjit(path, ns):
    if path != "objects":
        tp = _resolve(path)
        if tp is None:
            pytest.skip(f"frostjit has no {path} yet")
        ns["T"] = tp
    problems = []
    for key, expected in DATA["traits2"][path].items():
        trait, arg = key[:-1].split("(", 1)
        expr = f"dr.{trait}(T, dr.VarType.{arg})" if path != "objects" else \
            f"dr.{trait}({arg}, dr.VarType.Float32)"
        diff = _check(expected, C.run(expr, ns, fj), trait)
        if diff is not None:
            problems.append(f"{key}: {diff}")
    assert not problems, f"{path}:\n  " + "\n  ".join(problems)


# -- everything else: one case per test --------------------------------------------------------

def _cases(section: str, table: dict):
    return [pytest.param(section, key, expr, id=f"{section}:{key}") for key, expr in table.items()]


CASES = (_cases("expr_t", C.EXPR_T) + _cases("more_traits", C.MORE_TRAITS) +
         _cases("constants", {k: f"dr.{k}" for k in C.CONSTANTS}) + _cases("properties", C.PROPERTIES) +
         _cases("printing", C.PRINTING) + _cases("helpers", C.HELPERS))


def _close(expected, got) -> bool:
    """Like :func:`_same`, floats within float32 rounding of transcendental functions."""
    if isinstance(expected, str) and isinstance(got, str) and expected.startswith("F:") and got.startswith("F:"):
        e, g = float(expected[2:]), float(got[2:])
        return abs(e - g) <= 2e-6 * max(abs(e), 1.0) or (e != e and g != g)
    if isinstance(expected, list) and isinstance(got, list):
        return len(expected) == len(got) and all(_close(e, g) for e, g in zip(expected, got))
    if isinstance(expected, dict) and isinstance(got, dict):
        return expected.keys() == got.keys() and all(_close(expected[k], got[k]) for k in expected)
    return type(expected) is type(got) and expected == got


@pytest.mark.parametrize("key, expr", list(C.NUMERIC.items()), ids=list(C.NUMERIC))
def test_numerical_helper_agrees_with_drjit_to_float32_precision(key, expr, ns):
    expected = _expected_here(DATA["numeric"][key])
    got = C.run(expr, ns, fj)
    assert _close(expected, got), f"{expr}\nDr.Jit {expected!r}\nfrostjit {got!r}"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")   # sqr, *_nested warn (as in Dr.Jit)
@pytest.mark.parametrize("section, key, expr", CASES)
def test_case_agrees_with_drjit(section, key, expr, ns):
    missing = _missing_types(expr)
    if missing:
        pytest.skip(f"frostjit has no {', '.join(missing)} yet")
    expected = DATA[section][key]
    if (section, key) in DIFFERENCES:
        expected = DIFFERENCES[(section, key)][0]
    diff = _check(expected, C.run(expr, ns, fj))
    assert diff is None, f"{expr}\n{diff}"
