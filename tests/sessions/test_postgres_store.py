"""What only the postgres store has: selection by config, clear errors that write nothing,
migrations once across processes, lost connections retried, hostile queries fuzzed on the
real server. Each test uses schemas of its own; all skip when no server answers."""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_agent.api import SessionStoreError, session_store
from hermes_agent.testing import make_kernel

STORE_MODULE = "hermes_agent.plugins.session-stores.postgres.store"
PostgresSessionStore = importlib.import_module(STORE_MODULE).PostgresSessionStore


def _psycopg() -> Any:
    return pytest.importorskip("psycopg")


def test_selected_by_config_and_lazy(tmp_path, pg_schemas):
    dsn = pg_schemas("main")
    kernel = make_kernel(tmp_path, config={"sessions": {"store": "postgres", "dsn": dsn}},
                         builtins=True)
    store = session_store(kernel)
    assert store.name == "postgres" and store._db is None  # nothing reached at registration
    sid = store.create_session(source="cli")
    assert store.get_session(sid)["source"] == "cli"
    store.close()
    env_kernel = make_kernel(tmp_path / "env", config={"sessions": {"store": "postgres"}},
                             env={"HERMES_POSTGRES_DSN": dsn}, builtins=True)
    again = session_store(env_kernel)
    assert again.get_session(sid)["source"] == "cli"  # the same database, through the env
    again.close()


def test_no_dsn_says_where_to_set_it():
    with pytest.raises(SessionStoreError, match="sessions.dsn.*HERMES_POSTGRES_DSN"):
        PostgresSessionStore("").list_sessions()


@pytest.mark.parametrize("dsn,fix", [
    ("postgresql://hermes:hunter2-secret@127.0.0.1:1/test", "start the server"),
    ("postgresql://no_such_role_x:hunter2-secret@{host}/test", "user name and password"),
    ("postgresql://postgres:hunter2-secret@{host}/no_such_database_x", "create the database"),
])
def test_unreachable_or_refused_names_the_masked_dsn(postgres_dsn, dsn, fix):
    psycopg = _psycopg()
    info = psycopg.conninfo.conninfo_to_dict(postgres_dsn)
    dsn = dsn.format(host=f"{info.get('host', '127.0.0.1')}:{info.get('port', 5432)}")
    store = PostgresSessionStore(dsn)
    with pytest.raises(SessionStoreError) as raised:
        store.create_session("never", source="cli")
    message = str(raised.value)
    assert "hunter2-secret" not in message and ":***@" in message
    assert "Nothing was written" in message and fix in message
    masked = PostgresSessionStore("host=127.0.0.1 port=1 password='hunter2 secret' dbname=x")
    with pytest.raises(SessionStoreError) as raised:
        masked.list_sessions()
    assert "hunter2" not in str(raised.value) and "password=***" in str(raised.value)


def _tables(dsn: str) -> dict[str, int]:
    psycopg = _psycopg()
    with psycopg.connect(dsn) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("sessions", "messages", "hermes_schema")}


def test_a_newer_schema_is_refused_and_left_untouched(pg_schemas):
    dsn = pg_schemas("main")
    store = PostgresSessionStore(dsn)
    store.create_session("kept", source="cli")
    store.close()
    psycopg = _psycopg()
    with psycopg.connect(dsn) as conn:
        conn.execute("UPDATE hermes_schema SET version = 99")
    before = _tables(dsn)
    newer = PostgresSessionStore(dsn)
    with pytest.raises(SessionStoreError, match=r"schema version 99.*up to 3.*Nothing was "
                       r"written") as raised:
        newer.append_message("kept", "user", "must not be written")
    assert "search_path" not in str(raised.value) or "***" not in str(raised.value)
    assert _tables(dsn) == before


def test_processes_starting_together_migrate_once(pg_schemas):
    """Six processes open a fresh schema at once: the advisory lock lets one create the
    tables; the others find them made and write at once."""
    dsn = pg_schemas("main")
    code = ("import importlib, json, sys\n"
            f"S = importlib.import_module({STORE_MODULE!r}).PostgresSessionStore\n"
            "s = S(sys.argv[1])\n"
            "s.create_session(sys.argv[2], source='cli')\n"
            "print(json.dumps(s.schema_changes)); s.close()\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, dsn, f"p{i}"], text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(6)]
    changes = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        changes.append(json.loads(out))
    assert sorted(len(c) for c in changes) == [0, 0, 0, 0, 0, 4]
    assert ["created", "migrated to 1", "migrated to 2", "migrated to 3"] in changes
    assert _tables(dsn)["sessions"] == 6


def _kill_backends(postgres_dsn: str, application_name: str) -> int:
    psycopg = _psycopg()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        return len(conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (application_name,)).fetchall())


def test_a_lost_connection_is_retried_and_loses_nothing(postgres_dsn, pg_schemas):
    dsn = pg_schemas("main")
    name = _psycopg().conninfo.conninfo_to_dict(dsn)["application_name"]
    store = PostgresSessionStore(dsn)
    sid = store.create_session(source="cli")
    acknowledged = []
    killed = 0
    for i in range(40):
        if i % 10 == 5:
            killed += _kill_backends(postgres_dsn, name)  # every pooled connection dies
        acknowledged.append(store.append_message(sid, "user", f"message {i}"))
    assert killed >= 3
    stored = store.get_messages(sid)
    assert [m["content"] for m in stored] == [f"message {i}" for i in range(40)]
    assert [m["id"] for m in stored] == acknowledged
    assert store.get_session(sid)["message_count"] == 40
    assert len(store.search_messages("message")) == 20
    store.close()


WRITER = r"""
import importlib, sys
S = importlib.import_module(sys.argv[1]).PostgresSessionStore
store = S(sys.argv[2])
sid = store.create_session(sys.argv[3], source="cli")
for i in range(100000):
    store.append_message(sid, "user", f"{sys.argv[3]} message {i}")
    print(i, flush=True)
"""


def test_sigkill_mid_stream_keeps_every_acknowledged_message(pg_schemas):
    dsn = pg_schemas("main")
    proc = subprocess.Popen([sys.executable, "-c", WRITER, STORE_MODULE, dsn, "k"], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    last = -1
    while last < 200:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "writer exited"
        last = int(line)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    for line in proc.stdout.read().split():
        last = int(line)
    store = PostgresSessionStore(dsn)
    stored = [int(m["content"].split()[2]) for m in store.get_messages("k")]
    assert stored == list(range(len(stored)))  # no gaps, no duplicates
    assert last + 1 <= len(stored) <= last + 2  # every acknowledged one, plus one in flight
    assert store.get_session("k")["message_count"] == len(stored)
    store.close()


def test_concurrent_title_claims_have_one_winner(pg_schemas):
    dsn = pg_schemas("main")
    stores = [PostgresSessionStore(dsn) for _ in range(4)]
    ids = [s.create_session(f"t{i}", source="cli") for i, s in enumerate(stores)]
    won: list[str] = []
    lost: list[BaseException] = []
    barrier = threading.Barrier(len(stores))

    def claim(store: Any, sid: str) -> None:
        barrier.wait(timeout=30)
        try:
            store.set_session_title(sid, "The one")
            won.append(sid)
        except SessionStoreError as exc:
            lost.append(exc)
    threads = [threading.Thread(target=claim, args=pair) for pair in zip(stores, ids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(won) == 1 and len(lost) == 3
    assert stores[0].resolve_session_by_title("The one") == won[0]
    for s in stores:
        s.close()


@pytest.fixture
def fuzz_store(pg_schemas):
    store = PostgresSessionStore(pg_schemas("fuzz"))
    sid = store.create_session(source="cli")
    store.replace_messages(sid, [{"role": "user", "content": text} for text in (
        "deploy the chat-send service", "数据迁移日志", "a b c d", "abc abd OR NOT AND",
        "50% off_sale \\ back'slash \"quoted\"", "config.yaml:12 https://x.org/a?b=c")])
    yield store
    store.close()


_WORDS = st.sampled_from(["OR", "NOT", "AND", '"', "*", "a*", "ab*", "数据", "迁移日志", "-",
                          "deploy", "chat-send", "(", ")", ":", "NEAR", "^", "''", "%", "_",
                          "\\", "!", "&", "|", "<->", ":*", "'a':*", "\x00", "$$"])
_ANY = st.text(st.characters(exclude_categories=()), max_size=12)


@settings(max_examples=200, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.one_of(_WORDS, _ANY), max_size=12),
       sort=st.sampled_from([None, "newest", "oldest"]))
def test_fuzz_postgres_search_never_raises(fuzz_store, parts, sort):
    results = fuzz_store.search_messages(" ".join(parts), limit=5, sort=sort,
                                         source_filter=["cli", "\x00x"], role_filter="user")
    assert isinstance(results, list) and len(results) <= 5
    for hit in results:
        hit["snippet"].encode("utf-8")


def test_text_with_nul_characters_is_stored(pg_schemas):
    store = PostgresSessionStore(pg_schemas("main"))
    sid = store.create_session(source="cli", title="nul\x00title")
    store.append_message(sid, "tool", "before\x00after", tool_name="t\x00")
    store.append_message(sid, "user", [{"type": "text", "text": "part\x00"}])
    contents = [m["content"] for m in store.get_messages(sid)]
    # text cannot hold NUL in PostgreSQL: U+FFFD; JSON content escapes it, so it round-trips
    assert contents == ["before\ufffdafter", [{"type": "text", "text": "part\x00"}]]
    assert store.get_session(sid)["title"] == "nul title"
    store.close()


def test_search_budget_stops_a_long_search(pg_schemas):
    store = PostgresSessionStore(pg_schemas("main"), search_budget_s=0.001)
    sid = store.create_session(source="cli")
    store.replace_messages(sid, [{"role": "user", "content": f"记录 {i} 数据迁移 日志 " * 20}
                                 for i in range(3000)])
    from hermes_agent.api import SearchTimeoutError

    with pytest.raises(SearchTimeoutError, match="longer than 0.001 s"):
        store.search_messages("数 OR 日 OR 记 OR 迁", limit=1000)
    store.search_budget_s = 30
    assert len(store.search_messages("数据迁移", limit=50)) == 50
    store.close()


def test_without_pg_trgm_the_error_says_who_must_create_it(postgres_dsn):
    """A role that may not create extensions, in a database without pg_trgm: refused before
    anything is written, with the statement the database's owner must run."""
    import uuid

    psycopg = _psycopg()
    from psycopg.conninfo import make_conninfo

    name = f"hermes_noext_{uuid.uuid4().hex[:10]}"
    try:
        admin = psycopg.connect(postgres_dsn, autocommit=True)
        admin.execute(f"CREATE ROLE {name} LOGIN")
        admin.execute(f"CREATE DATABASE {name}")
    except psycopg.Error as exc:
        pytest.skip(f"the test server's user cannot create roles and databases ({exc})")
    try:
        with psycopg.connect(make_conninfo(postgres_dsn, dbname=name), autocommit=True) as db:
            db.execute(f"CREATE SCHEMA hermes AUTHORIZATION {name}")
        dsn = make_conninfo(postgres_dsn, dbname=name, user=name,
                            options="-csearch_path=hermes")
        store = PostgresSessionStore(dsn)
        with pytest.raises(SessionStoreError, match=r"needs the pg_trgm extension.*Nothing "
                           r"was written.*CREATE EXTENSION pg_trgm;"):
            store.create_session(source="cli")
        with psycopg.connect(make_conninfo(postgres_dsn, dbname=name)) as db:
            assert db.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'hermes'"
                              ).fetchone()[0] == 0
            assert db.execute("SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'"
                              ).fetchone()[0] == 0
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"DROP ROLE IF EXISTS {name}")
        admin.close()


def test_hermes_sessions_cli_on_postgres(home, pg_schemas, capsys, tmp_path):
    """The real CLI with sessions.store: postgres: import a Hermes Agent 0.19 state.db (read
    only) and a JSONL export, list, search, show and stats."""
    import hashlib
    import shutil
    from pathlib import Path

    from hermes_agent.cli import root as cli_root

    def main(args: list[str]) -> int:  # one command, its kernel (and the store's pool) closed
        return cli_root.main(args)  # the run's kernel closes with the root click context

    dsn = pg_schemas("main")
    (home / "config.yaml").write_text(json.dumps({"sessions": {"store": "postgres"}}))
    (home / ".env").write_text(f"HERMES_POSTGRES_DSN={dsn}\n")
    original = tmp_path / "old.db"
    shutil.copy(Path(__file__).parent / "fixtures" / "hermes-0.19.0-state.db", original)
    before = hashlib.sha256(original.read_bytes()).hexdigest()
    assert main(["sessions", "import", str(original)]) == 0
    assert "Imported 3 session(s) and 4 message(s)" in capsys.readouterr().out
    assert hashlib.sha256(original.read_bytes()).hexdigest() == before
    export = tmp_path / "one.jsonl"
    export.write_text(json.dumps({"id": "from_jsonl", "source": "cli", "started_at": 5.0,
                                  "messages": [{"role": "user", "content": "jsonl words"}]})
                      + "\n")
    assert main(["sessions", "import", str(export)]) == 0
    capsys.readouterr()
    assert main(["sessions", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in rows} >= {"s_child", "from_jsonl"}
    assert main(["sessions", "search", "迁移", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["session_id"] == "s_child"
    assert main(["sessions", "show", "Fix Docker Build", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == "s_child"
    assert main(["sessions", "stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"]["sessions"] == 4
    store = PostgresSessionStore(dsn)
    assert store.get_compression_tip("s_root") == "s_child"
    assert store.get_session("s_tg")["user_id"] == "42"
    store.close()


def test_a_connection_lost_at_commit_is_rechecked_or_refused(postgres_dsn, pg_schemas):
    """The server drops the connection as the COMMIT is sent: an append is looked up before
    it is made again (stored once), an additive counter update is refused, not doubled."""
    psycopg = _psycopg()
    store = PostgresSessionStore(pg_schemas("main"))
    sid = store.create_session(source="cli")
    db = store.db
    admin = psycopg.connect(postgres_dsn, autocommit=True)
    kills: list[int] = []

    def dying(sql: str, params: tuple[Any, ...]) -> Callable[[Any], int]:
        def fn(conn: Any) -> int:
            conn.execute(sql, params)
            if not kills:  # the first attempt: its connection dies before the commit lands
                kills.append(conn.info.backend_pid)
                admin.execute("SELECT pg_terminate_backend(%s, 10000)", (kills[0],))
                assert not admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s",
                                         (kills[0],)).fetchone()  # gone before COMMIT is sent
            return 1
        return fn

    calls = []

    def recheck(conn: Any) -> int | None:
        calls.append(1)
        found = conn.execute("SELECT count(*) AS n FROM messages WHERE content = 'once'"
                             ).fetchone()["n"]
        return 1 if found else None
    insert = ("INSERT INTO messages (session_id, role, content, timestamp) "
              "VALUES (%s, 'user', 'once', 1.0)")
    assert db.run(dying(insert, (sid,)), recheck=recheck) == 1
    assert calls == [1] and len(kills) == 1
    assert [m["content"] for m in store.get_messages(sid)] == ["once"]  # not twice
    kills.clear()
    add = "UPDATE sessions SET input_tokens = input_tokens + 5 WHERE id = %s"
    with pytest.raises(SessionStoreError, match="may or may not be stored"):
        db.run(dying(add, (sid,)), repeatable=False)
    assert store.get_session(sid)["input_tokens"] in (0, 5)  # never 10
    admin.close()
    store.close()
