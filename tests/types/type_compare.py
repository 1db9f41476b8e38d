"""How a frostjit result of a type case is compared with Dr.Jit's (``type_cases.py``).

Same class name, same shape, same values (integers and masks exactly, floats within the
group's tolerance, bit for bit for the cases in ``EXACT``), or the same kind of failure
(any exception on both sides: Dr.Jit raises ``RuntimeError`` where frostjit raises a
specific ``TypeError``/``ValueError``/``IndexError``).  :data:`DELIBERATE` lists the cases where
frostjit differs on purpose, with the reason (docs/types.md, "Differences from Dr.Jit").
"""
from __future__ import annotations


import numpy as np

from type_cases import EXACT, TOLERANCE

#: case -> why frostjit's result differs from Dr.Jit 1.5's.
DELIBERATE: dict = {}


# Dr.Jit's classes are named Float, Int, UInt (Float32, Int32, UInt32 are aliases); frostjit's
# the other way round.
_ALIASES = {"Float": "Float32", "Int": "Int32", "UInt": "UInt32"}


def _values(d):
    if "complex" in d:
        re, im = d["complex"]
        return np.array([float(v) for v in re]) + 1j * np.array([float(v) for v in im])
    return np.array([float(v) if isinstance(v, str) else v for v in d["value"]])


def differences(group: str, name: str, got: dict, want: dict) -> str:
    """Why ``got`` (frostjit) does not match ``want`` (Dr.Jit); "" when it does."""
    if "error" in want or "error" in got:
        if "error" in want and "error" in got:
            return ""
        return f"frostjit {got.get('error', 'returned a value')}, Dr.Jit {want.get('error', 'returned a value')}"
    if "tuple" in want:
        if "tuple" not in got or len(got["tuple"]) != len(want["tuple"]):
            return f"frostjit {got}, Dr.Jit a tuple of {len(want['tuple'])}"
        for k, (g, w) in enumerate(zip(got["tuple"], want["tuple"])):
            why = differences(group, name, g, w)
            if why:
                return f"[{k}] {why}"
        return ""
    if "py" in want:
        g, w = got.get("py"), want["py"]
        if isinstance(w, list):
            w = tuple(w)
        if isinstance(g, list):
            g = tuple(g)
        return "" if g == w else f"frostjit {g!r}, Dr.Jit {w!r}"
    if "other" in got or "other" in want:
        return "" if got == want else f"frostjit {got}, Dr.Jit {want}"
    if _ALIASES.get(got.get("type"), got.get("type")) != _ALIASES.get(want.get("type"), want.get("type")):
        return f"type {got.get('type')} (Dr.Jit {want.get('type')})"
    if got.get("shape") != want.get("shape"):
        return f"shape {got.get('shape')} (Dr.Jit {want.get('shape')})"
    if ("complex" in got) != ("complex" in want):
        return f"frostjit {'complex' if 'complex' in got else 'real'} values, Dr.Jit not"
    g, w = _values(got), _values(want)
    if g.dtype.kind not in "fc" or name in EXACT:
        same = (g == w) | (np.isnan(g) & np.isnan(w)) if g.dtype.kind in "fc" else g == w
        return "" if np.all(same) else f"values {g.tolist()} (Dr.Jit {w.tolist()})"
    tol = TOLERANCE.get(group, 1e-6)
    scale = np.maximum(np.abs(w), 1.0)
    close = (np.abs(g - w) <= tol * scale) | (np.isnan(g) & np.isnan(w)) | (g == w)
    return "" if np.all(close) else f"values {g.tolist()} (Dr.Jit {w.tolist()})"
