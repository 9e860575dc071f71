"""OpenAI-format messages -> Anthropic Messages ``(system, messages)``, and prompt caching.

Conversion: system messages become the ``system`` blocks; assistant ``tool_calls`` become
``tool_use`` blocks (signed thinking from ``reasoning_details`` first, on the latest
assistant turn only); ``tool`` messages become ``tool_result`` blocks in a user message
(consecutive results share one). Repairs: a ``tool_use`` without a result in the next user
message and a result without its ``tool_use`` are dropped, same-role neighbours are merged,
and the conversation starts with a user turn.

Caching (``system_and_3``): ``cache_control`` on the last system block and on the last
block of each of the last three messages; ``{"type": "ephemeral"}`` (5 minutes) or with
``"ttl": "1h"``.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ID = re.compile(r"[^A-Za-z0-9_-]")


def _tool_id(value: Any, index: int) -> str:
    clean = _ID.sub("_", str(value or ""))
    return clean or f"tool_{index}"


def _content_blocks(content: Any) -> list[dict[str, Any]]:
    """User/tool content (a string or OpenAI content parts) as Anthropic blocks."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": part.get("text", "")})
        elif kind == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            if url.startswith("data:") and ";base64," in url:
                media, data = url[5:].split(";base64,", 1)
                blocks.append({"type": "image", "source": {"type": "base64", "media_type": media,
                                                           "data": data}})
            else:
                blocks.append({"type": "image", "source": {"type": "url", "url": url}})
        elif kind in ("image", "document", "tool_result", "tool_use"):
            blocks.append(dict(part))
    return blocks


def _assistant_blocks(message: dict[str, Any], keep_thinking: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if keep_thinking:
        for detail in message.get("reasoning_details") or ():
            if isinstance(detail, dict) and detail.get("type") in ("thinking", "redacted_thinking") \
                    and (detail.get("signature") or detail.get("data")):
                blocks.append({k: v for k, v in detail.items() if k != "cache_control"})
    blocks.extend(_content_blocks(message.get("content")))
    for index, call in enumerate(message.get("tool_calls") or ()):
        fn = call.get("function") or {}
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except ValueError:
            args = {}
        blocks.append({"type": "tool_use", "id": _tool_id(call.get("id"), index),
                       "name": fn.get("name", ""), "input": args if isinstance(args, dict) else {}})
    return blocks


def convert_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(system_blocks, messages)`` in the Anthropic format, repaired (see module docstring)."""
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"),
                         default=-1)
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "system":
            system.extend(_content_blocks(message.get("content")))
        elif role == "assistant":
            blocks = _assistant_blocks(message, keep_thinking=index == last_assistant)
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(empty)"}]})
        elif role == "tool":
            result = {"type": "tool_result", "tool_use_id": _tool_id(message.get("tool_call_id"), 0),
                      "content": _content_blocks(message.get("content")) or "(no output)"}
            if out and out[-1]["role"] == "user" and out[-1].get("_tool_results"):
                out[-1]["content"].append(result)
            else:
                out.append({"role": "user", "content": [result], "_tool_results": True})
        else:
            out.append({"role": "user", "content": _content_blocks(message.get("content"))
                        or [{"type": "text", "text": "(empty message)"}]})
    out = _drop_orphans(out)
    out = _merge_roles(out)
    for message in out:
        message.pop("_tool_results", None)
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": "(conversation continues)"}]})
    return system, out


def _drop_orphans(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep a tool_use only if the next message answers it, and a tool_result only if the
    previous message asked for it."""
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        answered = {b.get("tool_use_id") for b in (following or {}).get("content", ())
                    if b.get("type") == "tool_result"} if following and following["role"] == "user" else set()
        kept = [b for b in message["content"] if b.get("type") != "tool_use" or b["id"] in answered]
        if len(kept) != len(message["content"]):
            message["content"] = kept or [{"type": "text", "text": "(tool call removed)"}]
    asked: set[str] = set()
    for message in messages:
        if message["role"] == "assistant":
            asked = {b["id"] for b in message["content"] if b.get("type") == "tool_use"}
        elif message["role"] == "user":
            blocks = [b for b in message["content"]
                      if b.get("type") != "tool_result" or b.get("tool_use_id") in asked]
            message["content"] = blocks or [{"type": "text", "text": "(tool result removed)"}]
            asked = set()
    return messages


def _merge_roles(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: list[dict[str, Any]] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            extra = message["content"]
            if message["role"] == "assistant":
                extra = [b for b in extra if b.get("type") not in ("thinking", "redacted_thinking")]
            if message["role"] == "user" and any(b.get("type") == "tool_result" for b in extra):
                merged[-1]["content"] = extra + merged[-1]["content"]  # results lead the turn
            else:
                merged[-1]["content"] = merged[-1]["content"] + extra
        else:
            merged.append(message)
    return merged


def cache_marker(ttl: str = "5m") -> dict[str, str]:
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def apply_cache_control(system: list[dict[str, Any]], messages: list[dict[str, Any]],
                        ttl: str = "5m") -> None:
    """Place up to four breakpoints (``system_and_3``), in place."""
    marker = cache_marker(ttl)
    if system:
        system[-1]["cache_control"] = dict(marker)
    for message in messages[-3:]:
        blocks = [b for b in message["content"] if b.get("type") not in ("thinking", "redacted_thinking")]
        if blocks:
            blocks[-1]["cache_control"] = dict(marker)
