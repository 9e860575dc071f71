"""Messages as the loop keeps them and as it sends them.

The stored history uses the OpenAI chat format. :func:`api_messages` builds the per-call copy:
the frozen system prompt first, then the history with the turn's plugin context appended to
the current user message only, and role alternation repaired so that a history cut short
(an interrupt, a crash, a provider failure) is still a valid request.
"""

from __future__ import annotations

import json
from typing import Any

# Keys of a stored message that belong in a request (the transports drop the rest).
_SEND_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name", "reasoning_details")
MISSING_RESULT = "[No result was recorded for this tool call (the run was interrupted).]"


def clean(message: dict[str, Any]) -> dict[str, Any]:
    """A stored message reduced to the request keys (``tool_name`` kept for Anthropic/Responses)."""
    out = {k: message[k] for k in _SEND_KEYS if message.get(k) is not None or k == "content"}
    if message.get("role") == "tool" and message.get("tool_name"):
        out["tool_name"] = message["tool_name"]
    if not out.get("tool_calls"):
        out.pop("tool_calls", None)
    return out


def repair(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Valid alternation for a request: every tool call answered (missing results become a
    stub), orphan tool results dropped, consecutive user messages merged."""
    out: list[dict[str, Any]] = []
    pending: list[str] = []  # tool_call ids still waiting for a result

    def close_pending() -> None:
        for call_id in pending:
            out.append({"role": "tool", "tool_call_id": call_id, "content": MISSING_RESULT})
        pending.clear()

    for message in messages:
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in pending:
                pending.remove(call_id)
                out.append(message)
            continue  # orphan result: its call is not in the history
        close_pending()
        if role == "user" and out and out[-1].get("role") == "user":
            previous = out[-1]
            out[-1] = {**previous, "content": f"{_text(previous)}\n\n{_text(message)}"}
            continue
        out.append(message)
        if role == "assistant":
            pending.extend(c.get("id") for c in message.get("tool_calls") or () if c.get("id"))
    close_pending()
    return out


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return json.dumps(content) if content is not None else ""


def api_messages(system_prompt: str, history: list[dict[str, Any]], current: int | None,
                 context: str, ephemeral: str = "") -> list[dict[str, Any]]:
    """The request messages. ``current`` is the index of this turn's user message in
    ``history``; ``context`` (pre_llm_call) is appended to it in the copy only."""
    system = system_prompt + (f"\n\n{ephemeral}" if ephemeral else "")
    out = [{"role": "system", "content": system}]
    for index, message in enumerate(history):
        copy = clean(message)
        if index == current and context:
            copy["content"] = f"{_text(copy)}\n\n{context}"
        out.append(copy)
    return [out[0], *repair(out[1:])]


def last_user_index(history: list[dict[str, Any]]) -> int | None:
    for index in range(len(history) - 1, -1, -1):
        if history[index].get("role") == "user":
            return index
    return None
