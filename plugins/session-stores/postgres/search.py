"""Searching messages in PostgreSQL with the shared query language (``hermes_agent.api``).

A query is OR-groups of AND-ed terms (some negated). A term with CJK text is a
case-insensitive substring (``ILIKE``, served by the pg_trgm index); any other term is a word
or phrase of the ``simple`` text-search configuration over ``search_tsv`` (a ``prefix*`` keeps
``:*``). Ranking: ``ts_rank_cd`` over the newest RANK_WINDOW matches (newest first among
equals); ``sort="newest"``/``"oldest"`` orders by id. Snippets are ``>>>term<<<`` windows of
the matched text. Every search runs under ``statement_timeout`` (the store's budget).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hermes_agent.api import SearchTimeoutError
from hermes_agent.kits.sql.lineage import like_escape
from hermes_agent.kits.sql.query import SEARCH_CJK, SearchQuery, SearchTerm, parse_search_query
from hermes_agent.kits.sql.search import SearchSql, search_filters, search_results

from .values import POSTGRES

RANK_WINDOW = 500
_SQL = SearchSql(POSTGRES)


def _clean(text: str) -> str:
    return text.replace("\x00", " ")


def _tsquery(term: SearchTerm, args: list[Any]) -> str:
    """The tsquery of a word, phrase or prefix term; appends its parameter to ``args``."""
    text = _clean(term.text)
    if term.prefix and text.replace("_", "").isalnum():
        args.append(f"'{text}':*")
        return "to_tsquery('simple', %s)"
    args.append(text)
    return "phraseto_tsquery('simple', %s)"


def _term_sql(term: SearchTerm, args: list[Any]) -> str:
    """SQL true when a message ``m`` holds ``term``; appends its parameters to ``args``."""
    text = _clean(term.text)
    if SEARCH_CJK.search(text):
        args.append("%" + like_escape(text) + "%")
        return "m.search_text ILIKE %s"
    return f"m.search_tsv @@ {_tsquery(term, args)}"


def match_sql(parsed: SearchQuery) -> tuple[str, list[Any], str | None, list[Any]]:
    """(condition, its parameters, rank expression or None, its parameters). A query of words
    only is one tsquery (one scan of the word index); one with CJK text combines a condition
    per term."""
    args: list[Any] = []
    words = [t for g in parsed.groups for t in g if not t.negated and not SEARCH_CJK.search(t.text)]
    if not parsed.cjk:
        groups = []
        for group in parsed.groups:
            parts = [_tsquery(t, args) for t in group if not t.negated]
            parts += ["!!" + _tsquery(t, args) for t in group if t.negated]
            groups.append("(" + " && ".join(parts) + ")")
        cond = f"m.search_tsv @@ ({' || '.join(groups)})"
    else:
        groups = []
        for group in parsed.groups:
            parts = [_term_sql(t, args) for t in group if not t.negated]
            parts += ["NOT (" + _term_sql(t, args) + ")" for t in group if t.negated]
            groups.append("(" + " AND ".join(parts) + ")")
        cond = " OR ".join(groups)
    rank_args: list[Any] = []
    rank = None
    if words:
        rank = f"ts_rank_cd(m.search_tsv, {' || '.join(_tsquery(t, rank_args) for t in words)})"
    return cond, args, rank, rank_args


def search(conn: Any, query: str, *, source_filter: Iterable[str] | None,
           exclude_sources: Iterable[str] | None, role_filter: Iterable[str] | None,
           limit: int, offset: int, sort: str | None, exclude_sessions: Iterable[str] | None,
           budget_s: float) -> list[dict[str, Any]]:
    """Run one search in the caller's transaction (raises SearchTimeoutError past budget)."""
    from psycopg import errors as pg_errors

    parsed = parse_search_query(query)
    if not parsed.groups or limit <= 0:
        return []
    cond, args, rank, rank_args = match_sql(parsed)
    where, fargs = search_filters(POSTGRES, source_filter, exclude_sources, role_filter,
                                  exclude_sessions)
    base = f"FROM messages m JOIN sessions s ON s.id = m.session_id WHERE ({cond}){where}"
    if sort in ("newest", "oldest") or rank is None:
        direction = "ASC" if sort == "oldest" else "DESC"
        sql = f"SELECT m.id {base} ORDER BY m.id {direction} LIMIT %s OFFSET %s"
        params = [*args, *fargs, limit, offset]
    else:
        sql = (f"SELECT id FROM (SELECT m.id, {rank} AS r {base} ORDER BY m.id DESC "
               f"LIMIT {RANK_WINDOW}) w ORDER BY r DESC, id DESC LIMIT %s OFFSET %s")
        params = [*rank_args, *args, *fargs, limit, offset]
    conn.execute(f"SET LOCAL statement_timeout = {max(1, int(budget_s * 1000))}")
    try:
        with conn.transaction():
            hits: list[tuple[int, str | None]] = [
                (r["id"], None) for r in conn.execute(sql, params).fetchall()]
            return search_results(conn, _SQL, hits, parsed)
    except pg_errors.QueryCanceled as exc:
        raise SearchTimeoutError.after(budget_s) from exc
    except (pg_errors.SyntaxError, pg_errors.DataException):
        return []  # a term PostgreSQL still rejects matches nothing
