"""state.db schema: DDL, the versioned migration chain and declarative column reconciliation.

Versions 1-11 are the shapes earlier stores wrote (sessions + messages + messages_fts, then
titles, billing, reasoning and codex columns, the trigram table, and FTS over tool names and
arguments). Version 12 is this store: both FTS tables read their text from the generated
column ``messages.search_text`` (no second copy of every message), and the trigram table holds
only rows that contain CJK text, the only queries it serves. Upgrades run in one transaction:
they finish completely or leave the file as it was.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable

from hermes_agent.api import SessionStoreError
from hermes_agent.kits.sql.query import CJK_CLASS

SCHEMA_VERSION = 12
OWNER = "hermes"  # state_meta 'schema_owner': written by this store (not only a version number)

# Characters that send a query to the trigram table (and the rows that table indexes).
CJK_GLOB = f"'*[{CJK_CLASS}]*'"


def has_cjk(col: str) -> str:
    """SQL: ``col`` contains CJK text. The byte/character length test skips the (slow) GLOB
    for ASCII-only text, which is most messages."""
    return f"(length(CAST({col} AS BLOB)) > length({col}) AND {col} GLOB {CJK_GLOB})"

SESSION_COLUMNS: dict[str, str] = {
    "id": "TEXT PRIMARY KEY", "source": "TEXT NOT NULL", "user_id": "TEXT", "model": "TEXT",
    "model_config": "TEXT", "system_prompt": "TEXT",
    "parent_session_id": "TEXT REFERENCES sessions(id)", "started_at": "REAL NOT NULL",
    "ended_at": "REAL", "end_reason": "TEXT", "message_count": "INTEGER DEFAULT 0",
    "tool_call_count": "INTEGER DEFAULT 0", "input_tokens": "INTEGER DEFAULT 0",
    "output_tokens": "INTEGER DEFAULT 0", "cache_read_tokens": "INTEGER DEFAULT 0",
    "cache_write_tokens": "INTEGER DEFAULT 0", "reasoning_tokens": "INTEGER DEFAULT 0",
    "billing_provider": "TEXT", "billing_base_url": "TEXT", "billing_mode": "TEXT",
    "estimated_cost_usd": "REAL", "actual_cost_usd": "REAL", "cost_status": "TEXT",
    "cost_source": "TEXT", "pricing_version": "TEXT", "title": "TEXT",
    "api_call_count": "INTEGER DEFAULT 0",
}
SEARCH_TEXT = ("TEXT GENERATED ALWAYS AS (COALESCE(content, '') || ' ' || COALESCE(tool_name, '')"
               " || ' ' || COALESCE(tool_calls, '')) VIRTUAL")
MESSAGE_COLUMNS: dict[str, str] = {
    "id": "INTEGER PRIMARY KEY AUTOINCREMENT",
    "session_id": "TEXT NOT NULL REFERENCES sessions(id)", "role": "TEXT NOT NULL",
    "content": "TEXT", "tool_call_id": "TEXT", "tool_calls": "TEXT", "tool_name": "TEXT",
    "timestamp": "REAL NOT NULL", "token_count": "INTEGER", "finish_reason": "TEXT",
    "reasoning": "TEXT", "reasoning_content": "TEXT", "reasoning_details": "TEXT",
    "codex_reasoning_items": "TEXT", "codex_message_items": "TEXT",
    "provenance": "TEXT",  # JSON {"trust": "untrusted", "source": ...}; NULL: trusted
    "search_text": SEARCH_TEXT,
}
TABLES = {"sessions": SESSION_COLUMNS, "messages": MESSAGE_COLUMNS}

INDEXES = """
CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp);
"""
TITLE_INDEX = """CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique ON sessions(title)
    WHERE title IS NOT NULL;"""

FTS = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    search_text, content='messages', content_rowid='id', tokenize='unicode61', prefix='3');
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts_trigram USING fts5(
    search_text, content='messages', content_rowid='id', tokenize='trigram', detail=none);
INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0);
INSERT INTO messages_fts(messages_fts, rank) VALUES ('usermerge', 16);
INSERT INTO messages_fts(messages_fts, rank) VALUES ('crisismerge', 32);
INSERT INTO messages_fts_trigram(messages_fts_trigram, rank) VALUES ('automerge', 0);
INSERT INTO messages_fts_trigram(messages_fts_trigram, rank) VALUES ('usermerge', 16);
INSERT INTO messages_fts_trigram(messages_fts_trigram, rank) VALUES ('crisismerge', 32);
CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, search_text) VALUES (new.id, new.search_text);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, search_text)
        VALUES ('delete', old.id, old.search_text);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_update
        AFTER UPDATE OF content, tool_name, tool_calls ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, search_text)
        VALUES ('delete', old.id, old.search_text);
    INSERT INTO messages_fts(rowid, search_text) VALUES (new.id, new.search_text);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_insert AFTER INSERT ON messages
        WHEN {has_cjk('new.search_text')} BEGIN
    INSERT INTO messages_fts_trigram(rowid, search_text) VALUES (new.id, new.search_text);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_delete AFTER DELETE ON messages
        WHEN {has_cjk('old.search_text')} BEGIN
    INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, search_text)
        VALUES ('delete', old.id, old.search_text);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_update_old
        AFTER UPDATE OF content, tool_name, tool_calls ON messages
        WHEN {has_cjk('old.search_text')} BEGIN
    INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, search_text)
        VALUES ('delete', old.id, old.search_text);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_update_new
        AFTER UPDATE OF content, tool_name, tool_calls ON messages
        WHEN {has_cjk('new.search_text')} BEGIN
    INSERT INTO messages_fts_trigram(rowid, search_text) VALUES (new.id, new.search_text);
END;
"""
FTS_TABLES = ("messages_fts", "messages_fts_trigram")

BASE = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT);
"""


def _create_table(name: str, columns: dict[str, str]) -> str:
    body = ",\n    ".join(f"{col} {decl}" for col, decl in columns.items())
    return f"CREATE TABLE IF NOT EXISTS {name} (\n    {body}\n);"


def create_sql() -> str:
    """The whole schema of a new state.db."""
    tables = "\n".join(_create_table(name, cols) for name, cols in TABLES.items())
    return BASE + tables + INDEXES + TITLE_INDEX + FTS


def table_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    # table_xinfo also lists generated (hidden) columns.
    return [row[1] for row in conn.execute(f"PRAGMA table_xinfo({table})")]


def reconcile_columns(conn: sqlite3.Connection) -> list[str]:
    """Add every column the schema lists that the live tables lack (declarative; idempotent)."""
    added = []
    for table, columns in TABLES.items():
        live = set(table_columns(conn, table))
        for col, decl in columns.items():
            if col in live:
                continue
            # Only nullable or defaulted columns were ever added after version 1.
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {col} {decl}")
            added.append(f"{table}.{col}")
    return added


def _dedupe_titles(conn: sqlite3.Connection) -> None:
    """Before the unique title index: older copies of a repeated title get " #<n>"."""
    rows = conn.execute(
        "SELECT id, title FROM sessions WHERE title IN (SELECT title FROM sessions WHERE title "
        "IS NOT NULL GROUP BY title HAVING COUNT(*) > 1) ORDER BY title, started_at DESC").fetchall()
    seen: dict[str, int] = {}
    for session_id, title in rows:
        n = seen.get(title, 0) + 1
        seen[title] = n
        if n > 1:
            new = f"{title} #{n}"
            while conn.execute("SELECT 1 FROM sessions WHERE title = ?", (new,)).fetchone():
                n += 1
                new = f"{title} #{n}"
            conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (new, session_id))


def _rebuild_fts(conn: sqlite3.Connection) -> None:
    """Drop whatever FTS tables and triggers an older shape had; index every row again."""
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND "
                                "tbl_name = 'messages'").fetchall():
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    for table in FTS_TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in split_sql(FTS):
        conn.execute(statement)
    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
    conn.execute("INSERT INTO messages_fts_trigram(rowid, search_text) SELECT id, search_text "
                 f"FROM messages WHERE {has_cjk('search_text')}")


# version -> step that brings a database of the previous version to it. Column additions
# (v2, v3, v5-v9) are declarative: reconcile_columns() runs before the chain.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    4: _dedupe_titles,
    12: _rebuild_fts,
}


def split_sql(script: str) -> list[str]:
    """Statements of ``script`` (triggers kept whole), for running inside a transaction."""
    out, buf = [], []
    for line in script.strip().splitlines():
        buf.append(line)
        text = "\n".join(buf).strip()
        if text.endswith(";") and sqlite3.complete_statement(text):
            out.append(text)
            buf = []
    return out


def read_version(conn: sqlite3.Connection) -> int | None:
    """The stored schema version; None for an empty database."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not names:
        return None
    if "schema_version" in names:
        row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        if row and row[0] is not None:
            return int(row[0])
    if "sessions" in names:
        return 1  # the earliest shape did not always record its version
    raise SessionStoreError("the file is an SQLite database of another program (no sessions "
                            "table); point sessions at a different path")


def owner(conn: sqlite3.Connection) -> str | None:
    try:
        row = conn.execute("SELECT value FROM state_meta WHERE key = 'schema_owner'").fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


def is_current(conn: sqlite3.Connection) -> bool:
    """True when the schema needs nothing (checked without taking the write lock)."""
    try:
        if read_version(conn) != SCHEMA_VERSION or owner(conn) != OWNER:
            return False
    except SessionStoreError:
        return False
    return all(set(cols) <= set(table_columns(conn, t)) for t, cols in TABLES.items())


def ensure_schema(conn: sqlite3.Connection, path: str) -> list[str]:
    """Create or upgrade the schema in one IMMEDIATE transaction; returns what changed.

    A newer (or foreign) schema is refused and the file is left untouched. An up-to-date
    database is only read: opening never takes the write lock then."""
    if is_current(conn):
        return []
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = read_version(conn)
        changes = _apply(conn, version, path)
        conn.execute("COMMIT")
        return changes
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def check_supported(conn: sqlite3.Connection, path: str, version: int | None = None) -> None:
    """Refuse (before anything is written) a schema that is newer or another program's."""
    version = read_version(conn) if version is None else version
    if version is None or version <= 11:
        return
    if version > SCHEMA_VERSION or owner(conn) != OWNER:
        raise SessionStoreError(
            f"{path} has session schema version {version}, written by a newer or different "
            f"program; this version of hermes reads versions up to {SCHEMA_VERSION}. The file "
            "was not changed. Upgrade hermes, or move the file aside and copy its sessions in "
            "with `hermes sessions import PATH`.")


def _apply(conn: sqlite3.Connection, version: int | None, path: str) -> list[str]:
    if version is None:
        for statement in split_sql(create_sql()):
            conn.execute(statement)
        _stamp(conn)
        return ["created"]
    check_supported(conn, path, version)
    if version == SCHEMA_VERSION:
        added = reconcile_columns(conn)  # a column added by a later release of this version
        return [f"added {c}" for c in added]
    changes = [f"added {c}" for c in reconcile_columns(conn)]
    for statement in split_sql(BASE + INDEXES):
        conn.execute(statement)
    for target in range(version + 1, SCHEMA_VERSION + 1):
        step = MIGRATIONS.get(target)
        if step is not None:
            step(conn)
            changes.append(f"migrated to {target}: {step.__name__.strip('_')}")
    conn.execute(TITLE_INDEX)  # after the titles are unique (step 4)
    _stamp(conn)
    return changes


def _stamp(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM schema_version")
    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
    conn.execute("INSERT OR REPLACE INTO state_meta (key, value) VALUES ('schema_owner', ?)",
                 (OWNER,))


_IDENT = re.compile(r"^[a-z_]+\Z")
assert all(_IDENT.match(c) for cols in TABLES.values() for c in cols)
