"""`hermes sessions migrate` through the real CLI: state.db into PostgreSQL and back, resumed
after an interruption, two state.db files merged into one store, verified by counts and
checksums, the sources never changed."""

from __future__ import annotations

import hashlib
import importlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.cli.root import main
from hermes_agent.builtin_plugins.sessions.migrate import checksum, is_dsn
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


def _jsonl(store, message_ids: bool = True) -> str:
    """The export, or with ``message_ids=False`` the export without message ids (each store
    numbers messages itself)."""
    out = io.StringIO()
    records = store.export_all()
    if not message_ids:
        records = ({**r, "messages": [{k: v for k, v in m.items() if k != "id"}
                                      for m in r["messages"]]} for r in records)
    write_jsonl(records, out)
    return out.getvalue()


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sums(store) -> dict[str, str]:
    return {r["id"]: checksum(r) for r in store.export_all()}


def test_state_db_to_postgres_and_back(home, pg_schemas, capsys, tmp_path):
    source_path = home / "state.db"
    _fill(SqliteSessionStore(source_path))
    original = SqliteSessionStore(source_path)
    expected, exported = _sums(original), _jsonl(original, message_ids=False)
    original.close()
    before = _digest(source_path)
    dsn = pg_schemas("target")

    assert main(["sessions", "migrate", "--to", dsn, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["copied"], report["skipped"], report["copied_messages"]) == (30, 0, 90)
    assert (report["sessions"], report["messages"], report["ok"]) == (30, 90, True)
    assert _digest(source_path) == before  # the source was only read

    target = PostgresSessionStore(dsn)
    assert _sums(target) == expected and _jsonl(target, message_ids=False) == exported
    assert [s["id"] for s in target.get_ancestors("s010")] == ["s009", "s004"]  # lineage
    assert target.resolve_session_by_title("Topic 3") == "s003"
    assert {h["session_id"] for h in target.search_messages("terminal", limit=50)} == set(
        expected)
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
    assert _jsonl(returned, message_ids=False) == exported  # identical after the round trip
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
    assert "1 session(s) already in" in err and "other content" in err and "s002" in err
    assert "nothing was overwritten" in err and "run the command again" in err
    target = PostgresSessionStore(dsn)
    assert target.get_messages("s002")[-1]["content"] == "written only in the target"
    target.close()


def test_a_password_in_the_target_is_masked(home, capsys):
    _fill(SqliteSessionStore(home / "state.db"), sessions=1)
    code = main(["sessions", "migrate", "--to",
                 "postgresql://hermes:hunter2-secret@127.0.0.1:1/none"])
    err = capsys.readouterr().err
    assert code == 1 and "hunter2-secret" not in err and "hermes:***@127.0.0.1:1" in err


def _state_db(path: Path, sessions: list[tuple[str, dict[str, Any], list[str]]]) -> str:
    """A state.db holding ``(id, create_session arguments, message texts)``; its digest."""
    store = SqliteSessionStore(path)
    for sid, args, texts in sessions:
        store.create_session(sid, **args)
        for n, text in enumerate(texts):
            store.append_message(sid, "user" if n % 2 == 0 else "assistant", text,
                                 timestamp=args["started_at"] + n)
        if sid.endswith("_root"):
            store.end_session(sid, "compression")
    store.close()
    return _digest(path)


CHILD = 5e9  # children start after their parents ended (now): compression continuations
SHARED = ("shared", {"source": "cli", "title": "Shared plan", "started_at": 100.0},
          ["the shared question", "the shared answer"])


@pytest.fixture(params=["postgres", "sqlite"])
def merge_target(request, tmp_path) -> tuple[str, Any]:
    """(where to migrate, a function opening a store there)."""
    if request.param == "postgres":
        dsn = request.getfixturevalue("pg_schemas")("merged")
        return dsn, lambda: PostgresSessionStore(dsn)
    path = tmp_path / "merged" / "state.db"
    return str(path), lambda: SqliteSessionStore(path)


def test_two_state_dbs_merge_into_one_store(home, tmp_path, capsys, merge_target, integrity):
    """A laptop's and a server's state.db (message ids overlapping, one session in both,
    one diverged, a title in both) into one store: session ids kept, messages numbered by
    the target, lineage and search intact; identical sessions skipped, the diverged one
    refused by name, the taken title renamed, and a second run changes nothing."""
    laptop, server = tmp_path / "laptop.db", tmp_path / "server.db"
    before = {laptop: _state_db(laptop, [
        SHARED,
        ("lap_root", {"source": "cli", "started_at": 200.0}, ["laptop docker question"]),
        ("lap_child", {"source": "cli", "parent_session_id": "lap_root", "started_at": CHILD},
         ["数据库迁移 on the laptop", "laptop answer"]),
        ("clash", {"source": "cli", "title": "Deploy", "started_at": 400.0}, ["laptop deploy"]),
        ("diverged", {"source": "cli", "started_at": 500.0}, ["first words"])]),
        server: _state_db(server, [
        ("srv_root", {"source": "telegram", "started_at": 150.0}, ["server docker question"]),
        SHARED,
        ("srv_child", {"source": "telegram", "parent_session_id": "srv_root",
                       "started_at": CHILD + 1}, ["server follow-up", "server answer"]),
        ("srv_deploy", {"source": "telegram", "title": "Deploy", "started_at": 350.0},
         ["server deploy"]),
        ("diverged", {"source": "cli", "started_at": 500.0}, ["first words", "more words"])])}
    where, open_target = merge_target

    assert main(["sessions", "migrate", "--from", str(laptop), "--to", where, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["copied"], report["copied_messages"], report["ok"]) == (5, 7, True)

    assert main(["sessions", "migrate", "--from", str(server), "--to", where, "--json"]) == 1
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert (report["copied"], report["skipped"], report["refused"]) == (3, 1, ["diverged"])
    assert report["renamed"] == [{"id": "srv_deploy", "title": "Deploy #2",
                                  "source_title": "Deploy"}]
    assert "1 session(s) already in" in captured.err and "diverged" in captured.err

    target = open_target()
    records = {r["id"]: r for r in target.export_all()}
    assert set(records) == {"shared", "lap_root", "lap_child", "clash", "diverged",
                            "srv_root", "srv_child", "srv_deploy"}
    ids = [m["id"] for r in records.values() for m in r["messages"]]
    assert len(ids) == len(set(ids)) == 11  # every message once, numbered by the target
    for path in (laptop, server):
        source = SqliteSessionStore(path)
        for record in source.export_all():
            if record["id"] != "diverged" or path == laptop:  # the laptop's copy stays
                copy = records[record["id"]]
                assert [m["content"] for m in copy["messages"]] == [
                    m["content"] for m in record["messages"]]
                assert copy["message_count"] == len(record["messages"])
        source.close()
    assert [m["content"] for m in records["diverged"]["messages"]] == ["first words"]
    assert target.get_compression_tip("srv_root") == "srv_child"
    assert [s["id"] for s in target.get_ancestors("lap_child")] == ["lap_root"]
    assert {h["session_id"] for h in target.search_messages("docker")} == {"lap_root",
                                                                             "srv_root"}
    assert [h["session_id"] for h in target.search_messages("数据库")] == ["lap_child"]
    assert target.resolve_session_by_title("Deploy") == "clash"
    assert target.resolve_session_by_title("Deploy #2") == "srv_deploy"
    assert target.append_message("srv_child", "user", "later") > max(ids)
    target.delete_session("clash")  # as if an interrupted run never copied it
    target.close()

    # again: what is there and identical (the renamed title too) is skipped, the missing one
    # copied; a session written in the target since (srv_child) is refused like the diverged
    assert main(["sessions", "migrate", "--from", str(laptop), "--to", where, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["copied"], report["skipped"], report["refused"]) == (1, 4, [])
    assert main(["sessions", "migrate", "--from", str(server), "--to", where, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["copied"], report["skipped"]) == (0, 3)
    assert report["refused"] == report["mismatched"] == ["diverged", "srv_child"]
    assert all(_digest(path) == digest for path, digest in before.items())  # only read
    if not is_dsn(where):
        assert integrity(Path(where)) == "ok"
