"""The health check at open: a damaged state.db is refused before anything is written to it.

``PRAGMA quick_check`` reads every page (b-tree structure, page and cell bounds, record
formats; not the slower index-to-table cross-check of ``integrity_check``). It is bounded by a
time budget through SQLite's progress handler, so a multi-GB file cannot stall start-up: when
the budget runs out the file is used unchecked (and checked again at the next open). A passed
check is remembered in ``state.db-checked`` (0600, beside the database) under the identity of
the file and its WAL (device, inode, size, mtime in ns); an unchanged file is not read again.
When the store that checked the file closes it, it records the file's new identity: only
SQLite wrote it since the check.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from pathlib import Path

from hermes_agent import write_atomic
from hermes_agent.api import SessionStoreError

from .file_modes import FILE_MODE

log = logging.getLogger("hermes_agent.sessions")
CHECK_BUDGET_S = 1.0
PROGRESS_STEPS = 10_000  # SQLite VM steps between budget checks


def record_path(path: Path) -> Path:
    return Path(f"{path}-checked")


def identity(path: Path) -> list[int] | None:
    """(device, inode, size, mtime_ns) of the database and of its WAL (zeros when absent)."""
    out: list[int] = []
    for target in (path, Path(f"{path}-wal")):
        try:
            st = os.stat(target)
        except FileNotFoundError:
            if target == path:
                return None
            out += [0, 0, 0, 0]
            continue
        out += [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]
    return out


def damaged(path: Path, detail: object) -> SessionStoreError:
    """The refusal, with the way to get the sessions back."""
    aside = f"{path}.damaged"
    recovered = path.parent / "recovered.db"
    return SessionStoreError(
        f"{path} is damaged ({detail}). It was not changed and hermes will not write to it. "
        f"To get its sessions back: stop hermes, `mv {path} {aside}` (hermes then starts a new "
        f"state.db), run `sqlite3 {aside} .recover | sqlite3 {recovered}` (where that sqlite3 "
        f"has no working .recover: `sqlite3 {aside} .dump | sed 's/^ROLLBACK; -- due to "
        f"errors$/COMMIT;/' | sqlite3 {recovered}`, which saves less) and then "
        f"`hermes sessions import {recovered}`.")


def recorded(path: Path) -> bool:
    """True when the last passed check was of the file exactly as it is now."""
    current = identity(path)
    if current is None:
        return False
    try:
        return bool(json.loads(record_path(path).read_text("utf-8")) == current)
    except (OSError, ValueError):
        return False


def remember(path: Path) -> None:
    current = identity(path)
    if current is None:
        return
    try:
        write_atomic(record_path(path), json.dumps(current), mode=FILE_MODE)
    except OSError as exc:  # a read-only directory: the next open checks again
        log.debug("cannot record the health check of %s: %s", path, exc)


def quick_check(conn: sqlite3.Connection, budget_s: float = CHECK_BUDGET_S) -> str | None:
    """``PRAGMA quick_check(1)`` within ``budget_s``: "ok", the first problem, or None when
    the budget ran out first."""
    deadline = time.monotonic() + budget_s
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), PROGRESS_STEPS)
    try:
        return str(conn.execute("PRAGMA quick_check(1)").fetchone()[0])
    except sqlite3.OperationalError as exc:
        if "interrupt" in str(exc).lower():
            return None
        raise
    finally:
        conn.set_progress_handler(None, 0)


def verify(conn: sqlite3.Connection, path: Path, budget_s: float = CHECK_BUDGET_S) -> bool:
    """Refuse a damaged database; True when the file is known to be sound (checked now or
    before, unchanged since)."""
    if not path.exists() or path.stat().st_size == 0 or recorded(path):
        return True
    try:
        result = quick_check(conn, budget_s)
    except sqlite3.DatabaseError as exc:
        raise damaged(path, exc) from exc
    if result is None:
        log.info("%s: the health check did not finish within %.1f s; using it unchecked",
                 path, budget_s)
        return False
    if result != "ok":
        raise damaged(path, f"quick_check: {result}")
    remember(path)
    return True
