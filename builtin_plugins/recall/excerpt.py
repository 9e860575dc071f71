"""A stored conversation as readable text, and the part of it worth sending to the summariser.

:func:`transcript` renders messages one per block (``[USER]``, ``[ASSISTANT]``, tool calls with
their arguments, ``[TOOL name]`` results). :func:`excerpt` cuts a long transcript to a window
around the query's matches: the positions of the full phrase if it occurs, else of places
where all the terms occur close together, else of each term; the window covering the most of
them wins, starting a quarter of its width before the first position it covers.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from typing import Any

PROXIMITY_CHARS = 200  # terms this close together count as one co-occurrence
MAX_POSITIONS = 2_000  # occurrences looked at per term (a very common word needs no more)
_OPERATORS = {"AND", "OR", "NOT"}
_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
_EDGES = "()[]{}:^*+-.,;!?'\""


@dataclass(frozen=True)
class QueryTerms:
    phrases: tuple[str, ...]  # lower-cased; a bare multi-word query is one phrase too
    words: tuple[str, ...]  # lower-cased, without operators, negated terms or prefix stars

    @property
    def empty(self) -> bool:
        return not self.phrases and not self.words


def query_terms(query: str) -> QueryTerms:
    """The positive terms of a search query (FTS syntax: quotes, AND/OR/NOT, prefix*)."""
    phrases: list[str] = []
    words: list[str] = []
    bare: list[str] = []
    negate = False
    for match in _TOKEN.finditer(query):
        quoted, token = match.group(1), match.group(2)
        if token in _OPERATORS:
            negate = token == "NOT"
            continue
        if negate:
            negate = False
            continue
        if quoted is not None:
            text = " ".join(quoted.lower().split())
            if text:
                phrases.append(text)
                words.extend(text.split())
            continue
        word = token.strip(_EDGES).lower()
        if word:
            words.append(word)
            bare.append(word)
    if not phrases and len(bare) > 1:
        phrases.append(" ".join(bare))
    return QueryTerms(tuple(dict.fromkeys(phrases)), tuple(dict.fromkeys(words)))


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # multimodal parts: their text
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p)
                         for p in content if not isinstance(p, dict) or "text" in p)
    return str(content)


def _call_text(call: Any) -> str:
    function = call.get("function", call) if isinstance(call, dict) else {}
    name = function.get("name", "?") if isinstance(function, dict) else "?"
    args = function.get("arguments", "") if isinstance(function, dict) else ""
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False)
    else:
        try:  # arguments the model sent as escaped JSON are shown as written
            args = json.dumps(json.loads(args), ensure_ascii=False)
        except ValueError:
            pass
    return f"[ASSISTANT called {name}] {args}"


def transcript(messages: list[dict[str, Any]]) -> str:
    """The conversation as text, one block per message (system messages left out)."""
    blocks = []
    for message in messages:
        role = message.get("role")
        text = _text(message.get("content")).strip()
        if role == "user":
            blocks.append(f"[USER] {text}")
        elif role == "assistant":
            if text:
                blocks.append(f"[ASSISTANT] {text}")
            blocks.extend(_call_text(c) for c in message.get("tool_calls") or ())
        elif role == "tool":
            blocks.append(f"[TOOL {message.get('tool_name') or 'result'}] {text}")
    return "\n\n".join(blocks)


def _positions(lower: str, term: str) -> list[int]:
    found, at = [], lower.find(term)
    while at >= 0 and len(found) < MAX_POSITIONS:
        found.append(at)
        at = lower.find(term, at + 1)
    return found


def match_positions(text: str, terms: QueryTerms) -> list[int]:
    """Where the query matches ``text``, best evidence first: the full phrase; else spots
    where every word occurs within PROXIMITY_CHARS; else every word's occurrences."""
    lower = text.lower()
    phrase_hits = sorted(p for phrase in terms.phrases for p in _positions(lower, phrase))
    if phrase_hits:
        return phrase_hits
    by_word = [_positions(lower, w) for w in terms.words]
    by_word = [hits for hits in by_word if hits]
    if not by_word:
        return []
    if len(by_word) == len(terms.words) and len(by_word) > 1:
        rarest = min(by_word, key=len)
        near = [p for p in rarest if all(_has_near(hits, p) for hits in by_word)]
        if near:
            return near
    return sorted(p for hits in by_word for p in hits)


def _has_near(sorted_hits: list[int], at: int) -> bool:
    i = bisect.bisect_left(sorted_hits, at - PROXIMITY_CHARS)
    return i < len(sorted_hits) and sorted_hits[i] <= at + PROXIMITY_CHARS


def excerpt(text: str, query: str, window: int) -> str:
    """``text`` cut to ``window`` characters around the query's matches (25% before the first
    covered match, 75% after), with a note at each cut; the whole text when it fits."""
    if len(text) <= window:
        return text
    positions = match_positions(text, query_terms(query))
    start = 0
    if positions:
        before = window // 4
        best, best_count = positions[0], 0
        for i, at in enumerate(positions):  # windows anchored at each match
            count = bisect.bisect_left(positions, at - before + window, lo=i) - i
            if count > best_count:
                best, best_count = at, count
        start = max(0, min(best - before, len(text) - window))
    end = start + window
    head = f"[... {start} earlier characters left out ...]\n" if start else ""
    tail = f"\n[... {len(text) - end} later characters left out ...]" if end < len(text) else ""
    return head + text[start:end] + tail
