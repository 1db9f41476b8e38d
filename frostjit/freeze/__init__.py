"""Frozen functions: ``fj.freeze`` records a function's kernel launches once and replays them.

* :mod:`.layout`: walking the inputs into a layout key (and the re-trace diagnostics);
* :mod:`.symbolic`: symbolic sizes and guards;
* :mod:`.recorder`: the engine hooks that write down launches and memory operations;
* :mod:`.recording`: a recording and its generated replay driver;
* :mod:`.frozen`: the frozen-function object (lookup, recording, replay, warnings).

See docs/freeze.md.
"""
from .frozen import freeze, FrozenFunction, FreezeWarning

__all__ = ["freeze", "FrozenFunction", "FreezeWarning"]
