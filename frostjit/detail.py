"""``fj.detail``: the few of Dr.Jit's ``drjit.detail`` helpers that programs written for Dr.Jit
call directly (its test suites and PyTorch interop code do, at import time).

>>> with fj.detail.scoped_rtld_deepbind():
...     import torch
>>> s = fj.detail.scope(fj.JitBackend.LLVM)
>>> fj.detail.new_scope(fj.JitBackend.LLVM) > s
True

The rest of ``drjit.detail`` is Dr.Jit's C++ machinery (variable trackers, registries, the
freezing internals) and has no counterpart here (docs/api_coverage.md).
"""
from __future__ import annotations

import importlib
import threading

from .functions.creation import full
from .functions.memory import ReduceOp
from .functions.scan import identity
from .trace.dtypes import Bool
from .trace.state import JitBackend
from .traits import is_tensor_v
from .tree.kinds import Kind, node_type

__all__ = ["scoped_rtld_deepbind", "scope", "new_scope", "set_scope", "llvm_version", "cuda_version",
           "check_compatibility", "reduce_identity", "can_scatter_reduce"]


class scoped_rtld_deepbind:
    """Context manager under which Dr.Jit imports extension modules (PyTorch, ...) with
    ``RTLD_DEEPBIND``, so that their copies of shared libraries do not clash with Dr.Jit's.

    frostjit loads no native library of its own besides llvmlite's, which keeps its LLVM
    symbols private, so there is nothing to separate: the context manager changes nothing.
    """

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        return None


def llvm_version() -> tuple:
    """The version of the LLVM that compiles frostjit's kernels (llvmlite's), e.g. ``(20, 1, 8)``."""
    # (llvmlite is imported on demand: a process on the reference backend never loads LLVM)
    return tuple(importlib.import_module("llvmlite.binding").llvm_version_info)


def cuda_version() -> tuple:
    """The CUDA driver's version: ``(0, 0)``, as Dr.Jit reports without CUDA (frostjit has no
    CUDA backend)."""
    return (0, 0)


class _Scopes(threading.local):
    """The current scope identifier per backend, per thread (Dr.Jit keeps one per thread state)."""

    def __init__(self) -> None:
        self.current: dict[JitBackend, int] = {}


_scopes = _Scopes()
_counter = 0              # new identifiers are unique across threads
_counter_lock = threading.Lock()


def _backend(backend, who: str) -> JitBackend:
    if not isinstance(backend, JitBackend):
        raise TypeError(f"{who}(): 'backend' must be a JitBackend, got {type(backend).__name__}")
    return backend


def scope(backend: JitBackend) -> int:
    """The current scope identifier of ``backend`` on this thread (see :func:`new_scope`)."""
    return _scopes.current.get(_backend(backend, "scope"), 0)


def new_scope(backend: JitBackend) -> int:
    """Start a new scope on ``backend`` and return its identifier (larger than every earlier one).

    In Dr.Jit a scope bounds a basic block: common subexpression elimination and reordering
    stay within it, which matters when threads share arrays.  frostjit merges only the
    operations a program shares by reference (and equal literals; it never unifies two
    separately traced operations), so here a scope is an identifier and nothing depends on it.
    """
    global _counter
    b = _backend(backend, "new_scope")
    with _counter_lock:
        _counter = max(_counter, _scopes.current.get(b, 0)) + 1
        _scopes.current[b] = _counter
        return _counter


def set_scope(backend: JitBackend, scope: int) -> None:
    """Make ``scope`` (an identifier from :func:`scope` / :func:`new_scope`) the current scope."""
    b = _backend(backend, "set_scope")
    if not isinstance(scope, int) or scope < 0:
        raise TypeError(f"set_scope(): 'scope' must be a non-negative int, got {scope!r}")
    _scopes.current[b] = scope


def check_compatibility(a, b, width_consistency: bool = False, name: str = "") -> None:
    """Check that PyTrees ``a`` and ``b`` have the same structure (Dr.Jit's
    ``drjit.detail.check_compatibility``): the same types, dictionary keys, sequence lengths and
    Python values, and with ``width_consistency`` compatible array widths (equal, or one of them
    1) and equal tensor shapes.

    Parameters
    ----------
    a, b : PyTree
    width_consistency : bool
        Also compare the widths of the arrays.
    name : str
        The name of the compared value, used in the message (nested fields add ``.key`` /
        ``[i]``).

    Raises
    ------
    RuntimeError
        At the first mismatch, naming the field, e.g. ``inconsistent dictionary keys for field
        'out' (['a'] and ['b'])``.
    """
    _check(a, b, bool(width_consistency), name)


def _type_name(tp: type) -> str:
    return tp.__name__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__name__}"


def _fail(what: str) -> None:
    raise RuntimeError(f"frostjit.detail.check_compatibility(): {what}.")


def _check(a, b, widths: bool, field: str) -> None:
    ta, tb = type(a), type(b)
    if ta is not tb:
        _fail(f"inconsistent types for field '{field}' ('{_type_name(ta)}' and '{_type_name(tb)}')")
    if is_tensor_v(ta):
        if widths and a.shape != b.shape:
            _fail(f"incompatible sizes for field '{field}' ({a.shape} and {b.shape})")
        return
    nt = node_type(ta)
    kind = nt.kind
    if kind is Kind.ARRAY:
        if widths and len(a) != len(b) and 1 not in (len(a), len(b)):     # (width 1 broadcasts)
            _fail(f"incompatible sizes for field '{field}' ({len(a)} and {len(b)})")
        return
    if kind is Kind.VALUE:
        try:
            same = a is b or bool(a == b)
        except Exception:       # noqa: BLE001  (objects without a usable ==: compared by identity)
            same = False
        if not same:
            _fail(f"inconsistent scalar Python object of type '{ta.__name__}' for field '{field}'")
        return
    keys_a, values_a = nt.children(a)
    keys_b, values_b = nt.children(b)
    if kind is Kind.MAPPING and list(keys_a) != list(keys_b):
        _fail(f"inconsistent dictionary keys for field '{field}' ({list(keys_a)} and {list(keys_b)})")
    if len(values_a) != len(values_b):
        _fail(f"inconsistent sizes for field '{field}' ({len(values_a)} and {len(values_b)})")
    for i, (x, y) in enumerate(zip(values_a, values_b)):
        sub = f"{field}[{i}]" if keys_a is None else f"{field}.{keys_a[i]}" if field else str(keys_a[i])
        _check(x, y, widths, sub)


def _leaf_vt(dtype, who: str):
    leaf = getattr(dtype, "_leaf", None) or getattr(dtype, "_array_type", None) or dtype
    vt = getattr(leaf, "_vt", None)
    if vt is None:
        raise TypeError(f"detail.{who}(): expected a frostjit array type, got {dtype!r}")
    return vt


def _op(op, who: str) -> str:
    if not isinstance(op, ReduceOp) or op.value is None:
        raise TypeError(f"detail.{who}(): 'op' must be a ReduceOp other than Identity, got {op!r}")
    return op.value


def reduce_identity(dtype, op, size: int = 1):
    """The identity of reduction ``op`` as an array of type ``dtype`` and width ``size``: what
    an empty reduction gives and where a scatter-reduction's target starts (0 for ``Add``, 1 for
    ``Mul``, the largest / smallest value (``inf`` / ``-inf``) for ``Min`` / ``Max``, every bit
    set for ``And``, 0 for ``Or``).

    Parameters
    ----------
    dtype : type
        A frostjit array type (``UInt32``, ``Float``, ``Array3f``, ...).
    op : ReduceOp
    size : int
        The width.

    Examples
    --------
    >>> fj.detail.reduce_identity(Float, fj.ReduceOp.Max)
    [-inf]
    """
    return full(dtype, identity(_op(op, "reduce_identity"), _leaf_vt(dtype, "reduce_identity")), size)


def can_scatter_reduce(dtype, op) -> bool:
    """Whether ``scatter_reduce(op, target, ...)`` supports a target of type ``dtype`` here:
    every reduction of integer and float arrays but ``And``/``Or`` (bitwise) of floats; none
    into ``Bool`` arrays.  (Dr.Jit's LLVM backend also refuses ``Mul`` and half-precision
    ``Min``/``Max``; frostjit computes them.)"""
    name = _op(op, "can_scatter_reduce")
    vt = _leaf_vt(dtype, "can_scatter_reduce")
    if vt is Bool:
        return False
    return not (name in ("and", "or") and vt.is_float)
