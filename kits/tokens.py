"""Owner: the builtin plugin `context`.

A rough token count of chat messages, the one the host and context engines share (before
a model reports usage, and for what was added since its last report)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4  # role and separators
IMAGE_TOKENS = 1600  # an image part, whatever its URL's length (providers bill ~1,600 at most)


def estimate_text_tokens(text: str) -> int:
    """About four characters a token for ASCII text, one a token for other characters (CJK
    text is about a token per character)."""
    if not text:
        return 0
    ascii_chars = len(text) if text.isascii() else sum(1 for ch in text if ch < "\x80")
    return -(-ascii_chars // CHARS_PER_TOKEN) + (len(text) - ascii_chars)  # rounded up


def estimate_message_tokens(message: dict[str, Any]) -> int:
    """Everything of ``message`` that is sent: its content (text, or parts as JSON; an image
    part :data:`IMAGE_TOKENS`) and its tool calls' names and arguments (JSON), by
    :func:`estimate_text_tokens`, plus a little per message."""
    content = message.get("content")
    images = 0
    if isinstance(content, list):  # an image costs its tokens, not its (base64) URL's length
        images = sum(1 for p in content if isinstance(p, dict) and p.get("type") == "image_url")
        content = [p for p in content if not (isinstance(p, dict)
                                              and p.get("type") == "image_url")] or ""
    text = content if isinstance(content, str) else json.dumps(content or "", ensure_ascii=False)
    if message.get("tool_calls"):
        text += json.dumps(message["tool_calls"], ensure_ascii=False, default=str)
    return estimate_text_tokens(text) + MESSAGE_OVERHEAD_TOKENS + images * IMAGE_TOKENS


def estimate_tokens(messages: Iterable[dict[str, Any]]) -> int:
    """:func:`estimate_message_tokens` summed over ``messages``."""
    return sum(estimate_message_tokens(m) for m in messages)
