"""The backup archive of a home: a gzipped tar of ``$HERMES_HOME`` with a manifest.

SQLite databases (state.db, and any other file with SQLite's header) are not read as files:
each is copied with SQLite's online backup API (``sqlite3.Connection.backup``) into a
temporary file first, which gives one consistent snapshot even while a gateway or a chat
writes to it; their ``-wal``/``-shm``/``-journal`` companions and lock files are left out.
File modes are kept. ``.env`` and ``auth.json`` (the keys) are left out unless asked for, and
``cache/`` is never archived (it is sealed with this machine's key and rebuilt on use).

``hermes-backup.json`` at the top of the archive lists every file with its size and SHA-256;
a restore checks each one and runs ``PRAGMA integrity_check`` on every restored database.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import stat
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_agent import HermesError, __version__

MANIFEST = "hermes-backup.json"
SECRET_FILES = (".env", "auth.json")  # the keys, archived only with --include-secrets
FORMAT = 1
SQLITE_MAGIC = b"SQLite format 3\x00"
NEVER = frozenset({"cache"})  # top-level folders never archived
#: files beside a database (its journal, lock, health mark): its snapshot replaces them
COMPANIONS = ("-wal", "-shm", "-journal", "-lock", "-checked")


class BackupError(HermesError):
    """A backup or restore cannot go on; the message says how to fix it."""


@dataclass
class Summary:
    files: int = 0
    databases: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    size: int = 0


def is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def _walk(home: Path) -> Iterator[Path]:
    """Every entry under ``home``, folders before their contents, sorted, links not followed."""
    for entry in sorted(home.iterdir(), key=lambda p: p.name):
        yield entry
        if entry.is_dir() and not entry.is_symlink():
            yield from _walk(entry)


def _database_names(home: Path) -> set[str]:
    return {str(p.relative_to(home)) for p in _walk(home)
            if p.is_file() and not p.is_symlink() and is_sqlite(p)}


def _skipped(rel: str, databases: set[str], include_secrets: bool) -> str | None:
    """Why ``rel`` (relative to the home) is left out, or None to archive it."""
    top = rel.split("/", 1)[0]
    if top in NEVER:
        return "cache"
    if rel in SECRET_FILES and not include_secrets:
        return "secret"
    if "/" not in rel and rel.startswith("hermes-backup-") and rel.endswith(".tar.gz"):
        return "an earlier backup"  # written into the home by `hermes backup` run there
    for suffix in COMPANIONS:
        if rel.endswith(suffix) and rel[: -len(suffix)] in databases:
            return "database companion"
    return None


def snapshot_database(source: Path, target: Path) -> None:
    """Copy the database at ``source`` into ``target`` with SQLite's online backup: one
    consistent state, whatever writers do meanwhile."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    try:
        dst = sqlite3.connect(target)
        try:
            # in one step (pages=-1): a copy made in steps starts again whenever another
            # process writes between them, which under a busy writer may never end; one
            # step reads one snapshot, and under WAL the writers go on meanwhile
            src.backup(dst, pages=-1)
            dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
        finally:
            dst.close()
    except sqlite3.Error as exc:
        raise BackupError(f"could not copy the database {source}: {exc}. Run `hermes doctor` "
                          "to check it, then try again") from exc
    finally:
        src.close()


class _Hashing:
    """A file read by tarfile, hashed as it is read: the digest is of the archived bytes."""

    def __init__(self, handle: Any):
        self.handle, self.sha = handle, hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data: bytes = self.handle.read(size)
        self.sha.update(data)
        return data


def digest(path: Path) -> str:
    """The SHA-256 of a file, read in pieces."""
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            sha.update(chunk)
    return sha.hexdigest()


def write_backup(home: Path, out: Path, *, include_secrets: bool,
                 external: list[Path] = ()) -> Summary:  # type: ignore[assignment]
    """Archive ``home`` into ``out`` (created 0600, written atomically), and the files or
    folders of ``external`` (state a memory provider keeps outside the home) under
    ``external/N``."""
    if not home.is_dir():
        raise BackupError(f"{home} is not a hermes home (no such folder); set HERMES_HOME to "
                          "the home to back up")
    out = out.resolve()
    summary = Summary()
    databases = _database_names(home)
    files: dict[str, dict[str, Any]] = {}
    outside: list[dict[str, Any]] = []
    fd, partial = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.fchmod(fd, 0o600)
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar, \
                tempfile.TemporaryDirectory(prefix="hermes-backup-") as scratch:
            for path in _walk(home):
                rel = str(path.relative_to(home))
                if path.resolve() == out or path.name.startswith(f".{out.name}."):
                    continue  # the archive itself, written inside the home
                reason = _skipped(rel, databases, include_secrets)
                if reason:
                    if reason == "secret":
                        summary.left_out.append(rel)
                    continue
                _count(summary, _add(tar, "home", path, rel, databases, Path(scratch), files))
            for index, root in enumerate(external):
                entry: dict[str, Any] = {"path": str(root), "folder": root.is_dir(),
                                         "files": {}, "databases": []}
                prefix = f"external/{index}"
                paths = list(_walk(root)) if root.is_dir() else [root]
                base = root if root.is_dir() else root.parent
                dbs = {str(p.relative_to(base)) for p in paths
                       if p.is_file() and not p.is_symlink() and is_sqlite(p)}
                entry["databases"] = sorted(dbs)
                for path in paths:
                    _count(summary, _add(tar, prefix, path, str(path.relative_to(base)), dbs,
                                         Path(scratch), entry["files"]))
                outside.append(entry)
            summary.databases = sorted(databases)
            manifest = {"format": FORMAT, "hermes": __version__, "created_at": time.time(),
                        "home": str(home), "include_secrets": include_secrets,
                        "databases": summary.databases, "files": files, "external": outside}
            data = json.dumps(manifest, indent=1).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.size, info.mode, info.mtime = len(data), 0o600, int(time.time())
            tar.addfile(info, io.BytesIO(data))
        os.replace(partial, out)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
    return summary


def _count(summary: Summary, info: tarfile.TarInfo | None) -> None:
    if info is not None and info.isfile():
        summary.files += 1
        summary.size += info.size


def _add(tar: tarfile.TarFile, prefix: str, path: Path, rel: str, databases: set[str],
         scratch: Path, files: dict[str, dict[str, Any]]) -> tarfile.TarInfo | None:
    arcname = f"{prefix}/{rel}"
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:  # removed while we walked
        return None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
        return None  # sockets, fifos: state of a running process, not of the home
    if rel in databases:
        copy = scratch / f"{prefix.replace('/', '-')}-{len(files)}.db"
        snapshot_database(path, copy)
        os.chmod(copy, stat.S_IMODE(mode))
        source = copy
    else:
        source = path
    info = tar.gettarinfo(str(source), arcname)
    info.mode = stat.S_IMODE(mode)
    info.uname = info.gname = ""
    if info.isfile():
        try:
            with open(source, "rb") as handle:
                reader = _Hashing(handle)
                tar.addfile(info, reader)  # type: ignore[arg-type]  # reads info.size bytes
        except FileNotFoundError:
            return None
        files[rel] = {"size": info.size, "sha256": reader.sha.hexdigest(),
                      "mode": f"{info.mode:04o}"}
    else:
        tar.addfile(info)
    return info
