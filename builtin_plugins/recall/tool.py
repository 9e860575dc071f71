"""The ``session_search`` tool handler: arguments, the two modes, the JSON result.

An empty query lists recent conversations (a database read, no model). A query recalls past
sessions (:mod:`.recall`) and asks the summariser about each (:mod:`.summarise`); without one
(``session_search.summarize: false``, no models service, a failure or the time budget spent)
a session's result carries its matching snippets instead of a summary.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from hermes_agent.api import (
    SessionStoreError,
    ToolCallContext,
    session_store,
    tool_error,
    tool_result,
)
from hermes_agent.api.tools import untrusted_result

from .config_schema import SessionSearchSection
from .recall import Recalled, recall, recent
from .schema import DEFAULT_LIMIT, MAX_LIMIT, ROLES
from .summarise import model_summariser, summarise_all

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.recall")


def settings(kernel: Kernel) -> SessionSearchSection:
    raw = kernel.config.get("session_search") or {}
    try:
        return SessionSearchSection.model_validate(raw)
    except ValueError:  # `hermes config` reports the bad key; the tool runs on defaults
        return SessionSearchSection()


def _limit(value: Any) -> int | str:
    if value is None or value == "":
        return DEFAULT_LIMIT
    try:
        number = int(value)
    except (TypeError, ValueError):
        return f"'limit' must be a whole number from 1 to {MAX_LIMIT}, not {value!r}."
    return max(1, min(MAX_LIMIT, number))


def _roles(value: Any) -> list[str] | None | str:
    if value is None or value == "" or value == []:
        return None
    names = value.split(",") if isinstance(value, str) else list(value)
    roles = [str(n).strip().lower() for n in names if str(n).strip()]
    bad = [r for r in roles if r not in ROLES]
    if bad:
        return (f"'role_filter' takes {', '.join(ROLES)} (comma-separated); "
                f"{', '.join(repr(b) for b in bad)} is not one of them.")
    return roles or None


class SessionSearch:
    """The handler, bound to one kernel."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel

    def __call__(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        query = str(args.get("query") or "").strip()
        limit, roles = _limit(args.get("limit")), _roles(args.get("role_filter"))
        if isinstance(limit, str):
            return tool_error(limit)
        if isinstance(roles, str):
            return tool_error(roles)
        try:
            store = session_store(self.kernel)
            if not query:
                sessions = recent(store, current_session=ctx.session_id, limit=limit)
                return tool_result(mode="recent", count=len(sessions), results=sessions)
            config = settings(self.kernel)
            found = recall(store, query, current_session=ctx.session_id, roles=roles,
                           limit=limit, window_chars=config.window_chars)
        except SessionStoreError as exc:
            return tool_error(f"session search failed: {exc}")
        if not found:
            return tool_result(mode="search", query=query, count=0, results=[],
                               note="No earlier conversation matches. Try other or fewer "
                                    "words, or an empty query to list recent conversations.")
        summaries, failures, note = self._summaries(query, found, config, ctx.session_id)
        results = []
        for item in found:
            entry = item.header()
            if item.session_id in summaries:
                entry["summary"] = summaries[item.session_id]
            else:
                entry["snippets"] = item.snippets
            results.append(entry)
        if failures and not note:
            note = (f"{len(failures)} of {len(found)} sessions could not be summarised "
                    f"({next(iter(failures.values()))}); their matching snippets are shown.")
        data: dict[str, Any] = {"mode": "search", "query": query, "count": len(results),
                                "results": results}
        if note:
            data["note"] = note
        tainted = list(dict.fromkeys(item.untrusted for item in found if item.untrusted))
        if tainted:  # quotes (and summaries) of sessions that read untrusted text
            return untrusted_result(tool_result(data), f"session_search ({', '.join(tainted)})")
        return tool_result(data)

    def _summaries(self, query: str, found: list[Recalled], config: SessionSearchSection,
                   session_id: str) -> tuple[dict[str, str], dict[str, str], str]:
        if not config.summarize:
            return {}, {}, "Summaries are off (session_search.summarize); snippets are shown."
        try:
            summariser = model_summariser(self.kernel, query, session_id)
        except Exception as exc:  # no models service: the snippets are the answer
            log.info("session_search: no summariser (%s); returning snippets", exc)
            return {}, {}, f"No summariser is available ({exc}); snippets are shown."
        summaries, failures = summarise_all(found, summariser,
                                            concurrency=config.max_concurrency,
                                            budget_s=config.timeout)
        return summaries, failures, ""
