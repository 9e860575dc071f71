"""The connection pool: opening it (with errors that name the masked DSN and say what to fix),
transactions, and retrying work whose connection was lost.

Imported on the store's first call, never at registration: psycopg loads with it.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from hermes_agent.api import SessionStoreError
from hermes_agent.kits.secrets import mask_url

from . import schema

log = logging.getLogger("hermes_agent.sessions.postgres")
T = TypeVar("T")
RETRIES = 5  # attempts of one unit of work when its connection is lost
CONNECT_TIMEOUT_S = 5
MAX_CONNECTIONS = 8


def mask_dsn(dsn: str) -> str:
    """``dsn`` with its password hidden (URL or ``key=value`` form)."""
    if "://" in dsn:
        return mask_url(dsn)
    return re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", dsn)


def _reason(exc: BaseException, dsn: str) -> str:
    """The error's first line, with the DSN's password (if it is quoted back) hidden."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    password = psycopg.conninfo.conninfo_to_dict(dsn).get("password") if dsn else None
    return text.replace(str(password), "***") if password else text


def connect_fix(reason: str) -> str:
    """What to do about a failed connection, from the server's or libpq's reason."""
    lower = reason.lower()
    if "password" in lower or "authentication" in lower or 'role "' in lower:
        return "check the user name and password in the DSN"
    if "does not exist" in reason:
        return "create the database (createdb) or fix its name in the DSN"
    return "start the server or fix the host and port in the DSN"


def is_connection_lost(exc: BaseException) -> bool:
    """The server went away (or the connection broke) rather than refusing the statement."""
    return isinstance(exc, (psycopg.OperationalError, PoolTimeout)) and not isinstance(
        exc, (pg_errors.QueryCanceled, pg_errors.LockNotAvailable))


class Database:
    """A pool of connections to one database, with its schema checked and migrated."""

    errors = pg_errors  # psycopg's error classes, for modules that must not import it first

    def __init__(self, dsn: str):
        if not dsn:
            raise SessionStoreError(
                "sessions.store is 'postgres' but no database is named: set sessions.dsn in "
                "config.yaml or HERMES_POSTGRES_DSN (e.g. postgresql://hermes@127.0.0.1:5432/"
                "hermes)")
        self.dsn = dsn
        self.label = mask_dsn(dsn)
        try:
            psycopg.conninfo.conninfo_to_dict(dsn)
        except psycopg.ProgrammingError as exc:
            raise SessionStoreError(f"the PostgreSQL address {self.label!r} is not a valid DSN "
                                    f"({_reason(exc, '')}); write it as postgresql://USER:"
                                    "PASSWORD@HOST:5432/DATABASE") from None
        self.schema, self.schema_changes = self._check_and_migrate()
        self.pool = ConnectionPool(dsn, min_size=1, max_size=MAX_CONNECTIONS, open=False,
                                   kwargs={"row_factory": dict_row, "autocommit": False,
                                           "connect_timeout": CONNECT_TIMEOUT_S},
                                   configure=self._pin, name="hermes-sessions")
        self.pool.open(wait=False)
        self._closed = threading.Event()

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.dsn, connect_timeout=CONNECT_TIMEOUT_S,
                                   row_factory=dict_row)
        except psycopg.Error as exc:
            reason = _reason(exc, self.dsn)
            fix = connect_fix(reason)
            raise SessionStoreError(f"cannot connect to the PostgreSQL session store at "
                                    f"{self.label}: {reason}. Nothing was written; {fix} "
                                    "(sessions.dsn or HERMES_POSTGRES_DSN).") from None

    def connect(self, **kwargs: Any) -> psycopg.Connection[Any]:
        """A connection of its own (LISTEN, a held lock) that searches the store's schema
        only, as the pool's do."""
        conn = psycopg.connect(self.dsn, connect_timeout=CONNECT_TIMEOUT_S, **kwargs)
        try:
            self._pin(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _pin(self, conn: psycopg.Connection[Any]) -> None:
        """Search the store's schema alone, so no name reaches another schema's tables."""
        conn.execute("SELECT set_config('search_path', %s, false)",
                     (schema.pinned_path(self.schema),))
        if not conn.autocommit:
            conn.commit()

    def _check_and_migrate(self) -> tuple[str, list[str]]:
        """Refuse a newer schema and apply missing migrations, once across processes."""
        conn = self._connect()
        try:
            return schema.migrate(conn, self.label)
        finally:
            conn.close()

    # --- running work -------------------------------------------------------------------
    def run(self, fn: Callable[[psycopg.Connection[Any]], T], *,
            recheck: Callable[[psycopg.Connection[Any]], T | None] | None = None,
            repeatable: bool = True) -> T:
        """Run ``fn`` in one transaction; when the connection is lost, retry on a fresh one.

        Lost before the commit was sent: nothing was applied, so ``fn`` runs again. Lost
        during the commit, the write may have landed: ``recheck`` (an append, a new session)
        returns its result when it did, so it is not made twice; a ``repeatable`` write
        (setting a value, a read) just runs again; any other (adding to counters) is refused
        with an error rather than counted twice."""
        committing = False
        for attempt in range(RETRIES):
            try:
                with self.pool.connection(timeout=CONNECT_TIMEOUT_S * 2) as conn:
                    if committing and recheck is not None:
                        with conn.transaction():
                            done = recheck(conn)
                        if done is not None:
                            return done
                    committing = False
                    with conn.transaction():
                        result = fn(conn)
                        committing = True  # leaving the block sends COMMIT
                    return result
            except psycopg.Error as exc:
                if isinstance(exc, pg_errors.UndefinedTable):
                    raise SessionStoreError(
                        f"the session tables are missing in {self.label} (dropped while hermes "
                        "ran?); restart hermes to create them again") from exc
                if not is_connection_lost(exc):
                    raise
                reason = _reason(exc, self.dsn)
                if committing and recheck is None and not repeatable:
                    raise SessionStoreError(
                        f"lost the connection to {self.label} while committing ({reason}); the "
                        "change may or may not be stored, so it was not made again. Check "
                        "the session's counters.") from None
                if attempt == RETRIES - 1:
                    raise SessionStoreError(
                        f"lost the connection to {self.label} {RETRIES} times in a row "
                        f"({reason}); the last change was not acknowledged. Check the server "
                        "and the network.") from None
                log.warning("connection to %s lost (%s); retrying", self.label, reason)
                time.sleep(min(2.0, 0.1 * 2 ** attempt))
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.pool.close()
