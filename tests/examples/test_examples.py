"""The ports under examples/ run (small sizes, no pictures) and do what they say."""
import importlib.util
import os

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_example_{name}", os.path.join(EXAMPLES, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_texture_fit_converges_in_a_frozen_step(capsys):
    import warnings
    import frostjit as fj
    mod = _load("texture_fit")
    with warnings.catch_warnings():
        warnings.simplefilter("error", fj.FreezeWarning)        # the step replays (no plain fallback)
        texture, target, losses = mod.fit(size=16, steps=40, lr=0.05)
    assert texture.shape == (16, 16, 3)
    assert losses[-1] < losses[0] / 20
    assert mod.main(["--size", "8", "--steps", "5", "--no-png"]) == 0
    assert "5 steps of a 8x8 texture fit" in capsys.readouterr().out


def test_texture_fit_writes_pictures(tmp_path):
    import pytest
    pytest.importorskip("matplotlib")
    mod = _load("texture_fit")
    files = mod.save_pictures(str(tmp_path / "fit"), np.zeros((4, 4, 3)), np.ones((4, 4, 3)), [1.0, 0.5])
    assert all(os.path.getsize(f) > 0 for f in files) and len(files) == 3


def test_volume_lookup_matches_numpy(capsys):
    mod = _load("volume_lookup")
    vol = mod.density_volume(8)
    img = mod.render(vol, 12, 6)
    np.testing.assert_allclose(img, mod.render_numpy(vol, 12, 6), atol=1e-5)
    assert img.min() < 0.9 and img.max() <= 1.0
    assert mod.main(["--res", "6", "--image", "8", "--samples", "4", "--no-png"]) == 0
    assert "max difference to NumPy" in capsys.readouterr().out


def test_neural_field_fit_learns_in_a_frozen_step(capsys):
    mod = _load("neural_field")
    picture, goal, losses = mod.fit(res=8, steps=60, batch=256, lr=0.05, hidden=4)
    assert picture.shape == goal.shape == (8, 8)
    assert losses[-1] < losses[0] / 20
    assert mod.main(["--res", "4", "--steps", "3", "--batch", "64", "--hidden", "4"]) == 0
    assert "3 steps of a neural field fit" in capsys.readouterr().out
