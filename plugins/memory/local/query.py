"""Turning free text (a user's message, a tool argument) into safe FTS5 queries.

Nothing of the input reaches FTS5 as syntax: the text is cut into word runs (``\\w+``), so
quotes, ``*``, ``^``, ``:`` (column filters), parentheses and ``+``/``-`` never survive,
and every run is written as a double-quoted string, so ``AND``, ``OR``, ``NOT`` and
``NEAR`` are plain words. The strings are joined with ``OR``: a fact matching more of them
ranks higher through BM25.

Scripts without spaces (CJK) need the trigram index: unicode61 keeps a whole CJK run as one
token. A CJK run of three or more characters becomes its overlapping trigrams (each a
quoted string for the trigram table); a run of one or two characters is too short for a
trigram and is matched with ``LIKE`` instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hermes_agent.kits.sql.lineage import like_escape

MAX_TERMS = 24  # longer queries keep their first terms: enough for recall, bounded cost
MAX_TERM_CHARS = 64
MIN_PREFIX_CHARS = 4  # "deploy" also finds "deployment"; shorter terms match whole words
# Suffixes cut from a query word (longest first) before it is used as a prefix, so
# "deployment" finds "deployed" and "editors" finds "editor"; the stem keeps 4+ characters.
_SUFFIXES = ("ments", "ment", "ings", "ing", "ers", "ed", "es", "er", "s")

# Han, Hiragana, Katakana, Hangul (syllables and jamo), CJK punctuation excluded.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(r"[^\W_]+")  # letters and digits; "_" splits like unicode61 does

# Words that carry no recall value in a question; dropped unless nothing else is left.
STOPWORDS = frozenset("""
a an and are as at be been but by can could did do does for from had has have how i if
in into is it its me my of on or our please should so than that the their them then there
these they this to us was we were what when where which who why will with would you your
about any just tell know remember recall
""".split())


@dataclass(frozen=True)
class Query:
    """The sanitised parts of one free-text query; empty parts mean "skip that index"."""

    words: tuple[str, ...] = ()  # for the unicode61 table
    trigrams: tuple[str, ...] = ()  # for the trigram table
    short_cjk: tuple[str, ...] = ()  # CJK runs of 1-2 characters, for LIKE
    cjk_runs: tuple[str, ...] = field(default=(), compare=False)

    @property
    def empty(self) -> bool:
        return not (self.words or self.trigrams or self.short_cjk)

    def word_match(self) -> str:
        """The MATCH expression for the unicode61 table ('' when there are no words)."""
        return " OR ".join(_quoted(w) + ("*" if len(w) >= MIN_PREFIX_CHARS else "")
                           for w in self.words)

    def trigram_match(self) -> str:
        """The MATCH expression for the trigram table ('' when there is no CJK)."""
        return " OR ".join(_quoted(t) for t in self.trigrams)


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def like_pattern(text: str) -> str:
    """``%text%`` for ``LIKE ... ESCAPE '\\'``, with ``%``, ``_`` and ``\\`` escaped."""
    return f"%{like_escape(text)}%"


def parse(text: str, *, keep_stopwords: bool = False) -> Query:
    """The safe query parts of ``text`` (any string, hostile ones included)."""
    text = (text or "")[:4000]
    cjk_runs = _CJK_RUN.findall(text)
    rest = _CJK_RUN.sub(" ", text)
    words = _unique(w.lower()[:MAX_TERM_CHARS] for w in _WORD.findall(rest))
    if not keep_stopwords:
        meaningful = [w for w in words if w not in STOPWORDS]
        words = meaningful or words
    words = _unique(stem(w) for w in words)
    trigrams: list[str] = []
    short: list[str] = []
    for run in cjk_runs:
        if len(run) >= 3:
            trigrams.extend(run[i:i + 3] for i in range(len(run) - 2))
        else:
            short.append(run)
    return Query(tuple(words[:MAX_TERMS]), tuple(_unique(trigrams)[:MAX_TERMS]),
                 tuple(_unique(short)[:MAX_TERMS]), tuple(cjk_runs))


def stem(word: str) -> str:
    """``word`` without one common English suffix, when at least 4 characters remain."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_PREFIX_CHARS:
            return word[:-len(suffix)]
    return word


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text or "") is not None


def _unique(items: object) -> list[str]:
    return list(dict.fromkeys(items))  # type: ignore[call-overload]
