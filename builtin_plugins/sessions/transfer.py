"""Export to JSON lines and import from exports or from a state.db written by Hermes Agent.
Imports never overwrite (see ``hermes_agent.kits.sql.rows.insert_session_row``)."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

from hermes_agent.api import SessionStoreError
from hermes_agent.kits.sql.rows import (
    import_session_records, insert_message_rows, insert_session_row, tally_import,
)
from hermes_agent.kits.sql.statements import SessionSql

from . import codec
from .db import check_file, explain
from .schema import MESSAGE_COLUMNS

T = TypeVar("T")


class ImportingStore(Protocol):
    """What importing uses of the store (:class:`.store.SqliteSessionStore`)."""

    path: Path
    sql: SessionSql

    def _write(self, fn: Callable[[sqlite3.Connection], T], writes: int = 1) -> T: ...


def write_jsonl(records: Iterable[dict[str, Any]], out: IO[str]) -> int:
    """One session (with its messages) per line; returns how many."""
    n = 0
    for record in records:
        out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        n += 1
    return n


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError as exc:
                    raise SessionStoreError(f"{path}:{number} is not a JSON line ({exc}); "
                                            "import files come from `hermes sessions export`")


def import_records(store: ImportingStore, records: Iterable[dict[str, Any]],
                   keep_message_ids: bool = False) -> dict[str, int]:
    """Import exported sessions (dicts with ``messages``), parents before children."""
    def insert(record: dict[str, Any]) -> int | None:
        def do(conn: sqlite3.Connection) -> int | None:
            if not insert_session_row(conn, store.sql, record, record["id"]):
                return None
            return insert_message_rows(conn, store.sql, record["id"],
                                       record.get("messages") or [], keep_message_ids)
        try:
            return store._write(do)
        except sqlite3.IntegrityError as exc:
            raise SessionStoreError(
                f"{store.path} already holds a message with an id of session {record['id']!r} "
                "(keep_message_ids keeps them); import without keep_message_ids to number them "
                "anew") from exc
    return import_session_records(records, insert)


def import_state_db(store: ImportingStore, path: Path,
                    include_inactive: bool = False) -> dict[str, int]:
    """Copy sessions and messages from another state.db (Hermes Agent 0.19 or this store).

    Rows the source hides from its conversations (``active = 0``: compacted or rewound) are
    left out unless ``include_inactive``."""
    path = Path(path)
    if not path.is_file():
        raise SessionStoreError(f"{path} does not exist; give the path of a state.db file")
    check_file(path)
    with contextlib.ExitStack() as cleanup:
        try:
            src = cleanup.enter_context(contextlib.closing(_open_untouched(path, cleanup)))
            src.row_factory = sqlite3.Row
            tables = {r[0] for r in
                      src.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except (sqlite3.Error, OSError) as exc:
            raise explain(exc, path, "read") from exc
        if not {"sessions", "messages"} <= tables:
            raise SessionStoreError(f"{path} has no sessions/messages tables; it is not a state.db")
        try:
            return _copy(store, src, include_inactive)
        except sqlite3.DatabaseError as exc:
            raise explain(exc, path, "read") from exc


def state_db_records(path: Path, include_inactive: bool = False) -> Iterator[dict[str, Any]]:
    """The sessions of another state.db as export records (for stores that import records
    themselves), read without changing the file."""
    path = Path(path)
    if not path.is_file():
        raise SessionStoreError(f"{path} does not exist; give the path of a state.db file")
    check_file(path)
    with contextlib.ExitStack() as cleanup:
        try:
            src = cleanup.enter_context(contextlib.closing(_open_untouched(path, cleanup)))
            src.row_factory = sqlite3.Row
            msg_cols = {r[1] for r in src.execute("PRAGMA table_info(messages)")}
            wanted = [c for c in MESSAGE_COLUMNS if c in msg_cols and c != "search_text"]
            active = "" if include_inactive or "active" not in msg_cols else " AND active = 1"
            for session in src.execute("SELECT * FROM sessions ORDER BY started_at").fetchall():
                record = dict(session)
                record["messages"] = [codec.message_row(r) for r in src.execute(
                    f"SELECT {', '.join(wanted)} FROM messages WHERE session_id = ?{active} "
                    "ORDER BY id", (record["id"],))]
                yield record
        except sqlite3.DatabaseError as exc:
            raise explain(exc, path, "read") from exc


def _open_untouched(path: Path, cleanup: contextlib.ExitStack) -> sqlite3.Connection:
    """A read-only connection to the database at ``path`` that creates no file beside it.

    SQLite opens a WAL database's ``-wal`` and ``-shm`` files even for a read-only connection,
    creating them when missing. So: without a ``-wal`` (a database closed cleanly) the file is
    opened as immutable, which needs neither; with both (a database in use) they already exist
    and are shared as usual; a ``-wal`` alone (left by a crash) is recovered from a copy in a
    temporary folder."""
    wal, shm = (path.with_name(path.name + suffix) for suffix in ("-wal", "-shm"))
    if not wal.exists():
        return sqlite3.connect(path.absolute().as_uri() + "?immutable=1", uri=True)
    if shm.exists():
        return sqlite3.connect(path.absolute().as_uri() + "?mode=ro", uri=True)
    scratch = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="hermes-import-")))
    copy = scratch / path.name
    shutil.copyfile(path, copy)
    shutil.copyfile(wal, scratch / wal.name)
    return sqlite3.connect(copy)


def _copy(store: ImportingStore, src: sqlite3.Connection,
          include_inactive: bool) -> dict[str, int]:
    msg_cols = {r[1] for r in src.execute("PRAGMA table_info(messages)")}
    wanted = [c for c in MESSAGE_COLUMNS if c in msg_cols and c not in ("id", "search_text")]
    active = "" if include_inactive or "active" not in msg_cols else " AND active = 1"
    stats = {"sessions": 0, "messages": 0, "skipped": 0}
    sessions = src.execute("SELECT * FROM sessions ORDER BY started_at").fetchall()
    for session in sessions:
        record = dict(session)
        rows = src.execute(f"SELECT {', '.join(wanted)} FROM messages WHERE session_id = ?"
                           f"{active} ORDER BY id", (record["id"],)).fetchall()

        def do(conn: sqlite3.Connection, record: dict[str, Any] = record,
               rows: list[sqlite3.Row] = rows) -> int | None:
            if not insert_session_row(conn, store.sql, record, record["id"]):
                return None
            conn.executemany(f"INSERT INTO messages ({', '.join(wanted)}) VALUES "
                             f"({', '.join('?' * len(wanted))})", [tuple(r) for r in rows])
            calls = sum(codec.tool_call_count(r["tool_calls"]) for r in rows
                        if "tool_calls" in r.keys())
            conn.execute(store.sql.set_counts, (len(rows), calls, record["id"]))
            return len(rows)
        tally_import(stats, store._write(do, writes=max(1, len(rows))))
    return stats

