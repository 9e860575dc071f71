"""Owner: the builtin plugin `sessions` (the postgres session store uses it too).

Lineage (parent_session_id chains), titles in a lineage, the rich listing and usage totals,
for any SQL session store (see :mod:`.sessions`); the statements are made once per
dialect (:class:`LineageSql`).

A child session is a *compression continuation* when its parent ended with
``end_reason='compression'`` and the child started at or after that end; any other child is a
*delegation* (a subagent started while the parent was running).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from .values import decode_content, sanitize_title

if TYPE_CHECKING:
    from .dialect import SqlDialect

Reader = Callable[..., list[Any]]  # (sql, args) -> rows
MAX_HOPS = 100
_NUMBERED = re.compile(r"^(?P<base>.*?) #(?P<n>\d+)$")

# SQL condition: session ``c`` continues its parent after compression.
CONTINUES = ("EXISTS (SELECT 1 FROM sessions p WHERE p.id = {c}.parent_session_id AND "
             "p.end_reason = 'compression' AND p.ended_at IS NOT NULL AND "
             "{c}.started_at >= p.ended_at)")

#: a session that used the model but has no cost: its model had no price
_UNPRICED = ("(CASE WHEN estimated_cost_usd IS NULL AND (COALESCE(api_call_count, 0) > 0 "
             "OR COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0) > 0) THEN 1 ELSE 0 END)")
_SUMS = ("COUNT(*) AS sessions, COALESCE(SUM(message_count), 0){bigint} AS messages, "
         "COALESCE(SUM(tool_call_count), 0){bigint} AS tool_calls, "
         "COALESCE(SUM(api_call_count), 0){bigint} AS api_calls, "
         "COALESCE(SUM(input_tokens), 0){bigint} AS input_tokens, "
         "COALESCE(SUM(output_tokens), 0){bigint} AS output_tokens, "
         "COALESCE(SUM(cache_read_tokens), 0){bigint} AS cache_read_tokens, "
         "COALESCE(SUM(cache_write_tokens), 0){bigint} AS cache_write_tokens, "
         "COALESCE(SUM(reasoning_tokens), 0){bigint} AS reasoning_tokens, "
         f"COALESCE(SUM({_UNPRICED}), 0){{bigint}} AS unpriced_sessions, "
         # null, not 0, when model calls were made and none had a price
         f"CASE WHEN SUM({_UNPRICED}) > 0 THEN SUM(estimated_cost_usd) "
         "ELSE COALESCE(SUM(estimated_cost_usd), 0) END AS estimated_cost_usd, "
         "SUM(actual_cost_usd) AS actual_cost_usd")


def like_escape(text: str) -> str:
    """``text`` with LIKE's wildcards escaped, for ``LIKE ? ESCAPE '\\'``."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _cont(c: str) -> str:
    return CONTINUES.format(c=c)


class LineageSql:
    """This module's statements in one dialect. Those whose length depends on a list of ids
    (the rich listing's, with a mark per id in SQLite) are completed per call."""

    def __init__(self, d: "SqlDialect"):
        q = d.sql
        self.dialect = d
        self.ancestors = q(
            "WITH RECURSIVE up(id, depth) AS (SELECT parent_session_id, 1 FROM sessions "
            "WHERE id = ? UNION ALL SELECT s.parent_session_id, up.depth + 1 FROM sessions s "
            "JOIN up ON s.id = up.id WHERE up.depth < ?) "
            "SELECT s.* FROM up JOIN sessions s ON s.id = up.id ORDER BY up.depth")
        self.descendants = q(
            "WITH RECURSIVE down(id, depth) AS (SELECT id, 0 FROM sessions WHERE id = ? "
            "UNION ALL SELECT s.id, down.depth + 1 FROM sessions s JOIN down ON "
            "s.parent_session_id = down.id WHERE down.depth < ?) "
            f"SELECT s.*, down.depth AS depth, {_cont('s')} AS continues "
            "FROM down JOIN sessions s ON s.id = down.id WHERE down.depth > 0 "
            "ORDER BY s.started_at")
        self.continues = q(f"SELECT {_cont('s')} AS c FROM sessions s WHERE s.id = ?")
        self.tip = q(
            "WITH RECURSIVE fwd(id, depth) AS (SELECT ?{text}, 0 UNION ALL SELECT c.id, "
            "fwd.depth + 1 FROM fwd JOIN sessions c ON c.parent_session_id = fwd.id WHERE "
            f"fwd.depth < ? AND {_cont('c')}) "
            "SELECT fwd.id FROM fwd JOIN sessions s ON s.id = fwd.id "
            "ORDER BY fwd.depth DESC, s.started_at DESC LIMIT 1")
        self.titled = q("SELECT id, title, started_at FROM sessions WHERE title = ? OR "
                        "title LIKE ? ESCAPE '\\'")
        self.not_continuing = f"NOT ({_cont('h')})"
        self.top_level = f"(h.parent_session_id IS NULL OR {_cont('h')})"
        self.heads = "SELECT h.id FROM sessions h {} ORDER BY h.started_at DESC " + q(
            "LIMIT ? OFFSET ?")
        self.chains = (  # (head, id, depth) of every chain, newest child first
            "WITH RECURSIVE chain(head, id, depth) AS (SELECT h.id, h.id, 0 FROM sessions h "
            "WHERE {} UNION ALL SELECT chain.head, c.id, chain.depth + 1 "
            "FROM chain JOIN sessions c ON c.parent_session_id = chain.id WHERE "
            f"chain.depth < {d.mark} AND {_cont('c')}) SELECT chain.head, chain.id, "
            "chain.depth FROM chain JOIN sessions s ON s.id = chain.id "
            "ORDER BY chain.depth, s.started_at DESC")
        self.tips = ("SELECT s.*, COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE "
                     "m.session_id = s.id), s.started_at) AS last_active FROM sessions s "
                     "WHERE {}")
        self.previews = ("SELECT h.id, (SELECT m.content FROM messages m WHERE m.session_id = "
                         "h.id AND m.role = 'user' AND m.content IS NOT NULL ORDER BY "
                         "m.timestamp, m.id LIMIT 1) AS p FROM sessions h WHERE {}")
        # the columns of the listing's own rows: by name in dict rows, else by position
        named = d.dict_rows
        self.first_id = itemgetter("id" if named else 0)
        self.chain_row = itemgetter("head", "id", "depth") if named else itemgetter(0, 1, 2)
        self.preview_row = itemgetter("id", "p") if named else itemgetter(0, 1)
        sums = _SUMS.replace("{bigint}", d.bigint_cast)
        self.usage = {}
        for where in ("", "WHERE source = " + d.mark):
            self.usage[bool(where)] = (
                f"SELECT {sums} FROM sessions {where}",
                f"SELECT COALESCE(model, '') AS model, {sums} FROM sessions {where} "
                f"GROUP BY model ORDER BY {d.model_order}",
                f"SELECT source, {sums} FROM sessions {where} GROUP BY source "
                "ORDER BY sessions DESC",
                "SELECT id, title, model, input_tokens + output_tokens AS total_tokens, "
                f"estimated_cost_usd FROM sessions {where} ORDER BY total_tokens DESC LIMIT 10")


def ancestors(read: Reader, sql: LineageSql, session_id: str) -> list[dict[str, Any]]:
    """The session's parents, nearest first (the session itself is not included)."""
    return sql.dialect.dicts(read(sql.ancestors, (session_id, MAX_HOPS)))


def descendants(read: Reader, sql: LineageSql, session_id: str) -> list[dict[str, Any]]:
    """Every session below this one (compression continuations and delegations), oldest first,
    each with ``depth`` and ``relation`` ("compression" or "delegation")."""
    rows = sql.dialect.dicts(read(sql.descendants, (session_id, MAX_HOPS)))
    for item in rows:
        item["relation"] = "compression" if item.pop("continues") else "delegation"
    return rows


def is_continuation(read: Reader, sql: LineageSql, session_id: str) -> bool:
    rows = read(sql.continues, (session_id,))
    return bool(rows and rows[0]["c"])


def compression_tip(read: Reader, sql: LineageSql, session_id: str) -> str:
    """Follow compression continuations forward (up to 100 hops) to the newest session."""
    rows = read(sql.tip, (session_id, MAX_HOPS))
    return str(rows[0]["id"]) if rows else session_id


def _base(title: str) -> str:
    match = _NUMBERED.match(title)
    return match.group("base") if match else title


def _lineage_rows(read: Reader, sql: LineageSql, base: str) -> list[Any]:
    return read(sql.titled, (base, like_escape(base) + " #%"))


def resolve_title(read: Reader, sql: LineageSql, title: str) -> str | None:
    """The newest session whose title is ``title`` or ``title #<n>``."""
    clean = sanitize_title(title)
    if clean is None:
        return None
    rows = [r for r in _lineage_rows(read, sql, clean)
            if r["title"] == clean or _base(r["title"]) == clean]
    if not rows:
        return None
    return str(max(rows, key=lambda r: (r["started_at"], r["title"]))["id"])


def next_title(read: Reader, sql: LineageSql, base_title: str) -> str:
    """"X" -> "X #2"; "X #2" (or "X" when "X #2" exists) -> "X #3"."""
    base = _base(sanitize_title(base_title) or "")
    numbers = [1]
    for row in _lineage_rows(read, sql, base):
        match = _NUMBERED.match(row["title"])
        if match and match.group("base") == base:
            numbers.append(int(match.group("n")))
    return f"{base} #{max(numbers) + 1}"


def list_rich(read: Reader, sql: LineageSql, *, source: str | None,
              exclude_sources: Iterable[str] | None, limit: int, offset: int,
              include_children: bool, project: bool) -> list[dict[str, Any]]:
    """Sessions newest first with ``preview`` and ``last_active``. With ``project`` a
    compression chain is one entry: its tip, with the chain in ``lineage`` (root first)."""
    d = sql.dialect
    where: list[str] = []
    args: list[Any] = []
    if source:
        where.append(f"h.source = {d.mark}")
        args.append(source)
    excluded = list(exclude_sources or ())
    if excluded:
        cond, more = d.in_list("h.source", excluded, negate=True)
        where.append(cond)
        args += more
    if project:
        where.append(sql.not_continuing)
    if not include_children:
        where.append(sql.top_level)
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    heads = list(map(sql.first_id, read(sql.heads.format(clause), (*args, limit, offset))))
    if not heads:
        return []
    chains: dict[str, list[str]] = {h: [h] for h in heads}
    in_heads, head_args = d.in_list("h.id", heads)
    if project:  # every chain in one recursive query
        rows = read(sql.chains.format(in_heads), (*head_args, MAX_HOPS))
        for head, sid, depth in map(sql.chain_row, rows):
            chain = chains[head]
            if depth == len(chain):  # the newest continuation at each step
                chain.append(sid)
    tips = [chains[h][-1] for h in heads]
    in_tips, tip_args = d.in_list("s.id", tips)
    found = {r["id"]: r for r in d.dicts(read(sql.tips.format(in_tips), tip_args))}
    previews = dict(map(sql.preview_row, read(sql.previews.format(in_heads), head_args)))
    out = []
    for head, tip in zip(heads, tips):
        row = found[tip]
        text = decode_content(d.stored_content(previews.get(head))) or ""
        text = text if isinstance(text, str) else str(text)
        row["preview"] = " ".join(text.split())[:80]
        row["lineage"] = chains[head]
        out.append(row)
    return out


def usage_stats(read: Reader, sql: LineageSql, source: str | None) -> dict[str, Any]:
    """Totals and per-model / per-source breakdowns of sessions, messages, tokens and cost.
    ``estimated_cost_usd`` is the sum of the known costs, or None when no session that used
    the model has one; ``unpriced_sessions`` counts the sessions left out of it."""
    total, by_model, by_source, top = sql.usage[bool(source)]
    args = (source,) if source else ()
    dicts = sql.dialect.dicts
    return {"total": dicts(read(total, args))[0], "by_model": dicts(read(by_model, args)),
            "by_source": dicts(read(by_source, args)), "top_sessions": dicts(read(top, args))}
