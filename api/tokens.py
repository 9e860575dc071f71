"""A rough token count of chat messages, the one the host and context engines share (before
a model reports usage, and for what was added since its last report)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4  # role and separators


def estimate_message_tokens(message: dict[str, Any]) -> int:
    """Everything of ``message`` that is sent: its content (text, or parts as JSON) and its
    tool calls' names and arguments (JSON), characters / 4, plus a little per message."""
    content = message.get("content")
    chars = len(content) if isinstance(content, str) else len(json.dumps(content or ""))
    if message.get("tool_calls"):
        chars += len(json.dumps(message["tool_calls"], ensure_ascii=False, default=str))
    return chars // CHARS_PER_TOKEN + MESSAGE_OVERHEAD_TOKENS


def estimate_tokens(messages: Iterable[dict[str, Any]]) -> int:
    """:func:`estimate_message_tokens` summed over ``messages``."""
    return sum(estimate_message_tokens(m) for m in messages)
