"""The documentation says what the code does: the README's example output and Quick start, the
documented commands and their options, the environment variables, the accuracy doc's function list."""
import os
import re
import shlex
import subprocess
import sys

import pytest

import frostjit as fj
from frostjit.cli import main as cli_main

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = ["README.md", "DEVELOPERS.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(os.path.join(REPO, "docs")) if f.endswith(".md"))


# Everything but the README's example (which runs arrays, on the backend of the run) checks text.
DOCS_ONLY = pytest.mark.backend_independent("checks documentation text and command-line help")


def read(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()


def code_blocks(text, lang):
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def test_readme_example_prints_what_the_readme_says():
    """Regression: the README's example printed another line than the one it showed."""
    block = code_blocks(read("README.md"), "python")[0]
    shown = re.search(r"# prints the line below\n# (.*)\n", block).group(1)
    r = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": REPO})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == shown, f"the README should show: # {r.stdout.strip()}"


def quick_start_commands():
    text = read("README.md")
    section = text[text.index("## Quick start"):]
    return [line for line in code_blocks(section, "sh")[0].splitlines() if line.strip()]


@DOCS_ONLY
def test_quick_start_commands_use_a_virtual_environment():
    """Regression: a bare `pip install -e .` fails on Debian 12 / Ubuntu 24.04
    (externally-managed-environment); each command creates and uses .venv."""
    demo_cmd, test_cmd = quick_start_commands()
    for cmd in (demo_cmd, test_cmd):
        steps = [shlex.split(s) for s in cmd.split("&&")]
        assert steps[0] == ["python3", "-m", "venv", ".venv"]
        assert all(s[0] == ".venv/bin/python" for s in steps[1:]), cmd
        assert steps[1][1:4] == ["-m", "pip", "install"]
    assert shlex.split(demo_cmd.split("&&")[1])[-2:] == ["-e", ".[demo]"]
    assert shlex.split(demo_cmd.split("&&")[2])[-3:] == ["-m", "frostjit", "demo"]
    assert shlex.split(test_cmd.split("&&")[1])[-2:] == ["-e", ".[test]"]
    # the whole suite runs once per CPU backend, one process per core, a file in one process
    parallel = ["-m", "pytest", "-q", "-n", "auto", "--dist", "loadfile"]
    assert shlex.split(test_cmd.split("&&")[2])[1:] == parallel
    assert shlex.split(test_cmd.split("&&")[3])[1:] == parallel + ["--backend", "reference"]


@DOCS_ONLY
def test_ci_runs_exactly_the_readme_test_command():
    _, test_cmd = quick_start_commands()
    ci = read(".ci/run")
    assert [line for line in ci.splitlines() if line.strip() == test_cmd.strip()], ci
    assert '"$rc" -eq 5' in ci  # pytest's "no tests collected" stays a failure


@DOCS_ONLY
def test_demo_extra_installs_matplotlib():
    text = read("pyproject.toml")
    extras = dict(re.findall(r'^(\w+) = \[(.*)\]$', text[text.index("[project.optional-dependencies]"):],
                             flags=re.M))
    assert "matplotlib" in extras["demo"] and "matplotlib" in extras["test"]


# ----------------------------------------------------------------- documented commands
def documented_cli_commands():
    """(doc, words) of every `python -m frostjit ...` or `python benchmarks/bench_*.py ...` line."""
    out = []
    for doc in DOCS:
        for block in code_blocks(read(doc), "sh"):
            for line in block.splitlines():
                line = line.split("#")[0]
                m = re.search(r"python -m frostjit (.*)", line) or re.search(
                    r"python benchmarks/(bench_\w+)\.py(.*)", line)
                if not m:
                    continue
                words = (shlex.split(m.group(1)) if "-m frostjit" in line
                         else ["bench", m.group(1)[len("bench_"):]] + shlex.split(m.group(2)))
                out.append((doc, words))
    return out


def _help_text(path, capsys):
    rc = cli_main(path + ["--help"])
    text = capsys.readouterr().out
    assert rc == 0, (path, text)
    return text


@DOCS_ONLY
@pytest.mark.parametrize("doc, words", documented_cli_commands(),
                         ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_documented_command_options_exist(doc, words, capsys):
    """Every option a doc passes to a command is one that command lists in its --help."""
    alternatives = words[1].split("|") if len(words) > 1 and "|" in words[1] else None
    paths = []
    if words[0] in ("bench", "cache"):
        for name in alternatives or ([words[1]] if len(words) > 1 and not words[1].startswith("-")
                                     else []):
            paths.append([words[0], name])
        paths = paths or [[words[0]]]
    else:  # demo [heat|fit]
        sub = words[1] if len(words) > 1 and words[1] in ("heat", "fit") else None
        paths = [["demo", sub] if sub else ["demo"]]
    flags = {w.strip("[]").split("=")[0] for w in words if w.strip("[").startswith("--")}
    for path in paths:
        text = _help_text(path, capsys)
        missing = [f for f in flags if f not in text]
        assert not missing, f"{doc}: `{' '.join(words)}` uses {missing}, not in `{' '.join(path)} --help`"


@DOCS_ONLY
def test_docs_document_commands_at_all():
    cmds = documented_cli_commands()
    assert any(w[0] == "demo" for _, w in cmds) and any(w[0] == "bench" for _, w in cmds)


# ----------------------------------------------------------------- environment variables
@DOCS_ONLY
def test_every_frostjit_environment_variable_is_documented():
    """Regression: FROSTJIT_NUM_THREADS (and others) were read by the code but documented nowhere."""
    used = set()
    for top in ("frostjit", "benchmarks"):
        for root, _, files in os.walk(os.path.join(REPO, top)):
            for f in files:
                if f.endswith(".py"):
                    with open(os.path.join(root, f), encoding="utf-8") as fh:
                        used |= set(re.findall(r"\b(FROSTJIT_[A-Z0-9_]+)\b", fh.read()))
    table = read("docs/environment.md")
    rows = set(re.findall(r"^\| `(FROSTJIT_[A-Z0-9_]+)` \|", table, flags=re.M))
    assert {"FROSTJIT_NUM_THREADS", "FROSTJIT_CACHE_DIR"} <= used
    assert used - rows == set(), f"undocumented: {sorted(used - rows)}"
    assert rows - used == set(), f"documented but never read: {sorted(rows - used)}"


# ----------------------------------------------------------------- math accuracy
@DOCS_ONLY
def test_accuracy_doc_says_which_functions_are_exposed():
    """Regression: the doc said `expm1` was exposed and `log10` missing; it is the other way round."""
    text = read("docs/math_accuracy.md")
    rows = re.findall(r"^\| (\w+) \| float(?:32|64) \|", text, flags=re.M)
    names = set(rows)
    assert {"expm1", "log10", "sin", "pow"} <= names
    intro = text[:text.index("| function |")]
    not_exposed = {n for n in names if not hasattr(fj, n)}
    assert not_exposed == {"expm1", "pow"}, not_exposed
    for n in not_exposed:
        assert f"`{n}`" in intro
    assert hasattr(fj, "log10") and hasattr(fj, "power")
    gaps = text[text.index("## Known gaps"):]
    assert "`expm1` is not exposed" in gaps and "`log10` is exposed" in gaps
