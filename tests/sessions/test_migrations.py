"""Older state.db shapes are upgraded in place without losing a row; newer or foreign ones are
refused untouched; a Hermes Agent 0.19.0 state.db is imported with `hermes sessions import`."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from hermes_agent.api import SessionStoreError
from hermes_agent.builtin_plugins.sessions.schema import SCHEMA_VERSION
from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore
from hermes_agent.builtin_plugins.sessions.transfer import import_state_db

FIXTURES = Path(__file__).parent / "fixtures"

V1 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT,
    model_config TEXT, system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL,
    ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0, FOREIGN KEY (parent_session_id) REFERENCES sessions(id));
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL, content TEXT,
    tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL,
    token_count INTEGER);
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content=messages, content_rowid=id);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES('delete', old.id, old.content);
END;
"""
V3_COLUMNS = "ALTER TABLE sessions ADD COLUMN title TEXT; " \
             "ALTER TABLE messages ADD COLUMN finish_reason TEXT;"
V5_EXTRA = ("CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions(title) WHERE title IS NOT "
            "NULL; " + " ".join(f"ALTER TABLE sessions ADD COLUMN {c};" for c in (
                "cache_read_tokens INTEGER DEFAULT 0", "cache_write_tokens INTEGER DEFAULT 0",
                "reasoning_tokens INTEGER DEFAULT 0", "billing_provider TEXT",
                "estimated_cost_usd REAL", "cost_status TEXT")))
V11_FTS = """
DROP TRIGGER messages_fts_insert; DROP TRIGGER messages_fts_delete; DROP TABLE messages_fts;
ALTER TABLE messages ADD COLUMN reasoning TEXT;
ALTER TABLE sessions ADD COLUMN api_call_count INTEGER DEFAULT 0;
CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE VIRTUAL TABLE messages_fts USING fts5(content);
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, COALESCE(new.content, '') || ' ' ||
        COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, ''));
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (new.id, COALESCE(new.content, ''));
END;
"""
SHAPES = {1: V1, 3: V1 + V3_COLUMNS, 5: V1 + V3_COLUMNS + V5_EXTRA,
          11: V1 + V3_COLUMNS + V5_EXTRA + V11_FTS}


def old_db(path: Path, version: int, duplicate_titles: bool = False) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(SHAPES[version])
    conn.execute("INSERT INTO schema_version VALUES (?)", (version,))
    for i in range(30):
        conn.execute("INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', ?)",
                     (f"s{i}", 1000.0 + i))
        for j in range(5):
            conn.execute("INSERT INTO messages (session_id, role, content, timestamp, tool_name) "
                         "VALUES (?, 'user', ?, ?, ?)",
                         (f"s{i}", f"message {i}-{j} about kubernetes 部署流程说明",
                          2000.0 + i * 10 + j, "terminal" if j == 4 else None))
    if duplicate_titles and version >= 3:
        conn.execute("UPDATE sessions SET title = 'Same title' WHERE id IN ('s1', 's2', 's3')")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("version", sorted(SHAPES))
def test_older_shape_is_upgraded_without_losing_rows(tmp_path, version, integrity):
    path = old_db(tmp_path / "state.db", version, duplicate_titles=version == 3)
    store = SqliteSessionStore(path)
    assert len(store.list_sessions(limit=100)) == 30
    assert any(c.startswith("migrated to 12") for c in store.schema_changes)
    conn = store.conn
    assert conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 150
    assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    assert len(store.search_messages("kubernetes", limit=200)) == 150
    assert len(store.search_messages("terminal", limit=200)) == 30  # tool_name is indexed now
    assert len(store.search_messages("部署流程", limit=200)) == 150  # trigram backfilled
    sid = store.create_session(source="cli", title="Same title" if version != 3 else "New")
    store.append_message(sid, "assistant", "fresh row", reasoning="r", finish_reason="stop")
    assert store.get_messages(sid)[0]["finish_reason"] == "stop"
    if version == 3:
        titles = sorted(r["title"] for r in store.list_sessions(limit=100) if r["title"])
        assert titles == ["New", "Same title", "Same title #2", "Same title #3"]
    store.close()
    assert integrity(path) == "ok"
    again = SqliteSessionStore(path)  # a second open changes nothing
    assert again.get_session("s0") is not None and again.schema_changes == []
    again.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_newer_schema_is_refused_and_untouched(tmp_path):
    path = tmp_path / "state.db"
    store = SqliteSessionStore(path)
    store.create_session("keep", source="cli")
    store.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE schema_version SET version = 99")
    conn.commit()
    conn.close()
    before = _digest(path)
    with pytest.raises(SessionStoreError, match="schema version 99.*not changed"):
        SqliteSessionStore(path).get_session("keep")
    assert _digest(path) == before


def test_hermes_019_state_db_is_refused_in_place_and_imported(tmp_path, capsys, home):
    original = tmp_path / "old.db"
    shutil.copy(FIXTURES / "hermes-0.19.0-state.db", original)
    before = _digest(original)
    with pytest.raises(SessionStoreError, match="version 22.*hermes sessions import"):
        SqliteSessionStore(original).get_session("s_root")
    assert _digest(original) == before

    from hermes_agent.cli.root import main

    assert main(["sessions", "import", str(original)]) == 0
    assert "Imported 3 session(s) and 4 message(s)" in capsys.readouterr().out
    assert _digest(original) == before  # read only
    store = SqliteSessionStore(home=home)
    root = store.get_session("s_root")
    assert (root["title"], root["input_tokens"], root["api_call_count"], root["end_reason"]) == (
        "Fix Docker Build", 1200, 2, "compression")
    assert [m["content"] for m in store.get_messages("s_root")] == ["[summary] docker COPY fix"]
    child = store.get_messages("s_child")
    assert child[0]["content"] == "数据库迁移怎么做" and child[1]["content"][1]["type"] == "image_url"
    assert store.get_compression_tip("s_root") == "s_child"
    assert store.resolve_session_by_title("Fix Docker Build") == "s_child"
    assert store.get_session("s_tg")["user_id"] == "42"
    assert store.search_messages("迁移")[0]["session_id"] == "s_child"
    store.close()


def test_import_can_include_inactive_rows_and_skips_existing(tmp_path):
    store = SqliteSessionStore(tmp_path / "state.db")
    stats = import_state_db(store, FIXTURES / "hermes-0.19.0-state.db", include_inactive=True)
    assert stats == {"sessions": 3, "messages": 8, "skipped": 0}
    tools = [m for m in store.get_messages("s_root") if m["role"] == "assistant"]
    assert tools[0]["tool_calls"][0]["function"]["name"] == "terminal"
    again = import_state_db(store, FIXTURES / "hermes-0.19.0-state.db")
    assert again == {"sessions": 0, "messages": 0, "skipped": 3}
    with pytest.raises(SessionStoreError, match="does not exist"):
        import_state_db(store, tmp_path / "missing.db")
    store.close()
