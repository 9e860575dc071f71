"""``hermes doctor``'s check of state.db (``doctor_checks``): ``PRAGMA quick_check`` over
every page, then FTS5's own ``integrity-check`` of the two search indexes against the
messages (in a transaction that is rolled back: nothing is written). The store's check at
open (:mod:`.health`) stops at a time budget; this one reads the whole file."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.api import Finding

from .health import damaged, quick_check

if TYPE_CHECKING:
    from hermes_agent import Kernel

CHECK_BUDGET_S = 30.0
#: each index and its check: ``rank`` 1 also compares the index with the messages; the
#: trigram index (``detail=none``) is checked on its own (SQLite 3.40 reports a sound one
#: as not matching its content)
FTS_TABLES = {"messages_fts": ", rank) VALUES ('integrity-check', 1)",
              "messages_fts_trigram": ") VALUES ('integrity-check')"}


def store_findings(kernel: "Kernel", config: Any) -> list[Finding]:
    if (config.get("sessions.store") or "sqlite") != "sqlite":
        return []  # another store's plugin checks its own
    return check_database(Path(kernel.home) / "state.db")


def check_database(path: Path, budget_s: float = CHECK_BUDGET_S) -> list[Finding]:
    if not path.exists() or path.stat().st_size == 0:
        return [Finding("state.db", "ok", f"{path} does not exist yet (the first session "
                        "creates it)")]
    try:
        conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=5.0,
                               isolation_level=None)
    except sqlite3.Error as exc:
        return [_damaged(path, exc)]
    try:
        try:
            result = quick_check(conn, budget_s)
        except sqlite3.DatabaseError as exc:
            return [_damaged(path, exc)]
        if result is None:
            return [Finding("state.db", "warn", f"the check of {path} did not finish within "
                            f"{budget_s:.0f} s, so it was not checked whole",
                            "run `sqlite3 state.db 'PRAGMA quick_check'` while hermes is stopped")]
        if result != "ok":
            return [_damaged(path, f"quick_check: {result}")]
        return [Finding("state.db", "ok", f"{path}: every page is sound"), *_fts(conn, path)]
    finally:
        conn.close()


def _damaged(path: Path, detail: object) -> Finding:
    """The store's own refusal (:func:`.health.damaged`), split into what and how."""
    message = str(damaged(path, detail))
    what, _, how = " ".join(message.split()).partition(" To get its sessions back: ")
    return Finding("state.db", "problem", what.split(". It was not changed")[0],
                   f"to get its sessions back: {how}" if how else message)


def _fts(conn: sqlite3.Connection, path: Path) -> list[Finding]:
    names = {row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)", tuple(FTS_TABLES))}
    broken = []
    for table, check in FTS_TABLES.items():
        if table not in names:
            continue
        try:
            conn.execute("BEGIN")
            conn.execute(f"INSERT INTO {table}({table}{check}")
        except sqlite3.DatabaseError as exc:
            broken.append(f"{table} ({exc})")
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
    if not broken:
        return [Finding("session search", "ok", "the full-text indexes match the messages")]
    rebuild = "; ".join(f"INSERT INTO {t}({t}) VALUES ('rebuild')" for t in FTS_TABLES)
    return [Finding("session search", "problem", f"the full-text index of {path} does not "
                    f"match the messages: {', '.join(broken)}; `hermes sessions search` "
                    "misses or misplaces results",
                    f"stop hermes, then rebuild it: sqlite3 {path} \"{rebuild}\"")]
