"""The reference backend's part of a frozen function's replay: plain calls of its methods.

Every operation allocates new buffers (no scratch reuse, no slabs) and every launch goes
through :meth:`ReferenceBackend.launch_sized`, with the element counts the recording
computed for this call.
"""
from __future__ import annotations

from ..kernel import OUT
from ..replay import ReplayEmitter, ReplayCode, LaunchArg, Size


class ReferenceReplayEmitter(ReplayEmitter):
    """Writes each recorded operation as one call of the reference backend."""

    def __init__(self, backend, code: ReplayCode):
        super().__init__(backend, code)
        code.bind("backend", backend)

    def launch(self, index: int, kernel, size: Size, args: list[LaunchArg], defer: bool = False) -> None:
        # (every launch runs to its end: ``defer`` is ignored)
        c = self.code
        name = c.bind(f"kernel_{index}", kernel)
        for a in args:
            if a.kind == OUT:
                c.line(f"buffer_{a.slot} = backend.alloc({c.type_name(a.vt)}, launch_size)")
        buffers = ", ".join(f"buffer_{a.slot}" for a in args)
        sizes = ", ".join("launch_size" if a.kind == OUT else a.size.expr for a in args)
        c.line(f"backend.launch_sized({name}, launch_size, [{buffers}], [{sizes}])")

    def reduce(self, index, op, vt, src, size, out) -> None:
        c = self.code
        c.line(f"buffer_{out} = backend.reduce({op!r}, {c.type_name(vt)}, buffer_{src}, {size.expr})")

    def fill(self, index, vt, value, size, out) -> None:
        c = self.code
        c.line(f"buffer_{out} = backend.full({c.type_name(vt)}, {c.constant('fill_value', value)}, {size.expr})")

    def fill_value(self, index, vt, value_expr, out) -> None:
        c = self.code
        c.line(f"buffer_{out} = backend.full({c.type_name(vt)}, {value_expr}, 1)")

    def upload(self, index, vt, array_name, out) -> None:
        self.code.line(f"buffer_{out} = backend.from_numpy({array_name})")

    def host_values(self, slot, size) -> str:
        return f"backend.host_array(buffer_{slot}, {size.expr})"
