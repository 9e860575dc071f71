"""Importing exported sessions into PostgreSQL (the shared rows: ``hermes_agent.kits.sql.rows``).

Imports never overwrite, as the sqlite store's: a session whose id exists is skipped, a taken
title gets the next free " #<n>", a parent that is not in the store is dropped from the link.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from hermes_agent.api import SessionStoreError
from hermes_agent.kits.sql.rows import (
    import_session_records, insert_message_rows, insert_session_row,
)
from hermes_agent.kits.sql.statements import SessionSql

from .values import to_pg


class ImportingStore(Protocol):
    """What importing uses of the store (:class:`.store.PostgresSessionStore`)."""

    sql: SessionSql

    @property
    def db(self) -> Any: ...

    def _run(self, fn: Callable[[Any], Any], recheck: Callable[[Any], Any] | None = None,
             repeatable: bool = True) -> Any: ...


def import_records(store: ImportingStore, records: Iterable[dict[str, Any]],
                   keep_message_ids: bool = False) -> dict[str, int]:
    """Import exported sessions (dicts with ``messages``), parents before children; each
    session with its messages in one transaction."""
    UniqueViolation = store.db.errors.UniqueViolation

    def do(conn: Any, record: dict[str, Any]) -> int | None:
        sid = to_pg(str(record["id"]))
        # one importer at a time per id: a second process importing the same file waits here
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("hermes-import:" + sid,))
        if not insert_session_row(conn, store.sql, record, sid):
            return None
        return insert_message_rows(conn, store.sql, sid, record.get("messages") or [],
                                   keep_message_ids)

    def insert(record: dict[str, Any]) -> int | None:
        try:
            return store._run(lambda conn: do(conn, record))  # type: ignore[no-any-return]
        except UniqueViolation as exc:
            raise SessionStoreError(
                f"{store.db.label} already holds a message with an id of session "
                f"{record['id']!r} (keep_message_ids keeps them); import without "
                "keep_message_ids to number them anew") from exc
    return import_session_records(records, insert)
