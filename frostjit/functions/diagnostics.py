"""Looking at the traced program: ``whos`` (a table of live JIT variables) and
``graphviz`` (the graph of live variables in GraphViz's DOT language).

The variables are the live trace nodes: those some array, or some pending computation, still
refers to.  Their numbers are the ``x.index`` of the arrays on them
(:mod:`frostjit.array.variables`), their labels ``x.label`` (:mod:`frostjit.array.labels`).
"""
from __future__ import annotations

import gc

from ..array import variables
from ..array.labels import label_of
from ..array.meta import VarState
from ..trace.node import Node
from ..trace.state import state

__all__ = ["whos", "graphviz"]


# -- labels ----------------------------------------------------------------------------------

# -- live variables --------------------------------------------------------------------------

_SHORT = {"Bool": "msk", "Int32": "i32", "UInt32": "u32", "Int64": "i64", "UInt64": "u64",
          "Float32": "f32", "Float64": "f64"}


def _live_nodes() -> list:
    """Every live trace node, numbered (numbers are handed out here for those without one)."""
    nodes = [o for o in gc.get_objects() if type(o) is Node]
    return sorted(nodes, key=variables.index_of)


def _type_name(node: Node) -> str:
    return "LLVM " + _SHORT.get(node.vt.name, node.vt.name.lower())


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    return ""


def whos(as_string: bool = False):
    """List the live JIT variables: number, type, state, size, memory and label.

    Parameters
    ----------
    as_string : bool
        Return the table instead of printing it.

    Returns
    -------
    str or None
    """
    nodes = _live_nodes()
    lines = ["", f"  {'ID':<8} {'Type':<10} {'Status':<11} {'Size':>10} {'Storage':>10}   Label",
             "  " + "=" * 66]
    stored = pending = 0
    for n in nodes:
        st = variables.state_of(n)
        status = {VarState.Literal: "const.", VarState.Evaluated: "evaluated", VarState.Dirty: "dirty",
                  VarState.Invalid: "empty"}.get(st, "")
        size_bytes = n.size * n.vt.itemsize
        if n.op == "data":
            stored += size_bytes
        elif n.op != "literal":
            pending += size_bytes
        storage = _bytes(size_bytes) if n.op == "data" else ""
        lines.append(f"  {variables.index_of(n):<8} {_type_name(n):<10} {status:<11} {n.size:>10} "
                     f"{storage:>10}   {label_of(n) or ''}".rstrip())
    lines += ["  " + "=" * 66, "", "  JIT compiler", "  ============",
              f"   - Storage           : {_bytes(stored)} evaluated, {_bytes(pending)} unevaluated.",
              f"   - Variables         : {len(nodes)} live.",
              f"   - Pending scatters  : {len(state.side_effects)}.", ""]
    text = "\n".join(lines)
    if as_string:
        return text
    print(text)
    return None


# Dr.Jit's colours: literals grey, evaluated blue, labelled wheat, dirty salmon.
_FILL = {VarState.Literal: "gray90", VarState.Evaluated: "lightblue2", VarState.Dirty: "salmon"}


def graphviz(as_string: bool = False):
    """The graph of live JIT variables (pending computations and their operands) in DOT.

    Parameters
    ----------
    as_string : bool
        Return the DOT text.  Otherwise a ``graphviz.Source`` object is returned (call
        ``.view()`` to see it), which needs the ``graphviz`` Python package.

    Returns
    -------
    str or graphviz.Source

    Raises
    ------
    ImportError
        ``as_string=False`` and the ``graphviz`` package is not installed.
    """
    nodes = _live_nodes()
    out = ["digraph {", "    rankdir=TB;", '    graph [dpi=50 fontname="Ubuntu Mono"];',
           '    node [shape=record fontname="Ubuntu Mono"];', '    edge [fontname="Ubuntu Mono"];']
    edges = []
    for n in nodes:
        i = variables.index_of(n)
        st = variables.state_of(n)
        label = label_of(n)
        head = "Literal: " + _dot_escape(repr(n.value)) if n.op == "literal" else \
            "Evaluated" if n.op == "data" else _dot_escape(n.op)
        if label is not None:
            head = f'Label: \\"{_dot_escape(label)}\\"|' + head
        attrs = ""
        fill = "wheat" if label is not None else _FILL.get(st)
        if fill is not None:
            attrs = f" fillcolor={fill} style=filled"
        out.append(f'    {i} [label="{{{head}|{{Type: {_type_name(n)}|Size: {n.size}}}|{{r{i}}}}}"{attrs}];')
        for k, a in enumerate(n.args):
            if isinstance(a, Node):
                tag = f' [label=" {k + 1}"]' if len(n.args) > 1 else ""
                edges.append(f"    {variables.index_of(a)} -> {i}{tag};")
    out += edges
    out += ["    subgraph cluster_legend {", '        label="Legend";',
            '        l3 [style=filled fillcolor=salmon label="Dirty"];',
            '        l2 [style=filled fillcolor=lightblue2 label="Evaluated"];',
            '        l1 [style=filled fillcolor=wheat label="Labeled"];',
            '        l0 [style=filled fillcolor=gray90 label="Constant"];', "    }", "}"]
    text = "\n".join(out) + "\n"
    if as_string:
        return text
    try:
        import graphviz as _gv      # optional dependency, only for the rendered form
    except ImportError:
        raise ImportError("frostjit.graphviz(): rendering needs the 'graphviz' Python package "
                          "(pip install graphviz); graphviz(as_string=True) returns the DOT text") from None
    return _gv.Source(text)


def _dot_escape(s: str) -> str:
    return "".join("\\" + c if c in '{}|<>"\\' else c for c in s)
