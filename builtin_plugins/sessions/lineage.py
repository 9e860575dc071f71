"""Lineage (parent_session_id chains), titles in a lineage, the rich listing and usage totals.

A child session is a *compression continuation* when its parent ended with
``end_reason='compression'`` and the child started at or after that end; any other child is a
*delegation* (a subagent started while the parent was running).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

from . import codec

Reader = Callable[..., list[sqlite3.Row]]
MAX_HOPS = 100
_NUMBERED = re.compile(r"^(?P<base>.*?) #(?P<n>\d+)$")

# SQL condition: session ``c`` continues its parent after compression.
CONTINUES = ("EXISTS (SELECT 1 FROM sessions p WHERE p.id = {c}.parent_session_id AND "
             "p.end_reason = 'compression' AND p.ended_at IS NOT NULL AND "
             "{c}.started_at >= p.ended_at)")


def ancestors(read: Reader, session_id: str) -> list[dict[str, Any]]:
    """The session's parents, nearest first (the session itself is not included)."""
    rows = read("WITH RECURSIVE up(id, depth) AS (SELECT parent_session_id, 1 FROM sessions "
                "WHERE id = ? UNION ALL SELECT s.parent_session_id, up.depth + 1 FROM sessions s "
                "JOIN up ON s.id = up.id WHERE up.depth < ?) "
                "SELECT s.* FROM up JOIN sessions s ON s.id = up.id ORDER BY up.depth",
                (session_id, MAX_HOPS))
    return [dict(r) for r in rows]


def descendants(read: Reader, session_id: str) -> list[dict[str, Any]]:
    """Every session below this one (compression continuations and delegations), oldest first,
    each with ``depth`` and ``relation`` ("compression" or "delegation")."""
    rows = read("WITH RECURSIVE down(id, depth) AS (SELECT id, 0 FROM sessions WHERE id = ? "
                "UNION ALL SELECT s.id, down.depth + 1 FROM sessions s JOIN down ON "
                "s.parent_session_id = down.id WHERE down.depth < ?) "
                f"SELECT s.*, down.depth AS depth, {CONTINUES.format(c='s')} AS continues "
                "FROM down JOIN sessions s ON s.id = down.id WHERE down.depth > 0 "
                "ORDER BY s.started_at", (session_id, MAX_HOPS))
    out = []
    for row in rows:
        item = dict(row)
        item["relation"] = "compression" if item.pop("continues") else "delegation"
        out.append(item)
    return out


def is_continuation(read: Reader, session_id: str) -> bool:
    rows = read(f"SELECT {CONTINUES.format(c='s')} FROM sessions s WHERE s.id = ?", (session_id,))
    return bool(rows and rows[0][0])


def compression_tip(read: Reader, session_id: str) -> str:
    """Follow compression continuations forward (up to 100 hops) to the newest session."""
    rows = read("WITH RECURSIVE fwd(id, depth) AS (SELECT ?, 0 UNION ALL SELECT c.id, "
                "fwd.depth + 1 FROM fwd JOIN sessions c ON c.parent_session_id = fwd.id WHERE "
                f"fwd.depth < ? AND {CONTINUES.format(c='c')}) "
                "SELECT fwd.id FROM fwd JOIN sessions s ON s.id = fwd.id "
                "ORDER BY fwd.depth DESC, s.started_at DESC LIMIT 1", (session_id, MAX_HOPS))
    return str(rows[0][0]) if rows else session_id


def _base(title: str) -> str:
    match = _NUMBERED.match(title)
    return match.group("base") if match else title


def _lineage_rows(read: Reader, base: str) -> list[sqlite3.Row]:
    like = base.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + " #%"
    return read("SELECT id, title, started_at FROM sessions WHERE title = ? OR "
                "title LIKE ? ESCAPE '\\'", (base, like))


def resolve_title(read: Reader, title: str) -> str | None:
    """The newest session whose title is ``title`` or ``title #<n>``."""
    clean = codec.sanitize_title(title)
    if clean is None:
        return None
    rows = [r for r in _lineage_rows(read, clean)
            if r["title"] == clean or _base(r["title"]) == clean]
    if not rows:
        rows = list(read("SELECT id, title, started_at FROM sessions WHERE title = ?", (clean,)))
    if not rows:
        return None
    return str(max(rows, key=lambda r: (r["started_at"], r["title"]))["id"])


def next_title(read: Reader, base_title: str) -> str:
    """"X" -> "X #2"; "X #2" (or "X" when "X #2" exists) -> "X #3"."""
    base = _base(codec.sanitize_title(base_title) or "")
    numbers = [1]
    for row in _lineage_rows(read, base):
        match = _NUMBERED.match(row["title"])
        if match and match.group("base") == base:
            numbers.append(int(match.group("n")))
    return f"{base} #{max(numbers) + 1}"


def list_rich(read: Reader, *, source: str | None, exclude_sources: Iterable[str] | None,
              limit: int, offset: int, include_children: bool,
              project: bool) -> list[dict[str, Any]]:
    """Sessions newest first with ``preview`` and ``last_active``. With ``project`` a
    compression chain is one entry: its tip, with the chain in ``lineage`` (root first)."""
    where, args = [], []
    if source:
        where.append("h.source = ?")
        args.append(source)
    excluded = list(exclude_sources or ())
    if excluded:
        where.append(f"h.source NOT IN ({', '.join('?' * len(excluded))})")
        args += excluded
    if project:
        where.append(f"NOT ({CONTINUES.format(c='h')})")
    if not include_children:
        where.append(f"(h.parent_session_id IS NULL OR {CONTINUES.format(c='h')})")
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    heads = [r[0] for r in read(f"SELECT h.id FROM sessions h {clause} ORDER BY h.started_at DESC "
                                "LIMIT ? OFFSET ?", (*args, limit, offset))]
    if not heads:
        return []
    chains: dict[str, list[str]] = {h: [h] for h in heads}
    marks = ", ".join("?" * len(heads))
    if project:  # every chain in one recursive query: (head, id, depth), newest child first
        rows = read(f"WITH RECURSIVE chain(head, id, depth) AS (SELECT id, id, 0 FROM sessions "
                    f"WHERE id IN ({marks}) UNION ALL SELECT chain.head, c.id, chain.depth + 1 "
                    "FROM chain JOIN sessions c ON c.parent_session_id = chain.id WHERE "
                    f"chain.depth < ? AND {CONTINUES.format(c='c')}) SELECT chain.head, chain.id, "
                    "chain.depth FROM chain JOIN sessions s ON s.id = chain.id "
                    "ORDER BY chain.depth, s.started_at DESC", (*heads, MAX_HOPS))
        for head, sid, depth in rows:
            chain = chains[head]
            if depth == len(chain):  # the newest continuation at each step
                chain.append(sid)
    tips = [chains[h][-1] for h in heads]
    found = {r["id"]: dict(r) for r in read(
        "SELECT s.*, COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id),"
        f" s.started_at) AS last_active FROM sessions s WHERE s.id IN ({', '.join('?' * len(tips))})",
        tips)}
    previews = dict(read(
        "SELECT h.id, (SELECT m.content FROM messages m WHERE m.session_id = h.id AND m.role = "
        "'user' AND m.content IS NOT NULL ORDER BY m.timestamp, m.id LIMIT 1) FROM sessions h "
        f"WHERE h.id IN ({marks})", heads))
    out = []
    for head, tip in zip(heads, tips):
        row = found[tip]
        text = codec.decode_content(previews.get(head)) or ""
        text = text if isinstance(text, str) else str(text)
        row["preview"] = " ".join(text.split())[:80]
        row["lineage"] = chains[head]
        out.append(row)
    return out


#: a session that used the model but has no cost: its model had no price
_UNPRICED = ("(estimated_cost_usd IS NULL AND (COALESCE(api_call_count, 0) > 0 "
             "OR COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0) > 0))")


def usage_stats(read: Reader, source: str | None) -> dict[str, Any]:
    """Totals and per-model / per-source breakdowns of sessions, messages, tokens and cost.
    ``estimated_cost_usd`` is the sum of the known costs, or None when no session that used
    the model has one; ``unpriced_sessions`` counts the sessions left out of it."""
    where, args = ("WHERE source = ?", (source,)) if source else ("", ())
    sums = ("COUNT(*) AS sessions, COALESCE(SUM(message_count), 0) AS messages, "
            "COALESCE(SUM(tool_call_count), 0) AS tool_calls, "
            "COALESCE(SUM(api_call_count), 0) AS api_calls, "
            "COALESCE(SUM(input_tokens), 0) AS input_tokens, "
            "COALESCE(SUM(output_tokens), 0) AS output_tokens, "
            "COALESCE(SUM(cache_read_tokens), 0) AS cache_read_tokens, "
            "COALESCE(SUM(cache_write_tokens), 0) AS cache_write_tokens, "
            "COALESCE(SUM(reasoning_tokens), 0) AS reasoning_tokens, "
            f"COALESCE(SUM({_UNPRICED}), 0) AS unpriced_sessions, "
            # null, not 0, when model calls were made and none had a price
            f"CASE WHEN SUM({_UNPRICED}) > 0 THEN SUM(estimated_cost_usd) "
            "ELSE COALESCE(SUM(estimated_cost_usd), 0) END AS estimated_cost_usd, "
            "SUM(actual_cost_usd) AS actual_cost_usd")
    total = dict(read(f"SELECT {sums} FROM sessions {where}", args)[0])
    by_model = [dict(r) for r in read(
        f"SELECT COALESCE(model, '') AS model, {sums} FROM sessions {where} GROUP BY model "
        "ORDER BY estimated_cost_usd DESC, input_tokens + output_tokens DESC", args)]
    by_source = [dict(r) for r in read(
        f"SELECT source, {sums} FROM sessions {where} GROUP BY source ORDER BY sessions DESC",
        args)]
    top = [dict(r) for r in read(
        f"SELECT id, title, model, input_tokens + output_tokens AS total_tokens, "
        f"estimated_cost_usd FROM sessions {where} ORDER BY total_tokens DESC LIMIT 10", args)]
    return {"total": total, "by_model": by_model, "by_source": by_source, "top_sessions": top}
