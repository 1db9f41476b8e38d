"""Looking at the AD graph: ``set_label``, ``graphviz_ad`` (GraphViz DOT text), ``whos_ad`` (a table).

Vertices are not registered anywhere (a registry would cost every AD operation); these
debugging functions find the live ones with one pass over the garbage collector's objects.

>>> fj.set_label(x, "x")
>>> print(fj.whos_ad(as_string=True))
>>> fj.graphviz_ad().view()          # with the graphviz package; as_string=True: the DOT text
"""
from __future__ import annotations

import gc

from ..array.flat import ArrayBase
from ..array.labels import label_of
from ..tree import node_type
from ..tree.kinds import Kind
from .graph import Vertex


# ---------------------------------------------------------------------------
# Labels

def set_label(*args, **kwargs) -> None:
    """Label the arrays of a PyTree (``set_label(x, "name")``) or several (``set_label(x=x, y=y)``).

    Inside a PyTree the names of the path are appended with underscores, as in Dr.Jit:
    ``set_label({"a": x, "b": [y, z]}, "d")`` labels ``d_a``, ``d_b_0``, ``d_b_1``; static vector
    components get ``_0``, ``_1``, ...  Python values are skipped.

    Raises
    ------
    TypeError
        If the label is not a ``str``, or the call is neither ``(value, label)`` nor keywords.
    """
    if args and kwargs or len(args) not in (0, 2):
        raise TypeError("set_label(): incompatible function arguments: expected set_label(value, label) or "
                        "set_label(name=value, ...)")
    pairs = [(args[0], args[1])] if args else [(v, k) for k, v in kwargs.items()]
    for value, label in pairs:
        if not isinstance(label, str):
            raise TypeError(f"set_label(): the label must be a str, got {type(label).__name__}")
        _label_tree(value, label, set())


def _label_tree(o, label: str, active: set) -> None:
    if isinstance(o, ArrayBase):
        o.label = label
        return
    nt = node_type(type(o))
    if nt.kind is Kind.VALUE or id(o) in active:
        return
    active.add(id(o))
    keys, values = nt.children(o)
    for k, v in zip(keys if keys is not None else range(len(values)), values):
        _label_tree(v, f"{label}_{k}", active)
    active.discard(id(o))


# ---------------------------------------------------------------------------
# The live graph

def _live_graph():
    """``(vertices sorted by id, {vertex id: arrays holding it})`` from the garbage collector."""
    verts, holders = {}, {}
    for o in gc.get_objects():
        if isinstance(o, Vertex):
            verts[o.id] = o
        elif isinstance(o, ArrayBase) and o._ad is not None:
            holders.setdefault(o._ad.id, []).append(o)
    for v in list(verts.values()):            # hubs and parents reachable only through edges
        for p, _f, _b in v.parents:
            verts.setdefault(p.id, p)
    return sorted(verts.values(), key=lambda v: v.id), holders


_TYPE_NAMES = {"Float32": "f32", "Float64": "f64"}


def _describe(v: Vertex, holders: dict) -> tuple:
    """``(label, type, size, refs, labelled)`` of vertex ``v``."""
    if v.is_hub:
        return repr(v.handler), "", "", len(v.children), True
    node = v.node() if v.node is not None else None
    label = None
    for a in holders.get(v.id, ()):
        label = label or label_of(a._node)
    if label is None and node is not None:
        label = label_of(node)
    labelled = label is not None
    if label is None:
        label = node.op if node is not None and node.op not in ("data", "literal") else ""
    refs = len(holders.get(v.id, ())) + sum(1 for c in v.children if c() is not None)
    return label, _TYPE_NAMES.get(v.cls._vt.name, v.cls._vt.name), v.size, refs, labelled


def whos_ad(as_string: bool = False) -> str | None:
    """List the live AD variables: id, type, size, references (arrays and edges), label.

    Parameters
    ----------
    as_string : bool
        Return the table instead of printing it.

    Returns
    -------
    str or None
        The table if ``as_string``, else ``None`` (it is printed).
    """
    verts, holders = _live_graph()
    rule = "  " + "=" * 57
    lines = ["", "  ID        Type        Size     Refs    Label", rule]
    for v in verts:
        label, tname, size, refs, _ = _describe(v, holders)
        lines.append(f"  {v.id:<10}{tname:<10}{size!s:>6}{refs:>9}    {label}")
    lines += [rule, ""]
    text = "\n".join(lines)
    if as_string:
        return text
    print(text)
    return None


def _dot(verts, holders) -> str:
    out = ["digraph {", "    rankdir=BT;", '    graph [fontname="Ubuntu Mono"];',
           '    node [shape=record fontname="Ubuntu Mono"];', '    edge [fontname="Ubuntu Mono"];']
    edges = []
    for v in verts:
        label, tname, size, refs, labelled = _describe(v, holders)
        text = (f'Label: \\"{_escape(label)}\\"' if labelled else _escape(label) or "(unnamed)")
        if v.is_hub:
            fill = "wheat"
        elif v.grad is not None:
            fill = "yellowgreen"
        elif not v.parents:
            fill = "salmon"
        elif not any(c() is not None for c in v.children):
            fill = "lightblue2"
        else:
            fill = "wheat" if labelled else None
        style = f" fillcolor={fill} style=filled" if fill else ""
        shape = " shape=box" if v.is_hub else ""
        out.append(f'    {v.id} [label="{{{text}|{{Type: {tname}|Size: {size}}}|{{a{v.id}|Refs: {refs}}}}}"'
                   f'{shape}{style}];')
        many = len(v.parents) > 1 and not v.is_hub
        for k, (p, _f, _b) in enumerate(v.parents):
            attrs = " [color=red]" if v.is_hub else f' [label=" {k + 1}"]' if many else ""
            edges.append(f"    {v.id} -> {p.id}{attrs};")
    out += edges
    out += ["    subgraph cluster_legend {", '        label="Legend";',
            '        l4 [style=filled fillcolor=yellowgreen label="Gradient present"];',
            '        l3 [style=filled fillcolor=salmon label="Input"];',
            '        l2 [style=filled fillcolor=lightblue2 label="Output"];',
            '        l1 [style=filled fillcolor=wheat label="Labeled"];', "    }", "}"]
    return "\n".join(out) + "\n"


def _escape(text: str) -> str:
    return (text.replace("\\", "\\\\").replace('"', '\\"').replace("{", "\\{").replace("}", "\\}")
            .replace("|", "\\|").replace("<", "\\<").replace(">", "\\>"))


def graphviz_ad(as_string: bool = False):
    """A GraphViz diagram of the live AD graph (Dr.Jit's layout and colours).

    Each vertex shows its label (or the operation that made it), type, size and references;
    an edge goes from a variable to each variable it depends on (numbered by operand when
    there are several).  A custom operation (:func:`frostjit.custom`) is a box named by its
    ``name()``, with red edges to its inputs; its outputs point to it.  Colours: gradient
    present, input (no parents), output (nothing depends on it), labelled.

    Parameters
    ----------
    as_string : bool
        Return the DOT text.  Otherwise return a ``graphviz.Source`` (``.view()`` shows it),
        which needs the ``graphviz`` Python package.

    Raises
    ------
    TypeError
        Without ``as_string`` when the ``graphviz`` package is not installed (as Dr.Jit).
    """
    text = _dot(*_live_graph())
    if as_string:
        return text
    try:
        import graphviz                        # optional dependency
    except ImportError:
        raise TypeError("graphviz_ad(): the 'graphviz' Python package is not available; install it with "
                        "'python -m pip install graphviz', or call graphviz_ad(as_string=True) for the DOT "
                        "text") from None
    return graphviz.Source(text)

