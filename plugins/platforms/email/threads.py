"""What the email platform remembers of its threads, in ``$HERMES_HOME/gateway/email.db``
(SQLite): each mail received from an allowed sender and each mail sent, with the thread it
belongs to, its subject and its ``References``, so a reply (even after a restart) carries the
right ``In-Reply-To``, ``References`` and ``Re:`` subject, and a reply quoting only our
``Message-ID`` finds its thread. A received mail is also marked ``accepted`` once the gateway
stored it: a mail seen again (the server lost our ``\\Seen``) is not answered twice."""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_agent import private_dir

SCHEMA = """
CREATE TABLE IF NOT EXISTS mails (
    message_id TEXT NOT NULL,
    correspondent TEXT NOT NULL,  -- who we write with: the sender, or the recipient
    root TEXT NOT NULL,        -- the thread's first Message-ID
    subject TEXT NOT NULL,
    refs TEXT NOT NULL,        -- its References, space-separated, without angle brackets
    outgoing INTEGER NOT NULL,
    accepted INTEGER NOT NULL DEFAULT 0,
    at REAL NOT NULL,
    PRIMARY KEY (message_id, correspondent)  -- another sender may reuse an id: his own row
);
CREATE INDEX IF NOT EXISTS mails_thread ON mails (correspondent, root, at);
"""
KEEP = 50_000  # rows; the oldest go first


@dataclass(frozen=True)
class MailContext:
    """One mail of a thread, as a reply to it needs it."""

    message_id: str
    correspondent: str
    root: str
    subject: str
    references: tuple[str, ...]


class ThreadStore:
    def __init__(self, home: Path):
        self.path = private_dir(Path(home) / "gateway") / "email.db"
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()

    def record(self, context: MailContext, *, outgoing: bool, accepted: bool = False) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO mails VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (context.message_id, context.correspondent, context.root, context.subject,
                 " ".join(context.references), int(outgoing), int(accepted), time.time()))
            if self._db.execute("SELECT COUNT(*) FROM mails").fetchone()[0] > KEEP * 1.1:
                self._db.execute("DELETE FROM mails WHERE rowid IN (SELECT rowid FROM mails "
                                 "ORDER BY at LIMIT ?)", (KEEP // 10,))

    def accept(self, message_id: str, correspondent: str) -> None:
        with self._lock:
            self._db.execute("UPDATE mails SET accepted = 1 WHERE message_id = ? AND "
                             "correspondent = ?", (message_id, correspondent))

    def forget(self, message_id: str, correspondent: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM mails WHERE message_id = ? AND correspondent = ?",
                             (message_id, correspondent))

    def accepted(self, message_id: str, correspondent: str) -> bool:
        with self._lock:
            row = self._db.execute("SELECT accepted FROM mails WHERE message_id = ? AND "
                                   "correspondent = ? AND outgoing = 0",
                                   (message_id, correspondent)).fetchone()
        return bool(row and row[0])

    def get(self, message_id: str, correspondent: str) -> MailContext | None:
        with self._lock:
            row = self._db.execute("SELECT message_id, correspondent, root, subject, refs "
                                   "FROM mails WHERE message_id = ? AND correspondent = ?",
                                   (message_id, correspondent)).fetchone()
        return _context(row)

    def latest(self, correspondent: str, root: str) -> MailContext | None:
        """The thread's newest mail, received or sent: the one a new piece answers."""
        with self._lock:
            row = self._db.execute(
                "SELECT message_id, correspondent, root, subject, refs FROM mails "
                "WHERE correspondent = ? AND root = ? ORDER BY at DESC, rowid DESC LIMIT 1",
                (correspondent, root)).fetchone()
        return _context(row)

    def root_of(self, correspondent: str, *message_ids: str) -> str | None:
        """The thread of the first of ``message_ids`` known in ``correspondent``'s mails."""
        with self._lock:
            for message_id in message_ids:
                row = self._db.execute("SELECT root FROM mails WHERE message_id = ? AND "
                                       "correspondent = ?", (message_id, correspondent)).fetchone()
                if row:
                    return str(row[0])
        return None

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _context(row: tuple[str, str, str, str, str] | None) -> MailContext | None:
    if row is None:
        return None
    return MailContext(row[0], row[1], row[2], row[3], tuple(row[4].split()))
