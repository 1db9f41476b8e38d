"""The on-disk kernel cache: compiled object code keyed by kernel hash.

Entries live under ``$FROSTJIT_CACHE_DIR`` (else ``$XDG_CACHE_HOME/frostjit``,
else ``~/.cache/frostjit``), in a sub-folder named after everything that makes
object code incompatible: the llvmlite and LLVM versions, the CPU name and its
features, and this cache's format version.  Each file carries a magic tag, its
payload length and a SHA-256 of the payload, so a truncated or corrupted entry
is detected, logged, removed and rebuilt instead of crashing.  Writes go to a
temporary file that is renamed into place, so concurrent processes never see a
half-written entry.

Entries are written by a background thread (:class:`_Writer`): a compile hands its object
code over and goes on, instead of waiting ~0.1-0.4 ms for the file system (an ext4 rename over
an existing file flushes).  Until written, an entry is found in memory by :meth:`DiskCache.load`,
so the process never compiles a kernel twice; other processes see it once renamed into place.
The process waits for the queue at exit (at most :data:`EXIT_WAIT` seconds); a process killed
mid-write leaves at most a ``.tmp-*`` file, never a visible partial entry.
"""
from __future__ import annotations

import atexit
import hashlib
import logging
import os
import shutil
import struct
import tempfile
import threading

log = logging.getLogger("frostjit")

FORMAT_VERSION = 2       # 2: kernels take a fourth argument, `shared`
MAGIC = b"FJKOBJ01"
HEADER = struct.Struct("<8sQ32s")
EXIT_WAIT = 10.0         # seconds the process waits at exit for entries not yet written


def cache_root() -> str:
    """The top-level cache folder (not created)."""
    d = os.environ.get("FROSTJIT_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "frostjit")


class DiskCache:
    """Object code on disk for one toolchain + CPU configuration (``env_key``)."""

    def __init__(self, env_key: str):
        self.env_key = env_key
        self.folder = os.path.join(cache_root(), env_key)

    def _path(self, kernel_hash: str) -> str:
        return os.path.join(self.folder, kernel_hash + ".o")

    def load(self, kernel_hash: str) -> bytes | None:
        """Return the stored object code, or ``None`` if absent or damaged."""
        path = self._path(kernel_hash)
        queued = _writer.get(path)
        if queued is not None:
            return queued
        try:
            with open(path, "rb") as f:
                blob = f.read()
        except OSError:
            return None
        if len(blob) >= HEADER.size:
            magic, length, digest = HEADER.unpack_from(blob)
            payload = blob[HEADER.size:]
            if magic == MAGIC and length == len(payload) and hashlib.sha256(payload).digest() == digest:
                return payload
        log.warning("frostjit: ignoring damaged kernel cache entry %s (it will be rebuilt)", path)
        try:
            os.unlink(path)
        except OSError:
            pass
        return None

    def store(self, kernel_hash: str, payload: bytes) -> None:
        """Write an entry atomically, on the background writer (see the module docstring);
        :meth:`load` finds it at once.  Failures (read-only disk, ...) are logged, not raised."""
        _writer.put(self._path(kernel_hash), payload)


def _write(path: str, payload: bytes) -> None:
    """Write ``payload`` to ``path`` through a temporary file renamed into place (log failures)."""
    try:
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".o")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(HEADER.pack(MAGIC, len(payload), hashlib.sha256(payload).digest()))
                f.write(payload)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as e:
        log.warning("frostjit: could not write kernel cache entry: %s", e)


class _Writer:
    """The process's one background writer of cache entries.

    ``pending`` maps an entry's path to its payload from :meth:`put` until the file is renamed
    into place; the thread (a daemon, started on first use and again in a forked child) writes
    the entries in order of arrival.  :meth:`flush` waits for the queue (at exit: registered
    with :mod:`atexit`), :func:`cache_info` and :func:`clear_disk_cache` call it first.
    """

    def __init__(self):
        self._reset()
        # A forked child has no writer thread and maybe a lock held by it: it starts afresh (the
        # parent writes what it had queued).
        os.register_at_fork(after_in_child=self._reset)
        atexit.register(self.flush, EXIT_WAIT)

    def _reset(self) -> None:
        self.cond = threading.Condition(threading.Lock())
        self.pending: dict = {}
        self.thread = None

    def put(self, path: str, payload: bytes) -> None:
        with self.cond:
            self.pending[path] = payload
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="frostjit-disk-cache", daemon=True)
                self.thread.start()
            self.cond.notify_all()

    def get(self, path: str) -> bytes | None:
        """The payload of ``path`` not yet written, or ``None``."""
        return self.pending.get(path)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every entry is written (at most ``timeout`` seconds); whether it was."""
        with self.cond:
            return self.cond.wait_for(lambda: not self.pending, timeout)

    def _run(self) -> None:
        while True:
            with self.cond:
                self.cond.wait_for(lambda: self.pending)
                path, payload = next(iter(self.pending.items()))
            try:
                _write(path, payload)
            except Exception:       # never let the thread die with entries queued
                log.exception("frostjit: could not write kernel cache entry %s", path)
            with self.cond:
                if self.pending.get(path) is payload:
                    del self.pending[path]
                self.cond.notify_all()


_writer = _Writer()


def cache_info() -> dict:
    """Summary of the disk cache: folder, number of entries and bytes, per configuration."""
    _writer.flush(EXIT_WAIT)
    root = cache_root()
    configs = {}
    if os.path.isdir(root):
        for name in sorted(os.listdir(root)):
            sub = os.path.join(root, name)
            if not os.path.isdir(sub):
                continue
            files = [f for f in os.listdir(sub) if f.endswith(".o") and not f.startswith(".tmp-")]
            configs[name] = {
                "entries": len(files),
                "bytes": sum(os.path.getsize(os.path.join(sub, f)) for f in files),
            }
    return {"folder": root, "configurations": configs,
            "entries": sum(c["entries"] for c in configs.values()),
            "bytes": sum(c["bytes"] for c in configs.values())}


def clear_disk_cache() -> int:
    """Remove every cached kernel; return the number of entries removed."""
    info = cache_info()
    root = info["folder"]
    for name in info["configurations"]:
        shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    return info["entries"]
