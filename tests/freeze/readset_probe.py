"""A probe of the read set (frostjit/freeze/readset.py and the modules it uses) run by other
Python versions, without NumPy or the rest of frostjit: ``python readset_probe.py
path/to/frostjit/freeze`` prints what the read set saw of a small program
(tests/freeze/test_readset_python_versions.py compares the versions)."""
import importlib.util
import re
import sys
import types

np = types.ModuleType("numpy")
np.ndarray = type("ndarray", (), {})
np.generic = type("generic", (), {})
sys.modules["numpy"] = np
# the freeze folder as a package of its own, without its __init__ (which imports all of frostjit)
pkg = types.ModuleType("fzprobe")
pkg.__path__ = [sys.argv[1]]
sys.modules["fzprobe"] = pkg
R = importlib.import_module("fzprobe.readset")

class Layer:
    def __init__(self, w): self.w = w
    @property
    def double(self): return self.w * 2
class Base:
    k = 1.0
    def f(self): return self.k
class Net(Base):
    gain = 3.0
    def __init__(self):
        self.layers = [Layer(1.0), Layer(2.0)]
        self.count = 0
    def f(self): return super().f() + 1
    def forward(self, v):
        for l in self.layers:
            v = v * l.w + l.double
        self.count += 1
        return v * self.gain + self.f()
net = Net()
D = {"k": 1.0}
SCALES = [1.0, 2.0]
def outer():
    acc = 0.5
    def bump(v):
        nonlocal acc
        acc = acc + v
        return acc
    return bump
bump = outer()
def fn(v):
    a, b = v, v        # LOAD_FAST_LOAD_FAST in 3.13
    t = a + b + net.forward(v) + sum(s * v for s in SCALES) + sum([s for s in SCALES])
    D["k"] += 1
    net.gain = 3.0
    if hasattr(net, "gain"):
        t += vars(net)["count"]
    t += type(net).gain * 0 + getattr(net, "layers")[0].w * 0  # noqa: B009 - the pattern is the point
    return t + bump(1.0)
rs = R.ReadSet(fn)
rs.start(); out = fn(1.0); rs.stop()
labels = sorted(a.label + ("=" + repr(a.value) if a.kind not in ("contents",) else "") for a in rs.atoms.values()
                if not a.label.startswith("__class__"))       # (3.12+ load super()'s cell by LOAD_DEREF)
print(out, rs.fallback, rs.error)
for line in labels:
    print("  ", re.sub(r" at 0x[0-9a-f]+", "", line))
print("  writes:", sorted(w[2] for w in rs.writes))
print("  loose:", sorted(rs.loose))          # (super().f(): a loose name on every version)
