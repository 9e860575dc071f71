"""`hermes sessions ...` end to end through the real CLI root, on $HERMES_HOME/state.db."""

from __future__ import annotations

import json
import time

import pytest

from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore
from hermes_agent.cli.root import main

CALLS = [{"id": "c1", "type": "function",
          "function": {"name": "terminal", "arguments": "{\"command\": \"make test\"}"}}]


@pytest.fixture
def filled(home):
    store = SqliteSessionStore(home=home)
    a = store.create_session("sess_alpha", source="cli", model="claude", title="Fix Docker Build")
    store.append_message(a, "user", "Why does the docker build fail on chat-send?")
    store.append_message(a, "assistant", None, tool_calls=CALLS, reasoning="hidden thoughts")
    store.append_message(a, "tool", "make: ok", tool_name="terminal", tool_call_id="c1")
    store.append_message(a, "assistant", "The Dockerfile misses a COPY line.")
    store.update_token_counts(a, input_tokens=120, output_tokens=30, estimated_cost_usd=0.25)
    b = store.create_session("sess_beta", source="telegram", model="gpt",
                             started_at=time.time() - 400 * 86400)
    store.append_message(b, "user", "数据库迁移怎么做")
    store.end_session(b)
    store.close()
    return home


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["sessions", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_and_json(filled, capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0 and "sess_alpha" in out and "Fix Docker Build" in out
    code, out, _ = run(capsys, "list", "--json", "--source", "telegram")
    rows = json.loads(out)
    assert [r["id"] for r in rows] == ["sess_beta"] and rows[0]["preview"] == "数据库迁移怎么做"


def test_show_renders_conversation(filled, capsys):
    code, out, _ = run(capsys, "show", "Fix Docker Build")
    assert code == 0
    assert "user" in out and "Why does the docker build fail" in out
    assert "→ terminal(" in out and "make: ok" in out and "hidden thoughts" not in out
    _, out, _ = run(capsys, "show", "sess_al", "--reasoning")
    assert "hidden thoughts" in out
    _, out, _ = run(capsys, "show", "sess_alpha", "--json")
    assert len(json.loads(out)["messages"]) == 4
    code, _, err = run(capsys, "show", "nothing-like-this")
    assert code == 1 and "no session matches" in err


def test_show_gives_no_cost_without_a_model_call_and_zero_for_a_free_one(filled, capsys):
    _, out, _ = run(capsys, "show", "sess_beta")
    assert "· cost none (no model calls)" in out and "$0.0000" not in out
    store = SqliteSessionStore(home=filled)
    store.update_token_counts("sess_beta", input_tokens=5, output_tokens=1, api_call_count=1,
                              estimated_cost_usd=0.0, cost_status="included")
    store.close()
    _, out, _ = run(capsys, "show", "sess_beta")
    assert "· cost $0.0000 estimated" in out
    _, out, _ = run(capsys, "show", "sess_alpha")
    assert "· cost $0.2500 estimated" in out


def test_search(filled, capsys):
    _, out, _ = run(capsys, "search", "chat-send", "--json")
    hits = json.loads(out)
    assert hits[0]["session_id"] == "sess_alpha" and ">>>chat-send<<<" in hits[0]["snippet"]
    _, out, _ = run(capsys, "search", "迁移")
    assert "sess_beta" in out
    _, out, _ = run(capsys, "search", "docker", "--source", "telegram")
    assert "No matches." in out
    _, out, _ = run(capsys, "search", '"unclosed (query AND')
    assert "No matches." in out


def test_rename_stats_export_import_delete_prune(filled, capsys, tmp_path):
    code, out, _ = run(capsys, "rename", "sess_beta", "Migration help")
    assert code == 0 and "Migration help" in out
    code, _, err = run(capsys, "rename", "sess_alpha", "Migration help")
    assert code == 1 and "already used" in err
    _, out, _ = run(capsys, "stats", "--json")
    stats = json.loads(out)
    assert stats["total"]["sessions"] == 2 and stats["total"]["input_tokens"] == 120
    _, out, _ = run(capsys, "stats")
    assert "2 sessions, 5 messages" in out
    dump = tmp_path / "all.jsonl"
    code, _, err = run(capsys, "export", "-o", str(dump))
    assert code == 0 and "Exported 2" in err
    _, out, _ = run(capsys, "export", "sess_alpha")
    assert json.loads(out.splitlines()[0])["id"] == "sess_alpha"
    code, out, _ = run(capsys, "prune", "--older-than", "90", "--json")
    assert json.loads(out) == {"deleted": 1}
    code, out, _ = run(capsys, "delete", "sess_alpha", "--yes")
    assert code == 0 and "Deleted sess_alpha" in out
    code, out, _ = run(capsys, "import", str(dump), "--json")
    assert json.loads(out) == {"sessions": 2, "messages": 5, "skipped": 0}
    _, out, _ = run(capsys, "import", str(dump))
    assert "skipped 2 already present" in out
    _, out, _ = run(capsys, "show", "sess_alpha", "--json")
    assert json.loads(out)["messages"][1]["tool_calls"] == CALLS


def _wal_source(folder, fixture) -> "object":
    """A Hermes Agent 0.19 state.db in WAL mode (as the original keeps it) in ``folder``."""
    import shutil
    import sqlite3

    folder.mkdir(parents=True)
    shutil.copy(fixture, folder / "state.db")
    conn = sqlite3.connect(folder / "state.db")
    assert conn.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
    conn.close()  # the last connection checkpoints and removes -wal and -shm
    return folder / "state.db"


def _add_session_in_the_wal(path) -> "object":
    """A writer that keeps one more session in the -wal file (not checkpointed); returned
    open, so the database is in use."""
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('s_wal', 'cli', 1.0)")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) "
                 "VALUES ('s_wal', 'user', 'only in the wal', 2.0)")
    conn.commit()
    return conn


def test_import_creates_no_file_beside_its_source(home, capsys, tmp_path):
    import shutil
    from pathlib import Path

    fixture = Path(__file__).parent / "fixtures" / "hermes-0.19.0-state.db"
    clean = _wal_source(tmp_path / "odd ?#% name", fixture)  # closed cleanly: no -wal
    before = sorted(p.name for p in clean.parent.iterdir())
    digest = clean.read_bytes()
    code, out, _ = run(capsys, "import", str(clean), "--json")
    assert code == 0 and json.loads(out)["sessions"] == 3
    assert sorted(p.name for p in clean.parent.iterdir()) == before == ["state.db"]
    assert clean.read_bytes() == digest

    live = _wal_source(tmp_path / "live", fixture)
    writer = _add_session_in_the_wal(live)  # in use: -wal and -shm exist
    crashed = tmp_path / "crashed"  # a -wal left behind without -shm, as after a crash
    crashed.mkdir()
    shutil.copy(live, crashed / "state.db")
    shutil.copy(live.with_name("state.db-wal"), crashed / "state.db-wal")
    try:
        # the crashed copy's -wal holds s_wal: it is read, not skipped; then the live one
        for source, imported in ((crashed / "state.db", 1), (live, 0)):
            listing = sorted(p.name for p in source.parent.iterdir())
            files = {name: (source.parent / name).read_bytes() for name in listing
                     if not name.endswith("-shm")}
            code, out, err = run(capsys, "import", str(source), "--json")
            assert code == 0, err
            assert json.loads(out) == {"sessions": imported, "messages": imported,
                                       "skipped": 4 - imported}
            assert sorted(p.name for p in source.parent.iterdir()) == listing
            assert {n: (source.parent / n).read_bytes() for n in files} == files
        _, out, _ = run(capsys, "show", "s_wal")
        assert "only in the wal" in out
    finally:
        writer.close()
