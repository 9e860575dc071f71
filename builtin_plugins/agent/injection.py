"""Prompt-injection scan for text that goes into the system prompt (SOUL.md, context files).

A file that matches any rule is not injected; :func:`.scan_memo.blocked_notice` replaces
it. Findings are ``<category>:<rule>`` or ``invisible_unicode_U+XXXX``. The rules (injection_rules.py) are
matched against normalised text (unicode_fold.py): the folded text (NFKD, marks and invisible
characters dropped, Cyrillic/Greek look-alikes mapped to Latin, casefolded), and the lines
that read differently respelled (leetspeak digits as letters, spaced-out letters joined).
HTML comment bodies are collected in one pass and matched again, with extra rules for text a
reader of the rendered file does not see.

The scan is linear in the length of the text; callers scan what they inject, after
truncation, so its cost is bounded by the prompt's size cap.
"""

from __future__ import annotations

import functools
import re

from .injection_decode import decoded
from .injection_intl import script_hits, scripts_in, word_rules
from .injection_rules import COMMENT_RULES, RULES, SQUASHED_RULE, Rule
from .rule_needs import possible
from .unicode_fold import (LEET_IN_WORD, characters, distinct_pieces, fold, invisible_characters,
                           respell, strip_invisible)

HTML_COMMENT_FINDING = "hidden_html:html_comment"
#: Found in decoded text (injection_decode.py): the text's base64, hex, %XX or rot13 pieces.
ENCODED_FINDINGS = ("encoded:base64", "encoded:hex", "encoded:url", "encoded:rot13")


def _merged() -> dict[str, tuple[Rule, ...]]:
    """The English rules and, in the same categories, those of other languages."""
    merged = dict(RULES)
    for category, rules in word_rules().items():
        merged[category] = merged.get(category, ()) + rules
    return merged


ALL_RULES: dict[str, tuple[Rule, ...]] = _merged()
CATEGORIES: tuple[str, ...] = (*ALL_RULES, "encoded", "invisible_unicode")

_LETTER = re.compile(r"[a-z]")  # every rule needs one
_WORD = re.compile(r"\w++(?>(?:['’]\w++)*)")


class RuleSet:
    """Rules grouped by lead: one literal search per distinct lead, and only where that
    finds a candidate are the lead's rules tried one by one."""

    def __init__(self, rules: list[tuple[str, Rule]]):
        by_lead: dict[str, list[tuple[str, Rule]]] = {}
        for name, rule in rules:
            for lead in rule.leads:
                by_lead.setdefault(lead, []).append((name, rule))
        self.by_lead = {lead: tuple(group) for lead, group in by_lead.items()}
        self.names = tuple(dict.fromkeys(name for name, _ in rules))
        self.word_leads = frozenset(lead for lead in by_lead if _WORD.fullmatch(lead))
        self.other_leads = tuple(lead for lead in by_lead if lead not in self.word_leads)

    def may_match(self, text: str, vocabulary: set[str]) -> bool:
        """False when no rule can match any part of ``text``: none of the word leads is in
        ``vocabulary`` (a superset of the part's words) and no other lead is in ``text``."""
        return bool(vocabulary & self.word_leads) or any(lead in text for lead in self.other_leads)

    def hits(self, text: str, vocabulary: set[str] | None = None) -> set[str]:
        """Names of the rules that match ``text``. ``vocabulary``: a superset of its words,
        if the caller has one (the words of a text that ``text`` was cut from)."""
        found: set[str] = set()
        vocabulary = words(text) if vocabulary is None else vocabulary
        present = vocabulary & self.word_leads
        words_text = vocabulary_text(vocabulary)
        seen: dict[str, bool] = {}
        for lead, group in self.by_lead.items():
            if lead in self.word_leads and lead not in present:
                continue  # every rest starts at a non-word character: the lead is a whole word
            pending = tuple((name, rule) for name, rule in group if name not in found and (
                words_text is None or possible(rule.rest, words_text, seen)))
            if not pending:
                continue
            candidate = _compile(lead, "|".join(f"(?:{rule.rest})" for _, rule in pending))
            first = candidate.search(text)
            if first is None:
                continue
            found.update(name for name, rule in pending
                         if _rule_matches(text, lead, rule, first.start()))
        return found


def words(text: str) -> set[str]:
    """The distinct words of ``text``: split on white space (a chunk at a time), then only
    the distinct pieces that are not plain words are split further."""
    pieces = distinct_pieces(text)
    plain = set(filter(str.isalnum, pieces))
    return plain | set(_WORD.findall(" ".join(pieces - plain)))


#: Up to this size the text's words, joined, are searched for the other words a rule needs
#: (rule_needs.py); a larger vocabulary has most of them, and is not searched.
VOCABULARY_TEXT_LIMIT = 1 << 16


def vocabulary_text(vocabulary: set[str]) -> str | None:
    """``vocabulary`` joined by spaces, or None when it is too large to be worth searching."""
    if 2 * len(vocabulary) > VOCABULARY_TEXT_LIMIT:  # joined, at least two characters a word
        return None
    joined = " ".join(vocabulary)
    return joined if len(joined) <= VOCABULARY_TEXT_LIMIT else None


def _rule_matches(text: str, lead: str, rule: Rule, start: int) -> bool:
    matches = _compile(lead, rule.rest).finditer(text, start)
    if not rule.before:
        return next(matches, None) is not None
    return any(_before_ok(text, m.start(), rule) for m in matches)


def _before_ok(text: str, pos: int, rule: Rule) -> bool:
    low = max(0, pos - rule.lookback)
    newline = text.rfind("\n", low, pos)
    if rule.line_start and newline == -1 and low > 0:
        return False  # the line starts further back than the rule looks
    window = text[newline + 1 if newline != -1 else low:pos]
    return _pattern(rule.before).search(window) is not None


@functools.lru_cache(maxsize=512)
def _compile(lead: str, rest: str) -> re.Pattern[str]:
    """``lead`` as a literal (a whole word when it starts with a letter), then ``rest``.
    The literal start lets the regex engine skip to candidates with a fast search."""
    boundary = rf"(?<!\w{re.escape(lead)})" if re.match(r"\w", lead) else ""
    return re.compile(f"{re.escape(lead)}{boundary}(?:{rest})")


@functools.lru_cache(maxsize=64)
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _named(rules: tuple[Rule, ...], category: str) -> list[tuple[str, Rule]]:
    return [(f"{category}:{rule.name}", rule) for rule in rules]


_MAIN = RuleSet([pair for category, rules in ALL_RULES.items()
                 for pair in _named(rules, category)])
_COMMENT_ONLY = RuleSet(_named(COMMENT_RULES, "comment"))
_SQUASHED = re.compile(SQUASHED_RULE[1])

#: Every ``<category>:<rule>`` finding the scan can report, in report order.
RULE_FINDINGS: tuple[str, ...] = (*_MAIN.names, HTML_COMMENT_FINDING, SQUASHED_RULE[0],
                                  *ENCODED_FINDINGS)


_RULE_ORDER = frozenset(RULE_FINDINGS)
_SINGLE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")  # what a spaced-out run is made of


def may_be_spaced_out(folded: str, vocabulary: set[str]) -> bool:
    """False when ``folded`` has no letters spaced out (``i g n o r e``). Such a run has a
    letter or digit with a separator on each side: a one-character word, or one inside a word
    joined by ``_`` (a word character, looked for in the whole text); ``@`` and ``$`` become
    letters when respelled. Set lookups and C searches only, whatever the vocabulary's size."""
    return ("@" in folded or "$" in folded or "_" in folded
            or not vocabulary.isdisjoint(_SINGLE))


def may_have_leetspeak(folded: str, vocabulary: set[str]) -> bool:
    """False when no digit touches a letter in ``folded`` and it has no ``@`` or ``$``: a
    digit and a letter side by side are in one word, so a short word list is searched
    instead of the text (a long one is not worth joining)."""
    return ("@" in folded or "$" in folded or LEET_IN_WORD.search(
        " ".join(vocabulary) if len(vocabulary) <= 4096 else folded) is not None)


def _respelled_lines(folded: str, vocabulary: set[str]) -> tuple[str, list[str]]:
    """The respelled lines of ``folded`` that differ from it (joined; "" when none), and the
    spaced-out runs squashed."""
    respelled, squashed = respell(folded, spaced=may_be_spaced_out(folded, vocabulary),
                                  leet=may_have_leetspeak(folded, vocabulary))
    if respelled == folded:
        return "", squashed
    changed = [b for a, b in zip(folded.split("\n"), respelled.split("\n")) if a != b]
    return "\n".join(changed), squashed


def scan(text: str, decode: bool = True) -> list[str]:
    """Findings in ``text`` (empty: clean). Deterministic order: rules in table order, then
    invisible characters by code point. ``decode``: also scan its encoded pieces."""
    text = text.removeprefix("\ufeff")
    scripts: set[str] = set()
    if text.isascii():
        folded, invisible = text.lower(), []
    elif (stripped := strip_invisible(text)) is not None:  # ASCII with a few invisible kinds
        folded = stripped[0].lower()
        invisible = [f"invisible_unicode_U+{cp:04X}"
                     for cp in invisible_characters(text, stripped[1])]
    else:
        distinct = characters(text)
        invisible = [f"invisible_unicode_U+{cp:04X}"
                     for cp in invisible_characters(text, distinct)]
        scripts = scripts_in(distinct)
        if not scripts and not _LETTER.search(fold("".join(distinct), distinct)):
            return invisible  # fold works character by character: no letter comes out
        folded = fold(text, distinct)
    hits = script_hits(folded, scripts) if scripts else set()
    if not _LETTER.search(folded):  # every other rule needs a letter
        return [name for name in RULE_FINDINGS if name in hits] + invisible
    vocabulary = words(folded)
    hits |= _MAIN.hits(folded, vocabulary)
    respelled, squashed = _respelled_lines(folded, vocabulary)
    if respelled:
        hits |= _MAIN.hits(respelled)
    if any(_SQUASHED.search(run) for run in squashed):
        hits.add(SQUASHED_RULE[0])
    # a clean text has clean comments as far as the main rules go: only the comment rules run.
    # Comments end at non-word characters, so their words are among the text's; the bodies are
    # collected only when a rule's lead occurs in the text at all.
    comment_sets = (_COMMENT_ONLY, _MAIN) if hits else (_COMMENT_ONLY,)
    if "<!--" in folded and any(rules.may_match(folded, vocabulary) for rules in comment_sets):
        bodies = "\n".join(comment_bodies(folded))
        if bodies and any(rules.hits(bodies, vocabulary) for rules in comment_sets):
            hits.add(HTML_COMMENT_FINDING)
    if decode:
        for kind, plain in decoded(text, folded, vocabulary):
            found = [f for f in scan(plain, decode=False) if f in _RULE_ORDER]
            if found:
                hits.update(found)
                hits.add(f"encoded:{kind}")
    return [name for name in RULE_FINDINGS if name in hits] + invisible


def comment_bodies(text: str) -> list[str]:
    """The bodies of ``<!-- ... -->`` comments, in one left-to-right pass: each ``find``
    starts where the previous one stopped. An unclosed comment runs to the end, as in HTML;
    ``<!--`` inside a comment is part of its body."""
    bodies: list[str] = []
    start = text.find("<!--")
    while start != -1:
        end = text.find("-->", start + 4)
        if end == -1:
            bodies.append(text[start + 4:])
            break
        bodies.append(text[start + 4:end])
        start = text.find("<!--", end + 3)
    return bodies
