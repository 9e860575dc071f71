"""The session-store conformance suite (hermes_agent.testing) against the builtin SQLite store."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore
from hermes_agent.testing.session_store_conformance import *  # noqa: F401,F403


@pytest.fixture
def session_store_factory(tmp_path: Path) -> Iterator[Callable[..., SqliteSessionStore]]:
    stores: list[SqliteSessionStore] = []

    def make(name: str = "main") -> SqliteSessionStore:
        store = SqliteSessionStore(tmp_path / f"{name}.db")
        stores.append(store)
        return store
    yield make
    for store in stores:
        store.close()
