"""Owner: the builtin plugin `sessions` (the postgres session store uses it too).

Search results for any SQL session store: the hits a store's own search found (ids in
order, each with the snippet its full-text engine made, or None) turned into result dicts
with two queries for all of them, in the store's dialect (see :mod:`.sessions`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .query import SearchQuery, manual_snippet
from .values import decode_content

if TYPE_CHECKING:
    from .dialect import SqlDialect

CONTEXT_CHARS = 200  # of the message before and after a hit


class SearchSql:
    """The statements of :func:`search_results` in one dialect (rows read by position); the
    id lists are completed per call (SQLite takes a mark per id)."""

    def __init__(self, d: "SqlDialect"):
        self.dialect = d
        self.hits = (
            "SELECT m.id, m.session_id, m.role, m.timestamp, s.source, s.model, s.started_at, "
            "(SELECT max(p.id) FROM messages p WHERE p.session_id = m.session_id AND "
            "p.id < m.id) AS prev, (SELECT min(n.id) FROM messages n WHERE "
            "n.session_id = m.session_id AND n.id > m.id) AS next, {} AS search_text "
            "FROM messages m JOIN sessions s ON s.id = m.session_id WHERE {}")
        self.near = "SELECT id, role, content FROM messages WHERE {}"


def search_filters(d: "SqlDialect", sources: Iterable[str] | None,
                   excluded: Iterable[str] | None, roles: Iterable[str] | None,
                   sessions: Iterable[str] | None) -> tuple[str, list[Any]]:
    """`` AND ...`` conditions on ``s`` (sessions) and ``m`` (messages) for a search's filters
    (empty names are ignored), and their parameters."""
    where, args = "", []
    for column, values, negate in (("s.source", sources, False), ("s.source", excluded, True),
                                   ("m.role", roles, False), ("m.session_id", sessions, True)):
        values = [v for v in (values or ()) if v]
        if values:
            cond, more = d.in_list(column, values, negate)
            where += " AND " + cond
            args += more
    return where, args


def search_results(conn: Any, sql: SearchSql, hits: list[tuple[int, str | None]],
                   parsed: SearchQuery) -> list[dict[str, Any]]:
    """Result dicts for ``hits`` (a hit without a snippet gets a ``>>>term<<<`` window of its
    text) with the message before and after each as ``context``."""
    if not hits:
        return []
    d = sql.dialect
    text = "m.search_text" if any(snip is None for _, snip in hits) else "NULL"  # for snippets
    cond, args = d.in_list("m.id", [h[0] for h in hits])
    # id, session_id, role, timestamp, source, model, started_at, prev, next, search_text
    rows = {r[0]: r for r in d.tuple_rows(conn, sql.hits.format(text, cond), args)}
    near_ids = [i for r in rows.values() for i in (r[7], r[8]) if i is not None]
    near = {}
    if near_ids:
        cond, args = d.in_list("id", near_ids)
        near = {r[0]: r for r in d.tuple_rows(conn, sql.near.format(cond), args)}
    words = [t.text for g in parsed.groups for t in g if not t.negated]
    out = []
    for msg_id, snippet in hits:
        row = rows.get(msg_id)
        if row is None:
            continue
        context = []
        for other in (row[7], row[8]):
            if other in near:
                content = decode_content(d.stored_content(near[other][2]))
                body = content if isinstance(content, str) else str(content or "")
                context.append({"id": other, "role": near[other][1],
                                "content": body[:CONTEXT_CHARS]})
        snippet = snippet or manual_snippet(str(d.stored_content(row[9]) or ""), words)
        out.append({"id": row[0], "session_id": row[1], "role": row[2], "timestamp": row[3],
                    "snippet": snippet.strip(), "context": context, "source": row[4],
                    "model": row[5], "session_started": row[6]})
    return out
