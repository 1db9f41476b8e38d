"""The on-disk kernel cache: compiled object code keyed by kernel hash.

Entries live under ``$FROSTJIT_CACHE_DIR`` (else ``$XDG_CACHE_HOME/frostjit``,
else ``~/.cache/frostjit``), in a sub-folder named after everything that makes
object code incompatible: the llvmlite and LLVM versions, the CPU name and its
features, and this cache's format version.  Each file carries a magic tag, its
payload length and a SHA-256 of the payload, so a truncated or corrupted entry
is detected, logged, removed and rebuilt instead of crashing.  Writes go to a
temporary file that is renamed into place, so concurrent processes never see a
half-written entry.
"""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import struct
import tempfile

log = logging.getLogger("frostjit")

FORMAT_VERSION = 2       # 2: kernels take a fourth argument, `shared`
MAGIC = b"FJKOBJ01"
HEADER = struct.Struct("<8sQ32s")


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
        """Atomically write an entry; failures (read-only disk, ...) are logged, not raised."""
        try:
            os.makedirs(self.folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".o")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(HEADER.pack(MAGIC, len(payload), hashlib.sha256(payload).digest()))
                    f.write(payload)
                os.replace(tmp, self._path(kernel_hash))
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError as e:
            log.warning("frostjit: could not write kernel cache entry: %s", e)


def cache_info() -> dict:
    """Summary of the disk cache: folder, number of entries and bytes, per configuration."""
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
