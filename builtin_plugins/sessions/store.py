"""``SqliteSessionStore``: the builtin session store over ``$HERMES_HOME/state.db``.

The object is cheap to build (the plugin registers one at boot); the database opens on the
first call. One store per process and path is enough: it is thread-safe.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from hermes_agent.kits.sql.query import SEARCH_BUDGET_S
from hermes_agent.kits.sql.statements import SessionSql
from hermes_agent.api import SessionStoreError
from hermes_agent.kits.sql.sessions import SqlSessionMethods, create_error
from hermes_agent.kits.sql.rows import insert_message_rows

from . import health
from .codec import SQLITE
from .db import (
    Upkeep,
    WriteGate,
    checkpoint_wal,
    explain,
    is_busy,
    open_database,
    open_reader,
    retry_busy,
)
from .inputs import public_methods_at_edge

log = logging.getLogger("hermes_agent.sessions")

T = TypeVar("T")
IDLE_READERS = 4  # read connections kept open between reads


@public_methods_at_edge
class SqliteSessionStore(SqlSessionMethods):
    """The ``sqlite`` session store. See :class:`hermes_agent.api.SessionStore` for the contract.

    Writes share one connection under a lock; reads (searches included) take a connection of
    their own from a small pool, so under WAL a long search never delays an append. Every
    public method's arguments are normalised first (see :mod:`.inputs`)."""

    name = "sqlite"
    sql = SessionSql(SQLITE)

    def __init__(self, path: Path | str | None = None, *, home: Path | str | None = None,
                 search_budget_s: float = SEARCH_BUDGET_S):
        if path is None:
            if home is None:
                from hermes_agent import hermes_home

                home = hermes_home()
            path = Path(home) / "state.db"
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._upkeep = Upkeep(self.path)
        self._gate = WriteGate(self.path)
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._sound = False  # the file passed the health check (now or before, unchanged)
        self.search_budget_s = search_budget_s
        self.schema_changes: list[str] = []

    # --- plumbing ---------------------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            with self._lock:
                if self._conn is None:
                    conn, self.schema_changes, self._sound = open_database(self.path)
                    conn.row_factory = sqlite3.Row
                    self._conn = conn
        return self._conn

    def _write(self, fn: Callable[[sqlite3.Connection], T], writes: int = 1) -> T:
        """Run ``fn`` in a BEGIN IMMEDIATE transaction, retrying while another writer holds
        the lock."""
        conn = self.conn

        def attempt() -> T:
            with self._lock, self._gate:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = fn(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                return result

        try:
            result = retry_busy(attempt)
        except SessionStoreError:
            raise
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            if is_busy(exc):
                raise SessionStoreError(
                    f"{self.path} stayed locked by another process through 15 retries; the "
                    "write was not made. Check for a stuck hermes process and try again.") from exc
            raise explain(exc, self.path, "write") from exc
        if self._upkeep.wrote(writes):
            self._checkpoint()
        return result

    def _checkpoint(self) -> None:
        try:
            with self._lock:
                checkpoint_wal(self.conn, self._gate)
            self._upkeep.checkpointed()
        except sqlite3.Error as exc:  # a busy reader elsewhere: the next write tries again
            log.debug("checkpoint skipped: %s", exc)

    @contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        """A read connection of this thread's own for the duration of the block."""
        self.conn  # opened, checked and migrated first
        with self._readers_lock:
            conn = self._readers.pop() if self._readers else None
        if conn is None:
            conn = open_reader(self.path)
        try:
            yield conn
        finally:
            with self._readers_lock:
                if self._conn is not None and len(self._readers) < IDLE_READERS:
                    self._readers.append(conn)
                    conn = None
            if conn is not None:
                conn.close()

    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        try:
            with self._reader() as conn:
                return retry_busy(lambda: conn.execute(sql, tuple(args)).fetchall())
        except sqlite3.Error as exc:
            if isinstance(exc, sqlite3.OperationalError) and "fts5" in str(exc).lower():
                raise
            raise explain(exc, self.path, "read") from exc

    def close(self) -> None:
        self._upkeep.stop()
        with self._lock:
            with self._readers_lock:
                readers, self._readers = self._readers, []
            for reader in readers:
                reader.close()
            if self._conn is not None:
                try:
                    self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    pass
                self._conn.close()
                self._conn = None
                if self._sound:  # only SQLite wrote it since the check: record its new state
                    health.remember(self.path)
            self._gate.close()

    # --- sessions ---------------------------------------------------------------------
    def _insert_session(self, row: tuple[Any, ...]) -> None:
        try:
            self._write(lambda conn: conn.execute(self.sql.create_session, row))
        except sqlite3.IntegrityError as exc:
            text = str(exc)
            conflict = "id" if "sessions.id" in text else "title" if "title" in text else ""
            raise create_error(conflict, row) from exc

    def _update(self, session_id: str, sql: str, args: Iterable[Any] = (),
                repeatable: bool = True) -> None:
        def do(conn: sqlite3.Connection) -> None:
            if conn.execute(sql, (*args, session_id)).rowcount == 0:
                raise SessionStoreError(f"no session {session_id!r}; list sessions with "
                                        "`hermes sessions list`")
        self._write(do)

    # --- messages ---------------------------------------------------------------------
    def _append(self, row: tuple[Any, ...], calls: int) -> int:
        sql = self.sql
        session_id = row[0]

        def do(conn: sqlite3.Connection) -> int:
            if conn.execute(sql.count_message, (calls, session_id)).rowcount == 0:
                raise SessionStoreError(f"no session {session_id!r}: create it with "
                                        "create_session() before appending messages")
            return int(conn.execute(sql.insert_message, row).lastrowid)
        return self._write(do)

    def replace_messages(self, session_id: str, messages: Iterable[dict[str, Any]]) -> None:
        items = list(messages)

        def do(conn: sqlite3.Connection) -> None:
            if not conn.execute(self.sql.session_exists, (session_id,)).fetchone():
                raise SessionStoreError(f"no session {session_id!r}")
            conn.execute(self.sql.delete_messages, (session_id,))
            insert_message_rows(conn, self.sql, session_id, items)
        self._write(do, writes=len(items) + 1)

    # --- search ---------------------------------------------------------------------
    def search_messages(self, query: str, *, source_filter: Iterable[str] | None = None,
                        exclude_sources: Iterable[str] | None = None,
                        role_filter: Iterable[str] | None = None, limit: int = 20,
                        offset: int = 0, sort: str | None = None,
                        exclude_sessions: Iterable[str] | None = None) -> list[dict[str, Any]]:
        from . import search  # its query parser is only needed when someone searches

        try:
            with self._reader() as conn:
                return search.search_messages(
                    conn, query, source_filter=source_filter, exclude_sources=exclude_sources,
                    role_filter=role_filter, limit=limit, offset=offset, sort=sort,
                    exclude_sessions=exclude_sessions, budget_s=self.search_budget_s)
        except sqlite3.Error as exc:
            raise explain(exc, self.path, "search") from exc

    # --- import -------------------------------------------------------------------------
    def import_records(self, records: Iterable[dict[str, Any]], *,
                       keep_message_ids: bool = False) -> dict[str, int]:
        """Insert exported sessions (each with ``messages``); existing ids are skipped. With
        ``keep_message_ids`` messages keep their ids (a copy whose exports stay
        identical); an id the store already holds is then a SessionStoreError."""
        from .transfer import import_records

        return import_records(self, records, keep_message_ids)


