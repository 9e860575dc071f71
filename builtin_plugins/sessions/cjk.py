"""Searching CJK text, which has no spaces between words for the word index to split on.

Rows with CJK text are in the trigram index, with every trigram of their text. A term with 3 or
more characters is looked up by all its trigrams, whatever its script (so "数 zz0" reads only
the rows that hold both "数" and "zz0"). A 1-2 character CJK term is looked up through the
index's vocabulary: the indexed trigrams that start with it. (The searchable text is the
content, then " " tool name " " tool-call text, so every character of the content is followed
by at least two more and starts such a trigram.) A term so common that more than MAX_TRIGRAMS
trigrams start with it, or a 1-2 character word of another script, is not used to narrow the
lookup; a group left with no indexed term shares one scan of the messages with the other such
groups, which stops once enough matches are found. Every candidate's text is verified
(case-insensitive substrings, as LIKE); groups without CJK text use the word index.
"""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING, Any

from .schema import CJK_CLASS

if TYPE_CHECKING:  # parsing loads with the first search, not with every connection
    from .query import Query, Term

VOCAB = "temp.hermes_trigram_vocab"
VOCAB_DDL = (f"CREATE VIRTUAL TABLE IF NOT EXISTS {VOCAB} USING "
             "fts5vocab(main, 'messages_fts_trigram', 'row')")
MAX_TRIGRAMS = 400
FEW_TRIGRAMS = 32  # beside a term of 3+ characters, a short term's OR is worth its cost up to this
_CJK = re.compile(f"[{CJK_CLASS}]")


def prepare(conn: sqlite3.Connection) -> None:
    """Create the (connection-private, temp) vocabulary table; before ``query_only``."""
    conn.execute(VOCAB_DDL)


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _trigrams_from(conn: sqlite3.Connection, term: str) -> list[str] | None:
    """Indexed trigrams starting with ``term`` (at most MAX_TRIGRAMS + 1); None when the
    vocabulary table is not available on this connection."""
    key = term.lower()
    try:
        return [r[0] for r in conn.execute(
            f"SELECT term FROM {VOCAB} WHERE term >= ? AND term < ? LIMIT {MAX_TRIGRAMS + 1}",
            (key, key + "\U0010ffff"))]
    except sqlite3.OperationalError as exc:
        if "interrupt" in str(exc).lower():
            raise
        return None


def _trigram_match(conn: sqlite3.Connection, terms: list[str],
                   known: dict[str, list[str] | None] | None = None) -> str | None:
    """The trigram MATCH expression for the positive ``terms`` of a group with CJK text; ""
    when one of them is in no row (the group matches nothing), None when none of them can
    narrow the lookup. Every term of 3 or more characters, in any script, narrows it by its
    trigrams (a row of the group is in the trigram index, and so are all its trigrams). A
    1-2 character CJK term narrows it by the trigrams that start with it, an OR that costs a
    doclist per trigram: up to MAX_TRIGRAMS of them when the group has no longer term, up
    to FEW_TRIGRAMS beside one. ``known`` keeps the vocabulary lookups of one search (each
    reads the doclists of its trigrams)."""
    known = {} if known is None else known
    parts = [" AND ".join(_quote(t[i:i + 3]) for i in range(len(t) - 2))
             for t in terms if len(t) >= 3]
    most = FEW_TRIGRAMS if parts else MAX_TRIGRAMS
    for text in terms:
        if len(text) >= 3 or not _CJK.search(text):
            continue  # longer terms are in parts; a short word of another script is too common
        if text not in known:
            known[text] = _trigrams_from(conn, text)
        grams = known[text]
        if grams == []:
            return ""
        if grams is not None and len(grams) <= most:
            parts.append("(" + " OR ".join(_quote(g) for g in grams) + ")")
    return " AND ".join(parts) or None


Check = tuple[str, list[str]]  # an SQL condition on the text ``t`` and its parameters


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _check(group: list[Term]) -> Check:
    """Whether ``t`` (the text, lower-cased as SQLite's lower() does: ASCII only) matches
    ``group``: case-insensitive substrings, as LIKE, with instr (several times faster)."""
    pos = [t.text.translate(_ASCII_LOWER) for t in group if not t.negated]
    neg = [t.text.translate(_ASCII_LOWER) for t in group if t.negated]
    cond = " AND ".join(["instr(t, ?) > 0"] * len(pos) + ["instr(t, ?) = 0"] * len(neg))
    return f"({cond})", pos + neg


def cjk_ids(conn: sqlite3.Connection, parsed: Query, where: str, args: list[Any], want: int,
            oldest: bool) -> list[int]:
    """Ids of up to ``want`` messages matching a query with CJK text, newest first (or
    oldest). All groups looked up in the trigram index share one statement, and so do all
    scanned groups: a candidate is read, and its text built, once however many groups it
    could match. Groups without CJK text use the word index, one statement each."""
    from .query import CJK, Query

    found: set[int] = set()
    order = "ASC" if oldest else "DESC"
    sessions = " JOIN sessions s ON s.id = m.session_id" if where else ""
    indexed: list[tuple[str, Check]] = []
    scans: list[Check] = []
    known: dict[str, list[str] | None] = {}
    for group in parsed.groups:
        if not any(CJK.search(t.text) for t in group if not t.negated):
            found.update(_verified(
                conn, f"messages_fts f JOIN messages m ON m.id = f.rowid{sessions} "
                f"WHERE messages_fts MATCH ? {where} ORDER BY f.rowid "
                f"{order}", [Query([group]).fts(), *args], [_check(group)], want))
            continue
        match = _trigram_match(conn, [t.text for t in group if not t.negated], known)
        if match == "":
            continue  # a term that is in no row
        if match is None:
            scans.append(_check(group))
        else:
            indexed.append((match, _check(group)))
    if indexed:
        found.update(_verified(
            conn, f"messages_fts_trigram f JOIN messages m ON m.id = f.rowid{sessions} "
            f"WHERE messages_fts_trigram MATCH ? {where} ORDER BY f.rowid "
            f"{order}", [" OR ".join(f"({m})" for m in dict.fromkeys(m for m, _ in indexed)), *args],
            [c for _, c in indexed], want))
    if scans:
        found.update(_verified(
            conn, f"messages m{sessions} WHERE 1 {where} "
            f"ORDER BY m.id {order}", args, scans, want))
    return sorted(found, reverse=not oldest)[:want]


def _verified(conn: sqlite3.Connection, sql: str, params: list[Any], checks: list[Check],
              want: int) -> list[int]:
    """Ids of the first ``want`` candidates (in the order of ``sql``) whose text passes one
    of ``checks``. The inner query has a LIMIT, so SQLite neither flattens it nor pushes the
    checks into it: it runs as a co-routine and each candidate's text is built once."""
    either = " OR ".join(c for c, _ in checks)
    try:
        return [r[0] for r in conn.execute(
            f"SELECT id FROM (SELECT m.id AS id, lower(m.search_text) AS t FROM {sql} LIMIT -1) "
            f"WHERE {either} LIMIT ?", [*params, *(v for _, p in checks for v in p), want])]
    except sqlite3.OperationalError as exc:
        if "interrupt" in str(exc).lower():
            raise
        return []  # an expression FTS5 still rejects matches nothing
