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


def last_user_images(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``image_url`` parts of the request's last user message (URL or data URL), in the
    shape the agent takes (``{"type": "image_url", "image_url": {"url": ...}}``)."""
    messages = body.get("messages")
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, Mapping) and message.get("role") == "user":
            content = message.get("content")
            parts = content if isinstance(content, list) else []
            images = []
            for part in parts:
                if not isinstance(part, Mapping) or part.get("type") != "image_url":
                    continue
                value = part.get("image_url")
                url = value.get("url") if isinstance(value, Mapping) else value
                if isinstance(url, str) and url:
                    images.append({"type": "image_url", "image_url": {"url": url}})
            return images
    return []


def error(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code, "param": None}}


def completion_id() -> str:
    """Random, not secret: no getrandom() call (which releases the GIL) on the loop."""
    return f"chatcmpl-{random.getrandbits(128):032x}"


def usage_of(counts: Mapping[str, int] | None) -> dict[str, int]:
    counts = counts or {}
    return {key: int(counts.get(key, 0)) for key in
            ("prompt_tokens", "completion_tokens", "total_tokens")}


def completion(cid: str, model: str, text: str,
               usage: Mapping[str, int] | None = None) -> dict[str, Any]:
    return {"id": cid, "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": usage_of(usage)}


def chunk(cid: str, model: str, delta: dict[str, Any], finish: str | None = None) -> str:
    """One server-sent event carrying a ``chat.completion.chunk``."""
    data = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(data)}\n\n"


def usage_chunk(cid: str, model: str, usage: Mapping[str, int] | None) -> str:
    """The last event of a stream whose request set ``stream_options.include_usage``."""
    data = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "choices": [], "usage": usage_of(usage)}
    return f"data: {json.dumps(data)}\n\n"


DONE = "data: [DONE]\n\n"
