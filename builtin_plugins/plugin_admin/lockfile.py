"""plugins.lock: what is installed, from where, and what it was allowed to do.

One JSON file in $HERMES_HOME, written atomically. Per plugin: its source (``path``, ``git``
or ``pip``), the spec it was installed from, version or commit, install time, a digest of its
files and its declared capabilities (with their digest), and ``history``: the entries of the
last versions updates replaced (newest first), which ``hermes plugins rollback`` walks back.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click
from hermes_agent import Manifest
from hermes_agent.api import write_atomic

LOCK_FILE = "plugins.lock"
LOCK_VERSION = 1
SKIP_PARTS = frozenset({".git", "__pycache__", ".hg", ".svn", ".pytest_cache"})


def lock_path(home: Path) -> Path:
    return home / LOCK_FILE


def read_lock(home: Path) -> dict[str, dict[str, Any]]:
    """The locked plugins by name. A corrupt lock is an error that says how to repair it."""
    path = lock_path(home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"{path} is unreadable ({exc}); restore it from a backup or "
                                   "delete it (installed plugins keep working, but update and "
                                   "rollback need their entries)") from exc
    plugins = data.get("plugins") if isinstance(data, dict) else None
    return plugins if isinstance(plugins, dict) else {}


def write_lock(home: Path, plugins: dict[str, dict[str, Any]]) -> None:
    body = {"lock_version": LOCK_VERSION, "plugins": dict(sorted(plugins.items()))}
    write_atomic(lock_path(home), json.dumps(body, indent=2) + "\n")


def capabilities(manifest: Manifest) -> dict[str, Any]:
    """What a plugin declares it will do: the set a user consents to."""
    return {"kind": manifest.kind, "tools": sorted(manifest.provides_tools),
            "hooks": sorted(manifest.provides_hooks),
            "env": sorted(e.name for e in manifest.requires_env),
            "optional_env": sorted(e.name for e in manifest.optional_env),
            "python_dependencies": sorted(manifest.python_dependencies)}


def digest_json(data: Any) -> str:
    return "sha256:" + hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def digest_files(files: Iterable[tuple[str, bytes]]) -> str:
    """One digest over (relative path, content) pairs, independent of their order."""
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
