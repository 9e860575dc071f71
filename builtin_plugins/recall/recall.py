"""session_search's recall stage, through the session-store slot's interface only: full-text
hits outside the current conversation's lineage, grouped by session (best hit first), the top
sessions' transcripts cut around the matches. No model is called here; the benchmark
``bench_session_search.py`` measures exactly this stage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hermes_agent.api import SessionStore

from .excerpt import excerpt, transcript

HITS = 60  # messages recalled per search, before grouping by session
SNIPPETS = 3  # snippets kept per session (the fallback when there is no summary)


@dataclass
class Recalled:
    """One past session that matched, ready to summarise."""

    session_id: str
    title: str | None
    source: str
    started_at: float | None
    matches: int  # recalled messages of this session
    snippets: list[str] = field(default_factory=list)
    text: str = ""  # the transcript, cut around the matches
    untrusted: str | None = None  # the source that tainted the session (None: all trusted)

    def header(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "title": self.title, "source": self.source,
                "started": when(self.started_at), "matches": self.matches}


def when(ts: float | None) -> str | None:
    """A local ``YYYY-MM-DD HH:MM`` for a Unix time (what the model shows the user)."""
    return None if ts is None else datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def lineage(store: SessionStore, session_id: str) -> set[str]:
    """The current conversation's whole lineage: its root ancestor and every session below the
    root (compression continuations and delegated subagents), the session itself included."""
    if not session_id:
        return set()
    ancestors = store.get_ancestors(session_id)
    root = ancestors[-1]["id"] if ancestors else session_id
    return {session_id, root, *(a["id"] for a in ancestors),
            *(d["id"] for d in store.get_descendants(root))}


def recall(store: SessionStore, query: str, *, current_session: str, roles: list[str] | None,
           limit: int, window_chars: int) -> list[Recalled]:
    """The ``limit`` best-matching past sessions, outside ``current_session``'s lineage."""
    excluded = lineage(store, current_session)
    hits = store.search_messages(query, role_filter=roles, limit=HITS,
                                 exclude_sessions=sorted(excluded) or None)
    groups: dict[str, list[dict[str, Any]]] = {}
    for hit in hits:  # best first, so a session ranks by its best message
        if hit["session_id"] not in excluded:
            groups.setdefault(hit["session_id"], []).append(hit)
    found = []
    for session_id, group in list(groups.items())[:limit]:
        session = store.get_session(session_id) or {}
        messages = store.get_messages_as_conversation(session_id)
        text = transcript(messages)
        found.append(Recalled(
            session_id=session_id, title=session.get("title"),
            source=session.get("source") or group[0].get("source") or "",
            started_at=session.get("started_at") or group[0].get("session_started"),
            matches=len(group), snippets=[h["snippet"] for h in group[:SNIPPETS]],
            text=excerpt(text, query, window_chars), untrusted=tainted_by(messages)))
    return found


def tainted_by(messages: list[dict[str, Any]]) -> str | None:
    """The source of a session's first untrusted message: from there on everything in it,
    the model's own answers included, may carry someone else's words."""
    for message in messages:
        mark = message.get("provenance")
        if isinstance(mark, dict) and mark.get("trust") == "untrusted":
            return str(mark.get("source") or "unknown")
    return None


def recent(store: SessionStore, *, current_session: str, limit: int) -> list[dict[str, Any]]:
    """The most recent conversations outside the current lineage: title, times, first words."""
    excluded = lineage(store, current_session)
    rows = store.list_sessions_rich(limit=limit + len(excluded))
    out = []
    for row in rows:
        if row["id"] in excluded or set(row.get("lineage") or ()) & excluded:
            continue
        last = row.get("last_active")
        out.append({"session_id": row["id"], "title": row.get("title"),
                    "source": row.get("source"), "started": when(row.get("started_at")),
                    "last_active": when(last) if last else None,
                    "messages": row.get("message_count"), "preview": row.get("preview", "")})
        if len(out) == limit:
            break
    return out
