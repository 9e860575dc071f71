"""The shell hooks the user approved: ``$HERMES_HOME/shell-hooks-allowlist.json``.

Its shape is Hermes Agent 0.19's, ``{"approvals": [{"event", "command", "approved_at",
...}]}``, with one difference: every entry is sealed (``hermes_agent.seal_json``, purpose
``shell-hook-approval``; docs/cache.md), so an entry that a file tool, a command or anyone
but ``hermes hooks approve`` wrote or changed is not believed (a warning names the file).
An approval binds the hook's name and its exact command, and the SHA-256 of the scripts it
names (each word with a ``/`` that is a file: ``~/hooks/guard.sh``, ``python3 ./check.py``), so
an edited script needs approving again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_agent import seal_json, unseal_json

FILE_NAME = "shell-hooks-allowlist.json"
PURPOSE = "shell-hook-approval"


def hook_id(event: str, command: str) -> str:
    """The approval's key: a hash of the hook's name and its command."""
    return hashlib.sha256(f"{event}\0{command}".encode()).hexdigest()[:16]


def scripts_of(command: str) -> list[Path]:
    """The files a command names by path (``~/hooks/guard.sh --strict``, ``sh ./x.sh``)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    paths = [Path(os.path.expanduser(word)) for word in words if "/" in word]
    return [path for path in paths if path.is_file()]


def script_of(command: str) -> Path | None:
    """The first script a command names, if any."""
    found = scripts_of(command)
    return found[0] if found else None


def script_digest(command: str) -> str:
    """SHA-256 over the command's scripts ("" without any)."""
    paths = scripts_of(command)
    if not paths:
        return ""
    digest = hashlib.sha256()
    for path in paths:
        try:
            digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
        except OSError:
            digest.update(str(path).encode() + b"\0unreadable\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class Approval:
    event: str
    command: str
    approved_at: str
    script_sha256: str = ""

    @property
    def id(self) -> str:
        return hook_id(self.event, self.command)


class Allowlist:
    """The approvals of one home; re-read when the file changed (a gateway keeps running
    while ``hermes hooks approve`` adds one)."""

    def __init__(self, home: Path):
        self.path = Path(home) / FILE_NAME
        self._stamp: tuple[int, int] | None = None
        self._entries: dict[str, Approval] = {}
        self.rejected = 0  # entries of the file whose seal does not match
        self._lock = threading.Lock()  # tool calls run hooks from several threads

    def entries(self) -> dict[str, Approval]:
        with self._lock:
            return self._current()

    def _current(self) -> dict[str, Approval]:
        try:
            info = self.path.stat()
            stamp = (info.st_mtime_ns, info.st_size)
        except OSError:
            stamp = None
        if stamp != self._stamp or stamp is None:
            self._stamp = stamp
            self._entries, self.rejected = self._read() if stamp else ({}, 0)
        return self._entries

    def _read(self) -> tuple[dict[str, Approval], int]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}, 0
        raw = data.get("approvals") if isinstance(data, dict) else None
        found: dict[str, Approval] = {}
        rejected = 0
        for item in raw if isinstance(raw, list) else ():
            entry = unseal_json(PURPOSE, json.dumps(item, separators=(",", ":")), self.path) \
                if isinstance(item, dict) else None
            if entry is None or not isinstance(entry.get("event"), str) \
                    or not isinstance(entry.get("command"), str):
                rejected += 1
                continue
            approval = Approval(entry["event"], entry["command"],
                                str(entry.get("approved_at", "")),
                                str(entry.get("script_sha256", "")))
            found[approval.id] = approval
        return found, rejected

    def status(self, event: str, command: str) -> str:
        """``approved``, ``unapproved`` or ``script-changed``."""
        approval = self.entries().get(hook_id(event, command))
        if approval is None:
            return "unapproved"
        if approval.script_sha256 and approval.script_sha256 != script_digest(command):
            return "script-changed"
        return "approved"

    def approve(self, event: str, command: str) -> bool:
        """Record an approval; False when no seal can be made (no usable cache key)."""
        entry = {"event": event, "command": command,
                 "approved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "script_sha256": script_digest(command)}
        sealed = seal_json(PURPOSE, entry)
        if sealed is None:
            return False
        kept = {key: value for key, value in self._sealed_items().items()
                if key != hook_id(event, command)}
        kept[hook_id(event, command)] = json.loads(sealed)
        self._write(list(kept.values()))
        return True

    def revoke(self, event: str, command: str | None = None) -> list[Approval]:
        """Remove the approvals of ``event`` (of its ``command`` only, when given)."""
        entries = self.entries()
        gone = [a for a in entries.values()
                if a.event == event and (command is None or a.command == command)]
        ids = {a.id for a in gone}
        self._write([item for key, item in self._sealed_items().items() if key not in ids])
        return gone

    def _sealed_items(self) -> dict[str, dict[str, Any]]:
        """The file's entries whose seal matches, as stored (unsealed ones are dropped)."""
        believed = self.entries()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        out: dict[str, dict[str, Any]] = {}
        for item in data.get("approvals", []) if isinstance(data, dict) else []:
            if isinstance(item, dict):
                key = hook_id(str(item.get("event")), str(item.get("command")))
                if key in believed and unseal_json(
                        PURPOSE, json.dumps(item, separators=(",", ":")), self.path) is not None:
                    out[key] = item
        return out

    def _write(self, items: list[dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"approvals": items}, out, indent=2)
            out.write("\n")
        os.replace(tmp, self.path)
        self._stamp = None
