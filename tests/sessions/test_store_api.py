"""The session store API on a real state.db: sessions, messages, titles, lineage, accounting,
listing, export and clean-up."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from hermes_agent.api import (SessionStore, SessionStoreError,
                                                             TitleConflictError, session_store)
from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore
from hermes_agent.testing import make_kernel

CALLS = [{"id": "call_1", "type": "function",
          "function": {"name": "web_search", "arguments": "{\"query\": \"GRPO papers\"}"}}]


def test_plugin_registers_a_lazy_sqlite_store(tmp_path):
    kernel = make_kernel(tmp_path, builtins=True)
    store = session_store(kernel)
    assert store.name == "sqlite" and isinstance(store, SessionStore)
    assert not (tmp_path / "state.db").exists()  # registering did not open the database
    sid = store.create_session(source="cli")
    assert (tmp_path / "state.db").exists() and store.get_session(sid)["source"] == "cli"
    store.close()


def test_schema_tables_indexes_pragmas(store):
    store.create_session("s", source="cli")
    conn = store.conn
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"sessions", "messages", "messages_fts", "messages_fts_trigram", "state_meta",
            "schema_version", "idx_sessions_source", "idx_sessions_parent", "idx_sessions_started",
            "idx_sessions_title_unique", "idx_messages_session"} <= names
    cols = {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
    assert {"billing_provider", "estimated_cost_usd", "cache_read_tokens", "reasoning_tokens",
            "api_call_count", "title", "pricing_version"} <= cols
    cols = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
    assert {"codex_reasoning_items", "codex_message_items", "reasoning_details",
            "reasoning_content", "finish_reason"} <= cols
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == 12
    tokenizers = conn.execute("SELECT sql FROM sqlite_master WHERE name LIKE 'messages_fts%' "
                              "AND type = 'table' AND sql LIKE 'CREATE VIRTUAL%'").fetchall()
    assert any("unicode61" in r[0] for r in tokenizers) and any("trigram" in r[0] for r in tokenizers)


def test_session_lifecycle(store):
    sid = store.create_session(source="telegram", model="m", user_id="u1",
                               model_config={"temperature": 0.2}, system_prompt="You are")
    row = store.get_session(sid)
    assert (row["source"], row["user_id"], json.loads(row["model_config"])) == (
        "telegram", "u1", {"temperature": 0.2})
    store.end_session(sid, "max_iterations")
    row = store.get_session(sid)
    assert row["end_reason"] == "max_iterations" and row["ended_at"] >= row["started_at"]
    store.reopen_session(sid)
    assert store.get_session(sid)["ended_at"] is None
    store.update_system_prompt(sid, "new prompt")
    store.update_session_model(sid, "m2")
    assert store.get_session(sid)["system_prompt"] == "new prompt"
    assert store.get_session(sid)["model"] == "m2"
    with pytest.raises(SessionStoreError, match="already exists"):
        store.create_session(sid, source="cli")
    with pytest.raises(SessionStoreError, match="no session"):
        store.end_session("missing")
    with pytest.raises(SessionStoreError, match="no parent session"):
        store.create_session(source="cli", parent_session_id="missing")


def test_append_every_column_and_read_back(store):
    sid = store.create_session(source="cli")
    store.append_message(sid, "user", "hi", token_count=3, timestamp=100.0)
    mid = store.append_message(
        sid, "assistant", None, tool_calls=CALLS, token_count=9, finish_reason="tool_calls",
        reasoning="think", reasoning_content="rc", reasoning_details=[{"type": "summary"}],
        codex_reasoning_items=[{"id": "r1"}], codex_message_items=[{"id": "m1"}], timestamp=101)
    store.append_message(sid, "tool", '{"ok": true}', tool_name="web_search",
                         tool_call_id="call_1", timestamp=102)
    store.append_message(sid, "user", [{"type": "text", "text": "look"},
                                       {"type": "image_url", "image_url": {"url": "x"}}])
    msgs = store.get_messages(sid)
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "user"]
    assistant = msgs[1]
    assert assistant["id"] == mid and assistant["tool_calls"] == CALLS
    assert (assistant["reasoning"], assistant["reasoning_content"], assistant["finish_reason"],
            assistant["token_count"]) == ("think", "rc", "tool_calls", 9)
    assert assistant["reasoning_details"] == [{"type": "summary"}]
    assert assistant["codex_reasoning_items"] == [{"id": "r1"}]
    assert msgs[3]["content"][1]["type"] == "image_url"
    row = store.get_session(sid)
    assert (row["message_count"], row["tool_call_count"]) == (4, 1)
    assert store.get_messages(sid, limit=2, offset=1)[0]["id"] == mid
    with pytest.raises(SessionStoreError, match="create it with create_session"):
        store.append_message("nope", "user", "x")


def test_conversation_replays_openai_format_without_reasoning(store):
    sid = store.create_session(source="cli")
    store.append_message(sid, "user", "q")
    store.append_message(sid, "assistant", None, tool_calls=CALLS, reasoning="secret")
    store.append_message(sid, "tool", "result", tool_name="web_search", tool_call_id="call_1")
    store.append_message(sid, "assistant", "answer", reasoning="more", finish_reason="stop")
    conv = store.get_messages_as_conversation(sid)
    assert conv == [{"role": "user", "content": "q"},
                    {"role": "assistant", "content": None, "tool_calls": CALLS},
                    {"role": "tool", "content": "result", "tool_call_id": "call_1",
                     "tool_name": "web_search"},
                    {"role": "assistant", "content": "answer"}]


def test_lone_surrogates_are_stored(store):
    sid = store.create_session(source="cli")
    store.append_message(sid, "tool", "bad \ud800 text", tool_name="web")
    assert store.get_messages(sid)[0]["content"] == "bad \ufffd text"


def test_titles_unique_resolve_and_lineage_numbering(store):
    a = store.create_session(source="cli", started_at=time.time() - 100)
    b = store.create_session(source="cli")
    assert store.set_session_title(a, "  Fix\n Docker   Build ") == "Fix Docker Build"
    with pytest.raises(TitleConflictError, match="already used"):
        store.set_session_title(b, "Fix Docker Build")
    assert store.get_next_title_in_lineage("Fix Docker Build") == "Fix Docker Build #2"
    store.set_session_title(b, "Fix Docker Build #2")
    assert store.get_next_title_in_lineage("Fix Docker Build") == "Fix Docker Build #3"
    assert store.get_next_title_in_lineage("Fix Docker Build #2") == "Fix Docker Build #3"
    assert store.resolve_session_by_title("Fix Docker Build") == b  # newest in the lineage
    assert store.resolve_session_by_title("nothing") is None
    assert store.resolve_session_id(a[:-3]) == a and store.resolve_session_id(b) == b
    assert store.resolve_session_id("Fix Docker Build") == b
    store.set_session_title(a, "")
    assert store.get_session(a)["title"] is None
    assert len(store.set_session_title(b, "x" * 300)) == 100


def test_lineage_compression_vs_delegation(store):
    root = store.create_session(source="cli", title="Long task")
    sub = store.create_session(source="subagent", parent_session_id=root)  # while running
    store.end_session(root, "compression")
    cont = store.create_session(source="cli", parent_session_id=root,
                                title=store.get_next_title_in_lineage("Long task"))
    store.end_session(cont, "compression")
    tip = store.create_session(source="cli", parent_session_id=cont)
    assert store.get_compression_tip(root) == tip and store.get_compression_tip(tip) == tip
    assert [s["id"] for s in store.get_ancestors(tip)] == [cont, root]
    rel = {d["id"]: d["relation"] for d in store.get_descendants(root)}
    assert rel == {sub: "delegation", cont: "compression", tip: "compression"}
    assert store.is_compression_continuation(cont) and not store.is_compression_continuation(sub)
    assert store.resolve_session_by_title("Long task") == cont


def test_list_sessions_rich_projects_chains_onto_tips(store):
    root = store.create_session(source="cli", started_at=time.time() - 50)
    store.append_message(root, "user", "  first   question about\nrust lifetimes ")
    store.end_session(root, "compression")
    tip = store.create_session(source="cli")
    store.conn.execute("UPDATE sessions SET parent_session_id = ? WHERE id = ?", (root, tip))
    store.append_message(tip, "assistant", "later", timestamp=time.time() + 5)
    other = store.create_session(source="telegram", started_at=time.time() - 10)
    child = store.create_session(source="subagent", parent_session_id=other)
    rows = store.list_sessions_rich()
    assert [r["id"] for r in rows] == [other, tip]  # newest chain start first
    assert rows[1]["preview"] == "first question about rust lifetimes"
    assert rows[1]["lineage"] == [root, tip] and rows[1]["last_active"] > time.time()
    assert len(store.list_sessions_rich(include_children=True)) == 3
    assert len(store.list_sessions_rich(project_compression_tips=False)) == 3
    assert [r["id"] for r in store.list_sessions_rich(source="telegram")] == [other]
    assert [r["id"] for r in store.list_sessions_rich(exclude_sources=["cli"])] == [other]
    assert [r["id"] for r in store.list_sessions(limit=1)] == [child]


def test_token_and_cost_accounting_and_stats(store):
    sid = store.create_session(source="cli", model="claude")
    for _ in range(2):
        store.update_token_counts(sid, input_tokens=100, output_tokens=20, cache_read_tokens=50,
                                  cache_write_tokens=5, reasoning_tokens=7, api_call_count=1,
                                  estimated_cost_usd=0.01, billing_provider="anthropic",
                                  cost_status="estimated")
    row = store.get_session(sid)
    assert (row["input_tokens"], row["output_tokens"], row["cache_read_tokens"],
            row["cache_write_tokens"], row["reasoning_tokens"], row["api_call_count"]) == (
        200, 40, 100, 10, 14, 2)
    assert row["estimated_cost_usd"] == pytest.approx(0.02)
    assert (row["billing_provider"], row["cost_status"]) == ("anthropic", "estimated")
    store.update_token_counts(sid, input_tokens=5, actual_cost_usd=1.5, absolute=True)
    row = store.get_session(sid)
    assert (row["input_tokens"], row["output_tokens"], row["actual_cost_usd"]) == (5, 0, 1.5)
    other = store.create_session(source="telegram", model="gpt")
    store.update_token_counts(other, input_tokens=1000, estimated_cost_usd=0.5)
    store.append_message(other, "user", "x")
    stats = store.usage_stats()
    assert stats["total"]["sessions"] == 2 and stats["total"]["messages"] == 1
    assert stats["by_model"][0]["model"] == "gpt"
    assert {r["source"] for r in stats["by_source"]} == {"cli", "telegram"}
    assert stats["top_sessions"][0]["id"] == other
    assert store.usage_stats(source="cli")["total"]["sessions"] == 1


def test_export_prune_clear_delete(store, integrity):
    old = store.create_session(source="telegram", started_at=time.time() - 200 * 86400)
    store.append_message(old, "user", "ancient history")
    store.end_session(old)
    live = store.create_session(source="telegram", started_at=time.time() - 200 * 86400)
    cli = store.create_session(source="cli", started_at=time.time() - 200 * 86400)
    store.end_session(cli)
    child = store.create_session(source="cli", parent_session_id=old)
    exported = store.export_session(old)
    assert exported["messages"][0]["content"] == "ancient history"
    assert [e["id"] for e in store.export_all(source="telegram")] == [old, live]
    assert store.prune_sessions(older_than_days=90, source="telegram") == 1
    assert store.get_session(old) is None and store.get_session(live) is not None
    assert store.get_session(child)["parent_session_id"] is None
    assert store.search_messages("ancient") == []
    assert store.prune_sessions(older_than_days=90) == 1  # the ended cli one; live stays
    store.append_message(live, "user", "keep the session")
    assert store.clear_messages(live) == 1
    assert store.get_session(live)["message_count"] == 0 and store.get_messages(live) == []
    assert store.delete_session(live) is True and store.delete_session(live) is False
    assert integrity(store.path) == "ok"


def test_replace_messages_rewrites_transcript(store):
    sid = store.create_session(source="cli")
    for i in range(3):
        store.append_message(sid, "user", f"turn {i} zebra")
    store.replace_messages(sid, [{"role": "user", "content": "only one giraffe"},
                                 {"role": "assistant", "content": None, "tool_calls": CALLS}])
    assert [m["content"] for m in store.get_messages(sid)] == ["only one giraffe", None]
    assert store.get_session(sid)["message_count"] == 2
    assert store.get_session(sid)["tool_call_count"] == 1
    assert store.search_messages("zebra") == [] and len(store.search_messages("giraffe")) == 1


def test_fts_triggers_follow_update_and_delete(store, integrity):
    sid = store.create_session(source="cli")
    mid = store.append_message(sid, "user", "alpha 数据库迁移")
    store.conn.execute("UPDATE messages SET content = 'beta 数据同步完成' WHERE id = ?", (mid,))
    assert store.search_messages("alpha") == [] and store.search_messages("数据库") == []
    assert len(store.search_messages("beta")) == 1 and len(store.search_messages("同步完")) == 1
    store.conn.execute("DELETE FROM messages WHERE id = ?", (mid,))
    assert store.search_messages("beta") == [] and store.search_messages("同步完") == []
    assert integrity(store.path) == "ok"


def test_reopening_does_not_take_the_write_lock(tmp_path):
    first = SqliteSessionStore(tmp_path / "state.db")
    first.create_session("a", source="cli")
    blocker = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        second = SqliteSessionStore(tmp_path / "state.db")
        assert second.get_session("a")["source"] == "cli"
        second.close()
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        first.close()


def test_upkeep_checkpoints_keep_the_wal_small_and_survive_reopen(tmp_path):
    path = tmp_path / "state.db"
    store = SqliteSessionStore(path)
    sid = store.create_session(source="cli")
    text = "a message long enough to dirty several pages of the indexes " * 20
    for round_no in range(2):  # the second round runs after close() and reopening
        for i in range(1500):
            store.append_message(sid, "user", f"{round_no} {i} {text}")
        time.sleep(0.3)  # let the upkeep thread finish its last step
        wal = path.with_name("state.db-wal").stat().st_size
        assert wal < 40 * 1024 * 1024, wal  # 78 MB when nothing is checkpointed
        store.close()
    assert len(store.get_messages(sid)) == 3000  # reopened on use
    store.close()


def test_writers_checkpoint_themselves_when_the_upkeep_thread_is_starved(tmp_path, monkeypatch):
    from hermes_agent.builtin_plugins.sessions import db

    monkeypatch.setattr(db.Upkeep, "_run", lambda self: None)  # the thread never gets to run
    path = tmp_path / "state.db"
    store = SqliteSessionStore(path)
    sid = store.create_session(source="cli")
    text = "a message long enough to dirty several pages of the indexes " * 20
    for i in range(1500):
        store.append_message(sid, "user", f"{i} {text}")
    wal = path.with_name("state.db-wal").stat().st_size
    assert wal < 24 * 1024 * 1024, wal  # 78 MB when nothing is checkpointed
    assert len(store.get_messages(sid)) == 1500
    store.close()


def test_idle_compaction_merges_fts_segments(tmp_path, monkeypatch):
    from hermes_agent.builtin_plugins.sessions import db

    monkeypatch.setattr(db, "IDLE_S", 0.2)
    store = SqliteSessionStore(tmp_path / "state.db")
    sid = store.create_session(source="cli")
    for i in range(400):
        store.append_message(sid, "user", f"message {i} about docker and kubernetes {i * 7}")

    def segments() -> int:
        return store.conn.execute("SELECT COUNT(DISTINCT segid) FROM messages_fts_idx").fetchone()[0]

    busy = segments()
    deadline = time.time() + 10
    while segments() > 2 and time.time() < deadline:
        time.sleep(0.1)
    assert busy > 4 and segments() <= 2, (busy, segments())
    assert len(store.search_messages("kubernetes", limit=500)) == 400
    store.close()
