"""Messages as the loop keeps them and as it sends them.

The stored history uses the OpenAI chat format. :func:`api_messages` builds the per-call copy:
the frozen system prompt first, then the history with the turn's plugin context appended to
the current user message only, and role alternation repaired so that a history cut short
(an interrupt, a crash, a provider failure) is still a valid request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hermes_agent.kits.images import content_text
from hermes_agent.kits.sql.values import clean_text

# Keys of a stored message that belong in a request (the transports drop the rest).
_SEND_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name", "reasoning_details")
MISSING_RESULT = "[No result was recorded for this tool call (the run was interrupted).]"


def repair_text(value: Any) -> Any:
    """``value`` with every string valid Unicode (a lone surrogate, which no UTF-8 request or
    store can encode, becomes U+FFFD; see ``clean_text``), lists and dicts walked."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [repair_text(item) for item in value]
    if isinstance(value, dict):
        return {key: repair_text(item) for key, item in value.items()}
    return value


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
            out[-1] = {**out[-1], "content": _joined(out[-1].get("content"),
                                                     message.get("content"))}
            continue
        out.append(message)
        if role == "assistant":
            pending.extend(c.get("id") for c in message.get("tool_calls") or () if c.get("id"))
    close_pending()
    return out


def _joined(first: Any, second: Any) -> Any:
    """Two user contents as one: text joined by a blank line, or parts (images) in order."""
    if isinstance(first, list) or isinstance(second, list):
        return [*_parts(first), *_parts(second)]
    return f"{_text({'content': first})}\n\n{_text({'content': second})}"


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return [dict(p) for p in content if isinstance(p, dict)]
    return [{"type": "text", "text": content}] if content else []


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return json.dumps(content) if content is not None else ""


def api_messages(system_prompt: str, history: list[dict[str, Any]],
                 contexts: Mapping[int, str], ephemeral: str = "") -> list[dict[str, Any]]:
    """The request messages. ``contexts`` maps the index of a user message in ``history`` to
    the request-only text (``pre_llm_call`` context, the memory fence) appended to it in the
    copy: this turn's, and the earlier turns' of this session as they were sent, so each
    request starts with the bytes of the one before (the provider's prompt cache)."""
    system = system_prompt + (f"\n\n{ephemeral}" if ephemeral else "")
    out = [{"role": "system", "content": system}]
    for index, message in enumerate(history):
        copy = clean(message)
        context = contexts.get(index)
        if context:
            copy["content"] = _joined(copy.get("content"), context)
        out.append(copy)
    return [out[0], *repair(out[1:])]


def last_user_index(history: list[dict[str, Any]]) -> int | None:
    for index in range(len(history) - 1, -1, -1):
        if history[index].get("role") == "user":
            return index
    return None


class SentContext:
    """The request-only text (``pre_llm_call`` context, the memory fence) sent with each user
    message of this session, kept in memory only (never stored).

    Later requests send it again as it was, so each request extends the previous one byte
    for byte and the provider's prompt cache holds. Kept text is bounded by ``budget``
    characters: when a new turn's text would pass it, the earlier ones are dropped all at
    once (one cache break, then it accumulates again), so the window never fills with old
    recall.
    """

    def __init__(self, budget: int = 16_000) -> None:
        self.budget = budget
        self.sent: dict[int, tuple[Any, str]] = {}  # index -> (message content, text)

    def clear(self) -> None:
        self.sent = {}

    def for_request(self, history: list[dict[str, Any]], current: int,
                    context: str) -> dict[int, str]:
        """``{index: text}`` for :func:`api_messages`: ``context`` on ``current``, and the
        earlier text on the messages that are still as they were sent."""
        live = {i: (content, text) for i, (content, text) in self.sent.items()
                if i < len(history) and history[i].get("content") == content}
        if context and current not in live:
            if sum(len(text) for _, text in live.values()) + len(context) > self.budget:
                live = {}
            live[current] = (history[current].get("content"), context)
        self.sent = live
        return {index: text for index, (_, text) in live.items()}
