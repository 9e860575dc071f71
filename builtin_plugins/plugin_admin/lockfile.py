"""plugins.lock: what is installed, from where, and what it was allowed to do.

One JSON file in $HERMES_HOME, written atomically. Per plugin: its source (``path``, ``git``
or ``pip``), the spec it was installed from, version or commit, install time, a digest of its
files and its declared capabilities (with their digest), and ``history``: the entries of the
last versions updates replaced (newest first), which ``hermes plugins rollback`` walks back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from hermes_agent import Manifest, write_atomic

from .guards import (
    PLUGIN_NAME,
    PLUGIN_NAME_RULE,
    dist_problem,
    locked_folder_problem,
    refuse,
)

LOCK_FILE = "plugins.lock"
LOCK_VERSION = 1
BACKUPS = "plugin-backups"  # $HERMES_HOME/plugin-backups/<name>/<slot>: replaced versions
SKIP_PARTS = frozenset({".git", "__pycache__", ".hg", ".svn", ".pytest_cache"})
SOURCES = ("path", "git", "pip")
# fields read as text; a number or list there would fail deep inside a command
TEXT_FIELDS = ("spec", "url", "subdirectory", "ref", "commit", "version", "dist", "dist_version",
               "path", "backup", "entry_point", "files_digest")
UNREADABLE_FIX = ("restore it from a backup or delete it (installed plugins keep working, but "
                  "update and rollback need their entries)")


def lock_path(home: Path) -> Path:
    return home / LOCK_FILE


class LockUnreadable(click.ClickException):
    def __init__(self, path: Path, detail: str):
        self.path, self.detail = path, detail
        super().__init__(f"{path} is unreadable ({detail}); {UNREADABLE_FIX}")


@dataclass(frozen=True)
class LockEntry:
    """One plugin's entry of plugins.lock as read: the value stored, and ``problem``: why acting
    on it could move or delete what hermes did not install, or pass pip an option ("" when
    the entry is sound). A bad entry stays in the lock (listed, written back unchanged); no
    command acts on it."""

    name: str
    stored: Any
    lock: Path  # the plugins.lock it was read from
    problem: str = ""

    @property
    def fix(self) -> str:
        return f"edit that entry, or delete it from {self.lock}"

    @property
    def note(self) -> str:
        """What `plugins list` and `doctor` say about a bad entry."""
        return (f"the {self.name!r} entry of plugins.lock {self.problem}; remove, update and "
                "rollback refuse it")

    def fields(self, doing: str) -> dict[str, Any]:
        """The entry, to ``doing`` ("remove", "update", ...) its plugin; a bad one is refused
        with the fix."""
        if self.problem:
            raise refuse(f"the {self.name!r} entry of {self.lock} {self.problem}; hermes does "
                         f"not {doing} a plugin through it, and nothing was changed. "
                         f"{self.fix[0].upper()}{self.fix[1:]}, then run the command again")
        return dict(self.stored)

    def peek(self, key: str) -> Any:
        """A stored field, to match or show (never to act on)."""
        return self.stored.get(key) if isinstance(self.stored, dict) else None


def entry_problem(home: Path, name: str, stored: Any) -> str:
    """Why the plugins.lock entry ``name`` must not be acted on ("" when it is sound): every
    folder it names is where hermes puts plugins (or their backups), every distribution name
    is one pip reads as a name, and its own name (it names folders in $HERMES_HOME) is a name."""
    if not PLUGIN_NAME.fullmatch(name):
        return f"is named {name!r}, which is not a plugin name ({PLUGIN_NAME_RULE})"
    if not isinstance(stored, dict):
        return f"is {json.dumps(stored)[:60]}, not an object of fields"
    history = stored.get("history", [])
    if not isinstance(history, list) or not all(isinstance(v, dict) for v in history):
        return "records a history that is not a list of entries"
    for index, version in enumerate([stored, *history]):
        problem = _version_problem(home, name, version)
        if problem:
            return f"keeps an older version that {problem}" if index else problem
    return ""


def _version_problem(home: Path, name: str, version: dict[str, Any]) -> str:
    source = version.get("source")
    if source not in SOURCES:
        return f"records the source {source!r}, which is not one of {', '.join(SOURCES)}"
    required = ("spec", *(("url",) if source == "git" else ()),
                *(("dist", "dist_version") if source == "pip" else ()))
    for key in TEXT_FIELDS:
        if (key in version or key in required) and not isinstance(version.get(key), str):
            return f"records {key} as {version.get(key)!r}, not as text"
    caps = version.get("capabilities", {})
    if not isinstance(caps, dict) or not all(
            isinstance(v, str) or (isinstance(v, list) and all(isinstance(i, str) for i in v))
            for v in caps.values()):
        return "records capabilities that are not names"
    for key, parent in (("path", home / "plugins"), ("backup", home / BACKUPS / name)):
        if key in version and (problem := locked_folder_problem(version[key], parent)):
            return problem
    if ("dist" in version or "dist_version" in version) and (
            problem := dist_problem(version.get("dist"), version.get("dist_version", ""))):
        return f"records a distribution that is not safe to pass to pip: {problem}"
    return ""


def read_lock(home: Path) -> dict[str, LockEntry]:
    """The locked plugins by name, each checked once, here (see :class:`LockEntry`). A lock
    that is not JSON raises :class:`LockUnreadable`, which says how to repair it."""
    path = lock_path(home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise LockUnreadable(path, str(exc)) from exc
    plugins = data.get("plugins") if isinstance(data, dict) else None
    if not isinstance(plugins, dict):
        return {}
    return {name: LockEntry(name, stored, path, entry_problem(home, name, stored))
            for name, stored in plugins.items()}


def lock_notes(home: Path) -> dict[str, str]:
    """What is wrong with plugins.lock, for `plugins list`: a line with its fix per bad entry,
    by name (under "" when the file cannot be read at all). Never raises."""
    try:
        entries = read_lock(home).values()
    except LockUnreadable as exc:
        return {"": exc.format_message()}
    return {e.name: f"{e.note}. Fix: {e.fix}" for e in entries if e.problem}


def write_lock(home: Path, lock: Mapping[str, LockEntry],
               entries: Mapping[str, dict[str, Any]] | None = None) -> None:
    """Write ``lock`` (as read with :func:`read_lock`: every entry, bad ones too, keeps what it
    stored), with ``entries`` (new fields by plugin name) put in."""
    stored = {name: entry.stored for name, entry in lock.items()}
    stored.update(entries or {})
    body = {"lock_version": LOCK_VERSION, "plugins": dict(sorted(stored.items()))}
    write_atomic(lock_path(home), json.dumps(body, indent=2) + "\n")


def capabilities(manifest: Manifest) -> dict[str, Any]:
    """What a plugin declares it will do: the set a user consents to."""
    return {"kind": manifest.kind, "tools": sorted(manifest.provides_tools),
            "hooks": sorted(manifest.provides_hooks),
            "env": sorted(e.name for e in manifest.requires_env),
            "optional_env": sorted(e.name for e in manifest.optional_env),
            "python_dependencies": sorted(manifest.python_dependencies)}


# hashlib and shutil are imported where used: `plugins list` reads the lock, and each costs
# a quick command a few milliseconds (hashlib loads OpenSSL).
def digest_json(data: Any) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def digest_files(files: Iterable[tuple[str, bytes]]) -> str:
    """One digest over (relative path, content) pairs, independent of their order."""
    import hashlib

    lines = sorted(f"{name}\0{hashlib.sha256(data).hexdigest()}" for name, data in files)
    return "sha256:" + hashlib.sha256("\n".join(lines).encode()).hexdigest()


def tree_files(root: Path) -> Iterable[tuple[str, bytes]]:
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not SKIP_PARTS & set(rel.parts) and path.suffix != ".pyc":
            yield rel.as_posix(), path.read_bytes()


def make_entry(*, source: str, spec: str, manifest: Manifest, files_digest: str,
               **extra: Any) -> dict[str, Any]:
    caps = capabilities(manifest)
    entry = {"source": source, "spec": spec, "version": manifest.version,
             "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "files_digest": files_digest, "capabilities": caps,
             "capabilities_digest": digest_json(caps)}
    entry.update({k: v for k, v in extra.items() if v not in (None, "")})
    return entry


def diff_capabilities(old: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], bool]:
    """Readable lines describing what changed, and whether the plugin may now do more."""
    lines: list[str] = []
    grows = False
    if old.get("kind") != new.get("kind"):
        lines.append(f"kind: {old.get('kind')} -> {new.get('kind')}")
        grows = True
    labels = {"tools": "tools", "hooks": "hooks", "env": "required env vars",
              "optional_env": "optional env vars", "python_dependencies": "python dependencies"}
    for key, label in labels.items():
        before, after = set(old.get(key, [])), set(new.get(key, []))
        if after - before:
            lines.append(f"+ new {label}: {', '.join(sorted(after - before))}")
            grows = grows or key in ("tools", "hooks", "env", "python_dependencies")
        if before - after:
            lines.append(f"- removed {label}: {', '.join(sorted(before - after))}")
    return lines, grows


class Transaction:
    """Undo for a multi-step change: snapshots config.yaml, .env and plugins.lock, and
    remembers placed paths and cleanup actions. On failure everything is put back."""

    def __init__(self, home: Path):
        self.home = home
        self.snapshots = {p: (p.read_bytes() if p.exists() else None)
                          for p in (home / "config.yaml", home / ".env", lock_path(home))}
        self.undo: list[Callable[[], None]] = []
        self.done: list[Callable[[], None]] = []

    def placed(self, path: Path) -> None:
        import shutil

        self.undo.append(lambda: shutil.rmtree(path, ignore_errors=True))

    def on_failure(self, action: Callable[[], None]) -> None:
        self.undo.append(action)

    def on_success(self, action: Callable[[], None]) -> None:
        self.done.append(action)

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            for action in self.done:
                action()
            return
        for action in reversed(self.undo):
            try:
                action()
            except Exception as undo_error:  # keep undoing the rest
                click.echo(f"warning: could not undo a step: {undo_error}", err=True)
        for path, data in self.snapshots.items():
            if data is None:
                path.unlink(missing_ok=True)
            else:
                mode = 0o600 if path.name == ".env" else None
                write_atomic(path, data.decode("utf-8"), mode=mode)
