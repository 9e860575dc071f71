"""Owner: the builtin plugin `sessions` (the postgres session store uses it too). What every
SQL session store shares, written once for any SQL dialect.

A store names its dialect (:class:`SqlDialect`: parameter marks, how a list is bound, casts,
how values and rows travel) and builds :class:`SessionSql` from it once, when its class is
made: every statement below is then a constant of that store, as if written by hand in its
SQL. :class:`SqlSessionMethods` holds the store methods that are the same in any SQL; a store
class inherits it and provides what its database does its own way: ``_read`` (rows of a
query), ``_write`` (a function run in one transaction), ``_update`` (one UPDATE of one session),
``_insert_session`` and ``_append`` (with the errors they map). Lineage, titles, the rich
listing and usage totals are in :mod:`.lineage`; a message's values, many messages at once
and imports in :mod:`.rows`; the dialect in :mod:`.dialect`, the statements in
:mod:`.statements`.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from hermes_agent.api import SessionStoreError, TitleConflictError

from . import lineage
from .rows import message_values
from .statements import SessionSql
from .values import clean_optional, sanitize_title, tool_call_count

S = TypeVar("S", bound="SqlSessionMethods")


def model_config_text(model_config: Any) -> Any:
    """``model_config`` as stored: text kept, anything else as JSON text."""
    if model_config is not None and not isinstance(model_config, str):
        return clean_optional(json.dumps(model_config, default=str))
    return model_config


def create_error(conflict: str, row: tuple[Any, ...]) -> SessionStoreError:
    """The error of a session that could not be created (``row`` as for ``create_session``):
    its id exists (``conflict="id"``), its title is taken ("title") or its parent is missing
    ("parent")."""
    if conflict == "id":
        return SessionStoreError(f"a session with id {row[0]!r} already exists; pick another "
                                 "id or reopen that session")
    if conflict == "title":
        return TitleConflictError(f"the title {row[8]!r} is already used by another session; "
                                  "choose another title")
    return SessionStoreError(f"no parent session {row[7]!r}: create the parent first or pass "
                             "parent_session_id=None")


def write_session_title(conn: Any, sql: SessionSql, session_id: str, clean: str | None,
                        only_if_untitled: bool) -> int:
    """Set a session's title (cleaned) unless another session has it: TitleConflictError.
    With ``only_if_untitled`` only while it has none (returns 0 when it had one), else an
    unknown session is a SessionStoreError."""
    if clean is not None:
        other = conn.execute(sql.other_title, (clean, session_id)).fetchone()
        if other:
            raise TitleConflictError(f"the title {clean!r} is already used by session "
                                     f"{other['id']}; choose another title")
    changed = int(conn.execute(sql.set_new_title if only_if_untitled else sql.set_title,
                               (clean, session_id)).rowcount)
    if not changed and not only_if_untitled:
        raise SessionStoreError(f"no session {session_id!r}")
    return changed


def delete_session_rows(conn: Any, sql: SessionSql, session_id: str) -> bool:
    """Delete one session and its messages; its children keep living, without a parent."""
    args = sql.dialect.params((session_id,))
    conn.execute(sql.orphan_children, args)
    conn.execute(sql.delete_messages, args)
    return bool(conn.execute(sql.delete_session, args).rowcount)


class SqlSessionMethods:
    """The session-store methods that are the same in any SQL (see the module docstring)."""

    sql: ClassVar[SessionSql]

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def _update(self, session_id: str, sql: str, args: Iterable[Any] = (),
                repeatable: bool = True) -> None:
        """Run one UPDATE of ``session_id`` (the last parameter); ``repeatable``: running it
        twice does no harm (a store may retry it after a lost connection)."""
        raise NotImplementedError

    def _write(self, fn: Callable[[Any], Any]) -> Any:
        raise NotImplementedError

    def _insert_session(self, row: tuple[Any, ...]) -> None:
        """INSERT ``row`` (id, source, started_at, *SESSION_FIELDS) with ``sql.create_session``;
        an id that exists, a title another session has or a missing parent raises the error
        that names it."""
        raise NotImplementedError

    def _append(self, row: tuple[Any, ...], calls: int) -> int:
        """Insert one message (``row``: :func:`message_values`) and count it and its ``calls``
        tool calls in its session, in one transaction; its id."""
        raise NotImplementedError

    # --- sessions ---------------------------------------------------------------------
    def create_session(self, session_id: str | None = None, *, source: str,
                       model: str | None = None, user_id: str | None = None,
                       parent_session_id: str | None = None, model_config: Any = None,
                       system_prompt: str | None = None, title: str | None = None,
                       started_at: float | None = None) -> str:
        session_id = session_id or time.strftime("%Y%m%d_%H%M%S_") + uuid.uuid4().hex[:8]
        self._insert_session((session_id, source, time.time() if started_at is None
                              else started_at, user_id, model, model_config_text(model_config),
                              clean_optional(system_prompt), parent_session_id,
                              sanitize_title(title)))
        return session_id

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        rows = self._read(self.sql.session, (session_id,))
        return self.sql.dialect.dicts(rows)[0] if rows else None

    def end_session(self, session_id: str, end_reason: str = "user") -> None:
        self._update(session_id, self.sql.end, (time.time(), end_reason))

    def reopen_session(self, session_id: str) -> None:
        self._update(session_id, self.sql.reopen)

    def update_system_prompt(self, session_id: str, system_prompt: str) -> None:
        self._update(session_id, self.sql.system_prompt, (clean_optional(system_prompt),))

    def update_session_model(self, session_id: str, model: str, model_config: Any = None) -> None:
        self._update(session_id, self.sql.model, (model, model_config_text(model_config)))

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
        labels = (cost_status, cost_source, pricing_version, billing_provider, billing_base_url,
                  billing_mode, model)
        if absolute:
            self._update(session_id, self.sql.set_tokens,
                         (*counts, *labels, estimated_cost_usd, actual_cost_usd))
        else:  # adding twice is not harmless
            self._update(session_id, self.sql.add_tokens,
                         (*counts, *labels, estimated_cost_usd, estimated_cost_usd,
                          actual_cost_usd, actual_cost_usd), repeatable=False)

    # --- messages ---------------------------------------------------------------------
    def append_message(self, session_id: str, role: str, content: Any = None, *,
                       tool_name: str | None = None, tool_calls: Any = None,
                       tool_call_id: str | None = None, token_count: int | None = None,
                       finish_reason: str | None = None, reasoning: str | None = None,
                       reasoning_content: str | None = None, reasoning_details: Any = None,
                       codex_reasoning_items: Any = None, codex_message_items: Any = None,
                       timestamp: float | None = None, provenance: Any = None) -> int:
        row = message_values(session_id, role, content, tool_call_id, tool_calls, tool_name,
                             time.time() if timestamp is None else float(timestamp),
                             token_count, finish_reason, reasoning, reasoning_content,
                             reasoning_details, codex_reasoning_items, codex_message_items,
                             provenance)
        return self._append(row, tool_call_count(tool_calls))

    def get_messages(self, session_id: str, limit: int | None = None,
                     offset: int = 0) -> list[dict[str, Any]]:
        d = self.sql.dialect
        rows = self._read(self.sql.messages,
                          (session_id, d.no_limit if limit is None else limit, offset))
        return [d.message_row(r) for r in rows]

    def get_messages_as_conversation(self, session_id: str) -> list[dict[str, Any]]:
        out = []
        for msg in self.get_messages(session_id):
            item: dict[str, Any] = {"role": msg["role"], "content": msg["content"]}
            for key in ("tool_calls", "tool_call_id", "tool_name", "provenance"):
                if msg[key]:
                    item[key] = msg[key]
            if msg["role"] == "assistant" and msg["codex_message_items"]:
                item["codex_message_items"] = msg["codex_message_items"]
            out.append(item)
        return out

    def clear_messages(self, session_id: str) -> int:
        sql = self.sql
        args = (session_id,)

        def do(conn: Any) -> int:
            n = conn.execute(sql.delete_messages, args).rowcount
            conn.execute(sql.zero_counts, args)
            return int(n)
        return int(self._write(do))

    # --- titles and ids -----------------------------------------------------------------
    def _set_title(self, session_id: str, clean: str | None, only_if_untitled: bool) -> int:
        return int(self._write(lambda conn: write_session_title(
            conn, self.sql, session_id, clean, only_if_untitled)))

    def set_session_title(self, session_id: str, title: str | None) -> str | None:
        clean = sanitize_title(title)
        self._set_title(session_id, clean, False)
        return clean

    def set_title_if_untitled(self, session_id: str, title: str) -> str | None:
        clean = sanitize_title(title)
        if clean is None:
            return None
        return clean if self._set_title(session_id, clean, True) else None

    def resolve_session_by_title(self, title: str) -> str | None:
        return lineage.resolve_title(self._read, self.sql.lineage, title)

    def get_next_title_in_lineage(self, base_title: str) -> str:
        return lineage.next_title(self._read, self.sql.lineage, base_title)

    def resolve_session_id(self, key: str) -> str | None:
        if not key:
            return None
        if self._read(self.sql.session_exists, (key,)):
            return key
        rows = self._read(self.sql.id_prefix, (lineage.like_escape(key) + "%",))
        if len(rows) == 1:
            return str(rows[0]["id"])
        if len(rows) > 1:
            raise SessionStoreError(f"{key!r} matches more than one session id; type more of it")
        return self.resolve_session_by_title(key)

    # --- lineage, listing, statistics ---------------------------------------------------
    def get_ancestors(self, session_id: str) -> list[dict[str, Any]]:
        return lineage.ancestors(self._read, self.sql.lineage, session_id)

    def get_descendants(self, session_id: str) -> list[dict[str, Any]]:
        return lineage.descendants(self._read, self.sql.lineage, session_id)

    def get_compression_tip(self, session_id: str) -> str:
        return lineage.compression_tip(self._read, self.sql.lineage, session_id)

    def is_compression_continuation(self, session_id: str) -> bool:
        """True when the session continues its parent after compression (not a delegation)."""
        return lineage.is_continuation(self._read, self.sql.lineage, session_id)

    def list_sessions(self, source: str | None = None, limit: int = 20,
                      offset: int = 0) -> list[dict[str, Any]]:
        if source:
            rows = self._read(self.sql.sessions_of, (source, limit, offset))
        else:
            rows = self._read(self.sql.sessions, (limit, offset))
        return self.sql.dialect.dicts(rows)

    def last_active_session(self, source: str) -> str | None:
        """The session of ``source`` used last: the one with the newest message (a session
        without messages counts from its start)."""
        rows = self._read(self.sql.last_used_of, (source,))
        return str(self.sql.dialect.dicts(rows)[0]["id"]) if rows else None

    def list_sessions_rich(self, *, source: str | None = None,
                           exclude_sources: Iterable[str] | None = None, limit: int = 20,
                           offset: int = 0, include_children: bool = False,
                           project_compression_tips: bool = True) -> list[dict[str, Any]]:
        return lineage.list_rich(self._read, self.sql.lineage, source=source,
                                 exclude_sources=exclude_sources, limit=limit, offset=offset,
                                 include_children=include_children,
                                 project=project_compression_tips)

    def usage_stats(self, source: str | None = None) -> dict[str, Any]:
        return lineage.usage_stats(self._read, self.sql.lineage, source)

    # --- export and clean-up ------------------------------------------------------------
    def export_session(self, session_id: str) -> dict[str, Any] | None:
        session = self.get_session(session_id)
        if session is None:
            return None
        session["messages"] = self.get_messages(session_id)
        return session

    def export_all(self, source: str | None = None) -> Iterator[dict[str, Any]]:
        rows = (self._read(self.sql.ids_of, (source,)) if source
                else self._read(self.sql.ids))
        for session_id in [r["id"] for r in rows]:
            data = self.export_session(session_id)
            if data is not None:
                yield data

    def prune_sessions(self, older_than_days: float = 90, source: str | None = None) -> int:
        sql = self.sql
        cutoff = time.time() - older_than_days * 86400
        query, args = ((sql.ended_before_of, (cutoff, source)) if source
                       else (sql.ended_before, (cutoff,)))
        args = sql.dialect.params(args)

        def do(conn: Any) -> int:
            ids = [r["id"] for r in conn.execute(query, args).fetchall()]
            for session_id in ids:
                delete_session_rows(conn, sql, session_id)
            return len(ids)
        return int(self._write(do))

    def delete_session(self, session_id: str) -> bool:
        return bool(self._write(lambda conn: delete_session_rows(conn, self.sql, session_id)))
