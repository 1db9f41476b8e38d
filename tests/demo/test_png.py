"""Tests of the demo's PNG encoder and NumPy reference simulation (no JIT needed)."""
import importlib.util
import os
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

from frostjit.demo import _png, heat

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_png_roundtrip_rgb_grey_rgba():
    rng = np.random.default_rng(1)
    for shape in [(7, 5, 3), (4, 9), (3, 3, 4), (1, 1, 3)]:
        img = rng.integers(0, 256, size=shape, dtype=np.uint8)
        data = _png.encode_png(img)
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        back = _png.decode_png(data)
        assert np.array_equal(back.reshape(img.shape), img)


def test_png_structure_and_crc():
    img = np.zeros((2, 3, 3), dtype=np.uint8)
    img[0, 0] = (255, 0, 0)
    data = _png.encode_png(img)
    n, tag = struct.unpack(">I4s", data[8:16])
    assert (n, tag) == (13, b"IHDR")
    w, h, depth, ctype = struct.unpack(">IIBB", data[16:26])
    assert (w, h, depth, ctype) == (3, 2, 8, 2)
    crc = struct.unpack(">I", data[29:33])[0]
    assert crc == zlib.crc32(data[12:29]) & 0xFFFFFFFF
    assert data.endswith(b"IEND\xaeB`\x82")
    # scanlines: filter byte 0 then pixels
    idat_len = struct.unpack(">I", data[33:37])[0]
    raw = zlib.decompress(data[41:41 + idat_len])
    assert raw[:4] == b"\x00\xff\x00\x00" and len(raw) == 2 * (1 + 9)


def test_png_rejects_bad_input():
    with pytest.raises(TypeError):
        _png.encode_png(np.zeros((2, 2, 3), dtype=np.float32))
    with pytest.raises(ValueError):
        _png.encode_png(np.zeros((2, 2, 2), dtype=np.uint8))


def test_colormap_and_write(tmp_path):
    f = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    img = _png.colormap(f)
    assert img.shape == (3, 4, 3) and img.dtype == np.uint8
    assert tuple(img[0, 0]) == (0, 0, 4) and tuple(img[-1, -1]) == (252, 255, 164)
    assert (img.astype(int).sum(-1).ravel()[1:] >= img.astype(int).sum(-1).ravel()[:-1]).all()
    big = _png.upscale(img, 3)
    assert big.shape == (9, 12, 3)
    p = tmp_path / "x.png"
    _png.write_png(p, big)
    assert np.array_equal(_png.decode_png(p.read_bytes()), big)


def _heat_loop_reference(steps, n):
    """Cell-by-cell reference of the same scheme (slow; tiny grids only)."""
    mask, val = heat.sources(n)
    u = heat.initial(n).astype(np.float32)
    a = np.float32(heat.ALPHA)
    for _ in range(steps):
        new = u.copy()
        for k in range(n * n):
            i, j = divmod(k, n)
            nb = np.float32(0)
            nb = (u[k - 1] if j > 0 else np.float32(0)) + (u[k + 1] if j < n - 1 else np.float32(0)) \
                + (u[k - n] if i > 0 else np.float32(0)) + (u[k + n] if i < n - 1 else np.float32(0))
            new[k] = val[k] if mask[k] else u[k] + a * (nb - np.float32(4) * u[k])
        u = new
    return u


def test_numpy_reference_matches_loop():
    n, steps = 12, 7
    got, t = heat.simulate_numpy(steps, n)
    ref = _heat_loop_reference(steps, n)
    assert heat.compare(got, ref) < 1e-6
    assert t["total_s"] >= 0 and set(t) >= {"first_step_s", "median_step_s", "mean_step_s"}


def test_numpy_reference_physics():
    n = 40
    mask, val = heat.sources(n)
    u, _ = heat.simulate_numpy(300, n)
    assert np.array_equal(u[mask], val[mask])          # sources held fixed
    assert u.min() >= val.min() - 1e-6 and u.max() <= val.max() + 1e-6  # max principle
    assert heat.compare(u, heat.initial(n)) > 0.01     # heat spread


def test_demo_dispatch_help(capsys):
    import frostjit.demo as demo
    assert demo.main(["--help"]) == 0
    assert "heat" in capsys.readouterr().out
    assert demo.main(["nosuchdemo"]) == 2


@pytest.mark.skipif(importlib.util.find_spec("drjit") is None, reason="drjit not installed")
def test_heat_demo_on_drjit(tmp_path):
    out = tmp_path / "heat.png"
    p = subprocess.run([sys.executable, "-c",
                        "import sys, frostjit.demo as d; sys.exit(d.main(sys.argv[1:]))",
                        "heat", "--backend", "drjit", "--n", "48", "--steps", "60",
                        "--out", str(out), "--no-progress"],
                       capture_output=True, text=True, cwd=REPO, timeout=300,
                       env={**os.environ, "PYTHONPATH": REPO})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "OK" in p.stdout
    img = _png.decode_png(out.read_bytes())
    assert img.shape == (480, 480, 3)


@pytest.mark.skipif(importlib.util.find_spec("drjit") is None, reason="drjit not installed")
def test_fit_demo_on_drjit(tmp_path):
    prefix = str(tmp_path / "fit")
    p = subprocess.run([sys.executable, "-c",
                        "import sys, frostjit.demo as d; sys.exit(d.main(sys.argv[1:]))",
                        "fit", "--backend", "drjit", "--quick", "--steps", "30",
                        "--out", prefix, "--no-progress"],
                       capture_output=True, text=True, cwd=REPO, timeout=300,
                       env={**os.environ, "PYTHONPATH": REPO})
    assert p.returncode == 0, p.stdout + p.stderr
    for suffix in ("target", "fit", "loss"):
        assert _png.decode_png(open(f"{prefix}_{suffix}.png", "rb").read()).ndim == 3


def test_fit_target_and_loss_plot():
    from frostjit.demo import fit
    t = fit.target_image(16)
    assert t.shape == (256,) and t.min() >= 0 and t.max() <= 1
    img = fit.loss_plot(np.array([1.0, 0.5, 0.1, 0.01]), w=50, h=30)
    assert img.shape == (30, 50, 3) and (img == (200, 40, 40)).all(-1).any()
