"""``/branch``, ``/resume`` and ``/personality``: the chat's session commands."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from hermes_agent.kits.text import ellipsize, table

from .personalities import OFF, personalities

if TYPE_CHECKING:
    from .state import ChatState


def branch(state: ChatState, args: str) -> str:
    agent = state.agent
    old = agent.session_id
    new = agent.branch(args.strip() or None)
    title = agent.sessions.title(new)
    named = f" \"{title}\"" if title else ""
    return (f"Branched: now in session {new}{named}, a copy of {old} "
            f"({len(agent.history)} messages); `hermes --resume {old}` goes back.")


def resume(state: ChatState, args: str) -> str:
    agent = state.agent
    key = args.strip()
    if not key:
        return _recent(state)
    target = agent.sessions.resolve(key)
    if target is None:
        return f"No session {key!r}; /resume alone lists the recent ones."
    agent.switch_session(target)
    title = agent.sessions.title(agent.session_id)
    named = f" \"{title}\"" if title else ""
    return f"Resumed session {agent.session_id}{named}: {len(agent.history)} messages."


def _recent(state: ChatState, limit: int = 10) -> str:
    agent = state.agent
    rows = agent.sessions.store.list_sessions_rich(source=agent.platform, limit=limit + 1)
    rows = [r for r in rows if r.get("id") != agent.session_id][:limit]
    if not rows:
        return "No other sessions yet."
    lines = [(row.get("id", ""), ellipsize(row.get("title") or "", 30),
              _ago(row.get("last_active") or row.get("started_at")),
              ellipsize(" ".join(str(row.get("preview") or "").split()), 50)) for row in rows]
    return "\n".join(["Recent sessions (/resume ID or TITLE):",
                      *table(("ID", "TITLE", "ACTIVE", "FIRST MESSAGE"), lines, indent="  ")])


def _ago(when: float | None) -> str:
    if not when:
        return "-"
    seconds = max(0, time.time() - float(when))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def personality(state: ChatState, args: str) -> str:
    agent = state.agent
    known = personalities(state.kernel.config)
    name = args.strip().lower()
    if not name:
        current = state.personality or "none"
        rows = [(("* " if key == state.personality else "  ") + key, ellipsize(text, 70))
                for key, text in sorted(known.items())]
        return "\n".join([f"personality: {current} (/personality NAME sets one, "
                          "/personality none clears it)",
                          *table(("NAME", "ADDS TO THE SYSTEM PROMPT"), rows, indent="  ")])
    if name in OFF:
        agent.options.personality, state.personality = "", None
        return "Personality cleared."
    if name not in known:
        return (f"Unknown personality {name!r}; known: {', '.join(sorted(known))} "
                "(config.yaml agent.personalities adds more).")
    agent.options.personality, state.personality = known[name], name
    return f"Personality: {name} (for the rest of this chat)."
