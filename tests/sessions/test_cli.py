"""`hermes sessions ...` end to end through the real CLI root, on $HERMES_HOME/state.db."""

from __future__ import annotations

import json
import time

import pytest

from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore
from hermes_agent.cli import main

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
