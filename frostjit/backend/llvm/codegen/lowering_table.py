"""The table of op lowerings each codegen module fills (the frame merges them)."""
from __future__ import annotations

from typing import Callable


def lowering_table() -> tuple[dict, Callable]:
    """``(table, lowers)``: an empty ``op name -> lowering`` dict (``f(emitter, instr) -> operand
    text``, the IR value of the result) and the decorator ``@lowers(name)`` that registers the
    decorated function in it."""
    table: dict = {}

    def lowers(name: str):
        def register(f):
            table[name] = f
            return f
        return register
    return table, lowers
