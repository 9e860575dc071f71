"""Writing many messages at once (replace, import) and deleting sessions.

Imports never overwrite, as the sqlite store's: a session whose id exists is skipped, a taken
title gets the next free " #<n>", a parent that is not in the store is dropped from the link.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from hermes_agent.api import (
    SessionStoreError,
    clean_optional,
    encode_content,
    encode_json,
    sanitize_title,
    tool_call_count,
)

from . import lineage
from .values import to_pg

if TYPE_CHECKING:
    from .store import PostgresSessionStore

SESSION_COLUMNS = (
    "id", "source", "user_id", "model", "model_config", "system_prompt", "parent_session_id",
    "started_at", "ended_at", "end_reason", "message_count", "tool_call_count", "input_tokens",
    "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
    "billing_provider", "billing_base_url", "billing_mode", "estimated_cost_usd",
    "actual_cost_usd", "cost_status", "cost_source", "pricing_version", "title",
    "api_call_count")


def insert_messages(conn: Any, session_id: str, messages: Iterable[dict[str, Any]],
                    keep_ids: bool = False) -> int:
    """Insert message dicts (keys as in get_messages) and recount the session's counters.
    With ``keep_ids`` each keeps its ``id`` and the id sequence moves past them."""
    from .store import MESSAGE_COLUMNS

    columns = ("id", *MESSAGE_COLUMNS) if keep_ids else MESSAGE_COLUMNS
    rows = []
    now = time.time()
    for i, m in enumerate(messages):
        rows.append(tuple(to_pg(v) for v in (
            *((m.get("id"),) if keep_ids else ()), session_id, clean_optional(m.get("role") or "user"), encode_content(m.get("content")),
            clean_optional(m.get("tool_call_id")), encode_json(m.get("tool_calls")),
            clean_optional(m.get("tool_name")), float(m.get("timestamp") or now + i * 1e-6),
            m.get("token_count"), clean_optional(m.get("finish_reason")),
            clean_optional(m.get("reasoning")), clean_optional(m.get("reasoning_content")),
            encode_json(m.get("reasoning_details")), encode_json(m.get("codex_reasoning_items")),
            encode_json(m.get("codex_message_items")))))
    if rows:
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO messages ({', '.join(columns)}) VALUES "
                            f"({', '.join(['%s'] * len(columns))})", rows)
        if keep_ids:
            conn.execute("SELECT setval(pg_get_serial_sequence('messages', 'id'), "
                         "GREATEST((SELECT max(id) FROM messages), 1))")
    calls = sum(tool_call_count(r[columns.index("tool_calls")]) for r in rows)
    conn.execute("UPDATE sessions SET message_count = (SELECT COUNT(*) FROM messages WHERE "
                 "session_id = %s), tool_call_count = %s WHERE id = %s",
                 (session_id, calls, session_id))
    return len(rows)


def delete_session_rows(conn: Any, session_id: str) -> bool:
    """Delete one session and its messages; its children keep living, without a parent."""
    conn.execute("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = %s",
                 (session_id,))
    conn.execute("DELETE FROM messages WHERE session_id = %s", (session_id,))
    return bool(conn.execute("DELETE FROM sessions WHERE id = %s", (session_id,)).rowcount)


def _insert_session(conn: Any, session: dict[str, Any]) -> bool:
    sid = to_pg(str(session["id"]))
    # one importer at a time per id: a second process importing the same file waits here
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("hermes-import:" + sid,))
    if conn.execute("SELECT 1 FROM sessions WHERE id = %s", (sid,)).fetchone():
        return False
    row = {k: session.get(k) for k in SESSION_COLUMNS if k in session}
    row["id"] = sid
    row["source"] = row.get("source") or "unknown"
    row["started_at"] = row.get("started_at") or 0.0
    parent = row.get("parent_session_id")
    if parent and not conn.execute("SELECT 1 FROM sessions WHERE id = %s",
                                   (to_pg(parent),)).fetchone():
        row["parent_session_id"] = None
    title = sanitize_title(row.get("title"))
    if title and conn.execute("SELECT 1 FROM sessions WHERE title = %s",
                              (to_pg(title),)).fetchone():
        title = lineage.next_title(lambda sql, args=(): conn.execute(
            sql, tuple(to_pg(a) for a in args)).fetchall(), title)
    row["title"] = title
    cols = list(row)
    conn.execute(f"INSERT INTO sessions ({', '.join(cols)}) VALUES "
                 f"({', '.join(['%s'] * len(cols))})", [to_pg(row[c]) for c in cols])
    return True


def import_records(store: "PostgresSessionStore", records: Iterable[dict[str, Any]],
                   keep_message_ids: bool = False) -> dict[str, int]:
    """Import exported sessions (dicts with ``messages``), parents before children; each
    session with its messages in one transaction."""
    from psycopg.errors import UniqueViolation

    stats = {"sessions": 0, "messages": 0, "skipped": 0}
    for record in sorted(records, key=lambda r: float(r.get("started_at") or 0)):
        if not record.get("id"):
            stats["skipped"] += 1
            continue

        def do(conn: Any, record: dict[str, Any] = record) -> int | None:
            if not _insert_session(conn, record):
                return None
            return insert_messages(conn, to_pg(str(record["id"])),
                                   record.get("messages") or [], keep_message_ids)
        try:
            added = store._run(do)
        except UniqueViolation as exc:
            raise SessionStoreError(
                f"{store.db.label} already holds a message with an id of session "
                f"{record['id']!r} (ids are kept); migrate into an empty store") from exc
        if added is None:
            stats["skipped"] += 1
        else:
            stats["sessions"] += 1
            stats["messages"] += added
    return stats
