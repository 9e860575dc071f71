"""Where a conversation is cut for compression, and the cheap pass on old tool output.

Messages are OpenAI chat messages (no system prompt: the host keeps it apart). A *tool
group* is an assistant message with ``tool_calls`` followed by its ``tool`` results; no cut
ever falls inside one, so every call the model sees keeps its result and no result loses its
call.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from hermes_agent.kits.tokens import estimate_message_tokens

PRUNE_OVER_CHARS = 200
PRUNED_NOTE = "[Earlier tool output ({chars} characters) removed to save context.]"


def is_tool_result(message: dict[str, Any]) -> bool:
    return message.get("role") == "tool"


def align_forward(messages: list[dict[str, Any]], index: int) -> int:
    """The first cut at or after ``index`` that does not separate tool results from their call."""
    while index < len(messages) and is_tool_result(messages[index]):
        index += 1
    return index


def align_backward(messages: list[dict[str, Any]], index: int) -> int:
    """The last cut at or before ``index`` that does not separate tool results from their call
    (moves onto the assistant message that made the calls)."""
    while 0 < index < len(messages) and is_tool_result(messages[index]):
        index -= 1
    return index


def last_user_index(messages: list[dict[str, Any]]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user":
            return index
    return None


class Cut(NamedTuple):
    """``messages[:head]`` is kept, ``messages[head:tail]`` summarised, ``messages[tail:]`` kept."""

    head: int
    tail: int

    @property
    def empty(self) -> bool:
        return self.tail <= self.head


def find_cut(messages: list[dict[str, Any]], *, protect_first_n: int, protect_last_n: int,
             tail_budget_tokens: int) -> Cut:
    """The head is the first ``protect_first_n`` messages (extended over the results of a call
    it holds). The tail is the last ``protect_last_n`` messages, fewer when they pass
    ``tail_budget_tokens``, never fewer than the latest user message onwards; it starts at a
    group boundary."""
    count = len(messages)
    head = align_forward(messages, min(protect_first_n, count))
    tail = max(count - protect_last_n, 0)
    used = 0
    for index in range(count - 1, tail - 1, -1):  # shrink the tail to the token budget
        used += estimate_message_tokens(messages[index])
        if used > tail_budget_tokens:
            tail = index + 1
            break
    latest_user = last_user_index(messages)
    if latest_user is not None:
        tail = min(tail, latest_user)
    tail = align_backward(messages, min(tail, count))
    return Cut(head, max(tail, head))


def prune_tool_outputs(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``messages`` with each tool result over 200 characters replaced by a short note
    (the call itself stays, so the model knows what was run)."""
    out = []
    for message in messages:
        content = message.get("content")
        if is_tool_result(message) and isinstance(content, str) and len(content) > PRUNE_OVER_CHARS:
            message = {**message, "content": PRUNED_NOTE.format(chars=len(content))}
        out.append(message)
    return out
