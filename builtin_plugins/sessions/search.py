"""Running a search: FTS5 (unicode61) for words, the CJK path (see :mod:`.cjk`), results.

Ranking: BM25 over the newest 500 matches (so a very common word costs the same as a rare
one); a query with a quoted phrase ranks those matches by length instead (see
:func:`_phrase_hits`); ``sort="newest"``/``"oldest"`` orders by time. Snippets come from the
FTS5 statement that matches, not from a query per hit.

Every search runs on a read connection of its own under a time budget (SQLite's progress
handler): past SEARCH_BUDGET_S it is stopped with :class:`SearchTimeoutError`. Query parsing
and its cost bounds are in :mod:`.query`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from hermes_agent.api import SearchTimeoutError
from hermes_agent.kits.sql.query import SEARCH_BUDGET_S
from hermes_agent.kits.sql.search import SearchSql, search_filters, search_results

from . import shortest
from .cjk import cjk_ids
from .codec import SQLITE
from .query import (
    MAX_PREFIX_TERMS,
    MAX_QUERY,
    MAX_TERMS,
    MIN_PREFIX,
    Query,
    manual_snippet,
    parse,
    sanitize_fts5_query,
)

__all__ = ["MAX_PREFIX_TERMS", "MAX_QUERY", "MAX_TERMS", "MIN_PREFIX", "SEARCH_BUDGET_S",
           "manual_snippet", "parse", "sanitize_fts5_query", "search_messages", "time_budget"]
PROGRESS_STEPS = 1000  # SQLite VM steps between budget checks
RANK_WINDOW = 500
_clock = time.monotonic
_SQL = SearchSql(SQLITE)


@contextmanager
def time_budget(conn: sqlite3.Connection, seconds: float) -> Iterator[None]:
    """Stop the statements run in the block after ``seconds`` (SQLite's progress handler),
    raising SearchTimeoutError."""
    deadline = _clock() + seconds
    conn.set_progress_handler(lambda: int(_clock() > deadline), PROGRESS_STEPS)
    try:
        yield
    except sqlite3.OperationalError as exc:
        if "interrupt" not in str(exc).lower():
            raise
        raise SearchTimeoutError.after(seconds) from exc
    finally:
        conn.set_progress_handler(None, 0)


def search_messages(conn: sqlite3.Connection, query: str, *,
                    source_filter: Iterable[str] | None = None,
                    exclude_sources: Iterable[str] | None = None,
                    role_filter: Iterable[str] | None = None, limit: int = 20, offset: int = 0,
                    sort: str | None = None, exclude_sessions: Iterable[str] | None = None,
                    budget_s: float = SEARCH_BUDGET_S) -> list[dict[str, Any]]:
    parsed = parse(query)
    if not parsed.groups or limit <= 0:
        return []
    where, args = search_filters(SQLITE, source_filter, exclude_sources, role_filter,
                                 exclude_sessions)
    with time_budget(conn, budget_s):
        if parsed.cjk:
            want = limit + offset
            ids = cjk_ids(conn, parsed, where, args, want, sort == "oldest")
            hits: list[tuple[int, str | None]] = [(i, None) for i in ids[offset:want]]
        else:
            hits = _fts_hits(conn, parsed, where, args, limit, offset, sort)
        return search_results(conn, _SQL, hits, parsed)


_SNIPPET = "snippet(messages_fts, 0, '>>>', '<<<', '...', 40)"


def _fts_hits(conn: sqlite3.Connection, parsed: Query, where: str, args: list[Any],
              limit: int, offset: int, sort: str | None) -> list[tuple[int, str | None]]:
    """(id, snippet) of the hits. The snippets come from the statement that matches and ranks
    (for the returned rows only or, for phrases, for the matches among the best so far)."""
    match = parsed.fts()
    joins = (" JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.id = m.session_id"
             if where else "")
    direction = "ASC" if sort == "oldest" else "DESC"
    base = f"FROM messages_fts f{joins} WHERE messages_fts MATCH ? {where}"
    if sort in ("newest", "oldest"):
        sql = f"SELECT f.rowid, {_SNIPPET} {base} ORDER BY f.rowid {direction} LIMIT ? OFFSET ?"
        return _rows(conn, sql, (match, *args, limit, offset))
    if any(" " in t.text for g in parsed.groups for t in g if not t.negated):
        sized = (f"FROM messages_fts f LEFT JOIN messages_fts_docsize d ON d.id = f.rowid{joins} "
                 f"WHERE messages_fts MATCH ? {where}")
        return _phrase_hits(conn, match, sized, args, limit, offset)
    # BM25 over the newest RANK_WINDOW matches: the subquery finds the oldest id of that
    # window (a walk of the index, no ranking), FTS5 ranks the matches from there on and
    # computes snippets only for the rows returned.
    sql = (f"SELECT f.rowid, {_SNIPPET} {base} AND f.rowid >= coalesce((SELECT f.rowid "
           f"{base} ORDER BY f.rowid DESC LIMIT 1 OFFSET {RANK_WINDOW - 1}), 0) "
           "ORDER BY f.rank LIMIT ? OFFSET ?")  # exactly this: FTS5 sorts, snippets last
    return _rows(conn, sql, (match, *args, match, *args, limit, offset))


def _phrase_hits(conn: sqlite3.Connection, match: str, sized: str, args: list[Any],
                 limit: int, offset: int) -> list[tuple[int, str | None]]:
    """Ranking for queries with a phrase, without BM25. BM25 needs the number of rows that
    hold each phrase, which FTS5 counts by checking the phrase in every row of the whole
    index that has its words: a second pass, often longer than the search. Instead the
    newest RANK_WINDOW matches are ranked by their length in tokens (FTS5's own count, in
    its docsize table), shortest first and newest first among equals: BM25's order when
    each match holds the phrase once. Snippets are made in the same pass, for each match
    that is among the ``limit + offset`` best of those seen so far (see :mod:`.shortest`:
    every returned row has one, and few others do). ``sized`` is the FROM/WHERE clause,
    with FTS5's docsize table as ``d``."""
    sql = (f"SELECT f.rowid, d.sz, CASE WHEN {shortest.FUNCTION}(d.sz) THEN {_SNIPPET} END "
           f"{sized} ORDER BY f.rowid DESC LIMIT {RANK_WINDOW}")
    try:
        with shortest.walking(limit + offset):
            try:
                found = conn.execute(sql, (match, *args)).fetchall()
            except sqlite3.OperationalError as exc:
                if shortest.FUNCTION not in str(exc):
                    raise
                shortest.prepare(conn)  # a connection the store did not open
                found = conn.execute(sql, (match, *args)).fetchall()
    except sqlite3.OperationalError as exc:
        if "interrupt" in str(exc).lower():
            raise
        return []  # an expression FTS5 still rejects matches nothing
    found.sort(key=lambda r: (shortest.varint(r[1]), -r[0]))
    return [(r[0], r[2]) for r in found[offset:offset + limit]]


def _rows(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    try:
        return [(r[0], r[1]) for r in conn.execute(sql, params).fetchall()]
    except sqlite3.OperationalError as exc:
        if "interrupt" in str(exc).lower():
            raise
        return []  # an expression FTS5 still rejects matches nothing
