"""OpenAI's wire format: reading a chat.completions request, writing the answer as a
``chat.completion`` or as ``chat.completion.chunk`` server-sent events."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Mapping
from typing import Any


def last_user_text(body: Mapping[str, Any]) -> str:
    """The text of the request's last user message (text parts of a list joined); "" when
    there is none, or ``messages`` is not a list of such messages."""
    messages = body.get("messages")
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, Mapping) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "\n".join(p["text"] for p in content if isinstance(p, Mapping)
                                 and p.get("type") == "text" and isinstance(p.get("text"), str))
            return content if isinstance(content, str) else ""
    return ""


def error(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code, "param": None}}


def completion_id() -> str:
    """Random, not secret: no getrandom() call (which releases the GIL) on the loop."""
    return f"chatcmpl-{random.getrandbits(128):032x}"


def completion(cid: str, model: str, text: str) -> dict[str, Any]:
    return {"id": cid, "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}


def chunk(cid: str, model: str, delta: dict[str, Any], finish: str | None = None) -> str:
    """One server-sent event carrying a ``chat.completion.chunk``."""
    data = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(data)}\n\n"


DONE = "data: [DONE]\n\n"
