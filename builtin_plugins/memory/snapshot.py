"""The frozen snapshots: the text of MEMORY.md and USER.md as the system prompt shows it.

A layer function runs once, when a session's system prompt is built; the agent then freezes
that prompt, so writes made during the session appear from the next session on.

The text is scanned for prompt injection here too, entry by entry and as a whole: the memory
tool checks what it writes, but a file edited by other means (a hand edit, another program, a
version before the whole-file check) would otherwise reach every prompt unchecked.
"""

from __future__ import annotations

from collections.abc import Callable

from .store import MemoryFile, usage

RULE = "═" * 46


def render(store: MemoryFile, scan: Callable[[str], list[str]] | None = None) -> str | None:
    """The snapshot block of ``store`` (None: the file is empty), or a notice when the file is
    unusable or (with ``scan``) holds text that looks like a prompt injection (its text is
    then left out)."""
    state = store.read()
    title = store.target.title
    if state.problem:
        return f"{title} [unavailable]\n{RULE}\n[NOTICE: {state.problem}]"
    if not state.entries:
        return None
    if scan is not None:
        from .tool import joined_findings

        findings = sorted({f for e in state.entries for f in scan(e)}
                          | set(joined_findings(state.entries, scan)))
        if findings:
            return (f"{title} [unavailable]\n{RULE}\n[NOTICE: {store.path} holds text that "
                    f"looks like a prompt injection ({', '.join(findings)}), so it is left out "
                    f"of the prompt. The user can review it with `hermes memory edit "
                    f"{store.target.name}`.]")
    header = f"{title} [{usage(state.used, store.target.limit)}]"
    return f"{RULE}\n{header}\n{RULE}\n" + "\n§\n".join(state.entries)
