"""``PostgresSessionStore``: the ``postgres`` session store.

Cheap to build (the plugin registers one at boot): the DSN is read, psycopg imported, the
schema checked and migrated on the first call. Thread-safe; any number of processes may share
one database. See :class:`hermes_agent.api.SessionStore` for the contract, which this store
keeps as the sqlite one does (the conformance suite in ``hermes_agent.testing`` checks both).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from hermes_agent.api import (
    SEARCH_BUDGET_S,
    SessionStoreError,
    TitleConflictError,
    clean_optional,
    encode_content,
    encode_json,
    public_methods_at_edge,
    sanitize_title,
    tool_call_count,
)

from . import lineage
from .values import message_row, to_pg

_SESSION_FIELDS = ("user_id", "model", "model_config", "system_prompt", "parent_session_id",
                   "title")
_COST_FIELDS = ("cost_status", "cost_source", "pricing_version", "billing_provider",
                "billing_base_url", "billing_mode")
_TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
           "reasoning_tokens", "api_call_count")
MESSAGE_COLUMNS = ("session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name",
                   "timestamp", "token_count", "finish_reason", "reasoning",
                   "reasoning_content", "reasoning_details", "codex_reasoning_items",
                   "codex_message_items")
INSERT_MESSAGE = (f"INSERT INTO messages ({', '.join(MESSAGE_COLUMNS)}) "
                  f"VALUES ({', '.join(['%s'] * len(MESSAGE_COLUMNS))}) RETURNING id")
MESSAGE_SELECT = "id, " + ", ".join(MESSAGE_COLUMNS)


def _params(values: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(to_pg(v) for v in values)


@public_methods_at_edge
class PostgresSessionStore:
    """The ``postgres`` session store over one database (and the first schema of its
    ``search_path``)."""

    name = "postgres"

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
                    from .connection import Database

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
        params = _params(args)
        return self._run(lambda conn: conn.execute(sql, params).fetchall())

    def gateway_queue(self) -> Any:
        """The gateway's queue shared by every replica on this database (see
        :mod:`.gateway_queue`)."""
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

    def __enter__(self) -> "PostgresSessionStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- sessions ---------------------------------------------------------------------
    def create_session(self, session_id: str | None = None, *, source: str,
                       model: str | None = None, user_id: str | None = None,
                       parent_session_id: str | None = None, model_config: Any = None,
                       system_prompt: str | None = None, title: str | None = None,
                       started_at: float | None = None) -> str:
        from psycopg import errors as pg_errors

        session_id = session_id or time.strftime("%Y%m%d_%H%M%S_") + uuid.uuid4().hex[:8]
        if model_config is not None and not isinstance(model_config, str):
            model_config = clean_optional(json.dumps(model_config, default=str))
        clean_title = sanitize_title(title)
        row = _params((session_id, source, time.time() if started_at is None else started_at,
                       user_id, model, model_config, clean_optional(system_prompt),
                       parent_session_id, clean_title))
        sql = (f"INSERT INTO sessions (id, source, started_at, {', '.join(_SESSION_FIELDS)}) "
               f"VALUES ({', '.join(['%s'] * 9)})")

        def mine(conn: Any) -> str | None:  # after a lost connection: did the insert land?
            found = conn.execute("SELECT started_at FROM sessions WHERE id = %s",
                                 (row[0],)).fetchone()
            return session_id if found and found["started_at"] == row[2] else None
        try:
            self._run(lambda conn: conn.execute(sql, row), recheck=mine)
        except pg_errors.UniqueViolation as exc:
            if "title" in str(exc):
                raise TitleConflictError(f"the title {clean_title!r} is already used by "
                                         "another session; choose another title") from None
            raise SessionStoreError(f"a session with id {session_id!r} already exists; pick "
                                    "another id or reopen that session") from None
        except pg_errors.ForeignKeyViolation:
            raise SessionStoreError(f"no parent session {parent_session_id!r}: create the "
                                    "parent first or pass parent_session_id=None") from None
        return session_id

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        rows = self._read("SELECT * FROM sessions WHERE id = %s", (session_id,))
        return rows[0] if rows else None

    def _update(self, session_id: str, sql: str, args: Iterable[Any] = (),
                repeatable: bool = True) -> None:
        params = _params((*args, session_id))

        def do(conn: Any) -> None:
            if conn.execute(sql, params).rowcount == 0:
                raise SessionStoreError(f"no session {session_id!r}; list sessions with "
                                        "`hermes sessions list`")
        self._run(do, repeatable=repeatable)

    def end_session(self, session_id: str, end_reason: str = "user") -> None:
        self._update(session_id, "UPDATE sessions SET ended_at = %s, end_reason = %s "
                     "WHERE id = %s", (time.time(), end_reason))

    def reopen_session(self, session_id: str) -> None:
        self._update(session_id,
                     "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = %s")

    def update_system_prompt(self, session_id: str, system_prompt: str) -> None:
        self._update(session_id, "UPDATE sessions SET system_prompt = %s WHERE id = %s",
                     (clean_optional(system_prompt),))

    def update_session_model(self, session_id: str, model: str, model_config: Any = None) -> None:
        if model_config is not None and not isinstance(model_config, str):
            model_config = clean_optional(json.dumps(model_config, default=str))
        self._update(session_id, "UPDATE sessions SET model = %s, model_config = "
                     "COALESCE(%s, model_config) WHERE id = %s", (model, model_config))

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
            sets = [f"{c} = %s" for c in _TOKENS]
            costs = ["estimated_cost_usd = %s::float8", "actual_cost_usd = %s::float8"]
            cost_args: list[Any] = [estimated_cost_usd, actual_cost_usd]
        else:
            sets = [f"{c} = COALESCE({c}, 0) + %s" for c in _TOKENS]
            costs = [f"{c} = CASE WHEN %s::float8 IS NULL THEN {c} ELSE COALESCE({c}, 0) + "
                     "%s::float8 END" for c in ("estimated_cost_usd", "actual_cost_usd")]
            cost_args = [estimated_cost_usd, estimated_cost_usd, actual_cost_usd, actual_cost_usd]
        labels = (cost_status, cost_source, pricing_version, billing_provider, billing_base_url,
                  billing_mode, model)
        sets += [f"{c} = COALESCE(%s, {c})" for c in (*_COST_FIELDS, "model")]
        self._update(session_id, f"UPDATE sessions SET {', '.join(sets + costs)} WHERE id = %s",
                     (*counts, *labels, *cost_args), repeatable=absolute)

    # --- messages ---------------------------------------------------------------------
    def append_message(self, session_id: str, role: str, content: Any = None, *,
                       tool_name: str | None = None, tool_calls: Any = None,
                       tool_call_id: str | None = None, token_count: int | None = None,
                       finish_reason: str | None = None, reasoning: str | None = None,
                       reasoning_content: str | None = None, reasoning_details: Any = None,
                       codex_reasoning_items: Any = None, codex_message_items: Any = None,
                       timestamp: float | None = None) -> int:
        row = _params((session_id, role, encode_content(content), tool_call_id,
                       encode_json(tool_calls), clean_optional(tool_name),
                       time.time() if timestamp is None else float(timestamp), token_count,
                       finish_reason, clean_optional(reasoning),
                       clean_optional(reasoning_content), encode_json(reasoning_details),
                       encode_json(codex_reasoning_items), encode_json(codex_message_items)))
        calls = tool_call_count(tool_calls)

        def do(conn: Any) -> int:
            if conn.execute("UPDATE sessions SET message_count = message_count + 1, "
                            "tool_call_count = tool_call_count + %s WHERE id = %s",
                            (calls, session_id)).rowcount == 0:
                raise SessionStoreError(f"no session {session_id!r}: create it with "
                                        "create_session() before appending messages")
            return int(conn.execute(INSERT_MESSAGE, row).fetchone()["id"])

        def landed(conn: Any) -> int | None:  # the commit may have landed before the loss
            found = conn.execute(
                "SELECT id FROM messages WHERE session_id = %s AND timestamp = %s AND role = %s "
                "AND content IS NOT DISTINCT FROM %s AND tool_calls IS NOT DISTINCT FROM %s "
                "ORDER BY id DESC LIMIT 1", (row[0], row[6], row[1], row[2], row[4])).fetchone()
            return int(found["id"]) if found else None
        return int(self._run(do, recheck=landed))

    def get_messages(self, session_id: str, limit: int | None = None,
                     offset: int = 0) -> list[dict[str, Any]]:
        rows = self._read(f"SELECT {MESSAGE_SELECT} FROM messages WHERE session_id = %s "
                          "ORDER BY id LIMIT %s OFFSET %s", (session_id, limit, offset))
        return [message_row(r) for r in rows]

    def get_messages_as_conversation(self, session_id: str) -> list[dict[str, Any]]:
        out = []
        for msg in self.get_messages(session_id):
            item: dict[str, Any] = {"role": msg["role"], "content": msg["content"]}
            for key in ("tool_calls", "tool_call_id", "tool_name"):
                if msg[key]:
                    item[key] = msg[key]
            if msg["role"] == "assistant" and msg["codex_message_items"]:
                item["codex_message_items"] = msg["codex_message_items"]
            out.append(item)
        return out

    def replace_messages(self, session_id: str, messages: Iterable[dict[str, Any]]) -> None:
        from .transfer import insert_messages

        items = list(messages)

        def do(conn: Any) -> None:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = %s FOR UPDATE",
                                (session_id,)).fetchone():
                raise SessionStoreError(f"no session {session_id!r}")
            conn.execute("DELETE FROM messages WHERE session_id = %s", (session_id,))
            insert_messages(conn, session_id, items)
        self._run(do)

    def clear_messages(self, session_id: str) -> int:
        def do(conn: Any) -> int:
            n = conn.execute("DELETE FROM messages WHERE session_id = %s", (session_id,)).rowcount
            conn.execute("UPDATE sessions SET message_count = 0, tool_call_count = 0 "
                         "WHERE id = %s", (session_id,))
            return int(n)
        return int(self._run(do))

    # --- titles -----------------------------------------------------------------------
    def _set_title(self, session_id: str, clean: str | None, only_if_untitled: bool) -> Any:
        from psycopg import errors as pg_errors

        def do(conn: Any) -> Any:
            if clean is not None:
                other = conn.execute("SELECT id FROM sessions WHERE title = %s AND id != %s",
                                     (clean, session_id)).fetchone()
                if other:
                    raise TitleConflictError(f"the title {clean!r} is already used by session "
                                             f"{other['id']}; choose another title")
            guard = " AND title IS NULL" if only_if_untitled else ""
            changed = conn.execute(f"UPDATE sessions SET title = %s WHERE id = %s{guard}",
                                   (clean, session_id)).rowcount
            if not changed and not only_if_untitled:
                raise SessionStoreError(f"no session {session_id!r}")
            return changed
        try:
            return self._run(do)
        except pg_errors.UniqueViolation:  # another process took it between check and write
            raise TitleConflictError(f"the title {clean!r} is already used by another "
                                     "session; choose another title") from None

    def set_session_title(self, session_id: str, title: str | None) -> str | None:
        clean = sanitize_title(title)
        self._set_title(session_id, to_pg(clean), False)
        return clean

    def set_title_if_untitled(self, session_id: str, title: str) -> str | None:
        clean = sanitize_title(title)
        if clean is None:
            return None
        return clean if self._set_title(session_id, to_pg(clean), True) else None

    def resolve_session_by_title(self, title: str) -> str | None:
        return lineage.resolve_title(self._read, title)

    def get_next_title_in_lineage(self, base_title: str) -> str:
        return lineage.next_title(self._read, base_title)

    def resolve_session_id(self, key: str) -> str | None:
        if not key:
            return None
        if self._read("SELECT 1 FROM sessions WHERE id = %s", (key,)):
            return key
        like = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._read("SELECT id FROM sessions WHERE id LIKE %s ESCAPE '\\' LIMIT 2", (like,))
        if len(rows) == 1:
            return str(rows[0]["id"])
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
        where, args = ("WHERE source = %s", [source]) if source else ("", [])
        return self._read(f"SELECT * FROM sessions {where} ORDER BY started_at DESC "
                          "LIMIT %s OFFSET %s", (*args, limit, offset))

    def list_sessions_rich(self, *, source: str | None = None,
                           exclude_sources: Iterable[str] | None = None, limit: int = 20,
                           offset: int = 0, include_children: bool = False,
                           project_compression_tips: bool = True) -> list[dict[str, Any]]:
        excluded = [to_pg(s) for s in exclude_sources or ()]
        return lineage.list_rich(self._read, source=source, exclude_sources=excluded,
                                 limit=limit, offset=offset, include_children=include_children,
                                 project=project_compression_tips)

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

    def usage_stats(self, source: str | None = None) -> dict[str, Any]:
        return lineage.usage_stats(self._read, to_pg(source))

    # --- export and clean-up ------------------------------------------------------------
    def export_session(self, session_id: str) -> dict[str, Any] | None:
        session = self.get_session(session_id)
        if session is None:
            return None
        session["messages"] = self.get_messages(session_id)
        return session

    def export_all(self, source: str | None = None) -> Iterator[dict[str, Any]]:
        where, args = ("WHERE source = %s", (source,)) if source else ("", ())
        ids = [r["id"] for r in self._read(f"SELECT id FROM sessions {where} "
                                           "ORDER BY started_at, id", args)]
        for session_id in ids:
            data = self.export_session(session_id)
            if data is not None:
                yield data

    def prune_sessions(self, older_than_days: float = 90, source: str | None = None) -> int:
        from .transfer import delete_session_rows

        cutoff = time.time() - older_than_days * 86400
        where = "ended_at IS NOT NULL AND started_at < %s" + (" AND source = %s" if source else "")
        args = _params((cutoff, source) if source else (cutoff,))

        def do(conn: Any) -> int:
            ids = [r["id"] for r in conn.execute(f"SELECT id FROM sessions WHERE {where}", args)]
            for session_id in ids:
                delete_session_rows(conn, session_id)
            return len(ids)
        return int(self._run(do))

    def delete_session(self, session_id: str) -> bool:
        from .transfer import delete_session_rows

        return bool(self._run(lambda conn: delete_session_rows(conn, to_pg(session_id))))

    def import_records(self, records: Iterable[dict[str, Any]], *,
                       keep_message_ids: bool = False) -> dict[str, int]:
        """Insert exported sessions (each with ``messages``); existing ids are skipped, a taken
        title gets the next free " #<n>", a missing parent is dropped from the link. With
        ``keep_message_ids`` messages keep their ids (an id already here is an error)."""
        from .transfer import import_records

        return import_records(self, records, keep_message_ids)
