"""Process-wide tuning settings that backends read at launch time (not part of any kernel).

``EXPAND_THRESHOLD`` is Dr.Jit's expansion threshold (``dr.set_expand_threshold``): the
largest scatter-reduction target, in elements, that the LLVM backend may replicate per
thread (reduce without atomics, combine afterwards).  Backends without threads ignore it.
It changes only how a reduction is computed, never which result a kernel means, so it is
not part of kernel or frozen-function keys.
"""
from __future__ import annotations

DEFAULT_EXPAND_THRESHOLD = 1 << 20      # Dr.Jit 1.5's default (1048576 elements)


class _Settings:
    __slots__ = ("expand_threshold",)

    def __init__(self) -> None:
        self.expand_threshold = DEFAULT_EXPAND_THRESHOLD


settings = _Settings()
