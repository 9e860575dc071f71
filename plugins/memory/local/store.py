"""The fact store: one SQLite file, ``<hermes_home>/memories/local.db``.

Tables: ``facts`` (the rows) and two external-content FTS5 indexes over ``facts.text``,
``facts_fts`` (default unicode61 tokenizer) and ``facts_trigram`` (trigram tokenizer, for
scripts without spaces), kept in sync by triggers. The database runs in WAL mode, so the
CLI can read while an agent writes. Facts are deduplicated on a normalised form of their
text (case, spacing and final punctuation ignored): storing one again only refreshes its
``last_used_at``. Beyond ``max_facts`` the least recently used facts are deleted.

One connection per store, guarded by a lock: the memory manager calls ``sync_turn`` on its
worker thread and ``prefetch`` on another, tools run on the agent's thread.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_agent import private_dir

from . import ranking
from .query import Query, like_pattern

DB_FOLDER = "memories"
DB_NAME = "local.db"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL,
    norm TEXT NOT NULL UNIQUE,
    source_session TEXT NOT NULL DEFAULT '',
    origin TEXT NOT NULL DEFAULT 'turn',
    created_at REAL NOT NULL,
    last_used_at REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS facts_by_last_use ON facts(last_used_at);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    text, content='facts', content_rowid='id');
CREATE VIRTUAL TABLE IF NOT EXISTS facts_trigram USING fts5(
    text, content='facts', content_rowid='id', tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, text) VALUES (new.id, new.text);
    INSERT INTO facts_trigram(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS facts_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO facts_trigram(facts_trigram, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER IF NOT EXISTS facts_au AFTER UPDATE OF text ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO facts_trigram(facts_trigram, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO facts_fts(rowid, text) VALUES (new.id, new.text);
    INSERT INTO facts_trigram(rowid, text) VALUES (new.id, new.text);
END;
"""
_COLUMNS = "id, text, source_session, origin, created_at, last_used_at, hits"


@dataclass(frozen=True)
class Fact:
    id: int
    text: str
    source_session: str
    origin: str  # turn, tool, cli, memory-tool
    created_at: float
    last_used_at: float
    hits: int

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "source_session": self.source_session,
                "origin": self.origin, "created_at": _iso(self.created_at),
                "last_used_at": _iso(self.last_used_at), "hits": self.hits}


def _iso(stamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


def normalise(text: str) -> str:
    """The dedupe key: NFKC, case-folded, spaces collapsed, final punctuation dropped."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", folded).strip().rstrip(".!。！;；").strip()


def db_path(hermes_home: str | Path) -> Path:
    return Path(hermes_home).expanduser() / DB_FOLDER / DB_NAME


class FactStore:
    """The facts of one database file (see the module docstring)."""

    def __init__(self, path: Path, *, max_facts: int = 10_000):
        self.path = Path(path)
        self.max_facts = max_facts
        self._lock = threading.RLock()
        private_dir(self.path.parent)
        if not self.path.exists():  # created 0600 before SQLite opens it (WAL/SHM follow)
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=5.0,
                                   isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        with self._lock:
            if self._db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                self._db.executescript(_SCHEMA)
                self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[Fact]:
        with self._lock:
            return [Fact(*row) for row in self._db.execute(sql, params).fetchall()]

    # --- writing ----------------------------------------------------------------------------
    def add(self, text: str, *, session_id: str = "", origin: str = "turn",
            now: float | None = None) -> tuple[Fact, bool]:
        """Store ``text``; ``(fact, True)`` when new, ``(existing fact, False)`` when the same
        fact was known (its ``last_used_at`` is refreshed). Prunes beyond ``max_facts``."""
        text = re.sub(r"\s+", " ", text).strip()
        norm = normalise(text)
        if not norm:
            raise ValueError("a fact needs some text")
        stamp = time.time() if now is None else now
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT id FROM facts WHERE norm = ?", (norm,)).fetchone()
                if row is not None:
                    self._db.execute("UPDATE facts SET last_used_at = max(last_used_at, ?) "
                                     "WHERE id = ?", (stamp, row[0]))
                    fact_id, new = row[0], False
                else:
                    fact_id = self._db.execute(
                        "INSERT INTO facts (text, norm, source_session, origin, created_at, "
                        "last_used_at) VALUES (?, ?, ?, ?, ?, ?)",
                        (text, norm, session_id, origin, stamp, stamp)).lastrowid
                    new = True
                    self._prune(keep=fact_id)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            return self.get(fact_id), new  # type: ignore[arg-type, return-value]

    def _prune(self, keep: int) -> None:
        """Delete the least recently used facts beyond ``max_facts`` (never ``keep``)."""
        excess = self._db.execute("SELECT count(*) FROM facts").fetchone()[0] - self.max_facts
        if excess > 0:
            self._db.execute("DELETE FROM facts WHERE id IN (SELECT id FROM facts WHERE id != ? "
                             "ORDER BY last_used_at, id LIMIT ?)", (keep, excess))

    def delete(self, fact_id: int) -> Fact | None:
        with self._lock:
            fact = self.get(fact_id)
            if fact is not None:
                self._db.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
            return fact

    def touch(self, fact_ids: list[int], now: float | None = None) -> None:
        """Mark facts as used (recalled): refreshes recency and counts a hit."""
        if not fact_ids:
            return
        stamp = time.time() if now is None else now
        with self._lock:
            self._db.executemany("UPDATE facts SET last_used_at = ?, hits = hits + 1 "
                                 "WHERE id = ?", [(stamp, i) for i in fact_ids])

    # --- reading ----------------------------------------------------------------------------
    def get(self, fact_id: int) -> Fact | None:
        rows = self._rows(f"SELECT {_COLUMNS} FROM facts WHERE id = ?", (fact_id,))
        return rows[0] if rows else None

    def recent(self, limit: int = 20) -> list[Fact]:
        return self._rows(f"SELECT {_COLUMNS} FROM facts ORDER BY last_used_at DESC, id DESC "
                          "LIMIT ?", (limit,))

    def containing(self, text: str, limit: int = 20) -> list[Fact]:
        """Facts whose text contains ``text`` (case-insensitive for ASCII)."""
        return self._rows(f"SELECT {_COLUMNS} FROM facts WHERE text LIKE ? ESCAPE '\\' "
                          "ORDER BY id LIMIT ?", (like_pattern(text), limit))

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM facts").fetchone()[0])

    def journal_mode(self) -> str:
        with self._lock:
            return str(self._db.execute("PRAGMA journal_mode").fetchone()[0])

    def search(self, query: Query, *, limit: int, half_life_days: float,
               now: float | None = None) -> list[tuple[Fact, float]]:
        """The best ``limit`` facts for ``query`` with their scores (:mod:`.ranking`)."""
        if query.empty or limit <= 0:
            return []
        groups: list[list[ranking.Candidate]] = []
        like: dict[int, float] = {}
        with self._lock:
            for table, match in (("facts_fts", query.word_match()),
                                 ("facts_trigram", query.trigram_match())):
                if match:
                    groups.append([ranking.Candidate(*row) for row in self._db.execute(
                        f"SELECT f.id, bm25({table}), f.last_used_at FROM {table} "
                        f"JOIN facts f ON f.id = {table}.rowid WHERE {table} MATCH ? "
                        f"ORDER BY bm25({table}) LIMIT ?", (match, ranking.CANDIDATES))])
            for run in query.short_cjk:
                like.update(self._db.execute(
                    "SELECT id, last_used_at FROM facts WHERE text LIKE ? ESCAPE '\\' "
                    "ORDER BY last_used_at DESC LIMIT ?",
                    (like_pattern(run), ranking.CANDIDATES)).fetchall())
        stamp = time.time() if now is None else now
        best = ranking.rank(groups, like, now=stamp, half_life_days=half_life_days, limit=limit)
        facts = {f.id: f for f in self._rows(
            f"SELECT {_COLUMNS} FROM facts WHERE id IN ({','.join('?' * len(best))})",
            tuple(i for i, _ in best))} if best else {}
        return [(facts[i], score) for i, score in best if i in facts]

    def size_bytes(self) -> int:
        """The database with its WAL and shared-memory files."""
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal"),
                                              Path(f"{self.path}-shm")) if p.exists())
