"""Owner: the builtin plugin `sessions` (the postgres session store uses it too).

Rows that any SQL session store writes the same way (see :mod:`.sessions`): a message's
column values, many messages at once (replace, import), an imported session.

Imports never overwrite: a session whose id already exists is skipped, a title that is taken
gets the next free " #<n>", and a parent that is not in the store is dropped from the link.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from . import lineage
from .values import (
    clean_optional,
    encode_content,
    encode_json,
    sanitize_title,
    tool_call_count,
)

if TYPE_CHECKING:
    from .statements import SessionSql

SESSION_COLUMNS = (
    "id", "source", "user_id", "model", "model_config", "system_prompt", "parent_session_id",
    "started_at", "ended_at", "end_reason", "message_count", "tool_call_count", "input_tokens",
    "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
    "billing_provider", "billing_base_url", "billing_mode", "estimated_cost_usd",
    "actual_cost_usd", "cost_status", "cost_source", "pricing_version", "title",
    "api_call_count")
TOOL_CALLS = 4  # the index of tool_calls in a message's values


def message_values(session_id: str, role: str, content: Any, tool_call_id: str | None,
                   tool_calls: Any, tool_name: str | None, timestamp: float,
                   token_count: int | None, finish_reason: str | None, reasoning: str | None,
                   reasoning_content: str | None, reasoning_details: Any,
                   codex_reasoning_items: Any, codex_message_items: Any,
                   provenance: Any = None) -> tuple[Any, ...]:
    """A message's values in the order of ``MESSAGE_COLUMNS`` (content and JSON encoded)."""
    return (session_id, role, encode_content(content), tool_call_id, encode_json(tool_calls),
            clean_optional(tool_name), timestamp, token_count, finish_reason,
            clean_optional(reasoning), clean_optional(reasoning_content),
            encode_json(reasoning_details), encode_json(codex_reasoning_items),
            encode_json(codex_message_items), encode_json(provenance))


def _from_dict(session_id: str, m: dict[str, Any], timestamp: float) -> tuple[Any, ...]:
    """A message dict (keys as in get_messages) as values; its text cleaned."""
    return message_values(
        session_id, clean_optional(m.get("role") or "user"), m.get("content"),
        clean_optional(m.get("tool_call_id")), m.get("tool_calls"), m.get("tool_name"),
        float(m.get("timestamp") or timestamp), m.get("token_count"),
        clean_optional(m.get("finish_reason")), m.get("reasoning"), m.get("reasoning_content"),
        m.get("reasoning_details"), m.get("codex_reasoning_items"),
        m.get("codex_message_items"), m.get("provenance"))


def insert_message_rows(conn: Any, sql: "SessionSql", session_id: str,
                    messages: Iterable[dict[str, Any]], keep_ids: bool = False) -> int:
    """Insert message dicts (keys as in get_messages) and recount the session's counters.
    With ``keep_ids`` each keeps its ``id`` (else the store numbers them)."""
    d = sql.dialect
    now = time.time()
    rows = []
    for i, m in enumerate(messages):
        values = _from_dict(session_id, m, now + i * 1e-6)
        rows.append(d.params((m.get("id"), *values) if keep_ids else values))
    at = TOOL_CALLS + 1 if keep_ids else TOOL_CALLS  # tool_calls, as bound
    calls = sum(tool_call_count(r[at]) for r in rows)
    if rows:
        d.executemany(conn, sql.insert_numbered if keep_ids else sql.insert_messages, rows)
        if keep_ids and d.after_kept_ids:
            conn.execute(d.after_kept_ids)
    conn.execute(sql.recount, (session_id, calls, session_id))
    return len(rows)


def insert_session_row(conn: Any, sql: "SessionSql", session: dict[str, Any],
                   session_id: str) -> bool:
    """Insert an exported session row as ``session_id`` unless that id exists (False then): a
    taken title gets the next free " #<n>", a parent that is not here is dropped."""
    params = sql.dialect.params
    if conn.execute(sql.session_exists, (session_id,)).fetchone():
        return False
    row = {k: session.get(k) for k in SESSION_COLUMNS if k in session}
    row["id"] = session_id
    row["source"] = row.get("source") or "unknown"
    row["started_at"] = row.get("started_at") or 0.0
    parent = row.get("parent_session_id")
    if parent and not conn.execute(sql.session_exists, params((parent,))).fetchone():
        row["parent_session_id"] = None
    title = sanitize_title(row.get("title"))
    if title and conn.execute(sql.title_exists, params((title,))).fetchone():
        title = lineage.next_title(
            lambda text, args=(): conn.execute(text, params(args)).fetchall(), sql.lineage,
            title)
    row["title"] = title
    cols = list(row)
    conn.execute(sql.dialect.sql(f"INSERT INTO sessions ({', '.join(cols)}) "
                                 f"VALUES ({', '.join('?' * len(cols))})"),
                 params(row[c] for c in cols))
    return True


def tally_import(stats: dict[str, int], added: int | None) -> None:
    """Count one imported session (``added`` messages) or, for None, one skipped."""
    if added is None:
        stats["skipped"] += 1
    else:
        stats["sessions"] += 1
        stats["messages"] += added


def import_session_records(records: Iterable[dict[str, Any]],
                   insert: Callable[[dict[str, Any]], int | None]) -> dict[str, int]:
    """Import exported sessions (dicts with ``messages``), parents before children:
    ``insert(record)`` writes one (in one transaction) and returns how many messages it
    added, or None when the session was already there."""
    stats = {"sessions": 0, "messages": 0, "skipped": 0}
    for record in sorted(records, key=lambda r: float(r.get("started_at") or 0)):
        if not record.get("id"):
            stats["skipped"] += 1
            continue
        tally_import(stats, insert(record))
    return stats
