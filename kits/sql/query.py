"""Owner: the builtin plugin `sessions` (the postgres session store uses it too).

The session-search query language every store shares: what a user types, parsed into a
safe query (OR-groups of AND-ed terms) with bounded cost. ``fts()`` is its FTS5 form.

Syntax: words (all must match), ``"exact phrases"``, ``OR``, ``NOT``, ``prefix*``. Anything
else a user types is made safe: unmatched quotes and special characters are dropped, terms
with ``-``, ``.`` or other punctuation inside are quoted, dangling operators are removed. No
input raises.

Cost bounds: the first MAX_QUERY characters are read, cut between tokens (a word, a quoted
phrase or ``NOT`` is never split, so ``NOT x`` never becomes ``x``); at most MAX_TERMS terms are
kept; only the first MAX_PREFIX_TERMS prefixes of MIN_PREFIX or more characters keep their
``*`` (shorter ones are not in the prefix index and would scan the whole vocabulary).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .values import clean_text

# Characters of CJK scripts (no spaces between words): searched by substring, not by word.
CJK_CLASS = ("\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
             "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ebef")

SEARCH_BUDGET_S = 2.0  # seconds; a search running longer is stopped (SearchTimeoutError)
MAX_QUERY = SEARCH_MAX_QUERY = 2048  # characters of a query that are read, in whole tokens
MAX_TERMS = SEARCH_MAX_TERMS = 16
MAX_PREFIX_TERMS = SEARCH_MAX_PREFIX_TERMS = 4
MIN_PREFIX = SEARCH_MIN_PREFIX = 3  # the prefix index holds 3-character prefixes; shorter ones scan
CJK = SEARCH_CJK = re.compile(f"[{CJK_CLASS}]")
_BARE = re.compile(r"^[\w]+$", re.UNICODE)  # FTS5 bareword: letters, digits, _ and non-ASCII
_TOKEN = re.compile(r'"[^"]*"|\S+')
OPERATORS = ("AND", "OR", "NOT")


@dataclass
class SearchTerm:
    text: str
    prefix: bool = False
    negated: bool = False

    def fts(self) -> str:
        quoted = self.text if _BARE.match(self.text) else '"' + self.text.replace('"', "") + '"'
        return quoted + ("*" if self.prefix else "")


@dataclass
class SearchQuery:
    """A sanitised query: OR-groups of AND-ed terms (some negated)."""

    groups: list[list[SearchTerm]] = field(default_factory=list)

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
        return any(CJK.search(t.text) for g in self.groups for t in g)


def _term(raw: str) -> SearchTerm | None:
    if raw.startswith('"') and raw.endswith('"') and len(raw) >= 2:
        text = " ".join(raw[1:-1].split())
        return SearchTerm(text) if text.strip() else None
    prefix = raw.endswith("*")
    text = raw.replace('"', " ").strip("*")
    text = re.sub(r"[*+{}()\[\]:^~`|\\<>=!?,;'@#$%&]", " ", text)
    text = text.strip(" -./")
    if not text or not re.search(r"\w", text):
        return None
    return SearchTerm(" ".join(text.split()), prefix=prefix)


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


def parse_search_query(query: str) -> SearchQuery:
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
    groups: list[list[SearchTerm]] = [[]]
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
    unique: dict[str, list[SearchTerm]] = {}  # a repeated group costs nothing more
    for g in groups:
        if any(not t.negated for t in g):
            unique.setdefault(SearchQuery([g]).fts(), g)
    return SearchQuery(list(unique.values()))


def sanitize_fts5_query(query: str) -> str:
    """The FTS5 MATCH expression for ``query`` ("" when nothing searchable is left)."""
    return parse_search_query(query).fts()



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
