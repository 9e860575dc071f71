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
