"""What every SQL session store shares, written once for any SQL dialect.

A store names its dialect (:class:`SqlDialect`: parameter marks, how a list is bound, casts,
how values and rows travel) and builds :class:`SessionSql` from it once, when its class is
made: every statement below is then a constant of that store, as if written by hand in its
SQL. :class:`SqlSessionMethods` holds the store methods that are the same in any SQL; a store
class inherits it and provides what its database does its own way: ``_read`` (rows of a
query), ``_write`` (a function run in one transaction), ``_update`` (one UPDATE of one session),
``_insert_session`` and ``_append`` (with the errors they map). Lineage, titles, the rich
listing and usage totals are in :mod:`.sql_lineage`; a message's values, many messages at once
and imports in :mod:`.sql_rows`.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from . import sql_lineage as lineage
from .session_values import clean_optional, sanitize_title, tool_call_count
from .sql_rows import message_values
from .sessions import SessionStoreError, TitleConflictError

SESSION_FIELDS = ("user_id", "model", "model_config", "system_prompt", "parent_session_id",
                  "title")
COST_FIELDS = ("cost_status", "cost_source", "pricing_version", "billing_provider",
               "billing_base_url", "billing_mode")
TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
          "reasoning_tokens", "api_call_count")
MESSAGE_COLUMNS = ("session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name",
                   "timestamp", "token_count", "finish_reason", "reasoning",
                   "reasoning_content", "reasoning_details", "codex_reasoning_items",
                   "codex_message_items")
MESSAGE_SELECT = "id, " + ", ".join(MESSAGE_COLUMNS)
S = TypeVar("S", bound="SqlSessionMethods")


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class SqlDialect:
    """How one database's SQL differs from the ``?``-marked SQL written here."""

    name: str
    mark: str = "?"  # a parameter's mark
    list_param: bool = False  # a list is one parameter (``= ANY(%s)``), not a mark per item
    no_limit: Any = -1  # the LIMIT value that means every row
    param: Callable[[Any], Any] = _same  # a value as it is bound (made storable)
    params: Callable[[Iterable[Any]], tuple[Any, ...]] = tuple  # ``param`` of each
    stored_content: Callable[[Any], Any] = _same  # stored content back to the codec's text
    dict_rows: bool = False  # rows already are dicts (else each is copied into one)
    message_row: Callable[[Any], dict[str, Any]] = dict  # a message row as get_messages gives it
    text_cast: str = ""  # after a parameter that is a value in a SELECT list
    float_cast: str = ""  # after a cost parameter (a float or NULL)
    bigint_cast: str = ""  # after a sum of integer columns
    session_order: str = "started_at"  # the order of export_all
    model_order: str = "estimated_cost_usd DESC, input_tokens + output_tokens DESC"  # usage
    numbered_messages: bool = False  # INSERT of a message returns its id (RETURNING id)
    executemany: Callable[[Any, str, list[Any]], Any] = (  # one statement over many rows
        lambda conn, sql, rows: conn.executemany(sql, rows))
    after_kept_ids: str = ""  # run after messages were inserted with their ids
    tuple_rows: Callable[[Any, str, list[Any]], list[Any]] = (  # rows indexed by position
        lambda conn, sql, args: conn.execute(sql, args).fetchall())

    def sql(self, text: str) -> str:
        """``text`` (``?`` marks, ``{text}``/``{float}``/``{bigint}`` casts) in this SQL."""
        text = text.format(text=self.text_cast, float=self.float_cast, bigint=self.bigint_cast)
        if self.mark == "?":
            return text
        return text.replace("%", "%%").replace("?", self.mark)

    def in_list(self, column: str, values: list[Any], negate: bool = False
                ) -> tuple[str, list[Any]]:
        """SQL true when ``column`` is (or with ``negate`` is not) one of ``values``, and its
        parameters."""
        if self.list_param:
            return (f"{'NOT ' if negate else ''}({column} = ANY({self.mark}))",
                    [[self.param(v) for v in values]])
        marks = ", ".join([self.mark] * len(values))
        return f"{column} {'NOT IN' if negate else 'IN'} ({marks})", list(values)

    def dicts(self, rows: list[Any]) -> list[dict[str, Any]]:
        return rows if self.dict_rows else [dict(r) for r in rows]


def _token_update(d: SqlDialect, absolute: bool) -> str:
    if absolute:
        sets = [f"{c} = ?" for c in TOKENS]
        costs = ["estimated_cost_usd = ?{float}", "actual_cost_usd = ?{float}"]
    else:
        sets = [f"{c} = COALESCE({c}, 0) + ?" for c in TOKENS]
        costs = [f"{c} = CASE WHEN ?{{float}} IS NULL THEN {c} ELSE COALESCE({c}, 0) + "
                 "?{float} END" for c in ("estimated_cost_usd", "actual_cost_usd")]
    sets += [f"{c} = COALESCE(?, {c})" for c in (*COST_FIELDS, "model")]
    return d.sql(f"UPDATE sessions SET {', '.join(sets + costs)} WHERE id = ?")


def _insert(d: SqlDialect, table: str, columns: Iterable[str], tail: str = "") -> str:
    cols = list(columns)
    return d.sql(f"INSERT INTO {table} ({', '.join(cols)}) "
                 f"VALUES ({', '.join('?' * len(cols))}){tail}")


class SessionSql:
    """The statements of the shared store methods in one dialect, made once."""

    def __init__(self, dialect: SqlDialect):
        d = self.dialect = dialect
        q = d.sql
        self.lineage = lineage.LineageSql(d)
        self.session = q("SELECT * FROM sessions WHERE id = ?")
        self.session_exists = q("SELECT 1 FROM sessions WHERE id = ?")
        self.title_exists = q("SELECT 1 FROM sessions WHERE title = ?")
        self.create_session = _insert(d, "sessions", ("id", "source", "started_at",
                                                      *SESSION_FIELDS))
        self.end = q("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?")
        self.reopen = q("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?")
        self.system_prompt = q("UPDATE sessions SET system_prompt = ? WHERE id = ?")
        self.model = q("UPDATE sessions SET model = ?, model_config = COALESCE(?, model_config) "
                       "WHERE id = ?")
        self.add_tokens = _token_update(d, False)
        self.set_tokens = _token_update(d, True)
        self.count_message = q("UPDATE sessions SET message_count = message_count + 1, "
                               "tool_call_count = tool_call_count + ? WHERE id = ?")
        self.insert_message = _insert(d, "messages", MESSAGE_COLUMNS,
                                      " RETURNING id" if d.numbered_messages else "")
        self.insert_messages = _insert(d, "messages", MESSAGE_COLUMNS)
        self.insert_numbered = _insert(d, "messages", ("id", *MESSAGE_COLUMNS))
        self.messages = q(f"SELECT {MESSAGE_SELECT} FROM messages WHERE session_id = ? "
                          "ORDER BY id LIMIT ? OFFSET ?")
        self.delete_messages = q("DELETE FROM messages WHERE session_id = ?")
        self.zero_counts = q("UPDATE sessions SET message_count = 0, tool_call_count = 0 "
                             "WHERE id = ?")
        self.recount = q("UPDATE sessions SET message_count = (SELECT COUNT(*) FROM messages "
                         "WHERE session_id = ?), tool_call_count = ? WHERE id = ?")
        self.set_counts = q("UPDATE sessions SET message_count = ?, tool_call_count = ? "
                            "WHERE id = ?")
        self.orphan_children = q("UPDATE sessions SET parent_session_id = NULL "
                                 "WHERE parent_session_id = ?")
        self.delete_session = q("DELETE FROM sessions WHERE id = ?")
        self.other_title = q("SELECT id FROM sessions WHERE title = ? AND id != ?")
        self.set_title = q("UPDATE sessions SET title = ? WHERE id = ?")
        self.set_new_title = q("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL")
        self.id_prefix = q("SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2")
        self.sessions = q("SELECT * FROM sessions ORDER BY started_at DESC LIMIT ? OFFSET ?")
        self.sessions_of = q("SELECT * FROM sessions WHERE source = ? ORDER BY started_at DESC "
                             "LIMIT ? OFFSET ?")
        self.last_used_of = q(  # the latest message (or the start) of each session
            "SELECT s.id FROM sessions s WHERE s.source = ? ORDER BY COALESCE((SELECT "
            "MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at) DESC "
            "LIMIT 1")
        self.ids = q(f"SELECT id FROM sessions ORDER BY {d.session_order}")
        self.ids_of = q(f"SELECT id FROM sessions WHERE source = ? ORDER BY {d.session_order}")
        ended = "SELECT id FROM sessions WHERE ended_at IS NOT NULL AND started_at < ?"
        self.ended_before = q(ended)
        self.ended_before_of = q(ended + " AND source = ?")


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
                       timestamp: float | None = None) -> int:
        row = message_values(session_id, role, content, tool_call_id, tool_calls, tool_name,
                             time.time() if timestamp is None else float(timestamp),
                             token_count, finish_reason, reasoning, reasoning_content,
                             reasoning_details, codex_reasoning_items, codex_message_items)
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
            for key in ("tool_calls", "tool_call_id", "tool_name"):
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
