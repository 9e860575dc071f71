"""The gateway's durable inbox: every accepted message is written to
``$HERMES_HOME/gateway/inbox.db`` (SQLite, WAL) before the adapter hears that it was
accepted, and removed once its turn has been answered. A gateway killed mid-turn (even with
SIGKILL) finds the unanswered messages at its next start and runs them again, in order: no
accepted message is lost. A message whose turn was cut short is answered again from the
stored session (at least once, never dropped)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import fields
from pathlib import Path

from hermes_agent import private_dir
from hermes_agent.api import InboundMessage

SCHEMA = """
CREATE TABLE IF NOT EXISTS inbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    chat_key TEXT NOT NULL,
    message TEXT NOT NULL,
    accepted_at REAL NOT NULL
)
"""
_FIELDS = {f.name for f in fields(InboundMessage)}


class Inbox:
    """Accepted, unanswered messages. Writes are committed before :meth:`accept` returns;
    an OS-level crash may lose the last ones (WAL with ``synchronous=NORMAL``), a killed
    process does not."""

    def __init__(self, home: Path):
        folder = private_dir(Path(home) / "gateway")  # the messages are the users' own
        self.path = folder / "inbox.db"
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(SCHEMA)
        self._lock = threading.Lock()

    def accept(self, chat_key: str, message: InboundMessage) -> int:
        """Store ``message``; returns its inbox id."""
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO inbox (chat_key, message, accepted_at) VALUES (?, ?, ?)",
                (chat_key, _dump(message), time.time()))
        return int(cursor.lastrowid or 0)

    def done(self, *ids: int) -> None:
        """The messages were answered (or dropped by ``/stop``): forget them."""
        if ids:
            with self._lock:
                self._db.executemany("DELETE FROM inbox WHERE id = ?", [(i,) for i in ids])

    def pending(self) -> list[tuple[int, str, InboundMessage]]:
        """Every unanswered message as ``(id, chat_key, message)``, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, chat_key, message FROM inbox ORDER BY id").fetchall()
        return [(row[0], row[1], _load(row[2])) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _dump(message: InboundMessage) -> str:
    # not asdict(): it deep-copies ``raw``, a platform's own objects, which may not copy
    # (a 0.19 plugin's MessageEvent holds a member of a dynamic enum)
    data = {name: getattr(message, name) for name in _FIELDS}
    try:
        json.dumps(data["raw"])
    except (TypeError, ValueError):  # the platform's payload is kept only when it is JSON
        data["raw"] = None
    return json.dumps(data, ensure_ascii=False)


def _load(text: str) -> InboundMessage:
    data = json.loads(text)
    return InboundMessage(**{k: v for k, v in data.items() if k in _FIELDS})
