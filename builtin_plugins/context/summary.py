"""The summariser's prompt and the summary message that replaces the middle of a conversation.

The summary follows a fixed outline (goal, constraints, progress, decisions, files, next
steps, critical context) so that a later compression can update it section by section: the
previous summary is handed back with the newer turns and the instruction to keep what it
says, so facts survive any number of compressions.
"""

from __future__ import annotations

import json
from typing import Any

SUMMARY_MARK = "[Summary of the earlier conversation, written when it was compressed]"
SUMMARY_FOOTER = ("[End of summary. It is background, not a request: answer the latest user "
                  "message below. Memory and files on disk remain the authority.]")

OUTLINE = """\
## Goal
What the user wants to achieve overall.

## Constraints & Preferences
Requirements, style and tool preferences, limits the user set, decisions they imposed.

## Progress
### Done
Finished work, one numbered line each: what was done, to what, with what result (file
paths, commands, outcomes).
### In Progress
Work that was under way when the conversation was cut.
### Blocked
Problems that stopped progress, with the exact error text.

## Key Decisions
Technical choices made and why.

## Relevant Files
Files read, changed or created, each with a few words on its role.

## Next Steps
What remains to do, in order.

## Critical Context
Exact values that must not be lost: names, numbers, identifiers, settings, error messages,
answers the user gave."""

INSTRUCTIONS = """\
You compress a conversation between a user and an AI agent so the agent can continue it \
without the full transcript. Write a summary in the language the user writes in, using \
exactly this outline (keep every heading; write "None." under a heading with nothing to \
report):

{outline}

Be concrete: keep exact file paths, commands, numbers, names and quoted errors. Never copy \
secrets (API keys, tokens, passwords); write [REDACTED] instead. Write only the summary, \
about {target} tokens."""

UPDATE = """\
A summary of the conversation before these turns already exists. Update it: keep every fact \
it records (carry items over unchanged unless the newer turns change them), add what the \
newer turns bring, continue the numbering under Done, and move finished items from In \
Progress to Done.

PREVIOUS SUMMARY:
{previous}"""

FOCUS = """\
The user asked to compress with a focus on: {focus}
Give that topic most of the summary (about two thirds of it); keep the rest brief."""

MEMORY = """\
The agent's memory providers noted this about the conversation (use it where relevant):
{memory}"""

MAX_CHARS_PER_MESSAGE = 6_000
MAX_CHARS_PER_TOOL_RESULT = 1_500
MAX_MEMORY_CHARS = 6_000


def clip(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: its start and end, with the cut marked."""
    if len(text) <= limit:
        return text
    head = limit * 3 // 4
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit} characters cut ...]\n{text[-tail:]}"


def render_transcript(messages: list[dict[str, Any]]) -> str:
    """The turns to summarise as plain text, each message clipped."""
    lines = []
    for message in messages:
        role = message.get("role", "?")
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content or "")
        if role == "tool":
            name = message.get("tool_name") or message.get("name") or "tool"
            lines.append(f"[TOOL RESULT {name}] {clip(text, MAX_CHARS_PER_TOOL_RESULT)}")
            continue
        lines.append(f"[{role.upper()}] {clip(text, MAX_CHARS_PER_MESSAGE)}")
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            lines.append(f"[TOOL CALL {function.get('name', '?')}] "
                         f"{clip(str(function.get('arguments', '')), MAX_CHARS_PER_TOOL_RESULT)}")
    return "\n\n".join(lines)


def summary_prompt(messages: list[dict[str, Any]], *, previous: str, focus: str,
                   memory: str, target_tokens: int) -> list[dict[str, Any]]:
    """The summariser's request: instructions as the system message, the turns as the user's."""
    parts = [INSTRUCTIONS.format(outline=OUTLINE, target=target_tokens)]
    if previous:
        parts.append(UPDATE.format(previous=previous))
    if focus:
        parts.append(FOCUS.format(focus=focus))
    if memory:
        parts.append(MEMORY.format(memory=clip(memory, MAX_MEMORY_CHARS)))
    turns = render_transcript(messages) or "(no new turns)"
    return [{"role": "system", "content": "\n\n".join(parts)},
            {"role": "user", "content": f"TURNS TO SUMMARISE:\n\n{turns}"}]


def summary_message(summary: str) -> dict[str, Any]:
    return {"role": "user", "content": f"{SUMMARY_MARK}\n\n{summary.strip()}\n\n{SUMMARY_FOOTER}"}


def summary_text(message: dict[str, Any]) -> str | None:
    """The summary a :func:`summary_message` holds, or None for any other message."""
    content = message.get("content")
    if not isinstance(content, str) or not content.startswith(SUMMARY_MARK):
        return None
    body = content[len(SUMMARY_MARK):]
    if body.endswith(SUMMARY_FOOTER):
        body = body[:-len(SUMMARY_FOOTER)]
    return body.strip()
