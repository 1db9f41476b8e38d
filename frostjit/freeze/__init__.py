"""Frozen functions: ``fj.freeze`` records a function's kernel launches once and replays them.

* :mod:`.layout`: walking the inputs into a layout key (and the re-trace diagnostics);
* :mod:`.values`: Python values in the key (type and bits; weak identities);
* :mod:`.symbolic`: symbolic sizes and guards (a width is the number it stands for);
* :mod:`.recorder`: the engine hooks that write down launches and memory operations (per thread);
* :mod:`.recording`: a recording and its generated replay driver;
* :mod:`.outputs`: outputs and write-backs, described when recorded, rebuilt by every replay;
* :mod:`.cache`: recordings by key (pinned sizes indexed, dead identities dropped);
* :mod:`.binder`: generated input binders (the lookup without building a key);
* :mod:`.readset`: what the traced Python code read (watched while recording), with
  :mod:`.code` (whose code runs; the deny list), :mod:`.chains` (bytecode analysis) and
  :mod:`.lookup` (attribute reads without running user code);
* :mod:`.guards`: guards on that state, checked before every replay;
* :mod:`.checking`: checking mode (every replay compared with the plain call);
* :mod:`.raised`: exceptions of the function's Python, re-raised as also ``RuntimeError`` s;
* :mod:`.frozen`: the frozen-function object (lookup, recording, replay, warnings).

See docs/freeze.md.
"""
from .frozen import freeze, FrozenFunction, FreezeWarning, FreezeMismatchError

__all__ = ["freeze", "FrozenFunction", "FreezeWarning", "FreezeMismatchError"]
