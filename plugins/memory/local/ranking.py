"""How recalled facts are ordered: BM25 relevance blended with recency.

For the candidates of one query (the best :data:`CANDIDATES` of each index by BM25):

- ``relevance = bm25 / best_bm25``, in (0, 1]: FTS5's ``bm25()`` is negative, more negative
  is better, so each candidate's score is divided by the best score of its index. A fact
  found by two indexes (words and trigrams) keeps the higher value; a ``LIKE`` match
  (one- or two-character CJK) counts :data:`LIKE_RELEVANCE`.
- ``recency = 0.5 ** (age_days / half_life_days)``, in (0, 1], where the age runs from the
  fact's ``last_used_at`` (stored, restated or recalled): a fact loses half its recency
  every ``half_life_days`` (config, default 30).
- ``score = RELEVANCE_WEIGHT * relevance + RECENCY_WEIGHT * recency`` (0.8 and 0.2):
  relevance decides, recency breaks near-ties and lifts what is in use.
"""

from __future__ import annotations

from dataclasses import dataclass

CANDIDATES = 50
LIKE_RELEVANCE = 0.5
RELEVANCE_WEIGHT = 0.8
RECENCY_WEIGHT = 0.2
DAY = 86400.0


@dataclass(frozen=True)
class Candidate:
    """One fact found by an index: its id, raw ``bm25()`` (negative) and last use."""

    fact_id: int
    bm25: float
    last_used_at: float


def recency(last_used_at: float, now: float, half_life_days: float) -> float:
    age_days = max(0.0, now - last_used_at) / DAY
    return 0.5 ** (age_days / max(half_life_days, 1e-6))


def relevances(candidates: list[Candidate]) -> dict[int, float]:
    """``{fact_id: relevance}`` of one index's candidates (see the module docstring)."""
    if not candidates:
        return {}
    best = min(c.bm25 for c in candidates)
    if best >= 0:  # degenerate scores (e.g. a term in every fact): all equally relevant
        return {c.fact_id: 1.0 for c in candidates}
    return {c.fact_id: max(c.bm25, best) / best if c.bm25 < 0 else 0.0 for c in candidates}


def rank(groups: list[list[Candidate]], like_ids: dict[int, float], *, now: float,
         half_life_days: float, limit: int) -> list[tuple[int, float]]:
    """The best ``limit`` ``(fact_id, score)`` pairs, best first (ties: newer id first).
    ``like_ids`` maps ``LIKE`` matches to their ``last_used_at``."""
    relevance: dict[int, float] = {}
    last_used: dict[int, float] = {}
    for group in groups:
        for fact_id, value in relevances(group).items():
            relevance[fact_id] = max(relevance.get(fact_id, 0.0), value)
        last_used.update((c.fact_id, c.last_used_at) for c in group)
    for fact_id, used in like_ids.items():
        relevance[fact_id] = max(relevance.get(fact_id, 0.0), LIKE_RELEVANCE)
        last_used[fact_id] = used
    scored = [(fact_id, RELEVANCE_WEIGHT * value
               + RECENCY_WEIGHT * recency(last_used[fact_id], now, half_life_days))
              for fact_id, value in relevance.items()]
    scored.sort(key=lambda pair: (-pair[1], -pair[0]))
    return scored[:limit]
