"""The history of attempts, ``$HERMES_HOME/cron/runs.db`` (SQLite, WAL): one row per attempt
with its start, end, status (``running``, ``ok``, ``error``, ``interrupted``), error, output
file, agent session and delivery. A ``running`` row whose process is gone is reported as
``interrupted``. The newest 5,000 finished rows are kept."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hermes_agent.kits.files import pid_alive

from .jobs import cron_dir

KEEP = 5000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL,
    job_name TEXT NOT NULL DEFAULT '',
    trigger TEXT NOT NULL,          -- schedule | retry | manual
    scheduled_for TEXT,             -- the occurrence run (None for a manual run)
    attempt INTEGER NOT NULL DEFAULT 1,
    pid INTEGER NOT NULL,
    status TEXT NOT NULL,           -- running | ok | error | interrupted
    started_at TEXT NOT NULL,
    finished_at TEXT,
    error TEXT,
    output_path TEXT,
    session_id TEXT,
    delivery TEXT                   -- JSON: [{"target", "ok", "error"}]
);
CREATE INDEX IF NOT EXISTS runs_job ON runs(job_id, id DESC);
"""


class RunLog:
    """One connection per RunLog, opened on first use (usable from any one thread at a
    time: the scheduler's runs are sequential)."""

    def __init__(self, home: Path):
        self.path = Path(home) / "cron" / "runs.db"
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                cron_dir(self.path.parent.parent)
                fresh = not self.path.exists()
                conn = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                                       check_same_thread=False)
                if fresh:
                    os.chmod(self.path, 0o600)
                conn.row_factory = sqlite3.Row
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA busy_timeout=30000")
                conn.executescript(_SCHEMA)
                self._conn = conn
            yield self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def start(self, job: dict[str, Any], *, trigger: str, attempt: int, started_at: str,
              scheduled_for: str | None) -> int:
        with self._db() as conn:
            cursor = conn.execute(
                "INSERT INTO runs (job_id, job_name, trigger, scheduled_for, attempt, pid, "
                "status, started_at) VALUES (?, ?, ?, ?, ?, ?, 'running', ?)",
                (job["id"], job.get("name") or "", trigger, scheduled_for, attempt, os.getpid(),
                 started_at))
            return int(cursor.lastrowid or 0)

    def finish(self, run_id: int, *, status: str, finished_at: str, error: str | None,
               output_path: str | None, session_id: str | None,
               delivery: list[dict[str, Any]]) -> None:
        with self._db() as conn:
            conn.execute(
                "UPDATE runs SET status = ?, finished_at = ?, error = ?, output_path = ?,"
                " session_id = ?, delivery = ? WHERE id = ?",
                (status, finished_at, error, output_path, session_id, json.dumps(delivery),
                 run_id))
            if run_id % 100 == 0:
                conn.execute("DELETE FROM runs WHERE status != 'running' AND id <= "
                             "(SELECT id FROM runs WHERE status != 'running' ORDER BY id DESC "
                             "LIMIT 1 OFFSET ?)", (KEEP,))

    def reap(self) -> int:
        """Mark the ``running`` rows of processes that are gone as ``interrupted``."""
        if not self.path.exists():
            return 0
        with self._db() as conn:
            rows = conn.execute("SELECT id, pid FROM runs WHERE status = 'running'").fetchall()
            dead = [(f"process {r['pid']} ended during the run", r["id"]) for r in rows
                    if r["pid"] != os.getpid() and not pid_alive(r["pid"])]
            conn.executemany("UPDATE runs SET status = 'interrupted', error = ? WHERE id = ?",
                             dead)
        return len(dead)

    def list(self, job_id: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        """The newest attempts first (all jobs, or one)."""
        if not self.path.exists():
            return []
        with self._db() as conn:
            where, args = ("WHERE job_id = ?", [job_id]) if job_id else ("", [])
            rows = conn.execute(f"SELECT * FROM runs {where} ORDER BY id DESC LIMIT ?",
                                [*args, max(1, min(int(limit), 500))]).fetchall()
        result = []
        for row in rows:
            item = dict(row)
            item["delivery"] = json.loads(item["delivery"]) if item["delivery"] else []
            if item["status"] == "running" and item["pid"] != os.getpid() \
                    and not pid_alive(item["pid"]):
                item["status"] = "interrupted"
                item["error"] = item["error"] or f"process {item['pid']} ended during the run"
            result.append(item)
        return result

    def count(self, job_id: str | None = None, status: str | None = None) -> int:
        if not self.path.exists():
            return 0
        clauses, args = [], []
        for column, value in (("job_id", job_id), ("status", status)):
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(value)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._db() as conn:
            return int(conn.execute(f"SELECT COUNT(*) FROM runs {where}", args).fetchone()[0])
