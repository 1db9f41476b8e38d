"""The disk kernel cache: reuse across processes, corruption, concurrency, CLI."""
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.llvm_only("the LLVM backend's disk cache of object code")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# One thread: the thread pool's native code (docs/engine.md, "Launch"), which a process with more
# threads compiles once into this disk cache too, stays out of the counts of kernels below.
ONE_THREAD = {"FROSTJIT_NUM_THREADS": "1"}

PROGRAM = textwrap.dedent("""
    import json, sys
    import frostjit as fj
    from frostjit.llvm import Float
    fj.set_flag(fj.JitFlag.KernelHistory, True)
    x = fj.arange(Float, 1000)
    for k in range(30):
        x = fj.fma(x, 1.001, {c}) * fj.cos(x)
    fj.eval(x)
    h = [e for e in fj.kernel_history() if e["type"] == "jit"]
    print(json.dumps({{"disk": h[0]["cache_disk"], "hit": h[0]["cache_hit"], "hash": h[0]["hash"],
                       "value": x[7]}}))
""")


def run(cache_dir, c=0.25):
    env = dict(os.environ, FROSTJIT_CACHE_DIR=str(cache_dir), PYTHONPATH=REPO, **ONE_THREAD)
    out = subprocess.run([sys.executable, "-c", PROGRAM.format(c=c)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    import json
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def entries(cache_dir):
    return [os.path.join(r, f) for r, _, fs in os.walk(cache_dir) for f in fs if f.endswith(".o")]


def test_second_process_loads_from_disk(tmp_path):
    first, _ = run(tmp_path)
    assert first["disk"] is False and first["hit"] is False
    assert len(entries(tmp_path)) == 1
    second, _ = run(tmp_path)
    assert second["disk"] is True
    assert second["hash"] == first["hash"] and second["value"] == first["value"]


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_corrupted_entry_is_ignored_and_rebuilt(tmp_path, damage):
    first, _ = run(tmp_path)
    (path,) = entries(tmp_path)
    data = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write({"truncate": data[: len(data) // 2], "garbage": b"\x7fELF" + os.urandom(200), "empty": b""}[damage])
    second, err = run(tmp_path)
    assert second["disk"] is False and second["value"] == first["value"]
    assert "damaged kernel cache entry" in err
    third, _ = run(tmp_path)       # the rebuilt entry is good again
    assert third["disk"] is True


def test_concurrent_processes_share_a_cache(tmp_path):
    env = dict(os.environ, FROSTJIT_CACHE_DIR=str(tmp_path), PYTHONPATH=REPO, **ONE_THREAD)
    procs = [subprocess.Popen([sys.executable, "-c", PROGRAM.format(c=0.5)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    import json
    values = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        values.append(json.loads(out.strip().splitlines()[-1])["value"])
    assert len(set(values)) == 1
    assert len(entries(tmp_path)) == 1
    assert not [f for _, _, fs in os.walk(tmp_path) for f in fs if f.startswith(".tmp-")]


def test_cache_cli_info_and_clear(tmp_path):
    run(tmp_path)
    env = dict(os.environ, FROSTJIT_CACHE_DIR=str(tmp_path), PYTHONPATH=REPO, **ONE_THREAD)
    info = subprocess.run([sys.executable, "-m", "frostjit", "cache", "info"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert info.returncode == 0 and "entries: 1" in info.stdout and str(tmp_path) in info.stdout
    clear = subprocess.run([sys.executable, "-m", "frostjit", "cache", "clear"], env=env, capture_output=True,
                           text=True, timeout=60)
    assert clear.returncode == 0 and "removed 1" in clear.stdout
    assert entries(tmp_path) == []


def test_flush_kernel_cache_reloads_from_disk():
    import frostjit as fj
    from frostjit.llvm import Float
    with fj.scoped_set_flag(fj.JitFlag.KernelHistory, True):
        fj.kernel_history()
        fj.eval(fj.arange(Float, 10) * 3.75 + 0.125)
        fj.flush_kernel_cache()
        y = fj.arange(Float, 10) * 3.75 + 0.125
        fj.eval(y)
        h = fj.kernel_history()
    assert h[1]["cache_hit"] is False and h[1]["cache_disk"] is True
    assert y[2] == 7.625
