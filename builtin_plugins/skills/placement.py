"""Placing skill folders under ``$HERMES_HOME/skills`` and remembering where they came from.

``skills/.installed.json`` records each installed skill's source and the hash of the tree as
installed; a copy whose hash changed since was edited by the user and is never overwritten
by a reinstall. A folder is staged beside its destination and renamed into place, so a
reader sees the old skill or the new one, never half of it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from hermes_agent import private_dir, write_atomic

from .catalog import SKILL_FILE, skills_root

MANIFEST = ".installed.json"
#: never copied from a source tree
IGNORED = {".git", "__pycache__", ".DS_Store", ".hg", ".svn"}


@dataclass
class Installed:
    source: str  # "plugin:<plugin>:<name>", "dir:<path>", "git:<url>", "archive:<path>"
    folder: str  # relative to skills/, e.g. "devops/git-commit-hygiene"
    hash: str  # of the tree as installed
    version: str = ""
    removed: bool = False  # a shipped skill the user removed: not installed again

    @property
    def shipped(self) -> bool:
        return self.source.startswith("plugin:")


class Manifest:
    def __init__(self, home: Path):
        self.path = skills_root(home) / MANIFEST
        self.entries: dict[str, Installed] = {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            for name, entry in (data.get("skills") or {}).items():
                self.entries[name] = Installed(**entry)
        except (OSError, ValueError, TypeError, AttributeError):
            pass  # missing or damaged: every skill counts as the user's own

    def save(self) -> None:
        private_dir(self.path.parent)
        data = {"skills": {n: asdict(e) for n, e in sorted(self.entries.items())}}
        write_atomic(self.path, json.dumps(data, indent=1) + "\n")


def tree_files(root: Path) -> list[Path]:
    """The regular files of a skill tree to copy or hash (relative, sorted)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED)
        for name in filenames:
            if name not in IGNORED and not name.endswith(".pyc"):
                out.append((Path(dirpath) / name).relative_to(root))
    return sorted(out)


def symlinks_in(root: Path) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in IGNORED]
        for name in [*dirnames, *filenames]:
            if os.path.islink(os.path.join(dirpath, name)):
                found.append((Path(dirpath) / name).relative_to(root).as_posix())
    return sorted(found)


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for rel in tree_files(root):
        digest.update(rel.as_posix().encode() + b"\0")
        digest.update(hashlib.sha256((root / rel).read_bytes()).digest())
    return digest.hexdigest()


def copy_tree(source: Path, dest: Path) -> None:
    """Copy ``source``'s files (see :func:`tree_files`) into the new folder ``dest``."""
    dest.mkdir(parents=True)
    for rel in tree_files(source):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, target)


def place(source: Path, dest: Path) -> None:
    """Put a copy of the folder ``source`` at ``dest``, replacing what is there."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    old = None
    try:
        copy_tree(source, staging / "new")
        if dest.exists():
            old = staging / "old"
            os.replace(dest, old)
        os.replace(staging / "new", dest)
    except BaseException:
        if old is not None and old.exists() and not dest.exists():
            os.replace(old, dest)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def remove_tree(folder: Path, root: Path) -> None:
    """Delete a skill folder under ``root`` (renamed away first, so it disappears at once)
    and its category folder if that is now empty."""
    trash = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    os.replace(folder, trash / "old")
    shutil.rmtree(trash, ignore_errors=True)
    parent = folder.parent
    if parent.resolve() != root.resolve() and not any(parent.iterdir()):
        parent.rmdir()


def skill_source_folder(skill_md: Path) -> Path | None:
    """The folder to install for a SKILL.md a plugin registered: its own folder, or None
    (install SKILL.md alone) when that folder is the plugin's package itself."""
    folder = skill_md.parent
    if skill_md.name != SKILL_FILE:
        return None
    if (folder / "plugin.yaml").exists() or (folder / "__init__.py").exists():
        return None
    return folder
