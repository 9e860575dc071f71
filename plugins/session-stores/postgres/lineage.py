"""Lineage, titles in a lineage, the rich listing and usage totals, in PostgreSQL's SQL.
The semantics are the sqlite store's: a child *continues* its parent after compression when
the parent ended with ``end_reason='compression'`` and the child started at or after that."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from hermes_agent.api import decode_content, sanitize_title

from .values import from_pg_content

Reader = Callable[..., list[dict[str, Any]]]
MAX_HOPS = 100
_NUMBERED = re.compile(r"^(?P<base>.*?) #(?P<n>\d+)$")
CONTINUES = ("EXISTS (SELECT 1 FROM sessions p WHERE p.id = {c}.parent_session_id AND "
             "p.end_reason = 'compression' AND p.ended_at IS NOT NULL AND "
             "{c}.started_at >= p.ended_at)")


def ancestors(read: Reader, session_id: str) -> list[dict[str, Any]]:
    return read("WITH RECURSIVE up(id, depth) AS (SELECT parent_session_id, 1 FROM sessions "
                "WHERE id = %s UNION ALL SELECT s.parent_session_id, up.depth + 1 FROM sessions s "
                "JOIN up ON s.id = up.id WHERE up.depth < %s) "
                "SELECT s.* FROM up JOIN sessions s ON s.id = up.id ORDER BY up.depth",
                (session_id, MAX_HOPS))


def descendants(read: Reader, session_id: str) -> list[dict[str, Any]]:
    rows = read("WITH RECURSIVE down(id, depth) AS (SELECT id, 0 FROM sessions WHERE id = %s "
                "UNION ALL SELECT s.id, down.depth + 1 FROM sessions s JOIN down ON "
                "s.parent_session_id = down.id WHERE down.depth < %s) "
                f"SELECT s.*, down.depth AS depth, {CONTINUES.format(c='s')} AS continues "
                "FROM down JOIN sessions s ON s.id = down.id WHERE down.depth > 0 "
                "ORDER BY s.started_at", (session_id, MAX_HOPS))
    for item in rows:
        item["relation"] = "compression" if item.pop("continues") else "delegation"
    return rows


def is_continuation(read: Reader, session_id: str) -> bool:
    rows = read(f"SELECT {CONTINUES.format(c='s')} AS c FROM sessions s WHERE s.id = %s",
                (session_id,))
    return bool(rows and rows[0]["c"])


def compression_tip(read: Reader, session_id: str) -> str:
    rows = read("WITH RECURSIVE fwd(id, depth) AS (SELECT %s::text, 0 UNION ALL SELECT c.id, "
                "fwd.depth + 1 FROM fwd JOIN sessions c ON c.parent_session_id = fwd.id WHERE "
                f"fwd.depth < %s AND {CONTINUES.format(c='c')}) "
                "SELECT fwd.id FROM fwd JOIN sessions s ON s.id = fwd.id "
                "ORDER BY fwd.depth DESC, s.started_at DESC LIMIT 1", (session_id, MAX_HOPS))
    return str(rows[0]["id"]) if rows else session_id


def _base(title: str) -> str:
    match = _NUMBERED.match(title)
    return match.group("base") if match else title


def _lineage_rows(read: Reader, base: str) -> list[dict[str, Any]]:
    like = base.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + " #%"
    return read("SELECT id, title, started_at FROM sessions WHERE title = %s OR "
                "title LIKE %s ESCAPE '\\'", (base, like))


def resolve_title(read: Reader, title: str) -> str | None:
    clean = sanitize_title(title)
    if clean is None:
        return None
    rows = [r for r in _lineage_rows(read, clean)
            if r["title"] == clean or _base(r["title"]) == clean]
    if not rows:
        return None
    return str(max(rows, key=lambda r: (r["started_at"], r["title"]))["id"])


def next_title(read: Reader, base_title: str) -> str:
    base = _base(sanitize_title(base_title) or "")
    numbers = [1]
    for row in _lineage_rows(read, base):
        match = _NUMBERED.match(row["title"])
        if match and match.group("base") == base:
            numbers.append(int(match.group("n")))
    return f"{base} #{max(numbers) + 1}"


def list_rich(read: Reader, *, source: str | None, exclude_sources: Iterable[str] | None,
              limit: int, offset: int, include_children: bool,
              project: bool) -> list[dict[str, Any]]:
    where: list[str] = []
    args: list[Any] = []
    if source:
        where.append("h.source = %s")
        args.append(source)
    excluded = list(exclude_sources or ())
    if excluded:
        where.append("NOT (h.source = ANY(%s))")
        args.append(excluded)
    if project:
        where.append(f"NOT ({CONTINUES.format(c='h')})")
    if not include_children:
        where.append(f"(h.parent_session_id IS NULL OR {CONTINUES.format(c='h')})")
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    heads = [r["id"] for r in read(f"SELECT h.id FROM sessions h {clause} ORDER BY "
                                   "h.started_at DESC LIMIT %s OFFSET %s", (*args, limit, offset))]
    if not heads:
        return []
    chains: dict[str, list[str]] = {h: [h] for h in heads}
    if project:
        rows = read("WITH RECURSIVE chain(head, id, depth) AS (SELECT id, id, 0 FROM sessions "
                    "WHERE id = ANY(%s) UNION ALL SELECT chain.head, c.id, chain.depth + 1 "
                    "FROM chain JOIN sessions c ON c.parent_session_id = chain.id WHERE "
                    f"chain.depth < %s AND {CONTINUES.format(c='c')}) SELECT chain.head, "
                    "chain.id, chain.depth FROM chain JOIN sessions s ON s.id = chain.id "
                    "ORDER BY chain.depth, s.started_at DESC", (heads, MAX_HOPS))
        for row in rows:
            chain = chains[row["head"]]
            if row["depth"] == len(chain):
                chain.append(row["id"])
    tips = [chains[h][-1] for h in heads]
    found = {r["id"]: r for r in read(
        "SELECT s.*, COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = "
        "s.id), s.started_at) AS last_active FROM sessions s WHERE s.id = ANY(%s)", (tips,))}
    previews = {r["id"]: r["p"] for r in read(
        "SELECT h.id, (SELECT m.content FROM messages m WHERE m.session_id = h.id AND m.role = "
        "'user' AND m.content IS NOT NULL ORDER BY m.timestamp, m.id LIMIT 1) AS p "
        "FROM sessions h WHERE h.id = ANY(%s)", (heads,))}
    out = []
    for head, tip in zip(heads, tips):
        row = found[tip]
        text = decode_content(from_pg_content(previews.get(head))) or ""
        text = text if isinstance(text, str) else str(text)
        row["preview"] = " ".join(text.split())[:80]
        row["lineage"] = chains[head]
        out.append(row)
    return out


_UNPRICED = ("(CASE WHEN estimated_cost_usd IS NULL AND (COALESCE(api_call_count, 0) > 0 "
             "OR COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0) > 0) THEN 1 ELSE 0 END)")
_SUMS = ("COUNT(*) AS sessions, COALESCE(SUM(message_count), 0)::bigint AS messages, "
         "COALESCE(SUM(tool_call_count), 0)::bigint AS tool_calls, "
         "COALESCE(SUM(api_call_count), 0)::bigint AS api_calls, "
         "COALESCE(SUM(input_tokens), 0)::bigint AS input_tokens, "
         "COALESCE(SUM(output_tokens), 0)::bigint AS output_tokens, "
         "COALESCE(SUM(cache_read_tokens), 0)::bigint AS cache_read_tokens, "
         "COALESCE(SUM(cache_write_tokens), 0)::bigint AS cache_write_tokens, "
         "COALESCE(SUM(reasoning_tokens), 0)::bigint AS reasoning_tokens, "
         f"COALESCE(SUM({_UNPRICED}), 0)::bigint AS unpriced_sessions, "
         f"CASE WHEN SUM({_UNPRICED}) > 0 THEN SUM(estimated_cost_usd) "
         "ELSE COALESCE(SUM(estimated_cost_usd), 0) END AS estimated_cost_usd, "
         "SUM(actual_cost_usd) AS actual_cost_usd")


def usage_stats(read: Reader, source: str | None) -> dict[str, Any]:
    where, args = ("WHERE source = %s", (source,)) if source else ("", ())
    total = read(f"SELECT {_SUMS} FROM sessions {where}", args)[0]
    by_model = read(f"SELECT COALESCE(model, '') AS model, {_SUMS} FROM sessions {where} "
                    "GROUP BY model ORDER BY estimated_cost_usd DESC NULLS LAST, "
                    "SUM(input_tokens) + SUM(output_tokens) DESC", args)
    by_source = read(f"SELECT source, {_SUMS} FROM sessions {where} GROUP BY source "
                     "ORDER BY sessions DESC", args)
    top = read("SELECT id, title, model, input_tokens + output_tokens AS total_tokens, "
               f"estimated_cost_usd FROM sessions {where} ORDER BY total_tokens DESC LIMIT 10",
               args)
    return {"total": total, "by_model": by_model, "by_source": by_source, "top_sessions": top}
