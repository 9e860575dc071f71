"""The provider's tools: ``recall_facts``, ``remember_fact`` and ``forget_fact`` (bare function
schemas; handlers return JSON strings)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_agent.api import tool_error, tool_result

from .extract import problem
from .query import parse
from .store import FactStore, normalise

MAX_LIMIT = 50

SCHEMAS: list[dict[str, Any]] = [
    {"name": "recall_facts",
     "description": "Search the facts remembered about the user across sessions (local "
                    "memory). An empty query lists the most recently used facts.",
     "parameters": {"type": "object", "properties": {
         "query": {"type": "string", "description": "Words to look for (any language)."},
         "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                   "description": "How many facts to return (default: the configured top_k)."},
     }, "required": ["query"]}},
    {"name": "remember_fact",
     "description": "Store a durable fact about the user or their environment in local "
                    "memory (one short sentence; never secrets).",
     "parameters": {"type": "object", "properties": {
         "text": {"type": "string", "description": "The fact, e.g. 'The user deploys on Fly.io'."},
     }, "required": ["text"]}},
    {"name": "forget_fact",
     "description": "Delete a fact from local memory, by its id or by text that matches "
                    "exactly one fact.",
     "parameters": {"type": "object", "properties": {
         "id": {"type": "integer", "description": "The fact's id (from recall_facts)."},
         "text": {"type": "string", "description": "The fact's text, or a part of it that "
                                                   "occurs in one fact only."},
     }}},
]
NAMES = tuple(schema["name"] for schema in SCHEMAS)


class FactTools:
    """Tool handlers bound to a store; ``scan(text)`` returns injection findings (raises when
    the scan is unavailable); ``top_k`` and ``half_life_days`` come from the settings."""

    def __init__(self, store: FactStore, scan: Callable[[str], list[str]], *, top_k: int,
                 half_life_days: float, session_id: str = ""):
        self.store, self.scan = store, scan
        self.top_k, self.half_life_days, self.session_id = top_k, half_life_days, session_id

    def call(self, name: str, args: dict[str, Any]) -> str:
        handler = {"recall_facts": self.recall, "remember_fact": self.remember,
                   "forget_fact": self.forget}.get(name)
        if handler is None:
            return tool_error(f"local memory has no tool {name!r} (it has {', '.join(NAMES)})")
        return handler(args if isinstance(args, dict) else {})

    def recall(self, args: dict[str, Any]) -> str:
        try:
            limit = min(MAX_LIMIT, max(1, int(args.get("limit") or self.top_k)))
        except (TypeError, ValueError):
            return tool_error("'limit' must be a whole number from 1 to 50")
        query = str(args.get("query") or "").strip()
        if not query:
            facts = [(f, None) for f in self.store.recent(limit)]
        else:
            facts = self.store.search(parse(query), limit=limit,
                                      half_life_days=self.half_life_days)
            self.store.touch([f.id for f, _ in facts])
        rows = [{**fact.as_dict(), **({"score": round(score, 3)} if score is not None else {})}
                for fact, score in facts]
        return tool_result(facts=rows, count=len(rows))

    def remember(self, args: dict[str, Any]) -> str:
        text = str(args.get("text") or "").strip()
        why = problem(text)
        if why is None:
            try:
                findings = self.scan(text)
            except Exception as exc:
                return tool_error(f"Nothing was stored: the injection scan is unavailable ({exc}).")
            if findings:
                why = "it looks like a prompt injection (" + "; ".join(findings) + ")"
        if why is not None:
            return tool_error(f"Nothing was stored: {why}.")
        fact, new = self.store.add(text, session_id=self.session_id, origin="tool")
        return tool_result(stored=new, duplicate=not new, fact=fact.as_dict())

    def forget(self, args: dict[str, Any]) -> str:
        if args.get("id") not in (None, ""):
            try:
                fact_id = int(args["id"])
            except (TypeError, ValueError):
                return tool_error("'id' must be a fact id (a whole number)")
            fact = self.store.delete(fact_id)
            if fact is None:
                return tool_error(f"No fact has id {fact_id}.")
            return tool_result(forgotten=fact.as_dict())
        text = str(args.get("text") or "").strip()
        if not text:
            return tool_error("Give the fact's 'id' or a part of its 'text'.")
        candidates = self.store.containing(text, limit=MAX_LIMIT)
        exact = [f for f in candidates if normalise(f.text) == normalise(text)]
        if len(exact) == 1:
            candidates = exact
        if not candidates:
            return tool_error(f"No fact contains {text!r}.")
        if len(candidates) > 1:
            return tool_error(f"{len(candidates)} facts contain {text!r}; give the id of the "
                              "one to forget, or text that occurs in one fact only.",
                              candidates=[{"id": f.id, "text": f.text} for f in candidates])
        fact = self.store.delete(candidates[0].id)
        return tool_result(forgotten=fact.as_dict() if fact else {"id": candidates[0].id})
