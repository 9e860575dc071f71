"""The ``memory`` tool: add, replace or remove an entry of MEMORY.md or USER.md.

Written content is scanned for prompt injection first (it reaches every later system prompt),
alone, with the file's other entries, and with the other memory file's entries in the order
the prompt shows them (MEMORY.md, then USER.md).
``replace`` and ``remove`` find the entry by a substring that must match exactly one entry.
A change past the file's limit is refused with the current entries and usage, so the model can
consolidate. Results show the live state; the system prompt keeps the session's snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_agent.api import tool_error
from hermes_agent.kits.secret_text import find_secret

from .store import MemoryFile, State, join, usage

ACTIONS = ("add", "replace", "remove")

#: ``scan(text) -> findings`` (empty: clean).
Scanner = Callable[[str], list[str]]


@dataclass
class Outcome:
    """What a successful call changed, for the result and the ``on_memory_write`` hook."""

    action: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    changed: bool = True


class Refused(Exception):
    """A call that changes nothing; its message is the tool's error text."""


def listing(entries: tuple[str, ...] | list[str]) -> str:
    if not entries:
        return "(no entries)"
    return "\n".join(f"{n}. {entry}" for n, entry in enumerate(entries, start=1))


def _text(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    return value.strip() if isinstance(value, str) else ""


def _check_content(content: str, scan: Scanner, name: str) -> None:
    if not content:
        raise Refused("'content' is required for add and replace (the entry's text).")
    if any(line.strip() == "§" for line in content.splitlines()):
        raise Refused("'content' may not contain a line holding only '§' (it separates "
                      "entries); save one entry per call.")
    if (kind := find_secret(content)) is not None:
        raise Refused(secret_refusal(kind, name))
    findings = scan(content)
    if findings:
        raise Refused(f"Refused: the content looks like a prompt injection ({', '.join(findings)})"
                      f" and would reach every later system prompt. Nothing was saved to "
                      f"{name}; rephrase it as a plain fact.")


def secret_refusal(kind: str, name: str) -> str:
    """Why an entry holding ``kind`` of secret is not saved to ``name``, and what to do."""
    return (f"Refused: the content looks like it holds {kind}. {name} is shown in every later "
            f"system prompt, so secrets are not saved there; nothing was saved. Save where "
            f"the secret is kept instead (e.g. 'the deploy token is in $HERMES_HOME/.env as "
            f"DEPLOY_TOKEN'); the user stores a key with `hermes config set NAME VALUE`.")


def _unique(entries: list[str], old_text: str, action: str) -> int:
    if not old_text:
        raise Refused(f"'old_text' is required for {action}: a short piece of text that occurs "
                      f"in exactly one entry.")
    hits = [i for i, entry in enumerate(entries) if old_text in entry]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise Refused(f"No entry contains {old_text!r}. Current entries:\n{listing(entries)}")
    raise Refused(f"{old_text!r} occurs in {len(hits)} entries; use text that occurs in exactly "
                  f"one of them. Candidates:\n{listing([entries[i] for i in hits])}")


def joined_findings(entries: tuple[str, ...] | list[str], scan: Scanner) -> list[str]:
    """Findings for the entries read as one text: the prompt shows them one after the other,
    so a phrase split over several entries (each clean alone) is still an injection."""
    return scan(" ".join(entries)) if len(entries) > 1 else []


def _check_together(entries: list[str], outcome: "Outcome", scan: Scanner, name: str) -> None:
    findings = joined_findings(entries, scan)
    if findings:
        raise Refused(f"Refused: with the other entries of {name}, this entry reads as a prompt "
                      f"injection ({', '.join(findings)}); the system prompt shows them one "
                      f"after the other. Nothing was saved. Save plain facts, each complete in "
                      f"itself, or remove the entry it continues.\nCurrent entries:\n"
                      f"{listing([e for e in entries if e != outcome.content])}")


def _check_across(entries: list[str], store: MemoryFile, files: Sequence[MemoryFile],
                  scan: Scanner) -> None:
    """Refuse ``entries`` of ``store`` when, with the other ``files`` (all in prompt order),
    they read as a prompt injection that neither side holds alone: an instruction split
    between the end of one file and the start of the next."""
    together: list[str] = []
    others: list[str] = []
    for each in files:
        if each.path == store.path:
            together += entries
            continue
        state = each.read()
        if not state.problem:  # an unusable file is not shown
            together += state.entries
            others += state.entries
    if not others:
        return
    findings = sorted(set(joined_findings(together, scan)) - set(scan(" ".join(others))))
    if findings:
        order = ", then ".join(each.target.filename for each in files)
        other = ", ".join(each.target.filename for each in files if each.path != store.path)
        raise Refused(f"Refused: with the entries of {other}, this entry reads as a prompt "
                      f"injection ({', '.join(findings)}); the system prompt shows the files "
                      f"one after the other ({order}). Nothing was saved. Save plain facts, "
                      f"each complete in itself, or remove the entry it continues.\nEntries of "
                      f"{other}:\n{listing(others)}")


def change(entries: list[str], action: str, args: dict[str, Any], scan: Scanner,
           name: str) -> tuple[list[str], Outcome]:
    """The new entries after ``action`` and what it did (raises :class:`Refused`)."""
    new, outcome = _change(entries, action, args, scan, name)
    if outcome.changed and action != "remove":
        _check_together(new, outcome, scan, name)
    return new, outcome


def _change(entries: list[str], action: str, args: dict[str, Any], scan: Scanner,
            name: str) -> tuple[list[str], Outcome]:
    """The new entries after ``action`` and what it did (raises :class:`Refused`)."""
    if action == "add":
        content = _text(args, "content")
        _check_content(content, scan, name)
        if content in entries:
            return entries, Outcome("add", content, changed=False)
        return [*entries, content], Outcome("add", content)
    old_text = _text(args, "old_text")
    index = _unique(entries, old_text, action)
    old = entries[index]
    if action == "remove":
        return entries[:index] + entries[index + 1:], Outcome("remove", old,
                                                               {"old_text": old_text})
    content = _text(args, "content")
    _check_content(content, scan, name)
    new = [*entries]
    new[index] = content
    return new, Outcome("replace", content, {"old_text": old_text, "replaced": old})


def run(store: MemoryFile, args: dict[str, Any], scan: Scanner,
        files: Sequence[MemoryFile] = ()) -> tuple[str, Outcome | None]:
    """Apply one tool call to ``store``: the JSON result and the outcome (None: refused).
    ``files``: all the memory files in prompt order, ``store`` among them, when the prompt
    shows them together."""
    action = _text(args, "action")
    name = store.target.filename
    if action not in ACTIONS:
        return tool_error(f"'action' must be one of {', '.join(ACTIONS)}."), None
    limit = store.target.limit
    try:
        with store.locked():
            state = store.read()  # re-read under the lock: another process may have written
            if state.problem:
                raise Refused(state.problem)
            entries, outcome = change(list(state.entries), action, args, scan, name)
            if outcome.changed and action != "remove":
                _check_across(entries, store, files, scan)
            used = len(join(entries))
            if used > limit:
                raise Refused(
                    f"{name} would hold {used:,} characters, over its limit of {limit:,}. "
                    f"Nothing was saved. Consolidate first: replace entries with shorter ones "
                    f"or remove what no longer matters, then try again.\n"
                    f"Current entries [{usage(state.used, limit)}]:\n{listing(state.entries)}")
            if outcome.changed:
                store.write(entries)
    except Refused as refused:
        return tool_error(str(refused)), None
    except OSError as exc:
        return tool_error(f"Could not write {store.path}: {exc}. Nothing was saved."), None
    message = {"add": "Entry added.", "replace": "Entry replaced.",
               "remove": "Entry removed."}[action]
    if not outcome.changed:
        message = "That entry is already saved; nothing changed."
    return live_result(store.target.name, State(tuple(entries)), limit, message), outcome


#: Above this share of the limit, results suggest consolidating before the file is full.
CONSOLIDATE_AT = 0.8


def live_result(target: str, state: State, limit: int, message: str) -> str:
    note = "Saved to disk; the system prompt shows it from the next session on."
    if state.used > CONSOLIDATE_AT * limit:
        note += (" This file is over 80% full: merge related entries and drop stale ones "
                 "(replace/remove) before adding more.")
    return json.dumps({"success": True, "target": target, "message": message,
                       "usage": usage(state.used, limit), "entries": list(state.entries),
                       "note": note}, ensure_ascii=False)
