"""A small on-disk cache of pydantic validation results.

Validating with pydantic means importing it, which costs more than the whole budget of a
quick command such as ``hermes plugins list``. Inputs (manifest bytes, the merged config)
are hashed; a hit returns the normalised result validated earlier, so pydantic is only
imported when something actually changed. Corrupt or unwritable caches are ignored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ._version import __version__
from .private import private_dir

try:  # the builtin module: importing hashlib first loads OpenSSL, a few ms of a quick command
    from _sha2 import sha256  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:
        from hashlib import sha256

# Bump when a validation model changes shape, so old entries are not reused.
SCHEMA_REVISION = "5"
_MAX_ENTRIES = 2000


class ValidationCache:
    def __init__(self, path: Path | None):
        self.path = path
        self._entries: dict[str, Any] | None = None
        self._dirty = False

    @staticmethod
    def key(kind: str, payload: bytes) -> str:
        digest = sha256(payload)
        digest.update(f"\0{kind}\0{__version__}\0{SCHEMA_REVISION}".encode())
        return digest.hexdigest()

    def _load(self) -> dict[str, Any]:
        if self._entries is None:
            self._entries = {}
            if self.path is not None:
                try:
                    loaded = json.loads(self.path.read_text(encoding="utf-8"))
                    if isinstance(loaded, dict):
                        self._entries = loaded
                except (OSError, ValueError):
                    pass
        return self._entries

    def get(self, key: str) -> Any | None:
        return self._load().get(key)

    def put(self, key: str, value: Any) -> None:
        entries = self._load()
        if entries.get(key) != value:
            entries[key] = value
            self._dirty = True

    def save(self) -> None:
        if not self._dirty or self.path is None or self._entries is None:
            return
        entries = dict(self._entries)  # a copy: another thread may add entries meanwhile
        if len(entries) > _MAX_ENTRIES:  # drop the oldest insertions
            entries = dict(list(entries.items())[-_MAX_ENTRIES:])
        try:
            private_dir(self.path.parent)
            write_atomic(self.path, json.dumps(entries, separators=(",", ":")))
            self._dirty = False
        except OSError:
            pass


def write_atomic(path: Path, text: str, mode: int | None = None, *, durable: bool = False) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename, so readers never see half a file.
    Line endings are written as given. ``durable``: fsync the file before the rename and the
    folder after it, so the new content survives a crash (for data, not caches)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp"  # mkstemp, minus its import
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)  # the rename itself survives a crash
        finally:
            os.close(folder)
