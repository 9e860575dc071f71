"""``PostgresSessionStore``: the ``postgres`` session store.

Cheap to build (the plugin registers one at boot): the DSN is read, psycopg imported, the
schema checked and migrated on the first call. Thread-safe; any number of processes may share
one database. See :class:`hermes_agent.api.SessionStore` for the contract, which this store
keeps as the sqlite one does (the conformance suite in ``hermes_agent.testing`` checks both).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_agent.api import SessionStoreError, TitleConflictError
from hermes_agent.kits.sql.query import SEARCH_BUDGET_S
from hermes_agent.kits.sql.rows import insert_message_rows
from hermes_agent.kits.sql.sessions import SqlSessionMethods, create_error, write_session_title
from hermes_agent.kits.sql.statements import SessionSql
from hermes_agent.kits.sql.values import public_methods_at_edge

from .values import POSTGRES, params, to_pg

if TYPE_CHECKING:
    from hermes_agent.api import GatewayQueue

T = TypeVar("T")


@public_methods_at_edge
class PostgresSessionStore(SqlSessionMethods):
    """The ``postgres`` session store over one database (and the first schema of its
    ``search_path``)."""

    name = "postgres"
    sql = SessionSql(POSTGRES)

    def __init__(self, dsn: str | Callable[[], str] = "", *,
                 search_budget_s: float = SEARCH_BUDGET_S):
        self._dsn = dsn
        self._db: Any = None
        self._lock = threading.Lock()
        self.search_budget_s = search_budget_s

    # --- plumbing ---------------------------------------------------------------------
    @property
    def db(self) -> Any:
        if self._db is None:
            with self._lock:
                if self._db is None:
                    try:
                        from .connection import Database
                    except ImportError as exc:
                        raise SessionStoreError(
                            f"the postgres session store needs {exc.name or 'psycopg'}, which "
                            "is not installed: pip install 'hermes-agent-runtime"
                            "[session-postgres]'") from None

                    dsn = self._dsn() if callable(self._dsn) else self._dsn
                    self._db = Database(dsn)
        return self._db

    @property
    def schema_changes(self) -> list[str]:
        return list(self.db.schema_changes)

    def _run(self, fn: Callable[[Any], Any], recheck: Callable[[Any], Any] | None = None,
             repeatable: bool = True) -> Any:
        return self.db.run(fn, recheck=recheck, repeatable=repeatable)

    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[dict[str, Any]]:
        bound = params(args)
        return self._run(lambda conn: conn.execute(sql, bound).fetchall())

    def _write(self, fn: Callable[[Any], T]) -> T:
        return self._run(fn)  # type: ignore[no-any-return]

    def gateway_queue(self) -> "GatewayQueue":
        """The gateway's queue shared by every replica on this database (see
        :mod:`.gateway_queue`; ``hermes_agent.api.SharedQueueStore``)."""
        from .gateway_queue import SharedGatewayQueue

        return SharedGatewayQueue(self.db)

    def at(self, dsn: str) -> "PostgresSessionStore":
        """Another store like this one at ``dsn`` (``hermes sessions migrate --to DSN``)."""
        return PostgresSessionStore(dsn, search_budget_s=self.search_budget_s)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # --- sessions ---------------------------------------------------------------------
    def _insert_session(self, row: tuple[Any, ...]) -> None:
        pg_errors = self.db.errors
        bound = params(row)
        sql = self.sql.create_session

        def mine(conn: Any) -> str | None:  # after a lost connection: did the insert land?
            found = conn.execute("SELECT started_at FROM sessions WHERE id = %s",
                                 (bound[0],)).fetchone()
            return bound[0] if found and found["started_at"] == bound[2] else None
        try:
            self._run(lambda conn: conn.execute(sql, bound), recheck=mine)
        except pg_errors.UniqueViolation as exc:
            raise create_error("title" if "title" in str(exc) else "id", row) from None
        except pg_errors.ForeignKeyViolation:
            raise create_error("parent", row) from None

    def _update(self, session_id: str, sql: str, args: Iterable[Any] = (),
                repeatable: bool = True) -> None:
        bound = params((*args, session_id))

        def do(conn: Any) -> None:
            if conn.execute(sql, bound).rowcount == 0:
                raise SessionStoreError(f"no session {session_id!r}; list sessions with "
                                        "`hermes sessions list`")
        self._run(do, repeatable=repeatable)

    # --- messages ---------------------------------------------------------------------
    def _append(self, row: tuple[Any, ...], calls: int) -> int:
        sql = self.sql
        bound = params(row)
        session_id = row[0]

        def do(conn: Any) -> int:
            if conn.execute(sql.count_message, (calls, session_id)).rowcount == 0:
                raise SessionStoreError(f"no session {session_id!r}: create it with "
                                        "create_session() before appending messages")
            return int(conn.execute(sql.insert_message, bound).fetchone()["id"])

        def landed(conn: Any) -> int | None:  # the commit may have landed before the loss
            found = conn.execute(
                "SELECT id FROM messages WHERE session_id = %s AND timestamp = %s AND role = %s "
                "AND content IS NOT DISTINCT FROM %s AND tool_calls IS NOT DISTINCT FROM %s "
                "ORDER BY id DESC LIMIT 1",
                (bound[0], bound[6], bound[1], bound[2], bound[4])).fetchone()
            return int(found["id"]) if found else None
        return int(self._run(do, recheck=landed))

    def replace_messages(self, session_id: str, messages: Iterable[dict[str, Any]]) -> None:
        items = list(messages)

        def do(conn: Any) -> None:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = %s FOR UPDATE",
                                (session_id,)).fetchone():
                raise SessionStoreError(f"no session {session_id!r}")
            conn.execute(self.sql.delete_messages, (session_id,))
            insert_message_rows(conn, self.sql, session_id, items)
        self._run(do)

    # --- titles -----------------------------------------------------------------------
    def _set_title(self, session_id: str, clean: str | None, only_if_untitled: bool) -> int:
        pg_errors = self.db.errors
        stored = to_pg(clean)
        try:
            return int(self._run(lambda conn: write_session_title(
                conn, self.sql, session_id, stored, only_if_untitled)))
        except pg_errors.UniqueViolation:  # another process took it between check and write
            raise TitleConflictError(f"the title {stored!r} is already used by another "
                                     "session; choose another title") from None

    # --- search and import ----------------------------------------------------------------
    def search_messages(self, query: str, *, source_filter: Iterable[str] | None = None,
                        exclude_sources: Iterable[str] | None = None,
                        role_filter: Iterable[str] | None = None, limit: int = 20,
                        offset: int = 0, sort: str | None = None,
                        exclude_sessions: Iterable[str] | None = None) -> list[dict[str, Any]]:
        from . import search

        return self._run(lambda conn: search.search(
            conn, query, source_filter=source_filter, exclude_sources=exclude_sources,
            role_filter=role_filter, limit=limit, offset=offset, sort=sort,
            exclude_sessions=exclude_sessions, budget_s=self.search_budget_s))

    def import_records(self, records: Iterable[dict[str, Any]], *,
                       keep_message_ids: bool = False) -> dict[str, int]:
        """Insert exported sessions (each with ``messages``); existing ids are skipped, a taken
        title gets the next free " #<n>", a missing parent is dropped from the link. With
        ``keep_message_ids`` messages keep their ids (an id already here is an error)."""
        from .transfer import import_records

        return import_records(self, records, keep_message_ids)
