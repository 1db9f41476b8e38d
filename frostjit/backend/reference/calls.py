"""Calls (``@fj.func``, see :mod:`frostjit.backend.kernel`) in the NumPy interpreter: the body
runs at each call, over all lanes of the launch, on the call's argument values."""
from __future__ import annotations

from ..kernel import KernelSpec


def run_call(info, args: list, size: int, run_range) -> tuple:
    """The results of the body ``info`` (a CallInfo) on ``args`` (one value per parameter);
    ``run_range(spec, lo, hi, vals, size, buffers, sizes)`` interprets instructions."""
    body = info.body
    n = len(info.params)
    vals = list(args) + [None] * (len(body) - n)
    run_range(KernelSpec(instrs=list(body)), n, len(body), vals, size, [], [])
    return tuple(vals[r] for r in info.results)
