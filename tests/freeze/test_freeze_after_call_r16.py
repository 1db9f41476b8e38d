"""``frostjit.ad.frozen.after_call`` skips the thread-local list while no vertex was ever put into one
(r16, lane optstep: ``graph.after_call_used``, sticky).  Checked in a fresh interpreter, where the flag
starts False: a frozen call (recorded on a leaf input) that gives a gradient to an input computed
from another grad-enabled variable still continues the backward pass to that variable after the
call, exactly as the plain function's backward pass does."""
import json
import subprocess
import sys

import pytest

_PROGRAM = r"""
import json
import sys
import numpy as np
import frostjit as fj
from frostjit.ad import graph
from frostjit.llvm.ad import Float

def f(x):
    y = fj.sum(x * x)
    fj.backward(y)          # x's gradient: written back; after_call walks on to a
    return fj.detach(y)

ff = fj.freeze(f)
out = {"flag_before": graph.after_call_used, "frozen": [], "plain": []}
# "leaf": recorded on a leaf input (nothing postponed), replayed on inputs with parents: the
# replay's write-back puts the first vertex into the list (graph.assign_grad); "parents": the
# recording postpones it (frozen.leave)
if sys.argv[1] == "leaf":
    leaf = Float(np.arange(4, dtype=np.float32))
    fj.enable_grad(leaf)
    ff(leaf)
out["flag_leaf"] = graph.after_call_used
for k in range(4):
    for fn, name in ((ff, "frozen"), (f, "plain")):
        a = Float(np.arange(4, dtype=np.float32) + k)
        fj.enable_grad(a)
        x = a * 2.0
        fn(x)
        out[name].append(np.asarray(fj.grad(a).numpy()).tolist())
out["flag_after"] = graph.after_call_used
out["recordings"] = ff.n_recordings
print(json.dumps(out))
"""


@pytest.mark.parametrize("recorded_on", ["leaf", "parents"])
def test_after_call_continues_from_inputs_with_parents_in_a_fresh_process(recorded_on):
    res = subprocess.run([sys.executable, "-c", _PROGRAM, recorded_on], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["frozen"] == out["plain"]
    assert out["recordings"] == 1           # (the later calls replayed)
    assert out["flag_before"] is False and out["flag_leaf"] is False and out["flag_after"] is True
    assert out["plain"][0] == [0.0, 8.0, 16.0, 24.0]
