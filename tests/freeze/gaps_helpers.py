"""Twin copies of ``gaps_module`` and the frozen-vs-plain loop of test_freeze_gaps.py and
test_freeze_redteam.py (imported by name: tests/ has no packages)."""
import importlib.util
import os
import warnings

import frostjit as fj

from freeze_helpers import ramp, same

HERE = os.path.dirname(os.path.abspath(__file__))
WIDTHS = (1, 7, 1000)


def twins():
    """Two fresh copies of gaps_module (their own globals and classes)."""
    out = []
    for tag in ("frozen", "plain"):
        spec = importlib.util.spec_from_file_location(f"gaps_module_{tag}", os.path.join(HERE, "gaps_module.py"))
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        out.append(m)
    return out


def agree_over_calls(name, mutate=None, calls=3, widths=WIDTHS, args=None, fallback=False, twin=None):
    """Frozen ``name`` of one copy against plain ``name`` of the other, ``calls`` times per width;
    ``mutate(module, i)`` changes both copies' state the same way before call ``i``; ``args(module,
    n, i)`` makes the arguments (default: a ramp).  Without ``fallback``, no call may fall back to
    the plain function (the state must be guarded, not given up on).  Returns the frozen function."""
    a, b = twin or twins()
    fa, fb = getattr(a, name), getattr(b, name)
    frozen = fj.freeze(lambda *xs: fa(*xs))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always", fj.FreezeWarning)
        for n in widths:
            for i in range(calls):
                if mutate is not None:
                    mutate(a, i)
                    mutate(b, i)
                xs = args(n, i) if args is not None else (ramp(n, 1),)
                got, ref = frozen(*xs), fb(*xs)
                assert same(got, ref), (name, n, i, got, ref)
    warned = [str(x.message) for x in w if issubclass(x.category, fj.FreezeWarning)]
    if fallback:
        assert warned, f"{name}: expected a fallback to the plain call"
    else:
        assert not warned, warned
    return frozen
