"""The session-store conformance suite (hermes_agent.testing) against the postgres store, each
test in schemas of its own; skipped with the reason when no PostgreSQL server answers."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hermes_agent.testing.session_store_conformance import *  # noqa: F401,F403

PostgresSessionStore = importlib.import_module(
    "hermes_agent.plugins.session-stores.postgres.store").PostgresSessionStore


@pytest.fixture
def session_store_factory(pg_schemas: Callable[[str], str]) -> Iterator[Callable[..., Any]]:
    stores: list[Any] = []

    def make(name: str = "main") -> Any:
        store = PostgresSessionStore(pg_schemas(name))
        stores.append(store)
        return store
    yield make
    for store in stores:
        store.close()
