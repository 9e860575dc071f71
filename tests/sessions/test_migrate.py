"""`hermes sessions migrate` through the real CLI: state.db into PostgreSQL and back, resumed
after an interruption, verified by counts and checksums, the source never changed."""

from __future__ import annotations

import hashlib
import importlib
import io
import json

from hermes_agent.builtin_plugins.cli_root import main
from hermes_agent.builtin_plugins.sessions.migrate import checksum
from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore
from hermes_agent.builtin_plugins.sessions.transfer import write_jsonl

PostgresSessionStore = importlib.import_module(
    "hermes_agent.plugins.session-stores.postgres.store").PostgresSessionStore
CALLS = [{"id": "c1", "type": "function",
          "function": {"name": "terminal", "arguments": "{\"command\": \"make test\"}"}}]


def _fill(store: SqliteSessionStore, sessions: int = 30) -> None:
    """Sessions whose messages interleave (ids are not contiguous per session)."""
    parent = None
    ids = []
    for n in range(sessions):
        ids.append(store.create_session(
            f"s{n:03d}", source="cli" if n % 3 else "telegram", model="m",
            title=f"Topic {n % 7}" if n < 7 else None, parent_session_id=parent,
            started_at=1000.0 + n))
        if n % 5 == 4:
            parent = ids[-1]
    for n, sid in enumerate(ids):
        store.append_message(sid, "user", f"question {n} about 数据库 and docker",
                             timestamp=2000.0 + n)
    for n, sid in enumerate(reversed(ids)):
        store.append_message(sid, "assistant", None, tool_calls=CALLS, reasoning="why",
                             timestamp=3000.5 + n)
        store.append_message(sid, "user", [{"type": "text", "text": f"part {n}"}],
                             timestamp=3000.7 + n)
    for n, sid in enumerate(ids):
        store.update_token_counts(sid, input_tokens=n, estimated_cost_usd=0.001 * n)
        if n % 5 == 4:
            store.end_session(sid, "compression")
    store.close()


def _jsonl(store) -> str:
    out = io.StringIO()
    write_jsonl(store.export_all(), out)
    return out.getvalue()


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sums(store) -> dict[str, str]:
    return {r["id"]: checksum(r) for r in store.export_all()}


def test_state_db_to_postgres_and_back(home, pg_schemas, capsys, tmp_path):
    source_path = home / "state.db"
    _fill(SqliteSessionStore(source_path))
    original = SqliteSessionStore(source_path)
    expected, exported = _sums(original), _jsonl(original)
    original.close()
    before = _digest(source_path)
    dsn = pg_schemas("target")

    assert main(["sessions", "migrate", "--to", dsn, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["copied"], report["skipped"], report["copied_messages"]) == (30, 0, 90)
    assert (report["sessions"], report["messages"], report["ok"]) == (30, 90, True)
    assert _digest(source_path) == before  # the source was only read

    target = PostgresSessionStore(dsn)
    assert _sums(target) == expected and _jsonl(target) == exported  # ids kept too
    assert [s["id"] for s in target.get_ancestors("s010")] == ["s009", "s004"]  # lineage
    assert target.resolve_session_by_title("Topic 3") == "s003"
    assert [h["session_id"] for h in target.search_messages("terminal", sort="oldest",
                                                            limit=2)] == ["s029", "s028"]
    # an interrupted run: some sessions never arrived. Running again copies only those.
    target.delete_session("s010")
    target.delete_session("s029")
    target.close()
    assert main(["sessions", "migrate", "--to", dsn, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["copied"], report["skipped"], report["ok"]) == (2, 28, True)

    # and back into a new state.db, from the PostgreSQL store
    back = tmp_path / "back" / "state.db"
    assert main(["sessions", "migrate", "--from", dsn, "--to", str(back)]) == 0
    assert "Verified 30 session(s) and 90 message(s)" in capsys.readouterr().out
    returned = SqliteSessionStore(back)
    assert _jsonl(returned) == exported  # byte-identical exports after the round trip
    returned.close()


def test_a_different_copy_is_reported_not_overwritten(home, pg_schemas, capsys):
    _fill(SqliteSessionStore(home / "state.db"), sessions=6)
    dsn = pg_schemas("target")
    assert main(["sessions", "migrate", "--to", dsn]) == 0
    capsys.readouterr()
    target = PostgresSessionStore(dsn)
    target.append_message("s002", "user", "written only in the target")
    target.close()
    assert main(["sessions", "migrate", "--to", dsn]) == 1
    err = capsys.readouterr().err
    assert "1 different" in err and "s002" in err and "run the command again" in err
    target = PostgresSessionStore(dsn)
    assert target.get_messages("s002")[-1]["content"] == "written only in the target"
    target.close()


def test_a_password_in_the_target_is_masked(home, capsys):
    _fill(SqliteSessionStore(home / "state.db"), sessions=1)
    code = main(["sessions", "migrate", "--to",
                 "postgresql://hermes:hunter2-secret@127.0.0.1:1/none"])
    err = capsys.readouterr().err
    assert code == 1 and "hunter2-secret" not in err and "hermes:***@127.0.0.1:1" in err
