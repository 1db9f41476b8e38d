"""frostjit.scalar against Dr.Jit 1.5's drjit.scalar: the same expressions, the same answers.

Dr.Jit's answers are recorded in ``data/drjit_1_5_scalar.json`` (``make_scalar_data.py``);
each case of ``scalar_cases.py`` must give the same ``repr`` and result type here, or raise
when Dr.Jit raises (frostjit raises Python's specific exceptions where Dr.Jit raises
``RuntimeError``, as everywhere in frostjit).  Deliberate differences are listed with their
reason (docs/types.md, "Differences from Dr.Jit").
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import frostjit
import frostjit.scalar

pytestmark = pytest.mark.backend_independent("the scalar arrays against Dr.Jit's scalar backend")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import scalar_cases  # noqa: E402

RECORDED = json.loads((HERE / "data" / "drjit_1_5_scalar.json").read_text())

_WRAP = "integers wrap as on frostjit.llvm (Dr.Jit's scalar arrays raise when a result leaves the type's range)"
_IEEE = "IEEE / NumPy semantics as on frostjit.llvm (Dr.Jit's scalar arrays raise)"
_TENSOR_SET = ("slice assignment works on the scalar backend's tensors as on frostjit.llvm's (Dr.Jit 1.5's "
               "scalar tensors raise TypeError)")
DELIBERATE = {
    "(lambda v: (v.__setitem__(v > 1, 0), v)[1])(s.Array3f(1,2,3))":
        "masked assignment works on static arrays of every backend (Dr.Jit's scalar arrays raise TypeError)",
    "s.Array4u8(250) + 10": _WRAP,
    "s.Array2i64(2**62)*4": _WRAP,
    "s.Array2u64(0) - 1": _WRAP,
    "s.Array3i(5) // s.Array3i(0)": _IEEE,
    "s.Array3i(2) ** -1": _IEEE,
    "dr.sqrt(s.Array3i(1,4,9))": "integers convert to Float32 for float functions (as on frostjit.llvm)",
    "dr.floor(s.Array2i(-1, 1))": "rounding an integer array returns it (as on frostjit.llvm)",
    "dr.transpose(s.Matrix2f(1,2,3,4))": "fj.transpose accepts matrices (as on frostjit.llvm)",
    "s.Matrix2f(1,2,3,4) ** 2": "the matrix power (Dr.Jit 1.5's is wrong, docs/types.md)",
    "dr.arg(s.Complex2f(1,1))": "math.atan2 in double (Dr.Jit's polynomial differs in the last bit)",
    "s.Quaternion4f(1,2,3,4) / s.Quaternion4f(4,3,2,1)":
        "products of components in double, rounded once (Dr.Jit: float32 operations; a 4e-9 term's sign)",
    "dr.quat_to_matrix(s.Matrix4f, s.Quaternion4f(0.5,0.5,0.5,0.5))":
        "products of components in double, rounded once (exact here; Dr.Jit: 6e-8 rounding residues)",
    "s.Array3u(7) << 30": _WRAP,
    "dr.abs(s.Array2i(-2**31, 5))": _WRAP,
    "dr.minimum(s.Array2f(-0.0, 0.0), s.Array2f(0.0, -0.0))":
        "minimum orders -0 < +0 (IEEE 754-2019, the op table's rule, as on frostjit.llvm)",
    "dr.arange(s.ArrayXf, 0, 1, 0.25)": "arange takes float arguments for float types (as on frostjit.llvm)",
    "s.Array3f(s.Array3b(True,False,True))": "a mask converts to 1 / 0 (Dr.Jit 1.5's scalar backend gives 255 for every entry)",
    "dr.concat([s.TensorXf([[1,2]]), s.TensorXf([[3,4]])], axis=0)":
        "concat along an axis joins scalar tensors as on frostjit.llvm (Dr.Jit 1.5's scalar concat raises TypeError)",
    "float(s.TensorXf([2.5]))": "a one-element tensor converts to a Python number on every backend (as on frostjit.llvm)",
    "(lambda t: (t.__setitem__((0, 1), 10), t)[1])(s.TensorXf([[1,2,3],[4,5,6]]))": _TENSOR_SET,
    "(lambda t: (t.__setitem__((slice(None), 0), s.TensorXf([7, 8])), t)[1])(s.TensorXf([[1,2,3],[4,5,6]]))":
        _TENSOR_SET,
}
#: Not built yet (reported in docs/types.md).
NOT_YET: set = set()

ANSWERS = dict(zip(scalar_cases.CASES, scalar_cases.run(frostjit, frostjit.scalar, np)))


def test_every_case_is_recorded():
    assert set(scalar_cases.CASES) == set(RECORDED)


@pytest.mark.parametrize("case", scalar_cases.CASES)
def test_scalar_case_matches_drjit(case):
    want, got = RECORDED[case], ANSWERS[case]
    if case in DELIBERATE:
        assert want != got, f"{case}: listed as a deliberate difference but frostjit now agrees"
        pytest.skip(f"deliberate difference: {DELIBERATE[case]}")
    if case in NOT_YET:
        assert want != got, f"{case}: listed as not built but frostjit now agrees"
        pytest.skip("not built yet (docs/types.md)")
    if want.startswith("ERR "):
        assert got.startswith("ERR "), f"{case}: Dr.Jit raises ({want}), frostjit gives {got}"
    else:
        assert got == want
