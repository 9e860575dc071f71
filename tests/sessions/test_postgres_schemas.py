"""The postgres store keeps to its own schema: another hermes store (or another program's
tables) later on the search_path, in ``public`` or elsewhere, is never read or written, and a
schema that is not the store's is refused, naming it. All skip when no server answers."""

from __future__ import annotations

import importlib
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_agent.api import SessionStoreError

PostgresSessionStore = importlib.import_module(
    "hermes_agent.plugins.session-stores.postgres.store").PostgresSessionStore
TABLES = ("hermes_schema", "sessions", "messages", "gateway_inbox", "gateway_leases",
          "gateway_chats", "gateway_replicas", "gateway_cron_runs")


def _schema_of(dsn: str) -> str:
    from psycopg.conninfo import conninfo_to_dict

    options = str(conninfo_to_dict(dsn)["options"])
    return options.split("=", 1)[1].split(",")[0]


def _fill_foreign(dsn: str) -> None:
    """Another deployment's sessions: same ids and titles the test writes, other data."""
    other = PostgresSessionStore(dsn)
    other.create_session("shared-id", source="telegram", title="Theirs", started_at=1.0)
    other.append_message("shared-id", "user", "their private words")
    other.create_session("only-theirs", source="discord", started_at=2.0)
    other.append_message("only-theirs", "assistant", "their private reply")
    queue = other.gateway_queue()
    queue.accept("their-chat", {"text": "their queued message"}, "their-dedupe")
    queue.set_session("their-chat", "shared-id")
    queue.close()
    other.close()


def _snapshot(conn: Any, schema: str) -> dict[str, str | None]:
    """Every row of every hermes table in ``schema``, as one digest per table."""
    return {t: conn.execute(
        f'SELECT md5(string_agg(t::text, \',\' ORDER BY t::text)) FROM "{schema}".{t} t'
    ).fetchone()[0] for t in TABLES}


def _use_own_store(dsn: str) -> None:
    """Write and read through a store whose own schema is empty: nothing of the foreign one
    shows, and the same ids and titles are free."""
    store = PostgresSessionStore(dsn)
    assert store.list_sessions() == [] and store.get_session("shared-id") is None
    assert store.search_messages("private") == []
    store.create_session("shared-id", source="cli", title="Theirs", started_at=5.0)
    store.append_message("shared-id", "user", "my own words")
    assert [s["id"] for s in store.list_sessions()] == ["shared-id"]
    assert [m["content"] for m in store.get_messages("shared-id")] == ["my own words"]
    assert store.resolve_session_by_title("Theirs") == "shared-id"
    queue = store.gateway_queue()
    assert queue.depth() == 0 and queue.session_of("their-chat") is None
    assert queue.accept("my-chat", {"text": "mine"}, "their-dedupe") is not None
    assert queue.try_lead("poller")
    queue.close()
    store.delete_session("shared-id")
    store.close()


def test_a_foreign_store_later_on_the_path_is_never_read_or_written(pg_schemas):
    import psycopg

    foreign_dsn = pg_schemas("foreign")
    _fill_foreign(foreign_dsn)
    dsn = pg_schemas("own", then=["foreign"])
    own, foreign = _schema_of(dsn), _schema_of(foreign_dsn)
    with psycopg.connect(foreign_dsn) as conn:
        before = _snapshot(conn, foreign)
    _use_own_store(dsn)
    with psycopg.connect(foreign_dsn) as conn:
        assert _snapshot(conn, foreign) == before
        tables = {r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (own,))}
    assert tables == set(TABLES)  # the store made its own tables


@pytest.fixture
def scratch_database(postgres_dsn: str) -> Iterator[str]:
    """A database of this test's own (dropped after it), so its ``public`` may hold another
    deployment's hermes tables without touching what other runs use."""
    psycopg = pytest.importorskip("psycopg")
    from psycopg.conninfo import make_conninfo

    name = f"hermes_test_db_{uuid.uuid4().hex[:10]}"
    admin = psycopg.connect(postgres_dsn, autocommit=True)
    try:
        admin.execute(f"CREATE DATABASE {name}")
    except psycopg.Error as exc:
        admin.close()
        pytest.skip(f"the test server's user cannot create databases ({exc})")
    try:
        yield make_conninfo(postgres_dsn, dbname=name)
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()


def test_hermes_tables_in_public_are_not_adopted(scratch_database):
    import psycopg
    from psycopg.conninfo import make_conninfo

    _fill_foreign(make_conninfo(scratch_database, options="-csearch_path=public"))
    with psycopg.connect(scratch_database, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA team_b")
        before = _snapshot(conn, "public")
    _use_own_store(make_conninfo(scratch_database, options="-csearch_path=team_b,public"))
    with psycopg.connect(scratch_database) as conn:
        assert _snapshot(conn, "public") == before
        assert conn.execute("SELECT count(*) FROM team_b.sessions").fetchone()[0] == 0


def test_a_missing_first_schema_is_refused_not_skipped(scratch_database):
    from psycopg.conninfo import make_conninfo

    _fill_foreign(make_conninfo(scratch_database, options="-csearch_path=public"))
    store = PostgresSessionStore(make_conninfo(scratch_database,
                                               options="-csearch_path=team_c,public"))
    with pytest.raises(SessionStoreError, match=r'schema "team_c".*does not exist.*Nothing '
                       r'was written.*CREATE SCHEMA "team_c";'):
        store.list_sessions()


def test_another_programs_tables_are_refused_naming_the_schema(pg_schemas):
    import psycopg

    dsn = pg_schemas("app")
    with psycopg.connect(dsn) as conn:
        conn.execute("CREATE TABLE sessions (token TEXT PRIMARY KEY)")
        conn.execute("INSERT INTO sessions VALUES ('web-login')")
    with pytest.raises(SessionStoreError) as raised:
        PostgresSessionStore(dsn).create_session("x", source="cli")
    message = str(raised.value)
    assert f'"{_schema_of(dsn)}"' in message and "sessions" in message
    assert "not a hermes session store" in message and "Nothing was written" in message
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT token FROM sessions").fetchall() == [("web-login",)]
        assert conn.execute("SELECT to_regclass('hermes_schema')").fetchone()[0] is None


def test_a_foreign_owner_is_refused_naming_schema_and_owner(pg_schemas):
    import psycopg

    dsn = pg_schemas("owned")
    PostgresSessionStore(dsn).list_sessions()
    with psycopg.connect(dsn) as conn:
        conn.execute("UPDATE hermes_schema SET owner = 'other-agent'")
    with pytest.raises(SessionStoreError, match=rf'schema "{_schema_of(dsn)}".*'
                       r"owner 'other-agent'.*Nothing was written"):
        PostgresSessionStore(dsn).list_sessions()
