"""The search query language (shared by every session store: ``hermes_agent.api``) under the
names this plugin's modules use. Syntax: words (all must match), ``"exact phrases"``, ``OR``,
``NOT``, ``prefix*``; no input raises; cost is bounded (MAX_QUERY characters, MAX_TERMS terms,
MAX_PREFIX_TERMS prefixes of MIN_PREFIX or more characters)."""

from __future__ import annotations

from hermes_agent.kits.sql.query import (
    SEARCH_CJK as CJK, SEARCH_MAX_PREFIX_TERMS as MAX_PREFIX_TERMS, SEARCH_MAX_QUERY as MAX_QUERY,
    SEARCH_MAX_TERMS as MAX_TERMS, SEARCH_MIN_PREFIX as MIN_PREFIX, SearchQuery as Query,
    SearchTerm as Term, manual_snippet, parse_search_query as parse, sanitize_fts5_query,
)

__all__ = ["CJK", "MAX_PREFIX_TERMS", "MAX_QUERY", "MAX_TERMS", "MIN_PREFIX", "Query", "Term",
           "manual_snippet", "parse", "sanitize_fts5_query"]
