"""plum's private module name for methods (``plum._method``): :class:`Method` and
:class:`MethodList`, re-exported so code written against plum's modules imports them."""

from ._method_table import MethodList
from ._signature import Method

__all__ = ["Method", "MethodList"]
