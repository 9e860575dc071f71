"""Fixtures for the session-store tests: a fresh store on a real state.db per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteSessionStore]:
    s = SqliteSessionStore(tmp_path / "state.db")
    yield s
    s.close()


@pytest.fixture
def integrity() -> Callable[[Path], str]:
    """``integrity(path)``: PRAGMA integrity_check plus both FTS indexes' own checks."""
    return check_integrity


def check_integrity(path: Path) -> str:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        result = conn.execute("PRAGMA integrity_check").fetchone()[0]
        # messages_fts is checked against every row of messages; the trigram index holds
        # only rows with CJK text, so only its own structure is checked.
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
        conn.execute("INSERT INTO messages_fts_trigram(messages_fts_trigram) "
                     "VALUES ('integrity-check')")
        return str(result)
    finally:
        conn.close()


# --- PostgreSQL ------------------------------------------------------------------------------

DEFAULT_POSTGRES_DSN = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """The test server's DSN (HERMES_TEST_POSTGRES_DSN, else the local default); skips the
    test with the reason when psycopg is missing or no server answers."""
    import os

    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install "
                                  "'hermes-agent-runtime[session-postgres]'")
    dsn = os.environ.get("HERMES_TEST_POSTGRES_DSN") or DEFAULT_POSTGRES_DSN
    try:
        with psycopg.connect(dsn, connect_timeout=3, autocommit=True) as conn:
            # once, in public: a test's own schema (dropped after it) must not hold it
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
    except psycopg.errors.UniqueViolation:
        pass  # another test process created it at the same moment
    except psycopg.Error as exc:
        pytest.skip(f"no PostgreSQL server for the postgres session-store tests at {dsn} "
                    f"({str(exc).strip().splitlines()[0]}); set HERMES_TEST_POSTGRES_DSN")
    return dsn


@pytest.fixture
def pg_schemas(postgres_dsn: str) -> Iterator[Callable[[str], str]]:
    """``pg_schemas(name)``: the DSN of a schema of this test's own (created on first use,
    dropped after the test), so tests run in parallel without colliding."""
    import uuid

    import psycopg
    from psycopg.conninfo import make_conninfo

    made: dict[str, str] = {}
    prefix = f"hermes_test_{uuid.uuid4().hex[:12]}"

    def dsn_for(name: str = "main") -> str:
        if name not in made:
            schema = f"{prefix}_{name}"
            with psycopg.connect(postgres_dsn, autocommit=True) as conn:
                conn.execute(f'CREATE SCHEMA "{schema}"')
            made[name] = schema
        return make_conninfo(postgres_dsn, options=f"-csearch_path={made[name]},public",
                             application_name=f"{prefix}_{name}")
    yield dsn_for
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        for schema in made.values():
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
