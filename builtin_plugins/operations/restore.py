"""Restoring a backup archive (:mod:`.archive`) into a home.

The archive is checked before anything is written: its manifest, every path (nothing may
land outside the home: tarfile's ``data`` filter), every file's size and SHA-256. Files are
extracted into a folder beside the home and moved in one by one, so a damaged archive leaves
the home as it was. A non-empty home is refused unless ``force``; then the archive's files
replace the home's of the same name (a restored database's stale ``-wal``/``-shm`` go too),
and the home's other files stay.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_agent import private_dir

from .archive import COMPANIONS, FORMAT, MANIFEST, NEVER, BackupError, digest

#: what a hermes run writes into a home before any command runs: not "content"
MADE_BY_EVERY_RUN = NEVER


@dataclass
class Restored:
    files: int = 0
    databases: list[str] = field(default_factory=list)
    include_secrets: bool = False
    created_at: float = 0.0
    hermes: str = ""
    external: list[str] = field(default_factory=list)  # what became of each outside path


def home_contents(home: Path) -> list[str]:
    """The home's entries that a restore would overwrite or mix with."""
    if not home.exists():
        return []
    if not home.is_dir():
        raise BackupError(f"{home} exists and is not a folder; set HERMES_HOME to a new folder")
    return sorted(p.name for p in home.iterdir() if p.name not in MADE_BY_EVERY_RUN)


def read_manifest(tar: tarfile.TarFile, archive: Path) -> dict[str, Any]:
    try:
        member = tar.getmember(MANIFEST)
        handle = tar.extractfile(member)
        manifest = json.loads(handle.read()) if handle else None
    except (KeyError, ValueError) as exc:
        raise BackupError(f"{archive} is not a hermes backup (no readable {MANIFEST}); make "
                          "one with `hermes backup`") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{archive} is a backup of an unknown format "
                          f"({manifest.get('format') if isinstance(manifest, dict) else '?'}); "
                          "restore it with the hermes version that wrote it")
    return manifest


def restore(archive: Path, home: Path, *, force: bool) -> Restored:
    existing = home_contents(home)
    if existing and not force:
        shown = ", ".join(existing[:6]) + (", ..." if len(existing) > 6 else "")
        raise BackupError(f"{home} is not empty ({shown}); restore into a new home "
                          f"(HERMES_HOME=/path/to/new hermes restore {archive}), or pass "
                          "--force to replace the files the archive holds")
    try:
        tar = tarfile.open(archive, "r:gz")
    except (OSError, tarfile.TarError) as exc:
        raise BackupError(f"cannot read {archive}: {exc}; is it a `hermes backup` archive?"
                          ) from exc
    with tar:
        manifest = read_manifest(tar, archive)
        private_dir(home.parent if home.parent != home else home)
        private_dir(home)
        with tempfile.TemporaryDirectory(prefix=".hermes-restore-", dir=home.parent) as tmp:
            staging = Path(tmp)
            members = [m for m in tar.getmembers()
                       if m.name.startswith(("home/", "external/"))]
            try:
                tar.extractall(staging, members=members, filter="data")
            except (tarfile.TarError, OSError) as exc:
                raise BackupError(f"{archive} is damaged or unsafe ({exc}); nothing was "
                                  "restored. Use another backup") from exc
            extracted = staging / "home"
            _verify(extracted, manifest["files"], manifest.get("databases", []), archive)
            outside = _external(manifest)
            for index, entry in enumerate(outside):
                _verify(staging / "external" / str(index), entry["files"], entry["databases"],
                        archive)
            # the data filter ignores folders' modes: set them from the archive
            folder_modes = {Path(m.name).relative_to("home"): m.mode & 0o777
                            for m in members if m.isdir()}
            _move_in(extracted, home, manifest.get("databases", []), folder_modes)
            outcome = [_put_back(staging / "external" / str(i), entry, force)
                       for i, entry in enumerate(outside)]
    return Restored(files=len(manifest["files"]), databases=list(manifest.get("databases", [])),
                    include_secrets=bool(manifest.get("include_secrets")),
                    created_at=float(manifest.get("created_at", 0)),
                    hermes=str(manifest.get("hermes", "")), external=outcome)


def _verify(extracted: Path, files: dict[str, Any], databases: list[str], archive: Path) -> None:
    for rel, entry in files.items():
        path = extracted / rel
        if not path.is_file():
            raise BackupError(f"{archive} lacks {rel}, which its manifest lists: the archive "
                              "is damaged; nothing was restored. Use another backup")
        if digest(path) != entry.get("sha256"):
            raise BackupError(f"{rel} in {archive} does not match its checksum: the archive "
                              "is damaged; nothing was restored. Use another backup")
    for rel in databases:
        try:
            conn = sqlite3.connect(f"file:{extracted / rel}?mode=ro", uri=True)
            try:
                ok = conn.execute("PRAGMA integrity_check").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error as exc:
            ok = str(exc)
        if ok != "ok":
            raise BackupError(f"the database {rel} in {archive} is not sound ({ok}); nothing "
                              "was restored. Use another backup")


def _external(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    entries = manifest.get("external") or []
    for entry in entries:
        if not (isinstance(entry, dict) and Path(str(entry.get("path", ""))).is_absolute()
                and isinstance(entry.get("files"), dict)):
            raise BackupError("the archive's list of paths outside the home is damaged; "
                              "nothing was restored. Use another backup")
        entry.setdefault("databases", [])
    return list(entries)


def _put_back(staged: Path, entry: dict[str, Any], force: bool) -> str:
    """Restore one path a memory provider kept outside the home to where it was: only when
    nothing is there now, or with ``force``."""
    target = Path(entry["path"])
    if target.exists() and not force:
        return f"{target} exists and was left as it is (--force replaces it)"
    if entry.get("folder"):
        private_dir(target.parent)
        target.mkdir(mode=0o700, exist_ok=True)
        _move_in(staged, target, list(entry["databases"]), {})
    else:
        private_dir(target.parent)
        for suffix in COMPANIONS:
            Path(f"{target}{suffix}").unlink(missing_ok=True)
        os.replace(staged / target.name, target)
    return f"{target} restored"


def _move_in(extracted: Path, home: Path, databases: list[str],
             folder_modes: dict[Path, int]) -> None:
    """Move every extracted entry to its place in ``home`` (folders merged, files replaced)."""
    for rel in databases:
        for suffix in COMPANIONS:
            (home / f"{rel}{suffix}").unlink(missing_ok=True)  # stale journal of the old one
    for source in sorted(extracted.rglob("*"), key=lambda p: len(p.parts)):
        rel = source.relative_to(extracted)
        target = home / rel
        if source.is_dir() and not source.is_symlink():
            if not target.is_dir() or target.is_symlink():
                if target.exists() or target.is_symlink():
                    _remove(target)
                target.mkdir(mode=0o700)
            os.chmod(target, folder_modes.get(rel, 0o700))
            continue
        if target.is_dir() and not target.is_symlink():
            _remove(target)
        os.replace(source, target)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
