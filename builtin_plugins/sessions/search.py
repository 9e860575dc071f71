"""Message search: sanitising user queries, FTS5 (unicode61), trigram and LIKE paths.

Syntax: words (all must match), ``"exact phrases"``, ``OR``, ``NOT``, ``prefix*``. Anything
else a user types is made safe: unmatched quotes and special characters are dropped, terms
with ``-``, ``.`` or other punctuation inside are quoted, dangling operators are removed. No
input raises.

Ranking: BM25 over the newest 500 matches (so a very common word costs the same as a rare
one); ``sort="newest"``/``"oldest"`` orders by time instead. Queries with CJK text use the
trigram table (runs of 3 or more CJK characters) or a LIKE scan (1-2 characters).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .codec import decode_content
from .inputs import clean_text
from .interface import SearchTimeoutError
from .schema import CJK_CLASS

MAX_QUERY = 2048  # characters of a query that are read, in whole tokens
MAX_TERMS = 16
MAX_PREFIX_TERMS = 4
MIN_PREFIX = 2
SEARCH_BUDGET_S = 2.0  # a search running longer is stopped (SearchTimeoutError)
PROGRESS_STEPS = 1000  # SQLite VM steps between budget checks
RANK_WINDOW = 500
CONTEXT_CHARS = 200
_CJK = re.compile(f"[{CJK_CLASS}]")
_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
_BARE = re.compile(r"^[\w]+$", re.UNICODE)  # FTS5 bareword: letters, digits, _ and non-ASCII
_TOKEN = re.compile(r'"[^"]*"|\S+')
OPERATORS = ("AND", "OR", "NOT")
_clock = time.monotonic


@dataclass
class Term:
    text: str
    prefix: bool = False
    negated: bool = False

    def fts(self) -> str:
        quoted = self.text if _BARE.match(self.text) else '"' + self.text.replace('"', "") + '"'
        return quoted + ("*" if self.prefix else "")


@dataclass
class Query:
    """A sanitised query: OR-groups of AND-ed terms (some negated)."""

    groups: list[list[Term]] = field(default_factory=list)

    def fts(self) -> str:
        parts = []
        for group in self.groups:
            pos = [t.fts() for t in group if not t.negated]
            neg = [t.fts() for t in group if t.negated]
            text = " AND ".join(pos)
            for n in neg:
                text += f" NOT {n}"
            parts.append(f"({text})" if len(self.groups) > 1 else text)
        return " OR ".join(parts)

    @property
    def cjk(self) -> bool:
        return any(_CJK.search(t.text) for g in self.groups for t in g)


def _term(raw: str) -> Term | None:
    if raw.startswith('"') and raw.endswith('"') and len(raw) >= 2:
        text = " ".join(raw[1:-1].split())
        return Term(text) if text.strip() else None
    prefix = raw.endswith("*")
    text = raw.replace('"', " ").strip("*")
    text = re.sub(r"[*+{}()\[\]:^~`|\\<>=!?,;'@#$%&]", " ", text)
    text = text.strip(" -./")
    if not text or not re.search(r"\w", text):
        return None
    return Term(" ".join(text.split()), prefix=prefix)


def _tokens(query: str) -> list[str]:
    """The query's tokens (words, quoted phrases, operators), whole ones only, up to
    MAX_QUERY characters: a long query is cut between tokens, never inside a word or phrase."""
    text = clean_text(query or "")
    if text.count('"') % 2:  # an unmatched quote: drop the last one
        cut = text.rfind('"')
        text = text[:cut] + " " + text[cut + 1:]
    out, used = [], 0
    for match in _TOKEN.finditer(text):
        used += len(match.group()) + 1
        if used > MAX_QUERY + 1:
            break
        out.append(match.group())
    return out


def parse(query: str) -> Query:
    """Sanitise ``query`` into OR-groups of terms. Never raises.

    At most MAX_TERMS terms are kept (later ones are dropped, a dangling operator with them);
    only the first MAX_PREFIX_TERMS prefix terms keep their ``*``, later ones match whole
    words. Each prefix needs MIN_PREFIX characters (``a*`` is the word ``a``)."""
    items: list[Any] = []
    terms = prefixes = 0
    for raw in _tokens(query):
        if raw in OPERATORS:
            items.append(raw)
            continue
        term = _term(raw)
        if term is None:
            continue
        if term.prefix:
            term.prefix = prefixes < MAX_PREFIX_TERMS and len(term.text) >= MIN_PREFIX
            prefixes += term.prefix
        items.append(term)
        terms += 1
        if terms >= MAX_TERMS:
            break
    groups: list[list[Term]] = [[]]
    pending: str | None = None
    for item in items:
        if isinstance(item, str):
            if groups[-1] or item == "NOT":
                pending = item if item != "AND" else pending
            continue
        if pending == "OR" and groups[-1]:
            groups.append([])
        elif pending == "NOT":
            item.negated = bool(groups[-1] and any(not t.negated for t in groups[-1]))
        pending = None
        groups[-1].append(item)
    groups = [g for g in groups if any(not t.negated for t in g)]
    return Query(groups)


def sanitize_fts5_query(query: str) -> str:
    """The FTS5 MATCH expression for ``query`` ("" when nothing searchable is left)."""
    return parse(query).fts()


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
        raise SearchTimeoutError(
            f"the search took longer than {seconds:g} s and was stopped. Use fewer or longer "
            "words (short prefixes such as ab* and many OR terms are the costly ones), or "
            "filter by source or role.") from exc
    finally:
        conn.set_progress_handler(None, 0)


def search_messages(conn: sqlite3.Connection, query: str, *,
                    source_filter: Iterable[str] | None = None,
                    exclude_sources: Iterable[str] | None = None,
                    role_filter: Iterable[str] | None = None, limit: int = 20, offset: int = 0,
                    sort: str | None = None,
                    budget_s: float = SEARCH_BUDGET_S) -> list[dict[str, Any]]:
    parsed = parse(query)
    if not parsed.groups or limit <= 0:
        return []
    where, args = _filters(source_filter, exclude_sources, role_filter)
    with time_budget(conn, budget_s):
        if parsed.cjk:
            want = limit + offset
            ids = _cjk_ids(conn, parsed, where, args, want, sort == "oldest")
            hits: list[tuple[int, str | None]] = [(i, None) for i in ids[offset:want]]
        else:
            hits = _fts_hits(conn, parsed.fts(), where, args, limit, offset, sort)
        return _results(conn, hits, parsed)


_SNIPPET = "snippet(messages_fts, 0, '>>>', '<<<', '...', 40)"


def _fts_hits(conn: sqlite3.Connection, match: str, where: str, args: list[Any], limit: int,
              offset: int, sort: str | None) -> list[tuple[int, str | None]]:
    """(id, snippet) of the hits, in one statement: the snippets come from the same FTS5
    query as the match and the ranking, for the returned rows only."""
    joins = (" JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.id = m.session_id"
             if where else "")
    direction = "ASC" if sort == "oldest" else "DESC"
    base = f"FROM messages_fts f{joins} WHERE messages_fts MATCH ? {where}"
    if sort in ("newest", "oldest"):
        sql = f"SELECT f.rowid, {_SNIPPET} {base} ORDER BY f.rowid {direction} LIMIT ? OFFSET ?"
        params: tuple[Any, ...] = (match, *args, limit, offset)
    else:
        # BM25 over the newest RANK_WINDOW matches: the subquery finds the oldest id of that
        # window (a walk of the index, no ranking), FTS5 ranks the matches from there on and
        # computes snippets only for the rows returned.
        sql = (f"SELECT f.rowid, {_SNIPPET} {base} AND f.rowid >= coalesce((SELECT f.rowid "
               f"{base} ORDER BY f.rowid DESC LIMIT 1 OFFSET {RANK_WINDOW - 1}), 0) "
               "ORDER BY f.rank LIMIT ? OFFSET ?")
        params = (match, *args, match, *args, limit, offset)
    try:
        rows = conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if "interrupt" in str(exc).lower():
            raise
        return []  # an expression FTS5 still rejects matches nothing
    return [(r[0], r[1]) for r in rows]


def _filters(sources: Iterable[str] | None, excluded: Iterable[str] | None,
             roles: Iterable[str] | None) -> tuple[str, list[Any]]:
    where, args = "", []
    for column, values, op in (("s.source", sources, "IN"), ("s.source", excluded, "NOT IN"),
                               ("m.role", roles, "IN")):
        values = [v for v in (values or ()) if v]
        if values:
            where += f" AND {column} {op} ({', '.join('?' * len(values))})"
            args += values
    return where, args


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _cjk_ids(conn: sqlite3.Connection, parsed: Query, where: str, args: list[Any], want: int,
             oldest: bool) -> list[int]:
    """Ids matching a query with CJK text, newest first (or oldest). Groups with a CJK run of
    3+ characters use the trigram index, groups without CJK text the word index, and all the
    others share a single scan of the messages."""
    found: set[int] = set()
    order = "ASC" if oldest else "DESC"
    scans: list[tuple[str, list[str]]] = []
    for group in parsed.groups:
        pos = [t for t in group if not t.negated]
        conds = ["m.search_text LIKE ? ESCAPE '\\'" for _ in pos]
        conds += ["m.search_text NOT LIKE ? ESCAPE '\\'" for t in group if t.negated]
        likes = [_like(t.text) for t in pos] + [_like(t.text) for t in group if t.negated]
        long = [t for t in pos if len(t.text) >= 3 and _CJK.search(t.text)]
        if long:
            source = "messages_fts_trigram f JOIN messages m ON m.id = f.rowid"
            match = " AND ".join(f'"{t.text[i:i + 3]}"' for t in long
                                 for i in range(len(t.text) - 2) if '"' not in t.text[i:i + 3])
            head, params = "messages_fts_trigram MATCH ?", [match]
        elif not any(_CJK.search(t.text) for t in pos):
            source = "messages_fts f JOIN messages m ON m.id = f.rowid"
            head, params = "messages_fts MATCH ?", [Query([group]).fts()]
        else:
            scans.append((" AND ".join(conds), likes))
            continue
        found.update(_ids(conn, f"{source} JOIN sessions s ON s.id = m.session_id WHERE {head} "
                                f"AND {' AND '.join(conds)} {where} ORDER BY m.id {order}",
                          [*params, *likes, *args], want))
    if scans:
        either = " OR ".join(f"({cond})" for cond, _ in scans)
        found.update(_ids(conn, "messages m JOIN sessions s ON s.id = m.session_id WHERE "
                                f"({either}) {where} ORDER BY m.id {order}",
                          [v for _, likes in scans for v in likes] + args, want))
    return sorted(found, reverse=not oldest)[:want]


def _ids(conn: sqlite3.Connection, sql: str, params: list[Any], want: int) -> list[int]:
    try:
        return [r[0] for r in conn.execute(f"SELECT m.id FROM {sql} LIMIT ?", (*params, want))]
    except sqlite3.OperationalError as exc:
        if "interrupt" in str(exc).lower():
            raise
        return []


def _results(conn: sqlite3.Connection, hits: list[tuple[int, str | None]],
             parsed: Query) -> list[dict[str, Any]]:
    """Result dicts for ``hits`` (ids in order, with the snippet when FTS5 made one) with two
    queries for all of them."""
    if not hits:
        return []
    marks = ", ".join("?" * len(hits))
    rows = {r[0]: r for r in conn.execute(
        "SELECT m.id, m.session_id, m.role, m.timestamp, s.source, s.model, s.started_at, "
        "(SELECT p.id FROM messages p WHERE p.session_id = m.session_id AND p.id < m.id "
        "ORDER BY p.id DESC LIMIT 1), (SELECT n.id FROM messages n WHERE n.session_id = "
        "m.session_id AND n.id > m.id ORDER BY n.id LIMIT 1), m.search_text FROM messages m "
        f"JOIN sessions s ON s.id = m.session_id WHERE m.id IN ({marks})", [h[0] for h in hits])}
    near_ids = [i for r in rows.values() for i in (r[7], r[8]) if i is not None]
    near = {r[0]: r for r in conn.execute(
        f"SELECT id, role, content FROM messages WHERE id IN ({', '.join('?' * len(near_ids))})",
        near_ids)} if near_ids else {}
    words = [t.text for g in parsed.groups for t in g if not t.negated]
    out = []
    for msg_id, snippet in hits:
        row = rows.get(msg_id)
        if row is None:
            continue
        context = []
        for other in (row[7], row[8]):
            if other in near:
                content = decode_content(near[other][2])
                text = content if isinstance(content, str) else str(content or "")
                context.append({"id": other, "role": near[other][1],
                                "content": text[:CONTEXT_CHARS]})
        out.append({"id": row[0], "session_id": row[1], "role": row[2], "timestamp": row[3],
                    "snippet": (snippet or manual_snippet(row[9] or "", words)).strip(),
                    "context": context, "source": row[4], "model": row[5],
                    "session_started": row[6]})
    return out


def manual_snippet(text: str, terms: list[str], width: int = 60) -> str:
    """A ``>>>match<<<`` window around the first term found (case-insensitive)."""
    lower = text.lower()
    for term in terms:
        at = lower.find(term.lower())
        if at >= 0:
            start, end = max(0, at - width), min(len(text), at + len(term) + width)
            return ("..." if start else "") + text[start:at] + ">>>" + text[at:at + len(term)] + \
                "<<<" + text[at + len(term):end] + ("..." if end < len(text) else "")
    return text[:2 * width] + ("..." if len(text) > 2 * width else "")
