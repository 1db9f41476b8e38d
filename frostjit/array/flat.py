"""1-D JIT arrays (``Float``, ``UInt32``, ...): construction, operators, conversion.

An array is a thin handle on a trace :class:`~frostjit.trace.node.Node`.  Every
operator goes through :func:`apply`, which promotes operand types
(Dr.Jit's rules), checks sizes, creates the node and, for AD arrays, tells the
AD graph.  Reading values (``x[i]``, ``.numpy()``, printing) evaluates.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConversionOverflowError, out_of_memory
from ..trace import ops
from ..trace.dtypes import Bool, Float32, Int32, Int64, UInt64, VarType, promote, from_numpy_dtype
from ..trace.node import Node
from ..trace.state import state
from . import registry

_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def _evaluate(nodes) -> None:
    from ..schedule.evaluate import evaluate
    evaluate(nodes)


def _backend():
    from ..backend import current_backend
    return current_backend()


def _type_name(x) -> str:
    return type(x).__name__


class ArrayBase:
    """Base class of every 1-D JIT array type.

    Class attributes set by the concrete types: ``_vt`` (element
    :class:`~frostjit.trace.dtypes.VarType`), ``_backend``
    (:class:`~frostjit.JitBackend`) and ``_is_ad`` (AD-enabled type).
    """

    __slots__ = ("_node", "_ad")
    _vt: VarType = None
    _backend = None
    _is_ad = False
    IsJIT = True
    IsVector = False
    Depth = 1

    # -- construction ---------------------------------------------------
    def __init__(self, *args):
        self._ad = None
        vt = self._vt
        if len(args) == 0:
            self._node = _data_from_numpy(np.zeros(0, vt.np_dtype), vt)
            return
        if len(args) > 1:
            self._node = _data_from_sequence(args, vt)
            return
        v = args[0]
        if isinstance(v, ArrayBase):
            if v._backend is not self._backend:
                raise TypeError(f"{type(self).__name__}(): cannot convert a {type(v).__name__} of backend "
                                f"{v._backend} to backend {self._backend}")
            self._node = ops.cast(v._node, vt)
            if self._is_ad and v._ad is not None and vt.is_float:
                state.ad_hook.on_op("cast", self, (v,))
        elif isinstance(v, _SCALARS):
            self._node = ops.literal(vt, _scalar_value(v, vt, type(self).__name__))
        elif isinstance(v, np.ndarray):
            self._node = _data_from_numpy(v, vt)
        elif hasattr(v, "__dlpack__") and not isinstance(v, (list, tuple)):
            self._node = _data_from_numpy(np.from_dlpack(v), vt)
        elif isinstance(v, (list, tuple, range)):
            self._node = _data_from_sequence(v, vt)
        elif hasattr(v, "__array__"):
            self._node = _data_from_numpy(np.asarray(v), vt)
        elif hasattr(v, "__symbolic_size__"):   # a width inside a frozen function (frostjit.freeze)
            self._node = ops.literal(vt, v)
        else:
            raise TypeError(f"{type(self).__name__}(): cannot construct from an object of type {_type_name(v)}")

    @classmethod
    def _from_node(cls, node: Node):
        out = cls.__new__(cls)
        out._node = node
        out._ad = None
        return out

    # -- introspection --------------------------------------------------
    @property
    def Type(self) -> VarType:
        return self._vt

    @property
    def state(self) -> str:
        """``"literal"``, ``"evaluated"`` or ``"unevaluated"`` (Dr.Jit's VarState in words)."""
        op = self._node.op
        return "evaluated" if op == "data" else "literal" if op == "literal" else "unevaluated"

    def __len__(self) -> int:
        rec = state.recorder
        if rec is not None:
            return rec.on_len(self._node)   # a frozen function guards the width it leaks
        return self._node.size

    @property
    def shape(self) -> tuple:
        return (len(self),)

    # -- conversion back to Python / NumPy --------------------------------
    def _buffer_node(self) -> Node:
        """Evaluate (flushing pending scatters into this array) and return the data or literal node."""
        node = self._node
        if node.op != "data" and node.op != "literal" or node in state.dirty:
            _evaluate((node,))
        return self._node

    def numpy(self) -> np.ndarray:
        """Evaluate and return the contents as a new NumPy array."""
        node = self._buffer_node()
        rec = state.recorder
        if rec is not None:
            rec.on_read(node, "numpy()")
        try:
            if node.op == "literal":
                return np.full(node.size, node.value, dtype=node.vt.np_dtype)
            return _backend().to_numpy(node.value, node.size)
        except MemoryError:
            raise out_of_memory(self._vt.name, node.size, self._vt.itemsize, "copy to NumPy") from None

    def __array__(self, dtype=None, copy=None):
        # NumPy 2 protocol: copy=False asks for a view or an error; the export is always a copy.
        if copy is False:
            raise ValueError(f"np.asarray({type(self).__name__}, copy=False): a frostjit array converts to "
                             "NumPy by copying; use np.from_dlpack(x) for a zero-copy view")
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __dlpack__(self, *args, **kwargs):
        node = self._buffer_node()
        if node.op == "literal":
            return self.numpy().__dlpack__(*args, **kwargs)
        rec = state.recorder
        if rec is not None:
            rec.on_read(node, "__dlpack__()")
        return _backend().host_array(node.value, node.size).__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            size = self._node.size
            i = int(index)
            if i < 0:
                i += size
            if not 0 <= i < size:
                raise IndexError(f"{type(self).__name__}[{index}]: index out of range for an array of size {size}")
            node = self._buffer_node()
            rec = state.recorder
            if rec is not None:
                rec.on_read(node, f"[{index}]")
            if node.op == "literal":
                v = node.value
            else:
                v = _backend().element(node.value, i)
            return v
        raise TypeError(f"{type(self).__name__} indices must be integers, not {_type_name(index)} "
                        "(use frostjit.gather() for array indices)")

    def __setitem__(self, index, value):
        from ..functions.memory import scatter
        if isinstance(index, (int, np.integer)):
            size = self._node.size
            i = int(index) + (size if index < 0 else 0)
            if not 0 <= i < size:
                raise IndexError(f"{type(self).__name__}[{index}] = ...: index out of range for size {size}")
            scatter(self, value, i)
            return
        raise TypeError(f"{type(self).__name__} indices must be integers, not {_type_name(index)}")

    def __iter__(self):
        a = self.numpy()
        return iter(a.tolist())

    def _scalar(self, what: str):
        if self._node.size != 1:
            raise RuntimeError(f"{what}: only a size-1 array converts to a Python scalar "
                               f"(this {type(self).__name__} has size {self._node.size})")
        return self[0]

    def __bool__(self) -> bool:
        if self._vt is not Bool:
            raise TypeError(f"bool({type(self).__name__}): only Bool arrays of size 1 have a truth value")
        return bool(self._scalar("bool()"))

    def __float__(self) -> float:
        return float(self._scalar("float()"))

    def __int__(self) -> int:
        return int(self._scalar("int()"))

    def __index__(self) -> int:
        if not self._vt.is_integral:
            raise TypeError(f"{type(self).__name__} cannot be used as an index")
        return int(self._scalar("index"))

    def __repr__(self) -> str:
        return format_values(self.numpy(), self._vt)

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    # -- operators -------------------------------------------------------
    # Binary operators are generated below (see _binary_operator): a fast path for
    # same-type operands and plain Python scalars, and apply() for everything else.
    def __neg__(self): return apply("neg", self)
    def __pos__(self): return self
    def __invert__(self): return apply("not", self)
    def __abs__(self): return apply("abs", self)

    # In-place operators rebind the handle (other references keep the old value, as in Dr.Jit).
    def _inplace(self, op, o):
        r = apply(op, self, o)
        if type(r) is not type(self):
            r = type(self)(r)
        self._node = r._node
        self._ad = r._ad
        return self

    def __iadd__(self, o): return self._inplace("add", o)
    def __isub__(self, o): return self._inplace("sub", o)
    def __imul__(self, o): return self._inplace("mul", o)
    def __itruediv__(self, o): return self._inplace("truediv", o)
    def __ifloordiv__(self, o): return self._inplace("floordiv", o)
    def __imod__(self, o): return self._inplace("mod", o)
    def __ipow__(self, o): return self._inplace("pow", o)
    def __iand__(self, o): return self._inplace("and", o)
    def __ior__(self, o): return self._inplace("or", o)
    def __ixor__(self, o): return self._inplace("xor", o)
    def __ilshift__(self, o): return self._inplace("shl", o)
    def __irshift__(self, o): return self._inplace("shr", o)


# ---------------------------------------------------------------------------
# Fast path for binary operators
#
# Tracing cost per operation is what a user of an unfrozen loop pays, so the
# common cases (both operands of one type, or an array and a Python int/float
# that does not change the type) skip apply()'s general promotion logic.  The
# decision for each (operation, class, operand kind) is computed once by
# _fast_rule and cached.

_fast_rules: dict = {}
# Operations apply() may take through the fast path (their result type is the operand type).
_FAST_APPLY = frozenset({"fma", "neg", "abs", "sqrt", "rsqrt", "rcp", "sin", "cos", "tan", "asin", "acos",
                         "atan", "exp", "exp2", "log", "log2", "sinh", "cosh", "tanh", "erf", "cbrt",
                         "floor", "ceil", "round", "trunc", "min", "max", "copysign", "atan2"})
_f32 = __import__("struct").Struct("f")


def _fast_rule(op: str, cls, other_kind):
    """(node op, result class) when ``cls <op> other_kind`` needs no promotion, else None."""
    key = (op, cls, other_kind)
    try:
        return _fast_rules[key]
    except KeyError:
        pass
    vt = cls._vt
    rule = None
    simple = (other_kind is cls or (other_kind is float and vt.is_float)
              or (other_kind is int and vt is not Bool))
    if op == "pow" and other_kind is not cls:
        simple = False      # literal exponents have exact special cases in apply()
    if simple:
        if op in ops.COMPARISONS:
            rule = (op, registry.flat_type(cls._backend, Bool, False))
        elif op in _SHIFTS:
            rule = (op, cls) if vt.is_integral else None
        elif op in _BITWISE:
            rule = (op, cls) if other_kind is cls or not vt.is_float else None
        elif vt is not Bool and (vt.is_float or op not in _FLOAT_ONLY):
            rule = (_node_op(op, vt), cls)
    _fast_rules[key] = rule
    return rule


def _literal_node(vt: VarType, v) -> Node:
    if vt is Float32 and type(v) is float:
        try:
            v = _f32.unpack(_f32.pack(v))[0]
        except OverflowError:
            v = ops.normalize_literal(vt, v)
        node = Node("literal", vt, 1, (), v)
        if state.recorder is not None:
            state.recorder.on_node(node)
        return node
    return ops.literal(vt, v)


def _binary_operator(op: str, reflected: bool):
    def operator(self, other):
        cls = type(self)
        kind = type(other)
        if kind is not cls and kind is not float and kind is not int:
            return apply(op, other, self) if reflected else apply(op, self, other)
        rule = _fast_rules.get((op, cls, kind), False)
        if rule is False:
            rule = _fast_rule(op, cls, kind)
        if rule is None or self._ad is not None or (kind is cls and other._ad is not None) \
                or (kind is int and not _int_fits(cls._vt, other)):
            return apply(op, other, self) if reflected else apply(op, self, other)
        a = self._node
        b = other._node if kind is cls else _literal_node(cls._vt, other)
        node_op, out_cls = rule
        # ops.make() inlined: this is the hottest path of tracing.
        sa = a.size
        sb = b.size
        if sa != sb and sb != 1 and sa != 1:
            ops.broadcast_size(op, (a, b))    # raises the size error
        if state.dirty:
            ops.flush_if_dirty((a, b))
        node = Node(node_op, out_cls._vt, sb if sa == 1 else sa, (b, a) if reflected else (a, b))
        if state.recorder is not None:
            state.recorder.on_node(node)
        out = out_cls.__new__(out_cls)
        out._node = node
        out._ad = None
        return out
    operator.__name__ = f"__{'r' if reflected else ''}{op}__"
    return operator


_OPERATOR_NAMES = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "truediv", "floordiv": "floordiv",
                   "mod": "mod", "pow": "pow", "and": "and", "or": "or", "xor": "xor", "shl": "lshift",
                   "shr": "rshift"}
for _op, _name in _OPERATOR_NAMES.items():
    setattr(ArrayBase, f"__{_name}__", _binary_operator(_op, False))
    setattr(ArrayBase, f"__r{_name}__", _binary_operator(_op, True))
for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(ArrayBase, f"__{_op}__", _binary_operator(_op, False))
del _op, _name


# ---------------------------------------------------------------------------
# Construction helpers

def _scalar_value(v, vt: VarType, who: str):
    """A constructor's scalar argument as ``vt`` stores it; out of range raises (no silent wrap)."""
    return ops.convert_scalar(vt, v, f"{who}()")


def _data_from_numpy(a: np.ndarray, vt: VarType) -> Node:
    src = a
    if a.ndim != 1:
        if a.ndim == 0:
            a = a.reshape(1)
        else:
            raise ValueError(f"expected a 1-D array, got one of shape {a.shape}")
    try:
        if a.dtype != vt.np_dtype:
            a = a.astype(vt.np_dtype)
        a = np.ascontiguousarray(a)
    except MemoryError:
        raise out_of_memory(vt.name, a.shape[0], vt.itemsize, "convert a NumPy array into") from None
    node = ops.data(vt, _backend().from_numpy(a), a.shape[0])
    rec = state.recorder
    if rec is not None:
        rec.on_upload(src, node)    # a frozen function re-reads NumPy inputs at every replay
    return node


def _data_from_sequence(seq, vt: VarType) -> Node:
    items = []
    for v in seq:
        if isinstance(v, ArrayBase):
            v = v[0] if len(v) == 1 else _bad_element(v)
        items.append(v)
    who = f"{vt.name}()"
    try:
        if vt.is_integral:
            # Each element as the scalar constructor converts it: out of range raises instead of
            # wrapping.  A list of Python ints (the common case) is checked by its extremes.
            lo, hi = ops.int_range(vt)
            if all(type(v) is int for v in items) and (not items or lo <= min(items) and max(items) <= hi):
                a = np.array(items, dtype=vt.np_dtype) if items else np.zeros(0, vt.np_dtype)
            else:
                a = np.array([ops.convert_scalar(vt, v, who) for v in items], dtype=vt.np_dtype)
        else:
            with np.errstate(over="ignore"):     # 1e40 -> Float32 is +inf, as Float32(1e40) is
                a = np.array(items, dtype=np.float64 if vt.is_float else None).astype(vt.np_dtype)
    except (TypeError, ValueError) as e:
        if isinstance(e, ConversionOverflowError) or "NaN" in str(e):
            raise
        raise TypeError(f"cannot build a {vt.name} array from {seq!r}: {e}") from None
    return _data_from_numpy(a, vt)


def _bad_element(v):
    raise TypeError(f"cannot build an array from a sequence containing an array of size {len(v)}")


def format_values(a: np.ndarray, vt: VarType) -> str:
    """Dr.Jit-style printing: ``[1, 2.5, 3]``, long arrays abbreviated."""
    def fmt(v):
        if vt is Bool:
            return "True" if v else "False"
        if vt.is_float:
            s = str(v)
            return s[:-2] if s.endswith(".0") else s
        return str(int(v))
    n = a.shape[0]
    if n > 20:
        head = ", ".join(fmt(v) for v in a[:5])
        tail = ", ".join(fmt(v) for v in a[-5:])
        return f"[{head}, .. {n - 10} skipped .., {tail}]"
    return "[" + ", ".join(fmt(v) for v in a) + "]"


# ---------------------------------------------------------------------------
# The one door for elementwise operations

_ARITH = frozenset({"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "min", "max", "fma", "copysign", "atan2"})
_BITWISE = frozenset({"and", "or", "xor"})
_SHIFTS = frozenset({"shl", "shr"})
_FLOAT_ONLY = frozenset({"truediv", "sqrt", "rsqrt", "rcp", "sin", "cos", "tan", "asin", "acos", "atan",
                         "exp", "exp2", "log", "log2", "sinh", "cosh", "tanh", "erf", "atan2", "cbrt", "copysign"})


def _int_fits(vt: VarType, v) -> bool:
    """Whether Python int ``v`` is representable in ``vt``'s bits (as signed or unsigned)."""
    if not vt.is_integral or vt is Bool:
        return True
    bits = vt.bits
    return -(1 << (bits - 1)) <= v < (1 << bits)


def scalar_type_of(v, like: VarType) -> VarType:
    """Type a Python scalar takes when combined with an array of type ``like``."""
    if isinstance(v, (bool, np.bool_)):
        return like if like is not None else Bool
    if isinstance(v, (int, np.integer)):
        if like is None or like is Bool:
            return Int32
        return like
    if isinstance(v, (float, np.floating)):
        if like is not None and like.is_float:
            return like
        return Float32
    raise TypeError


def apply(op: str, *operands):
    """Apply elementwise ``op`` to arrays / Python scalars, with Dr.Jit promotion.

    Returns the result array (a static vector if an operand is one).
    """
    if op == "pow" and len(operands) == 2 and isinstance(operands[1], (int, float)) \
            and not isinstance(operands[1], bool) and isinstance(operands[0], ArrayBase):
        special = _pow_by_literal(operands[0], operands[1])
        if special is not None:
            return special
    cls = type(operands[0])
    if op in _FAST_APPLY and getattr(cls, "_vt", None) is not None:
        # Fast path: every operand of one (non-promoting) type, no gradients attached.
        rule = _fast_rules.get((op, cls, cls), False)
        if rule is False:
            rule = _fast_rule(op, cls, cls)
        if rule is not None:
            vt = cls._vt
            nodes = []
            for o in operands:
                t = type(o)
                if t is cls:
                    if o._ad is not None:
                        break
                    nodes.append(o._node)
                elif (t is float and vt.is_float) or (t is int and vt is not Bool and _int_fits(vt, o)):
                    nodes.append(_literal_node(vt, o))
                else:
                    break
            else:
                out_cls = rule[1]
                out = out_cls.__new__(out_cls)
                out._node = ops.make(rule[0], out_cls._vt, tuple(nodes))
                out._ad = None
                return out
    arrays = [o for o in operands if isinstance(o, ArrayBase)]
    if len(arrays) != len(operands):
        from .vector import VectorBase
        if any(isinstance(o, VectorBase) for o in operands):
            from .vector import apply_vector
            return apply_vector(op, *operands)
        if not arrays:
            raise TypeError(f"frostjit.{op}(): expected at least one frostjit array, got "
                            + ", ".join(_type_name(o) for o in operands))
    first = arrays[0]
    backend = first._backend
    vt = None
    ad = False
    for a in arrays:
        if a._backend is not backend:
            raise TypeError(f"frostjit.{op}(): cannot mix arrays of backends {backend} and {a._backend}")
        if op == "select" and a is operands[0]:
            continue
        vt = a._vt if vt is None else promote(vt, a._vt)
        ad = ad or a._is_ad
    nodes = []
    # Python scalars (and NumPy arrays) adopt the array type.
    cast_operands = []
    for k, o in enumerate(operands):
        if isinstance(o, ArrayBase):
            cast_operands.append(o)
            continue
        if isinstance(o, _SCALARS):
            if op == "select" and k == 0:
                cast_operands.append(flat_of(backend, Bool, False)(bool(o)))
                continue
            if vt is None:
                vt = scalar_type_of(o, None)
            elif isinstance(o, (float, np.floating)) and not vt.is_float and op not in _BITWISE | _SHIFTS:
                vt = Float32 if vt.rank < Float32.rank else vt
            if isinstance(o, (int, np.integer)) and not isinstance(o, (bool, np.bool_)) \
                    and vt.is_integral and vt is not Bool and not _int_fits(vt, o):
                # Dr.Jit: a Python int beyond 32 bits is an Int64 (UInt64 beyond that), not wrapped.
                # (A width inside a frozen function is compared as it is: the recording guards
                # the comparisons instead of pinning the exact value.)
                v = o if hasattr(o, "__symbolic_size__") else int(o)
                big = Int64 if -2**63 <= v < 2**63 else UInt64
                if not -2**63 <= v < 2**64:
                    raise OverflowError(f"frostjit.{op}(): Python int {o} does not fit in 64 bits")
                vt = promote(vt, big)
            cast_operands.append(o)
            continue
        if hasattr(o, "__symbolic_size__"):
            # A width inside a frozen function (frostjit.freeze): typed like the number it stands for.
            v = o.__symbolic_size__
            if vt is None:
                vt = scalar_type_of(v, None)
            elif isinstance(v, float) and not vt.is_float and op not in _BITWISE | _SHIFTS:
                vt = Float32 if vt.rank < Float32.rank else vt
            cast_operands.append(o)
            continue
        if isinstance(o, np.ndarray):
            cast_operands.append(flat_of(backend, from_numpy_dtype(o.dtype), ad)(o))
            vt = promote(vt, cast_operands[-1]._vt)
            continue
        raise TypeError(f"frostjit.{op}(): unsupported operand type {_type_name(o)} "
                        f"(combined with {type(first).__name__})")
    in_vt, out_vt, nodes = _operand_types(op, vt, cast_operands, first)
    node = ops.make(_node_op(op, in_vt), out_vt, tuple(nodes))
    cls = flat_of(backend, out_vt, ad)
    out = cls.__new__(cls)
    out._node = node
    out._ad = None
    if ad and out_vt.is_float and any(isinstance(o, ArrayBase) and o._ad is not None for o in cast_operands):
        state.ad_hook.on_op(op, out, tuple(cast_operands))
    return out


def _pow_by_literal(x: "ArrayBase", e):
    """``x ** e`` for the exponents NumPy computes exactly (0, 1, 2, 0.5, -1) on float arrays."""
    if not x._vt.is_float:
        return None
    if e == 2:
        return apply("mul", x, x)
    if e == 1:
        # A new handle (in-place operators on the result must not change x); x * 1 keeps -0.
        return apply("mul", x, 1.0) if x._ad is not None else type(x)._from_node(x._node)
    if e == 0.5:
        return apply("sqrt", x)
    if e == -1:
        return apply("truediv", 1.0, x)
    if e == 0:
        # 1 everywhere (also for inf and NaN, like NumPy); a constant, not grad-enabled (Dr.Jit).
        one = ops.literal(x._vt, 1.0, x._node.size)
        if one.size != 1 and x._node.sym is not None:
            one.sym = x._node.sym       # inside a frozen function: x's symbolic width
        return type(x)._from_node(one)
    return None


def flat_of(backend, vt, ad):
    return registry.flat_type(backend, vt, ad)


def _node_op(op: str, vt: VarType) -> str:
    if op == "pow":
        return "pow_float" if vt.is_float else "pow_int"
    return op


def _to_node(o, vt: VarType) -> Node:
    if isinstance(o, ArrayBase):
        return ops.cast(o._node, vt)
    return ops.literal(vt, o)


def _operand_types(op: str, vt: VarType, operands, first):
    """Decide input and output types of ``op`` and convert operand nodes."""
    names = ", ".join(type(o).__name__ if isinstance(o, ArrayBase) else _type_name(o) for o in operands)
    if op in ops.COMPARISONS:
        return vt, Bool, [_to_node(o, vt) for o in operands]
    if op == "select":
        m = operands[0]
        if not (isinstance(m, ArrayBase) and m._vt is Bool):
            raise TypeError(f"frostjit.select(): the condition must be a Bool array, got {names.split(',')[0]}")
        return vt, vt, [m._node] + [_to_node(o, vt) for o in operands[1:]]
    if op in _BITWISE:
        # x & mask / x | mask keep x's type (Dr.Jit masking idiom)
        if len(operands) == 2 and isinstance(operands[1], ArrayBase) and operands[1]._vt is Bool and vt is not Bool:
            a = operands[0]
            avt = a._vt if isinstance(a, ArrayBase) else vt
            if op == "xor":
                raise TypeError(f"frostjit.xor(): unsupported operand types ({names})")
            return avt, avt, [_to_node(a, avt), operands[1]._node]
        if len(operands) == 2 and isinstance(operands[0], ArrayBase) and operands[0]._vt is Bool and vt is not Bool:
            return _operand_types(op, vt, operands[::-1], first)
        return vt, vt, [_to_node(o, vt) for o in operands]
    if op in _SHIFTS:
        if not vt.is_integral:
            raise TypeError(f"frostjit.{op}(): shifts need integer arrays, got ({names})")
        return vt, vt, [_to_node(o, vt) for o in operands]
    if op in ("not",):
        if vt.is_float:
            raise TypeError(f"frostjit: '~' is not defined for {names}")
        return vt, vt, [_to_node(o, vt) for o in operands]
    if vt is Bool and op not in ("abs",):
        raise TypeError(f"frostjit.{op}(): arithmetic is not defined for Bool arrays ({names}); "
                        "convert them first, e.g. UInt32(mask)")
    if op in _FLOAT_ONLY and not vt.is_float:
        vt = Float32
    return vt, vt, [_to_node(o, vt) for o in operands]
