"""Static vectors (``Array3f``, ``Array2u``, ...): a fixed number of 1-D components.

Operations apply component by component; a 1-D array or Python scalar operand
broadcasts to every component, as in Dr.Jit.
"""
from __future__ import annotations

import numpy as np

from ..schedule.evaluate import evaluate
from ..trace.state import state
from . import registry, variables
from .flat import ArrayBase, apply, _SCALARS
from .printing import format_array


class VectorBase:
    """Base class of static vector types; ``_elem`` is the component class, ``_n`` the size."""

    __slots__ = ("_c",)
    _elem = None
    _n = 0
    IsJIT = True
    IsVector = True
    IsTensor = False
    Depth = 2

    def __init__(self, *args):
        n, elem = self._n, self._elem
        if len(args) == 0:
            self._c = [elem() for _ in range(n)]
        elif len(args) == n and n > 1:
            self._c = [_component(elem, a) for a in args]
        elif len(args) == 1:
            v = args[0]
            if isinstance(v, VectorBase):
                if v._n != n:
                    raise TypeError(f"{type(self).__name__}(): cannot convert {type(v).__name__} ({v._n} components)")
                self._c = [_component(elem, c) for c in v._c]
            elif isinstance(v, ArrayBase) or isinstance(v, _SCALARS):
                c = _component(elem, v)
                self._c = [c] + [_component(elem, v) for _ in range(n - 1)]
            elif isinstance(v, np.ndarray):
                if v.ndim == 1 and v.shape[0] == n:
                    self._c = [_component(elem, x) for x in v]
                elif v.ndim == 2 and v.shape[0] == n:
                    self._c = [_component(elem, v[k]) for k in range(n)]
                else:
                    raise ValueError(f"{type(self).__name__}(): expected a NumPy array of shape ({n}, N), got {v.shape}")
            elif isinstance(v, (list, tuple)) and len(v) == n:
                self._c = [_component(elem, x) for x in v]
            else:
                raise TypeError(f"{type(self).__name__}(): cannot construct from {type(v).__name__}")
        else:
            raise TypeError(f"{type(self).__name__}() takes 0, 1 or {n} arguments ({len(args)} given)")

    @classmethod
    def _apply(cls, op: str, *operands):
        """``apply(op, *operands)`` when an operand is a static vector (called by the 1-D door)."""
        return apply_vector(op, *operands)

    @classmethod
    def _from_components(cls, comps):
        out = cls.__new__(cls)
        out._c = list(comps)
        return out

    # -- components ------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def __getitem__(self, k):
        return self._c[k]

    def __setitem__(self, k, v):
        self._c[k] = _component(self._elem, v)

    def __iter__(self):
        return iter(self._c)

    def _get(k):
        def getter(self):
            if k >= self._n:
                raise AttributeError(f"{type(self).__name__} has no component {'xyzw'[k]}")
            return self._c[k]

        def setter(self, v):
            if k >= self._n:
                raise AttributeError(f"{type(self).__name__} has no component {'xyzw'[k]}")
            self._c[k] = _component(self._elem, v)
        return property(getter, setter)

    x, y, z, w = _get(0), _get(1), _get(2), _get(3)
    del _get

    @property
    def Type(self):
        return self._elem._vt

    # Dr.Jit's view of the variables: a static vector is not one variable but several.
    @property
    def state(self):
        """The components' common :class:`frostjit.VarState`, ``Mixed`` when they differ."""
        return variables.combined_state(variables.state_of(c._node) for c in self._c)

    @property
    def index(self) -> int:
        """0: a static vector holds one variable per component (``v.x.index``, ...)."""
        return 0

    @property
    def index_ad(self) -> int:
        """0, as :attr:`index`."""
        return 0

    @property
    def label(self) -> str | None:
        """``"p"`` if the components are labelled ``p_0``, ``p_1``, ... (else ``None``)."""
        names = [c.label for c in self._c]
        p = names[0][:-2] if names and names[0] and names[0].endswith("_0") else None
        return p if p is not None and names == [f"{p}_{k}" for k in range(self._n)] else None

    @label.setter
    def label(self, value: str) -> None:
        for k, c in enumerate(self._c):       # Dr.Jit: the components get "<label>_<index>"
            c.label = f"{value}_{k}" if isinstance(value, str) else value

    @property
    def ndim(self) -> int:
        """2: the components and the lanes."""
        return 2

    @property
    def grad(self):
        """The gradient (``fj.grad(self)``, same type); assigning it calls ``fj.set_grad``."""
        return state.ad_hook.grad(self)

    @grad.setter
    def grad(self, value) -> None:
        state.ad_hook.set_grad(self, value)

    @property
    def label(self) -> str | None:
        """``"p"`` if the components are labelled ``p_0``, ``p_1``, ... (else ``None``)."""
        names = [c.label for c in self._c]
        p = names[0][:-2] if names and names[0] and names[0].endswith("_0") else None
        return p if p is not None and names == [f"{p}_{k}" for k in range(self._n)] else None

    @label.setter
    def label(self, value: str) -> None:
        for k, c in enumerate(self._c):       # Dr.Jit: the components get "<label>_<index>"
            c.label = f"{value}_{k}" if isinstance(value, str) else value

    @property
    def shape(self) -> tuple:
        """``(n, width)``; size-1 components broadcast, other unequal sizes raise ``ValueError``."""
        sizes = {len(c) for c in self._c}
        wide = sizes - {1}
        if len(wide) > 1:
            raise ValueError(f"{type(self).__name__}.shape: the components have incompatible sizes "
                             f"({', '.join(str(len(c)) for c in self._c)}): the array is ragged")
        return (self._n, wide.pop() if wide else max(sizes, default=0))

    def numpy(self) -> np.ndarray:
        """Evaluate and return a NumPy array of shape ``(n, width)``."""
        evaluate([c._node for c in self._c])
        sizes = {len(c) for c in self._c} - {1}
        if len(sizes) > 1:
            raise ValueError(f"{type(self).__name__}.numpy(): the components have incompatible sizes "
                             f"({', '.join(str(len(c)) for c in self._c)})")
        width = sizes.pop() if sizes else 1     # size-1 components broadcast (also to 0)
        return np.stack([np.broadcast_to(c.numpy(), (width,)) for c in self._c])

    def __array__(self, dtype=None, copy=None):
        # NumPy 2 protocol: copy=False asks for a view or an error; the export is always a copy.
        if copy is False:
            raise ValueError(f"np.asarray({type(self).__name__}, copy=False): a frostjit array converts to "
                             "NumPy by copying; use np.from_dlpack(x) for a zero-copy view")
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __dlpack__(self, *args, **kwargs):
        """DLPack export of the ``(n, width)`` array (a copy: components live in separate buffers)."""
        return self.numpy().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def __repr__(self) -> str:
        return format_array(self)

    __str__ = __repr__

    def __bool__(self):
        raise TypeError(f"bool({type(self).__name__}) is ambiguous: use frostjit.all() or frostjit.any()")

    # -- operators --------------------------------------------------------
    def __add__(self, o): return apply_vector("add", self, o)
    def __radd__(self, o): return apply_vector("add", o, self)
    def __sub__(self, o): return apply_vector("sub", self, o)
    def __rsub__(self, o): return apply_vector("sub", o, self)
    def __mul__(self, o): return apply_vector("mul", self, o)
    def __rmul__(self, o): return apply_vector("mul", o, self)
    def __truediv__(self, o): return apply_vector("truediv", self, o)
    def __rtruediv__(self, o): return apply_vector("truediv", o, self)
    def __floordiv__(self, o): return apply_vector("floordiv", self, o)
    def __rfloordiv__(self, o): return apply_vector("floordiv", o, self)
    def __mod__(self, o): return apply_vector("mod", self, o)
    def __rmod__(self, o): return apply_vector("mod", o, self)
    def __pow__(self, o): return apply_vector("pow", self, o)
    def __rpow__(self, o): return apply_vector("pow", o, self)
    def __and__(self, o): return apply_vector("and", self, o)
    def __rand__(self, o): return apply_vector("and", o, self)
    def __or__(self, o): return apply_vector("or", self, o)
    def __ror__(self, o): return apply_vector("or", o, self)
    def __xor__(self, o): return apply_vector("xor", self, o)
    def __rxor__(self, o): return apply_vector("xor", o, self)
    def __lshift__(self, o): return apply_vector("shl", self, o)
    def __rshift__(self, o): return apply_vector("shr", self, o)
    def __rlshift__(self, o): return apply_vector("shl", o, self)
    def __rrshift__(self, o): return apply_vector("shr", o, self)
    def __eq__(self, o): return apply_vector("eq", self, o)
    def __ne__(self, o): return apply_vector("ne", self, o)
    def __lt__(self, o): return apply_vector("lt", self, o)
    def __le__(self, o): return apply_vector("le", self, o)
    def __gt__(self, o): return apply_vector("gt", self, o)
    def __ge__(self, o): return apply_vector("ge", self, o)
    def __neg__(self): return apply_vector("neg", self)
    def __pos__(self): return self
    def __invert__(self): return apply_vector("not", self)
    def __abs__(self): return apply_vector("abs", self)

    def _inplace(self, op, o):
        r = apply_vector(op, self, o)
        self._c = [_component(self._elem, c) for c in r._c]
        return self

    def __iadd__(self, o): return self._inplace("add", o)
    def __isub__(self, o): return self._inplace("sub", o)
    def __imul__(self, o): return self._inplace("mul", o)
    def __itruediv__(self, o): return self._inplace("truediv", o)

    __hash__ = object.__hash__


def _component(elem, v):
    if isinstance(v, elem) and type(v) is elem:
        return v
    return elem(v)


def apply_vector(op: str, *operands):
    """Apply ``op`` component-wise; static sizes must agree."""
    n = None
    for o in operands:
        if isinstance(o, VectorBase):
            if n is None:
                n = o._n
            elif o._n != n:
                raise TypeError(f"frostjit.{op}(): incompatible static sizes {n} and {o._n} "
                                f"({', '.join(type(x).__name__ for x in operands)})")
    comps = [apply(op, *[o._c[k] if isinstance(o, VectorBase) else o for o in operands]) for k in range(n)]
    first = comps[0]
    cls = registry.vector_type(first._backend, first._vt, n, first._is_ad)
    if cls is None:
        raise TypeError(f"frostjit.{op}(): no static vector type with {n} components of {first._vt.name}")
    return cls._from_components(comps)
