"""``SqliteSessionStore``: the builtin session store over ``$HERMES_HOME/state.db``.

The object is cheap to build (the plugin registers one at boot); the database opens on the
first call. One store per process and path is enough: it is thread-safe.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from hermes_agent.api import SEARCH_BUDGET_S, SessionStoreError, TitleConflictError

from . import codec, health, lineage
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
_SESSION_FIELDS = ("user_id", "model", "model_config", "system_prompt", "parent_session_id",
                   "title")
_COST_FIELDS = ("cost_status", "cost_source", "pricing_version", "billing_provider",
                "billing_base_url", "billing_mode")
_TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
           "reasoning_tokens", "api_call_count")
IDLE_READERS = 4  # read connections kept open between reads


@public_methods_at_edge
class SqliteSessionStore:
    """The ``sqlite`` session store. See :class:`hermes_agent.api.SessionStore` for the contract.

    Writes share one connection under a lock; reads (searches included) take a connection of
    their own from a small pool, so under WAL a long search never delays an append. Every
    public method's arguments are normalised first (see :mod:`.inputs`)."""

    name = "sqlite"

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

    def __enter__(self) -> "SqliteSessionStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- sessions ---------------------------------------------------------------------
    def create_session(self, session_id: str | None = None, *, source: str,
                       model: str | None = None, user_id: str | None = None,
                       parent_session_id: str | None = None, model_config: Any = None,
                       system_prompt: str | None = None, title: str | None = None,
                       started_at: float | None = None) -> str:
        session_id = session_id or time.strftime("%Y%m%d_%H%M%S_") + uuid.uuid4().hex[:8]
        if model_config is not None and not isinstance(model_config, str):
            model_config = codec.clean_text(json.dumps(model_config, default=str))
        values = {"user_id": user_id, "model": model, "model_config": model_config,
                  "system_prompt": codec.clean_text(system_prompt),
                  "parent_session_id": parent_session_id, "title": codec.sanitize_title(title)}

        def do(conn: sqlite3.Connection) -> None:
            conn.execute(
                f"INSERT INTO sessions (id, source, started_at, {', '.join(_SESSION_FIELDS)}) "
                f"VALUES (?, ?, ?, {', '.join('?' * len(_SESSION_FIELDS))})",
                (session_id, source, time.time() if started_at is None else started_at,
                 *values.values()))
        try:
            self._write(do)
        except sqlite3.IntegrityError as exc:
            text = str(exc)
            if "sessions.id" in text:
                raise SessionStoreError(f"a session with id {session_id!r} already exists; "
                                        "pick another id or reopen that session") from exc
            if "title" in text:
                raise TitleConflictError(f"the title {values['title']!r} is already used by "
                                         "another session; choose another title") from exc
            raise SessionStoreError(f"no parent session {parent_session_id!r}: create the "
                                    "parent first or pass parent_session_id=None") from exc
        return session_id

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        rows = self._read("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return dict(rows[0]) if rows else None

    def _update(self, session_id: str, sql: str, args: Iterable[Any] = ()) -> None:
        def do(conn: sqlite3.Connection) -> None:
            if conn.execute(sql, (*args, session_id)).rowcount == 0:
                raise SessionStoreError(f"no session {session_id!r}; list sessions with "
                                        "`hermes sessions list`")
        self._write(do)

    def end_session(self, session_id: str, end_reason: str = "user") -> None:
        self._update(session_id, "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?",
                     (time.time(), end_reason))

    def reopen_session(self, session_id: str) -> None:
        self._update(session_id,
                     "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?")

    def update_system_prompt(self, session_id: str, system_prompt: str) -> None:
        self._update(session_id, "UPDATE sessions SET system_prompt = ? WHERE id = ?",
                     (codec.clean_text(system_prompt),))

    def update_session_model(self, session_id: str, model: str, model_config: Any = None) -> None:
        if model_config is not None and not isinstance(model_config, str):
            model_config = codec.clean_text(json.dumps(model_config, default=str))
        self._update(session_id, "UPDATE sessions SET model = ?, "
                     "model_config = COALESCE(?, model_config) WHERE id = ?", (model, model_config))

    def update_token_counts(self, session_id: str, *, input_tokens: int = 0,
                            output_tokens: int = 0, cache_read_tokens: int = 0,
                            cache_write_tokens: int = 0, reasoning_tokens: int = 0,
                            api_call_count: int = 0, estimated_cost_usd: float | None = None,
                            actual_cost_usd: float | None = None, cost_status: str | None = None,
                            cost_source: str | None = None, pricing_version: str | None = None,
                            billing_provider: str | None = None,
                            billing_base_url: str | None = None, billing_mode: str | None = None,
                            model: str | None = None, absolute: bool = False) -> None:
        counts = (input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
                  reasoning_tokens, api_call_count)
        if absolute:
            sets = [f"{c} = ?" for c in _TOKENS]
            costs = ["estimated_cost_usd = ?", "actual_cost_usd = ?"]
        else:
            sets = [f"{c} = COALESCE({c}, 0) + ?" for c in _TOKENS]
            costs = [f"{c} = CASE WHEN ? IS NULL THEN {c} ELSE COALESCE({c}, 0) + ? END"
                     for c in ("estimated_cost_usd", "actual_cost_usd")]
        cost_args: list[Any] = ([estimated_cost_usd, actual_cost_usd] if absolute else
                                [estimated_cost_usd, estimated_cost_usd, actual_cost_usd,
                                 actual_cost_usd])
        labels = (cost_status, cost_source, pricing_version, billing_provider, billing_base_url,
                  billing_mode, model)
        sets += [f"{c} = COALESCE(?, {c})" for c in (*_COST_FIELDS, "model")]
        self._update(session_id, f"UPDATE sessions SET {', '.join(sets + costs)} WHERE id = ?",
                     (*counts, *labels, *cost_args))

    # --- messages ---------------------------------------------------------------------
    def append_message(self, session_id: str, role: str, content: Any = None, *,
                       tool_name: str | None = None, tool_calls: Any = None,
                       tool_call_id: str | None = None, token_count: int | None = None,
                       finish_reason: str | None = None, reasoning: str | None = None,
                       reasoning_content: str | None = None, reasoning_details: Any = None,
                       codex_reasoning_items: Any = None, codex_message_items: Any = None,
                       timestamp: float | None = None) -> int:
        row = (session_id, role, codec.encode_content(content), tool_call_id,
               codec.encode_json(tool_calls), codec.clean_text(tool_name),
               time.time() if timestamp is None else float(timestamp), token_count,
               finish_reason, codec.clean_text(reasoning), codec.clean_text(reasoning_content),
               codec.encode_json(reasoning_details), codec.encode_json(codex_reasoning_items),
               codec.encode_json(codex_message_items))
        calls = codec.tool_call_count(tool_calls)

        def do(conn: sqlite3.Connection) -> int:
            if conn.execute("UPDATE sessions SET message_count = message_count + 1, "
                            "tool_call_count = tool_call_count + ? WHERE id = ?",
                            (calls, session_id)).rowcount == 0:
                raise SessionStoreError(f"no session {session_id!r}: create it with "
                                        "create_session() before appending messages")
            return int(conn.execute(_INSERT_MESSAGE, row).lastrowid)
        return self._write(do)

    def get_messages(self, session_id: str, limit: int | None = None,
                     offset: int = 0) -> list[dict[str, Any]]:
        rows = self._read(f"SELECT {_MESSAGE_SELECT} FROM messages WHERE session_id = ? "
                          "ORDER BY id LIMIT ? OFFSET ?",
                          (session_id, -1 if limit is None else limit, offset))
        return [codec.message_row(r) for r in rows]

    def get_messages_as_conversation(self, session_id: str) -> list[dict[str, Any]]:
        out = []
        for msg in self.get_messages(session_id):
            item: dict[str, Any] = {"role": msg["role"], "content": msg["content"]}
            if msg["tool_calls"]:
                item["tool_calls"] = msg["tool_calls"]
            if msg["tool_call_id"]:
                item["tool_call_id"] = msg["tool_call_id"]
            if msg["tool_name"]:
                item["tool_name"] = msg["tool_name"]
            if msg["role"] == "assistant" and msg["codex_message_items"]:
                item["codex_message_items"] = msg["codex_message_items"]
            out.append(item)
        return out

    def replace_messages(self, session_id: str, messages: Iterable[dict[str, Any]]) -> None:
        items = list(messages)

        def do(conn: sqlite3.Connection) -> None:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise SessionStoreError(f"no session {session_id!r}")
            conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            insert_messages(conn, session_id, items)
        self._write(do, writes=len(items) + 1)

    def clear_messages(self, session_id: str) -> int:
        def do(conn: sqlite3.Connection) -> int:
            n = conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,)).rowcount
            conn.execute("UPDATE sessions SET message_count = 0, tool_call_count = 0 WHERE id = ?",
                         (session_id,))
            return n
        return self._write(do)

    # --- titles -----------------------------------------------------------------------
    def set_session_title(self, session_id: str, title: str | None) -> str | None:
        clean = codec.sanitize_title(title)

        def do(conn: sqlite3.Connection) -> None:
            if clean is not None:
                other = conn.execute("SELECT id FROM sessions WHERE title = ? AND id != ?",
                                     (clean, session_id)).fetchone()
                if other:
                    raise TitleConflictError(
                        f"the title {clean!r} is already used by session {other[0]}; choose "
                        "another title")
            if conn.execute("UPDATE sessions SET title = ? WHERE id = ?",
                            (clean, session_id)).rowcount == 0:
                raise SessionStoreError(f"no session {session_id!r}")
        self._write(do)
        return clean

    def set_title_if_untitled(self, session_id: str, title: str) -> str | None:
        clean = codec.sanitize_title(title)
        if clean is None:
            return None

        def do(conn: sqlite3.Connection) -> str | None:
            other = conn.execute("SELECT id FROM sessions WHERE title = ? AND id != ?",
                                 (clean, session_id)).fetchone()
            if other:
                raise TitleConflictError(f"the title {clean!r} is already used by session "
                                         f"{other[0]}; choose another title")
            changed = conn.execute("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL",
                                   (clean, session_id)).rowcount
            return clean if changed else None
        return self._write(do)

    def resolve_session_by_title(self, title: str) -> str | None:
        return lineage.resolve_title(self._read, title)

    def get_next_title_in_lineage(self, base_title: str) -> str:
        return lineage.next_title(self._read, base_title)

    def resolve_session_id(self, key: str) -> str | None:
        if not key:
            return None
        if self._read("SELECT 1 FROM sessions WHERE id = ?", (key,)):
            return key
        like = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._read("SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (like,))
        if len(rows) == 1:
            return str(rows[0][0])
        if len(rows) > 1:
            raise SessionStoreError(f"{key!r} matches more than one session id; type more of it")
        return self.resolve_session_by_title(key)

    # --- lineage, listing, search, statistics -----------------------------------------
    def get_ancestors(self, session_id: str) -> list[dict[str, Any]]:
        return lineage.ancestors(self._read, session_id)

    def get_descendants(self, session_id: str) -> list[dict[str, Any]]:
        return lineage.descendants(self._read, session_id)

    def get_compression_tip(self, session_id: str) -> str:
        return lineage.compression_tip(self._read, session_id)

    def is_compression_continuation(self, session_id: str) -> bool:
        """True when the session continues its parent after compression (not a delegation)."""
        return lineage.is_continuation(self._read, session_id)

    def list_sessions(self, source: str | None = None, limit: int = 20,
                      offset: int = 0) -> list[dict[str, Any]]:
        where, args = ("WHERE source = ?", [source]) if source else ("", [])
        rows = self._read(f"SELECT * FROM sessions {where} ORDER BY started_at DESC "
                          "LIMIT ? OFFSET ?", (*args, limit, offset))
        return [dict(r) for r in rows]

    def list_sessions_rich(self, *, source: str | None = None,
                           exclude_sources: Iterable[str] | None = None, limit: int = 20,
                           offset: int = 0, include_children: bool = False,
                           project_compression_tips: bool = True) -> list[dict[str, Any]]:
        return lineage.list_rich(self._read, source=source, exclude_sources=exclude_sources,
                                 limit=limit, offset=offset, include_children=include_children,
                                 project=project_compression_tips)

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

    def usage_stats(self, source: str | None = None) -> dict[str, Any]:
        return lineage.usage_stats(self._read, source)

    # --- export and clean-up ------------------------------------------------------------
    def export_session(self, session_id: str) -> dict[str, Any] | None:
        session = self.get_session(session_id)
        if session is None:
            return None
        session["messages"] = self.get_messages(session_id)
        return session

    def export_all(self, source: str | None = None) -> Iterator[dict[str, Any]]:
        where, args = ("WHERE source = ?", (source,)) if source else ("", ())
        ids = [r[0] for r in self._read(f"SELECT id FROM sessions {where} ORDER BY started_at",
                                        args)]
        for session_id in ids:
            data = self.export_session(session_id)
            if data is not None:
                yield data

    def prune_sessions(self, older_than_days: float = 90, source: str | None = None) -> int:
        cutoff = time.time() - older_than_days * 86400
        where = "ended_at IS NOT NULL AND started_at < ?" + (" AND source = ?" if source else "")
        args: tuple[Any, ...] = (cutoff, source) if source else (cutoff,)

        def do(conn: sqlite3.Connection) -> int:
            ids = [r[0] for r in conn.execute(f"SELECT id FROM sessions WHERE {where}", args)]
            for session_id in ids:
                delete_session_rows(conn, session_id)
            return len(ids)
        return self._write(do)

    def delete_session(self, session_id: str) -> bool:
        return self._write(lambda conn: delete_session_rows(conn, session_id))

    # --- import -------------------------------------------------------------------------
    def import_records(self, records: Iterable[dict[str, Any]], *,
                       keep_message_ids: bool = False) -> dict[str, int]:
        """Insert exported sessions (each with ``messages``); existing ids are skipped. With
        ``keep_message_ids`` messages keep their ids (``sessions migrate``: exports stay
        identical); an id the store already holds is then a SessionStoreError."""
        from .transfer import import_records

        return import_records(self, records, keep_message_ids)


_MESSAGE_COLUMNS = ("session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name",
                    "timestamp", "token_count", "finish_reason", "reasoning",
                    "reasoning_content", "reasoning_details", "codex_reasoning_items",
                    "codex_message_items")
_INSERT_MESSAGE = (f"INSERT INTO messages ({', '.join(_MESSAGE_COLUMNS)}) "
                   f"VALUES ({', '.join('?' * len(_MESSAGE_COLUMNS))})")
_MESSAGE_SELECT = "id, " + ", ".join(_MESSAGE_COLUMNS)
_INSERT_NUMBERED = (f"INSERT INTO messages ({_MESSAGE_SELECT}) "
                    f"VALUES ({', '.join('?' * (len(_MESSAGE_COLUMNS) + 1))})")


def insert_messages(conn: sqlite3.Connection, session_id: str,
                    messages: Iterable[dict[str, Any]], keep_ids: bool = False) -> int:
    """Insert message dicts (keys as in get_messages) and recount the session's counters.
    With ``keep_ids`` each keeps its ``id`` (else the store numbers them)."""
    rows = []
    now = time.time()
    for i, m in enumerate(messages):
        rows.append((m.get("id") if keep_ids else None, session_id, codec.clean_text(m.get("role") or "user"),
                     codec.encode_content(m.get("content")),
                     codec.clean_text(m.get("tool_call_id")), codec.encode_json(m.get("tool_calls")),
                     codec.clean_text(m.get("tool_name")),
                     float(m.get("timestamp") or now + i * 1e-6), m.get("token_count"),
                     codec.clean_text(m.get("finish_reason")), codec.clean_text(m.get("reasoning")),
                     codec.clean_text(m.get("reasoning_content")),
                     codec.encode_json(m.get("reasoning_details")),
                     codec.encode_json(m.get("codex_reasoning_items")),
                     codec.encode_json(m.get("codex_message_items"))))
    conn.executemany(_INSERT_NUMBERED, rows)  # a NULL id: SQLite numbers the row
    calls = sum(codec.tool_call_count(r[5]) for r in rows)
    conn.execute("UPDATE sessions SET message_count = (SELECT COUNT(*) FROM messages WHERE "
                 "session_id = ?), tool_call_count = ? WHERE id = ?", (session_id, calls,
                                                                      session_id))
    return len(rows)


def delete_session_rows(conn: sqlite3.Connection, session_id: str) -> bool:
    """Delete one session and its messages; its children keep living, without a parent."""
    conn.execute("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?",
                 (session_id,))
    conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
    return conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0
