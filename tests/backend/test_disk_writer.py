"""The disk cache's background writer: an entry queued for writing is found at once, written
atomically, waited for by `flush` and at exit, and a failed write is logged, not raised."""
import logging
import os
import subprocess
import sys
import textwrap
import threading

import pytest

from frostjit.backend.llvm import diskcache
from frostjit.backend.llvm.diskcache import DiskCache

pytestmark = pytest.mark.llvm_only("the LLVM backend's disk cache of object code")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def held_writes(monkeypatch):
    """Make the writer thread wait (at most 30 s) until the returned event is set."""
    go = threading.Event()
    real = diskcache._write

    def slow_write(path, payload):
        go.wait(30)
        real(path, payload)
    monkeypatch.setattr(diskcache, "_write", slow_write)
    yield go
    go.set()
    diskcache._writer.flush(30)


def test_queued_entry_is_found_before_it_is_written(tmp_path, monkeypatch, held_writes):
    monkeypatch.setenv("FROSTJIT_CACHE_DIR", str(tmp_path))
    disk = DiskCache("cfg")
    payload = os.urandom(333)
    disk.store("abc", payload)
    assert disk.load("abc") == payload                 # from the queue: not on disk yet
    assert not os.path.exists(os.path.join(tmp_path, "cfg", "abc.o"))
    assert diskcache._writer.flush(0.01) is False
    held_writes.set()
    assert diskcache._writer.flush(30) is True
    assert os.path.exists(os.path.join(tmp_path, "cfg", "abc.o"))
    assert disk.load("abc") == payload                 # now from the file, checksum verified
    assert not [f for f in os.listdir(tmp_path / "cfg") if f.startswith(".tmp-")]


def test_a_newer_payload_for_the_same_entry_wins(tmp_path, monkeypatch, held_writes):
    monkeypatch.setenv("FROSTJIT_CACHE_DIR", str(tmp_path))
    disk = DiskCache("cfg")
    disk.store("k", b"first")
    disk.store("k", b"second")
    assert disk.load("k") == b"second"
    held_writes.set()
    assert diskcache._writer.flush(30)
    assert disk.load("k") == b"second"


def test_failed_write_is_logged_and_leaves_the_queue_empty(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("FROSTJIT_CACHE_DIR", str(blocker))
    disk = DiskCache("cfg")
    with caplog.at_level(logging.WARNING, logger="frostjit"):
        disk.store("x", b"payload")
        assert diskcache._writer.flush(30)
    assert "could not write kernel cache entry" in caplog.text
    assert disk.load("x") is None


def test_entries_stored_just_before_exit_are_written(tmp_path, monkeypatch):
    """A process that stores entries and exits at once: the exit waits for the writer."""
    program = textwrap.dedent("""
        from frostjit.backend.llvm.diskcache import DiskCache
        disk = DiskCache("cfg")
        for k in range(40):
            disk.store(f"e{k}", bytes([k]) * 100_000)
    """)
    env = dict(os.environ, FROSTJIT_CACHE_DIR=str(tmp_path), PYTHONPATH=REPO)
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    monkeypatch.setenv("FROSTJIT_CACHE_DIR", str(tmp_path))
    disk = DiskCache("cfg")
    assert sorted(os.listdir(tmp_path / "cfg")) == sorted(f"e{k}.o" for k in range(40))
    assert all(disk.load(f"e{k}") == bytes([k]) * 100_000 for k in range(40))
