"""The frozen snapshots: the text of MEMORY.md and USER.md as the system prompt shows it.

A layer function runs once, when a session's system prompt is built; the agent then freezes
that prompt, so writes made during the session appear from the next session on.

The text is scanned for prompt injection here too: each entry, each file's entries as one
text, and both files' text as the prompt joins them (MEMORY.md's block, then USER.md's). The
memory tool checks what it writes, but a file edited by other means (a hand edit, another
program, a version before the whole-file check) would otherwise reach every prompt unchecked,
and an instruction split between the end of MEMORY.md and the start of USER.md is clean in
each file alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hermes_agent.api import LAYER_SEPARATOR
from hermes_agent.kits.secret_text import find_secret

from .store import MemoryFile, usage
from .tool import Scanner, joined_findings

RULE = "═" * 46


@dataclass(frozen=True)
class Snapshot:
    """One file's block (None: the file is empty) and the entries it shows (none when the
    block is a notice in their place)."""

    store: MemoryFile
    text: str | None
    entries: tuple[str, ...] = ()


def render(stores: Sequence[MemoryFile], scan: Scanner | None = None) -> list[str | None]:
    """The snapshot block of each of ``stores``, given in prompt order (None: the file is
    empty). A file that is unusable or (with ``scan``) holds text that looks like a prompt
    injection gets a notice instead of its text; so do all the files shown when their text
    reads as one only together."""
    snapshots = [_snapshot(store, scan) for store in stores]
    shown = [s for s in snapshots if s.entries]
    findings = _together(shown, scan) if scan is not None and len(shown) > 1 else []
    if not findings:
        return [s.text for s in snapshots]
    paths = " and ".join(str(s.store.path) for s in shown)
    edits = " and ".join(f"`hermes memory edit {s.store.target.name}`" for s in shown)
    notice = (f"{paths} hold text that, read one after the other as the prompt shows them, "
              f"looks like a prompt injection ({', '.join(findings)}), so they are all left "
              f"out of the prompt. The user can review them with {edits}.")
    return [_notice(s.store, notice) if s.entries else s.text for s in snapshots]


def _snapshot(store: MemoryFile, scan: Scanner | None) -> Snapshot:
    state = store.read()
    if state.problem:
        return Snapshot(store, _notice(store, state.problem))
    if not state.entries:
        return Snapshot(store, None)
    if scan is not None:
        findings = sorted({f for e in state.entries for f in scan(e)}
                          | set(joined_findings(state.entries, scan)))
        if findings:
            return Snapshot(store, _notice(
                store, f"{store.path} holds text that looks like a prompt injection "
                       f"({', '.join(findings)}), so it is left out of the prompt. The user can "
                       f"review it with `hermes memory edit {store.target.name}`."))
    header = f"{store.target.title} [{usage(state.used, store.target.limit)}]"
    entries = tuple(_without_secret(entry, store) for entry in state.entries)
    return Snapshot(store, f"{RULE}\n{header}\n{RULE}\n" + "\n§\n".join(entries), entries)


def _without_secret(entry: str, store: MemoryFile) -> str:
    """``entry``, or a note in its place when it holds a secret (saved before the memory tool
    refused them, or by a hand edit): the file keeps it, the prompt does not show it."""
    kind = find_secret(entry)
    if kind is None:
        return entry
    return (f"[an entry of {store.target.filename} is left out: it looks like it holds {kind}; "
            f"the user can remove it with `hermes memory edit {store.target.name}`]")


def _together(shown: list[Snapshot], scan: Scanner) -> list[str]:
    """Findings in the shown files' text exactly as the prompt joins it, and in all their
    entries read as one text (the rules do not see past the ``§`` lines and headers between
    entries that the model reads straight on)."""
    exact = LAYER_SEPARATOR.join(s.text or "" for s in shown)
    return sorted(set(scan(exact))
                  | set(joined_findings([e for s in shown for e in s.entries], scan)))


def _notice(store: MemoryFile, text: str) -> str:
    return f"{store.target.title} [unavailable]\n{RULE}\n[NOTICE: {text}]"
