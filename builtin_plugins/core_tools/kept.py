"""The records of kept background processes (``terminal`` with ``background: true, keep:
true``): ``$HERMES_HOME/processes/ID.json`` next to the process's log ``ID.log`` and, once
it ended, its exit status ``ID.exit``. ``hermes processes`` reads them; a record names the
process's start time too, so a reused pid is not taken for the process."""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .process_groups import kill_tree


def exit_path(log: Path) -> Path:
    return log.with_suffix(".exit")


def read_exit(log: Path, fallback: int | None) -> int | None:
    try:
        return int(exit_path(log).read_text().strip())
    except (OSError, ValueError):
        return fallback


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux), else None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return None
    return int(stat[stat.rfind(b")") + 2:].split()[19])


def write_record(folder: Path, proc_id: str, command: str, cwd: str, pid: int,
                 session: str) -> None:
    record = {"id": proc_id, "command": command, "cwd": cwd, "pid": pid,
              "pid_start": start_ticks(pid), "started": time.time(), "session_id": session}
    path = folder / f"{proc_id}.json"
    path.write_text(json.dumps(record))
    os.chmod(path, 0o600)


def remove_record(folder: Path, proc_id: str) -> None:
    (folder / f"{proc_id}.json").unlink(missing_ok=True)


@dataclass
class KeptProcess:
    id: str
    command: str
    cwd: str
    pid: int
    started: float
    session_id: str
    alive: bool
    exit_code: int | None
    log: Path

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "command": self.command, "cwd": self.cwd, "pid": self.pid,
                "started": self.started, "session_id": self.session_id,
                "status": "running" if self.alive else "exited", "exit_code": self.exit_code,
                "log": str(self.log)}


def _alive(record: dict[str, Any]) -> bool:
    pid = record.get("pid")
    if not isinstance(pid, int):
        return False
    ticks = start_ticks(pid)
    if ticks is None:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return record.get("pid_start") is None  # no /proc: trust the pid
    return ticks == record.get("pid_start")


def list_kept(folder: Path) -> list[KeptProcess]:
    found = []
    for path in sorted(folder.glob("proc_*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        log = folder / f"{record.get('id', path.stem)}.log"
        found.append(KeptProcess(str(record.get("id", path.stem)), str(record.get("command")),
                                 str(record.get("cwd", "")), int(record.get("pid") or 0),
                                 float(record.get("started") or 0),
                                 str(record.get("session_id", "")), _alive(record),
                                 read_exit(log, None), log))
    return sorted(found, key=lambda proc: proc.started)


def kill_kept(folder: Path, proc_id: str, grace: float = 3.0) -> KeptProcess | None:
    """Stop a kept process (its keeper's group: the sandbox dies with the keeper) and drop
    its record; None when no record has that id."""
    match = next((proc for proc in list_kept(folder) if proc.id == proc_id), None)
    if match is None:
        return None
    if match.alive:
        ticks = start_ticks(match.pid)
        kill_tree(match.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while start_ticks(match.pid) == ticks and not _zombie(match.pid):
            if time.monotonic() >= deadline:
                kill_tree(match.pid, signal.SIGKILL)
                break
            time.sleep(0.05)
    remove_record(folder, proc_id)
    return match


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2:].split()[0] == b"Z"
