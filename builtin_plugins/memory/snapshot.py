"""The frozen snapshots: the text of MEMORY.md and USER.md as the system prompt shows it.

A layer function runs once, when a session's system prompt is built; the agent then freezes
that prompt, so writes made during the session appear from the next session on.
"""

from __future__ import annotations

from .store import MemoryFile, usage

RULE = "═" * 46


def render(store: MemoryFile) -> str | None:
    """The snapshot block of ``store`` (None: the file is empty), or a notice when the file is
    unusable (its text is then left out)."""
    state = store.read()
    title = store.target.title
    if state.problem:
        return f"{title} [unavailable]\n{RULE}\n[NOTICE: {state.problem}]"
    if not state.entries:
        return None
    header = f"{title} [{usage(state.used, store.target.limit)}]"
    return f"{RULE}\n{header}\n{RULE}\n" + "\n§\n".join(state.entries)
